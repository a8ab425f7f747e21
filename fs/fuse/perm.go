//go:build linux && !cgofuse

package fuse

import (
	"bufio"
	"bytes"
	"os"
	"slices"
	"strconv"
	"syscall"

	gofuse "github.com/hanwen/go-fuse/v2/fuse"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/metrics"
)

// Access bits of a permission check, as in access(2).
const (
	mayExec  = 1
	mayWrite = 2
	mayRead  = 4
)

// permFS checks the permissions of metadata requests in the server, for a
// mount without default_permissions (ServerPermissions). It is a
// measurement of the alternative, not a safe mode: the kernel then checks
// nothing itself, so opens (answered ENOSYS, never sent), reads and writes
// from the page cache and walks through cached names pass unchecked.
type permFS struct{ *rawFS }

// requester is the caller of one request; its supplementary groups are
// read from /proc only when a check depends on them.
type requester struct {
	uid, gid, pid uint32
	groups        []uint32
	loaded        bool
}

func requesterOf(h *gofuse.InHeader) *requester {
	return &requester{uid: h.Uid, gid: h.Gid, pid: h.Pid}
}

// inGroup reports whether the caller is a member of group g.
func (c *requester) inGroup(g uint32) bool {
	if g == c.gid {
		return true
	}
	if !c.loaded {
		c.groups, c.loaded = procGroups(c.pid), true
	}
	return slices.Contains(c.groups, g)
}

// procGroups are the supplementary groups of thread pid, from the
// "Groups:" line of /proc/<pid>/status (a FUSE request carries only uid,
// gid and pid). None when the thread is gone or in a pid namespace the
// server cannot see (pid 0).
func procGroups(pid uint32) []uint32 {
	if pid == 0 {
		return nil
	}
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/status")
	if err != nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("Groups:"))
		if !ok {
			continue
		}
		var gs []uint32
		for _, f := range bytes.Fields(rest) {
			if g, err := strconv.ParseUint(string(f), 10, 32); err == nil {
				gs = append(gs, uint32(g))
			}
		}
		return gs
	}
	return nil
}

// may reports whether the caller has every access in mask to an inode with
// attributes a, as generic_permission decides it (root passes all but
// execution of a file with no execute bit).
func (c *requester) may(a sfs.Attr, mask uint32) bool {
	if c.uid == 0 {
		return mask&mayExec == 0 || a.Mode&syscall.S_IFMT == syscall.S_IFDIR || a.Mode&0o111 != 0
	}
	if c.uid == a.Uid {
		return (a.Mode>>6)&mask == mask
	}
	// The group's bits decide for a member, even when they give less than
	// the others' bits: membership is looked up only when it matters.
	group, other := (a.Mode>>3)&mask == mask, a.Mode&mask == mask
	if group == other {
		return other
	}
	if c.inGroup(a.Gid) {
		return group
	}
	return other
}

// owns reports whether the caller may change an inode's metadata as its owner.
func (c *requester) owns(a sfs.Attr) bool { return c.uid == 0 || c.uid == a.Uid }

// check answers EACCES unless the caller has mask on inode ino.
func (p *permFS) check(c *requester, ino uint64, mask uint32) gofuse.Status {
	a, err := p.nodes.GetAttr(ino)
	if err != nil {
		return status(err)
	}
	if !c.may(a, mask) {
		return gofuse.EACCES
	}
	return gofuse.OK
}

// denied records a request refused by a check.
func denied(op *metrics.FuseOp, st gofuse.Status) gofuse.Status {
	return done(op, metrics.Start(), st)
}

func (p *permFS) Lookup(cancel <-chan struct{}, h *gofuse.InHeader, name string, out *gofuse.EntryOut) gofuse.Status {
	if st := p.check(requesterOf(h), h.NodeId, mayExec); !st.Ok() {
		return denied(p.ops.lookup, st)
	}
	return p.rawFS.Lookup(cancel, h, name, out)
}

func (p *permFS) Access(_ <-chan struct{}, in *gofuse.AccessIn) gofuse.Status {
	return p.check(requesterOf(&in.InHeader), in.NodeId, in.Mask&7)
}

// inDir checks that the caller may change the entries of directory dir.
func (p *permFS) inDir(h *gofuse.InHeader, dir uint64) gofuse.Status {
	return p.check(requesterOf(h), dir, mayWrite|mayExec)
}

func (p *permFS) Mknod(cancel <-chan struct{}, in *gofuse.MknodIn, name string, out *gofuse.EntryOut) gofuse.Status {
	if st := p.inDir(&in.InHeader, in.NodeId); !st.Ok() {
		return denied(p.ops.create, st)
	}
	return p.rawFS.Mknod(cancel, in, name, out)
}

