//go:build linux && !cgofuse

package fuse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"os"
	"path"
	"sync"
	"syscall"
	"time"
	"unsafe"

	gofuse "github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/metrics"
)

// cacheTimeout is how long the kernel may keep names, attributes and
// negative lookups: for good, in effect, since every change made outside
// the kernel is pushed to it (invalidate) before the changing call returns.
const cacheTimeout = 24 * time.Hour

// writeAuditEvery bounds the audit trail's write records per file and
// actor: the kernel sends no close, so a burst of writes is one record.
const writeAuditEvery = time.Second

// kernelCaps are what the frontend asks of the kernel beyond go-fuse's
// defaults: OPENDIR answered ENOSYS (no_opendir: listings then cached) and
// suid/sgid cleared by the server on write, truncate and chown.
const kernelCaps = gofuse.CAP_NO_OPENDIR_SUPPORT | gofuse.CAP_HANDLE_KILLPRIV_V2

// rawFS serves an fs.FS on the FUSE protocol, one kernel inode per core
// inode. OPEN, CREATE, FLUSH and OPENDIR are answered ENOSYS, so the kernel
// stops sending them and keeps pages and listings across opens: a warm
// read, stat or walk makes no round trip.
type rawFS struct {
	gofuse.RawFileSystem // ENOSYS for what is not below
	fsys                 *sfs.FS
	nodes                sfs.Inodes
	actors               *actors
	server               *gofuse.Server
	ready                chan struct{}
	writeback            bool // the kernel caches writes (CAP_WRITEBACK_CACHE)
	noXattr              bool // xattr requests are answered ENOSYS (Options.NoXattr)

	mu      sync.Mutex
	lookups map[uint64]uint64    // the kernel's lookup count per inode
	written map[uint64]writeMark // the last audited write per inode
	pids    map[uint64]uint32    // with writeback: the last caller's pid per inode

	ops opMetrics
}

type writeMark struct {
	actor string
	at    time.Time
}

// opMetrics are the per-op series, resolved once.
type opMetrics struct {
	lookup, forget, getattr, setattr, mknod, create, mkdir, symlink, unlink, rmdir, rename, link,
	readlink, read, write, copyFileRange, fallocate, fsync, readdir, statfs, getxattr, listxattr, setxattr, removexattr *metrics.FuseOp
}

func newOpMetrics() opMetrics {
	m := metrics.Fuse
	return opMetrics{
		lookup: m("lookup"), forget: m("forget"), getattr: m("getattr"), setattr: m("setattr"),
		mknod: m("mknod"), create: m("create"), mkdir: m("mkdir"), symlink: m("symlink"),
		unlink: m("unlink"), rmdir: m("rmdir"), rename: m("rename"), link: m("link"),
		readlink: m("readlink"), read: m("read"), write: m("write"), copyFileRange: m("copy_file_range"), fallocate: m("fallocate"), fsync: m("fsync"),
		readdir: m("readdir"), statfs: m("statfs"), getxattr: m("getxattr"),
		listxattr: m("listxattr"), setxattr: m("setxattr"), removexattr: m("removexattr"),
	}
}

// status converts a core error to a FUSE status.
func status(err error) gofuse.Status {
	if err == nil {
		return gofuse.OK
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return gofuse.Status(e)
	}
	return gofuse.EIO
}

// done records one request and returns its status.
func done(op *metrics.FuseOp, start time.Time, st gofuse.Status) gofuse.Status {
	op.Observe(start, -int(st))
	requestsAnswered.Add(1)
	return st
}

func (r *rawFS) String() string { return "sqlfs" }

// Init runs once INIT is answered, before any request is served.
func (r *rawFS) Init(s *gofuse.Server) {
	r.server = s
	r.writeback = r.writeback && s.KernelSettings().Flags64()&gofuse.CAP_WRITEBACK_CACHE != 0
	close(r.ready)
}

// as is the core acting for the request's caller.
func (r *rawFS) as(h *gofuse.InHeader) sfs.Inodes { return r.asActor(h, r.actors.actor(h.Pid)) }

// asActor is as with the request's actor already named.
func (r *rawFS) asActor(h *gofuse.InHeader, actor string) sfs.Inodes {
	return r.fsys.As(sfs.Caller{Uid: h.Uid, Gid: h.Gid, Kernel: true, Actor: actor}).Inodes()
}

// ref counts one kernel lookup of ino; the first keeps the inode alive in
// the core until the kernel forgets it.
func (r *rawFS) ref(ino uint64) {
	r.mu.Lock()
	r.lookups[ino]++
	first := r.lookups[ino] == 1
	r.mu.Unlock()
	if first {
		r.nodes.Ref(ino)
	}
}

