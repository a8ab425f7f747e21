// Package fuse serves a filesystem core (package fs) through the kernel.
// On Linux the frontend speaks the FUSE protocol itself (go-fuse's raw
// API, gofuse.go): inode-based, with every kernel cache on and told of
// changes made elsewhere. Off Linux, or with -tags cgofuse, the portable
// frontend over libfuse's path API serves instead (cgofuse_*.go): macOS
// and Windows use it. Both are thin layers over the core.
//
// # Permissions
//
// Both frontends mount with default_permissions: the kernel checks every
// open and every step of a path walk against the cached mode, owner and
// group, with the caller's supplementary groups. It costs one GETATTR of a
// directory after each change to it (the kernel drops the directory's
// attributes and refetches them at its next permission check), one of the
// 5 requests of a create and of the 3 of a rename, unlink, mkdir or rmdir.
// Checks in the server (ServerPermissions, perm.go, measured by
// BenchmarkPermissionModes) save that round trip, 12-35% of those
// operations' time, but see neither opens (answered ENOSYS, never sent)
// nor walks through cached names, and need /proc to learn a caller's
// groups; the README's decisions section has the table.
//
// # Requests the server cannot save
//
// What the kernel (6.18, traced with Options.Debug) asks whatever the
// server answers, and so what is left of a create, a git object or an npm
// file once OPEN, FLUSH and RELEASE are gone:
//   - After every change to a directory the kernel drops all its
//     attributes, mode included (fuse_dir_changed), and the next permission
//     check in it sends a GETATTR of it: the one before the next unlink,
//     create or link there. No reply refills them (a MKNOD's carries the
//     child's) and NOTIFY_INVAL_INODE only drops.
//   - An exclusive create, mkdir, link or rename target is looked up again
//     whatever the cached entry and its timeout (LOOKUP_EXCL and
//     LOOKUP_RENAME_TARGET skip the dentry cache): mkdir -p of a directory
//     that exists, git's link of a loose object onto a name it has just
//     found missing.
//   - security.capability is asked before a write (file_remove_privs). With
//     HANDLE_KILLPRIV_V2 the kernel remembers an answer of none in the
//     inode (S_NOSEC), but drops that at every refresh of the inode's
//     attributes, so the first write after each stat asks again: one per
//     new file, ~8 per object file a compiler writes. Only ENOSYS stops it
//     for good, hence Options.NoXattr.
//   - A write-through WRITE drops the file's size and times (its reply
//     carries none): the next stat is a GETATTR.
//   - A written-through page is kept up to date only if the write covered
//     all of it, so the first read of a small file just written (git
//     hashing what tar wrote, a checkout reading a loose object) is a
//     READ. NOTIFY_STORE could fill the page after the WRITE's reply, but
//     not safely: a later write to the same page is copied into the cache
//     before the server sees it, and a store made from the older bytes
//     would then land over it and mark the page up to date.
//   - Every READ drops the file's atime (fuse_invalidate_atime), whatever
//     the mount's atime option (only a read-only superblock keeps it), and
//     stat, lstat and fstat ask for atime: the next one is a GETATTR (git
//     commit's index refresh after git add, a checkout's second map of a
//     loose object). No later reply refills it: the kernel drops attributes
//     from a reply to a request sent before the drop (attr_version).
//   - UNLINK and RENAME drop the file's ctime (LINK's reply carries fresh
//     attributes): the next stat of the other name is a GETATTR (git
//     commit's existence check of each loose object git add linked and
//     unlinked).
//   - What does refresh a directory's attributes without a GETATTR is a
//     LOOKUP of the directory itself: npm's mkdir -p of the package
//     directory before each file it creates there.
//
// # Locks
//
// Locks (fcntl, OFD and flock) are the kernel's own on both frontends:
// neither asks for FUSE_POSIX_LOCKS or FUSE_FLOCK_LOCKS, so the kernel keeps
// them in its inode with the semantics of a local file system, between all
// processes using the mount (lock_test.go checks both against a native
// directory). Locks served by the file system would need FLUSH at every
// close, which the Linux frontend answers ENOSYS, and would buy nothing:
// the core's other users (the shell, the tools) take no locks.
//
// # What the portable frontend cannot do
//
// What libfuse's path API keeps the portable frontend from doing, measured
// with go-fuse's posixtest suite (posix_test.go) on libfuse 3.14 and 2.9:
//   - each name of a hard link is its own kernel inode, so attributes and
//     locks do not carry across names;
//   - a file unlinked while open lives on through its open handles (the
//     mount uses hard_remove, so no .fuse_hidden* names), but fstat(2) of it
//     fails (ESTALE on libfuse3): the kernel sends GETATTR without a file
//     handle, and libfuse, having no path for the node, answers before
//     asking the file system. Reads, writes, ftruncate and lseek carry
//     the handle and work;
//   - an OPEN that races a rename over its name fails with ESTALE for the
//     same reason.
package fuse

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// Options tune a mount.
type Options struct {
	ReadOnly   bool
	AllowOther bool
	// Extra are more -o options, comma separated or one each.
	Extra []string
	// FSName is shown as the mount's source in /proc/mounts.
	FSName string
	Debug  bool
	// ActorForPID names the actor a request's changes are audited under,
	// from the pid of the process that made it (a container exec); when it
	// is nil or answers !ok the actor is "fuse:pid=N comm=X".
	ActorForPID func(pid uint32) (actor string, ok bool)
	// SameProcessClients says the mounting process itself opens files on
	// the mount (tests do). Go's netpoller registers every file it opens,
	// which sends the kernel's POLL to the server while holding a
	// scheduler slot; with every slot so held nobody serves it. The Linux
	// frontend then first makes the kernel learn that POLL is unsupported
	// (go-fuse's poll hack). A server that may be killed must leave it
	// off: a request to itself in flight at that moment never ends, and the
	// kernel keeps the dead mount's connection for ever.
	SameProcessClients bool
	// Permissions says who checks permissions: the kernel (the default) or,
	// to measure the alternative, the server (Linux frontend only; see
	// ServerPermissions). The cgofuse frontend always uses the kernel's.
	Permissions Permissions
	// WritebackCache turns the Linux frontend's writeback cache on: the
	// kernel keeps written pages and the file's size and times, and writes
	// them back at close, fsync, under memory pressure, or when the core
	// needs them (fs.FS.SetFlusher). Writes of less than a page then cost
	// no round trip each, but every close makes the next stat a GETATTR
	// (the kernel drops st_blocks), and every file written, renamed or
	// unlinked costs a SETATTR (its times). Off, each write() is a WRITE the
	// core sees at once. The portable frontend is always write-through.
	WritebackCache bool
	// NoXattr serves no extended attributes: every xattr request is
	// answered ENOSYS, after which the kernel fails getxattr, setxattr,
	// listxattr and removexattr with EOPNOTSUPP itself, as on a file system
	// without xattrs, and stops asking. Without it the kernel asks for
	// security.capability before the first write after every refresh of a
	// file's attributes (one request per new file written, ~8 per object a
	// compiler writes). Attributes the store already holds stay there,
	// unseen through this mount.
	NoXattr bool
	// LowLatency keeps the CPUs out of idle sleep while the Linux frontend
	// is busy (a PM QoS request on /dev/cpu_dma_latency; root only), so
	// round trips do not wait for halted CPUs to wake up: about 2x faster
	// on a VM whose idle vCPUs halt, for the CPU time spent polling
	// whenever requests came in the last 200 ms.
	LowLatency bool
	// IOUring serves requests over FUSE over io_uring (Linux frontend,
	// Linux 6.14+ with CONFIG_FUSE_IO_URING): each CPU's requests go to
	// server threads pinned to that CPU, one io_uring_enter a round trip.
	// The kernel offers it only while /sys/module/fuse/parameters/
	// enable_uring reads Y (root: echo Y > ...); otherwise, or when
	// io_uring is refused (a seccomp profile), the mount serves on
	// /dev/fuse as without it. FORGET, INTERRUPT and notifications stay on
	// /dev/fuse.
	IOUring bool
}

