package fs

import (
	"errors"
	"os"
	"path"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// Inodes is the inode-keyed API for kernel frontends that speak the FUSE
// protocol directly: every call names its object by inode number (and a
// name within a directory), never by a path, so hard links share one
// kernel inode, setattr never follows a symlink and no total path length
// applies. Paths are still computed for the policy and the audit trail.
type Inodes struct{ f *FS }

// Inodes returns the inode-keyed API of this view.
func (f *FS) Inodes() Inodes { return Inodes{f: f} }

// SetAttr is what a setattr changes; nil fields stay as they are.
type SetAttr struct {
	Mode         *uint32 // permission bits
	Uid, Gid     *uint32
	Size         *int64
	Atime, Mtime *time.Time
}

// nameOf finds a directory holding n and n's name there: the hint when it
// still holds, else a directory's parent link, else a scan of the tree in
// RAM (a file renamed across directories outside the kernel), else the
// store's names of n in directories not loaded yet (a hard link). ok is
// false for an unlinked inode. Called with c.mu held.
func (c *core) nameOf(n *inode) (dir *inode, name string, ok bool) {
	if p := c.inodes[n.hintParent]; p != nil && p.children[n.hintName] == n.ino {
		return p, n.hintName, true
	}
	remember := func(p *inode, name string) (*inode, string, bool) {
		n.hintParent, n.hintName = p.ino, name
		return p, name, true
	}
	if n.isDir() {
		if p := c.inodes[n.parent]; p != nil {
			for name, i := range p.children {
				if i == n.ino {
					return remember(p, name)
				}
			}
		}
	}
	if n.nlink == 0 {
		return nil, "", false
	}
	for _, p := range c.inodes {
		for name, i := range p.children {
			if i == n.ino {
				return remember(p, name)
			}
		}
	}
	if names, err := c.namesInStore(n.ino); err == nil && len(names) > 0 {
		return remember(c.inodes[names[0].Dir], names[0].Name)
	}
	return nil, "", false
}

// pathOf is a workspace path of n, for the audit trail and the policy; ""
// for an unlinked inode. Called with c.mu held.
func (c *core) pathOf(n *inode) string {
	var names []string
	for n.ino != rootIno {
		p, name, ok := c.nameOf(n)
		if !ok {
			return ""
		}
		names = append(names, name)
		n = p
	}
	if len(names) == 0 {
		return "/"
	}
	var b []byte
	for i := len(names) - 1; i >= 0; i-- {
		b = append(append(b, '/'), names[i]...)
	}
	return string(b)
}

// node returns a live inode. Called with c.mu held.
func (c *core) node(ino uint64) (*inode, error) {
	n := c.inodes[ino]
	if n == nil {
		return nil, syscall.ESTALE
	}
	return n, nil
}

// dirNode returns a live directory. Called with c.mu held.
func (c *core) dirNode(ino uint64) (*inode, error) {
	n, err := c.node(ino)
	if err == nil && !n.isDir() {
		err = syscall.ENOTDIR
	}
	return n, err
}

// pathIn is the path of name in directory dir, for a mutation's audit
// record ("" when the directory is gone: the mutation then fails inside).
func (x Inodes) pathIn(dir uint64, name string) string {
	c := x.f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	d, err := c.dirNode(dir)
	if err != nil {
		return ""
	}
	return path.Join(c.pathOf(d), name)
}

// pathOfIno is a path of inode ino ("" when it has none).
func (x Inodes) pathOfIno(ino uint64) string {
	c := x.f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.inodes[ino]; n != nil {
		return c.pathOf(n)
	}
	return ""
}

// Lookup finds name in directory dir.
func (x Inodes) Lookup(dir uint64, name string) (Attr, error) {
	c := x.f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	d, err := c.dirNode(dir)
	if err != nil {
		return Attr{}, err
	}
	if len(name) > MaxNameLen {
		return Attr{}, syscall.ENAMETOOLONG
	}
	if c.rules.hasHidden() {
		if r := c.rules.check(path.Join(c.pathOf(d), name), false); r != nil {
			return Attr{}, x.f.refusedRead("lookup", r)
		}
	}
	if err := c.loadDir(d); err != nil {
		return Attr{}, err
	}
	ino, ok := d.children[name]
	if !ok {
		negativeCache.Hits.Inc()
		return Attr{}, syscall.ENOENT
	}
	dentryCache.Hits.Inc()
	n := c.inodes[ino]
	if err := c.otherNamesRefusal(n, false); err != nil {
		return Attr{}, x.f.refusedRead("lookup", err)
	}
	n.hintParent, n.hintName = d.ino, name
	return n.attr(), nil
}

// Ref keeps inode ino alive while the kernel knows it (its lookup count is
// above zero), as an open handle does: an unlinked file the kernel still
// holds lives on until Unref.
func (x Inodes) Ref(ino uint64) {
	c := x.f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.inodes[ino]; n != nil {
		n.open++
	}
}

// Unref lets go of what Ref kept.
func (x Inodes) Unref(ino uint64) {
	c := x.f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.inodes[ino]; n != nil && n.open > 0 {
		n.open--
		c.maybeDestroy(n)
	}
}

// onNode runs fn on live inode ino under the lock.
func onNode[T any](x Inodes, ino uint64, fn func(n *inode) (T, error)) (T, error) {
	c := x.f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.node(ino)
	if err != nil {
		var zero T
		return zero, err
	}
	return fn(n)
}

// GetAttr returns inode ino's attributes.
func (x Inodes) GetAttr(ino uint64) (Attr, error) {
	return onNode(x, ino, func(n *inode) (Attr, error) { return n.attr(), nil })
}

// SetAttr changes inode ino itself (a symlink is never followed), each
// kind of change audited under its own name, as the path API does.
func (x Inodes) SetAttr(ino uint64, s SetAttr) (Attr, error) {
	f := x.f
	o := x.one(ino)
	if s.Mode != nil {
		if err := f.setattr("chmod", o, chmodFn(*s.Mode)); err != nil {
			return Attr{}, unwrapPath(err)
		}
	}
	if s.Uid != nil || s.Gid != nil {
		uid, gid := -1, -1
		if s.Uid != nil {
			uid = int(*s.Uid)
		}
		if s.Gid != nil {
			gid = int(*s.Gid)
		}
		if err := f.setattr("chown", o, chownFn(uid, gid)); err != nil {
			return Attr{}, unwrapPath(err)
		}
	}
	if s.Size != nil {
		if err := f.truncateFile(o, *s.Size); err != nil {
			return Attr{}, unwrapPath(err)
		}
	}
	if s.Atime != nil || s.Mtime != nil {
		var at, mt time.Time
		if s.Atime != nil {
			at = *s.Atime
		}
		if s.Mtime != nil {
			mt = *s.Mtime
		}
		if err := f.setattr("utimens", o, chtimesFn(at, mt)); err != nil {
			return Attr{}, unwrapPath(err)
		}
	}
	return x.GetAttr(ino)
}

// one is inode ino as a change finds it: by number, at its path.
func (x Inodes) one(ino uint64) one {
	at := x.pathOfIno(ino)
	return one{name: at, at: at, find: func() (*inode, error) { return x.f.c.node(ino) }}
}

// Mknod creates name in dir: a directory, symlink (target set), regular or
// special file, owned by the view's caller.
func (x Inodes) Mknod(dir uint64, name string, mode uint32, rdev uint64, target string) (Attr, error) {
	op := "mknod"
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		op = "mkdir"
	case syscall.S_IFLNK:
		op = "symlink"
		if len(target) > maxTargetLen {
			return Attr{}, syscall.ENAMETOOLONG
		}
	case syscall.S_IFREG:
		op = "create"
	}
	var a Attr
	at := x.pathIn(dir, name)
	err := x.f.mutateAt(op, at, at, "", func(m *mutation) error {
		d, err := x.f.c.dirNode(dir)
		if err != nil {
			return err
		}
		if err := checkName(name); err != nil {
			return err
		}
		n, err := x.f.c.newInode(x.f.who, d, name, mode, rdev, target)
		if err != nil {
			return err
		}
		n.hintParent, n.hintName = d.ino, name
		a = n.attr()
		m.nameChanged(m.path)
		return nil
	})
	return a, unwrapPath(err)
}