func (r *rawFS) Forget(ino, n uint64) {
	start := metrics.Start()
	r.mu.Lock()
	left := r.lookups[ino] - min(n, r.lookups[ino])
	if left == 0 {
		delete(r.lookups, ino)
		delete(r.written, ino)
		delete(r.pids, ino)
	} else {
		r.lookups[ino] = left
	}
	r.mu.Unlock()
	if left == 0 {
		r.nodes.Unref(ino)
	}
	done(r.ops.forget, start, gofuse.OK)
}

// known reports whether the kernel holds ino (so a notification matters).
func (r *rawFS) known(ino uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.holds(ino)
}

// holds is known with r.mu held.
func (r *rawFS) holds(ino uint64) bool { return r.lookups[ino] > 0 || ino == rootIno }

// knownAll is known for each entry, under one lock.
func (r *rawFS) knownAll(ents []sfs.DirEntry) []bool {
	known := make([]bool, len(ents))
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, e := range ents {
		known[i] = r.holds(e.Ino)
	}
	return known
}

const rootIno = gofuse.FUSE_ROOT_ID

// LibFUSE is the libfuse major version this build serves through: none,
// it speaks the kernel's protocol itself.
const LibFUSE = 0

func fillAttr(out *gofuse.Attr, a sfs.Attr) {
	*out = gofuse.Attr{
		Ino: a.Ino, Size: uint64(a.Size), Blocks: uint64(a.Blocks()),
		Mode: a.Mode, Nlink: a.Nlink, Owner: gofuse.Owner{Uid: a.Uid, Gid: a.Gid},
		Rdev: uint32(a.Rdev), Blksize: 4096,
	}
	out.SetTimes(&a.Atime, &a.Mtime, &a.Ctime)
}

// entry answers a request that gives the kernel an inode: it counts as a
// lookup.
func (r *rawFS) entry(out *gofuse.EntryOut, a sfs.Attr) {
	r.ref(a.Ino)
	out.NodeId = a.Ino
	fillAttr(&out.Attr, a)
	out.SetEntryTimeout(cacheTimeout)
	out.SetAttrTimeout(cacheTimeout)
}

func (r *rawFS) Lookup(_ <-chan struct{}, h *gofuse.InHeader, name string, out *gofuse.EntryOut) gofuse.Status {
	start := metrics.Start()
	// As the caller: a name the policy hides is audited as its attempt.
	a, err := r.as(h).Lookup(h.NodeId, name)
	if errors.Is(err, syscall.ENOENT) {
		// A negative entry the kernel keeps, counted as the ENOENT it is.
		*out = gofuse.EntryOut{}
		out.SetEntryTimeout(cacheTimeout)
		done(r.ops.lookup, start, gofuse.ENOENT)
		return gofuse.OK
	}
	if err != nil {
		return done(r.ops.lookup, start, status(err))
	}
	r.entry(out, a)
	r.saw(a.Ino, h.Pid)
	return done(r.ops.lookup, start, gofuse.OK)
}

func (r *rawFS) GetAttr(_ <-chan struct{}, in *gofuse.GetAttrIn, out *gofuse.AttrOut) gofuse.Status {
	start := metrics.Start()
	a, err := r.nodes.GetAttr(in.NodeId)
	if err != nil {
		return done(r.ops.getattr, start, status(err))
	}
	fillAttr(&out.Attr, a)
	out.SetTimeout(cacheTimeout)
	r.saw(in.NodeId, in.Pid)
	return done(r.ops.getattr, start, gofuse.OK)
}

// Open, Flush and OpenDir are answered ENOSYS: the kernel stops sending
// them (no_open, no_flush, no_opendir), keeps a file's pages across opens
// and caches directory listings. CREATE too: files are then made by MKNOD
// and need no RELEASE.
func (r *rawFS) Open(<-chan struct{}, *gofuse.OpenIn, *gofuse.OpenOut) gofuse.Status {
	return gofuse.ENOSYS
}

func (r *rawFS) OpenDir(<-chan struct{}, *gofuse.OpenIn, *gofuse.OpenOut) gofuse.Status {
	return gofuse.ENOSYS
}

func (r *rawFS) Flush(<-chan struct{}, *gofuse.FlushIn) gofuse.Status { return gofuse.ENOSYS }

func (r *rawFS) Create(<-chan struct{}, *gofuse.CreateIn, string, *gofuse.CreateOut) gofuse.Status {
	return gofuse.ENOSYS
}

// fattrKillSuidgid asks the server to clear setuid/setgid with the change
// (HANDLE_KILLPRIV_V2).
const fattrKillSuidgid = gofuse.FATTR_KILL_SUIDGID

