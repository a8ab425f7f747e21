package sqlstore_test

import (
	"bytes"
	"errors"
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
