package shell

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

const (
	tmpDir  = "/tmp"
	devNull = "/dev/null"
	devFull = "/dev/full"
	// fifoPrefix is the name the interpreter gives process-substitution
	// FIFOs (interp's fifoNamePrefix); only those are reachable in the FIFO directory.
	fifoPrefix = "sh-interp-"
)

// mounts is the shell's filesystem namespace, shared by every command of a
// backend: the workspace at /workspace, the scratch area at /tmp,
// /dev/null, /dev/full, and the host directory holding process-substitution FIFOs.
// Nothing else exists.
type mounts struct {
	workspace tree
	tmp       tree
	fifos     *fifoRoot
}

type place int

const (
	placeNone place = iota
	placeRoot       // "/": lists dev, tmp, workspace
	placeDev        // "/dev": lists full and null
	placeNull       // "/dev/null"
	placeFull       // "/dev/full"
	placeFIFO       // a process-substitution FIFO on the host
	placeTree       // inside a mounted tree
)

// locate maps a clean absolute shell path to where it lives.
func (m *mounts) locate(p string) (place, tree, string) {
	switch {
	case p == "/":
		return placeRoot, nil, ""
	case p == "/dev":
		return placeDev, nil, ""
	case p == devNull:
		return placeNull, nil, ""
	case p == devFull:
		return placeFull, nil, ""
	case isFIFO(m.fifos.current(), p):
		// Before /tmp: the private FIFO directory may sit in the host's
		// temporary directory, which is usually /tmp.
		return placeFIFO, nil, p
	case p == sidecar.WorkspaceDir:
		return placeTree, m.workspace, "/"
	case strings.HasPrefix(p, sidecar.WorkspaceDir+"/"):
		return placeTree, m.workspace, p[len(sidecar.WorkspaceDir):]
	case p == tmpDir:
		return placeTree, m.tmp, "/"
	case strings.HasPrefix(p, tmpDir+"/"):
		return placeTree, m.tmp, p[len(tmpDir):]
	}
	return placeNone, nil, ""
}

// view is the builtin.FS one command run sees: the shared mounts plus that
// run's write budget.
type view struct {
	m   *mounts
	run *run // nil: no budget (setup and tests)
	// dirs caches the directories resolve found to be real directories
	// during this run, so a walk over many files does not stat every
	// parent of each again. Removals and renames through the view clear
	// it; a directory replaced by a symlink through another frontend
	// while a command runs is resolved by the fs core's rules instead.
	dirs dirCache
}

type dirCache struct {
	mu sync.RWMutex
	m  map[string]fs.FileInfo
}

func (c *dirCache) get(p string) fs.FileInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[p]
}

func (c *dirCache) add(p string, fi fs.FileInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]fs.FileInfo{}
	}
	c.m[p] = fi
}

func (c *dirCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
}

var _ builtin.FS = (*view)(nil)

func synthDir(name string, ino uint64) *fileInfo {
	fi := &fileInfo{name: name}
	fi.st.Mode = syscall.S_IFDIR | 0o755
	fi.st.Nlink = 2
	fi.st.Ino = ino
	fi.st.Size = 4096
	return fi
}

func nullInfo() *fileInfo { return charDevInfo("null", 3) }

func fullInfo() *fileInfo { return charDevInfo("full", 7) }

// charDevInfo is a memory device of Linux's major 1.
func charDevInfo(name string, minor uint64) *fileInfo {
	fi := &fileInfo{name: name}
	fi.st.Mode = syscall.S_IFCHR | 0o666
	fi.st.Nlink = 1
	fi.st.Rdev = 1<<8 | minor
	return fi
}

// lstatRaw stats p without following a symlink at p; p's parents must be
// symlink-free.
func (v *view) lstatRaw(p string) (fs.FileInfo, error) {
	pl, t, inner := v.m.locate(p)
	switch pl {
	case placeRoot:
		return synthDir("/", 1), nil
	case placeDev:
		return synthDir("dev", 2), nil
	case placeNull:
		return nullInfo(), nil
	case placeFull:
		return fullInfo(), nil
	case placeFIFO:
		return os.Lstat(inner)
	case placeTree:
		fi, err := t.Lstat(inner)
		return fi, renameErr(err, p)
	}
	return nil, pathErr("lstat", p, syscall.ENOENT)
}

