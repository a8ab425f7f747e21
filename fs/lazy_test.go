package fs_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// TestOpenReadsWhatThePathNeeds: opening a store reads a fixed number of
// rows whatever the tree holds, and a stat reads the directories on its
// path only; once read, they cost nothing more. The counters (Usage) come
// from the store's totals, without a walk.
func TestOpenReadsWhatThePathNeeds(t *testing.T) {
	type reads struct{ open, stat, again sqlstore.Reads }
	measure := func(extraDirs int) (reads, sfs.Usage) {
		f, store := open(t, sfs.Options{})
		must(t, f.MkdirAll("/a", 0o755))
		for i := range 10 {
			must(t, f.WriteFile(fmt.Sprintf("/a/f%d", i), []byte("0123456789"), 0o644))
		}
		must(t, f.Mkdir("/b", 0o755))
		for d := range extraDirs {
			dir := fmt.Sprintf("/b/d%d", d)
			must(t, f.Mkdir(dir, 0o755))
			for i := range 100 {
				must(t, f.WriteFile(dir+"/x"+strconv.Itoa(i), []byte("xyz"), 0o644))
			}
		}
		g := reopen(t, f, store, sfs.Options{})
		var r reads
		r.open = g.Store().MetadataReads()
		a, err := g.Stat("/a/f3")
		must(t, err)
		if a.Size != 10 {
			t.Fatalf("/a/f3 has %d bytes, want 10", a.Size)
		}
		r.stat = g.Store().MetadataReads()
		_, err = g.Stat("/a/f7")
		must(t, err)
		_, err = g.ReadDir("/a")
		must(t, err)
		r.again = g.Store().MetadataReads()
		return r, g.Usage()
	}
	small, _ := measure(0)
	big, usage := measure(20)
	if small != big {
		t.Errorf("reads (queries, rows) at open, after a stat, after more of the same directory:\n  3 inodes below /b: %+v\n  2023 below /b: %+v", small, big)
	}
	if big.open.Queries > 6 || big.open.Rows > 6 {
		t.Errorf("open read %+v, want at most 6 queries and 6 rows", big.open)
	}
	if big.again != big.stat {
		t.Errorf("a second stat and a listing of a directory already read read more: %+v, then %+v", big.stat, big.again)
	}
	if want := (sfs.Usage{Inodes: 1 + 1 + 10 + 1 + 20 + 2000, Bytes: 100 + 2000*3}); usage != want {
		t.Errorf("usage of the reopened store %+v, want %+v", usage, want)
	}
}

// TestHardLinkNamedInDirectoryNotRead: a file whose only name left is in
// a directory not read yet is still found by its names (Names, the paths
// the inode API audits under).
func TestHardLinkNamedInDirectoryNotRead(t *testing.T) {
	f, store := open(t, sfs.Options{})
	must(t, f.MkdirAll("/a", 0o755))
	must(t, f.MkdirAll("/b/c", 0o755))
	must(t, f.WriteFile("/a/x", []byte("linked"), 0o644))
	must(t, f.Link("/a/x", "/b/c/y"))
	g := reopen(t, f, store, sfs.Options{})
	in := g.Inodes()
	a, err := in.Lookup(1, "a")
	must(t, err)
	x, err := in.Lookup(a.Ino, "x")
	must(t, err)
	must(t, g.Remove("/a/x"))
	b, err := g.Lstat("/b")
	must(t, err)
	names := in.Names(x.Ino)
	if len(names) != 1 || names[0].Name != "y" || names[0].Dir == b.Ino || names[0].Dir == 0 {
		t.Fatalf("names of the file: %+v, want y in /b/c", names)
	}
	c, err := in.Lookup(b.Ino, "c")
	must(t, err)
	if names[0].Dir != c.Ino {
		t.Fatalf("y found in %d, /b/c is %d", names[0].Dir, c.Ino)
	}
	must(t, in.Setxattr(x.Ino, "user.k", []byte("v"), 0))
	if got, err := g.ReadFile("/b/c/y"); err != nil || string(got) != "linked" {
		t.Fatalf("/b/c/y: %q %v", got, err)
	}
	check(t, g)
}