// URingEnabledParameter is the fuse module's switch for Options.IOUring:
// the kernel offers FUSE over io_uring only while it reads Y (root can
// write it).
const URingEnabledParameter = "/sys/module/fuse/parameters/enable_uring"

// Permissions is who checks a request's permissions.
type Permissions int

const (
	// KernelPermissions mounts with default_permissions: the kernel checks
	// every access against the cached mode, owner and group, with the
	// caller's supplementary groups, at the price of a GETATTR of a
	// directory after each change to it.
	KernelPermissions Permissions = iota
	// ServerPermissions mounts without default_permissions and checks the
	// metadata requests in the server (perm.go). A measurement switch, not
	// a safe mode: opens, cached reads and writes and walks through cached
	// names are then not checked at all.
	ServerPermissions
)

// Errors a caller can tell apart.
var (
	ErrNoFUSE        = errors.New("FUSE is not available")
	ErrMountpoint    = errors.New("bad mountpoint")
	ErrMountInUse    = errors.New("mountpoint is already a mount")
	ErrMountFailed   = errors.New("mount failed")
	errUnmountFailed = errors.New("unmount failed")
)

// Mount is a live mount of a filesystem.
type Mount struct {
	mountpoint string
	done       chan struct{}
	err        error
	fsys       *sfs.FS // set while changes are reported to the kernel
	// unmount asks the serving loop to unmount; false if it could not.
	unmount func() bool
	// abort, when set, ends the kernel connection: the serving loop stops
	// even while another mount namespace (a container) still holds it.
	abort func()
	// heldElsewhere, set with abort, reports whether a process that
	// still runs has the mount in another mount namespace (one whose last
	// process has exited lets go by itself, only later).
	heldElsewhere func() bool
	// ringRequests, when the mount is served over io_uring, counts the
	// requests served through the ring.
	ringRequests func() int64
}

