package container

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"

	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar"
)

// TestDaemonWritesEndWithExec: a setsid daemon kept writing to the
// workspace after its exec ended, audited as an unattributed fuse:pid.
// Now it dies with its exec.
func TestDaemonWritesEndWithExec(t *testing.T) {
	b, ws := newTestBackend(t, nil)
	for i, cmd := range []string{
		"(setsid sh -c 'sleep 0.5; echo late > /workspace/late0' &); echo started",
		"nohup sh -c 'sleep 0.5; echo late > /workspace/late1' >/dev/null 2>&1 & echo started",
		"sh -c 'trap \"\" HUP TERM; sleep 0.5; echo late > /workspace/late2' </dev/null >/dev/null 2>&1 & echo started",
	} {
		got := execIn(t, b, sidecar.Request{Command: cmd})
		if got.err != nil || got.stdout != "started\n" {
			t.Fatalf("%d: %+v %q %v", i, got.res, got.stdout, got.err)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	for i := range 3 {
		if _, err := os.Stat(filepath.Join(ws, "late"+strconv.Itoa(i))); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("daemon %d wrote after its exec ended: %v", i, err)
		}
	}
}

// TestIOUringDenied: io_uring_setup passed the seccomp filter.
func TestIOUringDenied(t *testing.T) {
	b, ws := newTestBackend(t, nil)
	if !seccompSupported() {
		fusetest.Require(t, "seccomp", errors.New("libcontainer built without seccomp (-tags seccomp)"))
	}
	src := filepath.Join(t.TempDir(), "uring.go")
	prog := `package main

import (
	"fmt"
	"syscall"
	"unsafe"
)

func main() {
	var params [120]byte // struct io_uring_params
	for _, c := range []struct {
		name string
		nr   uintptr
		args [3]uintptr
	}{
		{"setup", 425, [3]uintptr{1, uintptr(unsafe.Pointer(&params)), 0}},
		{"enter", 426, [3]uintptr{^uintptr(0), 0, 0}},
		{"register", 427, [3]uintptr{^uintptr(0), 0, 0}},
	} {
		_, _, errno := syscall.Syscall(c.nr, c.args[0], c.args[1], c.args[2])
		fmt.Printf("%s %d\n", c.name, errno)
	}
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(ws, "uring")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fusetest.Require(t, "building the io_uring probe", errors.New(string(out)))
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// On the host the probe gets through: setup succeeds, the others see
	// a bad descriptor (unless the host disabled io_uring).
	host, err := exec.CommandContext(t.Context(), bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(host), "setup 0\n") {
		t.Logf("io_uring unavailable on the host: %s", host)
	}
	got := execIn(t, b, sidecar.Request{Command: "/workspace/uring"})
	want := "setup 1\nenter 1\nregister 1\n" // EPERM from the filter
	if got.err != nil || got.stdout != want {
		t.Errorf("in the container: %q %q %v; want %q", got.stdout, got.stderr, got.err, want)
	}
}

// TestActorForPID maps a process in a running exec to its exec's actor
// through its cgroup.
func TestActorForPID(t *testing.T) {
	b, _ := newTestBackend(t, nil)
	var wg sync.WaitGroup
	wg.Go(func() {
		execIn(t, b, sidecar.Request{Command: "setsid sleep 3 & sleep 3", Actor: "exec:abc123"})
	})
	defer wg.Wait()
	var pids []int
	for deadline := time.Now().Add(5 * time.Second); len(pids) < 2 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b.actorsMu.RLock()
		for dir := range b.actors {
			pids, _ = cgroups.GetPids(dir)
		}
		b.actorsMu.RUnlock()
	}
	if len(pids) < 2 { // the setsid daemon and the shell (or the sleep it became)
		t.Fatalf("exec processes not found: %v", pids)
	}
	for _, pid := range pids {
		if actor, ok := b.ActorForPID(uint32(pid)); !ok || actor != "exec:abc123" {
			t.Errorf("pid %d: %q %v", pid, actor, ok)
		}
	}
	if actor, ok := b.ActorForPID(uint32(os.Getpid())); ok {
		t.Errorf("a host process got actor %q", actor)
	}
	wg.Wait()
	for _, pid := range pids {
		if actor, ok := b.ActorForPID(uint32(pid)); ok {
			t.Errorf("pid %d still mapped to %q after its exec", pid, actor)
		}
	}
}
