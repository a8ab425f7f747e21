package js

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"

	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// The fs natives work on the shell's filesystem (builtin.FS), so every
// change goes through the fs core under the exec's actor and write budget.
// They are synchronous and throw Node's errors; the prelude builds the
// promise and callback forms over them.

// umask is the file mode creation mask programs run with, as Node's
// default under a login shell.
const umask = 0o022

// uvErrors are libuv's messages, which Node puts in its error messages.
var uvErrors = map[syscall.Errno]string{
	syscall.ENOENT:       "no such file or directory",
	syscall.EEXIST:       "file already exists",
	syscall.ENOTDIR:      "not a directory",
	syscall.EISDIR:       "illegal operation on a directory",
	syscall.ENOTEMPTY:    "directory not empty",
	syscall.EACCES:       "permission denied",
	syscall.EPERM:        "operation not permitted",
	syscall.EINVAL:       "invalid argument",
	syscall.EBADF:        "bad file descriptor",
	syscall.ELOOP:        "too many symbolic links encountered",
	syscall.EXDEV:        "cross-device link not permitted",
	syscall.EROFS:        "read-only file system",
	syscall.ENOSPC:       "no space left on device",
	syscall.EFBIG:        "file too large",
	syscall.ENAMETOOLONG: "name too long",
	syscall.EBUSY:        "resource busy or locked",
}

var errnoNames = map[syscall.Errno]string{
	syscall.ENOENT: "ENOENT", syscall.EEXIST: "EEXIST", syscall.ENOTDIR: "ENOTDIR",
	syscall.EISDIR: "EISDIR", syscall.ENOTEMPTY: "ENOTEMPTY", syscall.EACCES: "EACCES",
	syscall.EPERM: "EPERM", syscall.EINVAL: "EINVAL", syscall.EBADF: "EBADF",
	syscall.ELOOP: "ELOOP", syscall.EXDEV: "EXDEV", syscall.EROFS: "EROFS",
	syscall.ENOSPC: "ENOSPC", syscall.EFBIG: "EFBIG", syscall.ENAMETOOLONG: "ENAMETOOLONG",
	syscall.EIO: "EIO", syscall.EDQUOT: "EDQUOT", syscall.EBUSY: "EBUSY",
}

// throwFS throws err as Node's fs errors look: code, errno, syscall, path
// (and dest for two-path calls), message "CODE: text, syscall 'path'".
func (v *vm) throwFS(err error, call, p string, dest ...string) {
	errno := syscall.EIO
	if e, ok := errors.AsType[syscall.Errno](err); ok {
		errno = e
	}
	code := errnoNames[errno]
	if code == "" {
		code = "E" + strings.ToUpper(strings.ReplaceAll(errno.Error(), " ", "_"))
	}
	text := uvErrors[errno]
	if text == "" {
		text = errno.Error()
	}
	msg := fmt.Sprintf("%s: %s, %s", code, text, call)
	if p != "" {
		msg += fmt.Sprintf(" '%s'", p)
	}
	if len(dest) > 0 {
		msg += fmt.Sprintf(" -> '%s'", dest[0])
	}
	e, _ := v.rt.New(v.rt.Get("Error"), v.rt.ToValue(msg))
	_ = e.Set("errno", -int(errno))
	_ = e.Set("code", code)
	_ = e.Set("syscall", call)
	if p != "" { // calls on a descriptor (read, write) name no path, as Node's
		_ = e.Set("path", p)
	}
	if len(dest) > 0 {
		_ = e.Set("dest", dest[0])
	}
	panic(e)
}

func (v *vm) abs(base, name string) string {
	if path.IsAbs(name) {
		return path.Clean(name)
	}
	if base == "" {
		base = v.cwd
	}
	return path.Join(base, name)
}

// resolve makes a program's path absolute. As the kernel does, an empty
// path names nothing and a trailing slash needs a directory.
func (v *vm) resolve(call, p string) string {
	if p == "" {
		v.throwFS(syscall.ENOENT, call, p)
	}
	abs := v.abs(v.cwd, p)
	if strings.HasSuffix(p, "/") && abs != "/" {
		if fi, err := v.env.FS.Stat(abs); err == nil && !fi.IsDir() {
			v.throwFS(syscall.ENOTDIR, call, p)
		}
	}
	return abs
}

// follow resolves a path whose final symlinks the call follows: as
// resolve, and a symlink target ending in "/" needs a directory.
func (v *vm) follow(call, p string) string {
	abs := v.resolve(call, p)
	if err := slashErr(v.env.FS, abs, os.O_RDONLY); err != nil {
		v.throwFS(err, call, p)
	}
	return abs
}

