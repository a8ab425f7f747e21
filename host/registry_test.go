package host_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// fakes is an Opener whose workspaces check the registry's promises: a
// store is never open twice at once (the owner lock would refuse it),
// never more than max are open, and a held workspace is never closed.
type fakes struct {
	t       *testing.T
	max     int
	mu      sync.Mutex
	open    map[string]*fake
	removed map[string]bool
	opens   atomic.Int64
}

type fake struct {
	f      *fakes
	id     string
	closed atomic.Bool
	held   atomic.Int64
}

func (f *fakes) Open(_ context.Context, id string) (host.Workspace, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.removed[id] {
		return nil, host.ErrNotFound
	}
	if f.open[id] != nil {
		f.t.Errorf("%s opened twice", id)
	}
	if f.max > 0 && len(f.open) >= f.max {
		f.t.Errorf("open %s with %d already open, max %d", id, len(f.open), f.max)
	}
	w := &fake{f: f, id: id}
	f.open[id] = w
	f.opens.Add(1)
	return w, nil
}

func (w *fake) ServeHTTP(http.ResponseWriter, *http.Request) {}
func (w *fake) Busy() bool                                   { return false }

// Public says whose handler served which path.
func (w *fake) Public() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { fmt.Fprintf(rw, "%s %s", w.id, r.URL.Path) })
}
func (w *fake) Tools() *tools.Service { return nil }

func (w *fake) Close(context.Context) error {
	if w.held.Load() != 0 {
		w.f.t.Errorf("%s closed while held", w.id)
	}
	if w.closed.Swap(true) {
		w.f.t.Errorf("%s closed twice", w.id)
	}
	w.f.mu.Lock()
	delete(w.f.open, w.id)
	w.f.mu.Unlock()
	return nil
}

// TestRegistryModel drives a host from many goroutines with random
// acquires, holds, removes and reopens; the fakes check the invariants,
// and the seed is logged.
func TestRegistryModel(t *testing.T) {
	for _, maxOpen := range []int{0, 1, 3} {
		f := &fakes{t: t, max: maxOpen, open: map[string]*fake{}, removed: map[string]bool{}}
		h := host.New(host.Options{Opener: f, MaxOpen: maxOpen, IdleTimeout: 2 * time.Millisecond, Logger: quiet})
		ids := []string{"a", "b", "c", "d", "e"}
		seed := rand.Uint64()
		var wg sync.WaitGroup
		var busy atomic.Int64
		for w := range 6 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(seed, uint64(w)))
				for range 300 {
					id := ids[r.IntN(len(ids))]
					switch n := r.IntN(20); {
					case n == 0:
						err := h.Remove(t.Context(), id, false, func() error {
							f.mu.Lock()
							f.removed[id] = true
							f.mu.Unlock()
							return nil
						})
						if err != nil && !errors.Is(err, host.ErrBusy) {
							t.Errorf("seed %d: remove %s: %v", seed, id, err)
						}
					case n == 1:
						f.mu.Lock()
						delete(f.removed, id) // created again
						f.mu.Unlock()
					case n == 2:
						h.Reopen(id)
					default:
						ws, release, err := h.Acquire(t.Context(), id)
						if errors.Is(err, host.ErrTooManyOpen) {
							busy.Add(1)
							continue
						}
						if errors.Is(err, host.ErrNotFound) {
							continue
						}
						if err != nil {
							t.Errorf("seed %d: acquire %s: %v", seed, id, err)
							continue
						}
						fw := ws.(*fake)
						fw.held.Add(1)
						if fw.closed.Load() {
							t.Errorf("seed %d: acquired %s closed", seed, id)
						}
						time.Sleep(time.Duration(r.IntN(300)) * time.Microsecond)
						fw.held.Add(-1)
						release()
					}
				}
			})
		}
		wg.Wait()
		if err := h.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(f.open) != 0 {
			t.Errorf("max %d: %d still open after Close", maxOpen, len(f.open))
		}
		if _, _, err := h.Acquire(t.Context(), "a"); !errors.Is(err, host.ErrClosed) {
			t.Errorf("acquire after Close: %v", err)
		}
		t.Logf("max-open %d: %d opens, %d refused busy (seed %d)", maxOpen, f.opens.Load(), busy.Load(), seed)
	}
}
