package shell

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
)

func TestMemFS(t *testing.T) {
	m := newMemFS(100)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, data string) error {
		f, err := m.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		_, err = io.WriteString(f, data)
		return err
	}
	nlink := func(name string) uint64 {
		fi, err := m.Lstat(name)
		if err != nil {
			t.Fatalf("lstat %s: %v", name, err)
		}
		return fi.Sys().(*syscall.Stat_t).Nlink
	}
	must(m.Mkdir("/d", 0o755))
	must(m.Mkdir("/d/sub", 0o755))
	must(write("/d/f", "0123456789"))
	must(m.Link("/d/f", "/g"))
	if nlink("/g") != 2 || nlink("/d") != 3 {
		t.Errorf("nlink: file %d (want 2), dir %d (want 3)", nlink("/g"), nlink("/d"))
	}
	tests := []struct {
		name string
		err  error
		fn   func() error
	}{
		{"rename onto non-empty dir", syscall.ENOTEMPTY, func() error { return m.Rename("/d/sub", "/d") }},
		{"rename dir into itself", syscall.EINVAL, func() error { return m.Rename("/d", "/d/sub/x") }},
		{"rename file onto dir", syscall.EISDIR, func() error { return m.Rename("/g", "/d/sub") }},
		{"rename dir onto file", syscall.ENOTDIR, func() error { return m.Rename("/d/sub", "/g") }},
		{"remove non-empty dir", syscall.ENOTEMPTY, func() error { return m.Remove("/d") }},
		{"link a dir", syscall.EPERM, func() error { return m.Link("/d", "/e") }},
		{"mkdir existing", syscall.EEXIST, func() error { return m.Mkdir("/d", 0o755) }},
		{"open missing", syscall.ENOENT, func() error { _, err := m.OpenFile("/nope", os.O_RDONLY, 0); return err }},
		{"open through file", syscall.ENOTDIR, func() error { _, err := m.OpenFile("/g/x", os.O_RDONLY, 0); return err }},
		{"exclusive create", syscall.EEXIST, func() error { _, err := m.OpenFile("/g", os.O_CREATE|os.O_EXCL, 0); return err }},
		{"write a dir", syscall.EISDIR, func() error { _, err := m.OpenFile("/d", os.O_WRONLY, 0); return err }},
		{"readlink a file", syscall.EINVAL, func() error { _, err := m.Readlink("/g"); return err }},
	}
	for _, tc := range tests {
		if err := tc.fn(); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	// Renaming over a file drops the replaced file's link.
	must(write("/h", "x"))
	must(m.Rename("/h", "/g"))
	if nlink("/d/f") != 1 {
		t.Errorf("nlink after rename over a link = %d, want 1", nlink("/d/f"))
	}
	// The size cap counts linked data only: 10 (d/f) + 1 (g) used.
	if err := write("/big", string(make([]byte, 95))); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("write past the cap: %v", err)
	}
	if fi, _ := m.Lstat("/big"); fi.Size() != 89 {
		t.Errorf("partial write kept %d bytes, want 89", fi.Size())
	}
	must(m.Remove("/big"))
	must(m.Truncate("/d/f", 0))
	if err := write("/big", string(make([]byte, 95))); err != nil {
		t.Errorf("space not returned by remove and truncate: %v", err)
	}
	if err := m.Truncate("/big", 1000); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("truncate past the cap: %v", err)
	}
	ents, err := m.ReadDir("/d")
	if err != nil || len(ents) != 2 || ents[0].Name() != "f" || ents[1].Name() != "sub" || !ents[1].IsDir() {
		t.Errorf("readdir: %v %v", ents, err)
	}
	if _, err := m.ReadDir("/g"); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("readdir of a file: %v", err)
	}
}