// checkingFS is a file system that can check a path's final symlinks
// (slashErr) where the file is, with the call that follows them: the
// worker's, where the check would otherwise be round trips of its own.
type checkingFS interface {
	// checking returns the file system whose Stat, ReadDir, Chmod,
	// Chtimes, Truncate and OpenFile fail first as slashErr would (for
	// OpenFile with its flag).
	checking() builtin.FS
}

// followed is follow for a call made on the file system it returns,
// which has made or will make follow's checks.
func (v *vm) followed(call, p string) (builtin.FS, string) {
	if c, ok := v.env.FS.(checkingFS); ok {
		return c.checking(), v.resolve(call, p)
	}
	return v.env.FS, v.follow(call, p)
}

// created is createPath as followed is follow.
func (v *vm) created(call, p string, flag int) (builtin.FS, string) {
	if c, ok := v.env.FS.(checkingFS); ok {
		return c.checking(), v.createName(call, p, flag)
	}
	return v.env.FS, v.createPath(call, p, flag)
}

// createPath resolves a path a file is to be created at: a trailing slash
// makes that EISDIR, as open(2) with O_CREAT.
func (v *vm) createPath(call, p string, flag int) string {
	abs := v.createName(call, p, flag)
	if err := slashErr(v.env.FS, abs, flag); err != nil {
		v.throwFS(err, call, p)
	}
	return abs
}

// createName is createPath without the checks of the final symlinks
// (slashErr), which a wholeFS makes where the file is.
func (v *vm) createName(call, p string, flag int) string {
	if flag&os.O_CREATE != 0 && strings.HasSuffix(p, "/") {
		v.throwFS(syscall.EISDIR, call, p)
	}
	return v.resolve(call, p)
}

// maxSymlinks is how many symlinks one lookup follows, as Linux.
const maxSymlinks = 40

// parentErr is how resolving the directory that holds abs fails, if it
// does.
func parentErr(fsys builtin.FS, abs string) error {
	fi, err := fsys.Stat(path.Dir(strings.TrimRight(abs, "/")))
	if err == nil && !fi.IsDir() {
		err = syscall.ENOTDIR
	}
	return err
}

// notAName reports whether p ends in ".", ".." or is the root, which
// rename(2) cannot move or replace.
func notAName(p string) bool {
	p = strings.TrimRight(p, "/")
	base := p[strings.LastIndex(p, "/")+1:]
	return base == "" || base == "." || base == ".."
}

// holds reports whether the directory named dir (not followed) is src's
// parent or one of its ancestors.
func holds(fsys builtin.FS, dir, src string) bool {
	if fi, err := fsys.Lstat(dir); err != nil || !fi.IsDir() {
		return false
	}
	d, err := realpath(fsys, dir)
	if err != nil {
		return false
	}
	parent, err := realpath(fsys, path.Dir(strings.TrimRight(src, "/")))
	if err != nil {
		return false
	}
	return parent == d || strings.HasPrefix(parent, strings.TrimSuffix(d, "/")+"/")
}

// slashErr is how opening abs with flag fails when following its final
// symlinks meets one whose target ends in "/": the kernel then treats the
// name as having a trailing slash (open with O_CREAT is EISDIR, anything
// but a directory there ENOTDIR). Otherwise it is nil.
func slashErr(fsys builtin.FS, abs string, flag int) error {
	if !slashTarget(fsys, abs) {
		return nil
	}
	if flag&os.O_CREATE != 0 {
		return syscall.EISDIR
	}
	if fi, err := fsys.Stat(abs); err == nil && !fi.IsDir() {
		return syscall.ENOTDIR
	}
	return nil
}

func slashTarget(fsys builtin.FS, abs string) bool {
	for range maxSymlinks {
		fi, err := fsys.Lstat(abs)
		if err != nil || fi.Mode()&iofs.ModeSymlink == 0 {
			return false
		}
		target, err := fsys.Readlink(abs)
		if err != nil {
			return false
		}
		if strings.HasSuffix(target, "/") {
			return true
		}
		if !path.IsAbs(target) {
			target = path.Dir(abs) + "/" + target
		}
		abs = target
	}
	return false
}

// lstat is lstat(2) of abs, named p by the program: a trailing slash
// follows a final symlink and needs a directory.
func (v *vm) lstat(abs, p string) (iofs.FileInfo, error) {
	if !strings.HasSuffix(p, "/") {
		return v.env.FS.Lstat(abs)
	}
	fi, err := v.env.FS.Stat(abs)
	if err == nil && !fi.IsDir() {
		err = syscall.ENOTDIR
	}
	return fi, err
}

// dirPath resolves a path whose trailing slash, if any, the call itself
// judges (mkdir, rename, symlink, lstat).
func (v *vm) dirPath(call, p string) string {
	if p == "" {
		v.throwFS(syscall.ENOENT, call, p)
	}
	return v.abs(v.cwd, p)
}

func (v *vm) chdir(dir string) { v.cwd = v.workDir(dir) }

