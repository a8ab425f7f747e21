package replica

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
)

// lagSampler measures the replication lag each half sync interval (250
// ms at least): the time from a commit to the object store holding it.
// A transaction first
// seen at one sample was committed after the sample before, so its lag is
// taken from that earlier sample to the end of the one that finds it
// shipped: an upper bound, never an understatement, off by up to a sample
// interval at each end (half a second in all). TestReplicationLag
// (internal/integration) measures each write's lag exactly beside it: at
// 1,000 writes a second the histogram's p99 read 1.25 s where the writes'
// was 0.81 s.
// Asking litestream for its position makes it read the WAL then, which is
// what it does every 100 ms anyway.
type lagSampler struct {
	s     *Supervisor
	every time.Duration
	dbs   map[string]*lagState
	// paused skips samples (TestLagSamplerCost measures without them).
	paused atomic.Bool
}

type lagState struct {
	base    uint64 // litestream's transaction when the store was first seen
	seen    uint64
	seenAt  time.Time
	pending []pendingTX // oldest first
}

type pendingTX struct {
	txid  uint64
	since time.Time
}

func newLagSampler(s *Supervisor) *lagSampler {
	// Each sample asks litestream about every store (and has it read
	// their WALs): no more often than 4 times a second.
	return &lagSampler{s: s, every: max(s.o.SyncInterval/2, 250*time.Millisecond), dbs: map[string]*lagState{}}
}

func (l *lagSampler) run(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	t := time.NewTicker(l.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !l.paused.Load() {
			l.sample(ctx)
		}
	}
}

func (l *lagSampler) sample(ctx context.Context) {
	at := time.Now()
	sts, err := l.s.Status(ctx)
	if err != nil {
		return // litestream is starting again, or we are closing
	}
	l.observe(at, time.Now(), sts)
}

// observe takes the stores litestream listed at a sample begun at at and
// ended at done.
func (l *lagSampler) observe(at, done time.Time, sts []Status) {
	live := map[string]bool{}
	held := map[string]time.Time{}
	for _, st := range sts {
		live[st.Path] = true
		d := l.dbs[st.Path]
		if d == nil {
			d = &lagState{base: st.LocalTXID, seen: st.LocalTXID, seenAt: at}
			l.dbs[st.Path] = d
		}
		if st.LocalTXID > d.seen {
			d.pending = append(d.pending, pendingTX{txid: st.LocalTXID, since: d.seenAt})
			if len(d.pending) > 64 {
				// Keep the oldest start, drop one from the middle: the
				// entry after it takes its start, the earlier, so that
				// neither the lag nor the age is understated.
				d.pending[2].since = d.pending[1].since
				d.pending = append(d.pending[:1], d.pending[2:]...)
			}
		}
		d.seen, d.seenAt = st.LocalTXID, at
		for len(d.pending) > 0 && d.pending[0].txid <= st.ReplicaTXID {
			metrics.ReplicaLag.Observe(done.Sub(d.pending[0].since).Seconds())
			d.pending = d.pending[1:]
		}
		// Up to when the replica holds every commit of the store: all of
		// them, or those before the oldest transaction not shipped (it
		// was committed after its start, and what came before it is
		// shipped, provided what litestream had read at first sight is).
		// Transaction 0 is no upload: litestream has not read the store.
		switch {
		case st.ReplicaTXID == 0:
		case st.ReplicaTXID >= st.LocalTXID:
			held[st.Path] = at
		case len(d.pending) > 0 && st.ReplicaTXID >= d.base:
			held[st.Path] = d.pending[0].since
		}
	}
	for p := range l.dbs {
		if !live[p] {
			delete(l.dbs, p)
		}
	}
	l.s.ages.sampled(at, sts, held)
}

// syncAges keeps, for each store in litestream's sight, the time up to
// which the replica holds every commit of the store (under a steady load
// it trails by the lag; an outage stops it), or, for one it never held,
// when the store came in sight: the replica's last sync age
// (sqlfs_replica_last_sync_age_seconds) is that of the oldest. A store in
// sight is one litestream lists, or one an owner put there (expect: the
// one store of StartStore, each store the Opener opens) that litestream
// has not listed yet and that is still there: a store that never reached
// the replica shows as old, never as fresh.
type syncAges struct {
	mu       sync.Mutex
	expected map[string]bool
	since    map[string]time.Time
	last     time.Time // of the last sample
}

func newSyncAges() *syncAges {
	return &syncAges{expected: map[string]bool{}, since: map[string]time.Time{}, last: time.Now()}
}

// expect: an owner put the store at path in litestream's sight.
func (s *Supervisor) expect(path string) {
	p, err := realPath(path)
	if err != nil {
		p = path
	}
	s.ages.mu.Lock()
	defer s.ages.mu.Unlock()
	s.ages.expected[p] = true
	if _, ok := s.ages.since[p]; !ok {
		s.ages.since[p] = time.Now()
	}
	s.ages.publish()
}

// forget: the store at (real) path p left litestream's sight.
func (a *syncAges) forget(p string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.expected, p)
	delete(a.since, p)
	a.publish()
}

// held: the replica held everything store p had committed at at.
func (a *syncAges) held(p string, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.since[p]; ok && at.After(a.since[p]) {
		a.since[p] = at
	}
	a.publish()
}

// sampled takes the stores litestream listed at a sample begun at at,
// and up to when the replica held every commit of each (held).
func (a *syncAges) sampled(at time.Time, sts []Status, held map[string]time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	listed := map[string]bool{}
	for _, st := range sts {
		listed[st.Path] = true
		if _, ok := a.since[st.Path]; !ok {
			a.since[st.Path] = at
		}
		if h, ok := held[st.Path]; ok && h.After(a.since[st.Path]) {
			a.since[st.Path] = h
		}
	}
	for p := range a.since {
		if listed[p] {
			continue
		}
		// An expected store that is gone left sight without a release (its
		// workspace deleted after a final sync that failed): nothing of it
		// is left to ship.
		if a.expected[p] && !gone(p) {
			continue
		}
		delete(a.expected, p)
		delete(a.since, p)
	}
	a.last = at
	a.publish()
}

// gone reports whether nothing is at path p any more.
func gone(p string) bool {
	_, err := os.Lstat(p)
	return errors.Is(err, fs.ErrNotExist)
}

// publish sets the metric to the oldest store's time, or with none in
// sight, the last sample's.
func (a *syncAges) publish() {
	oldest := a.last
	for _, t := range a.since {
		if t.Before(oldest) {
			oldest = t
		}
	}
	metrics.ReplicaSynced(oldest)
}
