package fs

import (
	"cmp"
	"hash/maphash"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// mutation is one change in progress: what the audit trail records and
// which paths the kernel must forget.
type mutation struct {
	op, path, path2 string
	stale           []Change
}

// Change tells a mount what a caller other than the kernel changed, so it
// can drop what the kernel cached.
type Change struct {
	Path string
	// Name is set when the name itself appeared, went or moved (and so the
	// directory's listing changed); otherwise the inode's attributes or data
	// changed.
	Name bool
	// Ino is the inode whose names changed, when the path no longer finds
	// it (an unlinked name); 0 otherwise.
	Ino uint64
}

// mutate runs fn under the lock as one audited change of the paths as
// written. fn resolves them, the resolver applying the policy to what it
// reaches and putting the physical paths in m for the audit trail.
// Refusals are audited too.
func (f *FS) mutate(op, name, name2 string, fn func(m *mutation) error) error {
	m := &mutation{op: op, path: Clean(name)}
	if name2 != "" {
		m.path2 = Clean(name2)
	}
	return f.change(m, name, false, fn)
}

// mutateAt is mutate for paths that are already physical (an inode's,
// an open file's): the policy applies to them before fn runs. name is
// what an error names.
func (f *FS) mutateAt(op, name, at, at2 string, fn func(m *mutation) error) error {
	return f.change(&mutation{op: op, path: at, path2: at2}, name, true, fn)
}

func (f *FS) change(m *mutation, name string, physical bool, fn func(m *mutation) error) error {
	c := f.c
	err, inv := func() (err error, inv func([]Change)) {
		c.mu.Lock()
		// A panic in fn must not leave every later request waiting.
		defer c.mu.Unlock()
		if err = f.allowChange(m, physical); err == nil {
			err = fn(m)
		}
		err, _ = refused(err)
		c.record(f.who, m, err)
		return err, c.invalidate
	}()
	if err == nil && inv != nil && !f.who.Kernel && len(m.stale) > 0 {
		inv(m.stale)
	}
	return pathError(m.op, name, err)
}

// allowChange applies the read-only flag, and the policy to physical
// paths. Called with c.mu held.
func (f *FS) allowChange(m *mutation, physical bool) error {
	if f.c.opts.ReadOnly {
		return syscall.EROFS
	}
	if f.c.closed {
		return errClosed
	}
	if !physical {
		return nil
	}
	for _, p := range []string{m.path, m.path2} {
		if p == "" {
			continue
		}
		if r := f.c.rules.check(p, true); r != nil {
			return r
		}
	}
	return nil
}

func (c *core) record(who Caller, m *mutation, err error) {
	if c.opts.NoAudit {
		return
	}
	c.dirty.audit = append(c.dirty.audit, sqlstore.AuditEvent{
		Time: time.Now(), Actor: who.Actor, Op: m.op, Path: m.path, Path2: m.path2, Result: errnoName(err),
	})
	metrics.AuditEvents.Inc()
	c.signalChanged()
}

// nameChanged marks names that appeared, went or moved.
func (m *mutation) nameChanged(ps ...string) {
	for _, p := range ps {
		m.stale = append(m.stale, Change{Path: p, Name: true})
	}
}

// inodeChanged marks a name whose inode's attributes or data changed.
func (m *mutation) inodeChanged(p string) {
	m.stale = append(m.stale, Change{Path: p})
}

func now() int64 { return time.Now().UnixNano() }

// newInode creates an inode named name in parent. Called with c.mu held.
func (c *core) newInode(who Caller, parent *inode, name string, mode uint32, rdev uint64, target string) (*inode, error) {
	if err := c.loadDir(parent); err != nil {
		return nil, err
	}
	if _, ok := parent.children[name]; ok {
		return nil, syscall.EEXIST
	}
	if parent.nlink == 0 {
		return nil, syscall.ENOENT // created in a removed directory
	}
	t := now()
	n := &inode{
		ino: c.nextIno, mode: mode, uid: who.Uid, gid: who.Gid, nlink: 1,
		atime: t, mtime: t, ctime: t, rdev: rdev, target: target, truncFrom: noTrunc,
	}
	// New entries of a setgid directory take its group, as on ext4.
	if parent.mode&syscall.S_ISGID != 0 {
		n.gid = parent.gid
		if n.isDir() {
			n.mode |= syscall.S_ISGID
		}
	}
	c.nextIno++
	c.files++
	if n.isDir() {
		n.nlink = 2
		n.children = make(map[string]uint64)
		n.parent = parent.ino
		parent.nlink++
	}
	c.inodes[n.ino] = n
	parent.addChild(name, n.ino)
	parent.mtime, parent.ctime = t, t
	c.touchInode(n)
	c.touchInode(parent)
	c.touchDentry(parent.ino, name)
	return n, nil
}

// dropName removes name from parent and returns the inode it named.
func (c *core) dropName(parent *inode, name string, t int64) *inode {
	n := c.inodes[parent.children[name]]
	parent.removeChild(name)
	parent.mtime, parent.ctime = t, t
	c.touchInode(parent)
	c.touchDentry(parent.ino, name)
	if n.isDir() {
		parent.nlink--
		n.nlink = 0
	} else {
		n.nlink--
	}
	n.ctime = t
	c.touchInode(n)
	c.maybeDestroy(n)
	return n
}

// maybeDestroy frees an inode with no names and no open handles.
func (c *core) maybeDestroy(n *inode) {
	if n.nlink > 0 || n.open > 0 {
		return
	}
	delete(c.inodes, n.ino)
	delete(c.linked, n.ino)
	delete(c.dirty.inodes, n.ino)
	delete(c.dirty.chunked, n.ino)
	for _, ch := range n.chunks {
		c.dirtyBytes -= int64(cap(ch.data))
	}
	n.chunks = nil
	if n.isRegular() {
		c.used -= n.size
	}
	c.files--
	c.dirty.dead[n.ino] = struct{}{}
}

func (f *FS) mknod(op, name string, mode uint32, rdev uint64, target string) (*inode, error) {
	var n *inode
	err := f.mutate(op, name, "", func(m *mutation) error {
		parent, base, err := f.c.walkParent(name, &m.path)
		if err != nil {
			return err
		}
		n, err = f.c.newInode(f.who, parent, base, mode, rdev, target)
		m.nameChanged(m.path)
		return err
	})
	return n, err
}

// Mkdir creates a directory.
func (f *FS) Mkdir(name string, perm uint32) error {
	_, err := f.mknod("mkdir", name, syscall.S_IFDIR|perm&0o7777, 0, "")
	return err
}

// MkdirAll creates a directory and any missing parents.
func (f *FS) MkdirAll(name string, perm uint32) error {
	p := Clean(name)
	if a, err := f.Stat(p); err == nil {
		if a.IsDir() {
			return nil
		}
		return pathError("mkdir", name, syscall.ENOTDIR)
	}
	if dir := path.Dir(p); dir != p {
		if err := f.MkdirAll(dir, perm); err != nil {
			return err
		}
	}
	err := f.Mkdir(p, perm)
	if err != nil {
		if a, serr := f.Lstat(p); serr == nil && a.IsDir() {
			return nil
		}
	}
	return err
}

// Mknod creates a special file (FIFO, socket, device) or an empty regular file.
func (f *FS) Mknod(name string, mode uint32, rdev uint64) error {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG, syscall.S_IFIFO, syscall.S_IFSOCK, syscall.S_IFCHR, syscall.S_IFBLK:
	case 0:
		mode |= syscall.S_IFREG
	default:
		return pathError("mknod", name, syscall.EINVAL)
	}
	_, err := f.mknod("mknod", name, mode, rdev, "")
	return err
}

