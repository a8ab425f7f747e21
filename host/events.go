package host

import (
	"context"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// Watch streams workspace id's changes as tools.Service.Watch does, without
// keeping it open: a workspace with only change streams on it hibernates
// when idle like any other. Each stream then waits, sending heartbeats,
// until a request wakes the workspace (nothing changes it meanwhile) and
// goes on from where it was, so a client sees one unbroken stream. Only
// its first attach wakes the workspace; its end (removal, shutdown) ends
// the stream with that error.
func (h *Host) Watch(ctx context.Context, id string, o tools.WatchOptions, emit func([]tools.ChangeEvent, int64) error) (int64, error) {
	cursor, wake := o.After, true
	for {
		e, woken, err := h.watchHold(ctx, id, wake)
		if err != nil {
			return cursor, err
		}
		if e == nil {
			if err := waitWoken(ctx, woken, o.Heartbeat, func() error { return emit(nil, cursor) }); err != nil {
				return cursor, err
			}
			wake = true // woken (or removed, which the wake reports)
			continue
		}
		wake = false
		t := e.ws.Tools()
		if t == nil {
			e.watchers.Done()
			return cursor, apiError(codeUnimplemented, "workspace "+id+" has no change stream on this host")
		}
		wctx, cancel := untilStop(ctx, e)
		o.After = cursor
		cursor, err = t.Watch(wctx, o, emit)
		cancel()
		e.watchers.Done()
		select {
		case <-e.stop:
			if ctx.Err() == nil {
				continue // hibernating: wait for the next wake
			}
		default:
		}
		return cursor, err
	}
}

// untilStop is ctx, ended also when a close of e begins.
func untilStop(ctx context.Context, e *entry) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-e.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// watchHold attaches a stream (a change stream, an MCP session's) to
// workspace id while it is open, waking it first when wake is set, and
// returns its entry (the caller calls e.watchers.Done when done); with
// wake unset and the workspace hibernated it returns no entry and a
// channel closed at its next wake.
func (h *Host) watchHold(ctx context.Context, id string, wake bool) (*entry, <-chan struct{}, error) {
	if wake {
		_, release, err := h.Acquire(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		defer release()
	}
	e, err := h.settled(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, ErrClosed
	}
	if e != nil && e.stop != nil {
		select {
		case <-e.ready:
			if e.err == nil {
				e.watchers.Add(1)
				return e, nil, nil
			}
		default:
		}
	}
	ch := h.woken[id]
	if ch == nil {
		ch = make(chan struct{})
		h.woken[id] = ch
	}
	return nil, ch, nil
}

// waitWoken waits for woken, calling beat at each heartbeat meanwhile.
func waitWoken(ctx context.Context, woken <-chan struct{}, heartbeat time.Duration, beat func() error) error {
	var tick <-chan time.Time
	if heartbeat > 0 {
		t := time.NewTicker(heartbeat)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-woken:
			return nil
		case <-tick:
			if err := beat(); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
