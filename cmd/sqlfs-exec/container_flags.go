package main

import (
	"context"
	"flag"
	"time"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/container"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// containerFlags are the container backend's options, shared by every
// subcommand that can run it (run, serve).
type containerFlags struct {
	rootfs   string
	stateDir string
	network  bool
	memory   int64
	pids     int64
	cpus     float64
	user     string
	idle     time.Duration
}

func (f *containerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.rootfs, "rootfs", "", "container root filesystem directory (make rootfs, or a busybox one)")
	fs.StringVar(&f.stateDir, "container-state", container.DefaultStateDir, "container state directory")
	fs.BoolVar(&f.network, "network", false, "give containers the host's whole network, past the egress policy (default: their own namespace, whose only way out is the owner's HTTP(S) proxy at "+container.ProxyAddr+", reaching what --egress-allow allows for execs that ask for allow_network; loopback only when it allows nothing)")
	fs.Int64Var(&f.memory, "memory", container.DefaultMemoryBytes, "container memory limit in bytes")
	fs.Int64Var(&f.pids, "pids", container.DefaultPids, "container process limit")
	fs.Float64Var(&f.cpus, "cpus", container.DefaultCPUs, "container CPU limit in cores")
	fs.StringVar(&f.user, "user", container.DefaultUser, "uid:gid commands run as")
	fs.DurationVar(&f.idle, "idle", container.DefaultIdleTimeout, "stop the container after this long without an exec; negative: never")
}

// open starts the backend over mountpoint, the workspace's FUSE mount
// served here (root: its root through the core), which the container sees
// at /workspace, with out (nil: none) as its way out unless --network gives
// it the host's network, and lim's limits where set (a workspace's own),
// the flags' elsewhere. The backend is closed when ctx ends; callers also
// Close it before exiting.
func (f *containerFlags) open(ctx context.Context, mountpoint string, root sidecar.Root, out *egress.Dialer, lim workspace.ContainerLimits) (*container.Backend, error) {
	if f.network {
		out = nil
	}
	lim = lim.Or(workspace.ContainerLimits{MemoryBytes: f.memory, Pids: f.pids, CPUs: f.cpus})
	return container.New(ctx, container.Options{
		Workspace:   mountpoint,
		Root:        root,
		Rootfs:      f.rootfs,
		StateDir:    f.stateDir,
		Network:     f.network,
		Egress:      out,
		MemoryBytes: lim.MemoryBytes,
		Pids:        lim.Pids,
		CPUs:        lim.CPUs,
		User:        f.user,
		IdleTimeout: f.idle,
	})
}
