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
// are restored with holes. Every non-directory member is made under a
// temporary name and renamed into place, so a file appears only once all
// its data was read, and a member that cannot be made leaves an existing
// file of its name alone. A stream must end with tar's end-of-archive
// block, as GNU tar wants; one cut between members is truncated.
package archive

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

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
	// Umask clears permission bits from every member's mode, as tar does
	// for an ordinary user (--no-same-permissions).
	Umask fs.FileMode
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

// maxMemberErrors is how many failed members an ExtractError keeps.
const maxMemberErrors = 100

// ExtractError lists the members Extract could not extract: the first
// maxMemberErrors of them, and how many failed in all.
type ExtractError struct {
	Members []error
	Failed  int
}

// Error names the first few members; a hostile archive can hold millions.
func (e *ExtractError) Error() string {
	const shown = 5
	var b strings.Builder
	fmt.Fprintf(&b, "%d members not extracted: ", e.Failed)
	for i, m := range e.Members[:min(len(e.Members), shown)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(m.Error())
	}
	if e.Failed > shown {
		b.WriteString("; …")
	}
	return b.String()
}

func (e *ExtractError) Unwrap() []error { return e.Members }

// maxSymlinkHops bounds symlink resolution like the kernel's ELOOP limit.
const maxSymlinkHops = 40

// maxResolveSteps bounds the elements one name's resolution walks, each a
// lookup: 40 hops through 4 KB targets would be 80,000 of them per member.
const maxResolveSteps = 1024

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
	// dirs get their modes and times at the end, in the order first seen;
	// dirIndex finds a repeated one, so an archive repeating a directory
	// millions of times holds one entry.
	dirs     []dirAttr
	dirIndex map[string]int
	errs     []error // the first maxMemberErrors of failed
	failed   int
	buf      []byte
}

