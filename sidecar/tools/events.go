package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// ChangeEvent is one change to the workspace as a watcher sees it: a
// successful audited operation that changed a path the policy shows.
type ChangeEvent struct {
	Seq   int64     `json:"seq"`
	Time  time.Time `json:"time"`
	Actor string    `json:"actor"`
	Op    string    `json:"op"`
	// Path and Path2 are workspace paths as the audit trail writes them
	// ("/src/a.go"); Path2 is a rename's or link's other name, or the
	// checkpoint a restore came from. A hidden side is left out.
	Path  string `json:"path,omitempty"`
	Path2 string `json:"path2,omitempty"`
}

// WatchOptions say which changes Watch reports.
type WatchOptions struct {
	// After is the sequence number to start after: every change numbered
	// above it is reported, in order. Negative: from now on.
	After int64
	// PathPrefix, a workspace path ("/src"), keeps the changes to it and
	// below it; "" or "/" keeps all.
	PathPrefix string
	// Heartbeat, when set, calls emit with no change after that long
	// without one, so an idle stream shows it is alive and where it is.
	Heartbeat time.Duration
}

// Page bounds what one emit carries, so a watcher far behind reads the
// trail in pages and holds at most one in memory.
const watchPage = 512

// minFlushGap spaces the commits watchers ask for: under a stream of
// changes they see them in batches instead of forcing a commit for each.
const minFlushGap = 10 * time.Millisecond

// flushRounds is the one commit tick every watcher of a Service shares:
// however many watch, changes force at most one commit per minFlushGap.
type flushRounds struct {
	mu        sync.Mutex
	next      *flushRound // the round not yet begun, which callers join
	lastBegan time.Time
}

type flushRound struct {
	done chan struct{}
	err  error
}

