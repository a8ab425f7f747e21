package host

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/sqlfs/sqlfs/metrics"
)

// Known says whether a workspace this host has no folder of exists
// elsewhere (in a replica, in a fleet's leases), at a cost in calls to the
// store that holds them that stays bounded however many unknown ids are
// asked for, at random or not: a request for an id must not cost a
// restore, or even a lookup, each time.
//
// It keeps the set of ids one listing found, refreshed on a miss at most
// once per Refresh. An id the listing missed (made elsewhere since) is
// looked up alone, at most Rate such lookups a second (Burst at once), and
// an id found missing is remembered for NegativeTTL, the MaxNegative most
// recent ones.
type Known struct {
	// List returns every id there is (one listing, paginated).
	List func(ctx context.Context) ([]string, error)
	// Lookup says whether id exists (one call).
	Lookup func(ctx context.Context, id string) (bool, error)

	// Defaults: 1s, 10/s, 20, 30s, 100,000.
	Refresh     time.Duration
	Rate        rate.Limit
	Burst       int
	NegativeTTL time.Duration
	MaxNegative int

	once    sync.Once
	limiter *rate.Limiter

	mu       sync.Mutex
	ids      map[string]bool
	listedAt time.Time
	listing  chan struct{} // closed when the listing under way ends
	missing  map[string]time.Time
}

func (k *Known) init() {
	k.once.Do(func() {
		if k.Refresh <= 0 {
			k.Refresh = time.Second
		}
		if k.Rate <= 0 {
			k.Rate = 10
		}
		if k.Burst <= 0 {
			k.Burst = 20
		}
		if k.NegativeTTL <= 0 {
			k.NegativeTTL = 30 * time.Second
		}
		if k.MaxNegative <= 0 {
			k.MaxNegative = 100_000
		}
		k.limiter = rate.NewLimiter(k.Rate, k.Burst)
		k.missing = map[string]time.Time{}
	})
}

// Exists says whether id exists beyond this host's disk. Past the lookup
// rate it says no: under a flood of unknown ids a workspace made on another
// host in the last Refresh may be missed until the next listing.
func (k *Known) Exists(ctx context.Context, id string) (bool, error) {
	k.init()
	if ok, decided := k.cached(id); decided {
		return ok, nil
	}
	if err := k.relist(ctx); err != nil {
		return false, err
	}
	if ok, decided := k.cached(id); decided {
		return ok, nil
	}
	if !k.limiter.Allow() {
		metrics.HostUnknownLookups.WithLabelValues("limited").Inc()
		return false, nil
	}
	ok, err := k.Lookup(ctx, id)
	if err != nil {
		return false, err
	}
	metrics.HostUnknownLookups.WithLabelValues("looked_up").Inc()
	k.Add(id, ok)
	return ok, nil
}

// cached answers from the listing and the ids found missing, when it can:
// a listing fresher than Refresh that misses id decides only with a
// negative entry or an exhausted lookup budget left to Exists.
func (k *Known) cached(id string) (exists, decided bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ids[id] {
		return true, true
	}
	if at, ok := k.missing[id]; ok {
		if time.Since(at) < k.NegativeTTL {
			metrics.HostUnknownLookups.WithLabelValues("cached").Inc()
			return false, true
		}
		delete(k.missing, id)
	}
	return false, false
}

// relist lists the ids again if the listing is older than Refresh, once
// for all callers at a time.
func (k *Known) relist(ctx context.Context) error {
	k.mu.Lock()
	for k.listing != nil {
		ch := k.listing
		k.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		k.mu.Lock()
	}
	if time.Since(k.listedAt) < k.Refresh {
		k.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	k.listing = ch
	k.mu.Unlock()
	ids, err := k.List(ctx)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.listing = nil
	close(ch)
	k.listedAt = time.Now() // a failed listing waits its turn too
	if err != nil {
		return err
	}
	metrics.HostUnknownLookups.WithLabelValues("listed").Inc()
	k.ids = make(map[string]bool, len(ids))
	for _, id := range ids {
		k.ids[id] = true
		delete(k.missing, id)
	}
	return nil
}

// Add records that id exists (made here, found elsewhere) or not (deleted).
func (k *Known) Add(id string, exists bool) {
	k.init()
	k.mu.Lock()
	defer k.mu.Unlock()
	if exists {
		if k.ids == nil {
			k.ids = map[string]bool{}
		}
		k.ids[id] = true
		delete(k.missing, id)
		return
	}
	delete(k.ids, id)
	if len(k.missing) >= k.MaxNegative {
		k.pruneLocked()
	}
	k.missing[id] = time.Now()
}

// pruneLocked drops the expired negative entries, or all of them when none
// expired: a bound on memory, paid for by more lookups.
func (k *Known) pruneLocked() {
	for id, at := range k.missing {
		if time.Since(at) >= k.NegativeTTL {
			delete(k.missing, id)
		}
	}
	if len(k.missing) >= k.MaxNegative {
		clear(k.missing)
	}
}
