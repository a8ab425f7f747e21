package sqlstore

import (
	"path/filepath"
	"testing"
)

// SQLite's connections hold POSIX locks on the store file and its -shm
// (a reader's shared lock, the wal-index's marks), and a process closing
// any descriptor of a file drops all its POSIX locks on it: a fork, which
// copies the store file and its WAL, must read them without closing one,
// or another process could open the store beside its owner, or a
// checkpoint run under a reader.
func TestForkKeepsSQLiteLocks(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(t.Context(), filepath.Join(dir, "ws.db"), Options{ExternalWALCheckpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Frames no checkpoint copied yet: the fork copies the WAL too.
	if err := st.Commit(t.Context(), &Batch{Inodes: []Inode{{Ino: 100, Mode: 0o100644, Nlink: 1}}}); err != nil {
		t.Fatal(err)
	}
	if h, err := st.walIndex(); err != nil || h.frames <= h.backfilled {
		t.Fatalf("wal-index %+v, %v: want frames not yet checkpointed", h, err)
	}
	files := []string{st.path, st.path + "-wal", st.path + "-shm"}
	before := make([]int, len(files))
	for i, f := range files {
		before[i] = posixLocksHeld(t, f)
	}
	if before[0] == 0 {
		t.Fatalf("this process holds no lock on the store file %s before the fork: nothing to compare", st.path)
	}
	if err := st.Fork(t.Context(), Live, filepath.Join(dir, "fork.db")); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if after := posixLocksHeld(t, f); after != before[i] {
			t.Errorf("%s: this process holds %d POSIX locks after a fork, %d before", f, after, before[i])
		}
	}
}
