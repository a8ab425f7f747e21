package replica

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sqlfs/sqlfs/fleet"
	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/metrics"
)

func TestDeleteRemovesReplicaAndLease(t *testing.T) { testDelete(t, fakeServer(t)) }

// testDelete deletes a workspace a host holds, and one that lives only in
// the replica: afterwards neither its replica objects nor its lease
// remain, no host serves it, and nothing restores it. A workspace beside
// them keeps everything.
func testDelete(t *testing.T, srv server) {
	ctx := context.Background()
	base := srv.base(t, "fleet")
	a, b := startMember(t, srv, base, time.Minute), startMember(t, srv, base, time.Minute)
	for _, id := range []string{"gone", "held", "kept"} {
		if err := a.dir.Create(id, nil); err != nil {
			t.Fatal(err)
		}
		a.write(t, id, "notes.txt", "in "+id+"\n")
		a.synced(t, id)
	}
	// A hands every workspace off (final sync, lease released).
	if err := a.host.Close(ctx); err != nil {
		t.Fatal(err)
	}
	objects := func(id string) []string {
		t.Helper()
		names, err := newBucket(NewS3Client(base, srv.keys), base).children(ctx, id+"/")
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if len(objects("gone")) == 0 {
		t.Fatal("the workspace is not in the replica before the delete")
	}

	b.read(t, "held", "notes.txt", "in held\n") // B holds it now
	for _, id := range []string{"gone", "held"} {
		if code := b.do(t, http.MethodDelete, "/v1/workspaces/"+id); code != http.StatusOK {
			t.Fatalf("DELETE %s: %d", id, code)
		}
		if names := objects(id); len(names) > 0 {
			t.Errorf("%s: the replica still holds %v", id, names)
		}
		if rec, err := b.lease.Holder(ctx, id); err != nil || rec.Generation != 0 {
			t.Errorf("%s: lease record %+v, %v; want none", id, rec, err)
		}
		for _, m := range []*member{a, b} {
			if _, _, err := m.host.Acquire(ctx, id); !errors.Is(err, host.ErrNotFound) && !errors.Is(err, host.ErrClosed) {
				t.Errorf("%s after its delete: %v, want ErrNotFound", id, err)
			}
		}
		if code := b.do(t, http.MethodGet, "/v1/workspaces/"+id+"/v1/health"); code != http.StatusNotFound {
			t.Errorf("%s after its delete: a request answers %d, want 404", id, code)
		}
		ro := options(t, base)
		ro.Credentials = srv.keys
		err := RestoreWorkspace(ctx, ro, id, filepath.Join(t.TempDir(), "x.sqlfs"), time.Time{})
		if !errors.Is(err, ErrNoReplica) {
			t.Errorf("restore of %s after its delete: %v, want ErrNoReplica", id, err)
		}
	}
	if code := b.do(t, http.MethodDelete, "/v1/workspaces/never"); code != http.StatusNotFound {
		t.Errorf("DELETE of an unknown workspace: %d, want 404", code)
	}
	b.read(t, "kept", "notes.txt", "in kept\n")
}

// countingS3 counts the calls to the object store.
type countingS3 struct {
	*s3.Client
	n atomic.Int64
}

func (c *countingS3) GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	c.n.Add(1)
	return c.Client.GetObject(ctx, in, opts...)
}

func (c *countingS3) PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	c.n.Add(1)
	return c.Client.PutObject(ctx, in, opts...)
}

func (c *countingS3) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	c.n.Add(1)
	return c.Client.ListObjectsV2(ctx, in, opts...)
}

func (c *countingS3) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, opts ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	c.n.Add(1)
	return c.Client.DeleteObject(ctx, in, opts...)
}

func (c *countingS3) DeleteObjects(ctx context.Context, in *s3.DeleteObjectsInput, opts ...func(*s3.Options)) (*s3.DeleteObjectsOutput, error) {
	c.n.Add(1)
	return c.Client.DeleteObjects(ctx, in, opts...)
}

