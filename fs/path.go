package fs

import (
	iofs "io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

const (
	maxNameLen    = 255
	maxPathLen    = 4096
	maxSymlinks   = 40
	maxLinks      = 65000
	maxXattrName  = 255
	maxXattrValue = 64 << 10
)

// Clean turns a workspace path into its canonical form: absolute, no
// trailing slash, no "." or "..". "a/b" means "/a/b"; ".." above the root
// stays at the root, as "/.." does in POSIX.
func Clean(p string) string { return path.Clean("/" + p) }

func components(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			out = append(out, s)
		}
	}
	return out
}

func checkName(name string) error {
	switch {
	case len(name) > maxNameLen:
		return syscall.ENAMETOOLONG
	case name == "" || name == "." || name == "..":
		return syscall.EINVAL
	case strings.ContainsRune(name, 0):
		return syscall.EINVAL
	}
	return nil
}

// The metadata cache is complete while the store is open, so lookups never
// miss: they find a name (dentry hits) or learn it is absent (negative hits).
var (
	dentryCache   = metrics.Cache("dentry")
	negativeCache = metrics.Cache("negative")
)

// walk resolves p to an inode, following symlinks in every component and,
// when follow is set, in the last one. Called with c.mu held.
func (c *core) walk(p string, follow bool) (*inode, error) {
	n, err := c.walkUncounted(p, follow)
	switch err {
	case nil:
		dentryCache.Hits.Inc()
	case syscall.ENOENT:
		negativeCache.Hits.Inc()
	}
	return n, err
}

func (c *core) walkUncounted(p string, follow bool) (*inode, error) {
	if len(p) > maxPathLen {
		return nil, syscall.ENAMETOOLONG
	}
	root := c.inodes[sqlstore.Root]
	n := root
	comps := components(p)
	hops := 0
	for i := 0; i < len(comps); i++ {
		name := comps[i]
		if !n.isDir() {
			return nil, syscall.ENOTDIR
		}
		if name == ".." {
			n = c.inodes[n.parent]
			continue
		}
		if len(name) > maxNameLen {
			return nil, syscall.ENAMETOOLONG
		}
		ino, ok := n.children[name]
		if !ok {
			return nil, syscall.ENOENT
		}
		child := c.inodes[ino]
		if child.isSymlink() && (i < len(comps)-1 || follow) {
			if hops++; hops > maxSymlinks {
				return nil, syscall.ELOOP
			}
			rest := comps[i+1:]
			if strings.HasPrefix(child.target, "/") {
				n = root
			}
			comps = append(components(child.target), rest...)
			i = -1
			continue
		}
		n = child
	}
	return n, nil
}

// walkParent resolves the directory that holds p's last component.
func (c *core) walkParent(p string) (*inode, string, error) {
	if len(p) > maxPathLen {
		return nil, "", syscall.ENAMETOOLONG
	}
	p = Clean(p)
	dir, name := path.Split(p)
	if name == "" {
		return nil, "", syscall.EBUSY // the root itself
	}
	if err := checkName(name); err != nil {
		return nil, "", err
	}
	parent, err := c.walk(dir, true)
	if err != nil {
		return nil, "", err
	}
	if !parent.isDir() {
		return nil, "", syscall.ENOTDIR
	}
	return parent, name, nil
}

// pathError wraps an errno the way package os does.
func pathError(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &iofs.PathError{Op: op, Path: name, Err: err}
}
