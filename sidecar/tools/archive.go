package tools

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// ImportStats counts what an import wrote.
type ImportStats struct {
	Files    int   `json:"files"`
	Dirs     int   `json:"dirs"`
	Symlinks int   `json:"symlinks"`
	Links    int   `json:"hardlinks"`
	Special  int   `json:"special"` // fifos and device nodes
	Bytes    int64 `json:"bytes"`
}

// ImportActor and ExportActor name bulk copies in the audit trail.
const (
	ImportActor = "import"
	ExportActor = "export"
)

// entryName maps a tar entry name to a workspace path below root. Leading
// slashes are dropped as tar does; ".." elements are refused.
func entryName(root, name string) (string, error) {
	for _, e := range strings.Split(name, "/") {
		if e == ".." {
			return "", fmt.Errorf("archive entry %q contains ..: %w", name, ErrEscape)
		}
	}
	return path.Join(root, path.Clean("/"+name)), nil
}

// tarPerm turns a tar header's mode (unix permission and special bits)
// into an io/fs mode.
func tarPerm(mode int64) fs.FileMode {
	m := fs.FileMode(mode) & fs.ModePerm
	if mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// Import unpacks a tar stream below dest (a tool path; "" is the root),
// preserving modes, owners, times, symlinks, hard links and special files.
// Existing files are replaced and existing directories merged into.
func (s *Service) Import(ctx context.Context, dest string, r io.Reader) (ImportStats, error) {
	st, err := s.importTar(ctx, dest, r)
	return st, classify(err)
}

type dirAttr struct {
	name         string
	perm         fs.FileMode
	atime, mtime time.Time
}

func (s *Service) importTar(ctx context.Context, dest string, r io.Reader) (ImportStats, error) {
	var st ImportStats
	fsys := s.view(ImportActor)
	root, err := resolve(fsys, dest, true)
	if err != nil {
		return st, err
	}
	if err := fsys.MkdirAll(root, 0o755); err != nil {
		return st, err
	}
	// Directories get their mode and times last: adding entries changes
	// the times, and a read-only mode would stop the adding.
	var dirs []dirAttr
	tr := tar.NewReader(r)
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, toolErr(CodeInvalid, err, "reading the archive: %v", err)
		}
		name, err := entryName(root, h.Name)
		if err != nil {
			return st, err
		}
		perm := tarPerm(h.Mode)
		if h.Typeflag == tar.TypeDir {
			if err := fsys.MkdirAll(name, 0o700); err != nil {
				return st, err
			}
			if err := chown(fsys, name, h); err != nil {
				return st, err
			}
			st.Dirs++
			dirs = append(dirs, dirAttr{name, perm, h.AccessTime, h.ModTime})
			continue
		}
		if err := makeRoom(fsys, name); err != nil {
			return st, err
		}
		switch h.Typeflag {
		case tar.TypeReg:
			n, err := copyIn(fsys, name, perm, tr, buf)
			st.Bytes += n
			if err != nil {
				return st, err
			}
			st.Files++
		case tar.TypeSymlink:
			if err := fsys.Symlink(h.Linkname, name); err != nil {
				return st, err
			}
			st.Symlinks++
			continue // the core has no lchown or lutimes
		case tar.TypeLink:
			target, err := entryName(root, h.Linkname)
			if err != nil {
				return st, err
			}
			if err := fsys.Link(target, name); err != nil {
				return st, err
			}
			st.Links++
			continue // the target's attributes are already set
		case tar.TypeFifo, tar.TypeChar, tar.TypeBlock:
			typ := map[byte]uint32{tar.TypeFifo: syscall.S_IFIFO, tar.TypeChar: syscall.S_IFCHR, tar.TypeBlock: syscall.S_IFBLK}[h.Typeflag]
			if err := fsys.Mknod(name, typ|uint32(h.Mode&0o7777), unix.Mkdev(uint32(h.Devmajor), uint32(h.Devminor))); err != nil {
				return st, err
			}
			st.Special++
		default:
			continue // sockets and vendor types have nothing to restore
		}
		if err := chown(fsys, name, h); err != nil {
			return st, err
		}
		if perm&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
			// Created with the permission bits; special bits may be dropped
			// on create like open(2) does.
			if err := fsys.Chmod(name, perm); err != nil {
				return st, err
			}
		}
		if err := fsys.Chtimes(name, h.AccessTime, h.ModTime); err != nil {
			return st, err
		}
	}
	// Deepest first: a parent's times are set after its children's.
	for _, d := range slices.Backward(dirs) {
		if err := fsys.Chmod(d.name, d.perm); err != nil {
			return st, err
		}
		if err := fsys.Chtimes(d.name, d.atime, d.mtime); err != nil {
			return st, err
		}
	}
	return st, nil
}

