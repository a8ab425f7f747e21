package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/syntax"
)

// The interpreter makes process-substitution FIFOs with the host's mkfifo
// and opens them with os.OpenFile, bypassing every handler, so they must be
// real host files. They live in a private directory of the host's
// temporary directory: one per backend, with one subdirectory per exec
// removed when the exec ends (a killed exec's FIFOs with it), and the whole
// directory removed at Close. Both are made only when a command is about to
// use process substitution: mkdir and RemoveAll on every exec cost 1-3 ms
// on a loaded disk, and most commands use none. The interpreter reads its
// FIFO directory once, when its runner is built, so both names are fixed
// before they exist. A backend holds an flock on its directory's lock file
// from then on; a directory whose lock is free belongs to an owner that
// died without Close, and the next backend to make its own removes it.
const (
	fifoRootPrefix = "sqlfs-shell-fifo-"
	fifoLockName   = ".lock"
	// fifoStaleAge is how old a directory without a lock file must be to
	// count as stale: younger, its owner may be between mkdir and flock.
	fifoStaleAge = time.Minute
)

// fifoRoot is a backend's FIFO directory and the lock that marks it live.
type fifoRoot struct {
	log  *slog.Logger
	name string // the directory, whether made or not
	mu   sync.Mutex
	made bool // tried, or closed: never made after Close
	dir  string
	lock *os.File
}

func newFIFORoot(log *slog.Logger) *fifoRoot {
	name := filepath.Join(os.TempDir(), fifoRootPrefix+strconv.FormatUint(rand.Uint64(), 36))
	return &fifoRoot{log: log, name: name}
}

// root is the directory, made at the first call; "" when it could not be.
func (f *fifoRoot) root() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.made {
		f.made = true
		f.dir, f.lock = makeFIFORoot(f.name, f.log)
	}
	return f.dir
}

// current is the directory if it was made, else "". Nil-safe.
func (f *fifoRoot) current() string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dir
}

// makeFIFORoot removes stale FIFO directories and makes this backend's.
// Without one, process substitution fails with a message and everything
// else works.
func makeFIFORoot(dir string, log *slog.Logger) (string, *os.File) {
	removeStaleFIFODirs(filepath.Dir(dir), log)
	if err := os.Mkdir(dir, 0o700); err != nil {
		log.Warn("shell backend: process substitution disabled", "err", err)
		return "", nil
	}
	lock, err := lockFIFODir(dir, true)
	if err != nil {
		log.Warn("shell backend: process substitution disabled", "err", err)
		_ = os.RemoveAll(dir)
		return "", nil
	}
	return dir, lock
}

// lockFIFODir takes the lock of dir, creating its lock file with create.
func lockFIFODir(dir string, create bool) (*os.File, error) {
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(filepath.Join(dir, fifoLockName), flag, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// removeStaleFIFODirs removes the FIFO directories in tmp whose owner is
// gone: their lock is free, or they have no lock file and are old.
func removeStaleFIFODirs(tmp string, log *slog.Logger) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, fifoRootPrefix+"*"))
	for _, dir := range dirs {
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || !ownedByUs(fi) {
			continue
		}
		lock, err := lockFIFODir(dir, false)
		switch {
		case err == nil:
			lock.Close()
		case errors.Is(err, unix.EWOULDBLOCK):
			continue // a live owner
		default:
			fi, serr := os.Stat(dir)
			if serr != nil || time.Since(fi.ModTime()) < fifoStaleAge {
				continue
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("shell backend: stale fifo dir", "dir", dir, "err", err)
		}
	}
}

func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// close removes the directory, then releases the lock.
func (f *fifoRoot) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.made = true
	if f.dir == "" {
		return nil
	}
	err := os.RemoveAll(f.dir)
	f.lock.Close()
	f.dir, f.lock = "", nil
	if err != nil {
		return fmt.Errorf("shell backend: remove fifo dir: %w", err)
	}
	return nil
}

// fifoExec is one exec's FIFO directory, made by ensure before the exec's
// first process substitution and removed by release at its end.
type fifoExec struct {
	root *fifoRoot
	// dir is the name the interpreter is given: it stays a directory that
	// cannot exist until made, so mkfifo fails with a clear message
	// instead of falling back to the host's TMPDIR.
	dir  string
	once sync.Once
	made bool // written in once
}

// execDir is the FIFO directory of exec id, not made yet.
func (f *fifoRoot) execDir(id string) *fifoExec {
	return &fifoExec{root: f, dir: filepath.Join(f.name, id)}
}

// ensure makes the directory; the first call wins, later ones are free.
func (e *fifoExec) ensure() {
	e.once.Do(func() {
		if e.root.root() != "" && os.Mkdir(e.dir, 0o700) == nil {
			e.made = true
		}
	})
}

// release removes the directory if ensure made it. A goroutine of the
// exec left running past its end can no longer make it.
func (e *fifoExec) release() {
	e.once.Do(func() {})
	if e.made {
		releaseFIFOs(e.dir)
	}
}

// releaseFIFOs removes an exec's FIFO directory after its run is
// cancelled. A process substitution that nobody read or wrote has left the
// interpreter's goroutine blocked in open(2) for good (and its thread with
// it): opening each FIFO at both ends (O_RDWR never blocks on Linux) lets
// those opens return, unlinking stops later ones from blocking, and
// closing ours gives their reads EOF and their writes EPIPE.
func releaseFIFOs(dir string) {
	ents, _ := os.ReadDir(dir)
	var held []*os.File
	for _, e := range ents {
		if e.Type()&fs.ModeNamedPipe == 0 {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_RDWR|syscall.O_NONBLOCK, 0)
		if err == nil {
			held = append(held, f)
		}
	}
	_ = os.RemoveAll(dir)
	for _, f := range held {
		f.Close()
	}
}

// isFIFO reports whether p names a process-substitution FIFO in one of the
// exec directories of root.
func isFIFO(root, p string) bool {
	return root != "" && filepath.Dir(filepath.Dir(p)) == root && strings.HasPrefix(filepath.Base(p), fifoPrefix)
}

// usesProcSubst reports whether node holds a process substitution.
func usesProcSubst(node syntax.Node) bool {
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.ProcSubst); ok {
			found = true
		}
		return !found
	})
	return found
}

// parsesAtRun reports whether the interpreter builtin args may parse and
// run code holding a process substitution that usesProcSubst could not
// see in the script: eval, trap and alias strings that contain one, and
// any sourced file.
func parsesAtRun(args []string) bool {
	if len(args) > 1 && (args[0] == "builtin" || args[0] == "command") {
		args = args[1:]
	}
	switch args[0] {
	case "source", ".":
		return true
	case "eval", "trap", "alias":
		src := strings.Join(args[1:], " ")
		return strings.Contains(src, "<(") || strings.Contains(src, ">(")
	}
	return false
}
