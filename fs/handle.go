package fs

import (
	"context"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/sqlfs/sqlfs/metrics"
)

// File is an open file. It keeps its inode alive after the last name is
// removed, until Close. Safe for concurrent use; Read, Write and Seek share
// one offset as with os.File.
type File struct {
	fs    *FS
	n     *inode
	name  string
	at    string // the physical path it was opened at: for the policy and the audit trail
	flag  int
	mu    sync.Mutex // guards off
	off   int64
	wrote atomic.Bool // FUSE may write through one handle from several threads
	once  sync.Once
}

// OpenFile opens name with os.O_* flags, creating it with perm when asked.
func (f *FS) OpenFile(name string, flag int, perm uint32) (*File, error) {
	c := f.c
	f.flushKernel(name, true)
	create := flag&os.O_CREATE != 0
	writable := flag&(os.O_WRONLY|os.O_RDWR) != 0
	if create || writable || flag&os.O_TRUNC != 0 {
		var file *File
		op := "open"
		if create {
			op = "create"
		}
		err := f.mutate(op, name, "", func(m *mutation) error {
			var err error
			file, err = f.openLocked(name, flag, perm, m)
			return err
		})
		if err != nil {
			return nil, err
		}
		return file, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := f.lookup("open", name, true)
	if err != nil {
		return nil, pathError("open", name, err)
	}
	return f.newFile(n.inode, name, n.path, flag), nil
}

// openLocked is OpenFile for opens that may change the tree. Called with c.mu held.
func (f *FS) openLocked(name string, flag int, perm uint32, m *mutation) (*File, error) {
	c := f.c
	// O_EXCL refuses any existing name, a dangling symlink included;
	// otherwise a dangling symlink names where the new file goes.
	exclusive := flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL
	res, err := c.resolve(name, !exclusive, &m.path)
	if err != nil {
		return nil, err
	}
	n := res.Node.inode
	if res.Exists && !exclusive && flag&(os.O_WRONLY|os.O_RDWR|os.O_TRUNC) != 0 {
		if err := c.otherNamesRefusal(n, true); err != nil {
			return nil, err
		}
	}
	switch {
	case res.Exists && exclusive:
		return nil, syscall.EEXIST
	case !res.Exists && (flag&os.O_CREATE == 0 || len(res.Rest) > 0):
		return nil, syscall.ENOENT
	case !res.Exists:
		if err := checkName(res.Name); err != nil {
			return nil, err
		}
		if n, err = c.newInode(f.who, res.Dir.inode, res.Name, syscall.S_IFREG|perm&0o7777, 0, ""); err != nil {
			return nil, err
		}
		m.nameChanged(m.path)
	}
	if n.isDir() && flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		return nil, syscall.EISDIR
	}
	file := f.newFile(n, name, m.path, flag)
	if flag&os.O_TRUNC != 0 && n.isRegular() && n.size > 0 {
		if err := c.truncate(n, 0); err != nil {
			file.closeLocked()
			return nil, err
		}
		file.wrote.Store(true)
		m.inodeChanged(m.path)
	}
	return file, nil
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// newFile makes a handle on n, opened as name at physical path at.
// Called with c.mu held.
func (f *FS) newFile(n *inode, name, at string, flag int) *File {
	n.open++
	f.c.handles++
	metrics.FuseOpenHandles.Inc()
	return &File{fs: f, n: n, name: Clean(name), at: at, flag: flag}
}

// Name is the path the file was opened by.
func (fl *File) Name() string { return fl.name }

func (fl *File) readable() bool { return fl.flag&os.O_WRONLY == 0 }
func (fl *File) writable() bool { return fl.flag&(os.O_WRONLY|os.O_RDWR) != 0 }

// ReadAt reads at off; it returns io.EOF at or past the end, as io.ReaderAt asks.
func (fl *File) ReadAt(p []byte, off int64) (int, error) {
	if !fl.readable() {
		return 0, pathError("read", fl.name, syscall.EBADF)
	}
	if fl.n.isDir() {
		return 0, pathError("read", fl.name, syscall.EISDIR)
	}
	n, err := fl.fs.c.readAt(fl.n, p, off)
	if err != nil {
		return n, pathError("read", fl.name, err)
	}
	fl.fs.c.touchAtime(fl.n)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt writes at off (at the end of file instead with O_APPEND).
func (fl *File) WriteAt(p []byte, off int64) (int, error) {
	if !fl.writable() {
		return 0, pathError("write", fl.name, syscall.EBADF)
	}
	if fl.flag&os.O_APPEND != 0 {
		n, _, err := fl.appendData(p)
		return n, err
	}
	return fl.writeAt(p, off)
}

func (fl *File) writeAt(p []byte, off int64) (int, error) {
	if err := fl.fs.allowWrite(fl.at); err != nil {
		return 0, pathError("write", fl.name, err)
	}
	n, _, err := fl.fs.c.writeAt(fl.n, p, off, false)
	if n > 0 {
		fl.wrote.Store(true)
	}
	return n, pathError("write", fl.name, err)
}

// appendData writes at the current end of file, found by writeAt under the
// locks that make the write, so concurrent appends never overlap.
func (fl *File) appendData(p []byte) (int, int64, error) {
	if err := fl.fs.allowWrite(fl.at); err != nil {
		return 0, 0, pathError("write", fl.name, err)
	}
	n, off, err := fl.fs.c.writeAt(fl.n, p, 0, true)
	if n > 0 {
		fl.wrote.Store(true)
	}
	return n, off + int64(n), pathError("write", fl.name, err)
}

// allowWrite checks a data write to the physical path at against
// read-only and the policy.
func (f *FS) allowWrite(at string) error {
	if f.c.opts.ReadOnly {
		return syscall.EROFS
	}
	if r := f.c.rules.check(at, true); r != nil {
		err, _ := refused(r)
		return err
	}
	return nil
}

// Read reads from the file offset.
func (fl *File) Read(p []byte) (int, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	n, err := fl.ReadAt(p, fl.off)
	fl.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// Write writes at the file offset.
func (fl *File) Write(p []byte) (int, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if !fl.writable() {
		return 0, pathError("write", fl.name, syscall.EBADF)
	}
	if fl.flag&os.O_APPEND != 0 {
		n, end, err := fl.appendData(p)
		fl.off = end
		return n, err
	}
	n, err := fl.writeAt(p, fl.off)
	fl.off += int64(n)
	return n, err
}

// Seek sets the file offset.
func (fl *File) Seek(offset int64, whence int) (int64, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = fl.off
	case io.SeekEnd:
		fl.fs.c.mu.Lock()
		base = fl.n.size
		fl.fs.c.mu.Unlock()
	default:
		return 0, pathError("seek", fl.name, syscall.EINVAL)
	}
	if base+offset < 0 {
		return 0, pathError("seek", fl.name, syscall.EINVAL)
	}
	fl.off = base + offset
	return fl.off, nil
}

// Stat returns the open file's attributes, also after it was unlinked.
func (fl *File) Stat() (Attr, error) {
	c := fl.fs.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return fl.n.attr(), nil
}

// Truncate sets the open file's size.
func (fl *File) Truncate(size int64) error {
	if !fl.writable() {
		return pathError("truncate", fl.name, syscall.EINVAL)
	}
	fl.wrote.Store(true)
	return fl.fs.truncateFile(fl.held(), size)
}

// Sync makes the whole filesystem durable, which covers this file.
func (fl *File) Sync() error { return fl.fs.Sync(context.Background()) }

// Close releases the handle; an unlinked file goes with its last handle.
func (fl *File) Close() error {
	c := fl.fs.c
	var wrote bool
	var inv func([]Change)
	c.locked(func() { wrote, inv = fl.closeLocked(), c.invalidate })
	// Data written through the Go API reaches the kernel's cache at close,
	// the moment other readers may rely on it (close-to-open consistency).
	if wrote && inv != nil && !fl.fs.who.Kernel {
		inv([]Change{{Path: fl.at}})
	}
	return nil
}

// closeLocked releases the handle once and reports whether it wrote.
// Called with c.mu held.
func (fl *File) closeLocked() (wrote bool) {
	fl.once.Do(func() {
		c := fl.fs.c
		if fl.wrote.Load() {
			c.record(fl.fs.who, &mutation{op: "write", path: fl.at}, nil)
			wrote = true
		}
		fl.n.open--
		c.handles--
		metrics.FuseOpenHandles.Dec()
		c.maybeDestroy(fl.n)
	})
	return wrote
}

// touchAtime updates atime the way relatime does: only when it is older
// than mtime or ctime, or more than a day old, so reads rarely write.
func (c *core) touchAtime(n *inode) {
	if c.opts.ReadOnly {
		return
	}
	t := now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if n.atime <= n.mtime || n.atime <= n.ctime || t-n.atime > 24*3600*1e9 {
		n.atime = t
		if c.inodes[n.ino] == n {
			c.touchInode(n)
		}
	}
}

// ReadFile returns the whole contents of name.
func (f *FS) ReadFile(name string) ([]byte, error) {
	fl, err := f.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer fl.Close()
	a, _ := fl.Stat()
	if a.IsDir() {
		return nil, pathError("read", name, syscall.EISDIR)
	}
	buf := make([]byte, a.Size)
	n, err := fl.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return buf[:n], nil
}

// WriteFile writes data to name, creating or truncating it.
func (f *FS) WriteFile(name string, data []byte, perm uint32) error {
	fl, err := f.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = fl.WriteAt(data, 0)
	if cerr := fl.Close(); err == nil {
		err = cerr
	}
	return err
}