// Symlink creates name as a symbolic link to target.
func (f *FS) Symlink(target, name string) error {
	if len(target) > maxTargetLen {
		return pathError("symlink", name, syscall.ENAMETOOLONG)
	}
	if target == "" {
		return pathError("symlink", name, syscall.ENOENT)
	}
	_, err := f.mknod("symlink", name, syscall.S_IFLNK|0o777, 0, target)
	return err
}

// Readlink returns a symbolic link's target.
func (f *FS) Readlink(name string) (string, error) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := f.lookup("readlink", name, false)
	if err != nil {
		return "", pathError("readlink", name, err)
	}
	if !n.isSymlink() {
		return "", pathError("readlink", name, syscall.EINVAL)
	}
	return n.target, nil
}

// Link creates newname as another name of oldname.
func (f *FS) Link(oldname, newname string) error {
	return f.mutate("link", newname, oldname, func(m *mutation) error {
		c := f.c
		// The new name must not carry a file out of a rule's reach.
		src, err := c.walk(oldname, false, &m.path2)
		if err != nil {
			return err
		}
		parent, base, err := c.walkParent(newname, &m.path)
		if err != nil {
			return err
		}
		if err := c.link(src, parent, base); err != nil {
			return err
		}
		m.nameChanged(m.path, m.path2)
		return nil
	})
}

