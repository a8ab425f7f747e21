package fs_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// pages lists directory ino through the inode API a page of size entries
// at a time, as the kernel reads a listing, each page after the last
// offset of the one before, and returns the names sorted. Offsets must
// rise.
func pages(t *testing.T, x sfs.Inodes, ino uint64, size int) []string {
	t.Helper()
	var got []string
	var after uint64
	for {
		ents, attrs, err := x.ReadDir(ino, after, size)
		must(t, err)
		if len(ents) != len(attrs) || len(ents) > size {
			t.Fatalf("page after %d of size %d: %d entries, %d attrs", after, size, len(ents), len(attrs))
		}
		for i, e := range ents {
			if attrs[i].Ino != e.Ino {
				t.Fatalf("entry %q: ino %d, attrs of %d", e.Name, e.Ino, attrs[i].Ino)
			}
			if e.Off <= after || e.Off < 3 || e.Off >= 1<<63 {
				t.Fatalf("entry %q at offset %d after %d", e.Name, e.Off, after)
			}
			after = e.Off
			got = append(got, e.Name)
		}
		if len(ents) < size {
			slices.Sort(got)
			return got
		}
	}
}

// A listing read a page at a time that unlinks each page before reading
// the next, or creates names meanwhile, reads each name that stays once:
// offsets are the entries' own, not positions that shift (POSIX readdir;
// busybox rm -rf of a big directory failed). Both sizes: below and above
// maxSortedEdit, where the listing is edited or rebuilt.
func TestReadDirPagesAcrossChanges(t *testing.T) {
	for _, size := range []int{600, 9000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			f, _ := open(t, sfs.Options{})
			must(t, f.Mkdir("/d", 0o755))
			for i := range size {
				must(t, f.WriteFile(fmt.Sprintf("/d/f%04d", i), nil, 0o644))
			}
			x := f.Inodes()
			d, err := x.Lookup(sqlstore.Root, "d")
			must(t, err)
			seen := map[string]bool{}
			var after uint64
			for page := 0; ; page++ {
				ents, _, err := x.ReadDir(d.Ino, after, 100)
				must(t, err)
				if len(ents) == 0 {
					break
				}
				for _, e := range ents {
					if seen[e.Name] {
						t.Fatalf("%q read twice", e.Name)
					}
					seen[e.Name] = true
					after = e.Off
					if page%2 == 0 {
						must(t, f.Remove("/d/"+e.Name))
					}
				}
				must(t, f.WriteFile(fmt.Sprintf("/d/new%04d", page), nil, 0o644))
			}
			for i := range size {
				if name := fmt.Sprintf("f%04d", i); !seen[name] {
					t.Fatalf("%q never read", name)
				}
			}
		})
	}
}

// A listing read in pages of any size is the whole sorted listing, and
// every kind of change to the directory shows in the next pages (the core
// keeps the sorted names between pages and edits them on a change, or for
// a directory of over 8192 names drops them).
func TestReadDirPages(t *testing.T) {
	for _, size := range []int{600, 9000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) { testReadDirPages(t, size) })
	}
}

func testReadDirPages(t *testing.T, size int) {
	f, store := open(t, sfs.Options{})
	must(t, f.Mkdir("/d", 0o755))
	must(t, f.Mkdir("/other", 0o755))
	var want []string
	for _, i := range rand.Perm(size) {
		name := fmt.Sprintf("f%04d", i)
		must(t, f.WriteFile("/d/"+name, nil, 0o644))
		want = append(want, name)
	}
	must(t, f.WriteFile("/d/secret1", nil, 0o644))
	must(t, f.WriteFile("/other/x", nil, 0o644))
	// A hidden name is left out of every page.
	f = reopen(t, f, store, sfs.Options{Policy: sfs.Policy{Hidden: []string{"d/secret*"}}})
	x := f.Inodes()
	d, err := x.Lookup(sqlstore.Root, "d")
	must(t, err)

	without := func(name string) func([]string) []string {
		return func(w []string) []string { return slices.DeleteFunc(w, func(n string) bool { return n == name }) }
	}
	with := func(name string) func([]string) []string {
		return func(w []string) []string { return append(w, name) }
	}
	same := func(w []string) []string { return w }
	changes := []struct {
		name   string
		change func() error
		want   func([]string) []string
	}{
		{"none", func() error { return nil }, same},
		{"create", func() error { return f.WriteFile("/d/a-new", nil, 0o644) }, with("a-new")},
		{"unlink", func() error { return f.Remove("/d/f0300") }, without("f0300")},
		{"rename within", func() error { return f.Rename("/d/f0001", "/d/zz") },
			func(w []string) []string { return with("zz")(without("f0001")(w)) }},
		{"rename in", func() error { return f.Rename("/other/x", "/d/x") }, with("x")},
		{"rename out", func() error { return f.Rename("/d/f0002", "/other/f0002") }, without("f0002")},
		{"link", func() error { return f.Link("/d/f0003", "/d/b-link") }, with("b-link")},
		{"exchange", func() error { return f.Rename2("/d/f0004", "/other/f0002", sfs.RenameExchange) }, same},
		{"mkdir", func() error { return f.Mkdir("/d/sub", 0o755) }, with("sub")},
		{"rmdir", func() error { return f.Remove("/d/sub") }, without("sub")},
	}
	for _, c := range changes {
		must(t, c.change())
		want = c.want(want)
		slices.Sort(want)
		for _, page := range []int{max(1, size/500), 7, 250, 600, 10000} {
			if got := pages(t, x, d.Ino, page); !slices.Equal(got, want) {
				t.Fatalf("after %s, pages of %d: %d names %q…, want %d", c.name, page, len(got), got[:min(5, len(got))], len(want))
			}
		}
		if got := names(t, f, "/d"); !slices.Equal(got, want) {
			t.Fatalf("after %s, ReadDir: %d names, want %d", c.name, len(got), len(want))
		}
	}
	// A name hidden by the directory's path stays hidden: the directory
	// cannot be renamed out of the glob (and the pages stay as they were).
	if err := f.Rename("/d", "/e"); !errors.Is(err, syscall.EACCES) {
		t.Fatalf("renaming the directory out of the hidden glob: %v, want EACCES", err)
	}
	if got := pages(t, x, d.Ino, 250); !slices.Equal(got, want) {
		t.Fatalf("after a refused rename of the directory: %d names, want %d", len(got), len(want))
	}
}
