package fleet

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// localFleet is a fleet member over lease with TTL ttl, its host, and
// workspace w created in its directory; all closed at the end of t.
func localFleet(t *testing.T, lease Lease, ttl time.Duration) (*Fleet, *host.Host) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	d, err := host.OpenDir(dir, workspace.Options{}, api.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	f, err := New(Options{Lease: lease, Opener: d, Dir: dir, Addr: "http://127.0.0.1:1", TTL: ttl, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	h := host.New(host.Options{Opener: f, IdleTimeout: time.Hour, Logger: quiet})
	f.Bind(h)
	t.Cleanup(func() { h.Close(context.Background()) })
	if err := d.Create("w", nil); err != nil {
		t.Fatal(err)
	}
	return f, h
}

// TestLateEvictionSparesTheNextInstance: a lost lease's eviction runs
// apart from the renewal that found the loss. Coming late, after that
// instance closed and the next one opened under a new lease, it must
// leave the new one open: by id alone, it closed it.
func TestLateEvictionSparesTheNextInstance(t *testing.T) {
	f, h := localFleet(t, openLease(t, fakeS3(t)), time.Minute)
	held := func() *grant {
		t.Helper()
		_, release, err := h.Acquire(t.Context(), "w")
		if err != nil {
			t.Fatal(err)
		}
		release()
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.held["w"]
	}
	first := held()
	if err := h.Evict(t.Context(), "w"); err != nil {
		t.Fatal(err)
	}
	second := held()
	if second == first {
		t.Fatal("the second open reused the first grant")
	}
	f.evict(first) // the first instance's eviction, come late
	if h.Open() != 1 || !f.Serving("w") {
		t.Fatalf("after a late eviction of the first instance: %d open, serving %v; want the second open and served", h.Open(), f.Serving("w"))
	}
}
