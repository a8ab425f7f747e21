package fuse_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
)

// How many files the directories of these tests hold: many times what one
// getdents of a small buffer returns, so that reads go on after changes.
const manyFiles = 2000

// fill makes directory dir of the mount with manyFiles files and returns
// their names.
func fill(t *testing.T, w *fusetest.Workspace, dir string) map[string]bool {
	t.Helper()
	must(t, os.Mkdir(w.Path(dir), 0o755))
	names := make(map[string]bool, manyFiles)
	for i := range manyFiles {
		name := fmt.Sprintf("file-%04d", i)
		must(t, os.WriteFile(w.Path(dir, name), nil, 0o644))
		names[name] = true
	}
	return names
}

// dirent is an entry of a getdents64 buffer.
type dirent struct {
	name string
	off  int64 // where the listing goes on after this entry
}

// getdents reads the next batch of open directory fd with a small buffer,
// as readdir(3) does, leaving out "." and "..".
func getdents(t *testing.T, fd int) []dirent {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Getdents(fd, buf)
	must(t, err)
	var ents []dirent
	// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
	for b := buf[:n]; len(b) > 0; {
		reclen := binary.NativeEndian.Uint16(b[16:])
		name := unix.ByteSliceToString(b[19:reclen])
		if name != "." && name != ".." {
			ents = append(ents, dirent{name, int64(binary.NativeEndian.Uint64(b[8:]))})
		}
		b = b[reclen:]
	}
	if n > 0 && len(ents) == 0 {
		// Only "." and "..": the batch was not the end, read on.
		return getdents(t, fd)
	}
	return ents
}

// readOn reads open directory fd to its end, handing each batch to
// batch before reading the next.
func readOn(t *testing.T, fd int, batch func([]dirent)) {
	t.Helper()
	for range manyFiles {
		ents := getdents(t, fd)
		if len(ents) == 0 {
			return
		}
		batch(ents)
	}
	t.Fatal("the listing never ends")
}

func openDir(t *testing.T, path string) int {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// Each entry neither removed nor added since the directory was opened is
// read exactly once, however the directory changes between reads (POSIX
// readdir): a program that unlinks each batch it reads before reading the
// next (busybox rm -rf, os.RemoveAll, shutil.rmtree) removes every file.
// Offsets that were positions in the listing shifted by the batch
// unlinked and skipped as many entries.
func TestReadDirWhileUnlinking(t *testing.T) {
	w := mount(t)
	left := fill(t, w, "d")
	readOn(t, openDir(t, w.Path("d")), func(ents []dirent) {
		for _, e := range ents {
			if !left[e.name] {
				t.Fatalf("%q read twice or never made", e.name)
			}
			delete(left, e.name)
			must(t, unix.Unlink(w.Path("d", e.name)))
		}
	})
	if len(left) > 0 {
		t.Errorf("%d of %d files never read", len(left), manyFiles)
	}
	must(t, unix.Rmdir(w.Path("d")))
}

// Files created while a directory is read may be read or not, but never
// twice, and each file there all along is read once.
func TestReadDirWhileCreating(t *testing.T) {
	w := mount(t)
	old := fill(t, w, "d")
	seen := map[string]bool{}
	batch := 0
	readOn(t, openDir(t, w.Path("d")), func(ents []dirent) {
		for _, e := range ents {
			if seen[e.name] {
				t.Fatalf("%q read twice", e.name)
			}
			seen[e.name] = true
		}
		for i := range 20 {
			must(t, os.WriteFile(w.Path("d", fmt.Sprintf("new-%04d-%02d", batch, i)), nil, 0o644))
		}
		batch++
	})
	for name := range old {
		if !seen[name] {
			t.Errorf("%q never read", name)
		}
	}
}

// An offset the listing returned (telldir) is where it goes on after a
// seek to it (seekdir), after the entries before it were unlinked too.
func TestReadDirSeekAfterUnlinking(t *testing.T) {
	w := mount(t)
	left := fill(t, w, "d")
	fd := openDir(t, w.Path("d"))
	first := getdents(t, fd)
	if len(first) == 0 || len(first) >= manyFiles {
		t.Fatalf("first batch of %d entries", len(first))
	}
	getdents(t, fd) // read past the offset sought back to
	for _, e := range first {
		delete(left, e.name)
		must(t, unix.Unlink(w.Path("d", e.name)))
	}
	_, err := unix.Seek(fd, first[len(first)-1].off, 0)
	must(t, err)
	readOn(t, fd, func(ents []dirent) {
		for _, e := range ents {
			if !left[e.name] {
				t.Fatalf("%q read after the seek: unlinked or read twice", e.name)
			}
			delete(left, e.name)
		}
	})
	if len(left) > 0 {
		t.Errorf("%d files after the offset sought never read", len(left))
	}
}

// Programs that remove a tree reading a batch of a directory at a time
// remove all of it.
func TestRemoveAllOfBigDirectory(t *testing.T) {
	busybox, err := exec.LookPath("busybox")
	fusetest.Require(t, "busybox (busybox-static)", err)
	for _, c := range []struct {
		name   string
		remove func(dir string) error
	}{
		{"os.RemoveAll", os.RemoveAll},
		{"busybox rm -rf", func(dir string) error {
			if out, err := exec.Command(busybox, "rm", "-rf", dir).CombinedOutput(); err != nil {
				return fmt.Errorf("%w: %s", err, out)
			}
			return nil
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := mount(t)
			fill(t, w, "d")
			must(t, c.remove(w.Path("d")))
			if _, err := os.Lstat(w.Path("d")); !os.IsNotExist(err) {
				t.Fatalf("after removing: %v", err)
			}
		})
	}
}