// chown sets a tar entry's owner; root-owned entries need nothing, as the
// importer creates files as root.
func chown(fsys FS, name string, h *tar.Header) error {
	if h.Uid == 0 && h.Gid == 0 {
		return nil
	}
	return fsys.Chown(name, h.Uid, h.Gid)
}

// makeRoom creates name's parent when the archive lacks it and removes a
// non-directory already at name, as tar does.
func makeRoom(fsys FS, name string) error {
	fi, err := fsys.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fsys.MkdirAll(path.Dir(name), 0o755)
	case err != nil:
		return err
	case fi.IsDir():
		return &fs.PathError{Op: "import", Path: name, Err: syscall.EISDIR}
	}
	return fsys.Remove(name)
}

func copyIn(fsys FS, name string, perm fs.FileMode, r io.Reader, buf []byte) (int64, error) {
	w, err := fsys.Create(name, perm)
	if err != nil {
		return 0, err
	}
	n, err := io.CopyBuffer(w, r, buf)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// CheckExport validates an export source before any byte is streamed.
func (s *Service) CheckExport(src string) error {
	fsys := s.view(ExportActor)
	name, err := resolve(fsys, src, true)
	if err != nil {
		return classify(err)
	}
	_, err = fsys.Stat(name)
	return classify(err)
}

// Export writes src (a tool path; "" is the root) as a PAX tar stream: a
// directory's contents with names relative to it, or a single file under
// its base name. Modes, owners, times, symlinks, hard links and special
// files are kept.
func (s *Service) Export(ctx context.Context, src string, w io.Writer) error {
	return classify(s.exportTar(ctx, src, w))
}

func (s *Service) exportTar(ctx context.Context, src string, w io.Writer) error {
	fsys := s.view(ExportActor)
	root, err := resolve(fsys, src, true)
	if err != nil {
		return err
	}
	fi, err := fsys.Stat(root)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	x := exporter{fsys: fsys, tw: tw, links: map[uint64]string{}, buf: make([]byte, 1<<20)}
	if !fi.IsDir() {
		if err := x.add(root, path.Base(root), fi); err != nil {
			return err
		}
		return tw.Close()
	}
	if err := x.add(root, ".", fi); err != nil {
		return err
	}
	_, err = walk(ctx, fsys, root, math.MaxInt, func(name, rel string, _ fs.DirEntry) (bool, error) {
		info, err := fsys.Lstat(name)
		if err != nil {
			return false, err
		}
		return false, x.add(name, rel, info)
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

type exporter struct {
	fsys  FS
	tw    *tar.Writer
	links map[uint64]string // inode → first name, for hard links
	buf   []byte
}

func (x *exporter) add(name, rel string, fi fs.FileInfo) error {
	a, ok := fi.Sys().(*sfs.Attr)
	if !ok {
		return fmt.Errorf("export %s: no core attributes", name)
	}
	h := &tar.Header{
		Name: rel, Mode: int64(a.Mode & 0o7777), Uid: int(a.Uid), Gid: int(a.Gid),
		ModTime: a.Mtime, AccessTime: a.Atime, Format: tar.FormatPAX,
	}
	switch a.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		h.Typeflag = tar.TypeDir
		h.Name += "/"
	case syscall.S_IFLNK:
		h.Typeflag = tar.TypeSymlink
		target, err := x.fsys.Readlink(name)
		if err != nil {
			return err
		}
		h.Linkname = target
	case syscall.S_IFREG:
		if first, ok := x.links[a.Ino]; ok {
			h.Typeflag, h.Linkname = tar.TypeLink, first
			break
		}
		if a.Nlink > 1 {
			x.links[a.Ino] = rel
		}
		h.Typeflag, h.Size = tar.TypeReg, a.Size
	case syscall.S_IFIFO, syscall.S_IFCHR, syscall.S_IFBLK:
		h.Typeflag = map[uint32]byte{syscall.S_IFIFO: tar.TypeFifo, syscall.S_IFCHR: tar.TypeChar, syscall.S_IFBLK: tar.TypeBlock}[a.Mode&syscall.S_IFMT]
		h.Devmajor, h.Devminor = int64(unix.Major(a.Rdev)), int64(unix.Minor(a.Rdev))
	default:
		return nil // sockets cannot be archived
	}
	if err := x.tw.WriteHeader(h); err != nil {
		return err
	}
	if h.Typeflag != tar.TypeReg {
		return nil
	}
	r, err := x.fsys.Open(name)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.CopyBuffer(x.tw, io.LimitReader(r, h.Size), x.buf)
	return err
}
