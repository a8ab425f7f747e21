package shell

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// tree is one mounted filesystem of the shell's view (/workspace, /tmp).
// Names are absolute and clean within the tree. The mount table resolves
// symlinks before calling, so a tree never follows one: OpenFile, Chmod,
// Chtimes and Truncate are only called on names whose components are all
// real directories and files.
type tree interface {
	Lstat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	OpenFile(name string, flag int, perm fs.FileMode) (builtin.File, error)
	Mkdir(name string, perm fs.FileMode) error
	Remove(name string) error
	Rename(oldname, newname string) error
	Symlink(target, name string) error
	Readlink(name string) (string, error)
	Link(oldname, newname string) error
	Chmod(name string, mode fs.FileMode) error
	Chtimes(name string, atime, mtime time.Time) error
	Truncate(name string, size int64) error
}

// memFS is an in-memory tree: the per-backend /tmp scratch area. It never
// touches the host. File data is capped at maxBytes in total (ENOSPC), as
// a tmpfs is, so /tmp cannot eat the process's memory across commands.
type memFS struct {
	mu       sync.RWMutex
	root     *memNode
	nextIno  uint64
	uid      uint32
	gid      uint32
	used     int64 // bytes of data held by linked files
	maxBytes int64
}

type memNode struct {
	ino      uint64
	mode     uint32 // st_mode
	nlink    uint32
	data     []byte
	target   string
	children map[string]*memNode
	atime    time.Time
	mtime    time.Time
	ctime    time.Time
}

func newMemFS(maxBytes int64) *memFS {
	m := &memFS{uid: uint32(os.Getuid()), gid: uint32(os.Getgid()), maxBytes: maxBytes}
	m.root = m.newNode(syscall.S_IFDIR | 0o1777)
	return m
}

// newNode must be called with mu held for writing (or before m is shared).
func (m *memFS) newNode(mode uint32) *memNode {
	m.nextIno++
	now := time.Now()
	n := &memNode{ino: m.nextIno, mode: mode, nlink: 1, atime: now, mtime: now, ctime: now}
	if mode&syscall.S_IFMT == syscall.S_IFDIR {
		n.children = map[string]*memNode{}
		n.nlink = 2
	}
	return n
}

func (n *memNode) isDir() bool { return n.mode&syscall.S_IFMT == syscall.S_IFDIR }

func (m *memFS) info(name string, n *memNode) *fileInfo {
	fi := &fileInfo{name: path.Base(name)}
	fi.st.Ino = n.ino
	fi.st.Mode = n.mode
	fi.st.Nlink = uint64(n.nlink)
	fi.st.Uid = m.uid
	fi.st.Gid = m.gid
	fi.st.Blksize = 4096
	switch {
	case n.isDir():
		fi.st.Size = 4096
	case n.mode&syscall.S_IFMT == syscall.S_IFLNK:
		fi.st.Size = int64(len(n.target))
	default:
		fi.st.Size = int64(len(n.data))
	}
	fi.st.Blocks = (fi.st.Size + 511) / 512
	fi.st.Atim = timespec(n.atime)
	fi.st.Mtim = timespec(n.mtime)
	fi.st.Ctim = timespec(n.ctime)
	return fi
}

// lookup finds name; with mu held.
func (m *memFS) lookup(op, name string) (*memNode, error) {
	n := m.root
	for _, c := range splitPath(name) {
		if !n.isDir() {
			return nil, pathErr(op, name, syscall.ENOTDIR)
		}
		child, ok := n.children[c]
		if !ok {
			return nil, pathErr(op, name, syscall.ENOENT)
		}
		n = child
	}
	return n, nil
}

// parent finds the directory holding name and name's last component.
func (m *memFS) parent(op, name string) (*memNode, string, error) {
	if name == "/" {
		return nil, "", pathErr(op, name, syscall.EBUSY)
	}
	dir, err := m.lookup(op, path.Dir(name))
	if err != nil {
		return nil, "", err
	}
	if !dir.isDir() {
		return nil, "", pathErr(op, name, syscall.ENOTDIR)
	}
	return dir, path.Base(name), nil
}

// splitPath splits a clean absolute path into its components.
func splitPath(name string) []string {
	name = strings.Trim(name, "/")
	if name == "" {
		return nil
	}
	return strings.Split(name, "/")
}

