package fs

// Changed returns a channel closed once the core records an audit event
// after this call, or closes: how a watcher of the audit trail waits
// without polling. The event reaches the store with the next commit
// (Flush commits at once).
func (f *FS) Changed() <-chan struct{} {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return closedChan
	}
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.changed
}

var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// signalChanged wakes the watchers waiting in Changed. Called with c.mu
// held; costs nothing while nobody watches.
func (c *core) signalChanged() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// Hidden reports whether the policy hides the physical path p, or a
// directory above it: what a watcher of the audit trail must not see.
func (f *FS) Hidden(p string) bool { return matchAny(f.c.rules.hidden, p) }