// link gives src the name base in parent. Called with c.mu held.
func (c *core) link(src, parent *inode, base string) error {
	switch {
	case src.isDir():
		return syscall.EPERM
	case src.nlink >= maxLinks:
		return syscall.EMLINK
	}
	// Another name of a protected file would carry it out of the rule.
	if err := c.otherNamesRefusal(src, true); err != nil {
		return err
	}
	if err := c.loadDir(parent); err != nil {
		return err
	}
	if _, ok := parent.children[base]; ok {
		return syscall.EEXIST
	}
	if src.nlink == 0 {
		return syscall.ENOENT
	}
	t := now()
	parent.addChild(base, src.ino)
	parent.mtime, parent.ctime = t, t
	src.nlink++
	src.ctime = t
	src.hintParent, src.hintName = parent.ino, base
	c.touchInode(src)
	c.touchInode(parent)
	c.touchDentry(parent.ino, base)
	return nil
}

// Remove removes a file, symlink or empty directory.
func (f *FS) Remove(name string) error { return f.remove("remove", name, removeAny) }

// Unlink removes a name that is not a directory.
func (f *FS) Unlink(name string) error { return f.remove("unlink", name, removeFile) }

// Rmdir removes an empty directory.
func (f *FS) Rmdir(name string) error { return f.remove("rmdir", name, removeDir) }

func (f *FS) remove(op, name string, kind removeKind) error {
	return f.mutate(op, name, "", func(m *mutation) error {
		parent, base, err := f.c.walkParent(name, &m.path)
		if err != nil {
			return err
		}
		return f.c.removeName(f.who, parent, base, kind, m)
	})
}

// removeKind is what a removal accepts: unlink(2) refuses a directory,
// rmdir(2) anything else, remove(3) takes either.
type removeKind int

const (
	removeAny removeKind = iota
	removeFile
	removeDir
)

// removeName removes name from parent for who, with the checks of
// unlink(2) and rmdir(2); the path and the inode API both remove through
// it. Called with c.mu held.
func (c *core) removeName(who Caller, parent *inode, name string, kind removeKind, m *mutation) error {
	if err := c.loadDir(parent); err != nil {
		return err
	}
	ino, ok := parent.children[name]
	if !ok {
		return syscall.ENOENT
	}
	n := c.inodes[ino]
	if err := c.loadDir(n); err != nil {
		return err
	}
	switch {
	case n.isDir() && kind == removeFile:
		return syscall.EISDIR
	case !n.isDir() && kind == removeDir:
		return syscall.ENOTDIR
	case n.isDir() && len(n.children) > 0:
		return syscall.ENOTEMPTY
	}
	if parent.mode&syscall.S_ISVTX != 0 && who.Uid != 0 && who.Uid != n.uid && who.Uid != parent.uid {
		return syscall.EPERM
	}
	gone := c.dropName(parent, name, now())
	// The inode may live on under other names, with one link less.
	m.stale = append(m.stale, Change{Path: m.path, Name: true, Ino: gone.ino})
	return nil
}

