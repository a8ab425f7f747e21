// Package archive reads and writes tar streams with one set of rules for
// every place sqlfs moves trees in and out: `sqlfs-exec import` and the
// API's import (tar into the store), `sqlfs-exec export` (tar onto the
// host), and the shell backend's tar built-in.
//
// Extraction never leaves its destination: member names are cleaned like
// GNU tar does (leading slashes dropped, names with ".." refused), and each
// member is resolved below the destination, following symlinks already
// there only while they stay inside it. Setuid and setgid bits are dropped
// and device nodes refused unless the caller asks for them; sparse members
// are restored with holes; a regular file appears under its name only once
// all its data was read.
package archive

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// FS is the filesystem an archive is extracted into. Names are absolute,
// clean and slash-separated. No method needs to follow a symlink in the
// last element: Extract resolves every name itself.
type FS interface {
	Lstat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
	Mkdir(name string, perm fs.FileMode) error
	// Create makes a new regular file (O_CREAT|O_EXCL) for writing.
	Create(name string, perm fs.FileMode) (io.WriteCloser, error)
	Rename(oldname, newname string) error
	Remove(name string) error
	Symlink(target, name string) error
	Link(oldname, newname string) error
	// Mknod makes a fifo or device node; mode holds S_IF* and permissions.
	Mknod(name string, mode uint32, dev uint64) error
	Chmod(name string, mode fs.FileMode) error
	// Chown is only called for non-symlinks.
	Chown(name string, uid, gid int) error
	Chtimes(name string, atime, mtime time.Time) error
}

// SparseFile is what a file from FS.Create implements when it can hold
// holes: Extract sets its size first (so a quota sees the whole size before
// any byte is read) and seeks over runs of zeros instead of writing them.
type SparseFile interface {
	io.Seeker
	Truncate(size int64) error
}

// Special says what Extract does with device nodes.
type Special int

const (
	// RefuseDevices reports each device node as an error and goes on.
	RefuseDevices Special = iota
	// SkipDevices leaves device nodes out with a warning.
	SkipDevices
	// KeepDevices creates device nodes (and keeps setuid/setgid bits).
	KeepDevices
)

// Options tune Extract. The zero value is the safe default: owners, setuid
// and setgid bits and device nodes are not restored.
type Options struct {
	Owners  bool    // chown members to their uid/gid
	Special Special // device nodes; KeepDevices also keeps setuid/setgid
	// StripComponents drops this many leading elements from member names
	// (and hard link targets); members with no more elements are skipped.
	StripComponents int
	// Select, when set, picks the members to extract by name, cleaned of
	// leading slashes, before StripComponents.
	Select func(name string) bool
	// KeepOld refuses to replace existing files (tar -k).
	KeepOld bool
	// OnMember is called before each member is extracted (tar -v).
	OnMember func(h *tar.Header)
	// Warn gets each member that was skipped (ErrSkipped) or failed;
	// Extract goes on with the next member and returns the failed ones
	// joined at the end.
	Warn func(err error)
}

// Stats counts what Extract created.
type Stats struct {
	Files    int   `json:"files"`
	Dirs     int   `json:"dirs"`
	Symlinks int   `json:"symlinks"`
	Links    int   `json:"hardlinks"`
	Special  int   `json:"special"` // fifos and device nodes
	Skipped  int   `json:"skipped"` // device nodes left out (SkipDevices)
	Bytes    int64 `json:"bytes"`
}

// Errors a member can fail with; each comes wrapped in a *MemberError.
var (
	ErrUnsafePath  = errors.New("member leaves the destination")
	ErrDevice      = errors.New("device node refused (use --skip-special to leave it out)")
	ErrSkipped     = errors.New("skipped")
	ErrUnsupported = errors.New("unsupported member type")
	ErrTruncated   = errors.New("archive is truncated")
	ErrCorrupt     = errors.New("archive is not a readable tar stream")
)

// MemberError is one member that was not extracted.
type MemberError struct {
	Name string
	Err  error
}

func (e *MemberError) Error() string { return e.Name + ": " + e.Err.Error() }
func (e *MemberError) Unwrap() error { return e.Err }

// ExtractError lists the members Extract could not extract.
type ExtractError struct{ Members []error }

// Error names the first few members; a hostile archive can hold millions.
func (e *ExtractError) Error() string {
	const shown = 5
	var b strings.Builder
	fmt.Fprintf(&b, "%d members not extracted: ", len(e.Members))
	for i, m := range e.Members[:min(len(e.Members), shown)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(m.Error())
	}
	if len(e.Members) > shown {
		b.WriteString("; …")
	}
	return b.String()
}

