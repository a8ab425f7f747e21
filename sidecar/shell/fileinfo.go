package shell

import (
	"io/fs"
	"syscall"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// fileInfo is the fs.FileInfo every mount of the shell's filesystem returns.
// Sys is a *syscall.Stat_t, as for host files on Linux, so commands (ls -i,
// stat) and the interpreter's `[[ -O f ]]`, which type-asserts it, work the
// same whatever the mount.
type fileInfo struct {
	name string
	st   syscall.Stat_t
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) Mode() fs.FileMode  { return sfs.FileMode(fi.st.Mode) }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *fileInfo) IsDir() bool        { return fi.st.Mode&syscall.S_IFMT == syscall.S_IFDIR }
func (fi *fileInfo) Sys() any           { return &fi.st }

// Info, Type and the name make fileInfo usable as an fs.DirEntry too.
func (fi *fileInfo) Type() fs.FileMode          { return fi.Mode().Type() }
func (fi *fileInfo) Info() (fs.FileInfo, error) { return fi, nil }

func timespec(t time.Time) syscall.Timespec {
	return syscall.NsecToTimespec(t.UnixNano())
}

func pathErr(op, name string, errno syscall.Errno) error {
	return &fs.PathError{Op: op, Path: name, Err: errno}
}