// TestUnknownIDsCostBoundedBucketCalls sends 1,000 requests for random
// ids no host knows, to a host with a replica and to a fleet member: the
// calls to the bucket stay within the bounds host.Known sets (a listing
// per second, ten lookups a second after a burst of twenty): bounded by
// the time taken, not by the requests made. None restores, and no lease
// is written.
func TestUnknownIDsCostBoundedBucketCalls(t *testing.T) {
	ctx := context.Background()
	srv := fakeServer(t)
	base := srv.base(t, "host")
	client := func() *countingS3 {
		return &countingS3{Client: NewS3Client(base, srv.keys).(*s3.Client)}
	}
	o := options(t, base)
	// The replica lists one workspace, which must still be found.
	d0 := openDir(t)
	sup, err := StartDir(ctx, d0.Root(), host.StoreName, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Close(ctx) })
	op0 := &Opener{Dir: d0, Supervisor: sup, Options: o}
	if err := d0.Create("real", nil); err != nil {
		t.Fatal(err)
	}
	ws, err := op0.Open(ctx, "real")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(ctx); err != nil {
		t.Fatal(err)
	}

	replicaS3, leaseS3 := client(), client()
	d := openDir(t)
	op := &Opener{Dir: d, Options: o, S3: replicaS3}
	solo := host.New(host.Options{Opener: op, IdleTimeout: time.Hour, Logger: o.Logger})
	t.Cleanup(func() { solo.Close(ctx) })
	soloHandler := host.Handler(solo, d, host.HandlerOptions{Remote: op, Logger: o.Logger})

	lease := fleet.NewS3Lease(leaseS3, base.u.Host, "leases")
	fd := openDir(t)
	f, err := fleet.New(fleet.Options{Lease: lease, Opener: &Opener{Dir: fd, Options: o, S3: client()}, Dir: fd.Root(), Addr: "http://127.0.0.1:1", Logger: o.Logger})
	if err != nil {
		t.Fatal(err)
	}
	fh := host.New(host.Options{Opener: f, IdleTimeout: time.Hour, Logger: o.Logger})
	t.Cleanup(func() { fh.Close(ctx) })
	f.Bind(fh)
	fleetHandler := f.Handler(host.Handler(fh, fd, host.HandlerOptions{Remote: f, Logger: o.Logger}), fleet.HandlerOptions{Dir: fd})

	restores := countRestores()
	start := time.Now()
	const n = 1000
	for i := range n {
		id := fmt.Sprintf("unknown-%016x", rand.Uint64())
		for _, h := range []http.Handler{soloHandler, fleetHandler} {
			m := &member{handler: h}
			if code := m.do(t, http.MethodGet, "/v1/workspaces/"+id+"/v1/health"); code != http.StatusNotFound {
				t.Fatalf("request %d for %s: %d, want 404", i, id, code)
			}
		}
	}
	elapsed := time.Since(start)
	// Known's bound: a listing per second and ten lookups a second, after
	// a burst of twenty; the fake lists in one page.
	bound := int64(1+20) + int64(elapsed.Seconds()+1)*(1+10)
	for name, c := range map[string]*countingS3{"replica": replicaS3, "lease": leaseS3} {
		if got := c.n.Load(); got > bound {
			t.Errorf("%d requests for unknown ids in %v made %d %s bucket calls, want at most %d", n, elapsed.Round(time.Millisecond), got, name, bound)
		} else {
			t.Logf("%d requests for unknown ids in %v: %d %s bucket calls", n, elapsed.Round(time.Millisecond), got, name)
		}
	}
	if got := countRestores() - restores; got != 0 {
		t.Errorf("%v restores ran for unknown ids", got)
	}
	if ids, err := lease.List(ctx); err != nil || len(ids) != 0 {
		t.Errorf("leases after the unknown requests: %v, %v; want none", ids, err)
	}
	// A workspace the replica has is still found and restored.
	_, release, err := solo.Acquire(ctx, "real")
	if err != nil {
		t.Fatalf("the replicated workspace: %v", err)
	}
	release()
}

// countRestores is how many restores this process ran.
func countRestores() float64 {
	var n float64
	for _, l := range []string{"ok", "empty", "error"} {
		n += testutil.ToFloat64(metrics.ReplicaRestores.WithLabelValues(l))
	}
	return n
}
