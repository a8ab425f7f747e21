package host

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestKnownBoundsCalls asks a Known, from several goroutines, for 2,000
// random ids and for ids that exist (listed, or made after the listing):
// the existing are found, the random are not, and the calls stay within
// a listing per Refresh plus the lookup budget.
func TestKnownBoundsCalls(t *testing.T) {
	var lists, lookups atomic.Int64
	var mu sync.Mutex
	exist := map[string]bool{"listed-1": true, "listed-2": true}
	k := &Known{
		List: func(context.Context) ([]string, error) {
			lists.Add(1)
			mu.Lock()
			defer mu.Unlock()
			var ids []string
			for id := range exist {
				ids = append(ids, id)
			}
			return ids, nil
		},
		Lookup: func(_ context.Context, id string) (bool, error) {
			lookups.Add(1)
			mu.Lock()
			defer mu.Unlock()
			return exist[id], nil
		},
		Refresh: time.Hour, Rate: 5, Burst: 10,
	}
	ctx := context.Background()
	if ok, err := k.Exists(ctx, "listed-1"); !ok || err != nil {
		t.Fatalf("a listed id: %v, %v", ok, err)
	}
	mu.Lock()
	exist["made-later"] = true // after the listing: found by a lookup
	mu.Unlock()
	if ok, err := k.Exists(ctx, "made-later"); !ok || err != nil {
		t.Fatalf("an id made after the listing: %v, %v", ok, err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 250 {
				id := fmt.Sprintf("random-%d-%d-%x", w, i, rand.Uint64())
				if ok, err := k.Exists(ctx, id); ok || err != nil {
					t.Errorf("%s: %v, %v", id, ok, err)
				}
				if i%50 == 0 {
					if ok, _ := k.Exists(ctx, "listed-2"); !ok {
						t.Error("a listed id went missing")
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	if n, bound := lookups.Load(), int64(1+10+5*(elapsed+1)); n > bound || lists.Load() != 1 {
		t.Fatalf("2,000 random ids in %.1fs: %d listings, %d lookups; want 1 and at most %d", elapsed, lists.Load(), n, bound)
	}
	// A deleted id is missing at once, and a known missing id costs nothing.
	k.Add("listed-1", false)
	before := lookups.Load()
	for range 100 {
		if ok, _ := k.Exists(ctx, "listed-1"); ok {
			t.Fatal("a deleted id still exists")
		}
	}
	if n := lookups.Load() - before; n != 0 {
		t.Fatalf("a known missing id cost %d lookups", n)
	}
}
