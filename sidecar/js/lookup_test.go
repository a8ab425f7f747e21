package js

import (
	"context"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// countingFS counts the lookups made on a file system other than the
// open itself.
type countingFS struct {
	builtin.FS
	lookups int
}

func (c *countingFS) Lstat(name string) (iofs.FileInfo, error) {
	c.lookups++
	return c.FS.Lstat(name)
}

func (c *countingFS) Stat(name string) (iofs.FileInfo, error) {
	c.lookups++
	return c.FS.Stat(name)
}

func (c *countingFS) Readlink(name string) (string, error) {
	c.lookups++
	return c.FS.Readlink(name)
}

func (c *countingFS) OpenFileUnlessLink(name string, flag int, perm iofs.FileMode) (builtin.File, bool, error) {
	return c.FS.(unlessLinkFS).OpenFileUnlessLink(name, flag, perm)
}

// TestWholeFileLookups: the owner's whole-file write and read of a name
// whose last component is not a symlink is one lookup, the open's (the
// final-symlink check rides on it: it was an Lstat before the open); a
// symlink still gets the check, and one whose target ends in "/" still
// fails as the kernel would.
func TestWholeFileLookups(t *testing.T) {
	fsys, err := sfs.Open(context.Background(), filepath.Join(t.TempDir(), "ws.db"), sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	for _, l := range [][2]string{{"f", "/l"}, {"f/", "/s"}} {
		if err := fsys.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.WriteFile("/f", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	const ws = "/workspace/"
	wr := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	cases := []struct {
		name    string
		write   bool
		path    string
		lookups int // at most
		err     error
	}{
		{"write new", true, ws + "new", 0, nil},
		{"write existing", true, ws + "f", 0, nil},
		{"read", false, ws + "f", 0, nil},
		{"read missing", false, ws + "missing", 0, syscall.ENOENT},
		{"write through a link", true, ws + "l", 4, nil},
		{"read through a link", false, ws + "l", 4, nil},
		{"write through a link to a name with a slash", true, ws + "s", 4, syscall.EISDIR},
		{"read through a link to a name with a slash", false, ws + "s", 4, syscall.ENOTDIR},
	}
	sh := shell.New(fsys, shell.Options{Commands: map[string]builtin.Func{"probe": func(_ context.Context, env *builtin.Env, _ []string) int {
		for _, c := range cases {
			cfs := &countingFS{FS: env.FS}
			var err error
			if c.write {
				_, err = writeWhole(cfs, c.path, wr, 0o644, []byte("new"))
			} else {
				var data []byte
				data, _, err = readWhole(cfs, c.path)
				if err == nil && string(data) != "new" && string(data) != "old" {
					t.Errorf("%s: read %q", c.name, data)
				}
			}
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Errorf("%s: %v, want %v", c.name, err, c.err)
			}
			if cfs.lookups > c.lookups {
				t.Errorf("%s: %d lookups besides the open, want at most %d", c.name, cfs.lookups, c.lookups)
			}
		}
		return 0
	}}})
	defer sh.Close()
	if res, err := sh.Exec(context.Background(), sidecar.Request{Command: "probe"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("probe: %v %+v", err, res)
	}
	if data, err := fsys.ReadFile("/f"); err != nil || string(data) != "new" {
		t.Errorf("/f: %q %v, want the write through /workspace/l", data, err)
	}
}
