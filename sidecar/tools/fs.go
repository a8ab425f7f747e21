package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"syscall"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
)

// FS is the part of the filesystem core the tools use. Names are workspace
// paths: absolute, "/" is the workspace root. Errors are *fs.PathError
// wrapping a syscall.Errno, as the core returns them.
type FS interface {
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Readlink(name string) (string, error)
	ReadFile(name string) ([]byte, error)
	// Open opens a file for reading.
	Open(name string) (io.ReadCloser, error)
	// Create opens a file for writing, creating or truncating it.
	Create(name string, perm fs.FileMode) (io.WriteCloser, error)
	// WriteFile replaces name's content, creating it; content the quota
	// refuses leaves an existing file as it was.
	WriteFile(name string, data []byte, perm fs.FileMode) error
	Mkdir(name string, perm fs.FileMode) error
	MkdirAll(name string, perm fs.FileMode) error
	Remove(name string) error
	RemoveAll(name string) error
	Symlink(target, name string) error
	Link(oldname, newname string) error
	Rename(oldname, newname string) error
	Chmod(name string, mode fs.FileMode) error
	Chown(name string, uid, gid int) error
	Chtimes(name string, atime, mtime time.Time) error
	// Mknod makes a special file; mode holds st_mode type and permission bits.
	Mknod(name string, mode uint32, dev uint64) error
}

// ErrEscape is wrapped by every refusal of a path that leaves the workspace.
var ErrEscape = errors.New("path escapes the workspace")

// Clean turns a tool path into a workspace path. Tools take paths relative
// to the workspace ("src/a.go") or under sidecar.WorkspaceDir
// ("/workspace/src/a.go"); other absolute paths are host paths and are
// refused, as is any ".." that climbs above the workspace root.
func Clean(p string) (string, error) {
	if p == "" {
		p = "."
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%q: NUL byte in path: %w", p, ErrEscape)
	}
	if strings.HasPrefix(p, "/") {
		name, ok := underWorkspace(p)
		if !ok {
			return "", fmt.Errorf("%q is an absolute path outside %s; use a path relative to the workspace or under %s: %w",
				p, sidecar.WorkspaceDir, sidecar.WorkspaceDir, ErrEscape)
		}
		return name, nil
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%q climbs above the workspace root: %w", p, ErrEscape)
	}
	if c == "." {
		return "/", nil
	}
	return "/" + c, nil
}

// underWorkspace maps an absolute path under sidecar.WorkspaceDir to the
// workspace path it names ("/workspace/a" is "/a").
func underWorkspace(abs string) (string, bool) {
	c := path.Clean(abs)
	switch {
	case c == sidecar.WorkspaceDir:
		return "/", true
	case strings.HasPrefix(c, sidecar.WorkspaceDir+"/"):
		return strings.TrimPrefix(c, sidecar.WorkspaceDir), true
	}
	return "", false
}

// display turns a workspace path back into the form the model should use.
func display(name string) string {
	if name == "/" {
		return "."
	}
	return strings.TrimPrefix(name, "/")
}

// resolve checks p as Clean does and resolves it by the fs core's rules
// (sfs.Resolve: ".." physical, ELOOP, ENOTDIR) with the workspace as root:
// an absolute target under /workspace stays inside, any other absolute
// target or a ".." above the root is refused. The last element is followed
// only when follow is set. A missing element ends resolution (the rest is
// returned as is) so callers can create it.
func resolve(fsys FS, p string, follow bool) (string, error) {
	if _, err := Clean(p); err != nil {
		return "", err
	}
	// Clean is lexical; the resolver needs the dots where they were.
	raw := p
	if strings.HasPrefix(p, "/") {
		raw = strings.TrimPrefix(p, sidecar.WorkspaceDir)
	}
	tree := sfs.PathTree{
		Lstat:    fsys.Lstat,
		Readlink: fsys.Readlink,
		Abs: func(target string) (string, error) {
			name, ok := underWorkspace(target)
			if !ok {
				return "", fmt.Errorf("%q: a symlink on the way points to %q, outside the workspace: %w", p, target, ErrEscape)
			}
			return name, nil
		},
		AboveRoot: func() error {
			return fmt.Errorf("%q: a symlink on the way climbs above the workspace root: %w", p, ErrEscape)
		},
		MissingDirs: true,
	}
	name, err := tree.Resolve(raw, follow)
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return "", &fs.PathError{Op: "resolve", Path: p, Err: errno}
	}
	return name, err
}
