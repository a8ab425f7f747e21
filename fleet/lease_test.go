package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sqlfs/sqlfs/internal/s3test"
)

// TestMain (for the external tests too) keeps every AWS SDK on loopback.
func TestMain(m *testing.M) {
	s3test.Isolate()
	os.Exit(m.Run())
}

// fakeS3 returns the lease URL prefix in a fresh in-process S3 server.
func fakeS3(t testing.TB) string {
	t.Helper()
	return s3test.StartFake(t, s3test.Options{}).URL("leases")
}

func openLease(t testing.TB, url string) *S3Lease {
	t.Helper()
	l, err := OpenS3Lease(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func claim(name string, ttl time.Duration) Claim {
	return Claim{Addr: "http://" + name, Instance: name, TTL: ttl}
}

func TestS3Lease(t *testing.T) { testS3Lease(t, fakeS3(t)) }

func testS3Lease(t *testing.T, url string) {
	ctx := context.Background()
	l := openLease(t, url)
	a, b := claim("a", time.Hour), claim("b", time.Hour)

	if r, err := l.Holder(ctx, "w1"); err != nil || r.Generation != 0 {
		t.Fatalf("Holder of a never leased workspace = %+v, %v; want the zero record", r, err)
	}
	ra, err := l.Acquire(ctx, "w1", a)
	if err != nil || ra.Generation != 1 || ra.Addr != a.Addr {
		t.Fatalf("Acquire = %+v, %v", ra, err)
	}
	var held *HeldError
	if _, err := l.Acquire(ctx, "w1", b); !errors.As(err, &held) || held.Record.Addr != a.Addr || !errors.Is(err, ErrHeld) {
		t.Fatalf("Acquire of a held lease = %v; want a HeldError naming %s", err, a.Addr)
	}
	if r, err := l.Holder(ctx, "w1"); err != nil || r.Addr != a.Addr || !r.Live(time.Now()) {
		t.Fatalf("Holder = %+v, %v", r, err)
	}
	ra2, err := l.Renew(ctx, ra)
	if err != nil || ra2.Generation != 1 || !ra2.Expires.After(ra.Expires) {
		t.Fatalf("Renew = %+v, %v", ra2, err)
	}
	// A renewal whose answer was lost (a timeout after the server wrote
	// it) leaves the holder with the record before it: the next renewal
	// from that record must still succeed, the lease being its own.
	ra2, err = l.Renew(ctx, ra)
	if err != nil || ra2.Generation != 1 {
		t.Fatalf("Renew from the record before a renewal = %+v, %v", ra2, err)
	}
	// The same instance takes its own live lease again (a reopen).
	ra3, err := l.Acquire(ctx, "w1", a)
	if err != nil || ra3.Generation != 2 {
		t.Fatalf("re-Acquire by the holder = %+v, %v", ra3, err)
	}
	// Generation 1 is gone.
	if _, err := l.Renew(ctx, ra2); !errors.Is(err, ErrLost) {
		t.Fatalf("Renew of an older generation = %v; want ErrLost", err)
	}
	if err := l.Release(ctx, ra2); !errors.Is(err, ErrLost) {
		t.Fatalf("Release of an older generation = %v; want ErrLost", err)
	}
	if err := l.Release(ctx, ra3); err != nil {
		t.Fatal(err)
	}
	rb, err := l.Acquire(ctx, "w1", b)
	if err != nil || rb.Generation != 3 || rb.Addr != b.Addr {
		t.Fatalf("Acquire after a release = %+v, %v; want generation 3 for b", rb, err)
	}
	// Leases of other workspaces are apart.
	if r, err := l.Acquire(ctx, "w2", a); err != nil || r.Generation != 1 {
		t.Fatalf("Acquire of w2 = %+v, %v", r, err)
	}
}

func TestS3LeaseExpiry(t *testing.T) { testS3LeaseExpiry(t, fakeS3(t)) }

func testS3LeaseExpiry(t *testing.T, url string) {
	ctx := context.Background()
	l := openLease(t, url)
	ttl := 200 * time.Millisecond
	ra, err := l.Acquire(ctx, "w", claim("a", ttl))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "w", claim("b", ttl)); !errors.Is(err, ErrHeld) {
		t.Fatalf("Acquire before expiry = %v; want ErrHeld", err)
	}
	time.Sleep(ttl + 50*time.Millisecond)
	rb, err := l.Acquire(ctx, "w", claim("b", ttl))
	if err != nil || rb.Generation != 2 {
		t.Fatalf("Acquire after expiry = %+v, %v; want generation 2", rb, err)
	}
	// The expired holder's renewal must fail: b wrote since.
	if _, err := l.Renew(ctx, ra); !errors.Is(err, ErrLost) {
		t.Fatalf("Renew by the expired holder = %v; want ErrLost", err)
	}
}

// TestS3LeaseRace: hosts racing for one free lease, round after round;
// exactly one wins each generation.
func TestS3LeaseRace(t *testing.T) { testS3LeaseRace(t, fakeS3(t)) }

func testS3LeaseRace(t *testing.T, url string) {
	ctx := context.Background()
	const hosts, rounds = 8, 10
	ls := make([]*S3Lease, hosts)
	for i := range ls {
		ls[i] = openLease(t, url) // a client of its own each, as hosts have
	}
	for round := 1; round <= rounds; round++ {
		var mu sync.Mutex
		var won []Record
		var wg sync.WaitGroup
		for i, l := range ls {
			wg.Go(func() {
				r, err := l.Acquire(ctx, "w", claim(fmt.Sprint("h", i), time.Hour))
				switch {
				case err == nil:
					mu.Lock()
					won = append(won, r)
					mu.Unlock()
				case !errors.Is(err, ErrHeld) && !errors.Is(err, ErrLost):
					t.Errorf("round %d host %d: %v", round, i, err)
				}
			})
		}
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("round %d: %d hosts acquired the lease: %+v", round, len(won), won)
		}
		if won[0].Generation != int64(round) {
			t.Fatalf("round %d: generation %d", round, won[0].Generation)
		}
		if err := ls[0].Release(ctx, won[0]); err != nil {
			t.Fatal(err)
		}
	}
}