func (e *ExtractError) Unwrap() []error { return e.Members }

// maxSymlinkHops bounds symlink resolution like the kernel's ELOOP limit.
const maxSymlinkHops = 40

type dirAttr struct {
	name         string
	perm         fs.FileMode
	atime, mtime time.Time
}

type extractor struct {
	fsys FS
	dest string
	opts Options
	st   Stats
	dirs []dirAttr
	errs []error
	buf  []byte
}

// Extract unpacks the tar stream r below dest (an existing directory of
// fsys). A member that cannot be extracted safely is reported through
// opts.Warn and in the returned error, and extraction goes on; a stream
// that cannot be read further (truncated, corrupt) or a cancelled ctx ends
// it at once. A regular file being written when the stream ends is
// removed, never left partial.
func Extract(ctx context.Context, r io.Reader, fsys FS, dest string, opts Options) (Stats, error) {
	x := &extractor{fsys: fsys, dest: path.Clean(dest), opts: opts, buf: make([]byte, 1<<20)}
	tr := tar.NewReader(r)
	for {
		if err := ctx.Err(); err != nil {
			return x.st, err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return x.st, readErr(err)
		}
		if err := x.member(h, tr); err != nil {
			var me *MemberError
			if !errors.As(err, &me) {
				return x.st, err // the stream broke
			}
			if errors.Is(err, ErrSkipped) {
				x.st.Skipped++
			} else {
				x.errs = append(x.errs, err)
			}
			if opts.Warn != nil {
				opts.Warn(err)
			}
		}
	}
	// Deepest first: a parent's times are set after its children's, and a
	// read-only mode must not stop the adding.
	for _, d := range slices.Backward(x.dirs) {
		if err := fsys.Chmod(d.name, d.perm); err != nil {
			return x.st, err
		}
		if err := fsys.Chtimes(d.name, d.atime, d.mtime); err != nil {
			return x.st, err
		}
	}
	if len(x.errs) > 0 {
		return x.st, &ExtractError{x.errs}
	}
	return x.st, nil
}

// readErr names a stream that ended early.
func readErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", ErrTruncated, err)
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}

// MemberName cleans a member name the way GNU tar does: leading slashes
// are dropped, and a name with a ".." element is refused. The result is
// relative ("." for the top).
func MemberName(name string) (string, error) {
	rel := strings.TrimLeft(name, "/")
	if slices.Contains(strings.Split(rel, "/"), "..") {
		return "", fmt.Errorf("member name contains '..': %w", ErrUnsafePath)
	}
	return path.Clean("./" + rel), nil
}

// strip applies StripComponents; ok is false when nothing is left.
func (x *extractor) strip(rel string) (string, bool) {
	n := x.opts.StripComponents
	if n == 0 {
		return rel, true
	}
	parts := strings.Split(rel, "/")
	if rel == "." || len(parts) <= n {
		return "", false
	}
	return strings.Join(parts[n:], "/"), true
}

func (x *extractor) member(h *tar.Header, r io.Reader) error {
	fail := func(err error) error { return &MemberError{Name: h.Name, Err: err} }
	rel, err := MemberName(h.Name)
	if x.opts.Select != nil && !x.opts.Select(path.Clean("./"+strings.TrimLeft(h.Name, "/"))) {
		return nil
	}
	if err != nil {
		return fail(err)
	}
	rel, ok := x.strip(rel)
	if !ok {
		return nil
	}
	if h.AccessTime.IsZero() {
		h.AccessTime = h.ModTime // formats without atime
	}
	if x.opts.OnMember != nil {
		x.opts.OnMember(h)
	}
	if rel == "." {
		if h.Typeflag == tar.TypeDir {
			x.dirs = append(x.dirs, dirAttr{x.dest, x.perm(h), h.AccessTime, h.ModTime})
		}
		return nil
	}
	name, err := x.resolveParent(rel)
	if err != nil {
		return fail(err)
	}
	if h.Typeflag == tar.TypeDir {
		if err := x.mkdir(name); err != nil {
			return fail(err)
		}
		if err := x.chown(name, h); err != nil {
			return fail(err)
		}
		x.st.Dirs++
		x.dirs = append(x.dirs, dirAttr{name, x.perm(h), h.AccessTime, h.ModTime})
		return nil
	}
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeCont, tar.TypeGNUSparse: // contiguous files are regular ones, as GNU tar has it
		return x.file(name, h, r, fail)
	case tar.TypeSymlink:
		if err := x.makeRoom(name); err != nil {
			return fail(err)
		}
		if err := x.fsys.Symlink(h.Linkname, name); err != nil {
			return fail(err)
		}
		x.st.Symlinks++
		return nil // no lchown or lutimes in every FS
	case tar.TypeLink:
		target, err := x.linkTarget(h.Linkname)
		if err != nil {
			return fail(fmt.Errorf("hard link to %q: %w", h.Linkname, err))
		}
		if err := x.makeRoom(name); err != nil {
			return fail(err)
		}
		if err := x.fsys.Link(target, name); err != nil {
			return fail(err)
		}
		x.st.Links++
		return nil // the target's attributes are already set
	case tar.TypeFifo, tar.TypeChar, tar.TypeBlock:
		return x.special(name, h, fail)
	}
	return fail(fmt.Errorf("%w %q", ErrUnsupported, h.Typeflag))
}

