//go:build cgofuse || !linux

// The portable frontend: cgofuse over libfuse's high-level (path) API, the
// default off Linux (macOS through macFUSE or FUSE-T, Windows through
// WinFsp); on Linux only with -tags cgofuse, so it keeps passing the same
// tests. It translates paths,
// handles and errnos, and keeps no state of its own beyond the open handle
// table.

package fuse

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	cgofuse "github.com/winfsp/cgofuse/fuse"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/metrics"
)

// noHandle is what cgofuse passes as fh when a call is not on an open file.
const noHandle = ^uint64(0)

// adapter implements cgofuse.FileSystemInterface over an fs.FS.
type adapter struct {
	cgofuse.FileSystemBase
	fsys  *sfs.FS
	ready chan struct{}
	once  sync.Once

	mu      sync.Mutex
	handles map[uint64]*handle
	nextFh  uint64

	actors  *actors
	ops     opMetrics
	noXattr bool // xattr calls fail ENOSYS (Options.NoXattr)
}

// handle is an open file or directory.
type handle struct {
	file *sfs.File // nil for directories
	// A directory's listing, taken when reading starts at offset 0, so the
	// kernel's follow-up calls page through one consistent snapshot.
	mu    sync.Mutex
	ents  []sfs.DirEntry
	attrs []sfs.Attr
	self  sfs.Attr
}

// opMetrics are the per-op series, resolved once.
type opMetrics struct {
	getattr, lookup, create, mkdir, mknod, unlink, rmdir, rename, link, symlink, readlink,
	open, read, write, flush, release, fsync, opendir, readdir, releasedir, fsyncdir,
	chmod, chown, truncate, utimens, fallocate, statfs, setxattr, getxattr, listxattr, removexattr, access *metrics.FuseOp
}

func newOpMetrics() opMetrics {
	m := metrics.Fuse
	return opMetrics{
		getattr: m("getattr"), lookup: m("lookup"), create: m("create"), mkdir: m("mkdir"), mknod: m("mknod"),
		unlink: m("unlink"), rmdir: m("rmdir"), rename: m("rename"), link: m("link"), symlink: m("symlink"),
		readlink: m("readlink"), open: m("open"), read: m("read"), write: m("write"), flush: m("flush"),
		release: m("release"), fsync: m("fsync"), opendir: m("opendir"), readdir: m("readdir"),
		releasedir: m("releasedir"), fsyncdir: m("fsyncdir"), chmod: m("chmod"), chown: m("chown"),
		truncate: m("truncate"), utimens: m("utimens"), fallocate: m("fallocate"), statfs: m("statfs"), setxattr: m("setxattr"),
		getxattr: m("getxattr"), listxattr: m("listxattr"), removexattr: m("removexattr"), access: m("access"),
	}
}

func newAdapter(fsys *sfs.FS, o Options) *adapter {
	return &adapter{
		fsys:    fsys,
		ready:   make(chan struct{}),
		handles: make(map[uint64]*handle),
		nextFh:  1,
		actors:  newActors(o.ActorForPID),
		ops:     newOpMetrics(),
		noXattr: o.NoXattr,
	}
}

// errno converts a core error to cgofuse's negative errno.
func errno(err error) int {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return -int(e)
	}
	return -int(syscall.EIO)
}

// done records one request and returns its result, so each method ends in
// `return done(op, start, rc)`; start comes from metrics.Start, which times
// a sample of requests only.
func done(op *metrics.FuseOp, start time.Time, rc int) int {
	op.Observe(start, min(rc, 0))
	return rc
}

// caller is the kernel-side identity of the current request.
func (a *adapter) caller() *sfs.FS {
	uid, gid, pid := cgofuse.Getcontext()
	return a.fsys.As(sfs.Caller{Uid: uid, Gid: gid, Kernel: true, Actor: a.actors.actor(uint32(pid))})
}

func (a *adapter) Init() { a.once.Do(func() { close(a.ready) }) }

func (a *adapter) add(h *handle) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	fh := a.nextFh
	a.nextFh++
	a.handles[fh] = h
	return fh
}

