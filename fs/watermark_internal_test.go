package fs

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"
)

// A truncation that commits while a later one is still pending must not
// leave its own watermark behind: chunks that commit wrote would read as
// zeros. Found by TestModel; the commit is driven by hand so a truncation
// lands while it is in flight.
func TestTruncationWatermarkAfterCommit(t *testing.T) {
	const cs = 32
	f, err := Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), Options{ChunkSize: cs, CommitInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := f.c
	if err := f.WriteFile("/x", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	// O_TRUNC queues a truncation from chunk 0, then 101 bytes follow.
	data := bytes.Repeat([]byte("H"), 101)
	if err := f.WriteFile("/x", data, 0o644); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	b, captured := c.snapshot()
	c.mu.Unlock()
	if err := c.store.Commit(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	// While that commit is "in flight", a second truncation is queued.
	if err := f.Truncate("/x", 42); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.release(b, captured)
	c.mu.Unlock()
	got, err := f.ReadFile("/x")
	if err != nil || !bytes.Equal(got, data[:42]) {
		t.Fatalf("after the first commit: %q, %v; want %q", got, err, data[:42])
	}
	if err := f.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, err = f.ReadFile("/x"); err != nil || !bytes.Equal(got, data[:42]) {
		t.Fatalf("after the second commit: %q, %v; want %q", got, err, data[:42])
	}
}

// The clean cache counts what its buffers hold, not their length: a
// committed chunk may keep a capacity grown past it.
func TestCleanCacheCountsCapacity(t *testing.T) {
	var cc cleanCache
	for i := range 100 {
		cc.put(chunkID{1, int64(i)}, 0, make([]byte, 1, 1<<20))
	}
	if cc.bytes > cleanCacheBytes || len(cc.m) != cleanCacheBytes>>20 {
		t.Fatalf("cache holds %d entries, %d bytes, want %d entries within %d", len(cc.m), cc.bytes, cleanCacheBytes>>20, cleanCacheBytes)
	}
}
