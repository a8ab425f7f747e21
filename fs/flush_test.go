package fs_test

import (
	"os"
	"slices"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// The flusher is asked for a regular file's inode before a caller other
// than the kernel opens, stats or truncates it; never for the kernel's own
// requests, nor for what has no pages (directories, symlinks, missing names).
func TestFlusherRunsBeforeOutsideAccess(t *testing.T) {
	fsys, _ := open(t, sfs.Options{})
	must(t, fsys.WriteFile("/f", []byte("data"), 0o644))
	must(t, fsys.Mkdir("/d", 0o755))
	must(t, fsys.Symlink("f", "/link"))
	file, err := fsys.Stat("/f")
	must(t, err)
	var asked []uint64
	fsys.SetFlusher(func(ino uint64) { asked = append(asked, ino) })
	kernel := fsys.As(sfs.Caller{Kernel: true})
	cases := []struct {
		name string
		do   func() error
		want []uint64
	}{
		{"read", func() error { _, err := fsys.ReadFile("/f"); return err }, []uint64{file.Ino}},
		{"open for writing", func() error {
			f, err := fsys.OpenFile("/f", os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				err = f.Close()
			}
			return err
		}, []uint64{file.Ino}},
		{"stat", func() error { _, err := fsys.Stat("/f"); return err }, []uint64{file.Ino}},
		{"stat through a symlink", func() error { _, err := fsys.Stat("/link"); return err }, []uint64{file.Ino}},
		{"lstat of the symlink", func() error { _, err := fsys.Lstat("/link"); return err }, nil},
		{"truncate", func() error { return fsys.Truncate("/f", 2) }, []uint64{file.Ino}},
		{"directory", func() error { _, err := fsys.Stat("/d"); return err }, nil},
		{"missing", func() error { _, err := fsys.Stat("/nope"); return err }, nil},
		{"the kernel reads", func() error { _, err := kernel.ReadFile("/f"); return err }, nil},
		{"the kernel truncates", func() error { return kernel.Truncate("/f", 1) }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			asked = nil
			if err := c.do(); err != nil && c.name != "missing" {
				t.Fatal(err)
			}
			if !slices.Equal(asked, c.want) {
				t.Fatalf("flusher asked for %v, want %v", asked, c.want)
			}
		})
	}
	asked = nil
	fsys.SetFlusher(nil)
	if _, err := fsys.ReadFile("/f"); err != nil || asked != nil {
		t.Fatalf("after SetFlusher(nil): %v, flusher asked for %v", err, asked)
	}
}
