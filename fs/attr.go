package fs

import (
	"syscall"
	"time"
)

// one is how a change of one file finds it: name resolved under the lock,
// or an inode known already (an open file's, one the kernel names by
// number) at the physical path at.
type one struct {
	name   string // what errors name, and what is resolved when find is nil
	follow bool
	at     string
	find   func() (*inode, error) // called with c.mu held
}

func byName(name string, follow bool) one { return one{name: name, follow: follow} }

// changeOne runs fn on the file o finds as one audited change.
func (f *FS) changeOne(op string, o one, fn func(m *mutation, n *inode) error) error {
	run := func(m *mutation) error {
		var n *inode
		var err error
		if o.find != nil {
			n, err = o.find()
		} else {
			n, err = f.c.walk(o.name, o.follow, &m.path)
		}
		if err == nil {
			err = f.c.otherNamesRefusal(n, true)
		}
		if err != nil {
			return err
		}
		return fn(m, n)
	}
	if o.find != nil {
		return f.mutateAt(op, o.name, o.at, "", run)
	}
	return f.mutate(op, o.name, "", run)
}

// setattr runs fn on the file o finds as one audited change.
func (f *FS) setattr(op string, o one, fn func(n *inode) error) error {
	return f.changeOne(op, o, func(m *mutation, n *inode) error {
		if err := fn(n); err != nil {
			return err
		}
		n.ctime = now()
		f.c.touchInode(n)
		m.inodeChanged(m.path)
		return nil
	})
}

// truncateFile sets the size of the file o finds as one audited change.
func (f *FS) truncateFile(o one, size int64) error {
	return f.changeOne("truncate", o, func(m *mutation, n *inode) error {
		switch {
		case n.isDir():
			return syscall.EISDIR
		case !n.isRegular():
			return syscall.EINVAL
		}
		m.inodeChanged(m.path)
		return f.c.truncate(n, size)
	})
}

// Chmod sets the permission bits of name.
func (f *FS) Chmod(name string, perm uint32) error {
	return f.setattr("chmod", byName(name, true), chmodFn(perm))
}

func chmodFn(perm uint32) func(n *inode) error {
	return func(n *inode) error {
		n.mode = n.mode&syscall.S_IFMT | perm&0o7777
		return nil
	}
}

// Chown sets the owner of name; -1 leaves a field unchanged.
func (f *FS) Chown(name string, uid, gid int) error {
	return f.setattr("chown", byName(name, true), chownFn(uid, gid))
}

func chownFn(uid, gid int) func(n *inode) error {
	return func(n *inode) error {
		if uid >= 0 {
			n.uid = uint32(uid)
		}
		if gid >= 0 {
			n.gid = uint32(gid)
		}
		return nil
	}
}

// Chtimes sets access and modification times; a zero time leaves one
// unchanged.
func (f *FS) Chtimes(name string, atime, mtime time.Time) error {
	return f.setattr("utimens", byName(name, true), chtimesFn(atime, mtime))
}

func chtimesFn(atime, mtime time.Time) func(n *inode) error {
	return func(n *inode) error {
		if !atime.IsZero() {
			n.atime = atime.UnixNano()
		}
		if !mtime.IsZero() {
			n.mtime = mtime.UnixNano()
		}
		return nil
	}
}

// Truncate sets the size of name.
func (f *FS) Truncate(name string, size int64) error {
	f.flushKernel(name, true)
	return f.truncateFile(byName(name, true), size)
}

// Chmod, Chown and Chtimes on an open handle work after unlink too.

// held is the open file as a change finds it.
func (fl *File) held() one {
	return one{name: fl.name, at: fl.at, find: func() (*inode, error) { return fl.n, nil }}
}

// Chmod sets the open file's permission bits.
func (fl *File) Chmod(perm uint32) error {
	return fl.fs.setattr("chmod", fl.held(), chmodFn(perm))
}

// Chown sets the open file's owner.
func (fl *File) Chown(uid, gid int) error {
	return fl.fs.setattr("chown", fl.held(), chownFn(uid, gid))
}

// Chtimes sets the open file's times.
func (fl *File) Chtimes(atime, mtime time.Time) error {
	return fl.fs.setattr("utimens", fl.held(), chtimesFn(atime, mtime))
}

// Statfs is what statfs(2) reports.
type Statfs struct {
	BlockSize  int64
	Blocks     uint64 // total, in BlockSize units
	BlocksFree uint64
	Files      uint64
	FilesFree  uint64
	NameMaxLen uint64
	UsedBytes  int64
	QuotaBytes int64
	StoreBytes int64
}

// Statfs reports honest figures: used is the files' data; the total is the
// quota when set, else what the store's own filesystem could still hold.
func (f *FS) Statfs() (Statfs, error) {
	c := f.c
	c.mu.Lock()
	used, files := c.used, c.files
	c.mu.Unlock()
	const bs = 4096
	var host syscall.Statfs_t
	if err := syscall.Statfs(dirOf(c.store.Path()), &host); err != nil {
		return Statfs{}, pathError("statfs", "/", err)
	}
	avail := int64(host.Bavail) * host.Bsize
	total := used + avail
	if q := c.opts.Policy.QuotaBytes; q > 0 {
		total = q
		avail = max(0, q-used)
	}
	freeFiles := uint64(host.Ffree)
	if freeFiles == 0 {
		freeFiles = 1 << 20
	}
	db, wal := c.store.FileBytes()
	return Statfs{
		BlockSize:  bs,
		Blocks:     uint64((total + bs - 1) / bs),
		BlocksFree: uint64(avail / bs),
		Files:      uint64(files) + freeFiles,
		FilesFree:  freeFiles,
		NameMaxLen: MaxNameLen,
		UsedBytes:  used,
		QuotaBytes: c.opts.Policy.QuotaBytes,
		StoreBytes: db + wal,
	}, nil
}

func dirOf(p string) string {
	if i := lastSlash(p); i > 0 {
		return p[:i]
	}
	return "/"
}
