package shell

import (
	"io/fs"
	"syscall"
	"time"
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
func (fi *fileInfo) Mode() fs.FileMode  { return modeFromUnix(fi.st.Mode) }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *fileInfo) IsDir() bool        { return fi.st.Mode&syscall.S_IFMT == syscall.S_IFDIR }
func (fi *fileInfo) Sys() any           { return &fi.st }

// Info, Type and the name make fileInfo usable as an fs.DirEntry too.
func (fi *fileInfo) Type() fs.FileMode          { return fi.Mode().Type() }
func (fi *fileInfo) Info() (fs.FileInfo, error) { return fi, nil }

// modeFromUnix converts st_mode to an fs.FileMode.
func modeFromUnix(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFDIR:
		mode |= fs.ModeDir
	case syscall.S_IFLNK:
		mode |= fs.ModeSymlink
	case syscall.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		mode |= fs.ModeSocket
	case syscall.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&syscall.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&syscall.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&syscall.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// unixPerm converts the permission and special bits of an fs.FileMode to
// st_mode bits.
func unixPerm(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= syscall.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		p |= syscall.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		p |= syscall.S_ISVTX
	}
	return p
}

func timespec(t time.Time) syscall.Timespec {
	return syscall.NsecToTimespec(t.UnixNano())
}

func pathErr(op, name string, errno syscall.Errno) error {
	return &fs.PathError{Op: op, Path: name, Err: errno}
}