func (m *memFS) Lstat(name string) (fs.FileInfo, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, err := m.lookup("lstat", name)
	if err != nil {
		return nil, err
	}
	return m.info(name, n), nil
}

func (m *memFS) ReadDir(name string) ([]fs.DirEntry, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, err := m.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.isDir() {
		return nil, pathErr("readdir", name, syscall.ENOTDIR)
	}
	out := make([]fs.DirEntry, 0, len(n.children))
	for c, child := range n.children {
		out = append(out, m.info(path.Join(name, c), child))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (m *memFS) OpenFile(name string, flag int, perm fs.FileMode) (builtin.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parent("open", name)
	if err != nil {
		return nil, err
	}
	n, ok := dir.children[base]
	switch {
	case ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, pathErr("open", name, syscall.EEXIST)
	case !ok && flag&os.O_CREATE == 0:
		return nil, pathErr("open", name, syscall.ENOENT)
	case !ok:
		n = m.newNode(syscall.S_IFREG | sfs.UnixPerm(perm))
		dir.children[base] = n
		dir.mtime, dir.ctime = n.mtime, n.mtime
	}
	if n.isDir() && flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		return nil, pathErr("open", name, syscall.EISDIR)
	}
	if flag&os.O_TRUNC != 0 && flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		_ = m.resize(n, 0)
	}
	return &memFile{m: m, n: n, name: name, flag: flag}, nil
}

func (m *memFS) Mkdir(name string, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parent("mkdir", name)
	if err != nil {
		return err
	}
	if _, ok := dir.children[base]; ok {
		return pathErr("mkdir", name, syscall.EEXIST)
	}
	dir.children[base] = m.newNode(syscall.S_IFDIR | sfs.UnixPerm(perm))
	dir.nlink++
	dir.mtime, dir.ctime = time.Now(), time.Now()
	return nil
}

func (m *memFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parent("remove", name)
	if err != nil {
		return err
	}
	n, ok := dir.children[base]
	if !ok {
		return pathErr("remove", name, syscall.ENOENT)
	}
	if n.isDir() {
		if len(n.children) > 0 {
			return pathErr("remove", name, syscall.ENOTEMPTY)
		}
		dir.nlink--
	}
	m.unlinked(n)
	n.ctime = time.Now()
	delete(dir.children, base)
	dir.mtime, dir.ctime = time.Now(), time.Now()
	return nil
}

func (m *memFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	odir, obase, err := m.parent("rename", oldname)
	if err != nil {
		return err
	}
	n, ok := odir.children[obase]
	if !ok {
		return pathErr("rename", oldname, syscall.ENOENT)
	}
	ndir, nbase, err := m.parent("rename", newname)
	if err != nil {
		return err
	}
	if oldname == newname {
		return nil
	}
	if n.isDir() && strings.HasPrefix(newname, oldname+"/") {
		return pathErr("rename", newname, syscall.EINVAL)
	}
	if old, ok := ndir.children[nbase]; ok {
		switch {
		case old == n:
			return nil
		case n.isDir() && !old.isDir():
			return pathErr("rename", newname, syscall.ENOTDIR)
		case !n.isDir() && old.isDir():
			return pathErr("rename", newname, syscall.EISDIR)
		case old.isDir() && len(old.children) > 0:
			return pathErr("rename", newname, syscall.ENOTEMPTY)
		}
		if old.isDir() {
			ndir.nlink--
		}
		m.unlinked(old)
	}
	delete(odir.children, obase)
	ndir.children[nbase] = n
	if n.isDir() && odir != ndir {
		odir.nlink--
		ndir.nlink++
	}
	now := time.Now()
	n.ctime, odir.mtime, odir.ctime, ndir.mtime, ndir.ctime = now, now, now, now, now
	return nil
}

func (m *memFS) Symlink(target, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parent("symlink", name)
	if err != nil {
		return err
	}
	if _, ok := dir.children[base]; ok {
		return pathErr("symlink", name, syscall.EEXIST)
	}
	n := m.newNode(syscall.S_IFLNK | 0o777)
	n.target = target
	dir.children[base] = n
	return nil
}

