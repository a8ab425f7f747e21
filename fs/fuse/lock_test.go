package fuse_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfs/sqlfs/fs/fuse"
)

// Locks are the kernel's own on both frontends: neither asks for
// FUSE_POSIX_LOCKS or FUSE_FLOCK_LOCKS, so the kernel keeps fcntl, OFD and
// flock locks in its inode as it does for ext4. (Served by the file system,
// a lock would also need FLUSH to drop a process's locks at close, and the
// Linux frontend answers FLUSH ENOSYS so that close costs no round trip.)
// These tests hold the mount to what a native directory does.

// lockRange takes (or with F_GETLK/F_OFD_GETLK tests) a lock on
// [start, start+length) of f; length 0 is to the end of the file.
func lockRange(f *os.File, cmd int, typ int16, start, length int64) (unix.Flock_t, error) {
	lk := unix.Flock_t{Type: typ, Whence: io.SeekStart, Start: start, Len: length}
	err := unix.FcntlFlock(f.Fd(), cmd, &lk)
	return lk, err
}

// holdActions are what the other process does to a file before it holds
// on, by name: the locks it takes, or a write through a shared mapping.
var holdActions = map[string]func(f *os.File) error{
	"posix": func(f *os.File) error { _, err := lockRange(f, unix.F_SETLK, unix.F_WRLCK, 0, 0); return err },
	"posix 0-10": func(f *os.File) error {
		_, err := lockRange(f, unix.F_SETLK, unix.F_WRLCK, 0, 10)
		return err
	},
	"ofd":   func(f *os.File) error { _, err := lockRange(f, unix.F_OFD_SETLK, unix.F_WRLCK, 0, 0); return err },
	"flock": func(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX) },
	// Pages dirtied through a mapping and never msync'd. A process must not
	// map files of a mount it serves itself: its munmap holds its mmap_lock
	// while the kernel asks the server to write the times back, and the
	// server's own goroutines, faulting in memory, wait for that lock.
	mappedWrite: func(f *os.File) error {
		m, err := unix.Mmap(int(f.Fd()), 0, 8192, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err == nil {
			copy(m[4096:], "through the mapping")
		}
		return err
	},
}

const mappedWrite = "write through a shared mapping"

