package shell

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// DefaultActor is whom the audit trail names for changes the shell backend
// makes when Options.Actor is empty.
const DefaultActor = "exec:shell"

// New returns a shell backend over the workspace fsys. The caller keeps
// ownership of fsys and closes it after the backend.
func New(fsys *sfs.FS, opts Options) *Backend {
	actor := opts.Actor
	if actor == "" {
		actor = DefaultActor
	}
	return newBackend(storeTree{fsys.WithActor(actor)}, opts)
}

// storeTree is the workspace: the fs core, whose root is /workspace.
type storeTree struct {
	f *sfs.FS
}

// actorTree is a tree whose changes can be audited under another name.
type actorTree interface {
	withActor(actor string) tree
}

func (t storeTree) withActor(actor string) tree { return storeTree{t.f.WithActor(actor)} }

func attrInfo(name string, a sfs.Attr) *fileInfo {
	fi := &fileInfo{name: path.Base(name)}
	fi.st.Ino = a.Ino
	fi.st.Mode = a.Mode
	fi.st.Nlink = uint64(a.Nlink)
	fi.st.Uid = a.Uid
	fi.st.Gid = a.Gid
	fi.st.Size = a.Size
	fi.st.Rdev = a.Rdev
	fi.st.Blksize = 4096
	fi.st.Blocks = a.Blocks()
	fi.st.Atim = timespec(a.Atime)
	fi.st.Mtim = timespec(a.Mtime)
	fi.st.Ctim = timespec(a.Ctime)
	return fi
}

func (t storeTree) Lstat(name string) (fs.FileInfo, error) {
	a, err := t.f.Lstat(name)
	if err != nil {
		return nil, err
	}
	return attrInfo(name, a), nil
}

func (t storeTree) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, attrs, err := t.f.ReadDirAttrs(name)
	if err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, len(ents))
	for i, e := range ents {
		a := attrs[i]
		if a.Ino == 0 {
			// Removed between the listing and the attributes: the type
			// from the listing is all there is.
			a = sfs.Attr{Ino: e.Ino, Mode: e.Mode}
		}
		out[i] = attrInfo(e.Name, a)
	}
	return out, nil
}

func (t storeTree) OpenFile(name string, flag int, perm fs.FileMode) (builtin.File, error) {
	f, err := t.f.OpenFile(name, flag, sfs.UnixPerm(perm))
	if err != nil {
		return nil, err
	}
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		return storeFile{f}, nil
	}
	// Commands read with small buffers (io.ReadAll starts at 512 bytes)
	// and every read of a chunk not in RAM is a store query: read whole
	// chunks, or the whole file when it is smaller.
	size := t.f.ChunkSize()
	if a, err := f.Stat(); err == nil && a.Size < size {
		size = max(a.Size+1, 16)
	}
	return &bufferedFile{storeFile: storeFile{f}, r: bufio.NewReaderSize(f, int(size))}, nil
}

// bufferedFile is a read-only store file read through a buffer.
type bufferedFile struct {
	storeFile
	r *bufio.Reader
}

func (f *bufferedFile) Read(p []byte) (int, error) { return f.r.Read(p) }

// WriteTo lets io.Copy drain the buffer instead of allocating its own.
func (f *bufferedFile) WriteTo(w io.Writer) (int64, error) { return f.r.WriteTo(w) }

func (t storeTree) Mkdir(name string, perm fs.FileMode) error {
	return t.f.Mkdir(name, sfs.UnixPerm(perm))
}

func (t storeTree) Remove(name string) error               { return t.f.Remove(name) }
func (t storeTree) Rename(oldname, newname string) error   { return t.f.Rename(oldname, newname) }
func (t storeTree) Symlink(target, name string) error      { return t.f.Symlink(target, name) }
func (t storeTree) Readlink(name string) (string, error)   { return t.f.Readlink(name) }
func (t storeTree) Link(oldname, newname string) error     { return t.f.Link(oldname, newname) }
func (t storeTree) Truncate(name string, size int64) error { return t.f.Truncate(name, size) }

func (t storeTree) Chmod(name string, mode fs.FileMode) error {
	return t.f.Chmod(name, sfs.UnixPerm(mode))
}

func (t storeTree) Chtimes(name string, atime, mtime time.Time) error {
	return t.f.Chtimes(name, atime, mtime)
}

// storeFile adapts the fs core's *File to builtin.File.
type storeFile struct {
	*sfs.File
}

func (f storeFile) Stat() (fs.FileInfo, error) {
	a, err := f.File.Stat()
	if err != nil {
		return nil, err
	}
	return attrInfo(f.Name(), a), nil
}
