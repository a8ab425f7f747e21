package container

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"
)

// execTree is the sub-cgroup one exec runs in. Everything the command
// forks stays in it, even a daemon that calls setsid, so the end of the
// exec (or its timeout) kills the whole tree and nothing else in the
// container, and a process's cgroup names its exec (ActorForPID). On cgroup v1 only the
// freezer hierarchy gets the sub-cgroup (it is what the kill needs); limits
// stay on the container's cgroups.
type execTree struct {
	sub map[string]string // for libcontainer.Process.SubCgroupPaths
	dir string            // host path of the sub-cgroup
	v2  bool
}

func newExecTree(c *libcontainer.Container, name string) (*execTree, error) {
	st, err := c.State()
	if err != nil {
		return nil, fmt.Errorf("container state: %w", err)
	}
	t := &execTree{v2: cgroups.IsCgroup2UnifiedMode()}
	key := "freezer"
	if t.v2 {
		key = ""
	}
	base, ok := st.CgroupPaths[key]
	if !ok {
		return nil, fmt.Errorf("container has no %q cgroup", key)
	}
	t.dir = filepath.Join(base, name)
	if err := os.Mkdir(t.dir, 0o755); err != nil {
		return nil, fmt.Errorf("exec cgroup: %w", err)
	}
	t.sub = map[string]string{key: name}
	return t, nil
}

// kill SIGKILLs every process in the tree. On v1 the tree is frozen first so
// nothing can fork between reading the pid list and the kill.
func (t *execTree) kill() {
	if t.v2 {
		if err := cgroups.WriteFile(t.dir, "cgroup.kill", "1"); err == nil {
			return
		}
		// Kernels before 5.14 have no cgroup.kill: kill until empty.
		for range 100 {
			if t.killListed() == 0 {
				return
			}
			time.Sleep(time.Millisecond)
		}
		return
	}
	// Thawed whether or not the freeze was seen to take: one still under
	// way would hold the killed processes frozen, unable to die.
	t.freeze()
	t.killListed()
	_ = cgroups.WriteFile(t.dir, "freezer.state", string(cgroups.Thawed))
}

// freezeTries bounds the wait for a freeze to take, in milliseconds.
var freezeTries = 1000

// freeze stops the tree's processes, so none forks while the tree is
// killed, waiting a while for that to take.
func (t *execTree) freeze() {
	if err := cgroups.WriteFile(t.dir, "freezer.state", string(cgroups.Frozen)); err != nil {
		return
	}
	for range freezeTries {
		s, err := cgroups.ReadFile(t.dir, "freezer.state")
		if err != nil || strings.TrimSpace(s) == string(cgroups.Frozen) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (t *execTree) killListed() int {
	pids, err := cgroups.GetPids(t.dir)
	if err != nil {
		return 0
	}
	for _, pid := range pids {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	return len(pids)
}

// remove deletes the sub-cgroup once the killed processes are gone; one
// that stays busy (EBUSY) is swept by destroy with the container.
func (t *execTree) remove() {
	for range 1000 {
		if err := unix.Rmdir(t.dir); !errors.Is(err, unix.EBUSY) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