// workDir resolves a directory a program changes to or runs a command in,
// failing as chdir(2) does when it is not one.
func (v *vm) workDir(dir string) string {
	p := v.resolve("chdir", dir)
	fi, err := v.env.FS.Stat(p)
	if err == nil && !fi.IsDir() {
		err = syscall.ENOTDIR
	}
	if err != nil {
		v.throwFS(err, "chdir", dir)
	}
	return p
}

// openFlags turns Node's flags ("r", "w+", "ax", or a number) into os.O_*.
func openFlags(flag goja.Value) (int, error) {
	if flag == nil || goja.IsUndefined(flag) || goja.IsNull(flag) {
		return os.O_RDONLY, nil
	}
	if n, ok := flag.Export().(int64); ok {
		return int(n), nil
	}
	switch flag.String() {
	case "r", "rs", "sr":
		return os.O_RDONLY, nil
	case "r+", "rs+", "sr+":
		return os.O_RDWR, nil
	case "w":
		return os.O_WRONLY | os.O_CREATE | os.O_TRUNC, nil
	case "wx", "xw":
		return os.O_WRONLY | os.O_CREATE | os.O_TRUNC | os.O_EXCL, nil
	case "w+":
		return os.O_RDWR | os.O_CREATE | os.O_TRUNC, nil
	case "wx+", "xw+":
		return os.O_RDWR | os.O_CREATE | os.O_TRUNC | os.O_EXCL, nil
	case "a", "as", "sa":
		return os.O_WRONLY | os.O_CREATE | os.O_APPEND, nil
	case "ax", "xa":
		return os.O_WRONLY | os.O_CREATE | os.O_APPEND | os.O_EXCL, nil
	case "a+", "as+", "sa+":
		return os.O_RDWR | os.O_CREATE | os.O_APPEND, nil
	case "ax+", "xa+":
		return os.O_RDWR | os.O_CREATE | os.O_APPEND | os.O_EXCL, nil
	}
	return 0, fmt.Errorf("invalid flag %q", flag.String())
}

func (v *vm) bytesOf(data goja.Value) []byte {
	if o, ok := data.(*goja.Object); ok {
		var b []byte
		if err := v.rt.ExportTo(o, &b); err == nil {
			return b
		}
		if ab, ok := o.Export().(goja.ArrayBuffer); ok {
			return ab.Bytes()
		}
	}
	return []byte(data.String())
}

// fdTable holds the program's open files; Node numbers them from 3 up.
type fdTable struct {
	next  int
	files map[int]*openFile
}

type openFile struct {
	f    fileLike
	name string
	pos  int64
}

type fileLike interface {
	io.Reader
	io.Writer
	io.Closer
	Stat() (iofs.FileInfo, error)
}

// stdinFile is fd 0: the program's standard input.
type stdinFile struct{ io.Reader }

func (stdinFile) Write([]byte) (int, error)    { return 0, syscall.EBADF }
func (stdinFile) Close() error                 { return nil }
func (stdinFile) Stat() (iofs.FileInfo, error) { return nil, syscall.EINVAL }

func (v *vm) file(fd int, call string) *openFile {
	f := v.files.files[fd]
	if f == nil && fd == 0 && v.env.Stdin != nil {
		f = &openFile{f: stdinFile{v.env.Stdin}, name: "/dev/stdin"}
	}
	if f == nil {
		e, _ := v.rt.New(v.rt.Get("Error"), v.rt.ToValue("EBADF: bad file descriptor, "+call))
		_ = e.Set("errno", -int(syscall.EBADF))
		_ = e.Set("code", "EBADF")
		_ = e.Set("syscall", call)
		panic(e)
	}
	return f
}

// statArray is Node's internal stat layout: dev, mode, nlink, uid, gid,
// rdev, blksize, ino, size, blocks, then the times in ms.
func statArray(fi iofs.FileInfo) []float64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return []float64{0, float64(unixMode(fi)), 1, 0, 0, 0, 4096, 0, float64(fi.Size()), 0, ms(fi.ModTime()), ms(fi.ModTime()), ms(fi.ModTime()), ms(fi.ModTime())}
	}
	ts := func(t syscall.Timespec) float64 { return float64(t.Sec)*1e3 + float64(t.Nsec)/1e6 }
	return []float64{float64(st.Dev), float64(st.Mode), float64(st.Nlink), float64(st.Uid), float64(st.Gid),
		float64(st.Rdev), float64(st.Blksize), float64(st.Ino), float64(st.Size), float64(st.Blocks),
		ts(st.Atim), ts(st.Mtim), ts(st.Ctim), ts(st.Ctim)}
}

func ms(t time.Time) float64 { return float64(t.UnixNano()) / 1e6 }