// RingRequests is how many requests the mount has served through FUSE
// over io_uring (Options.IOUring), 0 when it serves on /dev/fuse only.
func (m *Mount) RingRequests() int64 {
	if m.ringRequests == nil {
		return 0
	}
	return m.ringRequests()
}

// readAheadKB is the kernel's read-ahead for the mount. Its default for a
// FUSE mount, 128 KiB, leaves sequential reads waiting on each request;
// 2 MiB measured 919 against 690 MB/s on a cold 1 GiB read.
const readAheadKB = 2048

// setReadAhead sets the mount's read-ahead through its backing device's
// sysfs entry (libfuse offers no way: the server can only lower what the
// kernel proposes). Best effort: without sysfs the default stays.
func setReadAhead(dir string, kb int) {
	major, minor, ok := mountDevice(dir)
	if !ok {
		return
	}
	f := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", major, minor)
	if err := os.WriteFile(f, []byte(strconv.Itoa(kb)), 0o644); err != nil {
		slog.Debug("read-ahead left at the default", "file", f, "err", err)
	}
}

// Mountpoint is the absolute path the filesystem is mounted at.
func (m *Mount) Mountpoint() string { return m.mountpoint }

// Done is closed when the mount has ended, by Unmount or from outside.
func (m *Mount) Done() <-chan struct{} { return m.done }

// Err is why the mount ended abnormally; valid after Done.
func (m *Mount) Err() error { return m.err }

// Unmount unmounts and waits for the serving loop to end.
func (m *Mount) Unmount() error {
	select {
	case <-m.done:
		return m.err
	default:
	}
	if m.fsys != nil {
		m.fsys.SetInvalidator(nil)
		m.fsys.SetFlusher(nil)
	}
	// cgofuse also unmounts on SIGINT/SIGTERM, so the mount may already be
	// going; only a mount still in place needs the tool.
	if !m.unmount() && isMounted(m.mountpoint) {
		if err := lazyUnmount(m.mountpoint); err != nil && isMounted(m.mountpoint) {
			return fmt.Errorf("%w: %s: %w", errUnmountFailed, m.mountpoint, err)
		}
	}
	select {
	case <-m.done:
		return m.err
	case <-time.After(unmountWait):
	}
	if m.abort == nil {
		return fmt.Errorf("%w: %s: serving loop did not stop", errUnmountFailed, m.mountpoint)
	}
	// Unmounted here but held elsewhere. A container that has just exited
	// lets go when the kernel tears down its mount namespace, which can
	// take seconds on a loaded machine: wait for that (aborting would
	// only warn of nothing). One that still runs would hold it for ever:
	// end the connection, as libfuse's exit does; it gets ENOTCONN.
	live := m.heldElsewhere()
	for deadline := time.Now().Add(namespaceTeardownWait); !live && time.Now().Before(deadline); live = m.heldElsewhere() {
		select {
		case <-m.done:
			return m.err
		case <-time.After(100 * time.Millisecond):
		}
	}
	m.abort()
	select {
	case <-m.done:
		if live {
			slog.Warn("the mount was still held elsewhere (another mount namespace); connection aborted", "mountpoint", m.mountpoint)
		} else {
			slog.Debug("a mount namespace being torn down still held the mount; connection aborted", "mountpoint", m.mountpoint)
		}
		return m.err
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%w: %s: serving loop did not stop, even after an abort", errUnmountFailed, m.mountpoint)
	}
}