// TestS3LeaseModel drives random acquisitions, renewals and releases of a
// few workspaces by a few hosts, with records current and stale, against a
// model: at most one holder per workspace, generations counting
// acquisitions, and a record of an older generation refused.
func TestS3LeaseModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	ctx := context.Background()
	l := openLease(t, fakeS3(t))
	type model struct {
		holder int // -1: free
		gen    int64
	}
	ids := []string{"x", "y", "z"}
	m := map[string]*model{}
	for _, id := range ids {
		m[id] = &model{holder: -1}
	}
	// seen[h][id] is every record host h was handed for id, the newest last.
	seen := make([]map[string][]Record, 3)
	for h := range seen {
		seen[h] = map[string][]Record{}
	}
	for step := range 300 {
		h, id := rng.IntN(len(seen)), ids[rng.IntN(len(ids))]
		mm := m[id]
		c := claim(fmt.Sprint("h", h), time.Hour)
		switch op := rng.IntN(3); {
		case op == 0 || len(seen[h][id]) == 0:
			r, err := l.Acquire(ctx, id, c)
			if mm.holder == -1 || mm.holder == h {
				if err != nil || r.Generation != mm.gen+1 {
					t.Fatalf("step %d: h%d Acquire %s = %+v, %v; model %+v", step, h, id, r, err, *mm)
				}
				mm.holder, mm.gen = h, r.Generation
				seen[h][id] = append(seen[h][id], r)
			} else if !errors.Is(err, ErrHeld) {
				t.Fatalf("step %d: h%d Acquire %s held by h%d = %v", step, h, id, mm.holder, err)
			}
		default:
			rs := seen[h][id]
			// Mostly the newest record, sometimes an older one.
			i := len(rs) - 1
			if rng.IntN(4) == 0 {
				i = rng.IntN(len(rs))
			}
			r := rs[i]
			// Any record of the generation h holds is h's (an answer lost).
			current := mm.holder == h && r.Generation == mm.gen
			var err error
			if op == 1 {
				var n Record
				if n, err = l.Renew(ctx, r); err == nil {
					seen[h][id] = append(seen[h][id], n)
				}
			} else if err = l.Release(ctx, r); err == nil {
				mm.holder = -1
				seen[h][id] = nil
			}
			if current && err != nil || !current && !errors.Is(err, ErrLost) {
				t.Fatalf("step %d: h%d op %d on %s record %d/%d (gen %d) = %v; model %+v", step, h, op, id, i, len(rs), r.Generation, err, *mm)
			}
		}
	}
}

func TestOpenS3LeaseURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://bucket/x", "want s3://"},
		{"s3:///x", "want s3://"},
		{"s3://b/x?endpoint=http://127.0.0.1:1&bogus=1", `unknown parameter "bogus"`},
		{"s3://b/x?forcePathStyle=maybe", "forcePathStyle"},
	} {
		if _, err := OpenS3Lease(context.Background(), tc.url); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenS3Lease(%q) = %v; want an error saying %q", tc.url, err, tc.want)
		}
	}
	l, err := OpenS3Lease(context.Background(), "s3://b/some/prefix/?endpoint=http://127.0.0.1:1&forcePathStyle=true")
	if err != nil || l.bucket != "b" || l.key("w") != "some/prefix/w.json" {
		t.Fatalf("OpenS3Lease = %+v, %v", l, err)
	}
}

// TestS3LeaseForeignObject: an object at a lease's key that is not a
// record of that workspace is an error, never taken for a free lease.
func TestS3LeaseForeignObject(t *testing.T) {
	ctx := context.Background()
	l := openLease(t, fakeS3(t))
	for _, body := range []string{`{"id":"other","generation":3}`, `not json`, `{"id":"w","generation":0}`} {
		if _, err := l.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &l.bucket, Key: aws.String(l.key("w")), Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Acquire(ctx, "w", claim("a", time.Hour)); err == nil {
			t.Errorf("Acquire over %s succeeded", body)
		}
	}
}
