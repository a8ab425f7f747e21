package fuse_test

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/metrics"
)

// TestGitAddCommitsPerInterval pins the writer's grouping under git add's
// loose objects (no fsync): the store commits once a commit interval, not
// once a change, so the commits of a run are its time over the interval,
// none of them synced; then one fsync costs exactly one synced commit. Not
// parallel: the commit counters are the process's.
func TestGitAddCommitsPerInterval(t *testing.T) {
	const interval = 100 * time.Millisecond
	w := fusetest.Mount(t, sfs.Options{CommitInterval: interval}, fuse.Options{})
	must(t, os.MkdirAll(w.Path("objects", "ab"), 0o755))
	commits := func() (all, synced float64) {
		return testutil.ToFloat64(metrics.StoreCommits), testutil.ToFloat64(metrics.StoreSyncCommits)
	}
	const files = 2000
	all0, synced0 := commits()
	start := time.Now()
	for i := range files {
		looseObject(t, w, i)
	}
	elapsed := time.Since(start)
	all1, synced1 := commits()
	// One commit per tick that found work, and one in flight at the start.
	if n, most := all1-all0, float64(elapsed/interval)+2; n > most {
		t.Errorf("%d loose objects in %v made %v commits (%.3f a file), want at most %v: one an interval of %v", files, elapsed, n, n/files, most, interval)
	}
	if n := synced1 - synced0; n != 0 {
		t.Errorf("%d loose objects without fsync made %v synced commits, want 0", files, n)
	}

	f, err := os.OpenFile(w.Path("objects", "ab", fmt.Sprintf("%038x", 0)), os.O_RDONLY, 0)
	must(t, err)
	defer f.Close()
	must(t, f.Sync())
	all2, synced2 := commits()
	if n := synced2 - synced1; n != 1 {
		t.Errorf("an fsync made %v synced commits, want 1", n)
	}
	// A tick may commit what the loop left just before the fsync; a tick
	// that finds nothing dirty commits nothing.
	if n := all2 - all1; n < 1 || n > 2 {
		t.Errorf("an fsync made %v commits, want 1 (2 with a tick's of the loop's last changes)", n)
	}
}

// looseObject writes git's loose object i in objects/ab the way git does: a
// missing name checked, a temporary file created and written, linked to the
// final name, unlinked.
func looseObject(t *testing.T, w *fusetest.Workspace, i int) {
	final := w.Path("objects", "ab", fmt.Sprintf("%038x", i))
	tmp := w.Path("objects", "ab", fmt.Sprintf("tmp_obj_%d", i))
	if _, err := os.Lstat(final); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lstat %s: %v", final, err)
	}
	writeNew(t, tmp, 0o444, []byte("x\x01compressed object"))
	must(t, os.Link(tmp, final))
	must(t, os.Remove(tmp))
}