func unixMode(fi iofs.FileInfo) uint32 {
	m := uint32(fi.Mode().Perm())
	switch {
	case fi.IsDir():
		m |= syscall.S_IFDIR
	case fi.Mode()&iofs.ModeSymlink != 0:
		m |= syscall.S_IFLNK
	default:
		m |= syscall.S_IFREG
	}
	return m
}

// direntType is libuv's UV_DIRENT_* for a mode.
func direntType(m iofs.FileMode) int {
	switch {
	case m.IsRegular():
		return 1
	case m.IsDir():
		return 2
	case m&iofs.ModeSymlink != 0:
		return 3
	case m&iofs.ModeNamedPipe != 0:
		return 4
	case m&iofs.ModeSocket != 0:
		return 5
	case m&iofs.ModeCharDevice != 0:
		return 6
	case m&iofs.ModeDevice != 0:
		return 7
	}
	return 0
}

// fsObject is native.fs: its functions made JavaScript ones once, where
// a Go map's would be wrapped anew at every call.
func (v *vm) fsObject() *goja.Object {
	o := v.rt.NewObject()
	for name, fn := range v.fsNatives() {
		_ = o.Set(name, fn)
	}
	return o
}

// fsNatives are the fs module's Go functions. Those a loop over files
// calls most (readFile, writeFile, stat, exists) take goja's arguments as
// they come, without the reflection of a typed Go function.
func (v *vm) fsNatives() map[string]any {
	fsys := v.env.FS
	return map[string]any{
		"readFile": func(c goja.FunctionCall) goja.Value {
			return v.encode(v.readFile(c.Argument(0).String()), c.Argument(1))
		},
		"writeFile": func(c goja.FunctionCall) goja.Value {
			p, data, mode := c.Argument(0).String(), c.Argument(1), uint32(c.Argument(3).ToInteger())
			fl, err := openFlags(c.Argument(2))
			if err != nil {
				panic(v.rt.NewTypeError(err.Error()))
			}
			name, perm, b := v.createName("open", p, fl), iofs.FileMode(mode&0o777&^umask), v.bytesOf(data)
			var st step
			if w, ok := fsys.(wholeFS); ok {
				st, err = w.writeWhole(name, fl, perm, b)
			} else {
				st, err = writeWhole(fsys, name, fl, perm, b)
			}
			if err != nil {
				st.throw(v, err, "write", p)
			}
			return goja.Undefined()
		},
		"stat": func(c goja.FunctionCall) goja.Value {
			p, follow := c.Argument(0).String(), c.Argument(1).ToBoolean()
			var fi iofs.FileInfo
			var err error
			call := "stat"
			if follow {
				fsys, abs := v.followed("stat", p)
				fi, err = fsys.Stat(abs)
			} else {
				call = "lstat"
				fi, err = v.lstat(v.dirPath(call, p), p)
			}
			if err != nil {
				v.throwFS(err, call, p)
			}
			return v.rt.ToValue(statArray(fi))
		},
		"exists": func(c goja.FunctionCall) goja.Value {
			p := c.Argument(0).String()
			if p == "" {
				return v.rt.ToValue(false)
			}
			fsys, abs := v.followed("stat", p)
			_, err := fsys.Stat(abs)
			return v.rt.ToValue(err == nil)
		},
		"readdir": func(p string) [][]any {
			fsys, abs := v.followed("scandir", p)
			ents, err := fsys.ReadDir(abs)
			if err != nil {
				v.throwFS(err, "scandir", p)
			}
			out := make([][]any, len(ents))
			for i, e := range ents {
				out[i] = []any{e.Name(), direntType(e.Type())}
			}
			return out
		},
		"mkdir": func(p string, mode uint32, recursive bool) goja.Value {
			abs := v.dirPath("mkdir", p)
			first, err := mkdirNode(fsys, abs, strings.HasSuffix(p, "/"), iofs.FileMode(mode&^umask&0o7777), recursive)
			if err != nil {
				v.throwFS(err, "mkdir", p)
			}
			if first == "" {
				return goja.Undefined()
			}
			// Node answers in the caller's form: p without the names
			// below the first directory made.
			q := p
			for range strings.Count(abs, "/") - strings.Count(first, "/") {
				q = strings.TrimRight(q, "/")
				q = q[:max(strings.LastIndex(q, "/"), 0)]
			}
			return v.rt.ToValue(q)
		},
		"rmdir": func(p string) {
			abs := v.dirPath("rmdir", p)
			if b := path.Base(p); b == "." || b == ".." {
				v.throwFS(syscall.EINVAL, "rmdir", p) // as rmdir(2)
			}
			fi, err := fsys.Lstat(abs)
			if err == nil && !fi.IsDir() {
				err = syscall.ENOTDIR
			}
			if err == nil {
				err = fsys.Remove(abs)
			}
			if err != nil {
				v.throwFS(err, "rmdir", p)
			}
		},
		"unlink": func(p string) {
			abs := v.dirPath("unlink", p)
			if err := unlinkNode(fsys, abs, strings.HasSuffix(p, "/")); err != nil {
				v.throwFS(err, "unlink", p)
			}
		},
		"rm": func(p string, recursive, force bool) {
			if p == "" && force {
				return
			}
			abs := v.dirPath("lstat", p)
			fi, err := v.lstat(abs, p)
			switch {
			case err != nil && force && errors.Is(err, iofs.ErrNotExist):
				return
			case err != nil:
				v.throwFS(err, "lstat", p)
			case fi.IsDir() && !recursive:
				e, _ := v.rt.New(v.rt.Get("Error"), v.rt.ToValue(fmt.Sprintf("Path is a directory: rm returned EISDIR (is a directory) %s", p)))
				_ = e.Set("code", "ERR_FS_EISDIR")
				_ = e.Set("errno", 21)
				_ = e.Set("syscall", "rm")
				_ = e.Set("path", p)
				panic(e)
			case fi.IsDir():
				err = fsys.RemoveAll(abs)
			default:
				err = fsys.Remove(abs)
			}
			if err != nil {
				v.throwFS(err, "rm", p)
			}
		},
		"rename": func(from, to string) {
			src, dst := v.dirPath("rename", from), ""
			if to != "" { // renameNode fails an empty one after src's parent
				dst = v.dirPath("rename", to)
			}
			flags := renameFlags{fromSlash: strings.HasSuffix(from, "/"), toSlash: strings.HasSuffix(to, "/"), notAName: notAName(from) || notAName(to)}
			if err := renameNode(fsys, src, dst, flags); err != nil {
				v.throwFS(err, "rename", from, to)
			}
		},
		"link": func(from, to string) {
			if err := fsys.Link(v.resolve("link", from), v.resolve("link", to)); err != nil {
				v.throwFS(err, "link", from, to)
			}
		},
		"symlink": func(target, p string) {
			abs := v.dirPath("symlink", p)
			if target == "" {
				v.throwFS(syscall.ENOENT, "symlink", target, p)
			}
			if strings.HasSuffix(p, "/") {
				err := error(syscall.ENOENT)
				if _, lerr := fsys.Lstat(abs); lerr == nil {
					err = syscall.EEXIST
				}
				v.throwFS(err, "symlink", target, p)
			}
			if err := fsys.Symlink(target, abs); err != nil {
				v.throwFS(err, "symlink", target, p)
			}
		},
		"readlink": func(p string) string {
			t, err := fsys.Readlink(v.resolve("readlink", p))
			if err != nil {
				v.throwFS(err, "readlink", p)
			}
			return t
		},
		"realpath": func(p string) string {
			r, err := v.realpath(v.follow("realpath", p))
			if err != nil {
				v.throwFS(err, "realpath", p)
			}
			return r
		},
		"access": func(p string, mode int) {
			fsys, abs := v.followed("access", p)
			if _, err := fsys.Stat(abs); err != nil {
				v.throwFS(err, "access", p)
			}
		},
		"chmod": func(p string, mode uint32) {
			fsys, abs := v.followed("chmod", p)
			if err := fsys.Chmod(abs, iofs.FileMode(mode&0o777)|modeSpecial(mode)); err != nil {
				v.throwFS(err, "chmod", p)
			}
		},
		"utimes": func(p string, atime, mtime float64) {
			fsys, abs := v.followed("utime", p)
			if err := fsys.Chtimes(abs, secs(atime), secs(mtime)); err != nil {
				v.throwFS(err, "utime", p)
			}
		},
		"truncate": func(p string, size int64) {
			fsys, abs := v.followed("open", p)
			if err := fsys.Truncate(abs, size); err != nil {
				v.throwFS(err, "open", p)
			}
		},
		"copyFile": func(src, dst string, flags int) {
			v.copyFile(src, dst, flags)
		},
		"mkdtemp": func(prefix string) string {
			for range 100 {
				p := prefix + randomSuffix()
				err := fsys.Mkdir(v.resolve("mkdtemp", p), 0o700)
				if err == nil {
					return p
				}
				if !errors.Is(err, iofs.ErrExist) {
					v.throwFS(err, "mkdtemp", prefix+"XXXXXX")
				}
			}
			v.throwFS(syscall.EEXIST, "mkdtemp", prefix+"XXXXXX")
			return ""
		},
		"open": func(p string, flag goja.Value, mode uint32) int {
			fl, err := openFlags(flag)
			if err != nil {
				panic(v.rt.NewTypeError(err.Error()))
			}
			fsys, abs := v.created("open", p, fl)
			f, err := fsys.OpenFile(abs, fl, iofs.FileMode(mode&0o777&^umask))
			if err != nil {
				v.throwFS(err, "open", p)
			}
			if v.files.files == nil {
				v.files = fdTable{next: 3, files: map[int]*openFile{}}
			}
			fd := v.files.next
			v.files.next++
			v.files.files[fd] = &openFile{f: f, name: p}
			return fd
		},
		"close": func(fd int) {
			f := v.file(fd, "close")
			delete(v.files.files, fd)
			if err := f.f.Close(); err != nil {
				v.throwFS(err, "close", f.name)
			}
		},
		"read": func(fd int, buf goja.Value, off, length int, pos int64) int {
			f := v.file(fd, "read")
			b := v.bytesOf(buf)
			if off < 0 || off > len(b) || length < 0 || off+length > len(b) {
				panic(v.rt.NewTypeError("The value of \"length\" is out of range."))
			}
			p := b[off : off+length]
			var n int
			var err error
			if ra, ok := f.f.(io.ReaderAt); ok && pos >= 0 {
				n, err = ra.ReadAt(p, pos)
			} else {
				n, err = io.ReadFull(f.f, p)
			}
			if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				v.throwFS(err, "read", f.name)
			}
			return n
		},
		"write": func(fd int, data goja.Value, pos int64) int {
			f := v.file(fd, "write")
			b := v.bytesOf(data)
			var n int
			var err error
			if wa, ok := f.f.(io.WriterAt); ok && pos >= 0 {
				n, err = wa.WriteAt(b, pos)
			} else {
				n, err = f.f.Write(b)
			}
			if err != nil {
				v.throwFS(err, "write", f.name)
			}
			return n
		},
		"fstat": func(fd int) []float64 {
			f := v.file(fd, "fstat")
			fi, err := f.f.Stat()
			if err != nil {
				v.throwFS(err, "fstat", f.name)
			}
			return statArray(fi)
		},
		"ftruncate": func(fd int, size int64) {
			f := v.file(fd, "ftruncate")
			t, ok := f.f.(interface{ Truncate(int64) error })
			var err error = syscall.EINVAL
			if ok {
				err = t.Truncate(size)
			}
			if err != nil {
				v.throwFS(err, "ftruncate", f.name)
			}
		},
	}
}

