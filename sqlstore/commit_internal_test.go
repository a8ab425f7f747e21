package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Each commit runs at the synchronous level its kind needs, whatever the
// commits before it were: FULL (the WAL synced at commit) when durable,
// NORMAL otherwise, although the level is switched only between kinds.
func TestCommitSynchronousFollowsDurable(t *testing.T) {
	st, err := Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const normal, full = 1, 2
	for i, durable := range []bool{false, true, true, false, false, true, false} {
		var level int
		b := &Batch{Inodes: []Inode{{Ino: 100, Mode: 0o100644, Nlink: 1, Size: int64(i)}}, Durable: durable}
		err := st.commitWith(t.Context(), b, func(tx *sql.Tx) error {
			return tx.QueryRowContext(t.Context(), "PRAGMA synchronous").Scan(&level)
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: normal, true: full}[durable]; level != want {
			t.Errorf("commit %d (durable %v) ran at synchronous=%d, want %d", i, durable, level, want)
		}
	}
}

// SQLite's connections hold POSIX locks on the -shm file (the wal-index:
// a shared lock that tells another process opening the store it is in
// use, the readers' marks), and a process closing any descriptor of a
// file drops all its POSIX locks on it. Reading the wal-index at a commit
// must not close one.
func TestCommitKeepsSQLiteLocksOnWALIndex(t *testing.T) {
	st, err := Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Commit(t.Context(), &Batch{Inodes: []Inode{{Ino: 100, Mode: 0o100644, Nlink: 1}}}); err != nil {
		t.Fatal(err)
	}
	if held := posixLocksHeld(t, st.path+"-shm"); held == 0 {
		t.Errorf("after a commit this process holds no lock on the wal-index %s", st.path+"-shm")
	}
}

// posixLocksHeld counts the POSIX (fcntl) locks this process holds on the
// file at path, from /proc/locks; 0 when path does not exist.
func posixLocksHeld(t *testing.T, path string) int {
	t.Helper()
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	// /proc/locks: "1: POSIX  ADVISORY  READ 1234 08:01:5678 128 128", the
	// inode after the device's major:minor.
	ino := fmt.Sprintf(":%d ", fi.Sys().(*syscall.Stat_t).Ino)
	pid := fmt.Sprintf(" %d ", os.Getpid())
	held := 0
	for line := range strings.Lines(string(locks)) {
		if strings.Contains(line, "POSIX") && strings.Contains(line, pid) && strings.Contains(line, ino) {
			held++
		}
	}
	return held
}

// A commit skips the space checks only while the last statfs leaves
// freeMargin beyond four times what commits wrote since, and checks again
// once that is spent.
func TestRoomyUntilMarginSpent(t *testing.T) {
	st, err := Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// As a statfs just now found: 1 MiB beyond the margin and twice a
	// 64 KiB WAL.
	st.space = spaceSeen{at: time.Now(), free: freeMargin + 2*64<<10 + 1<<20, wal: 64 << 10}
	chunk := &Batch{Chunks: []Chunk{{Ino: 100, Data: make([]byte, 64<<10)}}}
	if !st.roomy(chunk) {
		t.Fatal("a 64 KiB batch with 1 MiB to spare is not roomy")
	}
	for range 4 {
		st.roomy(chunk)
	}
	if st.roomy(chunk) {
		t.Errorf("six 64 KiB batches (1.5 MiB counted four times) are roomy with 1 MiB to spare")
	}
}
