package git

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5"

	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// billyFS is a go-billy filesystem over the shell's view of the store,
// rooted at an absolute directory of that view. Every change goes through
// the view, so it is audited under the exec's actor, charged to the exec's
// write budget and subject to the store's policy. Every call fails with the
// context's error once it is done, which is how a long add, status or log
// stops promptly: go-git has no context of its own for most of them.
type billyFS struct {
	ctx  context.Context
	fsys builtin.FS
	root string
}

var (
	_ billy.Filesystem = (*billyFS)(nil)
	_ billy.Change     = (*billyFS)(nil)
)

// umask is applied to the modes go-git asks for (0777 directories, 0666
// files, as osfs leaves to the process's umask): the store has no umask,
// and git's own modes are 0755 and 0644.
const umask = 0o022

func newBillyFS(ctx context.Context, fsys builtin.FS, root string) *billyFS {
	return &billyFS{ctx: ctx, fsys: fsys, root: path.Clean(root)}
}

// abs maps a name of this filesystem to a name of the view. Names never
// leave the root: ".." is resolved lexically first, as billy's chroot does.
func (b *billyFS) abs(name string) (string, error) {
	if err := b.ctx.Err(); err != nil {
		return "", err
	}
	return path.Join(b.root, path.Clean("/"+name)), nil
}

