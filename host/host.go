// Package host serves many workspaces from one process. A Host holds the
// registry of open workspaces by id, each with a reference count (the
// requests using it); a workspace no request has used for the idle
// timeout, or the least recently used one when --max-open are open, is
// hibernated: closed with a final durable commit, so it costs nothing but
// its files. The next request wakes it through the Opener, transparently
// to the client.
//
// Its HTTP side (Handler) manages workspaces under /v1/workspaces and
// routes /v1/workspaces/ID/... to that workspace's own API server
// (sidecar/api), the very handler a single-store server serves at /v1/...:
// one handler tree, so the two cannot drift apart.
package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// Workspace is an open workspace as the host holds it.
type Workspace interface {
	// ServeHTTP serves the single-store API routes (/v1/..., /mcp).
	http.Handler
	// Busy reports work that holds the workspace open without a request
	// (a running exec).
	Busy() bool
	// Close lets running execs finish until ctx ends, cancels the rest and
	// closes the store with a final durable commit.
	Close(ctx context.Context) error
	// Tools is its tool service (a fork of it takes the source's state
	// from there); nil when it has none.
	Tools() *tools.Service
	// Public serves its published links (/p/) and previews (/x/) on the
	// host's public listener (PublicHandler); nil when there is none.
	Public() http.Handler
}

// Opener opens workspaces by id. An id it does not know fails with an
// error wrapping ErrNotFound.
type Opener interface {
	Open(ctx context.Context, id string) (Workspace, error)
}

var (
	// ErrNotFound: no workspace has this id.
	ErrNotFound = errors.New("no such workspace")
	// ErrBusy: the workspace is in use (a running exec or request).
	ErrBusy = errors.New("workspace in use")
	// ErrTooManyOpen: --max-open workspaces are open and all in use.
	ErrTooManyOpen = errors.New("too many workspaces in use")
	// ErrClosed: the host is shutting down.
	ErrClosed = errors.New("host shutting down")
)

// Hibernation reasons, the label of sqlfs_host_hibernations_total.
const (
	reasonIdle     = "idle"
	reasonLRU      = "lru"
	reasonPolicy   = "policy"
	reasonDelete   = "delete"
	reasonShutdown = "shutdown"
	reasonEvict    = "evict"
	reasonMemory   = "memory"
)

// Options configure a Host.
type Options struct {
	Opener Opener
	// MaxOpen bounds the open workspaces; past it the least recently used
	// idle one hibernates first. 0: no bound.
	MaxOpen int
	// IdleTimeout is how long a workspace stays open with no request and
	// nothing running. Default 30s.
	IdleTimeout time.Duration
	// CloseTimeout bounds a hibernation's wait for running execs (none, as
	// only idle workspaces hibernate) and a shutdown's. Default 30s.
	CloseTimeout time.Duration
	// MemoryHigh, when set, is the resident memory (bytes) past which the
	// host hibernates idle workspaces before their idle timeout, the least
	// recently used half of them at each check (every second at most).
	MemoryHigh int64
	Logger     *slog.Logger
	// rss reads the process's resident memory (tests fake it).
	rss func() int64
}

// Host is the registry of open workspaces.
type Host struct {
	o Options

	mu     sync.Mutex
	open   map[string]*entry
	closed bool
	// woken[id] is closed at workspace id's next wake (or removal), for
	// the change streams waiting while it hibernates.
	woken map[string]chan struct{}

	stopReaper context.CancelFunc
	reaperDone chan struct{}
	// trimPending is set while a trim of the C heap is scheduled.
	trimPending atomic.Bool
}

// trimDelay gathers the hibernations of a burst into one trim, which
// costs a garbage collection and a walk of every malloc arena.
const trimDelay = time.Second

// trimSoon schedules giving what hibernated workspaces freed back to the
// system, once per trimDelay at most: the Go heap's free pages (the
// runtime would keep them a while for reuse) and the C heap's.
func (h *Host) trimSoon() {
	if h.trimPending.CompareAndSwap(false, true) {
		time.AfterFunc(trimDelay, func() {
			h.trimPending.Store(false)
			debug.FreeOSMemory()
			trimCMemory()
		})
	}
}