func (r *rawFS) SetAttr(_ <-chan struct{}, in *gofuse.SetAttrIn, out *gofuse.AttrOut) gofuse.Status {
	start := metrics.Start()
	var s sfs.SetAttr
	if in.Valid&gofuse.FATTR_MODE != 0 {
		m := in.Mode & 0o7777
		s.Mode = &m
	}
	if in.Valid&gofuse.FATTR_UID != 0 {
		s.Uid = &in.Uid
	}
	if in.Valid&gofuse.FATTR_GID != 0 {
		s.Gid = &in.Gid
	}
	if in.Valid&gofuse.FATTR_SIZE != 0 {
		size := int64(in.Size)
		s.Size = &size
	}
	now := time.Now()
	switch {
	case in.Valid&gofuse.FATTR_ATIME_NOW != 0:
		s.Atime = &now
	case in.Valid&gofuse.FATTR_ATIME != 0:
		t := time.Unix(int64(in.Atime), int64(in.Atimensec))
		s.Atime = &t
	}
	switch {
	case in.Valid&gofuse.FATTR_MTIME_NOW != 0:
		s.Mtime = &now
	case in.Valid&gofuse.FATTR_MTIME != 0:
		t := time.Unix(int64(in.Mtime), int64(in.Mtimensec))
		s.Mtime = &t
	}
	nodes := r.as(&in.InHeader)
	if in.Valid&fattrKillSuidgid != 0 && s.Mode == nil {
		if err := r.killSuidgid(nodes, in.NodeId); err != nil {
			return done(r.ops.setattr, start, status(err))
		}
	}
	a, err := nodes.SetAttr(in.NodeId, s)
	if err != nil {
		return done(r.ops.setattr, start, status(err))
	}
	fillAttr(&out.Attr, a)
	out.SetTimeout(cacheTimeout)
	r.saw(in.NodeId, in.Pid)
	return done(r.ops.setattr, start, gofuse.OK)
}

// killSuidgid clears setuid, and setgid on a group-executable file, as a
// write or truncate by an unprivileged caller does on a local filesystem.
func (r *rawFS) killSuidgid(nodes sfs.Inodes, ino uint64) error {
	a, err := nodes.GetAttr(ino)
	if err != nil {
		return err
	}
	mode := a.Mode &^ syscall.S_ISUID
	if a.Mode&syscall.S_IXGRP != 0 {
		mode &^= syscall.S_ISGID
	}
	if mode == a.Mode {
		return nil
	}
	mode &= 0o7777
	_, err = nodes.SetAttr(ino, sfs.SetAttr{Mode: &mode})
	return err
}

// mknod creates any kind of inode and answers with its entry.
func (r *rawFS) mknod(op *metrics.FuseOp, h *gofuse.InHeader, name string, mode uint32, rdev uint64, target string, out *gofuse.EntryOut) gofuse.Status {
	start := metrics.Start()
	a, err := r.as(h).Mknod(h.NodeId, name, mode, rdev, target)
	if err != nil {
		return done(op, start, status(err))
	}
	r.entry(out, a)
	r.saw(a.Ino, h.Pid)
	return done(op, start, gofuse.OK)
}

// Mknod also creates regular files: CREATE is answered ENOSYS, so the
// kernel creates with MKNOD and then needs no OPEN, RELEASE or FLUSH. Such
// requests count as "create".
func (r *rawFS) Mknod(_ <-chan struct{}, in *gofuse.MknodIn, name string, out *gofuse.EntryOut) gofuse.Status {
	op := r.ops.mknod
	if in.Mode&syscall.S_IFMT == syscall.S_IFREG || in.Mode&syscall.S_IFMT == 0 {
		op = r.ops.create
		in.Mode |= syscall.S_IFREG
	}
	return r.mknod(op, &in.InHeader, name, in.Mode, uint64(in.Rdev), "", out)
}

func (r *rawFS) Mkdir(_ <-chan struct{}, in *gofuse.MkdirIn, name string, out *gofuse.EntryOut) gofuse.Status {
	return r.mknod(r.ops.mkdir, &in.InHeader, name, syscall.S_IFDIR|in.Mode&0o7777, 0, "", out)
}

func (r *rawFS) Symlink(_ <-chan struct{}, h *gofuse.InHeader, target, name string, out *gofuse.EntryOut) gofuse.Status {
	return r.mknod(r.ops.symlink, h, name, syscall.S_IFLNK|0o777, 0, target, out)
}

func (r *rawFS) Unlink(_ <-chan struct{}, h *gofuse.InHeader, name string) gofuse.Status {
	start := metrics.Start()
	return done(r.ops.unlink, start, status(r.as(h).Remove(h.NodeId, name, false)))
}

