package fs

import (
	iofs "io/fs"
	"math"
	"sync"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// noTrunc marks an inode with no truncation waiting for its commit.
const noTrunc = math.MaxInt64

// inode is the RAM copy of one inode, authoritative while the store is
// open. Fields are guarded by core.mu; io serialises data writers of one
// file so a read-modify-write of a chunk never races another.
type inode struct {
	ino                 uint64
	mode                uint32
	uid, gid            uint32
	nlink               uint32
	size                int64
	atime, mtime, ctime int64
	rdev                uint64
	target              string

	parent uint64 // directories only: the directory holding them
	// hintParent and hintName are a name the inode had lately, checked
	// before use: how the inode-keyed API (node.go) finds a path to audit.
	hintParent uint64
	hintName   string
	// children is a directory's entries, nil until read from the store
	// (loadDir); changed only by addChild and removeChild.
	children map[string]uint64
	// listing is children in listing order (by offset, see dirOff), built
	// by list when first needed and edited or dropped by a change: a
	// listing read in many requests (READDIRPLUS pages) sorts once
	// instead of once a page.
	listing []dirSlot
	// visible is listing without the names a hidden glob refuses under
	// visibleDir, the directory's path when it was filtered.
	visible    []dirSlot
	visibleDir string
	// byName is the visible listing sorted by name, for ReadDir, under
	// byNameDir; dropped with visible by a change.
	byName    []dirSlot
	byNameDir string

	xattrs map[string][]byte

	// Data not yet in the store: chunk index → chunk. Reads look here first.
	chunks map[int64]*chunk
	// Chunks from truncFrom on read as zeros until the truncation that
	// removes them from the store has committed. truncs holds the From of
	// each truncation not yet committed, in the order they commit;
	// truncFrom is the lowest of them.
	truncFrom int64
	truncs    []int64
	// dataGen counts writes, truncations and releases of committed
	// chunks; cached clean chunks of an older generation are stale. lastRead is the last chunk fetched, to
	// spot sequential reads.
	dataGen  uint64
	lastRead int64

	open int        // open handles; an unlinked inode lives until the last close
	io   sync.Mutex // held across the store read of a read-modify-write
}

// chunk is a piece of file data waiting for the store. Once captured by a
// commit it is immutable; a later write replaces it with a copy.
type chunk struct {
	data     []byte
	captured bool
}

func (n *inode) isDir() bool     { return n.mode&syscall.S_IFMT == syscall.S_IFDIR }
func (n *inode) isRegular() bool { return n.mode&syscall.S_IFMT == syscall.S_IFREG }
func (n *inode) isSymlink() bool { return n.mode&syscall.S_IFMT == syscall.S_IFLNK }

func (n *inode) row() sqlstore.Inode {
	return sqlstore.Inode{
		Ino: n.ino, Mode: n.mode, Uid: n.uid, Gid: n.gid, Nlink: n.nlink, Size: n.size,
		Atime: n.atime, Mtime: n.mtime, Ctime: n.ctime, Rdev: n.rdev, Target: n.target,
	}
}

func inodeFromRow(r sqlstore.Inode) *inode {
	n := &inode{
		ino: r.Ino, mode: r.Mode, uid: r.Uid, gid: r.Gid, nlink: r.Nlink, size: r.Size,
		atime: r.Atime, mtime: r.Mtime, ctime: r.Ctime, rdev: r.Rdev, target: r.Target,
		truncFrom: noTrunc,
	}
	// A directory's children stay nil until loadDir reads them.
	return n
}

// Attr is what stat(2) reports about an inode.
type Attr struct {
	Ino                 uint64
	Mode                uint32 // type bits (syscall.S_IF*) | permission bits
	Nlink               uint32
	Uid, Gid            uint32
	Size                int64
	Atime, Mtime, Ctime time.Time
	Rdev                uint64
}

// dirSize is the size directories report, as ext4 does for small ones.
const dirSize = 4096

func (n *inode) attr() Attr {
	a := Attr{
		Ino: n.ino, Mode: n.mode, Nlink: n.nlink, Uid: n.uid, Gid: n.gid, Size: n.size,
		Atime: time.Unix(0, n.atime), Mtime: time.Unix(0, n.mtime), Ctime: time.Unix(0, n.ctime), Rdev: n.rdev,
	}
	switch {
	case n.isDir():
		a.Size = dirSize
	case n.isSymlink():
		a.Size = int64(len(n.target))
	}
	return a
}

// IsDir reports whether a describes a directory.
func (a Attr) IsDir() bool { return a.Mode&syscall.S_IFMT == syscall.S_IFDIR }

// Blocks is the number of 512-byte blocks a file's data would occupy.
func (a Attr) Blocks() int64 { return (a.Size + 511) / 512 }

// FileMode converts the st_mode bits to an io/fs.FileMode.
func (a Attr) FileMode() iofs.FileMode { return FileMode(a.Mode) }

// FileMode converts st_mode bits (type, permissions, setuid, setgid,
// sticky) to an io/fs.FileMode.
func FileMode(mode uint32) iofs.FileMode {
	m := iofs.FileMode(mode & 0o777)
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		m |= iofs.ModeDir
	case syscall.S_IFLNK:
		m |= iofs.ModeSymlink
	case syscall.S_IFIFO:
		m |= iofs.ModeNamedPipe
	case syscall.S_IFSOCK:
		m |= iofs.ModeSocket
	case syscall.S_IFCHR:
		m |= iofs.ModeDevice | iofs.ModeCharDevice
	case syscall.S_IFBLK:
		m |= iofs.ModeDevice
	}
	if mode&syscall.S_ISUID != 0 {
		m |= iofs.ModeSetuid
	}
	if mode&syscall.S_ISGID != 0 {
		m |= iofs.ModeSetgid
	}
	if mode&syscall.S_ISVTX != 0 {
		m |= iofs.ModeSticky
	}
	return m
}

