package sqlstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// OwnedError is returned by Open when another live process owns the store.
// Clients should talk to the owner through its control socket instead.
type OwnedError struct {
	Path   string
	Pid    int
	Socket string
}

func (e *OwnedError) Error() string {
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

// ownerLock is an flock on STORE.lock. The kernel drops it when the owner
// dies, so a stale lock from a dead process is taken over without help.
type ownerLock struct {
	f *os.File
}

// lockPath is the lock file beside a store.
func lockPath(storePath string) string { return storePath + ".lock" }

func acquireOwnerLock(storePath, socket string) (*ownerLock, error) {
	name := lockPath(storePath)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			oe := &OwnedError{Path: storePath}
			var info ownerInfo
			if b, rerr := os.ReadFile(name); rerr == nil && json.Unmarshal(b, &info) == nil {
				oe.Pid, oe.Socket = info.Pid, info.Socket
			}
			return nil, oe
		}
		return nil, fmt.Errorf("store lock %s: %w", name, err)
	}
	b, _ := json.Marshal(ownerInfo{Pid: os.Getpid(), Socket: socket, Started: time.Now()})
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(append(b, '\n'), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("store lock %s: %w", name, err)
	}
	return &ownerLock{f: f}, nil
}

func (l *ownerLock) release() {
	if l == nil || l.f == nil {
		return
	}
	// Emptying the file first means a reader never sees a dead owner's pid
	// next to a free lock.
	_ = l.f.Truncate(0)
	_ = l.f.Close()
	l.f = nil
}
