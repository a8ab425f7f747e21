package fs

import (
	"sort"
	"syscall"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// Xattr flags, as setxattr(2).
const (
	XattrCreate  = 1
	XattrReplace = 2
)

// Setxattr sets an extended attribute of name (not following a final symlink).
func (f *FS) Setxattr(name, attr string, value []byte, flags int) error {
	return f.setxattr(byName(name, false), attr, value, flags)
}

// setxattr sets an attribute of the file o finds.
func (f *FS) setxattr(o one, attr string, value []byte, flags int) error {
	return f.changeOne("setxattr", o, func(m *mutation, n *inode) error {
		switch {
		case len(attr) == 0:
			return syscall.EINVAL
		case len(attr) > maxXattrName:
			return syscall.ERANGE
		case len(value) > maxXattrValue:
			return syscall.E2BIG
		}
		_, exists := n.xattrs[attr]
		if flags&XattrCreate != 0 && exists {
			return syscall.EEXIST
		}
		if flags&XattrReplace != 0 && !exists {
			return syscall.ENODATA
		}
		if n.xattrs == nil {
			n.xattrs = make(map[string][]byte)
		}
		n.xattrs[attr] = append([]byte(nil), value...)
		f.c.xattrChanged(n, attr)
		m.inodeChanged(m.path)
		return nil
	})
}

// Removexattr removes an extended attribute.
func (f *FS) Removexattr(name, attr string) error {
	return f.removexattr(byName(name, false), attr)
}

func (f *FS) removexattr(o one, attr string) error {
	return f.changeOne("removexattr", o, func(m *mutation, n *inode) error {
		if _, ok := n.xattrs[attr]; !ok {
			return syscall.ENODATA
		}
		delete(n.xattrs, attr)
		f.c.xattrChanged(n, attr)
		m.inodeChanged(m.path)
		return nil
	})
}

func (c *core) xattrChanged(n *inode, attr string) {
	n.ctime = now()
	c.touchInode(n)
	c.dirty.xattrs[sqlstore.XattrKey{Ino: n.ino, Name: attr}] = struct{}{}
}

// Getxattr returns an extended attribute's value.
func (f *FS) Getxattr(name, attr string) ([]byte, error) {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	n, err := f.lookup("getxattr", name, false)
	if err != nil {
		return nil, pathError("getxattr", name, err)
	}
	v, ok := n.xattrs[attr]
	if !ok {
		return nil, pathError("getxattr", name, syscall.ENODATA)
	}
	return append([]byte(nil), v...), nil
}

// Listxattr returns the names of name's extended attributes, sorted.
func (f *FS) Listxattr(name string) ([]string, error) {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	n, err := f.lookup("listxattr", name, false)
	if err != nil {
		return nil, pathError("listxattr", name, err)
	}
	return n.xattrNames(), nil
}

func (n *inode) xattrNames() []string {
	out := make([]string, 0, len(n.xattrs))
	for k := range n.xattrs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
