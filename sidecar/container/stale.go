package container

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/manager"
	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"
)

// containerSeq numbers containers process-wide, so backends of several
// workspaces can share one StateDir.
var containerSeq atomic.Uint64

// Container ids are "sqlfs-<owner pid>-<owner start time>-<seq>". The start
// time (from /proc/PID/stat) tells a live owner from a reused pid.
const idPrefix = "sqlfs-"

func containerID(owner string) string {
	return fmt.Sprintf("%s%s-%d", idPrefix, owner, containerSeq.Add(1))
}

// ownerTag is "<pid>-<start time>" for a live process.
func ownerTag(pid int) (string, error) {
	start, _, err := procStat(pid)
	if err != nil {
		return "", err
	}
	return strconv.Itoa(pid) + "-" + start, nil
}

// procStat returns the start time and state of a process from
// /proc/PID/stat.
func procStat(pid int) (start, state string, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", "", fmt.Errorf("owner of containers: %w", err)
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: the state is field 3 of the line, the start time field 22.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", "", fmt.Errorf("owner of containers: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	const stateField, startField = 3 - 3, 22 - 3
	if len(f) <= startField {
		return "", "", fmt.Errorf("owner of containers: short /proc/%d/stat", pid)
	}
	return f[startField], f[stateField], nil
}

// ownerOf returns the owner tag inside a container id.
func ownerOf(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, idPrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '-')
	if i < 0 {
		return "", false
	}
	return rest[:i], true
}

// ownerAlive reports whether the process named by an owner tag still runs.
// A zombie has died: its containers are already orphans.
func ownerAlive(owner string) bool {
	pidStr, start, _ := strings.Cut(owner, "-")
	pid, err := strconv.Atoi(pidStr)
	if err != nil {
		return false
	}
	gotStart, state, err := procStat(pid)
	return err == nil && gotStart == start && state != "Z" && state != "X"
}

// removeStale destroys the containers in StateDir whose owner is gone: a
// sidecar that crashed or was killed. Their processes died with it (see
// initScript); their cgroups and state dirs are what is left. Then it sweeps
// the cgroups of dead owners' containers whose state lived elsewhere.
func (b *Backend) removeStale(ctx context.Context) error {
	entries, err := os.ReadDir(b.cfg.StateDir)
	if err != nil {
		return fmt.Errorf("container state dir: %w", err)
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !e.IsDir() || !deadOwner(e.Name()) {
			continue
		}
		b.log.Info("removing container of a dead owner", "id", e.Name())
		if err := b.removeContainer(e.Name()); err != nil {
			return fmt.Errorf("remove stale container %s: %w", e.Name(), err)
		}
	}
	return b.removeStaleCgroups(ctx)
}

// deadOwner reports whether id is one of our container ids whose owner is
// gone.
func deadOwner(id string) bool {
	owner, ok := ownerOf(id)
	return ok && !ownerAlive(owner)
}

func (b *Backend) removeContainer(id string) error {
	c, err := libcontainer.Load(b.cfg.StateDir, id)
	if err == nil {
		return destroy(c)
	}
	// No usable state (the owner died while creating it): remove what the
	// id names.
	b.log.Warn("container state unreadable; removing by name", "id", id, "err", err)
	if err := removeCgroups(id); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(b.cfg.StateDir, id))
}

// removeStaleCgroups removes the cgroups under cgroupParent of dead owners'
// containers. Their state dirs are out of reach (another StateDir, or a
// temporary one already gone), but the ids name the owners all the same.
func (b *Backend) removeStaleCgroups(ctx context.Context) error {
	parent, err := manager.New(&cgroups.Cgroup{Path: cgroupParent, Resources: &cgroups.Resources{}})
	if err != nil {
		return fmt.Errorf("cgroup parent: %w", err)
	}
	seen := map[string]bool{}
	for _, dir := range parent.GetPaths() {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // no container ever ran under this hierarchy
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			id := e.Name()
			if !e.IsDir() || seen[id] || !deadOwner(id) {
				continue
			}
			seen[id] = true
			b.log.Info("removing cgroups of a dead owner's container", "id", id)
			if err := removeCgroups(id); err != nil {
				return fmt.Errorf("remove stale cgroups of %s: %w", id, err)
			}
		}
	}
	return nil
}

// removeCgroups kills whatever is left in container id's cgroups and
// removes them, sub-cgroups of execs included.
func removeCgroups(id string) error {
	cm, err := manager.New(&cgroups.Cgroup{Path: cgroupParent + "/" + id, Resources: &cgroups.Resources{}})
	if err != nil {
		return err
	}
	if pids, err := cm.GetAllPids(); err == nil {
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
	return cm.Destroy()
}

// destroy kills whatever still runs in c and removes its cgroups (sub-cgroups
// of execs included) and state dir.
func destroy(c *libcontainer.Container) error {
	if err := c.Signal(unix.SIGKILL); err != nil && !errors.Is(err, libcontainer.ErrNotRunning) {
		return fmt.Errorf("kill: %w", err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		st, err := c.Status()
		if err != nil || st == libcontainer.Stopped {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("container %s still running after SIGKILL", c.ID())
		}
		time.Sleep(time.Millisecond)
	}
	return c.Destroy()
}
