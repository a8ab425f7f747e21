package git_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestCloneModes: the .git a clone makes has git's modes under the usual
// umask: directories 0755, files 0644 (not 0777 and 0666).
func TestCloneModes(t *testing.T) {
	b, fsys := newStore(t)
	if out := runBuiltin(t, b, "git init -q src && cd src && echo x > f && git add f && git commit -q -m one && cd .. && git clone -q src c"); out.code != 0 {
		t.Fatalf("clone: %+v", out)
	}
	var bad []string
	var walk func(p string)
	walk = func(p string) {
		a, err := fsys.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		perm := a.Mode & 0o7777
		switch a.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			if perm&0o022 != 0 {
				bad = append(bad, p)
			}
			ents, err := fsys.ReadDir(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				walk(p + "/" + e.Name)
			}
		case syscall.S_IFREG:
			if perm&0o022 != 0 || perm&0o111 != 0 && !strings.Contains(p, "/hooks/") {
				bad = append(bad, p)
			}
		}
	}
	walk("/c/.git")
	if len(bad) > 0 {
		t.Errorf("group- or world-writable (or executable) in .git: %v", bad)
	}
}

// TestCloneCraftedDuplicateNames: a tree naming "a" twice, once as a
// symlink out of the worktree and once as a directory, is refused before
// anything is written: no symlink is left behind, nothing goes through it.
func TestCloneCraftedDuplicateNames(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries func(blob, link, sub plumbing.Hash) []object.TreeEntry
	}{
		{"symlink then directory", func(blob, link, sub plumbing.Hash) []object.TreeEntry {
			return []object.TreeEntry{{Name: "a", Mode: filemode.Symlink, Hash: link}, {Name: "a", Mode: filemode.Dir, Hash: sub}, {Name: "z", Mode: filemode.Regular, Hash: blob}}
		}},
		{"file twice", func(blob, link, sub plumbing.Hash) []object.TreeEntry {
			return []object.TreeEntry{{Name: "a", Mode: filemode.Regular, Hash: blob}, {Name: "a", Mode: filemode.Symlink, Hash: link}}
		}},
		{"dot git", func(blob, link, sub plumbing.Hash) []object.TreeEntry {
			return []object.TreeEntry{{Name: ".GIT", Mode: filemode.Dir, Hash: sub}, {Name: "z", Mode: filemode.Regular, Hash: blob}}
		}},
		{"dot dot", func(blob, link, sub plumbing.Hash) []object.TreeEntry {
			return []object.TreeEntry{{Name: "..", Mode: filemode.Dir, Hash: sub}, {Name: "z", Mode: filemode.Regular, Hash: blob}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			native := t.TempDir()
			craftRepo(t, filepath.Join(native, "src"), tc.entries)
			b, fsys := newStore(t)
			importDir(t, fsys, native, "/")
			if err := fsys.MkdirAll("/outside", 0o755); err != nil {
				t.Fatal(err)
			}
			out := runBuiltin(t, b, "git clone -q src c")
			if out.code == 0 {
				t.Fatalf("a crafted tree was checked out: %+v", out)
			}
			ents, err := fsys.ReadDir("/c")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.Name != ".git" {
					t.Errorf("the failed checkout left %s behind", e.Name)
				}
			}
			if ents, _ := fsys.ReadDir("/outside"); len(ents) != 0 {
				t.Errorf("a write went through the symlink: %v", ents)
			}
		})
	}
}

// craftRepo writes a repository at dir whose one commit has the tree that
// entries make (written as given: go-git neither sorts nor checks them)
// from a blob, a symlink blob to /outside and a subtree holding x.
func craftRepo(t *testing.T, dir string, entries func(blob, link, sub plumbing.Hash) []object.TreeEntry) {
	t.Helper()
	r, err := gogit.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	put := func(typ plumbing.ObjectType, data []byte) plumbing.Hash {
		o := r.Storer.NewEncodedObject()
		o.SetType(typ)
		w, _ := o.Writer()
		w.Write(data)
		w.Close()
		h, err := r.Storer.SetEncodedObject(o)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	encode := func(o interface {
		Encode(plumbing.EncodedObject) error
	}) plumbing.Hash {
		eo := r.Storer.NewEncodedObject()
		if err := o.Encode(eo); err != nil {
			t.Fatal(err)
		}
		h, err := r.Storer.SetEncodedObject(eo)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	blob := put(plumbing.BlobObject, []byte("data\n"))
	link := put(plumbing.BlobObject, []byte("/outside"))
	sub := encode(&object.Tree{Entries: []object.TreeEntry{{Name: "x", Mode: filemode.Regular, Hash: blob}}})
	tree := encode(&object.Tree{Entries: entries(blob, link, sub)})
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}
	commit := encode(&object.Commit{Author: sig, Committer: sig, Message: "crafted\n", TreeHash: tree})
	if err := r.Storer.SetReference(plumbing.NewHashReference("refs/heads/master", commit)); err != nil {
		t.Fatal(err)
	}
	if err := r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, "refs/heads/master")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "HEAD")); err != nil {
		t.Fatal(err)
	}
}