// resolve returns the physical path name leads to, by the fs core's rules
// (sfs.Resolve): symlinks in its directories are followed, the last
// component too when followLast, and ".." climbs from where the links led.
// Symlinks resolve in the shell's namespace, so a link to /workspace/x or
// /tmp/y works from either mount. The last component need not exist.
func (v *view) resolve(op, name string, followLast bool) (string, error) {
	p := path.Clean("/" + name)
	if pl, _, _ := v.m.locate(p); pl == placeFIFO {
		return p, nil
	}
	tree := sfs.PathTree{Lstat: v.lstatCached, Readlink: v.readlinkRaw}
	resolved, err := tree.Resolve(name, followLast)
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return "", pathErr(op, name, errno)
		}
		return "", renameErr(err, name, op)
	}
	return resolved, nil
}

// lstatCached is lstatRaw remembering directories for the rest of the run.
func (v *view) lstatCached(p string) (fs.FileInfo, error) {
	if fi := v.dirs.get(p); fi != nil {
		return fi, nil
	}
	fi, err := v.lstatRaw(p)
	if err == nil && fi.IsDir() {
		v.dirs.add(p, fi)
	}
	return fi, err
}

func (v *view) readlinkRaw(p string) (string, error) {
	pl, t, inner := v.m.locate(p)
	if pl != placeTree {
		return "", pathErr("readlink", p, syscall.EINVAL)
	}
	s, err := t.Readlink(inner)
	return s, renameErr(err, p)
}

// renameErr reports a tree's error under the name the command used, so
// messages read "rm: /workspace/a: …" and not the tree-internal name. An
// optional op replaces the operation.
func renameErr(err error, name string, op ...string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		e := &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
		if len(op) > 0 {
			e.Op = op[0]
		}
		return e
	}
	return err
}

// target resolves name and locates it, refusing places that are not a
// mounted tree with errno.
func (v *view) target(op, name string, followLast bool, refuse syscall.Errno) (tree, string, error) {
	p, err := v.resolve(op, name, followLast)
	if err != nil {
		return nil, "", err
	}
	pl, t, inner := v.m.locate(p)
	if pl != placeTree {
		if pl == placeNone {
			refuse = syscall.ENOENT
		}
		return nil, "", pathErr(op, name, refuse)
	}
	return t, inner, nil
}

func (v *view) Stat(name string) (fs.FileInfo, error) {
	p, err := v.resolve("stat", name, true)
	if err != nil {
		return nil, err
	}
	fi, err := v.lstatRaw(p)
	if err != nil {
		return nil, renameErr(err, name, "stat")
	}
	return withName(fi, name), nil
}

func (v *view) Lstat(name string) (fs.FileInfo, error) {
	p, err := v.resolve("lstat", name, false)
	if err != nil {
		return nil, err
	}
	fi, err := v.lstatRaw(p)
	if err != nil {
		return nil, renameErr(err, name)
	}
	return withName(fi, name), nil
}

// withName gives fi the base name of the path the caller asked for, as
// os.Stat does for a symlink.
func withName(fi fs.FileInfo, name string) fs.FileInfo {
	if f, ok := fi.(*fileInfo); ok && f.name != path.Base(name) {
		c := *f
		c.name = path.Base(name)
		return &c
	}
	return fi
}

func (v *view) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := v.resolve("readdir", name, true)
	if err != nil {
		return nil, err
	}
	pl, t, inner := v.m.locate(p)
	switch pl {
	case placeRoot:
		return []fs.DirEntry{synthDir("dev", 2), synthDir("tmp", 3), synthDir("workspace", 4)}, nil
	case placeDev:
		return []fs.DirEntry{fullInfo(), nullInfo()}, nil
	case placeTree:
		ents, err := t.ReadDir(inner)
		return ents, renameErr(err, name)
	case placeNull, placeFull, placeFIFO:
		return nil, pathErr("readdir", name, syscall.ENOTDIR)
	}
	return nil, pathErr("readdir", name, syscall.ENOENT)
}

func (v *view) Open(name string) (builtin.File, error) {
	return v.OpenFile(name, os.O_RDONLY, 0)
}

func (v *view) OpenFile(name string, flag int, perm fs.FileMode) (builtin.File, error) {
	// O_EXCL refuses an existing symlink, even a dangling one.
	follow := flag&(os.O_CREATE|os.O_EXCL) != os.O_CREATE|os.O_EXCL
	p, err := v.resolve("open", name, follow)
	if err != nil {
		return nil, err
	}
	return v.openResolved(name, p, flag, perm)
}