func (a *adapter) get(fh uint64) *handle {
	if fh == noHandle {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.handles[fh]
}

func (a *adapter) take(fh uint64) *handle {
	a.mu.Lock()
	defer a.mu.Unlock()
	h := a.handles[fh]
	delete(a.handles, fh)
	return h
}

func fillStat(st *cgofuse.Stat_t, at sfs.Attr) {
	*st = cgofuse.Stat_t{
		Ino:     at.Ino,
		Mode:    at.Mode,
		Nlink:   at.Nlink,
		Uid:     at.Uid,
		Gid:     at.Gid,
		Rdev:    at.Rdev,
		Size:    at.Size,
		Atim:    cgofuse.NewTimespec(at.Atime),
		Mtim:    cgofuse.NewTimespec(at.Mtime),
		Ctim:    cgofuse.NewTimespec(at.Ctime),
		Blksize: 4096,
		Blocks:  at.Blocks(),
	}
}

func (a *adapter) Statfs(path string, st *cgofuse.Statfs_t) int {
	start := metrics.Start()
	s, err := a.fsys.Statfs()
	if err != nil {
		return done(a.ops.statfs, start, errno(err))
	}
	*st = cgofuse.Statfs_t{
		Bsize: uint64(s.BlockSize), Frsize: uint64(s.BlockSize),
		Blocks: s.Blocks, Bfree: s.BlocksFree, Bavail: s.BlocksFree,
		Files: s.Files, Ffree: s.FilesFree, Favail: s.FilesFree, Namemax: s.NameMaxLen,
	}
	return done(a.ops.statfs, start, 0)
}

func (a *adapter) Getattr(path string, st *cgofuse.Stat_t, fh uint64) int {
	start := metrics.Start()
	var at sfs.Attr
	var err error
	if h := a.get(fh); h != nil && h.file != nil {
		at, err = h.file.Stat()
	} else {
		// As the caller: a name the policy hides is audited as its attempt.
		at, err = a.caller().Lstat(path)
	}
	if err == nil {
		fillStat(st, at)
	}
	return done(a.ops.getattr, start, errno(err))
}

func (a *adapter) Mknod(path string, mode uint32, dev uint64) int {
	start := metrics.Start()
	return done(a.ops.mknod, start, errno(a.caller().Mknod(path, mode, dev)))
}

func (a *adapter) Mkdir(path string, mode uint32) int {
	start := metrics.Start()
	return done(a.ops.mkdir, start, errno(a.caller().Mkdir(path, mode)))
}

func (a *adapter) Unlink(path string) int {
	start := metrics.Start()
	return done(a.ops.unlink, start, errno(a.caller().Unlink(path)))
}

func (a *adapter) Rmdir(path string) int {
	start := metrics.Start()
	return done(a.ops.rmdir, start, errno(a.caller().Rmdir(path)))
}

func (a *adapter) Link(oldpath, newpath string) int {
	start := metrics.Start()
	return done(a.ops.link, start, errno(a.caller().Link(oldpath, newpath)))
}

func (a *adapter) Symlink(target, newpath string) int {
	start := metrics.Start()
	return done(a.ops.symlink, start, errno(a.caller().Symlink(target, newpath)))
}

func (a *adapter) Readlink(path string) (int, string) {
	start := metrics.Start()
	t, err := a.fsys.Readlink(path)
	return done(a.ops.readlink, start, errno(err)), t
}

func (a *adapter) Rename(oldpath, newpath string) int {
	start := metrics.Start()
	return done(a.ops.rename, start, errno(a.caller().Rename(oldpath, newpath)))
}

// Rename3 carries renameat2 flags on libfuse3.
func (a *adapter) Rename3(oldpath, newpath string, flags uint32) int {
	start := metrics.Start()
	return done(a.ops.rename, start, errno(a.caller().Rename2(oldpath, newpath, flags)))
}

func (a *adapter) Chmod(path string, mode uint32) int { return a.Chmod3(path, mode, noHandle) }

func (a *adapter) Chmod3(path string, mode uint32, fh uint64) int {
	start := metrics.Start()
	return done(a.ops.chmod, start, a.setattr(path, fh, sfs.SetAttr{Mode: &mode}))
}

func (a *adapter) Chown(path string, uid, gid uint32) int { return a.Chown3(path, uid, gid, noHandle) }

// Chown3 leaves an id of -1 as it is.
func (a *adapter) Chown3(path string, uid, gid uint32, fh uint64) int {
	start := metrics.Start()
	var s sfs.SetAttr
	if uid != ^uint32(0) {
		s.Uid = &uid
	}
	if gid != ^uint32(0) {
		s.Gid = &gid
	}
	return done(a.ops.chown, start, a.setattr(path, fh, s))
}

// utimeNow and utimeOmit are the special tv_nsec values of utimensat(2).
const (
	utimeNow  = (1 << 30) - 1
	utimeOmit = (1 << 30) - 2
)

// specTime is a utimensat time: nil to leave it as it is.
func specTime(ts cgofuse.Timespec, now time.Time) *time.Time {
	switch ts.Nsec {
	case utimeOmit:
		return nil
	case utimeNow:
		return &now
	}
	t := ts.Time()
	return &t
}

func (a *adapter) Utimens(path string, tmsp []cgofuse.Timespec) int {
	return a.Utimens3(path, tmsp, noHandle)
}

func (a *adapter) Utimens3(path string, tmsp []cgofuse.Timespec, fh uint64) int {
	start := metrics.Start()
	now := time.Now()
	s := sfs.SetAttr{Atime: &now, Mtime: &now}
	if len(tmsp) == 2 {
		s.Atime, s.Mtime = specTime(tmsp[0], now), specTime(tmsp[1], now)
	}
	return done(a.ops.utimens, start, a.setattr(path, fh, s))
}

func (a *adapter) Truncate(path string, size int64, fh uint64) int {
	start := metrics.Start()
	return done(a.ops.truncate, start, a.setattr(path, fh, sfs.SetAttr{Size: &size}))
}

// fallocKeepSize is Linux's FALLOC_FL_KEEP_SIZE, the one mode flag served
// (fallocate reaches the file system on Linux only).
const fallocKeepSize = 0x01

// Fallocate reserves nothing (data lives in the store, not in blocks): it
// only grows the file to the range's end, or with KEEP_SIZE does nothing.
// Punching holes and the other modes are not supported.
func (a *adapter) Fallocate(path string, mode uint32, off, length int64, fh uint64) int {
	start := metrics.Start()
	switch mode {
	case fallocKeepSize:
		return done(a.ops.fallocate, start, 0)
	case 0:
	default:
		return done(a.ops.fallocate, start, -int(syscall.EOPNOTSUPP))
	}
	x, ino, rc := a.target(path, fh)
	if rc != 0 {
		return done(a.ops.fallocate, start, rc)
	}
	at, err := x.GetAttr(ino)
	if end := off + length; err == nil && end > at.Size {
		_, err = x.SetAttr(ino, sfs.SetAttr{Size: &end})
	}
	return done(a.ops.fallocate, start, errno(err))
}

// target is the inode a call changes: the file open as fh, else path
// itself. The kernel has followed every symlink before it asks, so a
// symlink here is the object (lchown, utimensat with AT_SYMLINK_NOFOLLOW).
func (a *adapter) target(path string, fh uint64) (sfs.Inodes, uint64, int) {
	x := a.caller().Inodes()
	if h := a.get(fh); h != nil && h.file != nil {
		at, err := h.file.Stat()
		return x, at.Ino, errno(err)
	}
	if _, ino := x.Locate(path); ino != 0 {
		return x, ino, 0
	}
	return x, 0, -int(syscall.ENOENT)
}

// setattr changes the target of path and fh.
func (a *adapter) setattr(path string, fh uint64, s sfs.SetAttr) int {
	x, ino, rc := a.target(path, fh)
	if rc != 0 {
		return rc
	}
	_, err := x.SetAttr(ino, s)
	return errno(err)
}

// Access is checked by the kernel (default_permissions); this only answers
// whether the path exists.
func (a *adapter) Access(path string, mask uint32) int {
	start := metrics.Start()
	_, err := a.fsys.Lstat(path)
	return done(a.ops.access, start, errno(err))
}

// openFlags keeps what the core needs of the kernel's open flags: the kernel
// already positions O_APPEND writes and creates through Create.
func openFlags(flags int) int {
	return flags & (syscall.O_ACCMODE | syscall.O_TRUNC)
}

// CreateEx and OpenEx (rather than Create and Open) let a handle choose
// its caching: the kernel keeps one cache per name, so a file with several
// names bypasses the page cache to show writes made through the others.
func (a *adapter) CreateEx(path string, mode uint32, fi *cgofuse.FileInfo_t) int {
	start := metrics.Start()
	f, err := a.caller().OpenFile(path, openFlags(fi.Flags)|os.O_CREATE|fi.Flags&os.O_EXCL, mode)
	if err != nil {
		return done(a.ops.create, start, errno(err))
	}
	fi.Fh = a.add(&handle{file: f})
	return done(a.ops.create, start, 0)
}

func (a *adapter) OpenEx(path string, fi *cgofuse.FileInfo_t) int {
	start := metrics.Start()
	f, err := a.caller().OpenFile(path, openFlags(fi.Flags), 0)
	if err != nil {
		return done(a.ops.open, start, errno(err))
	}
	// The kernel keeps a file's pages across opens (kernel_cache would, but
	// cgofuse copies KeepCache back over it); changes made elsewhere reach
	// it through invalidation.
	fi.KeepCache = canNotify
	if at, err := f.Stat(); err == nil && at.Nlink > 1 {
		fi.DirectIo, fi.KeepCache = true, false
	}
	fi.Fh = a.add(&handle{file: f})
	return done(a.ops.open, start, 0)
}

// Create and Open are required by the interface; cgofuse calls the Ex forms.
func (a *adapter) Create(path string, flags int, mode uint32) (int, uint64) {
	fi := cgofuse.FileInfo_t{Flags: flags}
	return a.CreateEx(path, mode, &fi), fi.Fh
}

func (a *adapter) Open(path string, flags int) (int, uint64) {
	fi := cgofuse.FileInfo_t{Flags: flags}
	return a.OpenEx(path, &fi), fi.Fh
}

func (a *adapter) Read(path string, buff []byte, ofst int64, fh uint64) int {
	start := metrics.Start()
	h := a.get(fh)
	if h == nil || h.file == nil {
		return done(a.ops.read, start, -int(syscall.EBADF))
	}
	n, err := h.file.ReadAt(buff, ofst)
	if err != nil && n == 0 && !errors.Is(err, io.EOF) {
		return done(a.ops.read, start, errno(err))
	}
	metrics.FuseRead(n)
	return done(a.ops.read, start, n)
}

func (a *adapter) Write(path string, buff []byte, ofst int64, fh uint64) int {
	start := metrics.Start()
	h := a.get(fh)
	if h == nil || h.file == nil {
		return done(a.ops.write, start, -int(syscall.EBADF))
	}
	n, err := h.file.WriteAt(buff, ofst)
	if err != nil && n == 0 {
		return done(a.ops.write, start, errno(err))
	}
	metrics.FuseWrite(n)
	return done(a.ops.write, start, n)
}

// Flush has nothing to do: written data is visible to every reader at once.
func (a *adapter) Flush(path string, fh uint64) int {
	start := metrics.Start()
	return done(a.ops.flush, start, 0)
}

func (a *adapter) Release(path string, fh uint64) int {
	start := metrics.Start()
	if h := a.take(fh); h != nil && h.file != nil {
		h.file.Close()
	}
	return done(a.ops.release, start, 0)
}

func (a *adapter) Fsync(path string, datasync bool, fh uint64) int {
	start := metrics.Start()
	return done(a.ops.fsync, start, errno(a.fsys.Sync(context.Background())))
}

func (a *adapter) Opendir(path string) (int, uint64) {
	start := metrics.Start()
	at, err := a.fsys.Stat(path)
	switch {
	case err != nil:
		return done(a.ops.opendir, start, errno(err)), noHandle
	case !at.IsDir():
		return done(a.ops.opendir, start, -int(syscall.ENOTDIR)), noHandle
	}
	return done(a.ops.opendir, start, 0), a.add(&handle{})
}

// Readdir fills entries with their attributes and non-zero offsets
// (entry i at offset i+1): libfuse3 passes the attributes to the kernel
// (readdirplus) only then, which spares `ls -l` a LOOKUP per entry.
func (a *adapter) Readdir(path string, fill func(name string, stat *cgofuse.Stat_t, ofst int64) bool, ofst int64, fh uint64) int {
	start := metrics.Start()
	h := a.get(fh)
	if h == nil {
		h = &handle{} // a listing without opendir: take a fresh snapshot
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if ofst == 0 || h.ents == nil {
		ents, attrs, err := a.fsys.ReadDirAttrs(path)
		if err != nil {
			return done(a.ops.readdir, start, errno(err))
		}
		self, err := a.fsys.Stat(path)
		if err != nil {
			return done(a.ops.readdir, start, errno(err))
		}
		h.ents, h.attrs, h.self = ents, attrs, self
	}
	var st cgofuse.Stat_t
	// Offsets 1 and 2 are "." and ".."; entry i is at i+3.
	for i := ofst; i < int64(len(h.ents))+2; i++ {
		var ok bool
		switch i {
		case 0:
			fillStat(&st, h.self)
			ok = fill(".", &st, 1)
		case 1:
			ok = fill("..", nil, 2)
		default:
			fillStat(&st, h.attrs[i-2])
			ok = fill(h.ents[i-2].Name, &st, i+1)
		}
		if !ok {
			break
		}
	}
	return done(a.ops.readdir, start, 0)
}

func (a *adapter) Releasedir(path string, fh uint64) int {
	start := metrics.Start()
	a.take(fh)
	return done(a.ops.releasedir, start, 0)
}

func (a *adapter) Fsyncdir(path string, datasync bool, fh uint64) int {
	start := metrics.Start()
	return done(a.ops.fsyncdir, start, errno(a.fsys.Sync(context.Background())))
}

func (a *adapter) Setxattr(path, name string, value []byte, flags int) int {
	start := metrics.Start()
	if a.noXattr {
		return done(a.ops.setxattr, start, -int(syscall.ENOSYS))
	}
	return done(a.ops.setxattr, start, errno(a.caller().Setxattr(path, name, value, flags)))
}

func (a *adapter) Getxattr(path, name string) (int, []byte) {
	start := metrics.Start()
	if a.noXattr {
		return done(a.ops.getxattr, start, -int(syscall.ENOSYS)), nil
	}
	v, err := a.fsys.Getxattr(path, name)
	if err != nil {
		return done(a.ops.getxattr, start, errno(err)), nil
	}
	return done(a.ops.getxattr, start, 0), v
}

func (a *adapter) Removexattr(path, name string) int {
	start := metrics.Start()
	if a.noXattr {
		return done(a.ops.removexattr, start, -int(syscall.ENOSYS))
	}
	return done(a.ops.removexattr, start, errno(a.caller().Removexattr(path, name)))
}

func (a *adapter) Listxattr(path string, fill func(name string) bool) int {
	start := metrics.Start()
	if a.noXattr {
		return done(a.ops.listxattr, start, -int(syscall.ENOSYS))
	}
	names, err := a.fsys.Listxattr(path)
	if err != nil {
		return done(a.ops.listxattr, start, errno(err))
	}
	for _, n := range names {
		if !fill(n) {
			return done(a.ops.listxattr, start, -int(syscall.ERANGE))
		}
	}
	return done(a.ops.listxattr, start, 0)
}