func (r *rawFS) Rmdir(_ <-chan struct{}, h *gofuse.InHeader, name string) gofuse.Status {
	start := metrics.Start()
	return done(r.ops.rmdir, start, status(r.as(h).Remove(h.NodeId, name, true)))
}

func (r *rawFS) Rename(_ <-chan struct{}, in *gofuse.RenameIn, name, newName string) gofuse.Status {
	start := metrics.Start()
	return done(r.ops.rename, start, status(r.as(&in.InHeader).Rename(in.NodeId, name, in.Newdir, newName, in.Flags)))
}

func (r *rawFS) Link(_ <-chan struct{}, in *gofuse.LinkIn, name string, out *gofuse.EntryOut) gofuse.Status {
	start := metrics.Start()
	a, err := r.as(&in.InHeader).Link(in.Oldnodeid, in.NodeId, name)
	if err != nil {
		return done(r.ops.link, start, status(err))
	}
	r.entry(out, a)
	return done(r.ops.link, start, gofuse.OK)
}

func (r *rawFS) Readlink(_ <-chan struct{}, h *gofuse.InHeader) ([]byte, gofuse.Status) {
	start := metrics.Start()
	t, err := r.nodes.Readlink(h.NodeId)
	return []byte(t), done(r.ops.readlink, start, status(err))
}

func (r *rawFS) Read(_ <-chan struct{}, in *gofuse.ReadIn, buf []byte) (gofuse.ReadResult, gofuse.Status) {
	start := metrics.Start()
	n, err := r.nodes.ReadAt(in.NodeId, buf[:min(int(in.Size), len(buf))], int64(in.Offset))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, done(r.ops.read, start, status(err))
	}
	metrics.FuseRead(n)
	r.saw(in.NodeId, in.Pid)
	return gofuse.ReadResultData(buf[:n]), done(r.ops.read, start, gofuse.OK)
}

func (r *rawFS) Write(_ <-chan struct{}, in *gofuse.WriteIn, data []byte) (uint32, gofuse.Status) {
	start := metrics.Start()
	// Named once per WRITE: the view and the audit burst both need it.
	actor := r.writer(in.NodeId, in.Pid)
	nodes := r.asActor(&in.InHeader, actor)
	if in.WriteFlags&gofuse.WRITE_KILL_SUIDGID != 0 {
		if err := r.killSuidgid(nodes, in.NodeId); err != nil {
			return 0, done(r.ops.write, start, status(err))
		}
	}
	n, err := nodes.WriteAt(in.NodeId, data, int64(in.Offset), r.auditWrite(in.NodeId, actor))
	if err != nil && n == 0 {
		return 0, done(r.ops.write, start, status(err))
	}
	metrics.FuseWrite(n)
	return uint32(n), done(r.ops.write, start, gofuse.OK)
}

// CopyFileRange copies in the server: without it the kernel falls back to
// reading the source into user space and writing it back in 64 KiB WRITEs
// (16 requests a MiB, each crossing the kernel twice); with it a cp of a
// 64 MiB file is one request. The kernel caps Len below 4 GiB (the reply's
// size is 32 bits).
func (r *rawFS) CopyFileRange(_ <-chan struct{}, in *gofuse.CopyFileRangeIn) (uint32, gofuse.Status) {
	start := metrics.Start()
	if in.Flags != 0 || in.OffIn > math.MaxInt64 || in.OffOut > math.MaxInt64 {
		return 0, done(r.ops.copyFileRange, start, gofuse.EINVAL)
	}
	actor := r.writer(in.NodeIdOut, in.Pid)
	nodes := r.asActor(&in.InHeader, actor)
	n, err := nodes.CopyRange(in.NodeId, int64(in.OffIn), in.NodeIdOut, int64(in.OffOut),
		int64(min(in.Len, math.MaxUint32)), r.auditWrite(in.NodeIdOut, actor))
	if err != nil && n == 0 {
		return 0, done(r.ops.copyFileRange, start, status(err))
	}
	r.saw(in.NodeId, in.Pid)
	return uint32(n), done(r.ops.copyFileRange, start, gofuse.OK)
}

// saw notes the caller of a request on ino, with the writeback cache: the
// kernel's WRITEs then carry no pid, and are audited under the last caller
// that did (see writer).
func (r *rawFS) saw(ino uint64, pid uint32) {
	if !r.writeback || pid == 0 {
		return
	}
	r.mu.Lock()
	r.pids[ino] = pid
	r.mu.Unlock()
}