// entry is one workspace the host has open, is opening or is closing.
type entry struct {
	id    string
	ready chan struct{} // closed once the open finished (ws or err set)
	ws    Workspace
	err   error

	// Under Host.mu:
	refs     int
	lastUsed time.Time
	stale    bool          // close once idle (its policy changed)
	closing  chan struct{} // set when a close begins, closed when it ended
	reason   string        // why it is closing
	// stop is closed when a close begins: the change streams watching it
	// let go (watchers), which the close waits for.
	stop     chan struct{}
	watchers sync.WaitGroup
}

// New returns a host over o.Opener and starts its idle reaper; Close stops
// it and closes every open workspace.
func New(o Options) *Host {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 30 * time.Second
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.rss == nil {
		o.rss = residentBytes
	}
	h := &Host{o: o, open: map[string]*entry{}, woken: map[string]chan struct{}{}, reaperDone: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	h.stopReaper = cancel
	go h.reap(ctx)
	return h
}

// Acquire returns workspace id open, waking it when hibernated, and a
// release the caller must call when done with it. While any caller holds
// it the workspace stays open.
func (h *Host) Acquire(ctx context.Context, id string) (Workspace, func(), error) {
	e, release, err := h.acquire(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return e.ws, release, nil
}

// acquire is Acquire returning the workspace's entry, for closedUnder.
func (h *Host) acquire(ctx context.Context, id string) (*entry, func(), error) {
	for {
		e, err := h.settled(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		if h.closed {
			h.mu.Unlock()
			return nil, nil, ErrClosed
		}
		if e == nil {
			if h.o.MaxOpen > 0 && len(h.open) >= h.o.MaxOpen {
				v := h.victimLocked()
				if v == nil {
					h.mu.Unlock()
					metrics.HostBusyRefusals.Inc()
					return nil, nil, fmt.Errorf("%w: all %d open workspaces are busy", ErrTooManyOpen, h.o.MaxOpen)
				}
				h.beginCloseLocked(v, reasonLRU)
				h.mu.Unlock()
				h.finishClose(v, h.o.CloseTimeout)
				continue
			}
			e = &entry{id: id, ready: make(chan struct{}), refs: 1, stop: make(chan struct{})}
			h.open[id] = e
			h.mu.Unlock()
			h.wake(ctx, e)
		} else {
			e.refs++
			h.mu.Unlock()
		}
		select {
		case <-e.ready:
		case <-ctx.Done():
			h.release(e)
			return nil, nil, ctx.Err()
		}
		if e.err != nil {
			return nil, nil, e.err
		}
		return e, func() { h.release(e) }, nil
	}
}

// settled locks h.mu and returns workspace id's entry once no close of
// it is under way (nil when it is not open), waiting for one that is.
func (h *Host) settled(ctx context.Context, id string) (*entry, error) {
	for {
		h.mu.Lock()
		e := h.open[id]
		if e == nil || e.closing == nil {
			return e, nil
		}
		ch := e.closing
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// wake opens e. The open is not cut short by the first caller going away:
// others may be waiting for it.
func (h *Host) wake(ctx context.Context, e *entry) {
	start := time.Now()
	ws, err := h.o.Opener.Open(context.WithoutCancel(ctx), e.id)
	h.mu.Lock()
	if err != nil {
		delete(h.open, e.id)
		e.err = err
		metrics.HostWakeErrors.Inc()
	} else {
		e.ws = ws
		e.lastUsed = time.Now()
		metrics.HostWakes.Inc()
		metrics.HostWakeDuration.Observe(time.Since(start).Seconds())
		h.signalWokenLocked(e.id)
	}
	h.gaugeLocked()
	h.mu.Unlock()
	close(e.ready)
	if err == nil {
		h.o.Logger.Debug("woke workspace", "id", e.id, "took", time.Since(start))
	}
}

func (h *Host) release(e *entry) {
	h.mu.Lock()
	e.refs--
	e.lastUsed = time.Now()
	h.mu.Unlock()
}

// idleLocked says whether e is open and unused.
func (h *Host) idleLocked(e *entry) bool {
	select {
	case <-e.ready:
	default:
		return false
	}
	return e.err == nil && e.closing == nil && e.refs == 0 && !e.ws.Busy()
}

// victimLocked is the least recently used idle workspace, or nil.
func (h *Host) victimLocked() *entry {
	var v *entry
	for _, e := range h.open {
		if h.idleLocked(e) && (v == nil || e.lastUsed.Before(v.lastUsed)) {
			v = e
		}
	}
	return v
}

func (h *Host) beginCloseLocked(e *entry, reason string) {
	e.closing = make(chan struct{})
	e.reason = reason
	if e.stop != nil {
		close(e.stop)
	}
}

// signalWokenLocked wakes the change streams waiting for workspace id.
func (h *Host) signalWokenLocked(id string) {
	if ch := h.woken[id]; ch != nil {
		close(ch)
		delete(h.woken, id)
	}
}

// closeWorkspace closes e's workspace once its change streams let go.
func closeWorkspace(ctx context.Context, e *entry) error {
	e.watchers.Wait()
	return e.ws.Close(ctx)
}

// finishClose closes a workspace whose close began, letting its execs run
// for wait at most.
func (h *Host) finishClose(e *entry, wait time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	err := closeWorkspace(ctx, e)
	cancel()
	h.forget(e, err)
}

// forget drops e from the registry once closed.
func (h *Host) forget(e *entry, err error) {
	h.mu.Lock()
	if h.open[e.id] == e {
		delete(h.open, e.id)
	}
	h.gaugeLocked()
	h.mu.Unlock()
	close(e.closing)
	h.trimSoon()
	metrics.HostHibernations.WithLabelValues(e.reason).Inc()
	if err != nil {
		h.o.Logger.Error("closing workspace failed: recent changes may be lost", "id", e.id, "reason", e.reason, "err", err)
		return
	}
	h.o.Logger.Debug("hibernated workspace", "id", e.id, "reason", e.reason)
}

// gaugeLocked updates the open-workspaces gauge.
func (h *Host) gaugeLocked() {
	metrics.SetHostOpen(len(h.open))
}

// reap hibernates idle workspaces until ctx ends.
func (h *Host) reap(ctx context.Context) {
	defer close(h.reaperDone)
	every := max(h.o.IdleTimeout/4, 10*time.Millisecond)
	if h.o.MemoryHigh > 0 {
		every = min(every, time.Second)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var due []*entry
		h.mu.Lock()
		for _, e := range h.open {
			if !h.idleLocked(e) {
				continue
			}
			switch {
			case e.stale:
				h.beginCloseLocked(e, reasonPolicy)
			case time.Since(e.lastUsed) >= h.o.IdleTimeout:
				h.beginCloseLocked(e, reasonIdle)
			default:
				continue
			}
			due = append(due, e)
		}
		due = append(due, h.pressureLocked()...)
		h.mu.Unlock()
		for _, e := range due {
			h.finishClose(e, h.o.CloseTimeout)
		}
	}
}

// pressureLocked begins closing the least recently used half (at least
// one) of the idle workspaces when resident memory is past MemoryHigh, and
// returns them. What they free shows only after the next trim, so each
// check takes half, not all.
func (h *Host) pressureLocked() []*entry {
	if h.o.MemoryHigh <= 0 || h.o.rss() <= h.o.MemoryHigh {
		return nil
	}
	var idle []*entry
	for _, e := range h.open {
		if h.idleLocked(e) {
			idle = append(idle, e)
		}
	}
	slices.SortFunc(idle, func(a, b *entry) int { return a.lastUsed.Compare(b.lastUsed) })
	idle = idle[:(len(idle)+1)/2]
	for _, e := range idle {
		h.beginCloseLocked(e, reasonMemory)
	}
	return idle
}

// residentBytes is the process's resident memory, 0 when unknown.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// State is "open" while the host holds workspace id open (or is opening
// or closing it), else "hibernated", with the time it was last used when
// open.
func (h *Host) State(id string) (state string, lastUsed time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// A workspace being closed still holds its store: open until closed.
	if e := h.open[id]; e != nil && e.err == nil {
		return "open", e.lastUsed
	}
	return "hibernated", time.Time{}
}

// Open is the number of workspaces open (or opening, or closing).
func (h *Host) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.open)
}

// Reopen makes workspace id open again at its next use, as soon as it is
// idle (its options changed).
func (h *Host) Reopen(id string) {
	h.mu.Lock()
	e := h.open[id]
	if e == nil {
		h.mu.Unlock()
		return
	}
	if !h.idleLocked(e) {
		e.stale = true // the reaper closes it once idle
		h.mu.Unlock()
		return
	}
	h.beginCloseLocked(e, reasonPolicy)
	h.mu.Unlock()
	h.finishClose(e, h.o.CloseTimeout)
}

// Remove closes workspace id if open, then calls remove while no request
// can open it. Without force a workspace in use is refused with ErrBusy;
// with force its running execs are cancelled.
func (h *Host) Remove(ctx context.Context, id string, force bool, remove func() error) error {
	e, err := h.settled(ctx, id)
	if err != nil {
		return err
	}
	if e == nil {
		// A placeholder closing entry holds off every Acquire meanwhile.
		e = &entry{id: id, ready: make(chan struct{}), err: ErrNotFound}
		close(e.ready)
		h.beginCloseLocked(e, reasonDelete)
		h.open[id] = e
		h.mu.Unlock()
		err := remove()
		h.mu.Lock()
		delete(h.open, id)
		h.signalWokenLocked(id)
		h.mu.Unlock()
		close(e.closing)
		return err
	}
	select {
	case <-e.ready:
	default:
		h.mu.Unlock()
		return fmt.Errorf("%w: it is being opened", ErrBusy)
	}
	if !force && (e.refs > 0 || e.ws.Busy()) {
		h.mu.Unlock()
		return fmt.Errorf("%w: an exec or request is running (?force=true cancels it)", ErrBusy)
	}
	h.beginCloseLocked(e, reasonDelete)
	h.mu.Unlock()
	wait := h.o.CloseTimeout
	if force {
		wait = 0 // cancel running execs at once
	}
	cctx, cancel := context.WithTimeout(context.Background(), wait)
	if err := closeWorkspace(cctx, e); err != nil {
		h.o.Logger.Warn("closing a workspace being removed", "id", id, "err", err)
	}
	cancel()
	err = remove()
	h.forget(e, nil)
	h.mu.Lock()
	h.signalWokenLocked(id) // its streams end: it is gone
	h.mu.Unlock()
	return err
}

// Evict closes workspace id at once if it is open, cancelling its running
// execs; requests still using it fail.
func (h *Host) Evict(ctx context.Context, id string) error { return h.evict(ctx, id, nil) }

// EvictInstance is Evict of ws, the Opener's workspace for id, alone: once
// ws closed, a later open of id is another instance, which stays open. A
// fleet evicts the instance whose lease it lost (another host may serve
// it already); evicting by id, a late eviction closed the next instance,
// opened under a new lease.
func (h *Host) EvictInstance(ctx context.Context, id string, ws Workspace) error {
	return h.evict(ctx, id, ws)
}

// evict closes id's open workspace, when it is ws or ws is nil.
func (h *Host) evict(ctx context.Context, id string, ws Workspace) error {
	for {
		e, err := h.settled(ctx, id)
		if err != nil {
			return err
		}
		if e == nil {
			h.mu.Unlock()
			return nil
		}
		select {
		case <-e.ready:
		default:
			h.mu.Unlock()
			select {
			case <-e.ready:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		if e.err != nil || (ws != nil && e.ws != ws) {
			h.mu.Unlock()
			return nil
		}
		h.beginCloseLocked(e, reasonEvict)
		h.mu.Unlock()
		h.finishClose(e, 0)
		return nil
	}
}

// Close stops hibernating and closes every open workspace, letting running
// execs finish until ctx ends. Acquire fails with ErrClosed after it.
func (h *Host) Close(ctx context.Context) error {
	h.stopReaper()
	<-h.reaperDone
	h.mu.Lock()
	h.closed = true
	for id := range h.woken {
		h.signalWokenLocked(id) // their streams end: ErrClosed
	}
	var all []*entry
	for _, e := range h.open {
		all = append(all, e)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(all))
	for i, e := range all {
		wg.Go(func() {
			<-e.ready
			h.mu.Lock()
			if e.err != nil || e.closing != nil {
				ch := e.closing
				h.mu.Unlock()
				if ch != nil {
					<-ch
				}
				return
			}
			h.beginCloseLocked(e, reasonShutdown)
			h.mu.Unlock()
			err := closeWorkspace(ctx, e)
			if err != nil {
				errs[i] = fmt.Errorf("workspace %s: %w", e.id, err)
			}
			h.forget(e, err)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Drain is api.ServeOptions.Drain for a host: it closes every open
// workspace, letting running execs finish until ctx ends (none when
// cancel is set).
func (h *Host) Drain(ctx context.Context, cancel bool) error {
	if cancel {
		c, stop := context.WithCancel(ctx)
		stop()
		ctx = c
	}
	return h.Close(ctx)
}
