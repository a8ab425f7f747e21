package host

// WithRSS makes o's host read its resident memory from rss.
func WithRSS(o Options, rss func() int64) Options {
	o.rss = rss
	return o
}

// Queued is how many requests wait for a turn of a.
func (a *Admission) Queued() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.queued
}

// InUse is how many turns of a are taken.
func (a *Admission) InUse() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.o.MaxRequests - a.free
}