// writer names the actor of a WRITE. With the writeback cache the kernel
// writes pages back on its own (no pid) at close, fsync, memory pressure
// or a flush the core asked for: the actor is then that of the last request
// on the inode that carried a pid (a lookup, getattr, create, setattr or
// read), the process that opened, created, truncated or read the file most
// recently.
func (r *rawFS) writer(ino uint64, pid uint32) string {
	if pid == 0 && r.writeback {
		r.mu.Lock()
		pid = r.pids[ino]
		r.mu.Unlock()
		if pid == 0 {
			return "fuse:writeback"
		}
	}
	return r.actors.actor(pid)
}

// auditWrite says whether a write starts a burst worth an audit record:
// the first by its actor on that file for writeAuditEvery.
func (r *rawFS) auditWrite(ino uint64, actor string) bool {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	last, ok := r.written[ino]
	if ok && last.actor == actor && now.Sub(last.at) < writeAuditEvery {
		return false
	}
	r.written[ino] = writeMark{actor: actor, at: now}
	return true
}

// Fallocate reserves nothing (data lives in the store, not in blocks): it
// only grows the file to the range's end, or with KEEP_SIZE does nothing.
// Punching holes and the other modes are not supported.
func (r *rawFS) Fallocate(_ <-chan struct{}, in *gofuse.FallocateIn) gofuse.Status {
	start := metrics.Start()
	switch in.Mode {
	case unix.FALLOC_FL_KEEP_SIZE:
		return done(r.ops.fallocate, start, gofuse.OK)
	case 0:
	default:
		return done(r.ops.fallocate, start, gofuse.Status(syscall.EOPNOTSUPP))
	}
	nodes := r.as(&in.InHeader)
	a, err := nodes.GetAttr(in.NodeId)
	if err != nil {
		return done(r.ops.fallocate, start, status(err))
	}
	if end := int64(in.Offset + in.Length); end > a.Size {
		_, err = nodes.SetAttr(in.NodeId, sfs.SetAttr{Size: &end})
	}
	return done(r.ops.fallocate, start, status(err))
}

func (r *rawFS) Fsync(_ <-chan struct{}, in *gofuse.FsyncIn) gofuse.Status {
	start := metrics.Start()
	return done(r.ops.fsync, start, status(r.fsys.Sync(context.Background())))
}

func (r *rawFS) FsyncDir(c <-chan struct{}, in *gofuse.FsyncIn) gofuse.Status { return r.Fsync(c, in) }

// ReadDir is only the fallback for kernels without readdirplus.
func (r *rawFS) ReadDir(_ <-chan struct{}, in *gofuse.ReadIn, out *gofuse.DirEntryList) gofuse.Status {
	return r.readDir(in, out, false)
}

func (r *rawFS) ReadDirPlus(_ <-chan struct{}, in *gofuse.ReadIn, out *gofuse.DirEntryList) gofuse.Status {
	return r.readDir(in, out, true)
}

// readDir lists a directory from the offset on: "." and ".." first, then
// the entries by name, entry i at offset i+1. The kernel caches the
// listing (no_opendir) until the directory changes.
func (r *rawFS) readDir(in *gofuse.ReadIn, out *gofuse.DirEntryList, plus bool) gofuse.Status {
	start := metrics.Start()
	// Ask the core for no more entries than the kernel's buffer can take.
	perEntry := direntSize
	if plus {
		perEntry += direntPlusSize
	}
	// "." and ".." are at offsets 0 and 1 (the offsets after them 1 and
	// 2); an entry's offset is the core's, the same until it is removed
	// (sfs.DirEntry.Off): the kernel keeps a listing until the directory
	// changes and then asks to go on after the last offset it returned.
	var dots []gofuse.DirEntry
	for off := in.Offset; off < 2; off++ {
		e := gofuse.DirEntry{Name: ".", Ino: in.NodeId, Mode: syscall.S_IFDIR, Off: off + 1}
		if off == 1 {
			e.Name, e.Ino = "..", 0
		}
		dots = append(dots, e)
	}
	ents, attrs, err := r.nodes.ReadDir(in.NodeId, in.Offset, int(in.Size)/perEntry+1)
	if err != nil {
		return done(r.ops.readdir, start, status(err))
	}
	var known []bool
	if plus {
		known = r.knownAll(ents)
	}
	for _, e := range dots {
		if !add(out, e, plus) {
			return done(r.ops.readdir, start, gofuse.OK)
		}
	}
	for i, ent := range ents {
		e := gofuse.DirEntry{Name: ent.Name, Ino: ent.Ino, Mode: ent.Mode, Off: ent.Off}
		if !plus {
			if !out.AddDirEntry(e) {
				break
			}
			continue
		}
		eo := out.AddDirLookupEntry(e)
		if eo == nil {
			break
		}
		// An inode the kernel already holds carries no entry (its
		// attributes are kept right by notifications): a zero node id
		// makes the kernel skip the entry's dentry and attribute update,
		// most of a warm listing's cost.
		if !known[i] {
			r.entry(eo, attrs[i])
		}
	}
	return done(r.ops.readdir, start, gofuse.OK)
}