// RemoveAll removes name and everything below it. A missing name is not an error.
func (f *FS) RemoveAll(name string) error {
	a, err := f.Lstat(name)
	if err != nil {
		if isErrno(err, syscall.ENOENT) {
			return nil
		}
		return err
	}
	if a.IsDir() {
		ents, err := f.ReadDir(name)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := f.RemoveAll(path.Join(Clean(name), e.Name)); err != nil {
				return err
			}
		}
	}
	err = f.Remove(name)
	if isErrno(err, syscall.ENOENT) {
		return nil
	}
	return err
}

// Rename flags, as renameat2(2).
const (
	RenameNoReplace = 1 << 0
	RenameExchange  = 1 << 1
)

// Rename moves oldname to newname with POSIX semantics: an existing
// newname is replaced (a directory only by a directory, and only if empty).
func (f *FS) Rename(oldname, newname string) error { return f.Rename2(oldname, newname, 0) }

// Rename2 is Rename with renameat2 flags.
func (f *FS) Rename2(oldname, newname string, flags uint32) error {
	return f.mutate("rename", oldname, newname, func(m *mutation) error {
		c := f.c
		op, on, err := c.walkParent(oldname, &m.path)
		if err != nil {
			return err
		}
		np, nn, err := c.walkParent(newname, &m.path2)
		if err != nil {
			return err
		}
		if err := c.rename(op, on, np, nn, flags, m.path, m.path2); err != nil {
			return err
		}
		m.nameChanged(m.path, m.path2)
		return nil
	})
}

// rename moves on in op to nn in np, with renameat2 flags; from and to
// are the two entries' physical paths. Called with c.mu held.
func (c *core) rename(op *inode, on string, np *inode, nn string, flags uint32, from, to string) error {
	if flags&^(RenameNoReplace|RenameExchange) != 0 || flags == RenameNoReplace|RenameExchange {
		return syscall.EINVAL
	}
	if err := c.loadDir(op); err != nil {
		return err
	}
	if err := c.loadDir(np); err != nil {
		return err
	}
	srcIno, ok := op.children[on]
	if !ok {
		return syscall.ENOENT
	}
	src := c.inodes[srcIno]
	dstIno, exists := np.children[nn]
	if flags&RenameNoReplace != 0 && exists {
		return syscall.EEXIST
	}
	if flags&RenameExchange != 0 && !exists {
		return syscall.ENOENT
	}
	if exists && dstIno == srcIno {
		return nil // two names of one inode: POSIX says do nothing
	}
	// A directory may not move below itself.
	for _, moving := range []*inode{src, c.inodes[dstIno]} {
		if moving == nil || !moving.isDir() || (moving != src && flags&RenameExchange == 0) {
			continue
		}
		target := np
		if moving != src {
			target = op
		}
		for a := target; ; a = c.inodes[a.parent] {
			if a.ino == moving.ino {
				return syscall.EINVAL
			}
			if a.ino == sqlstore.Root {
				break
			}
		}
	}
	if err := c.allowMove(src, from, to); err != nil {
		return err
	}
	if flags&RenameExchange != 0 {
		if err := c.allowMove(c.inodes[dstIno], to, from); err != nil {
			return err
		}
	}
	t := now()
	if flags&RenameExchange != 0 {
		dst := c.inodes[dstIno]
		// Both names stay, so both sorted listings do too; not what is
		// left out of them: a name of a file hidden under another name
		// is (list).
		op.children[on], np.children[nn] = dstIno, srcIno
		op.visible, op.byName, np.visible, np.byName = nil, nil, nil, nil
		c.reparent(src, op, np)
		c.reparent(dst, np, op)
		src.ctime, dst.ctime = t, t
		c.touchInode(dst)
	} else {
		if exists {
			dst := c.inodes[dstIno]
			if err := c.loadDir(dst); err != nil {
				return err
			}
			switch {
			case src.isDir() && !dst.isDir():
				return syscall.ENOTDIR
			case !src.isDir() && dst.isDir():
				return syscall.EISDIR
			case dst.isDir() && len(dst.children) > 0:
				return syscall.ENOTEMPTY
			}
			c.dropName(np, nn, t)
		}
		op.removeChild(on)
		np.addChild(nn, srcIno)
		if src.isDir() && op != np {
			op.nlink--
			np.nlink++
			src.parent = np.ino
		}
		src.ctime = t
	}
	for _, p := range []*inode{op, np} {
		p.mtime, p.ctime = t, t
		c.touchInode(p)
	}
	c.touchInode(src)
	c.touchDentry(op.ino, on)
	c.touchDentry(np.ino, nn)
	return nil
}

