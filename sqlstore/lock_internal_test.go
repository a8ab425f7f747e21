package sqlstore

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A child forked while the owner releases the lock holds a copy of the
// lock's descriptor until it execs (close-on-exec closes it only then):
// releasing must unlock, not just close, or the next owner is refused
// with "owned by another process" naming nobody (seen after a restore).
func TestReleaseUnlocksDespiteAForkedCopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ws.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := acquireOwnerLock(path, "")
	if err != nil {
		t.Fatal(err)
	}
	forked, err := unix.Dup(int(l.f.Fd())) // what fork gives the child
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(forked)
	l.release()
	next, err := acquireOwnerLock(path, "")
	if err != nil {
		t.Fatalf("the next owner: %v", err)
	}
	next.release()
}
