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

// maxSymlinkHops bounds symlink resolution like the kernel's ELOOP limit.
const maxSymlinkHops = 40

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

// resolve cleans p and resolves every symlink on the way with the workspace
// as root: an absolute target under /workspace stays inside, any other
// absolute target or a relative one climbing above the root is refused.
// The last element is followed only when follow is set. A missing element
// ends resolution (the rest is returned as is) so callers can create it.
func resolve(fsys FS, p string, follow bool) (string, error) {
	name, err := Clean(p)
	if err != nil {
		return "", err
	}
	hops := 0
	done := "/"
	rest := strings.Split(strings.TrimPrefix(name, "/"), "/")
	if name == "/" {
		rest = nil
	}
	for len(rest) > 0 {
		elem := rest[0]
		rest = rest[1:]
		next := path.Join(done, elem)
		if len(rest) == 0 && !follow {
			done = next
			break
		}
		fi, err := fsys.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return path.Join(append([]string{next}, rest...)...), nil
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("%q: more than %d symlinks to follow: %w", p, maxSymlinkHops, syscall.ELOOP)
		}
		target, err := fsys.Readlink(next)
		if err != nil {
			return "", err
		}
		var base string
		if strings.HasPrefix(target, "/") {
			var ok bool
			if base, ok = underWorkspace(target); !ok {
				return "", fmt.Errorf("%q: symlink %s points to %q, outside the workspace: %w", p, display(next), target, ErrEscape)
			}
		} else {
			// Check the climb before path.Join hides it at the root.
			depth := strings.Count(done, "/")
			if done == "/" {
				depth = 0
			}
			for _, e := range strings.Split(target, "/") {
				switch e {
				case "..":
					depth--
				case "", ".":
				default:
					depth++
				}
				if depth < 0 {
					return "", fmt.Errorf("%q: symlink %s points to %q, outside the workspace: %w", p, display(next), target, ErrEscape)
				}
			}
			base = path.Join(done, target)
		}
		// Restart from the link target with the remaining elements.
		rest = append(strings.Split(strings.TrimPrefix(base, "/"), "/"), rest...)
		if base == "/" {
			rest = rest[1:]
		}
		done = "/"
	}
	return done, nil
}