// OpenFileUnlessLink is OpenFile of name when its last component is not a
// symlink, each name looked up once; when it is one (or the lookup cannot
// tell), it opens nothing and reports isLink, for a caller that checks
// such a link first (the js backend's final-symlink check) and then
// calls OpenFile. The caller's check would otherwise be a lookup of its
// own before OpenFile's.
func (v *view) OpenFileUnlessLink(name string, flag int, perm fs.FileMode) (f builtin.File, isLink bool, err error) {
	if pl, _, _ := v.m.locate(path.Clean("/" + name)); pl == placeFIFO || strings.HasSuffix(name, "/") {
		return nil, true, nil
	}
	var last string
	var lastInfo fs.FileInfo
	tree := sfs.PathTree{Lstat: func(p string) (fs.FileInfo, error) {
		fi, err := v.lstatCached(p)
		last, lastInfo = p, fi
		return fi, err
	}, Readlink: v.readlinkRaw}
	p, err := tree.Resolve(name, false)
	if err != nil || p != last || (lastInfo != nil && lastInfo.Mode()&fs.ModeSymlink != 0) {
		return nil, true, nil
	}
	f, err = v.openResolved(name, p, flag, perm)
	return f, false, err
}

// openResolved opens p, where name led.
func (v *view) openResolved(name, p string, flag int, perm fs.FileMode) (builtin.File, error) {
	pl, t, inner := v.m.locate(p)
	switch pl {
	case placeNull:
		return nullFile{}, nil
	case placeFull:
		return fullFile{}, nil
	case placeFIFO:
		f, err := os.OpenFile(inner, flag&^(os.O_CREATE|os.O_TRUNC|os.O_EXCL), 0)
		if err != nil {
			return nil, renameErr(err, name)
		}
		return f, nil
	case placeTree:
		f, err := t.OpenFile(inner, flag, perm)
		if err != nil {
			return nil, renameErr(err, name)
		}
		if flag&(os.O_WRONLY|os.O_RDWR) != 0 && v.run != nil {
			return &budgetFile{File: f, run: v.run, name: name}, nil
		}
		return f, nil
	case placeRoot, placeDev:
		if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
			return nil, pathErr("open", name, syscall.EISDIR)
		}
		return nil, pathErr("open", name, syscall.EACCES)
	}
	if flag&os.O_CREATE != 0 {
		return nil, pathErr("open", name, syscall.EACCES)
	}
	return nil, pathErr("open", name, syscall.ENOENT)
}

func (v *view) Mkdir(name string, perm fs.FileMode) error {
	p, err := v.resolve("mkdir", name, false)
	if err != nil {
		return err
	}
	pl, t, inner := v.m.locate(p)
	if pl != placeTree {
		if pl != placeNone {
			return pathErr("mkdir", name, syscall.EEXIST)
		}
		return pathErr("mkdir", name, syscall.EACCES)
	}
	return renameErr(t.Mkdir(inner, perm), name)
}

func (v *view) MkdirAll(name string, perm fs.FileMode) error {
	fi, err := v.Stat(name)
	if err == nil {
		if fi.IsDir() {
			return nil
		}
		return pathErr("mkdir", name, syscall.ENOTDIR)
	}
	if parent := path.Dir(name); parent != name {
		if err := v.MkdirAll(parent, perm); err != nil {
			return err
		}
	}
	err = v.Mkdir(name, perm)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := v.Stat(name); serr == nil && fi.IsDir() {
			return nil
		}
	}
	return err
}

func (v *view) Remove(name string) error {
	defer v.dirs.clear()
	t, inner, err := v.target("remove", name, false, syscall.EACCES)
	if err != nil {
		return err
	}
	if inner == "/" {
		return pathErr("remove", name, syscall.EBUSY)
	}
	return renameErr(t.Remove(inner), name)
}

func (v *view) RemoveAll(name string) error {
	fi, err := v.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		ents, err := v.ReadDir(name)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := v.RemoveAll(path.Join(name, e.Name())); err != nil {
				return err
			}
		}
	}
	return v.Remove(name)
}

func (v *view) Rename(oldname, newname string) error {
	defer v.dirs.clear()
	ot, oinner, err := v.target("rename", oldname, false, syscall.EACCES)
	if err != nil {
		return err
	}
	nt, ninner, err := v.target("rename", newname, false, syscall.EACCES)
	if err != nil {
		return err
	}
	if ot != nt {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.EXDEV}
	}
	if oinner == "/" || ninner == "/" {
		return pathErr("rename", oldname, syscall.EBUSY)
	}
	return renameErr(ot.Rename(oinner, ninner), oldname)
}

