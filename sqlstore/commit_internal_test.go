package sqlstore

import (
	"database/sql"
	"path/filepath"
	"testing"
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