// add adds "." or "..", which carry no entry in a READDIRPLUS (the kernel
// skips them), and tells whether it fitted.
func add(out *gofuse.DirEntryList, e gofuse.DirEntry, plus bool) bool {
	if plus {
		return out.AddDirLookupEntry(e) != nil
	}
	return out.AddDirEntry(e)
}

// The smallest a listed entry can take in the kernel's buffer: a dirent
// with a name of up to 8 bytes, plus the entry of a READDIRPLUS.
const (
	direntSize     = 24 + 8
	direntPlusSize = int(unsafe.Sizeof(gofuse.EntryOut{}))
)

func (r *rawFS) StatFs(_ <-chan struct{}, h *gofuse.InHeader, out *gofuse.StatfsOut) gofuse.Status {
	start := metrics.Start()
	s, err := r.fsys.Statfs()
	if err != nil {
		return done(r.ops.statfs, start, status(err))
	}
	*out = gofuse.StatfsOut{
		Blocks: s.Blocks, Bfree: s.BlocksFree, Bavail: s.BlocksFree, Files: s.Files, Ffree: s.FilesFree,
		Bsize: uint32(s.BlockSize), Frsize: uint32(s.BlockSize), NameLen: uint32(s.NameMaxLen),
	}
	return done(r.ops.statfs, start, gofuse.OK)
}

func (r *rawFS) GetXAttr(_ <-chan struct{}, h *gofuse.InHeader, attr string, dest []byte) (uint32, gofuse.Status) {
	start := metrics.Start()
	if r.noXattr {
		return 0, done(r.ops.getxattr, start, gofuse.ENOSYS)
	}
	v, err := r.nodes.Getxattr(h.NodeId, attr)
	if err != nil {
		return 0, done(r.ops.getxattr, start, status(err))
	}
	if len(v) > len(dest) {
		return uint32(len(v)), done(r.ops.getxattr, start, gofuse.ERANGE)
	}
	return uint32(copy(dest, v)), done(r.ops.getxattr, start, gofuse.OK)
}

func (r *rawFS) ListXAttr(_ <-chan struct{}, h *gofuse.InHeader, dest []byte) (uint32, gofuse.Status) {
	start := metrics.Start()
	if r.noXattr {
		return 0, done(r.ops.listxattr, start, gofuse.ENOSYS)
	}
	names, err := r.nodes.Listxattr(h.NodeId)
	if err != nil {
		return 0, done(r.ops.listxattr, start, status(err))
	}
	var b []byte
	for _, n := range names {
		b = append(append(b, n...), 0)
	}
	if len(b) > len(dest) {
		return uint32(len(b)), done(r.ops.listxattr, start, gofuse.ERANGE)
	}
	return uint32(copy(dest, b)), done(r.ops.listxattr, start, gofuse.OK)
}

func (r *rawFS) SetXAttr(_ <-chan struct{}, in *gofuse.SetXAttrIn, attr string, data []byte) gofuse.Status {
	start := metrics.Start()
	if r.noXattr {
		return done(r.ops.setxattr, start, gofuse.ENOSYS)
	}
	return done(r.ops.setxattr, start, status(r.as(&in.InHeader).Setxattr(in.NodeId, attr, data, int(in.Flags))))
}

func (r *rawFS) RemoveXAttr(_ <-chan struct{}, h *gofuse.InHeader, attr string) gofuse.Status {
	start := metrics.Start()
	if r.noXattr {
		return done(r.ops.removexattr, start, gofuse.ENOSYS)
	}
	return done(r.ops.removexattr, start, status(r.as(h).Removexattr(h.NodeId, attr)))
}

