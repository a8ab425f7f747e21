package fs_test

import (
	"bytes"
	"database/sql"
	"errors"
	"syscall"
	"testing"

	_ "github.com/mattn/go-sqlite3"
	"github.com/prometheus/client_golang/prometheus/testutil"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/metrics"
)

// Bytes flipped inside a stored chunk read as EIO, counted, never as data.
func TestChecksumMismatchIsEIO(t *testing.T) {
	f, store := open(t, sfs.Options{ChunkSize: 64})
	must(t, f.WriteFile("/x", bytes.Repeat([]byte("A"), 200), 0o644))
	must(t, f.Close())

	db, err := sql.Open("sqlite3", store)
	must(t, err)
	// Chunk 1 of the file: keys are ino<<chunkIdxBits | idx, so take the
	// second-lowest key of the file's range.
	res, err := db.Exec(`UPDATE chunks SET data = CAST(replace(CAST(data AS TEXT), 'AA', 'AB') AS BLOB)
		WHERE key = (SELECT key FROM chunks WHERE key > (SELECT min(key) FROM chunks WHERE data LIKE 'A%') ORDER BY key LIMIT 1)`)
	must(t, err)
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("corrupted %d chunks, want 1", n)
	}
	must(t, db.Close())

	g := reopen(t, f, store, sfs.Options{})
	before := testutil.ToFloat64(metrics.StoreChecksumErrors)
	_, err = g.ReadFile("/x")
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("read of a corrupt chunk: %v, want EIO", err)
	}
	if got := testutil.ToFloat64(metrics.StoreChecksumErrors) - before; got != 1 {
		t.Errorf("checksum errors counted: %v, want 1", got)
	}
}
