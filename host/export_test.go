package host

// WithRSS makes o's host read its resident memory from rss.
func WithRSS(o Options, rss func() int64) Options {
	o.rss = rss
	return o
}
