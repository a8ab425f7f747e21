package fs_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
)

func TestPathResolution(t *testing.T) {
	f, _ := open(t, sfs.Options{})
	must(t, f.MkdirAll("/a/b/c", 0o755))
	must(t, f.WriteFile("/a/x", []byte("a/x"), 0o644))
	must(t, f.WriteFile("/a/b/x", []byte("a/b/x"), 0o644))
	must(t, f.WriteFile("/f", []byte("f"), 0o644))
	must(t, f.Symlink("b/c", "/a/l"))  // a/l/.. is a/b, not a
	must(t, f.Symlink("/a/b", "/abs")) // absolute
	must(t, f.Symlink("../../x", "/a/b/c/up"))
	must(t, f.Symlink("f/..", "/dotdot")) // .. after a file
	// A chain of exactly MaxSymlinks links resolves; one more is ELOOP.
	must(t, f.Symlink("/a/x", "/chain0"))
	for i := 1; i <= sfs.MaxSymlinks; i++ {
		must(t, f.Symlink(fmt.Sprintf("chain%d", i-1), fmt.Sprintf("/chain%d", i)))
	}
	long := strings.Repeat("n", sfs.MaxNameLen)
	must(t, f.WriteFile("/"+long, []byte("long"), 0o644))
	// A path longer than PATH_MAX made of short names is fine.
	deep := strings.Repeat("/dddddddddd", 420)
	must(t, f.MkdirAll(deep, 0o755))
	must(t, f.WriteFile(deep+"/x", []byte("deep"), 0o644))

	for _, tc := range []struct {
		path string
		want string // contents, or the error's errno name
		err  error
	}{
		{path: "a/l/../x", want: "a/b/x"},
		{path: "a/l/../../x", want: "a/x"},
		{path: "abs/../x", want: "a/x"},
		{path: "a/b/c/up", want: "a/x"},
		{path: "/../../a/./x", want: "a/x"},
		{path: fmt.Sprintf("chain%d", sfs.MaxSymlinks-1), want: "a/x"},
		{path: fmt.Sprintf("chain%d", sfs.MaxSymlinks), err: syscall.ELOOP},
		{path: "f/x", err: syscall.ENOTDIR},
		{path: "f/..", err: syscall.ENOTDIR},
		{path: "f/.", err: syscall.ENOTDIR},
		{path: "f/", err: syscall.ENOTDIR},
		{path: "a/b/c/../../x/", err: syscall.ENOTDIR},
		{path: "dotdot/f", err: syscall.ENOTDIR},
		{path: "a/missing/../x", err: syscall.ENOENT},
		{path: long, want: "long"},
		{path: long + "n", err: syscall.ENAMETOOLONG},
		{path: long + "n/../f", err: syscall.ENAMETOOLONG},
		{path: deep + "/x", want: "deep"},
		{path: deep + strings.Repeat("/..", 420) + "/f", want: "f"},
	} {
		got, err := f.ReadFile(tc.path)
		switch {
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("read %.40q: %v, want %v", tc.path, err, tc.err)
		case tc.err == nil && (err != nil || string(got) != tc.want):
			t.Errorf("read %.40q = %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
	// Creation follows the same rules.
	must(t, f.WriteFile("a/l/../new", []byte("n"), 0o644))
	must(t, errOf(f.Stat("/a/b/new")))
	if err := f.Mkdir("f/../d2", 0o755); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("mkdir f/../d2: %v, want ENOTDIR", err)
	}
	must(t, f.Rename("a/l/../new", "a/l/../new2"))
	must(t, errOf(f.Stat("/a/b/new2")))
	check(t, f)
}
