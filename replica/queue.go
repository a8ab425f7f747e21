package replica

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/sqlfs/sqlfs/metrics"
)

// restoreQueue hands out the turns to restore, n at a time (MaxRestores):
// first to the restores a request waits for (asked), in the order they
// asked, then to those made in the background for workspaces nobody has
// asked for yet (the rest of a dead holder's, see Opener.PrepareLater).
// A background turn a request comes to need moves to the asked ones
// (promote), so that a host staging a dead holder's thousand workspaces
// still restores the one a client waits for next.
type restoreQueue struct {
	mu           sync.Mutex
	free         int
	asked, later []*turn
}

// turn is one restore's place in a restoreQueue.
type turn struct {
	granted chan struct{} // closed when the turn comes
	asked   bool
	waiting bool // in asked or later
}

func newRestoreQueue(n int) *restoreQueue { return &restoreQueue{free: n} }

func newTurn(asked bool) *turn { return &turn{granted: make(chan struct{}), asked: asked} }

// wait waits for t's turn until ctx ends; release gives the turn back.
func (q *restoreQueue) wait(ctx context.Context, t *turn) (release func(), err error) {
	q.mu.Lock()
	if q.free > 0 && len(q.asked) == 0 && (t.asked || len(q.later) == 0) {
		q.free--
		close(t.granted)
		q.mu.Unlock()
		return q.release, nil
	}
	t.waiting = true
	if t.asked {
		q.asked = append(q.asked, t)
	} else {
		q.later = append(q.later, t)
	}
	q.mu.Unlock()
	metrics.ReplicaRestoresWaiting.Inc()
	defer metrics.ReplicaRestoresWaiting.Dec()
	select {
	case <-t.granted:
		return q.release, nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-t.granted: // granted meanwhile: give it back
		q.releaseLocked()
	default:
		q.asked = slices.DeleteFunc(q.asked, func(w *turn) bool { return w == t })
		q.later = slices.DeleteFunc(q.later, func(w *turn) bool { return w == t })
		t.waiting = false
	}
	return nil, fmt.Errorf("waiting to restore: %w", ctx.Err())
}

// promote moves t, a background turn, among the asked ones, behind
// those asked before it.
func (q *restoreQueue) promote(t *turn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if t.asked {
		return
	}
	t.asked = true
	if t.waiting {
		q.later = slices.DeleteFunc(q.later, func(w *turn) bool { return w == t })
		q.asked = append(q.asked, t)
	}
}

func (q *restoreQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.releaseLocked()
}

// releaseLocked gives a turn back: to the first asked restore waiting,
// else to the first background one.
func (q *restoreQueue) releaseLocked() {
	var next *turn
	switch {
	case len(q.asked) > 0:
		next, q.asked = q.asked[0], q.asked[1:]
	case len(q.later) > 0:
		next, q.later = q.later[0], q.later[1:]
	default:
		q.free++
		return
	}
	next.waiting = false
	close(next.granted)
}
