package fs_test

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// A read-ahead that cached a chunk's stored bytes while newer bytes waited
// in RAM must not serve the old bytes once the commit releases the RAM copy.
func TestReadAheadNotStaleAfterCommit(t *testing.T) {
	f, _ := open(t, sfs.Options{CommitInterval: time.Hour})
	cs := int(f.ChunkSize())
	const chunks = 40
	must(t, f.WriteFile("/big", bytes.Repeat([]byte("A"), chunks*cs), 0o644))
	must(t, f.Sync(t.Context()))
	fl, err := f.OpenFile("/big", os.O_RDWR, 0)
	must(t, err)
	defer fl.Close()
	for _, idx := range []int{20, 30} {
		_, err = fl.WriteAt(bytes.Repeat([]byte("B"), cs), int64(idx*cs))
		must(t, err)
	}
	buf := make([]byte, cs)
	// Sequential reads from the start trigger the read-ahead over the
	// rewritten chunks; give it time to finish.
	for i := range 2 {
		_, err = fl.ReadAt(buf, int64(i*cs))
		must(t, err)
	}
	time.Sleep(200 * time.Millisecond)
	must(t, f.Sync(t.Context()))
	for _, idx := range []int{20, 30} {
		_, err = fl.ReadAt(buf, int64(idx*cs))
		must(t, err)
		if buf[0] != 'B' || buf[cs-1] != 'B' {
			t.Fatalf("chunk %d after commit reads %q..., want B", idx, buf[:8])
		}
	}
}

// Exchanging a directory with a file, and two directories, keeps nlink and
// parent pointers right, so the cycle check still refuses a move below itself.
func TestRenameExchange(t *testing.T) {
	f, _ := open(t, sfs.Options{})
	for _, d := range []string{"/a/x/sub", "/b", "/c/y/deep"} {
		must(t, f.MkdirAll(d, 0o755))
	}
	must(t, f.WriteFile("/b/y", []byte("file"), 0o644))
	must(t, f.Rename2("/a/x", "/b/y", sfs.RenameExchange))
	nlink := func(p string) uint32 {
		t.Helper()
		a, err := f.Lstat(p)
		must(t, err)
		return a.Nlink
	}
	if got := [2]uint32{nlink("/a"), nlink("/b")}; got != [2]uint32{2, 3} {
		t.Fatalf("nlink of /a, /b after exchange = %v, want [2 3]", got)
	}
	if data, err := f.ReadFile("/a/x"); err != nil || string(data) != "file" {
		t.Fatalf("/a/x = %q, %v", data, err)
	}
	must(t, errOf(f.Stat("/b/y/sub")))
	// Two directories: /b/y (holding sub) and /c/y (holding deep).
	must(t, f.Rename2("/b/y", "/c/y", sfs.RenameExchange))
	must(t, errOf(f.Stat("/b/y/deep")))
	must(t, errOf(f.Stat("/c/y/sub")))
	// /c/y now lives in /c; moving /c below it must be refused.
	if err := f.Rename("/c", "/c/y/sub/c"); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("rename /c below itself: %v, want EINVAL", err)
	}
	if err := f.Rename("/b", "/b/y/deep/b"); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("rename /b below itself: %v, want EINVAL", err)
	}
	// An exchange may not put a directory below itself either.
	if err := f.Rename2("/c", "/c/y/sub", sfs.RenameExchange); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("exchange /c with its descendant: %v, want EINVAL", err)
	}
	for p, want := range map[string]uint32{"/": 5, "/a": 2, "/b": 3, "/c": 3, "/b/y": 3, "/c/y": 3} {
		if got := nlink(p); got != want {
			t.Errorf("nlink %s = %d, want %d", p, got, want)
		}
	}
	check(t, f)
}

// `..` after a non-directory is ENOTDIR, and nothing a resolution does can
// leave the core locked.
func TestDotDotAfterFile(t *testing.T) {
	f, _ := open(t, sfs.Options{})
	must(t, f.WriteFile("/f", []byte("x"), 0o644))
	must(t, f.Symlink("f/..", "/l"))
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- errors.New("panic")
			}
		}()
		done <- f.WriteFile("/l/x", []byte("y"), 0o644)
	}()
	select {
	case err := <-done:
		if !errors.Is(err, syscall.ENOTDIR) {
			t.Fatalf("write /l/x: %v, want ENOTDIR", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("write /l/x hangs")
	}
	for _, p := range []string{"/f/..", "/f/../f", "/l"} {
		if _, err := f.Stat(p); !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("stat %s: %v, want ENOTDIR", p, err)
		}
	}
	// The core still answers.
	must(t, f.WriteFile("/g", []byte("z"), 0o644))
}

// Appends from many goroutines through O_APPEND handles never overwrite
// each other.
func TestAppendAtomic(t *testing.T) {
	f, _ := open(t, sfs.Options{})
	must(t, f.WriteFile("/log", nil, 0o644))
	const writers, appends = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fl, err := f.OpenFile("/log", os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Error(err)
				return
			}
			defer fl.Close()
			for range appends {
				if _, err := fl.Write([]byte{byte('a' + w)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	data, err := f.ReadFile("/log")
	must(t, err)
	if len(data) != writers*appends {
		t.Fatalf("log holds %d bytes, want %d", len(data), writers*appends)
	}
	for w := range writers {
		if n := bytes.Count(data, []byte{byte('a' + w)}); n != appends {
			t.Errorf("writer %d: %d bytes, want %d", w, n, appends)
		}
	}
}
