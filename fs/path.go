package fs

import (
	"errors"
	iofs "io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

const (
	// MaxNameLen is the longest name a path component may have (NAME_MAX).
	// There is no limit on a whole path.
	MaxNameLen = 255
	// MaxSymlinks is how many symlinks one resolution follows before ELOOP
	// (Linux's MAXSYMLINKS).
	MaxSymlinks = 40
	// maxTargetLen bounds a symlink's target, as PATH_MAX does symlink(2)'s.
	maxTargetLen  = 4095
	maxLinks      = 65000
	maxXattrName  = 255
	maxXattrValue = 64 << 10
)

// Clean turns a workspace path into its canonical form: absolute, no
// trailing slash, no "." or "..". "a/b" means "/a/b"; ".." above the root
// stays at the root, as "/.." does in POSIX. It is lexical: names for the
// policy and the audit trail, never for finding a file.
func Clean(p string) string { return path.Clean("/" + p) }

func checkName(name string) error {
	switch {
	case len(name) > MaxNameLen:
		return syscall.ENAMETOOLONG
	case name == "" || name == "." || name == "..":
		return syscall.EINVAL
	case strings.ContainsRune(name, 0):
		return syscall.EINVAL
	}
	return nil
}

// Namespace is a tree of nodes of type N that Resolve walks: the core's
// inodes, or a tree seen through paths (PathTree).
type Namespace[N any] interface {
	// Lookup finds name in directory dir. A missing name is an error
	// satisfying errors.Is(err, io/fs.ErrNotExist).
	Lookup(dir N, name string) (N, error)
	// Parent is the directory holding directory dir; the root's is itself
	// (or an error, for a tree that refuses climbing above its root).
	Parent(dir N) (N, error)
	// Root is where an absolute symlink target starts, and what of the
	// target remains to resolve from there.
	Root(target string) (N, string, error)
	IsDir(n N) bool
	// Link returns a symlink's target; ok is false for anything else.
	Link(n N) (target string, ok bool, err error)
}

// Resolution is where a path leads.
type Resolution[N any] struct {
	Node   N    // what the path names, when Exists
	Exists bool // false: Name is missing from Dir
	// Dir and Name are the directory and the component looked up last: the
	// place to create a missing name, or the entry to remove or rename.
	Dir  N
	Name string
	// Rest is what follows a missing Name, unresolved (or one whose
	// Lookup failed).
	Rest []string
}

// Resolve walks p from start the way the kernel does: every symlink in the
// middle is followed, the last one too when followLast; ".." is the
// physical parent of the directory reached so far (so "l/.." with l a
// link to a/b is a); a non-directory before "/" is ENOTDIR; more than
// MaxSymlinks links is ELOOP; a component over MaxNameLen bytes is
// ENAMETOOLONG; a trailing slash follows the last component and requires
// a directory. An absolute p is resolved from start too: the caller
// passes the root for it. A missing component ends the walk without error,
// with Exists false.
func Resolve[N any](ns Namespace[N], start N, p string, followLast bool) (Resolution[N], error) {
	res := Resolution[N]{Node: start, Exists: true, Dir: start}
	cur := start
	comps := splitPath(p)
	mustDir := strings.HasSuffix(p, "/") && len(comps) > 0
	followLast = followLast || mustDir
	for i, hops := 0, 0; i < len(comps); i++ {
		name := comps[i]
		if !ns.IsDir(cur) {
			return res, syscall.ENOTDIR
		}
		if len(name) > MaxNameLen {
			return res, syscall.ENAMETOOLONG
		}
		res.Dir, res.Name = cur, name
		switch name {
		case ".":
			continue
		case "..":
			parent, err := ns.Parent(cur)
			if err != nil {
				return res, err
			}
			cur = parent
			continue
		}
		next, err := ns.Lookup(cur, name)
		if errors.Is(err, iofs.ErrNotExist) {
			var none N
			res.Node, res.Exists, res.Rest = none, false, comps[i+1:]
			return res, nil
		}
		if err != nil {
			res.Rest = comps[i+1:]
			return res, err
		}
		if i < len(comps)-1 || followLast {
			target, isLink, err := ns.Link(next)
			if err != nil {
				return res, err
			}
			if isLink {
				if hops++; hops > MaxSymlinks {
					return res, syscall.ELOOP
				}
				if target == "" {
					return res, syscall.ENOENT
				}
				if target[0] == '/' {
					if cur, target, err = ns.Root(target); err != nil {
						return res, err
					}
				}
				comps = append(splitPath(target), comps[i+1:]...)
				i = -1
				continue
			}
		}
		cur = next
	}
	if mustDir && !ns.IsDir(cur) {
		return res, syscall.ENOTDIR
	}
	res.Node = cur
	return res, nil
}

// splitPath splits p at slashes, dropping empty components.
func splitPath(p string) []string {
	var out []string
	for s := range strings.SplitSeq(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// PathNode is a node of a PathTree: its physical path (no symlinks, no
// dots) and what lstat said of it.
type PathNode struct {
	Path string
	Info iofs.FileInfo
}

// PathTree is a tree seen only through lstat and readlink of clean
// absolute paths (the shell's namespace, the tools' view of the
// workspace), resolved by the same rules as the core's own paths.
type PathTree struct {
	Lstat    func(p string) (iofs.FileInfo, error)
	Readlink func(p string) (string, error)
	// Abs maps an absolute symlink target to a path of the tree; nil
	// takes targets as paths of the tree.
	Abs func(target string) (string, error)
	// AboveRoot, when set, is the error for ".." at the root, which
	// otherwise stays at the root.
	AboveRoot func() error
	// MissingDirs lets a missing directory end resolution, the rest
	// joined on as it is, for callers that create it; otherwise it is
	// ENOENT, as in the kernel.
	MissingDirs bool
}

var rootInfo = newFileInfo("/", Attr{Mode: syscall.S_IFDIR | 0o755})

// Resolve resolves p (absolute, or relative to the root) and returns the
// physical path it names. A missing last component is joined on, so a
// caller can create it (see MissingDirs for missing directories).
func (t PathTree) Resolve(p string, followLast bool) (string, error) {
	res, err := Resolve[PathNode](t, PathNode{Path: "/", Info: rootInfo}, p, followLast)
	switch {
	case err != nil:
		return "", err
	case res.Exists:
		return res.Node.Path, nil
	case len(res.Rest) > 0 && !t.MissingDirs:
		return "", syscall.ENOENT
	}
	return path.Join(append([]string{res.Dir.Path, res.Name}, res.Rest...)...), nil
}

func (t PathTree) Lookup(dir PathNode, name string) (PathNode, error) {
	p := path.Join(dir.Path, name)
	fi, err := t.Lstat(p)
	return PathNode{Path: p, Info: fi}, err
}

func (t PathTree) Parent(dir PathNode) (PathNode, error) {
	if dir.Path == "/" {
		if t.AboveRoot != nil {
			return dir, t.AboveRoot()
		}
		return dir, nil
	}
	// A path of directories reached physically: its lexical parent is
	// its real one.
	return PathNode{Path: path.Dir(dir.Path), Info: rootInfo}, nil
}

func (t PathTree) Root(target string) (PathNode, string, error) {
	if t.Abs != nil {
		var err error
		if target, err = t.Abs(target); err != nil {
			return PathNode{}, "", err
		}
	}
	return PathNode{Path: "/", Info: rootInfo}, target, nil
}

func (t PathTree) IsDir(n PathNode) bool { return n.Info.IsDir() }

func (t PathTree) Link(n PathNode) (string, bool, error) {
	if n.Info.Mode()&iofs.ModeSymlink == 0 {
		return "", false, nil
	}
	target, err := t.Readlink(n.Path)
	return target, err == nil, err
}

// A lookup in a directory whose entries are in RAM finds a name (a dentry
// hit) or learns it is absent (a negative hit); reading a directory's
// entries from the store counts as a dentry miss.
var (
	dentryCache   = metrics.Cache("dentry")
	negativeCache = metrics.Cache("negative")
)

// reached is an inode the resolver reached and the physical path it
// reached it at (no symlink, no dot): the path the policy and the audit
// trail name.
type reached struct {
	*inode
	path string
}

// childPath is the path of name in directory dir.
func childPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// inodes is the core's tree as a Namespace, the policy's hidden rules
// refusing every name it reaches that they hide, present or not. Used
// with c.mu held.
type inodes struct{ c *core }

func (ns inodes) Lookup(dir reached, name string) (reached, error) {
	p := childPath(dir.path, name)
	// Every directory above p was reached, and checked, on the way here.
	if r := ns.c.rules.checkOne(p); r != nil {
		return reached{}, r
	}
	if err := ns.c.loadDir(dir.inode); err != nil {
		return reached{}, err
	}
	ino, ok := dir.children[name]
	if !ok {
		negativeCache.Hits.Inc()
		return reached{}, syscall.ENOENT
	}
	dentryCache.Hits.Inc()
	return reached{ns.c.inodes[ino], p}, nil
}

func (ns inodes) Parent(dir reached) (reached, error) {
	return reached{ns.c.inodes[dir.parent], path.Dir(dir.path)}, nil
}

func (ns inodes) Root(target string) (reached, string, error) {
	return ns.c.root(), target, nil
}

func (inodes) IsDir(n reached) bool { return n.isDir() }

func (inodes) Link(n reached) (string, bool, error) { return n.target, n.isSymlink(), nil }

func (c *core) root() reached { return reached{c.inodes[sqlstore.Root], "/"} }

// resolve resolves p from the root. A change passes at: the physical path
// of the entry it acts on is stored there (for the audit trail, also when
// refused), and the read-only rules apply to it. A refusal is a *refusal.
// Called with c.mu held.
func (c *core) resolve(p string, followLast bool, at *string) (Resolution[reached], error) {
	res, err := Resolve[reached](inodes{c}, c.root(), p, followLast)
	var r *refusal
	if err != nil && errors.As(err, &r) && len(res.Rest) > 0 {
		// Name the whole path being taken, not only where it was stopped.
		r.path += "/" + strings.Join(res.Rest, "/")
	}
	if at == nil {
		if err == nil && res.Exists {
			if err := c.otherNamesRefusal(res.Node.inode, false); err != nil {
				return res, err
			}
		}
		return res, err
	}
	switch {
	case r != nil:
		*at = r.path
	case err != nil:
	case res.Exists:
		*at = res.Node.path
	default:
		*at = childPath(res.Dir.path, res.Name)
	}
	if err == nil {
		if r := c.rules.check(*at, true); r != nil {
			return res, r
		}
	}
	return res, err
}

// walk resolves p to an existing inode, as resolve does. Called with c.mu held.
func (c *core) walk(p string, follow bool, at *string) (*inode, error) {
	res, err := c.resolve(p, follow, at)
	switch {
	case err != nil:
		return nil, err
	case !res.Exists:
		return nil, syscall.ENOENT
	}
	return res.Node.inode, nil
}

// walkParent resolves the directory that holds p's last component, which
// it does not follow, and that component's name, for a change (see resolve).
func (c *core) walkParent(p string, at *string) (*inode, string, error) {
	res, err := c.resolve(p, false, at)
	switch {
	case err != nil:
		return nil, "", err
	case len(res.Rest) > 0:
		return nil, "", syscall.ENOENT
	case res.Name == "":
		return nil, "", syscall.EBUSY // the root itself
	}
	if err := checkName(res.Name); err != nil {
		return nil, "", err
	}
	return res.Dir.inode, res.Name, nil
}

// pathError wraps an errno the way package os does.
func pathError(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &iofs.PathError{Op: op, Path: name, Err: err}
}