func modeSpecial(mode uint32) iofs.FileMode {
	var m iofs.FileMode
	if mode&0o4000 != 0 {
		m |= iofs.ModeSetuid
	}
	if mode&0o2000 != 0 {
		m |= iofs.ModeSetgid
	}
	if mode&0o1000 != 0 {
		m |= iofs.ModeSticky
	}
	return m
}

func secs(s float64) time.Time {
	return time.Unix(0, int64(s*1e9))
}

const tempChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func randomSuffix() string {
	b := make([]byte, 6)
	for i := range b {
		b[i] = tempChars[rand.IntN(len(tempChars))]
	}
	return string(b)
}

// encode returns data as a string in enc, or as a Buffer when enc is
// unset or "buffer".
func (v *vm) encode(data []byte, enc goja.Value) goja.Value {
	if enc == nil || goja.IsUndefined(enc) || goja.IsNull(enc) || enc.String() == "buffer" {
		return buffer.WrapBytes(v.rt, data)
	}
	switch enc.String() {
	case "utf8", "utf-8":
		return v.rt.ToValue(strings.ToValidUTF8(string(data), "\uFFFD"))
	}
	return buffer.EncodeBytes(v.rt, data, enc)
}

func (v *vm) copyFile(src, dst string, flags int) {
	fsys := v.env.FS
	in, err := fsys.Open(v.follow("copyfile", src))
	if err != nil {
		v.throwFS(err, "copyfile", src, dst)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		v.throwFS(err, "copyfile", src, dst)
	}
	dstAbs := v.createPath("copyfile", dst, os.O_CREATE)
	if fi.IsDir() {
		// As libuv: the destination is opened before the copy fails.
		if _, err := fsys.Stat(path.Dir(dstAbs)); err != nil {
			v.throwFS(err, "copyfile", src, dst)
		}
		v.throwFS(syscall.EISDIR, "copyfile", src, dst)
	}
	if dfi, err := fsys.Stat(dstAbs); err == nil && sameFile(fi, dfi) {
		if flags&1 != 0 {
			v.throwFS(syscall.EEXIST, "copyfile", src, dst)
		}
		return // a file copied onto itself stays as it is (opening it with O_TRUNC would empty it)
	}
	fl := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if flags&1 != 0 { // COPYFILE_EXCL
		fl |= os.O_EXCL
	}
	out, err := fsys.OpenFile(dstAbs, fl, fi.Mode().Perm())
	if err != nil {
		v.throwFS(err, "copyfile", src, dst)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		v.throwFS(err, "copyfile", src, dst)
	}
}