func (v *view) Symlink(target, name string) error {
	t, inner, err := v.target("symlink", name, false, syscall.EEXIST)
	if err != nil {
		// Outside every place a link cannot be made; a missing parent
		// inside one is ENOENT, as symlink(2).
		if pl, _, _ := v.m.locate(path.Clean(name)); errors.Is(err, fs.ErrNotExist) && pl == placeNone {
			return pathErr("symlink", name, syscall.EACCES)
		}
		return err
	}
	return renameErr(t.Symlink(target, inner), name)
}

func (v *view) Readlink(name string) (string, error) {
	p, err := v.resolve("readlink", name, false)
	if err != nil {
		return "", err
	}
	s, err := v.readlinkRaw(p)
	return s, renameErr(err, name)
}

func (v *view) Link(oldname, newname string) error {
	ot, oinner, err := v.target("link", oldname, false, syscall.EPERM)
	if err != nil {
		return err
	}
	nt, ninner, err := v.target("link", newname, false, syscall.EEXIST)
	if err != nil {
		return err
	}
	if ot != nt {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EXDEV}
	}
	return renameErr(ot.Link(oinner, ninner), newname)
}

func (v *view) Chmod(name string, mode fs.FileMode) error {
	t, inner, err := v.target("chmod", name, true, syscall.EPERM)
	if err != nil {
		return err
	}
	return renameErr(t.Chmod(inner, mode), name)
}

func (v *view) Chtimes(name string, atime, mtime time.Time) error {
	t, inner, err := v.target("chtimes", name, true, syscall.EPERM)
	if err != nil {
		return err
	}
	return renameErr(t.Chtimes(inner, atime, mtime), name)
}

func (v *view) Truncate(name string, size int64) error {
	t, inner, err := v.target("truncate", name, true, syscall.EINVAL)
	if err != nil {
		return err
	}
	return renameErr(t.Truncate(inner, size), name)
}

// nullFile is /dev/null.
type nullFile struct{}

func (nullFile) Read([]byte) (int, error)    { return 0, io.EOF }
func (nullFile) Write(p []byte) (int, error) { return len(p), nil }
func (nullFile) Close() error                { return nil }
func (nullFile) Stat() (fs.FileInfo, error)  { return nullInfo(), nil }

// fullFile is /dev/full: every write fails with ENOSPC, reads give zeros.
type fullFile struct{}

func (fullFile) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
func (fullFile) Write([]byte) (int, error)  { return 0, pathErr("write", devFull, syscall.ENOSPC) }
func (fullFile) Close() error               { return nil }
func (fullFile) Stat() (fs.FileInfo, error) { return fullInfo(), nil }

// budgetFile charges writes to the run's MaxWriteBytes budget.
type budgetFile struct {
	builtin.File
	run  *run
	name string
}

func (f *budgetFile) Write(p []byte) (int, error) {
	if err := f.run.chargeWrite(int64(len(p))); err != nil {
		return 0, pathErr("write", f.name, syscall.EFBIG)
	}
	return f.File.Write(p)
}

// ReadAt, WriteAt, Seek and Truncate reach the file below when it has them
// (the JavaScript backend's file handles read and write at offsets).
func (f *budgetFile) ReadAt(p []byte, off int64) (int, error) {
	if ra, ok := f.File.(io.ReaderAt); ok {
		return ra.ReadAt(p, off)
	}
	return 0, pathErr("read", f.name, syscall.EINVAL)
}

func (f *budgetFile) WriteAt(p []byte, off int64) (int, error) {
	wa, ok := f.File.(io.WriterAt)
	if !ok {
		return 0, pathErr("write", f.name, syscall.EINVAL)
	}
	if err := f.run.chargeWrite(int64(len(p))); err != nil {
		return 0, pathErr("write", f.name, syscall.EFBIG)
	}
	return wa.WriteAt(p, off)
}

func (f *budgetFile) Seek(off int64, whence int) (int64, error) {
	if s, ok := f.File.(io.Seeker); ok {
		return s.Seek(off, whence)
	}
	return 0, pathErr("seek", f.name, syscall.ESPIPE)
}

func (f *budgetFile) Truncate(size int64) error {
	if t, ok := f.File.(interface{ Truncate(int64) error }); ok {
		return t.Truncate(size)
	}
	return pathErr("truncate", f.name, syscall.EINVAL)
}