// allowMove refuses moving directory n from one path to another when a
// rule covers something below it at either: the move would carry a hidden
// or read-only entry out of its rule's reach, or put one under it (which
// creating it there would not be allowed to). The entry's own paths were
// checked when they were resolved. A hidden entry's refusal wins, so the
// answer does not depend on the order of the walk. Called with c.mu held.
func (c *core) allowMove(n *inode, from, to string) error {
	if n == nil || !n.isDir() || !(c.rules.anchoredBelow(from) || c.rules.anchoredBelow(to)) {
		return nil
	}
	var ro *refusal
	if err := c.moveRefusal(n, from, to, &ro); err != nil {
		return err
	}
	if ro != nil {
		return ro
	}
	return nil
}

// moveRefusal walks what is below n for allowMove: a hidden refusal is
// returned at once, the first read-only one kept in ro.
func (c *core) moveRefusal(n *inode, from, to string, ro **refusal) error {
	if err := c.loadDir(n); err != nil {
		return err
	}
	for name, ino := range n.children {
		a, b := childPath(from, name), childPath(to, name)
		for _, p := range []string{a, b} {
			switch r := c.rules.check(p, true); {
			case r == nil:
			case r.rule == RuleHidden:
				r.errno = syscall.EACCES
				return r
			case *ro == nil:
				r.errno = syscall.EROFS
				*ro = r
			}
		}
		if k := c.inodes[ino]; k.isDir() {
			if err := c.moveRefusal(k, a, b, ro); err != nil {
				return err
			}
		}
	}
	return nil
}

// reparent moves directory n's parent link from one directory to another.
func (c *core) reparent(n, from, to *inode) {
	if !n.isDir() || from == to {
		return
	}
	from.nlink--
	to.nlink++
	n.parent = to.ino
}

// lookup resolves name for a read, the hidden rules applying to every
// component reached. A refusal is audited as op under the path reached
// (op "" leaves it out: a lookup before the call that audits). Called with
// c.mu held.
func (f *FS) lookup(op, name string, follow bool) (reached, error) {
	res, err := f.c.resolve(name, follow, nil)
	switch {
	case err != nil:
		return reached{}, f.refusedRead(op, err)
	case !res.Exists:
		return reached{}, syscall.ENOENT
	}
	return res.Node, nil
}

// refusedRead turns a refused read into its errno, auditing the attempt
// as op unless op is "". Called with c.mu held.
func (f *FS) refusedRead(op string, err error) error {
	err, r := refused(err)
	if r != nil && op != "" {
		f.c.record(f.who, &mutation{op: op, path: r.path}, err)
	}
	return err
}

// Stat returns the attributes of name, following symlinks.
func (f *FS) Stat(name string) (Attr, error) { return f.stat("stat", name, true) }