// UnixPerm converts the permission and special bits of an io/fs.FileMode
// to st_mode bits, the inverse of FileMode for them.
func UnixPerm(m iofs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&iofs.ModeSetuid != 0 {
		p |= syscall.S_ISUID
	}
	if m&iofs.ModeSetgid != 0 {
		p |= syscall.S_ISGID
	}
	if m&iofs.ModeSticky != 0 {
		p |= syscall.S_ISVTX
	}
	return p
}

// fileInfo adapts an Attr to io/fs.FileInfo.
type fileInfo struct {
	name string
	attr Attr
}

func (fi *fileInfo) Name() string               { return fi.name }
func (fi *fileInfo) Size() int64                { return fi.attr.Size }
func (fi *fileInfo) Mode() iofs.FileMode        { return fi.attr.FileMode() }
func (fi *fileInfo) ModTime() time.Time         { return fi.attr.Mtime }
func (fi *fileInfo) IsDir() bool                { return fi.attr.IsDir() }
func (fi *fileInfo) Sys() any                   { return &fi.attr }
func (fi *fileInfo) String() string             { return iofs.FormatFileInfo(fi) }
func newFileInfo(name string, a Attr) *fileInfo { return &fileInfo{name: name, attr: a} }

// DirEntry is one name in a directory.
type DirEntry struct {
	Name string
	Ino  uint64
	Mode uint32 // type bits
	// Off is the entry's place in its directory's listing, the same for
	// as long as the name exists (dirOff): Inodes.ReadDir after Off goes
	// on with the entries that follow it, whatever changed meanwhile.
	Off uint64
}

// FileInfo returns name's attributes as an io/fs.FileInfo whose Sys() is *Attr.
func (f *FS) FileInfo(name string, follow bool) (iofs.FileInfo, error) {
	a, err := f.stat("stat", name, follow)
	if err != nil {
		return nil, err
	}
	base := Clean(name)
	base = base[lastSlash(base)+1:]
	if base == "" {
		base = "/"
	}
	return newFileInfo(base, a), nil
}
