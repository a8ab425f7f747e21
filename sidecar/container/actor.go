package container

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// execEntry is a running exec as its cgroup names it.
type execEntry struct {
	actor   string
	network bool // it asked for the network (Request.AllowNetwork)
}

// setActor records (or, with actor "", forgets) the actor of the exec
// whose cgroup is at the host path dir, and whether it may use the proxy.
func (b *Backend) setActor(dir, actor string, network bool) {
	b.actorsMu.Lock()
	defer b.actorsMu.Unlock()
	if actor == "" {
		delete(b.actors, dir)
		return
	}
	if b.actors == nil {
		b.actors = map[string]execEntry{}
	}
	b.actors[dir] = execEntry{actor, network}
}

// ActorForPID names the exec a process belongs to ("exec:ID", the
// Request's Actor) from its cgroup in /proc/PID/cgroup, so the FUSE
// frontend can audit a container's writes under their exec. ok is false
// for a process of no running exec of this backend (or one that is gone).
func (b *Backend) ActorForPID(pid uint32) (actor string, ok bool) {
	b.actorsMu.RLock()
	empty := len(b.actors) == 0
	b.actorsMu.RUnlock()
	if empty {
		return "", false
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", false
	}
	defer f.Close()
	b.actorsMu.RLock()
	defer b.actorsMu.RUnlock()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "ID:CONTROLLERS:PATH", PATH relative to the hierarchy's root as
		// this process sees it; the exec trees live in freezer (v1) or the
		// unified hierarchy (v2).
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 || len(parts[2]) <= 1 {
			continue
		}
		for dir, e := range b.actors {
			if strings.HasSuffix(dir, parts[2]) { // PATH starts with "/": a whole-name match
				return e.actor, true
			}
		}
	}
	return "", false
}