// Start mounts fsys at mountpoint and serves it in the background until
// Unmount, or until the mount is unmounted from outside.
func Start(ctx context.Context, fsys *sfs.FS, mountpoint string, o Options) (*Mount, error) {
	abs, err := prepareMount(mountpoint)
	if err != nil {
		return nil, err
	}
	r := &rawFS{
		RawFileSystem: gofuse.NewDefaultRawFileSystem(),
		fsys:          fsys,
		nodes:         fsys.Inodes(),
		actors:        newActors(o.ActorForPID),
		ready:         make(chan struct{}),
		writeback:     o.WritebackCache,
		noXattr:       o.NoXattr,
		lookups:       make(map[uint64]uint64),
		written:       make(map[uint64]writeMark),
		pids:          make(map[uint64]uint32),
		ops:           newOpMetrics(),
	}
	name := o.FSName
	if name == "" {
		name = "sqlfs"
	}
	var served gofuse.RawFileSystem = &permFS{r}
	var permOpts []string
	if o.Permissions == KernelPermissions {
		served, permOpts = r, []string{"default_permissions"}
	}
	mo := &gofuse.MountOptions{
		AllowOther:               o.AllowOther,
		Options:                  append(permOpts, o.Extra...),
		MaxWrite:                 1 << 20,
		MaxBackground:            64,
		FsName:                   name,
		Name:                     "sqlfs",
		EnableSymlinkCaching:     true,
		ExplicitDataCacheControl: true,
		DirectMount:              true,
		DirectMountFlags:         syscall.MS_NOSUID | syscall.MS_NODEV,
		ExtraCapabilities:        kernelCaps,
		Debug:                    o.Debug,
		// go-fuse's own messages are debugging detail: they go to the
		// structured log, never to a command's stderr.
		Logger: log.New(slogWriter{}, "", 0),
	}
	if o.Debug {
		mo.Logger = log.New(os.Stderr, "go-fuse: ", log.Lmicroseconds)
	}
	if r.writeback {
		mo.ExtraCapabilities |= gofuse.CAP_WRITEBACK_CACHE
	}
	if o.ReadOnly {
		mo.Options = append(mo.Options, "ro")
		mo.DirectMountFlags |= syscall.MS_RDONLY
	}
	// The rings are made before INIT's reply asks for them: once it has,
	// the kernel holds every request until they are registered.
	var ring *uringServer
	if o.IOUring {
		if ring, err = newURingServer(max(8192, mo.MaxWrite)); err != nil {
			slog.Warn("FUSE over io_uring refused: serving on /dev/fuse", "err", err)
		} else {
			mo.ExtraCapabilities |= gofuse.CAP_OVER_IO_URING
		}
	}
	server, err := gofuse.NewServer(served, abs, mo)
	if err != nil {
		if ring != nil {
			ring.stop()
		}
		return nil, fmt.Errorf("%w at %s: %w", ErrMountFailed, abs, err)
	}
	if ring != nil && server.KernelSettings().Flags64()&gofuse.CAP_OVER_IO_URING == 0 {
		slog.Info("the kernel does not offer FUSE over io_uring: serving on /dev/fuse", "parameter", URingEnabledParameter)
		ring.stop()
		ring = nil
	}
	// Unmounting is umount(2) alone (go-fuse's Unmount also waits for the
	// loop, without limit): Mount.Unmount waits, and aborts if need be.
	m := &Mount{mountpoint: abs, done: make(chan struct{}), unmount: func() bool { return syscall.Unmount(abs, 0) == nil }}
	if ring != nil {
		ring.start(server)
		m.ringRequests = ring.served.Load
	}
	go func() {
		defer close(m.done)
		server.Serve()
		if ring != nil {
			// The kernel ends the ring's commands with the connection.
			ring.wg.Wait()
		}
	}()
	// server.WaitMount only where asked (see SameProcessClients): its poll
	// hack opens a file on the mount from this process.
	select {
	case <-r.ready:
	case <-m.done:
		return nil, fmt.Errorf("%w at %s: the serving loop ended", ErrMountFailed, abs)
	case <-ctx.Done():
		m.Unmount()
		return nil, ctx.Err()
	}
	if o.SameProcessClients {
		if err := server.WaitMount(); err != nil {
			m.Unmount()
			return nil, fmt.Errorf("%w at %s: %w", ErrMountFailed, abs, err)
		}
	}
	if major, minor, ok := mountDevice(abs); ok {
		m.abort = connectionAborter(major, minor, m.done)
		m.heldElsewhere = func() bool { return heldElsewhere(major, minor) }
	}
	m.fsys = fsys
	fsys.SetInvalidator(r.invalidate)
	if r.writeback {
		fsys.SetFlusher(r.flush)
	}
	setReadAhead(abs, readAheadKB)
	if o.LowLatency {
		go keepCPUsAwake(m.done, slog.Default())
	}
	return m, nil
}

// invalidate tells the kernel of changes made outside it, on the changing
// caller's goroutine (never a FUSE request's: those are Kernel callers), so
// they show through the mount before the change returns.
func (r *rawFS) invalidate(changes []sfs.Change) {
	for _, c := range changes {
		dir, ino := r.nodes.Locate(c.Path)
		if c.Name && dir != 0 && r.known(dir) {
			// The name (positive or negative), the directory's attributes
			// and its cached listing.
			r.server.EntryNotify(dir, path.Base(c.Path))
			r.server.InodeNotify(dir, 0, 0)
		}
		if ino == 0 {
			ino = c.Ino // a name that went: its inode lost a link
		}
		if ino == 0 || !r.known(ino) {
			continue
		}
		if c.Name {
			r.server.InodeNotify(ino, -1, 0) // a new name: attributes (nlink) only
			continue
		}
		r.server.InodeNotify(ino, 0, 0) // data and attributes
		if r.writeback {
			r.refreshFile(ino)
		}
	}
}

