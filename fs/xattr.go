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
	return f.setxattr(name, f.resolver(name), attr, value, flags)
}

// resolver finds name's inode without following a final symlink, as the
// xattr calls do. Called with c.mu held.
func (f *FS) resolver(name string) func() (*inode, error) {
	return func() (*inode, error) { return f.c.walk(name, false) }
}

// setxattr sets an attribute of the inode resolve finds, audited as name.
func (f *FS) setxattr(name string, resolve func() (*inode, error), attr string, value []byte, flags int) error {
	return f.mutate("setxattr", name, "", func(m *mutation) error {
		switch {
		case len(attr) == 0:
			return syscall.EINVAL
		case len(attr) > maxXattrName:
			return syscall.ERANGE
		case len(value) > maxXattrValue:
			return syscall.E2BIG
		}
		n, err := resolve()
		if err != nil {
			return err
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
	return f.removexattr(name, f.resolver(name), attr)
}

func (f *FS) removexattr(name string, resolve func() (*inode, error), attr string) error {
	return f.mutate("removexattr", name, "", func(m *mutation) error {
		n, err := resolve()
		if err != nil {
			return err
		}
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
	n, err := f.lookup(name, false)
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
	n, err := f.lookup(name, false)
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