// Extract unpacks the tar stream r below dest (an existing directory of
// fsys). A member that cannot be extracted safely is reported through
// opts.Warn and in the returned error, and extraction goes on; a stream
// that cannot be read further (truncated, corrupt) or a cancelled ctx ends
// it at once. A regular file being written when the stream ends is
// removed, never left partial.
func Extract(ctx context.Context, r io.Reader, fsys FS, dest string, opts Options) (Stats, error) {
	x := &extractor{fsys: fsys, dest: path.Clean(dest), opts: opts, dirIndex: map[string]int{}, buf: make([]byte, 1<<20)}
	tr := NewReader(r)
	for {
		if err := ctx.Err(); err != nil {
			return x.st, err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return x.st, err
		}
		if err := x.member(h, tr); err != nil {
			var me *MemberError
			if !errors.As(err, &me) {
				return x.st, err // the stream broke
			}
			if errors.Is(err, ErrSkipped) {
				x.st.Skipped++
			} else if x.failed++; len(x.errs) < maxMemberErrors {
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
		return x.st, &ExtractError{x.errs, x.failed}
	}
	return x.st, nil
}

// Reader reads a tar stream's members with the rules every reader here
// shares: a stream that ends without its end-of-archive block, or holds
// nothing, is ErrTruncated or ErrCorrupt (archive/tar takes both for whole
// archives; GNU tar does not), and PAX global headers, metadata for the
// members after them (git archive's commit id), are not members.
type Reader struct {
	*tar.Reader
	end *endReader
}

// NewReader reads the tar stream r.
func NewReader(r io.Reader) *Reader {
	end := &endReader{r: r}
	return &Reader{tar.NewReader(end), end}
}

// Next advances to the next member. It returns io.EOF only at the end of
// a whole archive; any other error wraps ErrTruncated or ErrCorrupt.
func (r *Reader) Next() (*tar.Header, error) {
	for {
		h, err := r.Reader.Next()
		switch {
		case errors.Is(err, io.EOF):
			if err := r.end.check(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		case err != nil:
			return nil, readErr(err)
		case h.Typeflag != tar.TypeXGlobalHeader:
			return h, nil
		}
	}
}

// endReader remembers the last block a tar stream ended with: archive/tar
// takes a stream that stops between two members (or holds nothing) for a
// whole archive, where GNU tar wants the end-of-archive zero blocks. A
// stream cut just after a member whose data ends in a zero block still
// passes for whole.
type endReader struct {
	r    io.Reader
	n    int64
	tail [blockSize]byte // the last bytes read
}

const blockSize = 512

func (e *endReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.n += int64(n)
	if n >= blockSize {
		copy(e.tail[:], p[n-blockSize:n])
	} else {
		copy(e.tail[:], e.tail[n:])
		copy(e.tail[blockSize-n:], p[:n])
	}
	return n, err
}

// check reports whether the stream ended with a zero block, as a whole
// archive does.
func (e *endReader) check() error {
	switch {
	case e.n == 0:
		return fmt.Errorf("%w: the stream is empty", ErrCorrupt)
	case e.n < blockSize || !allZero(e.tail[:]):
		return fmt.Errorf("%w: it ends without the end-of-archive blocks", ErrTruncated)
	}
	return nil
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
			x.dir(dirAttr{x.dest, x.perm(h), h.AccessTime, h.ModTime})
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
		x.dir(dirAttr{name, x.perm(h), h.AccessTime, h.ModTime})
		return nil
	}
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeCont, tar.TypeGNUSparse: // contiguous files are regular ones, as GNU tar has it
		return x.file(name, h, r, fail)
	case tar.TypeSymlink:
		if err := x.place(name, func(tmp string) error { return x.fsys.Symlink(h.Linkname, tmp) }); err != nil {
			return fail(err)
		}
		x.st.Symlinks++
		return nil // no lchown or lutimes in every FS
	case tar.TypeLink:
		target, err := x.linkTarget(h.Linkname)
		if err != nil {
			return fail(fmt.Errorf("hard link to %q: %w", h.Linkname, err))
		}
		if err := x.place(name, func(tmp string) error { return x.fsys.Link(target, tmp) }); err != nil {
			return fail(fmt.Errorf("hard link to %q: %w", h.Linkname, err))
		}
		x.st.Links++
		return nil // the target's attributes are already set
	case tar.TypeFifo, tar.TypeChar, tar.TypeBlock:
		return x.special(name, h, fail)
	}
	return fail(fmt.Errorf("%w %q", ErrUnsupported, h.Typeflag))
}

// dir remembers a directory member's attributes for the end; a repeated
// directory's last member wins.
func (x *extractor) dir(d dirAttr) {
	if i, ok := x.dirIndex[d.name]; ok {
		x.dirs[i] = d
		return
	}
	x.dirIndex[d.name] = len(x.dirs)
	x.dirs = append(x.dirs, d)
}

// perm is a member's permission bits; setuid and setgid only when kept.
func (x *extractor) perm(h *tar.Header) fs.FileMode {
	m := fs.FileMode(h.Mode) & fs.ModePerm &^ x.opts.Umask
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

// deviceRule is what a device member meets under special: ErrDevice,
// a skip, or nil when devices are kept.
func deviceRule(special Special) error {
	switch special {
	case RefuseDevices:
		return ErrDevice
	case SkipDevices:
		return fmt.Errorf("device node: %w", ErrSkipped)
	}
	return nil
}

func (x *extractor) special(name string, h *tar.Header, fail func(error) error) error {
	typ := map[byte]uint32{tar.TypeFifo: syscall.S_IFIFO, tar.TypeChar: syscall.S_IFCHR, tar.TypeBlock: syscall.S_IFBLK}[h.Typeflag]
	if typ != syscall.S_IFIFO {
		if err := deviceRule(x.opts.Special); err != nil {
			return fail(err)
		}
	}
	dev := unix.Mkdev(uint32(h.Devmajor), uint32(h.Devminor))
	err := x.place(name, func(tmp string) error {
		if err := x.fsys.Mknod(tmp, typ|uint32(x.perm(h)&fs.ModePerm), dev); err != nil {
			return err
		}
		return x.attrs(tmp, h)
	})
	if err != nil {
		return fail(err)
	}
	x.st.Special++
	return nil
}

// file writes a regular (or sparse) member under a temporary name and
// puts it in place once all its data is in.
func (x *extractor) file(name string, h *tar.Header, r io.Reader, fail func(error) error) error {
	err := x.place(name, func(tmp string) error {
		w, err := x.fsys.Create(tmp, 0o600)
		if err != nil {
			return err
		}
		n, err := x.copyData(w, r, h.Size)
		x.st.Bytes += n
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		return x.attrs(tmp, h)
	})
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return readErr(err) // the stream broke: stop
	}
	if err != nil {
		return fail(err)
	}
	x.st.Files++
	return nil
}

// place makes a non-directory member: make creates it under a temporary
// name next to name, which it then replaces. A member that cannot be made
// leaves a file already at name as it was.
func (x *extractor) place(name string, make func(tmp string) error) error {
	if x.opts.KeepOld {
		if _, err := x.fsys.Lstat(name); err == nil {
			return fmt.Errorf("not replaced: %w", fs.ErrExist)
		}
	}
	tmp := tempName(name, rand.Text()[:12])
	err := make(tmp)
	if err == nil {
		err = x.replace(tmp, name)
	}
	if err != nil {
		_ = x.fsys.Remove(tmp)
		// The temporary name means nothing to the reader. An FS may report
		// names its own way (below its root, say): match the last element.
		untemp := func(p *string) {
			if base := path.Base(tmp); strings.HasSuffix(*p, base) {
				*p = strings.TrimSuffix(*p, base) + path.Base(name)
			}
		}
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			untemp(&pe.Path)
		}
		if le := (*os.LinkError)(nil); errors.As(err, &le) {
			untemp(&le.New)
		}
		return err
	}
	return nil
}

