package sqlstore_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// A chunk index or truncation point outside [0, MaxChunks) would spill
// into a neighbouring inode's keys; the store refuses the whole batch.
func TestCommitRefusesChunkIndexOutOfRange(t *testing.T) {
	st, _ := newStore(t)
	victim := sqlstore.Chunk{Ino: 3, Idx: 0, Data: []byte("victim")}
	if err := st.Commit(t.Context(), &sqlstore.Batch{Chunks: []sqlstore.Chunk{victim}}); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*sqlstore.Batch{
		"chunk past the last":      {Chunks: []sqlstore.Chunk{{Ino: 2, Idx: sqlstore.MaxChunks, Data: []byte("spill")}}},
		"negative chunk":           {Chunks: []sqlstore.Chunk{{Ino: 4, Idx: -1, Data: []byte("spill")}}},
		"truncation past the last": {Truncations: []sqlstore.Truncation{{Ino: 2, From: sqlstore.MaxChunks + 1}}},
		"negative truncation":      {Truncations: []sqlstore.Truncation{{Ino: 4, From: -1}}},
	} {
		if err := st.Commit(t.Context(), b); !errors.Is(err, sqlstore.ErrBadBatch) {
			t.Errorf("%s: Commit = %v, want ErrBadBatch", name, err)
		}
	}
	got, err := st.ReadChunk(t.Context(), 3, 0)
	if err != nil || !bytes.Equal(got, victim.Data) {
		t.Fatalf("victim chunk = %q, %v", got, err)
	}
}

// A store created by a process stopped between linking it into place and
// removing its temporary name has a second name that is create's own: it
// is removed, not a reason to refuse the store. Any other name is refused.
func TestOpenRemovesCreateLeftoverLink(t *testing.T) {
	st, path := newStore(t)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil { // the cleanup's Close follows too
		t.Fatalf("second Close: %v", err)
	}
	leftover := filepath.Join(filepath.Dir(path), ".ws.db.new-123")
	if err := os.Link(path, leftover); err != nil {
		t.Fatal(err)
	}
	st, err := sqlstore.Open(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatalf("open with create's leftover name: %v", err)
	}
	st.Close()
	if _, err := os.Lstat(leftover); !os.IsNotExist(err) {
		t.Fatalf("leftover still there: %v", err)
	}
	if err := os.Link(path, filepath.Join(filepath.Dir(path), "other.db")); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlstore.Open(t.Context(), path, sqlstore.Options{}); !errors.Is(err, sqlstore.ErrHardLinked) {
		t.Fatalf("open with a second name: %v, want ErrHardLinked", err)
	}
}