// maxReadFile is Node's kIoMaxLength: readFile refuses larger files.
const maxReadFile = 1<<31 - 1

// readFile reads a whole file as Node's readFile does: a file over 2 GiB
// is refused before anything is read.
func (v *vm) readFile(p string) []byte {
	name := v.resolve("open", p)
	head, f, fi, st, err := readHead(v.env.FS, name)
	if err != nil {
		st.throw(v, err, "read", p)
	}
	if f == nil {
		return head
	}
	defer f.Close()
	var buf bytes.Buffer
	if fi != nil && fi.Mode().IsRegular() {
		if fi.Size() > maxReadFile {
			e, _ := v.rt.New(v.rt.Get("RangeError"), v.rt.ToValue(fmt.Sprintf("File size (%d) is greater than 2 GiB", fi.Size())))
			_ = e.Set("code", "ERR_FS_FILE_TOO_LARGE")
			panic(e)
		}
		// The whole size at once, as Node allocates it: one copy, and a
		// file bigger than the heap fails at once.
		buf.Grow(int(fi.Size()) + 1)
	}
	buf.Write(head)
	if _, err := buf.ReadFrom(f); err != nil {
		v.throwFS(err, "read", "")
	}
	return buf.Bytes()
}

// wholeFS is a file system that reads and writes whole files in one call:
// the worker's, where a call is a round trip to the owner (one, for a
// small file, instead of three to five).
type wholeFS interface {
	// readHead opens name and returns its description and first bytes;
	// rest is nil when those are the whole file, else the file open to
	// read on. It and writeWhole check name's final symlinks (slashErr).
	readHead(name string) (head []byte, rest builtin.File, fi iofs.FileInfo, failed step, err error)
	writeWhole(name string, flag int, perm iofs.FileMode, data []byte) (failed step, err error)
}

