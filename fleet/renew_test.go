package fleet

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// stallLease stalls the renewals it is told to until their context
// ends: a PUT stuck on an object store busy with the replicas' uploads,
// or on a dead connection.
type stallLease struct {
	Lease
	calls atomic.Int64
	stall func(call int64) bool
}

func (s *stallLease) Renew(ctx context.Context, r Record) (Record, error) {
	if s.stall(s.calls.Add(1)) {
		<-ctx.Done()
		return Record{}, ctx.Err()
	}
	return s.Lease.Renew(ctx, r)
}

// TestRenewalStalled: one renewal stalled on the object store does not
// cost the lease (seen failing: the stalled PUT took all of the TTL/3
// left, and the host fenced the workspace, "expired", while every other
// request to the store answered at once); a lease store that answers no
// renewal at all still fences it within TTL*2/3 of the last renewal.
func TestRenewalStalled(t *testing.T) {
	const ttl = 1500 * time.Millisecond
	for _, tc := range []struct {
		name  string
		stall func(call int64) bool
		kept  bool
	}{
		{"the first renewal", func(n int64) bool { return n == 1 }, true},
		{"every other renewal", func(n int64) bool { return n%2 == 1 }, true},
		{"every renewal", func(int64) bool { return true }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &stallLease{Lease: openLease(t, fakeS3(t)), stall: tc.stall}
			f, h := localFleet(t, l, ttl)
			_, release, err := h.Acquire(t.Context(), "w")
			if err != nil {
				t.Fatal(err)
			}
			opened := time.Now()
			release()
			for time.Since(opened) < 3*ttl {
				if !f.Serving("w") {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			served := time.Since(opened)
			switch {
			case tc.kept && !f.Serving("w"):
				t.Fatalf("lost the lease %v after the open, %d renewals sent; want it kept", served.Round(time.Millisecond), l.calls.Load())
			case !tc.kept && served > testenv.Slack(ttl):
				t.Fatalf("served %v with no renewal answered; want fenced within TTL*2/3 (%v)", served.Round(time.Millisecond), ttl*2/3)
			case !tc.kept && f.Serving("w"):
				t.Fatal("still serving with no renewal answered")
			}
		})
	}
}