// TestRestoreOfTreeNotRead: a restore in a store reopened cold (nothing
// read but the root, or some directories read) brings back the
// checkpoint's tree, what was read and what was not alike.
func TestRestoreOfTreeNotRead(t *testing.T) {
	for _, read := range [][]string{nil, {"/d"}, {"/d", "/d/sub", "/e"}} {
		t.Run(fmt.Sprint(read), func(t *testing.T) {
			f, store := open(t, sfs.Options{})
			must(t, f.MkdirAll("/d/sub", 0o755))
			for i := range 20 {
				must(t, f.WriteFile(fmt.Sprintf("/d/f%d", i), []byte("old"+strconv.Itoa(i)), 0o644))
			}
			must(t, f.WriteFile("/d/sub/deep", []byte("deep"), 0o644))
			ci, err := f.Checkpoint(t.Context(), sfs.CheckpointOptions{Name: "base"})
			must(t, err)
			must(t, f.Remove("/d/f3"))
			must(t, f.WriteFile("/d/f4", []byte("new content"), 0o644))
			must(t, f.Rename("/d/sub", "/moved"))
			must(t, f.MkdirAll("/e/g", 0o755))
			must(t, f.WriteFile("/e/g/h", []byte("gone after"), 0o644))
			g := reopen(t, f, store, sfs.Options{})
			for _, p := range read {
				if _, err := g.ReadDir(p); err != nil && p != "/d/sub" {
					t.Fatal(err)
				}
			}
			before := g.Usage()
			must(t, g.Restore(t.Context(), strconv.FormatInt(ci.ID, 10)))
			ents, err := g.ReadDir("/d")
			must(t, err)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name)
			}
			want := []string{"sub"}
			for i := range 20 {
				want = append(want, "f"+strconv.Itoa(i))
			}
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("/d after the restore: %q, want %q", names, want)
			}
			for p, data := range map[string]string{"/d/f3": "old3", "/d/f4": "old4", "/d/sub/deep": "deep"} {
				if got, err := g.ReadFile(p); err != nil || string(got) != data {
					t.Fatalf("%s after the restore: %q %v, want %q", p, got, err, data)
				}
			}
			for _, p := range []string{"/e", "/moved"} {
				if _, err := g.Lstat(p); err == nil {
					t.Fatalf("%s still there after the restore", p)
				}
			}
			// /, d, sub, deep, 20 files; 20 files of 4 bytes, deep 4.
			if u, want := g.Usage(), (sfs.Usage{Inodes: 24, Bytes: 10*4 + 10*5 + 4}); u != want {
				t.Fatalf("usage after the restore %+v (before %+v), want %+v", u, before, want)
			}
			check(t, g)
		})
	}
}

// TestWarmWalkReadsNothing: once a walk has read the tree, walking it
// again, through paths (listings with attributes, lstat, extended
// attributes) and through inodes (listings, lookups, attributes), reads
// nothing from the store, hard links, symlinks and nested directories
// included.
func TestWarmWalkReadsNothing(t *testing.T) {
	f, store := open(t, sfs.Options{})
	for d := range 3 {
		dir := fmt.Sprintf("/d%d/e", d)
		must(t, f.MkdirAll(dir, 0o755))
		for i := range 5 {
			must(t, f.WriteFile(fmt.Sprintf("%s/f%d", dir, i), []byte("data"), 0o644))
		}
		must(t, f.Symlink("f0", dir+"/l"))
		must(t, f.Setxattr(dir+"/f1", "user.k", []byte("v"), 0))
	}
	must(t, f.Link("/d0/e/f2", "/d2/h"))
	g := reopen(t, f, store, sfs.Options{})
	walk := func() int {
		seen := 0
		var byPath func(p string)
		byPath = func(p string) {
			ents, attrs, err := g.ReadDirAttrs(p)
			must(t, err)
			for i, e := range ents {
				seen++
				child := p + "/" + e.Name
				if p == "/" {
					child = "/" + e.Name
				}
				a, err := g.Lstat(child)
				must(t, err)
				if a != attrs[i] {
					t.Fatalf("%s: listed %+v, lstat %+v", child, attrs[i], a)
				}
				if _, err := g.Listxattr(child); err != nil {
					t.Fatal(err)
				}
				if e.Mode == 0o040000 {
					byPath(child)
				}
			}
		}
		byPath("/")
		x := g.Inodes()
		var byIno func(dir uint64)
		byIno = func(dir uint64) {
			ents, _, err := x.ReadDir(dir, 0, 1<<20)
			must(t, err)
			for _, e := range ents {
				seen++
				_, err := x.Lookup(dir, e.Name)
				must(t, err)
				_, err = x.GetAttr(e.Ino)
				must(t, err)
				if e.Mode == 0o040000 {
					byIno(e.Ino)
				}
			}
		}
		byIno(sqlstore.Root)
		return seen
	}
	first := walk()
	before := g.Store().MetadataReads()
	if before.Queries == 0 {
		t.Fatal("the first walk read nothing from the store: it did not start cold")
	}
	if second := walk(); second != first || first != 2*(3*(1+1+5+1)+1) {
		t.Fatalf("walks saw %d then %d entries", first, second)
	}
	if after := g.Store().MetadataReads(); after != before {
		t.Fatalf("a warm walk read the store: %+v after the first walk, %+v after the second", before, after)
	}
}
