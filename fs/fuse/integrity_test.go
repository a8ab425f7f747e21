package fuse_test

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
)

// Regression tests for the core's integrity defects (issue 10), reached
// through a real mount. They use only fusetest, so they hold for any
// kernel frontend.

func integrityMount(t *testing.T) *fusetest.Workspace {
	t.Helper()
	return fusetest.Mount(t, sfs.Options{CommitInterval: time.Hour}, fuse.Options{})
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestMountRenameExchange(t *testing.T) {
	w := integrityMount(t)
	mustOK(t, os.MkdirAll(w.Path("a", "x", "sub"), 0o755))
	mustOK(t, os.MkdirAll(w.Path("b"), 0o755))
	mustOK(t, os.WriteFile(w.Path("b", "y"), []byte("file"), 0o644))
	mustOK(t, unix.Renameat2(unix.AT_FDCWD, w.Path("a", "x"), unix.AT_FDCWD, w.Path("b", "y"), unix.RENAME_EXCHANGE))
	for p, want := range map[string]uint64{w.Path("a"): 2, w.Path("b"): 3} {
		var st unix.Stat_t
		mustOK(t, unix.Stat(p, &st))
		if st.Nlink != want {
			t.Errorf("nlink %s = %d, want %d", p, st.Nlink, want)
		}
	}
	if data, err := os.ReadFile(w.Path("a", "x")); err != nil || string(data) != "file" {
		t.Fatalf("a/x = %q, %v", data, err)
	}
	mustOK(t, os.MkdirAll(w.Path("c", "z", "deep"), 0o755))
	mustOK(t, unix.Renameat2(unix.AT_FDCWD, w.Path("b", "y"), unix.AT_FDCWD, w.Path("c", "z"), unix.RENAME_EXCHANGE))
	// b/y (now holding deep) lives in b; moving b below it must fail.
	err := os.Rename(w.Path("b"), w.Path("b", "y", "deep", "b"))
	if !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("rename b below itself: %v, want EINVAL", err)
	}
	mustOK(t, w.FS.Sync(t.Context()))
	problems, err := w.FS.Store().Check(t.Context())
	mustOK(t, err)
	if len(problems) > 0 {
		t.Fatalf("store check: %v", problems)
	}
}

func TestMountParallelAppends(t *testing.T) {
	w := integrityMount(t)
	const writers, appends = 8, 200
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fl, err := os.OpenFile(w.Path("log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				t.Error(err)
				return
			}
			defer fl.Close()
			for range appends {
				if _, err := fl.Write([]byte{byte('a' + i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(w.Path("log"))
	mustOK(t, err)
	if len(data) != writers*appends {
		t.Fatalf("log holds %d bytes, want %d", len(data), writers*appends)
	}
}

// Reads with O_DIRECT bypass the page cache, so they see what the core's
// read path returns after a commit released rewritten chunks from RAM.
func TestMountDirectReadAfterCommit(t *testing.T) {
	w := integrityMount(t)
	cs := int(w.FS.ChunkSize())
	const chunks = 40
	mustOK(t, os.WriteFile(w.Path("big"), bytes.Repeat([]byte("A"), chunks*cs), 0o644))
	mustOK(t, w.FS.Sync(t.Context()))
	fl, err := os.OpenFile(w.Path("big"), os.O_RDWR, 0)
	mustOK(t, err)
	defer fl.Close()
	_, err = fl.WriteAt(bytes.Repeat([]byte("B"), cs), int64(20*cs))
	mustOK(t, err)
	mustOK(t, fl.Sync())

	direct, err := os.OpenFile(w.Path("big"), os.O_RDONLY|syscall.O_DIRECT, 0)
	fusetest.Require(t, "O_DIRECT on the mount", err)
	defer direct.Close()
	// Page aligned, as O_DIRECT asks.
	buf, err := unix.Mmap(-1, 0, cs, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	mustOK(t, err)
	defer unix.Munmap(buf)
	_, err = fl.WriteAt(bytes.Repeat([]byte("C"), cs), int64(30*cs))
	mustOK(t, err)
	for i := range 2 { // sequential: the core reads ahead over chunk 30
		_, err = direct.ReadAt(buf, int64(i*cs))
		mustOK(t, err)
	}
	time.Sleep(200 * time.Millisecond)
	mustOK(t, w.FS.Sync(t.Context()))
	for idx, want := range map[int]byte{20: 'B', 30: 'C'} {
		_, err = direct.ReadAt(buf, int64(idx*cs))
		mustOK(t, err)
		if buf[0] != want || buf[cs-1] != want {
			t.Errorf("chunk %d reads %q..., want %c", idx, buf[:8], want)
		}
	}
}