// tempInfix marks the name a member is written under until all its data
// is in.
const tempInfix = ".sqlfs-tar-"

// tempName is the temporary name of a member to be placed at name: next
// to it and starting with its base name (cut to fit NAME_MAX), so that a
// policy rule on names such as a hidden or read-only '.*' covers it only
// where it covers the member (a name starting with the marker was refused
// under '.*' for every member). The cut falls before a character, never
// inside one: a name the member had as valid UTF-8 stays valid.
func tempName(name, random string) string {
	suffix := tempInfix + random
	base := path.Base(name)
	if max := 255 - len(suffix); len(base) > max {
		cut := max
		// Back over continuation bytes, as many as one character has: a
		// run of stray ones (a name not UTF-8) is cut where it falls.
		for k := 0; k < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(base[cut]); k++ {
			cut--
		}
		if !utf8.RuneStart(base[cut]) {
			cut = max
		}
		base = base[:cut]
	}
	return path.Join(path.Dir(name), base+suffix)
}

// IsTempName reports whether name (a path) is one Extract writes a member
// under before renaming it into place: listings of what changed skip it.
func IsTempName(name string) bool { return strings.Contains(path.Base(name), tempInfix) }

// replace renames tmp to name, which may be a non-directory to replace.
func (x *extractor) replace(tmp, name string) error {
	fi, err := x.fsys.Lstat(name)
	if err == nil && fi.IsDir() {
		return &fs.PathError{Op: "extract", Path: name, Err: syscall.EISDIR}
	}
	if err := x.fsys.Rename(tmp, name); err != nil {
		return err
	}
	// Renaming a hard link onto another name of the same file does
	// nothing (POSIX): tmp is still there.
	if _, err := x.fsys.Lstat(tmp); err == nil {
		return x.fsys.Remove(tmp)
	}
	return nil
}

// copyData copies a member's data; where the file can hold holes, its
// size is set first and blocks of zeros are seeked over.
func (x *extractor) copyData(w io.Writer, r io.Reader, size int64) (int64, error) {
	sf, sparse := w.(SparseFile)
	w = fullWriter{w}
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

// fullWriter retries a short write, as callers of write(2) do: the store's
// writes stop short at the quota, and only the next one says why (ENOSPC).
type fullWriter struct{ w io.Writer }

func (f fullWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k, err := f.w.Write(p[n:])
		n += k
		if err != nil {
			return n, err
		}
		if k == 0 {
			return n, io.ErrShortWrite
		}
	}
	return n, nil
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
	case err == nil && x.opts.KeepOld:
		return fmt.Errorf("not replaced: %w", fs.ErrExist)
	case err == nil:
		if err := x.fsys.Remove(name); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return x.fsys.Mkdir(name, 0o700)
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
	for steps := 0; len(todo) > 0; steps++ {
		if steps == maxResolveSteps {
			return "", &fs.PathError{Op: "extract", Path: path.Join(x.dest, rel), Err: syscall.ELOOP}
		}
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