func (m *memFS) Readlink(name string) (string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, err := m.lookup("readlink", name)
	if err != nil {
		return "", err
	}
	if n.mode&syscall.S_IFMT != syscall.S_IFLNK {
		return "", pathErr("readlink", name, syscall.EINVAL)
	}
	return n.target, nil
}

func (m *memFS) Link(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("link", oldname)
	if err != nil {
		return err
	}
	if n.isDir() {
		return pathErr("link", oldname, syscall.EPERM)
	}
	dir, base, err := m.parent("link", newname)
	if err != nil {
		return err
	}
	if _, ok := dir.children[base]; ok {
		return pathErr("link", newname, syscall.EEXIST)
	}
	dir.children[base] = n
	n.nlink++
	n.ctime = time.Now()
	return nil
}

func (m *memFS) Chmod(name string, mode fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("chmod", name)
	if err != nil {
		return err
	}
	n.mode = n.mode&syscall.S_IFMT | sfs.UnixPerm(mode)
	n.ctime = time.Now()
	return nil
}

func (m *memFS) Chtimes(name string, atime, mtime time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("chtimes", name)
	if err != nil {
		return err
	}
	if !atime.IsZero() {
		n.atime = atime
	}
	if !mtime.IsZero() {
		n.mtime = mtime
	}
	n.ctime = time.Now()
	return nil
}

func (m *memFS) Truncate(name string, size int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("truncate", name)
	if err != nil {
		return err
	}
	if n.isDir() {
		return pathErr("truncate", name, syscall.EISDIR)
	}
	if err := m.resize(n, size); err != nil {
		return pathErr("truncate", name, syscall.ENOSPC)
	}
	return nil
}

var errNoSpace = errors.New("no space")

// resize sets n's data length, charging the difference; with mu held.
func (m *memFS) resize(n *memNode, size int64) error {
	delta := size - int64(len(n.data))
	if n.nlink > 0 {
		if delta > 0 && m.used+delta > m.maxBytes {
			return errNoSpace
		}
		m.used += delta
	}
	if size <= int64(len(n.data)) {
		n.data = n.data[:size]
	} else {
		n.data = append(n.data, make([]byte, delta)...)
	}
	n.mtime, n.ctime = time.Now(), time.Now()
	return nil
}

// unlinked drops one name of n; its data stops counting with the last
// (an open handle may still read and write it). With mu held.
func (m *memFS) unlinked(n *memNode) {
	n.nlink--
	if n.nlink == 0 && !n.isDir() {
		m.used -= int64(len(n.data))
	}
}

// memFile is an open memFS file with its own offset.
type memFile struct {
	m    *memFS
	n    *memNode
	name string
	flag int
	off  int64
}

func (f *memFile) Read(p []byte) (int, error) {
	if f.flag&os.O_WRONLY != 0 {
		return 0, pathErr("read", f.name, syscall.EBADF)
	}
	if f.n.isDir() {
		return 0, pathErr("read", f.name, syscall.EISDIR)
	}
	f.m.mu.RLock()
	defer f.m.mu.RUnlock()
	if f.off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[f.off:])
	f.off += int64(n)
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	if f.flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		return 0, pathErr("write", f.name, syscall.EBADF)
	}
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if f.flag&os.O_APPEND != 0 {
		f.off = int64(len(f.n.data))
	}
	var err error
	if end := f.off + int64(len(p)); end > int64(len(f.n.data)) {
		if f.m.resize(f.n, end) != nil {
			// Write what fits, as a full disk does.
			room := max(0, f.m.maxBytes-f.m.used)
			p = p[:max(0, min(int64(len(p)), int64(len(f.n.data))+room-f.off))]
			_ = f.m.resize(f.n, max(int64(len(f.n.data)), f.off+int64(len(p))))
			err = pathErr("write", f.name, syscall.ENOSPC)
		}
	}
	copy(f.n.data[f.off:], p)
	f.off += int64(len(p))
	f.n.mtime, f.n.ctime = time.Now(), time.Now()
	return len(p), err
}

func (f *memFile) Close() error { return nil }

func (f *memFile) Stat() (fs.FileInfo, error) {
	f.m.mu.RLock()
	defer f.m.mu.RUnlock()
	return f.m.info(f.name, f.n), nil
}