// nodeFS is a file system that makes Node's mkdir, unlink and rename in
// one call, each with its checks: the worker's, where the checks would be
// a round trip each (mkdir -p of a/b/c was nine, unlink two, rename five).
type nodeFS interface {
	mkdirNode(abs string, slash bool, perm iofs.FileMode, recursive bool) (first string, err error)
	unlinkNode(abs string, slash bool) error
	renameNode(src, dst string, flags renameFlags) error
}

// renameFlags are what renameSync knows of its paths as the program
// wrote them.
type renameFlags struct {
	fromSlash, toSlash bool // ended in "/"
	notAName           bool // either ends in ".", ".." or is the root
}

// renameNode is renameSync of src to dst ("" when the program's was) on
// any file system, one call on a nodeFS: as rename(2), the source's parent is checked, then the
// destination's, then the names themselves.
func renameNode(fsys builtin.FS, src, dst string, flags renameFlags) error {
	if n, ok := fsys.(nodeFS); ok {
		return n.renameNode(src, dst, flags)
	}
	if err := parentErr(fsys, src); err != nil {
		return err
	}
	if dst == "" {
		return syscall.ENOENT
	}
	if err := parentErr(fsys, dst); err != nil {
		return err
	}
	if flags.notAName {
		return syscall.EBUSY
	}
	if flags.fromSlash || flags.toSlash {
		fi, err := fsys.Lstat(src)
		if err == nil && !fi.IsDir() {
			err = syscall.ENOTDIR
		}
		if err == nil {
			if dfi, derr := fsys.Lstat(dst); derr == nil && !dfi.IsDir() {
				err = syscall.ENOTDIR
			}
		}
		if err != nil {
			return err
		}
	}
	if _, err := fsys.Lstat(src); err == nil && holds(fsys, dst, src) {
		// Checked before the types of the two, as rename(2).
		return syscall.ENOTEMPTY
	}
	return fsys.Rename(src, dst)
}

// mkdirNode is mkdirSync of abs (slash: the program's path ended in "/")
// on any file system: one call on a nodeFS. first is the first directory
// made by a recursive mkdir, "" when none was.
func mkdirNode(fsys builtin.FS, abs string, slash bool, perm iofs.FileMode, recursive bool) (first string, err error) {
	if n, ok := fsys.(nodeFS); ok {
		return n.mkdirNode(abs, slash, perm, recursive)
	}
	if fi, err := fsys.Lstat(abs); err == nil && (!recursive || !fi.IsDir()) {
		if !recursive {
			return "", syscall.EEXIST
		}
		// mkdir -p stats what mkdir(2) found (Node's MKDirpSync): a
		// dangling symlink is ENOENT, a loop ELOOP, a file EEXIST
		// (ENOTDIR when p ends in "/"); a directory is done.
		sfi, serr := fsys.Stat(abs)
		switch {
		case serr != nil:
			return "", serr
		case !sfi.IsDir() && slash:
			return "", syscall.ENOTDIR
		case !sfi.IsDir():
			return "", syscall.EEXIST
		}
		return "", nil
	}
	if !recursive {
		return "", fsys.Mkdir(abs, perm)
	}
	for d := abs; d != "/"; d = path.Dir(d) {
		fi, err := fsys.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return "", syscall.ENOTDIR
			}
			break
		}
		if !errors.Is(err, iofs.ErrNotExist) {
			return "", err
		}
		if _, lerr := fsys.Lstat(d); lerr == nil {
			// A dangling symlink: mkdir(2) finds it there and the stat
			// after it fails.
			return "", err
		}
		first = d
	}
	if err := fsys.MkdirAll(abs, perm); err != nil {
		return "", err
	}
	return first, nil
}