// Remove removes name from dir: a directory when isDir is set, else
// anything else.
func (x Inodes) Remove(dir uint64, name string, isDir bool) error {
	op, kind := "unlink", removeFile
	if isDir {
		op, kind = "rmdir", removeDir
	}
	at := x.pathIn(dir, name)
	return unwrapPath(x.f.mutateAt(op, at, at, "", func(m *mutation) error {
		d, err := x.f.c.dirNode(dir)
		if err != nil {
			return err
		}
		return x.f.c.removeName(x.f.who, d, name, kind, m)
	}))
}

// Rename moves name in dir to newName in newDir, with renameat2 flags.
func (x Inodes) Rename(dir uint64, name string, newDir uint64, newName string, flags uint32) error {
	at := x.pathIn(dir, name)
	return unwrapPath(x.f.mutateAt("rename", at, at, x.pathIn(newDir, newName), func(m *mutation) error {
		c := x.f.c
		d, err := c.dirNode(dir)
		if err != nil {
			return err
		}
		nd, err := c.dirNode(newDir)
		if err != nil {
			return err
		}
		if err := checkName(newName); err != nil {
			return err
		}
		if err := c.rename(d, name, nd, newName, flags, m.path, m.path2); err != nil {
			return err
		}
		if n := c.inodes[nd.children[newName]]; n != nil {
			n.hintParent, n.hintName = nd.ino, newName
		}
		m.nameChanged(m.path, m.path2)
		return nil
	}))
}

