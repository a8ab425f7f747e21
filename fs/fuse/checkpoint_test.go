package fuse_test

import (
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
)

// A restore shows through the mount at once: a file read before (its
// pages cached) reads the restored bytes, a directory listed before lists
// the restored names, a file open across it reads as documented (restored
// in place if the checkpoint had it, kept unnamed if not).
func TestRestoreThroughTheMount(t *testing.T) {
	if fuse.LibFUSE == 2 {
		t.Skip("libfuse2 cannot invalidate the kernel's cache; its mounts use 1 s timeouts")
	}
	t.Run("default", func(t *testing.T) { testRestoreThroughTheMount(t, mount(t), false) })
	t.Run("writeback", func(t *testing.T) {
		testRestoreThroughTheMount(t, writebackMount(t, fuse.Options{AllowOther: true}), true)
	})
}

// With the writeback cache the kernel keeps its own size of a file held
// open, as for any change made outside it (see refreshFile): a restore
// that shrinks a file shows once the last holder lets go.
func testRestoreThroughTheMount(t *testing.T, w *fusetest.Workspace, writeback bool) {
	ctx := t.Context()
	must(t, os.Mkdir(w.Path("d"), 0o755))
	must(t, os.WriteFile(w.Path("f"), []byte("checkpointed"), 0o644))
	must(t, os.WriteFile(w.Path("d", "a"), []byte("a"), 0o644))
	_, err := w.FS.Checkpoint(ctx, sfs.CheckpointOptions{Name: "c"})
	must(t, err)

	must(t, os.WriteFile(w.Path("f"), []byte("rewritten after, longer"), 0o644))
	must(t, os.WriteFile(w.Path("d", "b"), []byte("made after"), 0o644))
	must(t, os.Remove(w.Path("d", "a")))
	if got := readFile(t, w.Path("f")); got != "rewritten after, longer" { // pages cached
		t.Fatalf("before restore: %q", got)
	}
	list := func() []string {
		ents, err := os.ReadDir(w.Path("d"))
		must(t, err)
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	if got := list(); !slices.Equal(got, []string{"b"}) { // listing cached
		t.Fatalf("before restore: %q", got)
	}
	held, err := os.Open(w.Path("f"))
	must(t, err)
	defer held.Close()
	gone, err := os.Open(w.Path("d", "b"))
	must(t, err)
	defer gone.Close()

	must(t, w.FS.Restore(ctx, "c"))
	if writeback {
		if b, err := io.ReadAll(io.NewSectionReader(held, 0, 100)); err != nil || !strings.HasPrefix(string(b), "checkpointed") {
			t.Errorf("a file open across the restore reads %q, %v (restored in place)", b, err)
		}
		must(t, held.Close())
	}
	if got := readFile(t, w.Path("f")); got != "checkpointed" {
		t.Errorf("a cached file after restore reads %q", got)
	}
	if st := lstat(t, w.Path("f")); st.Size != int64(len("checkpointed")) {
		t.Errorf("size after restore: %d", st.Size)
	}
	if got := list(); !slices.Equal(got, []string{"a"}) {
		t.Errorf("a cached listing after restore: %q", got)
	}
	_, err = os.Stat(w.Path("d", "b"))
	wantErrno(t, err, syscall.ENOENT)
	if !writeback {
		if b, err := io.ReadAll(io.NewSectionReader(held, 0, 100)); err != nil || string(b) != "checkpointed" {
			t.Errorf("a file open across the restore reads %q, %v (restored in place)", b, err)
		}
		must(t, held.Close())
	}
	if b, err := io.ReadAll(io.NewSectionReader(gone, 0, 100)); err != nil || string(b) != "made after" {
		t.Errorf("a file the checkpoint lacks, open across the restore, reads %q, %v (kept unnamed)", b, err)
	}
	must(t, os.WriteFile(w.Path("d", "new"), []byte("after restore"), 0o644))
	must(t, gone.Close())
	must(t, w.FS.Sync(ctx))
	problems, err := w.FS.Store().Check(ctx)
	must(t, err)
	if len(problems) > 0 {
		t.Fatalf("store check: %v", problems)
	}
}
