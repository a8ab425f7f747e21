package fs_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/metrics"
)

// A small file read right after its commit comes from the clean cache, not
// SQLite (git hashes the files it just wrote); a big one is not kept, so a
// large write does not push out what reads cached.
func TestReadAfterCommitSkipsStore(t *testing.T) {
	misses := metrics.CacheMisses.WithLabelValues("chunk")
	for _, tc := range []struct {
		name       string
		size       int
		wantMisses bool
	}{
		{"one short chunk", 1000, false},
		{"several chunks", 3*4096 + 17, false},
		{"at the bound", 1 << 20, false},
		{"past the bound", 1<<20 + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := open(t, sfs.Options{ChunkSize: 4096, CommitInterval: time.Hour})
			data := make([]byte, tc.size)
			for i := range data {
				data[i] = byte(i*7 + i>>12)
			}
			must(t, f.WriteFile("/x", data, 0o644))
			must(t, f.Sync(t.Context()))
			before := testutil.ToFloat64(misses)
			got, err := f.ReadFile("/x")
			must(t, err)
			if !bytes.Equal(got, data) {
				t.Fatal("read back differs from what was written")
			}
			if n := testutil.ToFloat64(misses) - before; (n > 0) != tc.wantMisses {
				t.Errorf("%v chunks read from the store, want some: %v", n, tc.wantMisses)
			}
			// A partial overwrite after the commit starts from the cached
			// bytes and reads back over them.
			fl, err := f.OpenFile("/x", os.O_RDWR, 0)
			must(t, err)
			_, err = fl.WriteAt([]byte("patch"), int64(tc.size/2))
			must(t, err)
			must(t, fl.Close())
			copy(data[tc.size/2:], "patch")
			must(t, f.Sync(t.Context()))
			got, err = f.ReadFile("/x")
			must(t, err)
			if !bytes.Equal(got, data) {
				t.Fatal("read back after a partial overwrite differs")
			}
			check(t, f)
		})
	}
}