// flush returns once a commit that began after the call ended: the next
// round, begun minFlushGap after the last one at the earliest.
func (f *flushRounds) flush(ctx context.Context, core *sfs.FS) error {
	f.mu.Lock()
	r := f.next
	if r == nil {
		r = &flushRound{done: make(chan struct{})}
		f.next = r
		wait := minFlushGap - time.Since(f.lastBegan)
		time.AfterFunc(max(wait, 0), func() {
			f.mu.Lock()
			f.next, f.lastBegan = nil, time.Now()
			f.mu.Unlock()
			// Not one watcher's context: others share the round. A
			// closed core answers at once.
			r.err = core.Flush(context.Background())
			close(r.done)
		})
	}
	f.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrEventsPruned is wrapped when changes a watcher asked for were pruned
// from the audit trail (--audit-max-age, --audit-max-events).
var ErrEventsPruned = errors.New("changes pruned from the audit trail")

// watchStart is where a watch after after starts: the last change for a
// negative after (from now on), after itself if no later than the last
// change, else an invalid_argument error.
func (s *Service) watchStart(ctx context.Context, after int64) (int64, error) {
	if err := s.core.Flush(ctx); err != nil {
		return after, classify(err)
	}
	last, err := s.core.Store().LastAuditSeq(ctx)
	if err != nil {
		return after, classify(err)
	}
	switch {
	case after < 0:
		return last, nil
	case after > last:
		// Every change up to that number would be skipped, unseen.
		return after, toolErr(CodeInvalid, nil, "after %d is past the last change, %d: pass the next of an earlier answer, or leave it out to wait from now on", after, last)
	}
	return after, nil
}

// errStopWatch ends a Watch from its emit without an error.
var errStopWatch = errors.New("stop watching")

// Watch calls emit with every change after o.After, in order, as each
// commit makes it durable enough to be queried, until ctx ends or emit
// fails. It calls emit with no change once it has caught up and at each
// heartbeat. next is the sequence number to resume after, past changes the
// filter or the policy left out, and so is the number Watch returns.
// Changes come from the audit trail, so a watcher that falls behind reads
// them from the store: it never holds up the writers and holds no more
// than one page of events.
func (s *Service) Watch(ctx context.Context, o WatchOptions, emit func(ev []ChangeEvent, next int64) error) (cursor int64, err error) {
	if s.core == nil || s.opts.Audit == nil {
		return o.After, ErrNoAudit
	}
	if o.PathPrefix == "/" {
		o.PathPrefix = ""
	}
	store := s.core.Store()
	cursor, err = s.watchStart(ctx, o.After)
	if err != nil {
		return cursor, err
	}
	var beat <-chan time.Time
	if o.Heartbeat > 0 {
		t := time.NewTicker(o.Heartbeat)
		defer t.Stop()
		beat = t.C
	}
	caughtUp := false
	for {
		changed := s.core.Changed() // before the query: nothing falls between
		if err := s.flushes.flush(ctx, s.core); err != nil {
			return cursor, classify(err)
		}
		for full := true; full; {
			page, err := store.Audit(ctx, sqlstore.AuditFilter{AfterSeq: cursor, Limit: watchPage})
			if err != nil {
				return cursor, classify(err)
			}
			full = len(page) == watchPage
			if len(page) == 0 {
				break
			}
			// Numbers are rowids of a table pruned only from its old end,
			// so they follow each other: a hole is what pruning took.
			if cursor > 0 && page[0].Seq > cursor+1 {
				return cursor, toolErr(CodePruned, ErrEventsPruned, "changes %d to %d were pruned from the audit trail; the oldest kept is %d: resume after %d and reread the workspace",
					cursor+1, page[0].Seq-1, page[0].Seq, page[0].Seq-1)
			}
			evs := s.visible(page, o.PathPrefix)
			cursor = page[len(page)-1].Seq
			if len(evs) > 0 {
				if err := emit(evs, cursor); err != nil {
					return cursor, err
				}
			}
		}
		if !caughtUp {
			caughtUp = true
			if err := emit(nil, cursor); err != nil {
				return cursor, err
			}
		}
		select {
		case <-changed:
		case <-beat:
			if err := emit(nil, cursor); err != nil {
				return cursor, err
			}
		case <-ctx.Done():
			return cursor, ctx.Err()
		}
	}
}

// visible turns audit events into the changes a watcher of prefix sees:
// successful changes of paths, without their hidden sides.
func (s *Service) visible(page []sqlstore.AuditEvent, prefix string) []ChangeEvent {
	var out []ChangeEvent
	for _, e := range page {
		paths := changedPaths(e)
		if len(paths) == 0 {
			continue
		}
		e, ok := s.redact(e)
		if !ok {
			continue
		}
		ev := ChangeEvent{Seq: e.Seq, Time: e.Time, Actor: e.Actor, Op: e.Op, Path: e.Path}
		if len(paths) == 2 || e.Op == "restore" { // a restore's Path2 is its checkpoint
			ev.Path2 = e.Path2
		}
		if ev.Path == "" && len(paths) == 1 {
			continue
		}
		if prefix != "" && !under(ev.Path, prefix) && (len(paths) == 1 || !under(ev.Path2, prefix)) {
			continue
		}
		out = append(out, ev)
	}
	return out
}

// redact is the one rule by which every route that reads the audit trail
// for the agent (Audit, Watch, exec changes, undo conflicts) keeps hidden
// names from it: the policy's hidden sides of e are blanked, and ok is
// false when no side is left to show. Path2 is a path only when it starts
// with "/" (not a restore's or checkpoint's "checkpoint:ID", nor a
// refused connect's reason).
func (s *Service) redact(e sqlstore.AuditEvent) (_ sqlstore.AuditEvent, ok bool) {
	if s.core == nil {
		return e, true
	}
	path1 := e.Path != ""
	if path1 && s.core.Hidden(e.Path) {
		e.Path = ""
	}
	if !strings.HasPrefix(e.Path2, "/") {
		return e, e.Path != "" || !path1
	}
	if s.core.Hidden(e.Path2) {
		e.Path2 = ""
	}
	return e, e.Path != "" || e.Path2 != ""
}

// under says whether workspace path p is prefix or below it.
func under(p, prefix string) bool {
	return p != "" && (p == prefix || strings.HasPrefix(p, prefix+"/"))
}

// Longest and default wait of wait_for_change, and its page.
const (
	maxWaitMillis     = 120_000
	defaultWaitMillis = 30_000
	defaultWaitLimit  = 100
)

// WaitInput is the wait_for_change tool's argument.
type WaitInput struct {
	After      *int64 `json:"after,omitempty" jsonschema:"sequence number of the last change already seen (the next of an earlier call); omitted: wait for changes from now on"`
	PathPrefix string `json:"path_prefix,omitempty" jsonschema:"only changes to this path or below it"`
	TimeoutMs  int    `json:"timeout_ms,omitempty" jsonschema:"how long to wait for a change, in milliseconds (default 30000, at most 120000)"`
	Limit      int    `json:"limit,omitempty" jsonschema:"most changes to return (default 100, at most 1000)"`
}

// WaitOutput is the wait_for_change tool's result.
type WaitOutput struct {
	Changes []ChangeEvent `json:"changes"`
	// Next is the after of the next call: nothing is missed or repeated.
	Next     int64 `json:"next"`
	TimedOut bool  `json:"timed_out"`
}

// Text is the result as a model reads it.
func (o WaitOutput) Text() string {
	var b strings.Builder
	if o.TimedOut {
		b.WriteString("no change before the timeout\n")
	}
	for _, e := range o.Changes {
		fmt.Fprintf(&b, "%d %s %s", e.Seq, e.Op, display(e.Path))
		if e.Path2 != "" {
			fmt.Fprintf(&b, " -> %s", e.Path2)
		}
		fmt.Fprintf(&b, " (%s)\n", e.Actor)
	}
	fmt.Fprintf(&b, "next: %d (pass it as after to wait for what follows)\n", o.Next)
	return b.String()
}

// WaitForChange runs the wait_for_change tool: it returns the changes
// after in.After as soon as there is one, or none at the timeout.
func (s *Service) WaitForChange(ctx context.Context, in WaitInput) (WaitOutput, error) {
	timeout := in.TimeoutMs
	switch {
	case timeout < 0 || timeout > maxWaitMillis:
		return WaitOutput{}, toolErr(CodeInvalid, nil, "timeout_ms %d: want 0 to %d", timeout, maxWaitMillis)
	case timeout == 0:
		timeout = defaultWaitMillis
	}
	limit := in.Limit
	switch {
	case limit < 0 || limit > s.opts.MaxPage:
		return WaitOutput{}, toolErr(CodeInvalid, nil, "limit %d: want 1 to %d", limit, s.opts.MaxPage)
	case limit == 0:
		limit = defaultWaitLimit
	}
	o := WatchOptions{After: -1}
	if in.After != nil {
		if *in.After < 0 {
			return WaitOutput{}, toolErr(CodeInvalid, nil, "after %d: want a sequence number, 0 or more", *in.After)
		}
		o.After = *in.After
	}
	if in.PathPrefix != "" {
		p, err := Clean(in.PathPrefix)
		if err != nil {
			return WaitOutput{}, classify(err)
		}
		o.PathPrefix = p
	}
	if s.core != nil && s.opts.Audit != nil {
		// The start is found before the wait's clock runs: under load a
		// short timeout ended the wait first, answering next -1 (a value
		// the next call is refused) or a wait after a future change.
		start, err := s.watchStart(ctx, o.After)
		if err != nil {
			return WaitOutput{}, err
		}
		o.After = start
	}
	wctx, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Millisecond)
	defer cancel()
	out := WaitOutput{Changes: []ChangeEvent{}}
	cursor, err := s.Watch(wctx, o, func(ev []ChangeEvent, next int64) error {
		if len(ev) == 0 {
			return nil // caught up or a heartbeat: go on waiting
		}
		if len(ev) > limit {
			ev, next = ev[:limit], ev[limit-1].Seq
		}
		out.Changes, out.Next = ev, next
		return errStopWatch
	})
	switch {
	case errors.Is(err, errStopWatch):
		return out, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		// Nothing came: the next call goes on from what this one read.
		out.TimedOut, out.Next = true, cursor
		return out, nil
	}
	return WaitOutput{}, classify(err)
}
