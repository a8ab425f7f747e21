package archive

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// Writer writes a tar stream from any tree: the host's (FileInfo.Sys is a
// *syscall.Stat_t) or the store's (*fs.Attr). Modes, numeric owners,
// times, symlinks, fifos and device nodes are recorded as they are (the
// reading side decides what to restore); a file with several names is
// stored once, later names as hard links to the first.
type Writer struct {
	tw    *tar.Writer
	opts  WriteOptions
	links map[[2]uint64]string // (dev, ino) → first name
	buf   []byte
}

// WriteOptions shape the stream; the zero value writes PAX with
// nanosecond times and numeric owners only.
type WriteOptions struct {
	// GNU writes the GNU format with whole-second times, as GNU tar -c does.
	GNU bool
	// Names, when set, gives the user and group names stored with ids.
	Names func(id uint32) string
}

// NewWriter returns a Writer on w; Close ends the stream.
func NewWriter(w io.Writer, opts WriteOptions) *Writer {
	return &Writer{tw: tar.NewWriter(w), opts: opts, links: map[[2]uint64]string{}, buf: make([]byte, 1<<20)}
}

// Close writes the end of the archive; it does not close the underlying
// writer.
func (w *Writer) Close() error { return w.tw.Close() }

// Add writes the member name ("/" is appended for a directory) described
// by fi, which must come from an lstat. readlink is called for a symlink,
// open for a regular file's data. A socket cannot be archived: Add returns
// ErrUnsupported and writes nothing.
func (w *Writer) Add(name string, fi fs.FileInfo, readlink func() (string, error), open func() (io.ReadCloser, error)) error {
	a, err := attrsOf(fi)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	h := &tar.Header{Name: name, Mode: int64(a.mode & 0o7777), Uid: int(a.uid), Gid: int(a.gid), ModTime: fi.ModTime(),
		AccessTime: a.atime, Format: tar.FormatPAX}
	if w.opts.GNU {
		h.Format, h.ModTime, h.AccessTime = tar.FormatGNU, h.ModTime.Truncate(time.Second), time.Time{}
	}
	if w.opts.Names != nil {
		h.Uname, h.Gname = w.opts.Names(a.uid), w.opts.Names(a.gid)
	}
	switch a.mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		h.Typeflag = tar.TypeDir
		if len(h.Name) == 0 || h.Name[len(h.Name)-1] != '/' {
			h.Name += "/"
		}
	case syscall.S_IFLNK:
		h.Typeflag = tar.TypeSymlink
		if h.Linkname, err = readlink(); err != nil {
			return err
		}
	case syscall.S_IFREG:
		key := [2]uint64{a.dev, a.ino}
		if first, ok := w.links[key]; ok && a.nlink > 1 {
			h.Typeflag, h.Linkname = tar.TypeLink, first
			break
		}
		if a.nlink > 1 {
			w.links[key] = h.Name
		}
		h.Typeflag, h.Size = tar.TypeReg, fi.Size()
	case syscall.S_IFIFO:
		h.Typeflag = tar.TypeFifo
	case syscall.S_IFCHR, syscall.S_IFBLK:
		h.Typeflag = tar.TypeChar
		if a.mode&syscall.S_IFMT == syscall.S_IFBLK {
			h.Typeflag = tar.TypeBlock
		}
		h.Devmajor, h.Devminor = int64(unix.Major(a.rdev)), int64(unix.Minor(a.rdev))
	default:
		return &MemberError{Name: name, Err: fmt.Errorf("socket: %w", ErrUnsupported)}
	}
	if err := w.tw.WriteHeader(h); err != nil {
		return err
	}
	if h.Typeflag != tar.TypeReg || h.Size == 0 {
		return nil
	}
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.CopyBuffer(w.tw, io.LimitReader(r, h.Size), w.buf)
	return err
}

// attrs are the stat fields a tar header needs.
type attrs struct {
	mode            uint32
	uid, gid        uint32
	dev, ino, nlink uint64
	rdev            uint64
	atime           time.Time
}

func attrsOf(fi fs.FileInfo) (attrs, error) {
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		return attrs{mode: st.Mode, uid: st.Uid, gid: st.Gid, dev: st.Dev, ino: st.Ino, nlink: st.Nlink,
			rdev: st.Rdev, atime: time.Unix(st.Atim.Unix())}, nil
	case *sfs.Attr:
		return attrs{mode: st.Mode, uid: st.Uid, gid: st.Gid, ino: st.Ino, nlink: uint64(st.Nlink),
			rdev: st.Rdev, atime: st.Atime}, nil
	}
	return attrs{}, fmt.Errorf("no stat attributes (%T)", fi.Sys())
}
