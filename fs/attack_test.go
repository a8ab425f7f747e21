package fs_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// A write at an offset whose end overflows int64 is EFBIG, and must not
// land in a chunk index past the key's bits, where it would overwrite
// another inode's data.
func TestWriteOffsetOverflow(t *testing.T) {
	f, store := open(t, sfs.Options{CommitInterval: time.Hour})
	must(t, f.WriteFile("/victim", []byte("precious"), 0o644))
	fl, err := f.OpenFile("/x", os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	if err := fl.Truncate(math.MaxInt64); !errors.Is(err, syscall.EFBIG) {
		t.Errorf("Truncate(MaxInt64) = %v, want EFBIG", err)
	}
	for _, off := range []int64{math.MaxInt64 - 5, math.MaxInt64, 1 << 62} {
		if _, err := fl.WriteAt([]byte("0123456789"), off); !errors.Is(err, syscall.EFBIG) {
			t.Errorf("WriteAt(off %d) = %v, want EFBIG", off, err)
		}
	}
	must(t, fl.Close())
	check(t, f)
	f = reopen(t, f, store, sfs.Options{})
	got, err := f.ReadFile("/victim")
	must(t, err)
	if string(got) != "precious" {
		t.Fatalf("victim reads %q", got)
	}
	a, err := f.Stat("/x")
	must(t, err)
	if a.Size != 0 {
		t.Fatalf("/x size %d after refused writes", a.Size)
	}
}

// A file unlinked while open, then the store closed with the handle still
// open (a crash of the frontend), is reclaimed at the next open: no orphan
// inode, its bytes leave the usage, Check is clean.
func TestUnlinkedOpenAcrossClose(t *testing.T) {
	f, store := open(t, sfs.Options{})
	must(t, f.WriteFile("/keep", []byte("keep"), 0o644))
	fl, err := f.OpenFile("/gone", os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	_, err = fl.Write(bytes.Repeat([]byte("z"), 3*int(f.ChunkSize())))
	must(t, err)
	must(t, f.Setxattr("/gone", "user.a", []byte("v"), 0))
	must(t, f.Sync(t.Context()))
	must(t, f.Unlink("/gone"))
	// Still readable and writable through the handle.
	_, err = fl.WriteAt([]byte("late"), 0)
	must(t, err)
	buf := make([]byte, 4)
	_, err = fl.ReadAt(buf, 0)
	must(t, err)
	if string(buf) != "late" {
		t.Fatalf("unlinked open file reads %q", buf)
	}
	must(t, f.Sync(t.Context()))
	g := reopen(t, f, store, sfs.Options{})
	check(t, g)
	if u := g.Usage(); u.Bytes != 4 || u.Inodes != 2 {
		t.Fatalf("usage after reopen %+v, want 4 bytes, 2 inodes", u)
	}
}

// Hard links keep nlink and data across reopen, and the data survives the
// removal of all names but one.
func TestHardLinksAcrossReopen(t *testing.T) {
	f, store := open(t, sfs.Options{})
	must(t, f.Mkdir("/d", 0o755))
	must(t, f.WriteFile("/d/a", []byte("data"), 0o644))
	must(t, f.Link("/d/a", "/b"))
	must(t, f.Link("/b", "/d/c"))
	must(t, f.Unlink("/d/a"))
	f = reopen(t, f, store, sfs.Options{})
	check(t, f)
	a, err := f.Stat("/b")
	must(t, err)
	if a.Nlink != 2 {
		t.Fatalf("nlink %d, want 2", a.Nlink)
	}
	must(t, f.Rename("/b", "/d/c")) // same inode: a no-op
	a, err = f.Stat("/d/c")
	must(t, err)
	if a.Nlink != 2 {
		t.Fatalf("nlink after rename onto own link %d, want 2", a.Nlink)
	}
	must(t, f.Unlink("/d/c"))
	f = reopen(t, f, store, sfs.Options{})
	check(t, f)
	got, err := f.ReadFile("/b")
	must(t, err)
	if string(got) != "data" {
		t.Fatalf("got %q", got)
	}
}

// Rename over an open file: the handle keeps the old data, the name shows
// the new one, also after Sync and reopen; the old inode is reclaimed.
func TestRenameOverOpenFile(t *testing.T) {
	f, store := open(t, sfs.Options{})
	must(t, f.WriteFile("/old", []byte("old data"), 0o644))
	must(t, f.WriteFile("/new", []byte("new"), 0o644))
	fl, err := f.OpenFile("/old", os.O_RDWR, 0)
	must(t, err)
	must(t, f.Rename("/new", "/old"))
	must(t, f.Sync(t.Context()))
	buf := make([]byte, 8)
	_, err = fl.ReadAt(buf, 0)
	must(t, err)
	if string(buf) != "old data" {
		t.Fatalf("handle reads %q", buf)
	}
	_, err = fl.WriteAt([]byte("X"), 0)
	must(t, err)
	must(t, fl.Close())
	f = reopen(t, f, store, sfs.Options{})
	check(t, f)
	got, err := f.ReadFile("/old")
	must(t, err)
	if string(got) != "new" {
		t.Fatalf("/old reads %q after reopen", got)
	}
	if u := f.Usage(); u.Bytes != 3 {
		t.Fatalf("usage %+v, want 3 bytes", u)
	}
}

// Exchanging a directory with something inside it would make a cycle.
func TestExchangeIntoOwnSubtree(t *testing.T) {
	f, _ := open(t, sfs.Options{})
	must(t, f.MkdirAll("/a/x/y", 0o755))
	must(t, f.WriteFile("/a/x/file", nil, 0o644))
	for _, c := range [][2]string{{"/a", "/a/x"}, {"/a/x", "/a"}, {"/a", "/a/x/y"}, {"/a/x/file", "/a"}, {"/a", "/a/x/file"}} {
		err := f.Rename2(c[0], c[1], sfs.RenameExchange)
		if err == nil {
			t.Errorf("exchange %s %s succeeded", c[0], c[1])
		}
		check(t, f)
	}
}

// Quota usage follows truncations, unlinks and reopen.
func TestUsageAccounting(t *testing.T) {
	f, store := open(t, sfs.Options{})
	cs := f.ChunkSize()
	must(t, f.WriteFile("/a", bytes.Repeat([]byte("a"), int(3*cs+7)), 0o644))
	must(t, f.Truncate("/a", cs+1))
	must(t, f.Truncate("/a", 5*cs))
	must(t, f.Truncate("/a", 2))
	must(t, f.WriteFile("/b", []byte("bb"), 0o644))
	must(t, f.Link("/b", "/c"))
	must(t, f.Unlink("/b"))
	if u := f.Usage(); u.Bytes != 4 {
		t.Fatalf("usage %+v, want 4", u)
	}
	f = reopen(t, f, store, sfs.Options{})
	if u := f.Usage(); u.Bytes != 4 {
		t.Fatalf("usage after reopen %+v, want 4", u)
	}
	got, err := f.ReadFile("/a")
	must(t, err)
	if string(got) != "aa" {
		t.Fatalf("/a = %q", got)
	}
	must(t, f.Truncate("/a", cs+3))
	got, err = f.ReadFile("/a")
	must(t, err)
	if !bytes.Equal(got, append([]byte("aa"), make([]byte, cs+1)...)) {
		t.Fatalf("/a regrown reads non-zero past the old end")
	}
}

// A crash leaves committed data in the store's WAL, which SQLite finds by
// the name the store is opened by. Opening the crashed store by another
// hard link must not come up without that data.
func TestHardLinkedStoreAfterCrash(t *testing.T) {
	f, store := open(t, sfs.Options{})
	must(t, f.WriteFile("/committed", []byte("synced"), 0o644))
	must(t, f.Sync(t.Context()))
	// The crash image: the store and its WAL as they are on disk now.
	dir := t.TempDir()
	crashed := filepath.Join(dir, "ws.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(store + suffix)
		must(t, err)
		must(t, os.WriteFile(crashed+suffix, b, 0o600))
	}
	alias := filepath.Join(dir, "alias.db")
	must(t, os.Link(crashed, alias))
	for _, name := range []string{alias, crashed} {
		g, err := sfs.Open(t.Context(), name, sfs.Options{})
		if err == nil {
			got, rerr := g.ReadFile("/committed")
			g.Close()
			t.Fatalf("store with two names opened by %s after a crash: /committed = %q, %v", filepath.Base(name), got, rerr)
		}
		if !errors.Is(err, sqlstore.ErrHardLinked) {
			t.Fatalf("open %s: %v, want ErrHardLinked", filepath.Base(name), err)
		}
	}
	// With the extra name gone, the original name finds its WAL.
	must(t, os.Remove(alias))
	g, err := sfs.Open(t.Context(), crashed, sfs.Options{})
	must(t, err)
	defer g.Close()
	got, err := g.ReadFile("/committed")
	if err != nil || string(got) != "synced" {
		t.Fatalf("/committed = %q, %v", got, err)
	}
}

// Renames whose source and target are one inode, or the root, leave the
// tree and the link counts as they were.
func TestRenameSameInodeAndRoot(t *testing.T) {
	f, store := open(t, sfs.Options{})
	must(t, f.MkdirAll("/d/e", 0o755))
	must(t, f.WriteFile("/d/a", []byte("x"), 0o644))
	must(t, f.Link("/d/a", "/b"))
	for _, c := range []struct {
		from, to string
		flags    uint32
	}{
		{"/d/a", "/b", 0}, {"/d/a", "/b", sfs.RenameExchange}, {"/d/a", "/b", sfs.RenameNoReplace},
		{"/d/a", "/d/a", 0}, {"/d", "/d", 0}, {"/d", "/d", sfs.RenameExchange},
		{"/", "/x", 0}, {"/d", "/", 0}, {"/d", "/", sfs.RenameExchange}, {"/d/e", "/d", sfs.RenameExchange},
		{"/d/e/..", "/y", 0}, {"/d", "/d/e/..", sfs.RenameExchange},
	} {
		_ = f.Rename2(c.from, c.to, c.flags)
		check(t, f)
	}
	f = reopen(t, f, store, sfs.Options{})
	check(t, f)
	a, err := f.Stat("/b")
	must(t, err)
	if a.Nlink != 2 {
		t.Fatalf("nlink %d, want 2", a.Nlink)
	}
}

// After Close no commit will run: a write through a handle that outlived
// its FS must fail, not report bytes that are lost.
func TestWriteAfterClose(t *testing.T) {
	f, store := open(t, sfs.Options{})
	fl, err := f.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	must(t, f.Close())
	n, err := fl.WriteAt([]byte("lost?"), 0)
	if err == nil {
		g, oerr := sfs.Open(t.Context(), store, sfs.Options{})
		must(t, oerr)
		defer g.Close()
		got, _ := g.ReadFile("/f")
		t.Fatalf("write after Close reported %d bytes written, nil error; reopened store holds %q", n, got)
	}
	for name, err := range map[string]error{
		"WriteFile": f.WriteFile("/g", []byte("x"), 0o644),
		"Truncate":  fl.Truncate(0),
		"Setxattr":  f.Setxattr("/f", "user.a", []byte("v"), 0),
		"Mkdir":     f.Mkdir("/d", 0o755),
	} {
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("%s after Close: %v, want EIO", name, err)
		}
	}
}

// The last byte a file may hold is writable and survives reopen; one past
// it is EFBIG; a read across the huge hole returns zeros.
func TestLargestSparseFile(t *testing.T) {
	f, store := open(t, sfs.Options{})
	limit := int64(sqlstore.MaxChunks) * f.ChunkSize()
	fl, err := f.OpenFile("/sparse", os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	if _, err := fl.WriteAt([]byte("z"), limit); !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("write at the limit: %v, want EFBIG", err)
	}
	_, err = fl.WriteAt([]byte("yz"), limit-2)
	must(t, err)
	must(t, fl.Close())
	f = reopen(t, f, store, sfs.Options{})
	check(t, f)
	fl, err = f.OpenFile("/sparse", os.O_RDONLY, 0)
	must(t, err)
	defer fl.Close()
	buf := make([]byte, 3*f.ChunkSize())
	n, err := fl.ReadAt(buf, limit-int64(len(buf)))
	must(t, err)
	want := append(make([]byte, len(buf)-2), 'y', 'z')
	if n != len(buf) || !bytes.Equal(buf, want) {
		t.Fatalf("read at the end of the largest file: %d bytes, tail %q", n, buf[len(buf)-4:])
	}
}
