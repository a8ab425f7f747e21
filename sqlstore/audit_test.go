package sqlstore_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// commitEvents records one event per time given, in order.
func commitEvents(t *testing.T, st *sqlstore.Store, times ...time.Time) {
	t.Helper()
	b := &sqlstore.Batch{}
	for i, tm := range times {
		b.Audit = append(b.Audit, sqlstore.AuditEvent{Time: tm, Actor: "test", Op: "write", Path: fmt.Sprintf("/f%d", i), Result: "ok"})
	}
	if err := st.Commit(t.Context(), b); err != nil {
		t.Fatal(err)
	}
}

// seqs lists the sequence numbers of the events left.
func seqs(t *testing.T, st *sqlstore.Store) []int64 {
	t.Helper()
	ev, err := st.Audit(t.Context(), sqlstore.AuditFilter{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, e := range ev {
		out = append(out, e.Seq)
	}
	return out
}

func TestPruneAudit(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	days := func(n int) time.Time { return now.Add(-time.Duration(n) * 24 * time.Hour) }
	// Ten events, 9 days old down to 0 days old: seq 1 is 9 days old.
	var times []time.Time
	for d := 9; d >= 0; d-- {
		times = append(times, days(d))
	}
	cases := []struct {
		name      string
		retention sqlstore.AuditRetention
		wantFirst int64 // first seq kept; the last is always 10
	}{
		{"no bounds", sqlstore.AuditRetention{}, 1},
		{"by count", sqlstore.AuditRetention{MaxEvents: 3}, 8},
		{"by age", sqlstore.AuditRetention{MaxAge: 4*24*time.Hour + time.Hour}, 6},
		{"the tighter of both: count", sqlstore.AuditRetention{MaxAge: 8 * 24 * time.Hour, MaxEvents: 2}, 9},
		{"the tighter of both: age", sqlstore.AuditRetention{MaxAge: 24*time.Hour + time.Hour, MaxEvents: 5}, 9},
		{"everything too old keeps the newest", sqlstore.AuditRetention{MaxAge: time.Hour}, 10},
		{"a count over the total", sqlstore.AuditRetention{MaxEvents: 100}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.retention
			st, err := sqlstore.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), sqlstore.Options{AuditRetention: &r})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			commitEvents(t, st, times...)
			n, err := st.PruneAudit(t.Context(), now)
			if err != nil {
				t.Fatal(err)
			}
			got := seqs(t, st)
			if n != c.wantFirst-1 || len(got) != int(11-c.wantFirst) || got[0] != c.wantFirst || got[len(got)-1] != 10 {
				t.Fatalf("pruned %d, left %v; want seq %d..10 left", n, got, c.wantFirst)
			}
			// New events keep counting up after a pruning.
			commitEvents(t, st, now)
			if got := seqs(t, st); got[len(got)-1] != 11 {
				t.Fatalf("event after pruning numbered %d, want 11", got[len(got)-1])
			}
		})
	}
}

// TestAuditPrunedInBackground: the store applies its retention without
// being asked, and the default keeps a fresh workspace's events.
func TestAuditPrunedInBackground(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the background writer's first tick; skipped with -short")
	}
	r := sqlstore.AuditRetention{MaxEvents: 5}
	st, err := sqlstore.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), sqlstore.Options{AuditRetention: &r})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	commitEvents(t, st, now, now, now, now, now, now, now, now, now, now, now, now)
	deadline := time.Now().Add(10 * time.Second)
	for len(seqs(t, st)) != 5 {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, events left: %v", seqs(t, st))
		}
		time.Sleep(100 * time.Millisecond)
	}
	def, _ := newStore(t)
	commitEvents(t, def, now, now, now)
	if n, err := def.PruneAudit(t.Context(), now); err != nil || n != 0 {
		t.Fatalf("default retention pruned %d fresh events: %v", n, err)
	}
}
