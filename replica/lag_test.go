package replica

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
)

// syncAge reads sqlfs_replica_last_sync_age_seconds.
func syncAge(t *testing.T) float64 {
	t.Helper()
	mfs, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "sqlfs_replica_last_sync_age_seconds" {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no sqlfs_replica_last_sync_age_seconds")
	return 0
}

// TestSyncAgeOfUnshippedStores: a store in litestream's sight that the
// replica never held (litestream has not listed it yet, or lists it
// before its first upload) makes the replica's last sync age grow from
// the time it came in sight; it is fresh again once the replica holds
// everything of every store.
func TestSyncAgeOfUnshippedStores(t *testing.T) {
	s := &Supervisor{o: Options{SyncInterval: time.Second}}
	s.ages = newSyncAges()
	l := newLagSampler(s)
	store := filepath.Join(t.TempDir(), "workspace.sqlfs")
	if err := os.WriteFile(store, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := realPath(store)
	if err != nil {
		t.Fatal(err)
	}
	s.expect(store)
	const wait = 300 * time.Millisecond
	time.Sleep(wait)
	for _, c := range []struct {
		what string
		sts  []Status
	}{
		{"not listed yet", nil},
		{"listed before litestream read it", []Status{{Path: p}}},
		{"listed, read, never uploaded", []Status{{Path: p, LocalTXID: 1, Behind: 1}}},
	} {
		now := time.Now()
		l.observe(now, now, c.sts)
		if age := syncAge(t); age < wait.Seconds() {
			t.Errorf("%s: the replica's last sync age is %.3f s, %v after the store came in sight and was never shipped", c.what, age, wait)
		}
	}
	now := time.Now()
	l.observe(now, now, []Status{{Path: p, LocalTXID: 1, ReplicaTXID: 1}})
	if age := syncAge(t); age > wait.Seconds()/2 {
		t.Errorf("shipped: the last sync age is %.3f s", age)
	}
	// Under a steady load the replica is never level with the store, but
	// the age trails by the lag, not by the time since it last was.
	tx := uint64(1)
	for range 10 {
		time.Sleep(wait / 5)
		now := time.Now()
		tx++
		l.observe(now, now, []Status{{Path: p, LocalTXID: tx, ReplicaTXID: tx - 1, Behind: 1}})
	}
	if age := syncAge(t); age > 3*(wait/5).Seconds() {
		t.Errorf("under steady load with one transaction in flight: the last sync age is %.3f s, over %v after the last full sync", age, 2*wait)
	}
	now = time.Now()
	// A store that left litestream's sight (released) no longer counts.
	s.ages.forget(p)
	l.observe(now, now, nil)
	if age := syncAge(t); age > wait.Seconds()/2 {
		t.Errorf("released: the last sync age is %.3f s", age)
	}
}

// TestSyncAgeOfStoreReleaseFailed: a store whose owner closed it and
// asked litestream to let go leaves the sync age even when litestream did
// not answer the release: the owner moves it out of litestream's sight
// next all the same, and while litestream still lists it the samples keep
// it in sight.
func TestSyncAgeOfStoreReleaseFailed(t *testing.T) {
	s, l, store := expectedStore(t)
	if err := s.Release(t.Context(), store); err == nil {
		t.Fatal("Release answered without a litestream to ask")
	}
	if err := os.Rename(store, store+".parked"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	l.observe(now, now, nil)
	if age := syncAge(t); age > inSight.Seconds()/2 {
		t.Errorf("released (unanswered) and moved away: the last sync age is %.3f s", age)
	}
}

// TestSyncAgeOfStoreRemoved: a store expected in litestream's sight that
// is gone (its workspace deleted after a final sync that failed, so never
// released) leaves the sync age at the next sample, instead of aging it
// until the host restarts.
func TestSyncAgeOfStoreRemoved(t *testing.T) {
	_, l, store := expectedStore(t)
	now := time.Now()
	l.observe(now, now, nil)
	if age := syncAge(t); age < inSight.Seconds() {
		t.Fatalf("in sight, never shipped: the last sync age is %.3f s", age)
	}
	if err := os.Remove(store); err != nil {
		t.Fatal(err)
	}
	now = time.Now()
	l.observe(now, now, nil)
	if age := syncAge(t); age > inSight.Seconds()/2 {
		t.Errorf("removed: the last sync age is %.3f s", age)
	}
}

// inSight is how long expectedStore's store has been in sight, unshipped.
const inSight = 300 * time.Millisecond

// expectedStore is a Supervisor (without a litestream) with a store an
// owner put in its sight inSight ago, and its lag sampler.
func expectedStore(t *testing.T) (*Supervisor, *lagSampler, string) {
	t.Helper()
	s := &Supervisor{o: Options{SyncInterval: time.Second}, ctl: newCtl(t.TempDir())}
	s.ages = newSyncAges()
	store := filepath.Join(t.TempDir(), "workspace.sqlfs")
	if err := os.WriteFile(store, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.expect(store)
	time.Sleep(inSight)
	return s, newLagSampler(s), store
}