func (p *permFS) Mkdir(cancel <-chan struct{}, in *gofuse.MkdirIn, name string, out *gofuse.EntryOut) gofuse.Status {
	if st := p.inDir(&in.InHeader, in.NodeId); !st.Ok() {
		return denied(p.ops.mkdir, st)
	}
	return p.rawFS.Mkdir(cancel, in, name, out)
}

func (p *permFS) Symlink(cancel <-chan struct{}, h *gofuse.InHeader, target, name string, out *gofuse.EntryOut) gofuse.Status {
	if st := p.inDir(h, h.NodeId); !st.Ok() {
		return denied(p.ops.symlink, st)
	}
	return p.rawFS.Symlink(cancel, h, target, name, out)
}

func (p *permFS) Link(cancel <-chan struct{}, in *gofuse.LinkIn, name string, out *gofuse.EntryOut) gofuse.Status {
	if st := p.inDir(&in.InHeader, in.NodeId); !st.Ok() {
		return denied(p.ops.link, st)
	}
	return p.rawFS.Link(cancel, in, name, out)
}

func (p *permFS) Unlink(cancel <-chan struct{}, h *gofuse.InHeader, name string) gofuse.Status {
	if st := p.inDir(h, h.NodeId); !st.Ok() {
		return denied(p.ops.unlink, st)
	}
	return p.rawFS.Unlink(cancel, h, name)
}

func (p *permFS) Rmdir(cancel <-chan struct{}, h *gofuse.InHeader, name string) gofuse.Status {
	if st := p.inDir(h, h.NodeId); !st.Ok() {
		return denied(p.ops.rmdir, st)
	}
	return p.rawFS.Rmdir(cancel, h, name)
}

func (p *permFS) Rename(cancel <-chan struct{}, in *gofuse.RenameIn, name, newName string) gofuse.Status {
	st := p.inDir(&in.InHeader, in.NodeId)
	if st.Ok() && in.Newdir != in.NodeId {
		st = p.inDir(&in.InHeader, in.Newdir)
		// A directory moved to another parent rewrites its "..".
		if a, err := p.nodes.Lookup(in.NodeId, name); st.Ok() && err == nil && a.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			st = p.check(requesterOf(&in.InHeader), a.Ino, mayWrite)
		}
	}
	if !st.Ok() {
		return denied(p.ops.rename, st)
	}
	return p.rawFS.Rename(cancel, in, name, newName)
}

func (p *permFS) SetAttr(cancel <-chan struct{}, in *gofuse.SetAttrIn, out *gofuse.AttrOut) gofuse.Status {
	if st := p.setattrAllowed(in); !st.Ok() {
		return denied(p.ops.setattr, st)
	}
	return p.rawFS.SetAttr(cancel, in, out)
}

// setattrAllowed applies chmod, chown, truncate and utimensat's rules.
func (p *permFS) setattrAllowed(in *gofuse.SetAttrIn) gofuse.Status {
	a, err := p.nodes.GetAttr(in.NodeId)
	if err != nil {
		return status(err)
	}
	c := requesterOf(&in.InHeader)
	v := in.Valid
	switch {
	case v&gofuse.FATTR_MODE != 0 && !c.owns(a),
		v&gofuse.FATTR_UID != 0 && in.Uid != a.Uid && c.uid != 0,
		v&gofuse.FATTR_GID != 0 && in.Gid != a.Gid && c.uid != 0 && (c.uid != a.Uid || !c.inGroup(in.Gid)),
		v&(gofuse.FATTR_ATIME|gofuse.FATTR_MTIME) != 0 && v&(gofuse.FATTR_ATIME_NOW|gofuse.FATTR_MTIME_NOW) == 0 && !c.owns(a):
		return gofuse.EPERM
	case v&gofuse.FATTR_SIZE != 0 && !c.may(a, mayWrite),
		v&(gofuse.FATTR_ATIME_NOW|gofuse.FATTR_MTIME_NOW) != 0 && !c.owns(a) && !c.may(a, mayWrite):
		return gofuse.EACCES
	}
	return gofuse.OK
}

func (p *permFS) ReadDirPlus(cancel <-chan struct{}, in *gofuse.ReadIn, out *gofuse.DirEntryList) gofuse.Status {
	if st := p.check(requesterOf(&in.InHeader), in.NodeId, mayRead); !st.Ok() {
		return denied(p.ops.readdir, st)
	}
	return p.rawFS.ReadDirPlus(cancel, in, out)
}

func (p *permFS) ReadDir(cancel <-chan struct{}, in *gofuse.ReadIn, out *gofuse.DirEntryList) gofuse.Status {
	if st := p.check(requesterOf(&in.InHeader), in.NodeId, mayRead); !st.Ok() {
		return denied(p.ops.readdir, st)
	}
	return p.rawFS.ReadDir(cancel, in, out)
}