// perm is a member's permission bits; setuid and setgid only when kept.
func (x *extractor) perm(h *tar.Header) fs.FileMode {
	m := fs.FileMode(h.Mode) & fs.ModePerm
	if h.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	if x.opts.Special == KeepDevices {
		if h.Mode&syscall.S_ISUID != 0 {
			m |= fs.ModeSetuid
		}
		if h.Mode&syscall.S_ISGID != 0 {
			m |= fs.ModeSetgid
		}
	}
	return m
}

func (x *extractor) chown(name string, h *tar.Header) error {
	if !x.opts.Owners {
		return nil
	}
	return x.fsys.Chown(name, h.Uid, h.Gid)
}

// attrs sets owner, mode and times of a created non-directory.
func (x *extractor) attrs(name string, h *tar.Header) error {
	if err := x.chown(name, h); err != nil {
		return err
	}
	// After chown, which clears setuid and setgid.
	if err := x.fsys.Chmod(name, x.perm(h)); err != nil {
		return err
	}
	return x.fsys.Chtimes(name, h.AccessTime, h.ModTime)
}

func (x *extractor) special(name string, h *tar.Header, fail func(error) error) error {
	typ := map[byte]uint32{tar.TypeFifo: syscall.S_IFIFO, tar.TypeChar: syscall.S_IFCHR, tar.TypeBlock: syscall.S_IFBLK}[h.Typeflag]
	if typ != syscall.S_IFIFO {
		switch x.opts.Special {
		case RefuseDevices:
			return fail(ErrDevice)
		case SkipDevices:
			return fail(fmt.Errorf("device node: %w", ErrSkipped))
		}
	}
	if err := x.makeRoom(name); err != nil {
		return fail(err)
	}
	dev := unix.Mkdev(uint32(h.Devmajor), uint32(h.Devminor))
	if err := x.fsys.Mknod(name, typ|uint32(x.perm(h)&fs.ModePerm), dev); err != nil {
		return fail(err)
	}
	if err := x.attrs(name, h); err != nil {
		return fail(err)
	}
	x.st.Special++
	return nil
}

// file writes a regular (or sparse) member to a temporary name next to
// name and renames it into place once all its data is in.
func (x *extractor) file(name string, h *tar.Header, r io.Reader, fail func(error) error) error {
	if x.opts.KeepOld {
		if _, err := x.fsys.Lstat(name); err == nil {
			return fail(fmt.Errorf("not replaced: %w", fs.ErrExist))
		}
	}
	tmp := path.Join(path.Dir(name), tempPrefix+rand.Text()[:12])
	w, err := x.fsys.Create(tmp, 0o600)
	if err != nil {
		return fail(err)
	}
	n, err := x.copyData(w, r, h.Size)
	x.st.Bytes += n
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = x.attrs(tmp, h)
	}
	if err == nil {
		err = x.replace(tmp, name)
	}
	if err != nil {
		_ = x.fsys.Remove(tmp)
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path == tmp {
			pe.Path = name // the temporary name means nothing to the reader
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return readErr(err) // the stream broke: stop
		}
		return fail(err)
	}
	x.st.Files++
	return nil
}

// tempPrefix starts the name a regular member is written under until all
// its data is in.
const tempPrefix = ".sqlfs-tar-"

// IsTempName reports whether name (a path) is one Extract writes a member
// under before renaming it into place: listings of what changed skip it.
func IsTempName(name string) bool { return strings.HasPrefix(path.Base(name), tempPrefix) }