// unlinkNode is unlinkSync of abs (slash: the program's path ended in
// "/") on any file system: one call on a nodeFS.
func unlinkNode(fsys builtin.FS, abs string, slash bool) error {
	if n, ok := fsys.(nodeFS); ok {
		return n.unlinkNode(abs, slash)
	}
	fi, err := fsys.Lstat(abs)
	switch {
	case err != nil:
		return err
	case slash && !fi.IsDir():
		return syscall.ENOTDIR // unlink(2) does not follow; the slash wants a directory
	case fi.IsDir():
		return syscall.EISDIR
	}
	return fsys.Remove(abs)
}

// readHead is wholeFS's readHead on any file system: one call on a
// wholeFS, else slashErr, open and stat, with nothing read yet.
func readHead(fsys builtin.FS, name string) ([]byte, builtin.File, iofs.FileInfo, step, error) {
	if w, ok := fsys.(wholeFS); ok {
		return w.readHead(name)
	}
	f, err := openChecked(fsys, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, nil, stepOpen, err
	}
	fi, _ := f.Stat()
	return nil, f, fi, 0, nil
}

// readWhole reads the file name whole and returns its description (nil
// when unknown); a directory is EISDIR. In a worker a small file is one
// round trip (readHead), not four (open, read, read to the end, close).
func readWhole(fsys builtin.FS, name string) ([]byte, iofs.FileInfo, error) {
	head, rest, fi, _, err := readHead(fsys, name)
	if err != nil {
		return nil, nil, err
	}
	if rest == nil {
		return head, fi, nil
	}
	defer rest.Close()
	if fi != nil && fi.IsDir() {
		return nil, fi, syscall.EISDIR
	}
	buf := bytes.NewBuffer(head)
	_, err = buf.ReadFrom(rest)
	return buf.Bytes(), fi, err
}

// step is the system call of a whole-file operation that failed, as
// Node's error message names it.
type step int

const (
	stepOpen step = iota
	stepIO
)

// throw throws err as Node's readFile or writeFile does: an open names
// the path, a read or write (io) on the descriptor does not.
func (s step) throw(v *vm, err error, io, p string) {
	if s == stepOpen {
		v.throwFS(err, "open", p)
	}
	v.throwFS(err, io, "")
}

// unlessLinkFS is a file system that opens a name in one lookup when its
// last component is not a symlink (the shell's view): slashErr's check
// then costs a lookup of its own only where there is a link to check.
type unlessLinkFS interface {
	OpenFileUnlessLink(name string, flag int, perm iofs.FileMode) (f builtin.File, isLink bool, err error)
}

// openChecked opens name with flag and perm after slashErr's check.
func openChecked(fsys builtin.FS, name string, flag int, perm iofs.FileMode) (builtin.File, error) {
	if u, ok := fsys.(unlessLinkFS); ok {
		if f, isLink, err := u.OpenFileUnlessLink(name, flag, perm); !isLink {
			return f, err
		}
	}
	if err := slashErr(fsys, name, flag); err != nil {
		return nil, err
	}
	return fsys.OpenFile(name, flag, perm)
}

// writeWhole opens name with flag and perm (after slashErr), writes data
// and closes it.
func writeWhole(fsys builtin.FS, name string, flag int, perm iofs.FileMode, data []byte) (step, error) {
	f, err := openChecked(fsys, name, flag, perm)
	if err != nil {
		return stepOpen, err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return stepIO, err
}

// sameFile reports whether two stats describe one inode.
func sameFile(a, b iofs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Ino == sb.Ino && sa.Dev == sb.Dev
}

// realpath resolves every symlink of an absolute path, as realpath(3).
func (v *vm) realpath(p string) (string, error) { return realpath(v.env.FS, p) }

func realpath(fsys builtin.FS, p string) (string, error) {
	resolved := "/"
	rest := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for hops := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		if name == "" || name == "." {
			continue
		}
		next := path.Join(resolved, name)
		fi, err := fsys.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&iofs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if hops++; hops > maxSymlinks {
			return "", syscall.ELOOP
		}
		target, err := fsys.Readlink(next)
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			resolved = "/"
		}
		rest = append(strings.Split(strings.TrimPrefix(target, "/"), "/"), rest...)
	}
	return resolved, nil
}
