package builtin

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// The line matching stops when its context ends: two unrelated inputs of
// 200,000 lines cost seconds to compare, the cancelled comparison returns
// at once with the context's error.
func TestDiffMarkCancelled(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lines := func() []int {
		out := make([]int, 200_000)
		for i := range out {
			out[i] = 1 + rng.IntN(1000)
		}
		return out
	}
	a, b := lines(), lines()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := diffMark(ctx, a, b)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("diffMark = %v, want the context's error", err)
	}
	// Far below what the whole comparison costs (seconds), far above
	// the check interval: scheduling on a loaded machine.
	if took > testenv.Slack(time.Second) {
		t.Errorf("diffMark returned %v after it started, its context ended after 50ms", took)
	}
}