// Lstat returns the attributes of name itself.
func (f *FS) Lstat(name string) (Attr, error) { return f.stat("lstat", name, false) }

func (f *FS) stat(op, name string, follow bool) (Attr, error) {
	f.flushKernel(name, follow)
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	n, err := f.lookup(op, name, follow)
	if err != nil {
		return Attr{}, pathError(op, name, err)
	}
	return n.attr(), nil
}

// ReadDir lists a directory, sorted by name, without "." and "..".
func (f *FS) ReadDir(name string) ([]DirEntry, error) {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	ents, _, err := f.readDir(name, false)
	return ents, err
}

// readDir lists directory name sorted by name and, with attrs, each
// entry's attributes. Called with c.mu held.
func (f *FS) readDir(name string, attrs bool) ([]DirEntry, []Attr, error) {
	c := f.c
	n, err := f.lookup("readdir", name, true)
	if err != nil {
		return nil, nil, pathError("readdir", name, err)
	}
	if !n.isDir() {
		return nil, nil, pathError("readdir", name, syscall.ENOTDIR)
	}
	if err := c.loadDir(n.inode); err != nil {
		return nil, nil, pathError("readdir", name, err)
	}
	// Hidden names are those of the directory reached, not of the name
	// it was reached by.
	slots := f.byName(n.inode, n.path)
	ents := make([]DirEntry, len(slots))
	var as []Attr
	if attrs {
		as = make([]Attr, len(slots))
	}
	for i, s := range slots {
		var node *inode
		ents[i], node = c.child(n.inode, s)
		if attrs {
			as[i] = node.attr()
		}
	}
	return ents, as, nil
}

// byName is directory n's listing (its path dirPath) sorted by name,
// kept until the directory changes: listings by path (ReadDir, `ls`
// through the tools) are by name, READDIR's by offset, and sorting on
// every call was most of a repeated listing's cost. Called with c.mu held.
func (f *FS) byName(n *inode, dirPath string) []dirSlot {
	if n.byName == nil || (f.c.rules.hasHidden() && n.byNameDir != dirPath) {
		n.byName = slices.SortedFunc(slices.Values(f.list(n, func() string { return dirPath }, 0, len(n.children))),
			func(a, b dirSlot) int { return strings.Compare(a.name, b.name) })
		n.byNameDir = dirPath
	}
	return n.byName
}

// A listing is in the order of its entries' offsets, as the kernel's
// READDIR asks for "the entries after offset d_off". An offset is a
// 63-bit keyed hash of the name (ext4's way): it stays the entry's for as
// long as the name exists, whatever is created or removed around it, so a
// program that unlinks what it has read and reads on (busybox rm -rf,
// os.RemoveAll, shutil.rmtree) is shown each remaining entry once, as
// POSIX requires; positions in a sorted listing shift under it instead.
// The hash needs no state, so offsets survive a directory being dropped
// and reloaded from the store. The key is random per process, so names
// cannot be crafted to collide; two names of one directory colliding
// (about n²/2⁶⁴ for n names) could only make a listing resumed between
// them miss one.
var offSeed = maphash.MakeSeed()

// firstOff is the lowest entry offset: 1 and 2 are the offsets after "."
// and "..", and 0 starts a listing.
const firstOff = 3

// dirSlot is a name in a listing with its offset.
type dirSlot struct {
	off  uint64
	name string
}

func dirOff(name string) uint64 {
	return max(maphash.String(offSeed, name)>>1, firstOff)
}

func slotOf(name string) dirSlot { return dirSlot{dirOff(name), name} }