// Link gives inode ino the new name newName in newDir.
func (x Inodes) Link(ino, newDir uint64, newName string) (Attr, error) {
	var a Attr
	// The new name must not carry a file out of a rule's reach: its own
	// path is checked too.
	at := x.pathIn(newDir, newName)
	err := x.f.mutateAt("link", at, at, x.pathOfIno(ino), func(m *mutation) error {
		c := x.f.c
		src, err := c.node(ino)
		if err != nil {
			return err
		}
		d, err := c.dirNode(newDir)
		if err != nil {
			return err
		}
		if err := checkName(newName); err != nil {
			return err
		}
		if err := c.link(src, d, newName); err != nil {
			return err
		}
		m.nameChanged(m.path)
		a = src.attr()
		return nil
	})
	return a, unwrapPath(err)
}

// Readlink returns symlink ino's target.
func (x Inodes) Readlink(ino uint64) (string, error) {
	return onNode(x, ino, func(n *inode) (string, error) {
		if !n.isSymlink() {
			return "", syscall.EINVAL
		}
		return n.target, nil
	})
}

// ReadDir lists directory ino with each entry's attributes, without the
// policy's hidden names: at most max entries with offsets (DirEntry.Off)
// above after, in offset order, so that a listing read a page at a time
// costs a page a time and goes on where it stopped whatever changed
// meanwhile. after 0 starts the listing.
func (x Inodes) ReadDir(ino uint64, after uint64, max int) ([]DirEntry, []Attr, error) {
	c := x.f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	d, err := c.dirNode(ino)
	if err == nil {
		err = c.loadDir(d)
	}
	if err != nil {
		return nil, nil, err
	}
	slots := x.f.list(d, func() string { return c.pathOf(d) }, after, max)
	ents, attrs := make([]DirEntry, len(slots)), make([]Attr, len(slots))
	for i, s := range slots {
		var n *inode
		ents[i], n = c.child(d, s)
		attrs[i] = n.attr()
	}
	return ents, attrs, nil
}

// ReadAt reads regular file ino's data at off; short only at the end.
func (x Inodes) ReadAt(ino uint64, p []byte, off int64) (int, error) {
	c := x.f.c
	var n *inode
	var err error
	c.locked(func() { n, err = c.node(ino) })
	if err != nil {
		return 0, err
	}
	if n.isDir() {
		return 0, syscall.EISDIR
	}
	got, err := c.readAt(n, p, off)
	if err == nil {
		c.touchAtime(n)
	}
	return got, err
}

