package replica

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPruneGenerations(t *testing.T) { testPrune(t, fakeServer(t)) }

// testPrune moves a workspace between two hosts, each close of a holder
// pruning the generations no restore within the retention needs: never
// its own, nor one that serves a second of the window; the workspace
// restores whole afterwards.
func testPrune(t *testing.T, srv server) {
	ctx := context.Background()
	base := srv.base(t, "fleet")
	bucket := newBucket(NewS3Client(base, srv.keys), base)
	gens := func() []int64 {
		t.Helper()
		g, err := bucket.generations(ctx, "ws")
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a, b := startMember(t, srv, base, time.Minute), startMember(t, srv, base, time.Minute)
	// handOff writes content on m (taking the lease) and hibernates it
	// there (its close prunes with the retention given, then releases the
	// lease), and checks which generations the replica holds then.
	handOff := func(m *member, content string, retention time.Duration, want []int64) {
		t.Helper()
		m.write(t, "ws", "f.txt", content)
		m.opener.Options.Retention = retention
		if err := m.host.Evict(ctx, "ws"); err != nil {
			t.Fatal(err)
		}
		if got := gens(); !slices.Equal(got, want) {
			t.Fatalf("after %q the replica holds generations %v; want %v", content, got, want)
		}
	}
	if err := a.dir.Create("ws", nil); err != nil {
		t.Fatal(err)
	}
	handOff(a, "one", DefaultRetention, []int64{1})
	// Generation 2 began within the retention: 1 serves its start.
	handOff(b, "two", DefaultRetention, []int64{2, 1})
	// LastModified has whole seconds on some servers.
	time.Sleep(1500 * time.Millisecond)
	windowStart := time.Now()
	time.Sleep(1500 * time.Millisecond)
	// Generation 3 began within the window, 2 before it: 2 serves the
	// window's start, 1 nothing of it.
	handOff(a, "three", time.Since(windowStart), []int64{3, 2})
	// Generation 4, its holder's own, holds all the window.
	handOff(b, "four", time.Nanosecond, []int64{4})

	out := filepath.Join(t.TempDir(), "restored.sqlfs")
	ro := options(t, base)
	ro.Credentials = srv.keys
	if err := RestoreWorkspace(ctx, ro, "ws", out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if b, err := openFS(t, out).ReadFile("f.txt"); err != nil || string(b) != "four" {
		t.Fatalf("the replica has %q, %v; want the last write", b, err)
	}
}
