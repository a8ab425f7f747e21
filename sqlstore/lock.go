package sqlstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// OwnedError is returned by Open when another live process owns the store.
// Clients should talk to the owner through its control socket instead.
type OwnedError struct {
	Path   string
	Pid    int // 0 when the owner could not be named (say, it opened the store by another hard link)
	Socket string
}

func (e *OwnedError) Error() string {
	if e.Pid == 0 {
		return fmt.Sprintf("store %s is owned by another process", e.Path)
	}
	msg := fmt.Sprintf("store %s is owned by process %d", e.Path, e.Pid)
	if e.Socket != "" {
		msg += " (control socket " + e.Socket + ")"
	}
	return msg
}

// ownerInfo is what the lock file says about its holder.
type ownerInfo struct {
	Pid     int       `json:"pid"`
	Socket  string    `json:"socket,omitempty"`
	Started time.Time `json:"started"`
}

// fileID names a file whatever path it is reached by.
type fileID struct{ dev, ino uint64 }

// ownedHere lists the stores this process owns, so a second Open in the
// same process is refused without opening (and later closing) a descriptor
// of the store file: closing any descriptor of a file drops all of the
// process's POSIX locks on it, including SQLite's own.
var ownedHere = struct {
	sync.Mutex
	m map[fileID]*ownerLock
}{m: map[fileID]*ownerLock{}}

// ownerLock is an flock on the store file itself, so the lock is the same
// whatever name (symlink, hard link, relative path) the store is opened by.
// SQLite locks with fcntl, which on Linux is independent of flock. The
// kernel drops the flock when the owner dies, so a stale lock from a dead
// process is taken over without help. Who holds it is written to
// STORE.lock beside the store's real name, for a second opener's error.
type ownerLock struct {
	id     fileID
	f      *os.File // the store file; closed only after SQLite closed its own
	info   *os.File // STORE.lock
	socket string
}

// lockPath is the owner-info file beside a store.
func lockPath(storePath string) string { return storePath + ".lock" }

func statID(st *unix.Stat_t) fileID { return fileID{uint64(st.Dev), st.Ino} }

// acquireOwnerLock locks the store file at realPath (symlinks resolved).
func acquireOwnerLock(realPath, socket string) (*ownerLock, error) {
	var st unix.Stat_t
	if err := unix.Stat(realPath, &st); err != nil {
		return nil, fmt.Errorf("store lock %s: %w", realPath, err)
	}
	id := statID(&st)
	ownedHere.Lock()
	defer ownedHere.Unlock()
	if l, ok := ownedHere.m[id]; ok {
		return nil, &OwnedError{Path: realPath, Pid: os.Getpid(), Socket: l.socket}
	}
	f, err := os.OpenFile(realPath, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("store lock %s: %w", realPath, err)
	}
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || statID(&st) != id {
		f.Close()
		return nil, fmt.Errorf("store lock %s: the file was replaced while opening it", realPath)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ownedError(realPath)
		}
		return nil, fmt.Errorf("store lock %s: %w", realPath, err)
	}
	// Checked under the lock, so a second opener still learns the owner.
	if st.Nlink > 1 {
		removeCreateLeftovers(realPath, id)
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			f.Close()
			return nil, fmt.Errorf("store lock %s: %w", realPath, err)
		}
	}
	if st.Nlink > 1 {
		f.Close()
		return nil, fmt.Errorf("store %s: %w (%d names; remove all but one)", realPath, ErrHardLinked, st.Nlink)
	}
	l := &ownerLock{id: id, f: f, socket: socket}
	if l.info, err = createPrivate(lockPath(realPath), os.O_RDWR); err == nil {
		b, _ := json.Marshal(ownerInfo{Pid: os.Getpid(), Socket: socket, Started: time.Now()})
		if err = l.info.Truncate(0); err == nil {
			_, err = l.info.WriteAt(append(b, '\n'), 0)
		}
	}
	if err != nil {
		l.release()
		return nil, fmt.Errorf("store lock %s: %w", lockPath(realPath), err)
	}
	ownedHere.m[id] = l
	return l, nil
}

// removeCreateLeftovers removes the temporary name create links a new
// store from, left behind when it was stopped between linking the store
// into place and removing that name; or seen while it does so.
func removeCreateLeftovers(realPath string, id fileID) {
	tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(realPath), tempPattern(realPath)))
	for _, tmp := range tmps {
		var st unix.Stat_t
		if unix.Lstat(tmp, &st) == nil && statID(&st) == id {
			_ = os.Remove(tmp)
		}
	}
}

// ownedError reads who owns the store from its lock file.
func ownedError(realPath string) *OwnedError {
	oe := &OwnedError{Path: realPath}
	var info ownerInfo
	if b, err := os.ReadFile(lockPath(realPath)); err == nil && json.Unmarshal(b, &info) == nil {
		oe.Pid, oe.Socket = info.Pid, info.Socket
	}
	return oe
}

func (l *ownerLock) release() {
	if l == nil || l.f == nil {
		return
	}
	ownedHere.Lock()
	defer ownedHere.Unlock()
	if ownedHere.m[l.id] == l {
		delete(ownedHere.m, l.id)
	}
	// Emptying the info first means a reader never sees a dead owner's pid
	// next to a free lock.
	if l.info != nil {
		_ = l.info.Truncate(0)
		_ = l.info.Close()
	}
	// Unlock before closing: a child forked meanwhile holds a copy of the
	// descriptor until it execs, and the lock lives as long as any copy.
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	_ = l.f.Close()
	l.f, l.info = nil, nil
}

// createPrivate opens name with flag, creating it 0600 whatever the umask,
// and tightens an existing file that other users could read.
func createPrivate(name string, flag int) (*os.File, error) {
	f, err := os.OpenFile(name, flag|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := tighten(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
