package replica

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/metrics"
)

// TestLeasesHeldWhileRestoring: host B, asked for many workspaces at once
// that only the replica holds, restores them all while renewing the lease
// of each from the moment it took it, under a TTL of a few seconds. Run
// all at once (100 clients of the failover test), restores took the CPU
// the renewals and the object store needed, and B lost leases it had
// just taken; capped, none is lost, each workspace is served under the
// one lease B took and holds every byte.
func TestLeasesHeldWhileRestoring(t *testing.T) {
	ctx := context.Background()
	srv := fakeServer(t)
	base := srv.base(t, "fleet")
	const n = 32
	a := startMember(t, srv, base, time.Minute)
	// Incompressible, so that each restore moves its bytes.
	content := func(i int) string {
		raw := make([]byte, 384<<10)
		rand.NewChaCha8([32]byte{byte(i)}).Read(raw)
		return base64.StdEncoding.EncodeToString(raw)
	}
	for i := range n {
		id := fmt.Sprintf("ws-%d", i)
		if err := a.dir.Create(id, nil); err != nil {
			t.Fatal(err)
		}
		a.write(t, id, "data.txt", content(i))
	}
	// A hands every workspace off (final sync, lease released).
	if err := a.host.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// A TTL the renewals keep up with on a quiet machine, stretched by the
	// load: at load 25 a renewal against the in-process S3 missed 3 s.
	ttl := testenv.Slack(3 * time.Second)
	b := startMember(t, srv, base, ttl)
	lostBefore := losses()
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("ws-%d", i)
			ws, release, err := b.host.Acquire(ctx, id)
			if err != nil {
				t.Errorf("%s: %v", id, err)
				return
			}
			defer release()
			if got := exported(t, ws, "data.txt"); got != content(i) {
				t.Errorf("%s holds %d bytes; want its %d", id, len(got), len(content(i)))
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	if lost := losses() - lostBefore; lost > 0 {
		t.Errorf("B lost %v leases while restoring %d workspaces (TTL %v, %v)", lost, n, ttl, took)
	}
	for i := range n {
		id := fmt.Sprintf("ws-%d", i)
		if rec, err := b.lease.Holder(ctx, id); err != nil || rec.Generation != 2 || !b.fleet.Serving(id) {
			t.Errorf("%s: lease %+v, %v, served by B %v; want B's, generation 2", id, rec, err, b.fleet.Serving(id))
		}
	}
	t.Logf("%d restores in %v, load average %.1f", n, took, testenv.LoadAverage())
}

// exported is the content of file name in ws, through its export.
func exported(t *testing.T, ws host.Workspace, name string) string {
	var buf bytes.Buffer
	if err := toolsOf(t, ws).Export(context.Background(), name, &buf); err != nil {
		t.Error(err)
		return ""
	}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Errorf("export of %s: %v", name, err)
			return ""
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Error(err)
			}
			return string(b)
		}
	}
}

// losses is how many leases this process lost.
func losses() float64 {
	var n float64
	for _, l := range []string{"expired", "taken"} {
		n += testutil.ToFloat64(metrics.FleetLosses.WithLabelValues(l))
	}
	return n
}

// TestRestoreWaitHonoursContext: with every restore slot taken, an open
// that needs a restore waits for one only as long as its context lets it.
func TestRestoreWaitHonoursContext(t *testing.T) {
	srv := fakeServer(t)
	o := &Opener{Dir: openDir(t), Options: options(t, srv.base(t, "fleet")), MaxRestores: 1}
	o.init()
	release, err := o.queue.wait(context.Background(), newTurn(true)) // a restore running
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = o.OpenGeneration(ctx, "ws-1", 2)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("open waiting for a restore slot: %v; want its context's deadline", err)
	}
	if waited := time.Since(start); waited > testenv.Slack(5*time.Second) {
		t.Fatalf("open gave up after %v", waited)
	}
	if v := testutil.ToFloat64(metrics.ReplicaRestoresWaiting); v != 0 {
		t.Fatalf("%v restores still counted waiting", v)
	}
}