// refreshFile makes the kernel take a regular file's size and times from
// the core after a change made outside it. With the writeback cache the
// kernel trusts its own size, mtime and ctime of a regular file over a
// GETATTR's (fuse_get_cache_mask), so invalidating is not enough: the
// inode is dropped (its names invalidated; an inode nobody holds is
// evicted at once and the next LOOKUP builds it afresh). One held open (an
// fd, a mapping) stays until its last holder lets go; meanwhile it learns
// a grown size from the file's last byte stored into its cache, but keeps
// a shrunk size and its old times.
func (r *rawFS) refreshFile(ino uint64) {
	a, err := r.nodes.GetAttr(ino)
	if err != nil || a.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return
	}
	if a.Size > 0 {
		var last [1]byte
		if n, _ := r.nodes.ReadAt(ino, last[:], a.Size-1); n == 1 {
			r.server.InodeNotifyStoreCache(ino, a.Size-1, last[:])
		}
	}
	// Unhashing every name (NOTIFY_PRUNE would keep the ones in use)
	// makes the last holder's close evict the inode too.
	for _, n := range r.nodes.Names(ino) {
		if r.known(n.Dir) {
			r.server.EntryNotify(n.Dir, n.Name)
		}
	}
}

// flush has the kernel write back ino's dirty pages before the core serves
// it to a caller other than the kernel: NOTIFY_INVAL_INODE launders dirty
// pages (WRITEs, served meanwhile by the loop) before it drops them.
func (r *rawFS) flush(ino uint64) {
	if r.known(ino) {
		r.server.InodeNotify(ino, 0, 0)
	}
}

const fusectl = "/sys/fs/fuse/connections"

// connectionAborter returns what aborts the FUSE connection of the mount
// with device major:minor (through the fusectl filesystem), or nil when it
// cannot be found. The
// abort file is opened now and written through that descriptor later: the
// kernel reuses a connection's number as soon as it ends, so a path looked
// up at abort time could name the next mount's connection, while this
// descriptor goes dead with its own (a write then does nothing). done
// closes the descriptor.
func connectionAborter(major, minor uint32, done <-chan struct{}) func() {
	// The connection is named by the kernel's encoding of the device number.
	id := minor&0xff | major<<8 | (minor&^0xff)<<12
	name := fmt.Sprintf("%s/%d/abort", fusectl, id)
	if _, err := os.Stat(name); errors.Is(err, os.ErrNotExist) {
		// fusectl is not always mounted (systemd does it at boot).
		_ = unix.Mount("fusectl", fusectl, "fusectl", 0, "")
	}
	file, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		slog.Warn("cannot open the FUSE connection's abort file: a mount held elsewhere will not be aborted", "file", name, "err", err)
		return nil
	}
	go func() {
		<-done
		file.Close()
	}()
	return func() {
		if _, err := file.Write([]byte("1")); err != nil && !errors.Is(err, os.ErrClosed) {
			slog.Warn("cannot abort the FUSE connection", "file", name, "err", err)
		}
	}
}

// heldElsewhere reports whether a running process has the mount with
// device major:minor in a mount namespace other than this process's: each
// namespace is read once, through the first process found in it. An
// exited process has left its namespace, even as a zombie.
func heldElsewhere(major, minor uint32) bool {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell: treat it as held
	}
	dev := fmt.Sprintf("%d:%d", major, minor)
	seen := map[string]bool{}
	if own, err := os.Readlink("/proc/self/ns/mnt"); err == nil {
		seen[own] = true
	}
	for _, p := range procs {
		if p.Name()[0] < '0' || p.Name()[0] > '9' {
			continue
		}
		ns, err := os.Readlink("/proc/" + p.Name() + "/ns/mnt")
		if err != nil || seen[ns] {
			continue
		}
		seen[ns] = true
		if findMount("/proc/"+p.Name()+"/mountinfo", func(fields []string) bool { return fields[2] == dev }) != nil {
			return true
		}
	}
	return false
}

// slogWriter passes go-fuse's log lines to slog at debug level.
type slogWriter struct{}

func (slogWriter) Write(p []byte) (int, error) {
	slog.Debug("go-fuse", "msg", string(p))
	return len(p), nil
}

func lazyUnmount(dir string) error { return syscall.Unmount(dir, syscall.MNT_DETACH) }