// unmountWait is how long Unmount lets the kernel end the connection
// before it aborts it. A container that has just exited still holds the
// mount until the kernel tears down its mount namespace, which took over
// 2 s on a loaded machine.
const unmountWait = 5 * time.Second

// namespaceTeardownWait is how much longer Unmount waits when no live
// process holds the mount any more (see Unmount).
const namespaceTeardownWait = 30 * time.Second

// prepareMount checks the mountpoint and /dev/fuse and returns the
// mountpoint's absolute path.
func prepareMount(mountpoint string) (string, error) {
	abs, err := checkMountpoint(mountpoint)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return "", fmt.Errorf("%w: /dev/fuse: %w (load the fuse module, or run the container with --device /dev/fuse)", ErrNoFUSE, err)
	}
	return abs, nil
}

func checkMountpoint(mountpoint string) (string, error) {
	abs, err := filepath.Abs(mountpoint)
	if err != nil {
		return "", fmt.Errorf("%w %q: %w", ErrMountpoint, mountpoint, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if isMounted(abs) {
			return "", fmt.Errorf("%w: %s (a dead FUSE mount? try: fusermount -u %s)", ErrMountInUse, abs, abs)
		}
		return "", fmt.Errorf("%w: %w", ErrMountpoint, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: %s is not a directory", ErrMountpoint, abs)
	}
	if isMounted(abs) {
		return "", fmt.Errorf("%w: %s", ErrMountInUse, abs)
	}
	d, err := os.Open(abs)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrMountpoint, err)
	}
	defer d.Close()
	if names, _ := d.Readdirnames(1); len(names) > 0 {
		return "", fmt.Errorf("%w: %s is not empty", ErrMountpoint, abs)
	}
	return abs, nil
}

// isMounted reports whether dir is a mount point, from /proc/self/mountinfo.
func isMounted(dir string) bool {
	_, _, ok := mountDevice(dir)
	return ok
}

// mountDevice is the device number of the mount at dir, from
// /proc/self/mountinfo: the serving process must not stat its own mount
// (a request to itself never ends if it is killed meanwhile).
func mountDevice(dir string) (major, minor uint32, ok bool) {
	fields := findMount("/proc/self/mountinfo", func(fields []string) bool {
		return len(fields) > 4 && unescapeMountinfo(fields[4]) == dir
	})
	if fields == nil {
		return 0, 0, false
	}
	_, err := fmt.Sscanf(fields[2], "%d:%d", &major, &minor)
	return major, minor, err == nil
}

// findMount returns the fields of the first line of a mountinfo file that
// match, or nil.
func findMount(mountinfo string, match func(fields []string) bool) []string {
	f, err := os.Open(mountinfo)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 && match(fields) {
			return fields
		}
	}
	return nil
}

// IsMounted reports whether dir is currently a mount point.
func IsMounted(dir string) bool {
	abs, err := filepath.Abs(dir)
	return err == nil && isMounted(abs)
}

// DetachStale detaches the mount at dir if its server is gone (a killed
// owner leaves the mount in place, answering ENOTCONN), and reports whether
// it did. A live mount is left alone.
func DetachStale(dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil || !isMounted(abs) {
		return false, err
	}
	// STATFS always reaches the server; a stat may be answered from cache.
	var st syscall.Statfs_t
	if err := syscall.Statfs(abs, &st); !errors.Is(err, syscall.ENOTCONN) {
		return false, nil
	}
	if err := lazyUnmount(abs); err != nil {
		return false, fmt.Errorf("detach stale mount %s: %w", abs, err)
	}
	return true, nil
}

func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// actors names FUSE callers for the audit trail: the exec a pid belongs to
// when forPID knows it, else "fuse:pid=12 comm=cp", without reading /proc
// on every request.
type actors struct {
	forPID func(pid uint32) (string, bool)
	mu     sync.Mutex
	m      map[uint32]string
}

func newActors(forPID func(uint32) (string, bool)) *actors {
	return &actors{forPID: forPID, m: make(map[uint32]string)}
}

func (c *actors) actor(pid uint32) string {
	if c.forPID != nil {
		if a, ok := c.forPID(pid); ok {
			return a
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[pid]; ok {
		return s
	}
	comm, _ := os.ReadFile("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/comm")
	s := fmt.Sprintf("fuse:pid=%d comm=%s", pid, strings.TrimSpace(string(comm)))
	if len(c.m) > 4096 { // pids are reused; forget old ones wholesale
		clear(c.m)
	}
	c.m[pid] = s
	return s
}