func compareSlots(a, b dirSlot) int {
	if c := cmp.Compare(a.off, b.off); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// list is directory n's entries with offsets above after, at most max of
// them, in listing order, without hidden ones (n's entries loaded); dir
// gives its path when the policy hides names. The slice is the
// directory's own: read it under c.mu, do not change it. Called with
// c.mu held.
func (f *FS) list(n *inode, dir func() string, after uint64, max int) []dirSlot {
	c := f.c
	slots := n.sorted()
	if c.rules.hasHidden() {
		if dirPath := dir(); n.visible == nil || n.visibleDir != dirPath {
			// One store query for the names of every file with several
			// names, not one each; an error hides them below.
			kids := make([]*inode, 0, len(slots))
			for _, s := range slots {
				kids = append(kids, c.inodes[n.children[s.name]])
			}
			_ = c.prefetchLinkProt(kids)
			n.visible = slices.DeleteFunc(slices.Clone(slots), func(s dirSlot) bool {
				if c.rules.check(childPath(dirPath, s.name), false) != nil {
					return true
				}
				// A name of a file hidden under another one: listed, the
				// kernel would take the entry (READDIRPLUS) for the lookup
				// that refuses it, and read the file by inode.
				child := c.inodes[n.children[s.name]]
				return child != nil && c.otherNamesRefusal(child, false) != nil
			})
			n.visibleDir = dirPath
		}
		slots = n.visible
	}
	from, _ := slices.BinarySearchFunc(slots, after, func(s dirSlot, after uint64) int {
		if s.off <= after {
			return -1
		}
		return 1
	})
	return slots[from:min(len(slots), from+max)]
}

// child is the entry s in directory n, and its inode.
func (c *core) child(n *inode, s dirSlot) (DirEntry, *inode) {
	ino := n.children[s.name]
	node := c.inodes[ino]
	return DirEntry{Name: s.name, Ino: ino, Mode: node.mode & syscall.S_IFMT, Off: s.off}, node
}

// sorted is the directory's listing, kept until it changes.
func (n *inode) sorted() []dirSlot {
	if n.listing == nil {
		n.listing = make([]dirSlot, 0, len(n.children))
		for name := range n.children {
			n.listing = append(n.listing, slotOf(name))
		}
		slices.SortFunc(n.listing, compareSlots)
	}
	return n.listing
}

// addChild names ino in directory n; removeChild drops a name. Both keep
// a listing in order where that is a small move, and drop a big one (a
// directory of 100,000 names being filled would otherwise move 2.4 MiB on
// each create).
func (n *inode) addChild(name string, ino uint64) {
	n.children[name] = ino
	s := slotOf(name)
	if i, found := slices.BinarySearchFunc(n.listing, s, compareSlots); !found {
		n.editListing(func(l []dirSlot) []dirSlot { return slices.Insert(l, i, s) })
	}
}

func (n *inode) removeChild(name string) {
	delete(n.children, name)
	if i, found := slices.BinarySearchFunc(n.listing, slotOf(name), compareSlots); found {
		n.editListing(func(l []dirSlot) []dirSlot { return slices.Delete(l, i, i+1) })
	}
}

// maxSortedEdit is the largest listing kept across a change.
const maxSortedEdit = 8192

func (n *inode) editListing(edit func([]dirSlot) []dirSlot) {
	n.visible, n.byName = nil, nil
	if n.listing == nil {
		return
	}
	if len(n.listing) > maxSortedEdit {
		n.listing = nil
		return
	}
	n.listing = edit(n.listing)
}

// ReadDirAttrs lists a directory with each entry's attributes, for
// readdirplus and `ls -l`, under one lock.
func (f *FS) ReadDirAttrs(name string) ([]DirEntry, []Attr, error) {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	return f.readDir(name, true)
}

// Record adds an event that changes nothing in the tree (a published link,
// a download) to the audit trail under the view's actor.
func (f *FS) Record(op, name string, err error) { f.RecordDetail(op, name, "", err) }

// RecordDetail is Record with a detail kept in the event's second path,
// for events whose result alone does not say enough (which rule refused a
// connection).
func (f *FS) RecordDetail(op, name, detail string, err error) {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	f.c.record(f.who, &mutation{op: op, path: Clean(name), path2: detail}, err)
}