// TestHolderProcess is the other process of the lock tests and of
// TestWritebackCoreSeesDirtyPages: it acts on a file, says "holding" and
// holds on until its stdin closes.
func TestHolderProcess(t *testing.T) {
	file, how := os.Getenv("SQLFS_HOLD_FILE"), os.Getenv("SQLFS_HOLD_HOW")
	if file == "" {
		t.Skip("the other process of the lock and writeback tests")
	}
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err == nil {
		err = holdActions[how](f)
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("holding")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// holder is a process holding on to a file: a lock, or a mapping.
type holder struct {
	cmd     *exec.Cmd
	release io.WriteCloser
}

func hold(t *testing.T, file, how string) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHolderProcess$")
	cmd.Env = append(os.Environ(), "SQLFS_HOLD_FILE="+file, "SQLFS_HOLD_HOW="+how)
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	h := &holder{cmd: cmd, release: stdin}
	t.Cleanup(h.stop)
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "holding\n" {
		t.Fatalf("holder process (%s on %s): %q", how, file, line)
	}
	return h
}

// stop ends the holder, which drops its locks and mappings.
func (h *holder) stop() {
	h.release.Close()
	h.cmd.Wait()
}

// lockCase is one lock, tried on a file while another process holds one
// (held) or while this process holds one through another descriptor.
type lockCase struct {
	name string
	held string
	// try returns the errno of the attempt, 0 when it succeeded; pid is
	// the holder's.
	try  func(t *testing.T, f *os.File, pid int) error
	want error
}

func setlk(cmd int, typ int16, start, length int64) func(*testing.T, *os.File, int) error {
	return func(_ *testing.T, f *os.File, _ int) error {
		_, err := lockRange(f, cmd, typ, start, length)
		return err
	}
}

func flock(how int) func(*testing.T, *os.File, int) error {
	return func(_ *testing.T, f *os.File, _ int) error { return unix.Flock(int(f.Fd()), how) }
}

// getlk checks that a conflicting lock is reported with its owner's pid
// (-1 for an OFD lock, which no process owns).
func getlk(cmd int, wantPid func(pid int) int) func(*testing.T, *os.File, int) error {
	return func(t *testing.T, f *os.File, pid int) error {
		lk, err := lockRange(f, cmd, unix.F_RDLCK, 0, 0)
		if err == nil && (lk.Type != unix.F_WRLCK || int(lk.Pid) != wantPid(pid)) {
			t.Errorf("reported lock %+v, want a write lock of pid %d", lk, wantPid(pid))
		}
		return err
	}
}

func holderPid(pid int) int { return pid }

func noPid(int) int { return -1 }

var betweenProcesses = []lockCase{
	{"posix write lock refuses a read lock", "posix", setlk(unix.F_SETLK, unix.F_RDLCK, 0, 0), syscall.EAGAIN},
	{"posix lock reported with its pid", "posix", getlk(unix.F_GETLK, holderPid), nil},
	{"posix ranges apart", "posix 0-10", setlk(unix.F_SETLK, unix.F_WRLCK, 10, 10), nil},
	{"posix ranges overlapping", "posix 0-10", setlk(unix.F_SETLK, unix.F_WRLCK, 5, 10), syscall.EAGAIN},
	{"ofd lock refuses a posix lock", "ofd", setlk(unix.F_SETLK, unix.F_RDLCK, 0, 0), syscall.EAGAIN},
	{"ofd lock reported without a pid", "ofd", getlk(unix.F_OFD_GETLK, noPid), nil},
	{"posix lock refuses an ofd lock", "posix", setlk(unix.F_OFD_SETLK, unix.F_WRLCK, 0, 0), syscall.EAGAIN},
	{"flock refuses flock", "flock", flock(unix.LOCK_SH | unix.LOCK_NB), syscall.EWOULDBLOCK},
	{"flock and fcntl locks are apart", "flock", setlk(unix.F_SETLK, unix.F_WRLCK, 0, 0), nil},
}

// Within one process the owner decides: a classic fcntl lock belongs to
// the process, an OFD lock and a flock to the open file.
var withinProcess = []lockCase{
	{"posix locks of one process through two descriptors", "posix", setlk(unix.F_SETLK, unix.F_WRLCK, 0, 0), nil},
	{"ofd locks of two opens", "ofd", setlk(unix.F_OFD_SETLK, unix.F_RDLCK, 0, 0), syscall.EAGAIN},
	{"flocks of two opens", "flock", flock(unix.LOCK_EX | unix.LOCK_NB), syscall.EWOULDBLOCK},
}

// lockDirs are the directories every lock case runs in: a native one,
// which shows what the kernel does for a local file system, and the mount.
func lockDirs(t *testing.T) map[string]string {
	w := mount(t)
	return map[string]string{"native": t.TempDir(), "mount": w.Dir}
}

func newFile(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
	must(t, os.WriteFile(p, make([]byte, 100), 0o644))
	return p
}

func TestLocksBetweenProcesses(t *testing.T) {
	for where, dir := range lockDirs(t) {
		for _, c := range betweenProcesses {
			t.Run(where+"/"+c.name, func(t *testing.T) {
				p := newFile(t, dir, c.name)
				h := hold(t, p, c.held)
				f, err := os.OpenFile(p, os.O_RDWR, 0)
				must(t, err)
				defer f.Close()
				if err := c.try(t, f, h.cmd.Process.Pid); !errors.Is(err, c.want) {
					t.Fatalf("got %v, want %v", err, c.want)
				}
			})
		}
		// A waiting lock is granted when the holder goes, not before.
		t.Run(where+"/F_SETLKW waits for the holder", func(t *testing.T) {
			p := newFile(t, dir, "setlkw")
			h := hold(t, p, "posix")
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			must(t, err)
			defer f.Close()
			granted := make(chan error, 1)
			go func() {
				_, err := lockRange(f, unix.F_SETLKW, unix.F_WRLCK, 0, 0)
				granted <- err
			}()
			select {
			case err := <-granted:
				t.Fatalf("F_SETLKW returned %v while the other process held the lock", err)
			case <-time.After(200 * time.Millisecond):
			}
			h.stop()
			select {
			case err := <-granted:
				must(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("F_SETLKW not granted 10 s after the holder exited")
			}
		})
	}
}

func TestLocksWithinProcess(t *testing.T) {
	for where, dir := range lockDirs(t) {
		for _, c := range withinProcess {
			t.Run(where+"/"+c.name, func(t *testing.T) {
				p := newFile(t, dir, c.name)
				first, err := os.OpenFile(p, os.O_RDWR, 0)
				must(t, err)
				defer first.Close()
				must(t, holdActions[c.held](first))
				second, err := os.OpenFile(p, os.O_RDWR, 0)
				must(t, err)
				defer second.Close()
				if err := c.try(t, second, os.Getpid()); !errors.Is(err, c.want) {
					t.Fatalf("got %v, want %v", err, c.want)
				}
			})
		}
	}
}

// A lock taken through one name of a file holds through its other names.
func TestLocksAcrossHardLinks(t *testing.T) {
	if fuse.LibFUSE != 0 {
		// libfuse's path API gives each name its own kernel inode, and the
		// kernel keeps locks per inode.
		t.Skipf("libfuse %d's path API gives each hard link its own inode", fuse.LibFUSE)
	}
	for where, dir := range lockDirs(t) {
		t.Run(where, func(t *testing.T) {
			p := newFile(t, dir, "a")
			must(t, os.Link(p, filepath.Join(dir, "b")))
			h := hold(t, filepath.Join(dir, "b"), "ofd")
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			must(t, err)
			defer f.Close()
			if _, err := lockRange(f, unix.F_SETLK, unix.F_RDLCK, 0, 0); !errors.Is(err, syscall.EAGAIN) {
				t.Fatalf("lock through the other name: %v, want EAGAIN", err)
			}
			h.stop()
		})
	}
}