// WriteAt writes p into regular file ino at off. audit records a write by
// the view's actor: the kernel has no close to record it at, so the
// frontend says which writes start a new burst worth a record.
func (x Inodes) WriteAt(ino uint64, p []byte, off int64, audit bool) (int, error) {
	f := x.f
	c := f.c
	var n *inode
	var err error
	var name string
	c.locked(func() {
		n, err = c.node(ino)
		if err == nil && (audit || c.rules.refusesChanges()) {
			name = c.pathOf(n)
			err = c.otherNamesRefusal(n, true)
			err, _ = refused(err)
		}
	})
	if err != nil {
		return 0, err
	}
	if err := f.allowWrite(name); err != nil {
		return 0, err
	}
	w, _, err := c.writeAt(n, p, off, false)
	if audit && w > 0 {
		c.locked(func() { c.record(f.who, &mutation{op: "write", path: name}, nil) })
	}
	return w, err
}

// copyPiece is how much of a CopyRange is read (in one store query for
// what RAM does not hold) before it is written: a bounded buffer, so a copy
// of any length needs no more RAM than this.
const copyPiece = 8 << 20

// CopyRange copies up to length bytes of regular file in at offIn into
// regular file out at offOut, in the server (copy_file_range): the bytes
// never cross the kernel. It stops early at in's end of file, and returns
// the bytes copied, short only with an error or at end of file. The
// kernel has checked the open modes of both files and that ranges in one
// file do not overlap. audit is as for WriteAt.
func (x Inodes) CopyRange(in uint64, offIn int64, out uint64, offOut int64, length int64, audit bool) (int64, error) {
	if offIn < 0 || offOut < 0 || length < 0 {
		return 0, syscall.EINVAL
	}
	c := x.f.c
	var src *inode
	var err error
	c.locked(func() {
		src, err = c.node(in)
		if err == nil && src.isDir() {
			err = syscall.EISDIR
		}
	})
	if err != nil {
		return 0, err
	}
	buf := make([]byte, min(length, copyPiece))
	var done int64
	for done < length {
		p := buf[:min(length-done, int64(len(buf)))]
		n, err := c.read(src, p, offIn+done, false)
		if err != nil || n == 0 {
			return done, err
		}
		if done == 0 {
			c.touchAtime(src)
		}
		w, err := x.WriteAt(out, p[:n], offOut+done, audit && done == 0)
		done += int64(w)
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// Getxattr returns an extended attribute of inode ino.
func (x Inodes) Getxattr(ino uint64, attr string) ([]byte, error) {
	return onNode(x, ino, func(n *inode) ([]byte, error) {
		v, ok := n.xattrs[attr]
		if !ok {
			return nil, syscall.ENODATA
		}
		return append([]byte(nil), v...), nil
	})
}

// Listxattr returns the names of inode ino's extended attributes.
func (x Inodes) Listxattr(ino uint64) ([]string, error) {
	return onNode(x, ino, func(n *inode) ([]string, error) { return n.xattrNames(), nil })
}

// Setxattr and Removexattr act on inode ino through the path API's checks,
// with the inode found by number (symlinks included).
func (x Inodes) Setxattr(ino uint64, attr string, value []byte, flags int) error {
	return unwrapPath(x.f.setxattr(x.one(ino), attr, value, flags))
}

// Removexattr removes an extended attribute of inode ino.
func (x Inodes) Removexattr(ino uint64, attr string) error {
	return unwrapPath(x.f.removexattr(x.one(ino), attr))
}

// unwrapPath returns the bare errno of a path error: the kernel frontend
// only passes the errno on.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

const rootIno = sqlstore.Root

// Locate finds what a path names, for telling the kernel of a change: the
// directory holding its last name and the inode it names now, each 0 when
// there is none. Symlinks on the way are followed, the last one is not.
func (x Inodes) Locate(p string) (dir, ino uint64) {
	c := x.f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	p = Clean(p)
	if p == "/" {
		return 0, rootIno
	}
	d, err := c.walk(path.Dir(p), true, nil)
	if err != nil || !d.isDir() {
		return 0, 0
	}
	if c.loadDir(d) != nil {
		return d.ino, 0
	}
	return d.ino, d.children[path.Base(p)]
}
