package archive

import (
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// HostFS extracts into a host directory through an os.Root, so even a name
// raced into a symlink cannot lead outside it.
func HostFS(root *os.Root) FS { return hostFS{root} }

type hostFS struct{ r *os.Root }

// rel maps an FS name ("/a/b") to a name below the root ("a/b").
func rel(name string) string {
	if name == "/" {
		return "."
	}
	return strings.TrimPrefix(name, "/")
}

func (h hostFS) Lstat(n string) (fs.FileInfo, error)    { return h.r.Lstat(rel(n)) }
func (h hostFS) Readlink(n string) (string, error)      { return h.r.Readlink(rel(n)) }
func (h hostFS) Mkdir(n string, p fs.FileMode) error    { return h.r.Mkdir(rel(n), p) }
func (h hostFS) Rename(o, n string) error               { return h.r.Rename(rel(o), rel(n)) }
func (h hostFS) Remove(n string) error                  { return h.r.Remove(rel(n)) }
func (h hostFS) Symlink(t, n string) error              { return h.r.Symlink(t, rel(n)) }
func (h hostFS) Link(o, n string) error                 { return h.r.Link(rel(o), rel(n)) }
func (h hostFS) Chmod(n string, m fs.FileMode) error    { return h.r.Chmod(rel(n), m) }
func (h hostFS) Chown(n string, uid, gid int) error     { return h.r.Lchown(rel(n), uid, gid) }
func (h hostFS) Chtimes(n string, a, m time.Time) error { return h.r.Chtimes(rel(n), a, m) }

func (h hostFS) Create(n string, p fs.FileMode) (io.WriteCloser, error) {
	return h.r.OpenFile(rel(n), os.O_WRONLY|os.O_CREATE|os.O_EXCL, p)
}

// Mknod works on a descriptor of the parent directory, opened through the
// root, since os.Root has no mknod.
func (h hostFS) Mknod(n string, mode uint32, dev uint64) error {
	dir, err := h.r.OpenFile(rel(path.Dir(n)), os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := unix.Mknodat(int(dir.Fd()), path.Base(n), mode, int(dev)); err != nil {
		return &fs.PathError{Op: "mknod", Path: n, Err: err}
	}
	return nil
}