// replace renames tmp to name, which may be a non-directory to replace.
func (x *extractor) replace(tmp, name string) error {
	fi, err := x.fsys.Lstat(name)
	if err == nil && fi.IsDir() {
		return &fs.PathError{Op: "extract", Path: name, Err: syscall.EISDIR}
	}
	return x.fsys.Rename(tmp, name)
}

// copyData copies a member's data; where the file can hold holes, its
// size is set first and blocks of zeros are seeked over.
func (x *extractor) copyData(w io.Writer, r io.Reader, size int64) (int64, error) {
	sf, sparse := w.(SparseFile)
	if !sparse {
		return io.CopyBuffer(w, r, x.buf)
	}
	if err := sf.Truncate(size); err != nil {
		return 0, err
	}
	const block = 64 << 10
	var n int64
	for {
		k, err := io.ReadFull(r, x.buf[:block])
		if k > 0 {
			b := x.buf[:k]
			if allZero(b) {
				_, werr := sf.Seek(int64(k), io.SeekCurrent)
				err = cmpErr(werr, err)
			} else {
				_, werr := w.Write(b)
				err = cmpErr(werr, err)
			}
			n += int64(k)
		}
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) && n == size:
			return n, nil
		case err != nil:
			return n, err
		}
	}
}

// cmpErr prefers a write error over the read's end-of-data marker.
func cmpErr(werr, rerr error) error {
	if werr != nil {
		return werr
	}
	return rerr
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if b[0]|b[1]|b[2]|b[3]|b[4]|b[5]|b[6]|b[7] != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// mkdir makes a directory member; a non-directory in the way (a symlink
// too, as GNU tar does without --keep-directory-symlink) is replaced.
func (x *extractor) mkdir(name string) error {
	fi, err := x.fsys.Lstat(name)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		if err := x.fsys.Remove(name); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return x.fsys.Mkdir(name, 0o700)
}

// makeRoom removes a non-directory at name so a member can take its place.
func (x *extractor) makeRoom(name string) error {
	fi, err := x.fsys.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return &fs.PathError{Op: "extract", Path: name, Err: syscall.EISDIR}
	case x.opts.KeepOld:
		return fmt.Errorf("not replaced: %w", fs.ErrExist)
	}
	return x.fsys.Remove(name)
}

// linkTarget resolves a hard link's target name like a member name; it
// must exist below the destination.
func (x *extractor) linkTarget(linkname string) (string, error) {
	rel, err := MemberName(linkname)
	if err != nil {
		return "", err
	}
	rel, ok := x.strip(rel)
	if !ok || rel == "." {
		return "", fmt.Errorf("no such member: %w", fs.ErrNotExist)
	}
	return x.resolveParent(rel)
}

// resolveParent maps rel (clean, relative, no "..") to a name below dest
// whose parent directories all exist and are real directories. Symlinks on
// the way are followed only while they stay below dest: a symlink an
// archive made can never carry a later member out. Missing parents are
// made. The last element is not followed.
func (x *extractor) resolveParent(rel string) (string, error) {
	elems := strings.Split(rel, "/")
	last := elems[len(elems)-1]
	todo := elems[:len(elems)-1]
	var stack []string // real directories below dest
	hops := 0
	for len(todo) > 0 {
		e := todo[0]
		todo = todo[1:]
		switch e {
		case "", ".":
			continue
		case "..":
			if len(stack) == 0 {
				return "", fmt.Errorf("%s: through a symlink: %w", rel, ErrUnsafePath)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		p := path.Join(x.dest, path.Join(stack...), e)
		fi, err := x.fsys.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := x.fsys.Mkdir(p, 0o755); err != nil {
				return "", err
			}
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink != 0:
			hops++
			if hops > maxSymlinkHops {
				return "", &fs.PathError{Op: "extract", Path: p, Err: syscall.ELOOP}
			}
			target, err := x.fsys.Readlink(p)
			if err != nil {
				return "", err
			}
			if strings.HasPrefix(target, "/") {
				return "", fmt.Errorf("%s: symlink %s points to %q: %w", rel, path.Join(path.Join(stack...), e), target, ErrUnsafePath)
			}
			todo = append(strings.Split(target, "/"), todo...)
			continue
		case !fi.IsDir():
			return "", &fs.PathError{Op: "extract", Path: p, Err: syscall.ENOTDIR}
		}
		stack = append(stack, e)
	}
	return path.Join(x.dest, path.Join(stack...), last), nil
}
