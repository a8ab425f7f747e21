package shell

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
	"testing"
)

func TestViewNamespace(t *testing.T) {
	v := &view{m: &mounts{workspace: newMemFS(1 << 20), tmp: newMemFS(1 << 20)}}
	write := func(name, data string) {
		t.Helper()
		f, err := v.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if _, err := io.WriteString(f, data); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(v.MkdirAll("/workspace/a/b", 0o755))
	write("/workspace/a/b/f", "in workspace")
	write("/tmp/t", "in tmp")
	must(v.Symlink("/workspace/a", "/workspace/abs"))    // absolute, shell namespace
	must(v.Symlink("a/b", "/workspace/rel"))             // relative
	must(v.Symlink("/tmp/t", "/workspace/to-tmp"))       // across mounts
	must(v.Symlink("../workspace/a/b/f", "/tmp/to-ws"))  // across mounts, relative
	must(v.Symlink("loop2", "/workspace/loop1"))         // a cycle
	must(v.Symlink("loop1", "/workspace/loop2"))         //
	must(v.Symlink("/etc/passwd", "/workspace/to-host")) // outside: nothing there
	must(v.Symlink("missing", "/workspace/dangling"))    //

	read := func(name string) (string, error) {
		f, err := v.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		return string(b), err
	}
	tests := []struct {
		name string
		want string
		err  error
	}{
		{"/workspace/abs/b/f", "in workspace", nil},
		{"/workspace/rel/f", "in workspace", nil},
		{"/workspace/to-tmp", "in tmp", nil},
		{"/tmp/to-ws", "in workspace", nil},
		{"/workspace/a/../a/b/f", "in workspace", nil},
		{"/workspace/../../workspace/a/b/f", "in workspace", nil},
		{"/workspace/loop1", "", syscall.ELOOP},
		{"/workspace/to-host", "", fs.ErrNotExist},
		{"/workspace/a/b/f/x", "", syscall.ENOTDIR},
		{"/etc/passwd", "", fs.ErrNotExist},
		{"/dev/null", "", nil},
	}
	for _, tc := range tests {
		got, err := read(tc.name)
		if got != tc.want || !errors.Is(err, tc.err) && !(tc.err == nil && err == nil) {
			t.Errorf("read %s = %q, %v; want %q, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
	// Creating through a dangling symlink creates its target.
	write("/workspace/dangling", "made")
	if got, _ := read("/workspace/missing"); got != "made" {
		t.Errorf("write through dangling symlink: target holds %q", got)
	}
	// O_EXCL refuses an existing symlink even when it dangles.
	must(v.Symlink("nowhere", "/workspace/d2"))
	if _, err := v.OpenFile("/workspace/d2", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("O_EXCL on a dangling symlink: %v", err)
	}
	// Lstat sees the link, Stat its target.
	if fi, err := v.Lstat("/workspace/rel"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("lstat symlink: %v %v", fi, err)
	}
	if fi, err := v.Stat("/workspace/rel"); err != nil || !fi.IsDir() || fi.Name() != "rel" {
		t.Errorf("stat symlink to dir: %v %v", fi, err)
	}
	// Renames and links across mounts are EXDEV, as across filesystems.
	if err := v.Rename("/tmp/t", "/workspace/t"); !errors.Is(err, syscall.EXDEV) {
		t.Errorf("rename across mounts: %v", err)
	}
	if err := v.Link("/tmp/t", "/workspace/t"); !errors.Is(err, syscall.EXDEV) {
		t.Errorf("link across mounts: %v", err)
	}
	// The mount points themselves cannot go.
	for _, name := range []string{"/workspace", "/tmp", "/", "/dev/null"} {
		if err := v.Remove(name); err == nil {
			t.Errorf("remove %s succeeded", name)
		}
	}
	// Nothing can be made outside the mounts.
	for _, name := range []string{"/x", "/dev/x", "/etc/x"} {
		if _, err := v.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
			t.Errorf("create %s succeeded", name)
		}
		if err := v.Mkdir(name, 0o755); err == nil {
			t.Errorf("mkdir %s succeeded", name)
		}
	}
	// RemoveAll removes a tree without following its symlinks.
	must(v.Symlink("/workspace/a", "/tmp/link-to-a"))
	must(v.MkdirAll("/tmp/tree/sub", 0o755))
	must(v.Symlink("/workspace/a", "/tmp/tree/sub/link"))
	must(v.RemoveAll("/tmp/tree"))
	if _, err := v.Stat("/workspace/a/b/f"); err != nil {
		t.Errorf("RemoveAll followed a symlink: %v", err)
	}
}
