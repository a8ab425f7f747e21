package fs_test

import (
	"slices"
	"sync"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// A name removed through the inode API by a caller other than the kernel
// tells the mount which inode lost a link, as the path API does: the path
// no longer finds it, and its other names' link count is stale.
func TestRemoveTellsInodeOnBothAPIs(t *testing.T) {
	for _, api := range []string{"path", "inode"} {
		t.Run(api, func(t *testing.T) {
			f, _ := open(t, sfs.Options{})
			must(t, f.Mkdir("/d", 0o755))
			must(t, f.WriteFile("/d/a", []byte("x"), 0o644))
			must(t, f.Link("/d/a", "/d/b"))
			a, err := f.Lstat("/d/a")
			must(t, err)
			dir, err := f.Lstat("/d")
			must(t, err)
			var mu sync.Mutex
			var got []sfs.Change
			f.SetInvalidator(func(cs []sfs.Change) {
				mu.Lock()
				got = append(got, cs...)
				mu.Unlock()
			})
			if api == "path" {
				must(t, f.Unlink("/d/a"))
			} else {
				must(t, f.Inodes().Remove(dir.Ino, "a", false))
			}
			mu.Lock()
			defer mu.Unlock()
			want := sfs.Change{Path: "/d/a", Name: true, Ino: a.Ino}
			if !slices.Contains(got, want) {
				t.Fatalf("changes = %+v, want %+v among them", got, want)
			}
		})
	}
}
