package replica

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// TestRestoreQueueOrder: with the one turn taken, the restores a request
// waits for go first, in the order they asked, a background restore
// promoted (a request came to need it) among them behind those asked
// before, then the background ones in their order; one whose context
// ended leaves the queue.
func TestRestoreQueueOrder(t *testing.T) {
	q := newRestoreQueue(1)
	ctx := context.Background()
	first, err := q.wait(ctx, newTurn(false)) // an empty queue grants a background turn
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 8)
	enqueue := func(name string, tn *turn, ctx context.Context) {
		// Queued in the order enqueue is called: wait until it is.
		before := q.waiters()
		go func() {
			release, err := q.wait(ctx, tn)
			if err != nil {
				order <- name + ": " + err.Error()
				return
			}
			order <- name
			release()
		}()
		for deadline := time.Now().Add(testenv.Slack(10 * time.Second)); q.waiters() == before; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s never queued", name)
			}
		}
	}
	gone, cancel := context.WithCancel(ctx)
	promoted := newTurn(false)
	enqueue("later-1", newTurn(false), ctx)
	enqueue("later-2", promoted, ctx)
	enqueue("asked-1", newTurn(true), ctx)
	enqueue("cancelled", newTurn(true), gone)
	enqueue("asked-2", newTurn(true), ctx)
	q.promote(promoted)
	cancel()
	if got := <-order; got != "cancelled: waiting to restore: "+context.Canceled.Error() {
		t.Fatalf("the cancelled wait ended with %q", got)
	}
	first()
	want := []string{"asked-1", "asked-2", "later-2", "later-1"}
	for _, w := range want {
		if got := <-order; got != w {
			t.Fatalf("turn went to %s; want %s (order %v)", got, w, want)
		}
	}
	if q.freeTurns() != 1 || q.waiters() != 0 {
		t.Fatalf("after every release %d turns free, %d waiting; want 1, 0", q.freeTurns(), q.waiters())
	}
	// A wait whose context is done gives no turn away.
	done, stop := context.WithCancel(ctx)
	stop()
	busy, _ := q.wait(ctx, newTurn(true))
	if _, err := q.wait(done, newTurn(true)); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait on a busy queue: %v", err)
	}
	busy()
	if q.freeTurns() != 1 {
		t.Fatalf("%d turns free; want 1", q.freeTurns())
	}
}

// waiters is how many restores wait in q.
func (q *restoreQueue) waiters() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.asked) + len(q.later)
}

func (q *restoreQueue) freeTurns() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.free
}