func (b *billyFS) Create(name string) (billy.File, error) {
	return b.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (b *billyFS) Open(name string) (billy.File, error) {
	return b.OpenFile(name, os.O_RDONLY, 0)
}

func (b *billyFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	p, err := b.abs(name)
	if err != nil {
		return nil, err
	}
	if flag&os.O_CREATE != 0 {
		// osfs creates missing parents on create; go-git relies on it.
		if err := b.fsys.MkdirAll(path.Dir(p), 0o755); err != nil {
			return nil, err
		}
	}
	f, err := b.fsys.OpenFile(p, flag, perm&^umask)
	if err != nil {
		return nil, err
	}
	return &billyFile{File: f, fs: b, name: name, abs: p}, nil
}

func (b *billyFS) Stat(name string) (os.FileInfo, error) {
	p, err := b.abs(name)
	if err != nil {
		return nil, err
	}
	return b.fsys.Stat(p)
}

func (b *billyFS) Lstat(name string) (os.FileInfo, error) {
	p, err := b.abs(name)
	if err != nil {
		return nil, err
	}
	return b.fsys.Lstat(p)
}

func (b *billyFS) Rename(from, to string) error {
	pf, err := b.abs(from)
	if err != nil {
		return err
	}
	pt, err := b.abs(to)
	if err != nil {
		return err
	}
	if err := b.fsys.MkdirAll(path.Dir(pt), 0o755); err != nil {
		return err
	}
	return b.fsys.Rename(pf, pt)
}

func (b *billyFS) Remove(name string) error {
	p, err := b.abs(name)
	if err != nil {
		return err
	}
	return b.fsys.Remove(p)
}

func (b *billyFS) Join(elem ...string) string { return path.Join(elem...) }

func (b *billyFS) TempFile(dir, prefix string) (billy.File, error) {
	for range 100 {
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, err
		}
		name := path.Join(dir, prefix+hex.EncodeToString(r[:]))
		f, err := b.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, iofs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("tempfile in %s: %w", dir, iofs.ErrExist)
}

func (b *billyFS) ReadDir(name string) ([]os.FileInfo, error) {
	p, err := b.abs(name)
	if err != nil {
		return nil, err
	}
	ents, err := b.fsys.ReadDir(p)
	if err != nil {
		return nil, err
	}
	out := make([]os.FileInfo, 0, len(ents))
	for _, e := range ents {
		fi, err := e.Info()
		if errors.Is(err, iofs.ErrNotExist) {
			continue // removed since the listing
		}
		if err != nil {
			return nil, err
		}
		out = append(out, fi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (b *billyFS) MkdirAll(name string, perm os.FileMode) error {
	p, err := b.abs(name)
	if err != nil {
		return err
	}
	return b.fsys.MkdirAll(p, perm&^umask)
}

func (b *billyFS) Symlink(target, link string) error {
	p, err := b.abs(link)
	if err != nil {
		return err
	}
	if err := b.fsys.MkdirAll(path.Dir(p), 0o755); err != nil {
		return err
	}
	return b.fsys.Symlink(target, p)
}

func (b *billyFS) Readlink(link string) (string, error) {
	p, err := b.abs(link)
	if err != nil {
		return "", err
	}
	return b.fsys.Readlink(p)
}

func (b *billyFS) Chmod(name string, mode os.FileMode) error {
	p, err := b.abs(name)
	if err != nil {
		return err
	}
	return b.fsys.Chmod(p, mode)
}

// Lchown and Chown: the store keeps one owner per workspace, so git has
// nothing to change.
func (b *billyFS) Lchown(string, int, int) error { return nil }
func (b *billyFS) Chown(string, int, int) error  { return nil }

func (b *billyFS) Chtimes(name string, atime, mtime time.Time) error {
	p, err := b.abs(name)
	if err != nil {
		return err
	}
	return b.fsys.Chtimes(p, atime, mtime)
}

func (b *billyFS) Chroot(dir string) (billy.Filesystem, error) {
	p, err := b.abs(dir)
	if err != nil {
		return nil, err
	}
	return newBillyFS(b.ctx, b.fsys, p), nil
}

func (b *billyFS) Root() string { return b.root }

// billyFile is a file of the view with what billy adds: positioned reads
// and seeks (pack files), truncation and no-op locks (one process owns the
// store, and the shell runs one git at a time per repository call).
type billyFile struct {
	builtin.File
	fs   *billyFS
	name string // as billy names it
	abs  string // in the view
	// off is the position once the file has been seeked or read at;
	// until then reads go through the view's buffered Read.
	off    int64
	seeked bool
}

func (f *billyFile) Name() string { return f.name }

func (f *billyFile) readerAt() (io.ReaderAt, error) {
	ra, ok := f.File.(io.ReaderAt)
	if !ok {
		return nil, &iofs.PathError{Op: "seek", Path: f.abs, Err: syscall.ESPIPE}
	}
	return ra, nil
}

func (f *billyFile) Read(p []byte) (int, error) {
	if err := f.fs.ctx.Err(); err != nil {
		return 0, err
	}
	if !f.seeked {
		n, err := f.File.Read(p)
		f.off += int64(n)
		return n, err
	}
	ra, err := f.readerAt()
	if err != nil {
		return 0, err
	}
	n, err := ra.ReadAt(p, f.off)
	f.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *billyFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.ctx.Err(); err != nil {
		return 0, err
	}
	ra, err := f.readerAt()
	if err != nil {
		return 0, err
	}
	return ra.ReadAt(p, off)
}

func (f *billyFile) Write(p []byte) (int, error) {
	if err := f.fs.ctx.Err(); err != nil {
		return 0, err
	}
	if f.seeked {
		// Only sequential writes are supported; go-git writes files
		// front to back.
		return 0, &iofs.PathError{Op: "write", Path: f.abs, Err: syscall.ESPIPE}
	}
	n, err := f.File.Write(p)
	f.off += int64(n)
	return n, err
}

func (f *billyFile) Seek(offset int64, whence int) (int64, error) {
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.off
	case io.SeekEnd:
		fi, err := f.File.Stat()
		if err != nil {
			return 0, err
		}
		base = fi.Size()
	default:
		return 0, &iofs.PathError{Op: "seek", Path: f.abs, Err: syscall.EINVAL}
	}
	if whence == io.SeekCurrent && offset == 0 {
		return f.off, nil // a position query changes nothing
	}
	if _, err := f.readerAt(); err != nil {
		return 0, err
	}
	if base+offset < 0 {
		return 0, &iofs.PathError{Op: "seek", Path: f.abs, Err: syscall.EINVAL}
	}
	f.off = base + offset
	f.seeked = true
	return f.off, nil
}

func (f *billyFile) Truncate(size int64) error {
	return f.fs.fsys.Truncate(f.abs, size)
}

func (f *billyFile) Lock() error   { return nil }
func (f *billyFile) Unlock() error { return nil }

// isInside reports whether name (absolute) is root or below it.
func isInside(root, name string) bool {
	return name == root || root == "/" || strings.HasPrefix(name, root+"/")
}
