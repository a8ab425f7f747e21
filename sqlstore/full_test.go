package sqlstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// TestFullDiskRecovers fills a 2 MiB tmpfs with files of random sizes, each
// seed filling it at another point of the commit and checkpoint cycle. Once
// the files are deleted the store must take commits again: a commit must
// never leave the WAL holding database growth the disk has no room for,
// or no checkpoint, and so no later commit, could ever succeed.
func TestFullDiskRecovers(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			dir := t.TempDir()
			if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir).CombinedOutput(); err != nil {
				testenv.Require(t, "this test mounts a tmpfs (needs root)", fmt.Errorf("%w: %s", err, out))
			}
			t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
			path := filepath.Join(dir, "ws.db")
			st, err := sqlstore.Open(t.Context(), path, sqlstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			keep := []byte("precious")
			commitFile(t, st, 2, string(keep))

			rng := rand.New(rand.NewPCG(seed, 0))
			ino := uint64(3)
			var err2 error
			for ; err2 == nil; ino++ {
				if ino > 1000 {
					t.Fatal("committed 1000 files into a 2 MiB tmpfs without an error")
				}
				data := bytes.Repeat([]byte{byte(ino)}, 1+rng.IntN(3*sqlstore.DefaultChunkSize/2))
				err2 = st.Commit(t.Context(), fileBatch(ino, data))
			}
			if !errors.Is(err2, sqlstore.ErrStoreFull) {
				t.Fatalf("commit on a full disk: %v, want ErrStoreFull", err2)
			}

			del := &sqlstore.Batch{}
			for i := uint64(3); i < ino; i++ {
				del.DeleteInodes = append(del.DeleteInodes, i)
				del.DeleteDentries = append(del.DeleteDentries, sqlstore.Dentry{Parent: sqlstore.Root, Name: fmt.Sprintf("f%d", i)})
			}
			if err := st.Commit(t.Context(), del); err != nil {
				t.Fatalf("deleting the files on a full disk: %v", err)
			}
			after := bytes.Repeat([]byte{'a'}, 64<<10)
			if err := st.Commit(t.Context(), fileBatch(ino, after)); err != nil {
				t.Fatalf("a new file after deleting: %v", err)
			}
			for i, want := range map[uint64][]byte{2: keep, ino: after} {
				if got, err := st.ReadChunk(t.Context(), i, 0); err != nil || !bytes.Equal(got, want) {
					t.Fatalf("inode %d: %d bytes, %v", i, len(got), err)
				}
			}
			if ps, err := st.Check(t.Context()); err != nil || len(ps) > 0 {
				t.Fatalf("check after a full disk: %v %v", ps, err)
			}
		})
	}
}

// fileBatch stores data as the file /fN of inode ino, in chunks.
func fileBatch(ino uint64, data []byte) *sqlstore.Batch {
	b := &sqlstore.Batch{
		Inodes:   []sqlstore.Inode{{Ino: ino, Mode: 0o100644, Nlink: 1, Size: int64(len(data))}},
		Dentries: []sqlstore.Dentry{{Parent: sqlstore.Root, Name: fmt.Sprintf("f%d", ino), Ino: ino}},
	}
	for idx := 0; len(data) > 0; idx++ {
		n := min(len(data), sqlstore.DefaultChunkSize)
		b.Chunks = append(b.Chunks, sqlstore.Chunk{Ino: ino, Idx: int64(idx), Data: data[:n]})
		data = data[n:]
	}
	return b
}
