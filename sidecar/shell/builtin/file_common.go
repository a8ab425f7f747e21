package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// fileStat returns the stat_t behind fi, or a zero one for FileInfos that
// carry none.
func fileStat(fi fs.FileInfo) *syscall.Stat_t {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st
	}
	st := &syscall.Stat_t{Size: fi.Size(), Nlink: 1}
	st.Mtim = syscall.NsecToTimespec(fi.ModTime().UnixNano())
	st.Atim, st.Ctim = st.Mtim, st.Mtim
	st.Blocks = (fi.Size() + 511) / 512
	return st
}

func statTime(ts syscall.Timespec) time.Time { return time.Unix(ts.Unix()) }

// fileUser names a uid the way ls and stat do. The shell has no user
// database: root is root and every other id prints as a number.
func fileUser(id uint32) string {
	if id == 0 {
		return "root"
	}
	return strconv.FormatUint(uint64(id), 10)
}

// fileModeString is ls -l's ten-character mode.
func fileModeString(m fs.FileMode) string {
	var b [10]byte
	switch {
	case m.IsDir():
		b[0] = 'd'
	case m&fs.ModeSymlink != 0:
		b[0] = 'l'
	case m&fs.ModeNamedPipe != 0:
		b[0] = 'p'
	case m&fs.ModeSocket != 0:
		b[0] = 's'
	case m&fs.ModeCharDevice != 0:
		b[0] = 'c'
	case m&fs.ModeDevice != 0:
		b[0] = 'b'
	default:
		b[0] = '-'
	}
	const rwx = "rwxrwxrwx"
	for i := 0; i < 9; i++ {
		if m&(1<<uint(8-i)) != 0 {
			b[i+1] = rwx[i]
		} else {
			b[i+1] = '-'
		}
	}
	special := func(i int, set bool, lower, upper byte) {
		if !set {
			return
		}
		if b[i] == 'x' {
			b[i] = lower
		} else {
			b[i] = upper
		}
	}
	special(3, m&fs.ModeSetuid != 0, 's', 'S')
	special(6, m&fs.ModeSetgid != 0, 's', 'S')
	special(9, m&fs.ModeSticky != 0, 't', 'T')
	return string(b[:])
}

// fileHuman is the -h size format of ls and du: one decimal below 10,
// rounded up, as GNU does.
func fileHuman(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10)
	}
	f := float64(n)
	units := "KMGTPE"
	i := -1
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f < 10 {
		v := float64(int64(f*10+0.9999999)) / 10
		if v >= 10 {
			return fmt.Sprintf("%.0f%c", v, units[i])
		}
		return fmt.Sprintf("%.1f%c", v, units[i])
	}
	return fmt.Sprintf("%.0f%c", float64(int64(f+0.9999999)), units[i])
}

// fileExists reports whether name exists without following a last symlink.
func fileExists(env *Env, name string) bool {
	_, err := env.FS.Lstat(name)
	return err == nil
}

// fileCopyData copies src's contents to dst, creating or truncating it
// with perm.
func fileCopyData(ctx context.Context, env *Env, src, dst string, perm fs.FileMode) error {
	in, err := env.FS.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := env.FS.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, ctxReader{ctx, in}); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// fileIsErrno reports whether err carries errno.
func fileIsErrno(err error, errno syscall.Errno) bool {
	return errors.Is(err, errno)
}

// fileSame reports whether two FileInfos are the same inode.
func fileSame(a, b fs.FileInfo) bool {
	sa, sb := fileStat(a), fileStat(b)
	return sa.Ino != 0 && sa.Ino == sb.Ino && sa.Dev == sb.Dev
}

// fileJoin joins a directory operand and a name the way coreutils print
// it: "dir/name", without doubling a trailing slash.
func fileJoin(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// fileBase is the last element of an operand, ignoring trailing slashes.
func fileBase(name string) string {
	return path.Base(strings.TrimRight(name, "/"))
}
