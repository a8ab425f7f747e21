package main

import (
	"context"
	"flag"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/container"
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
	fs.BoolVar(&f.network, "network", false, "give containers the host's network (default: loopback only)")
	fs.Int64Var(&f.memory, "memory", container.DefaultMemoryBytes, "container memory limit in bytes")
	fs.Int64Var(&f.pids, "pids", container.DefaultPids, "container process limit")
	fs.Float64Var(&f.cpus, "cpus", container.DefaultCPUs, "container CPU limit in cores")
	fs.StringVar(&f.user, "user", container.DefaultUser, "uid:gid commands run as")
	fs.DurationVar(&f.idle, "idle", container.DefaultIdleTimeout, "stop the container after this long without an exec; negative: never")
}

// open starts the backend over mountpoint, the workspace's FUSE mount (or
// any directory), which the container sees at /workspace. The backend is
// closed when ctx ends; callers also Close it before exiting.
func (f *containerFlags) open(ctx context.Context, mountpoint string) (*container.Backend, error) {
	return container.New(ctx, container.Config{
		Workspace:   mountpoint,
		Rootfs:      f.rootfs,
		StateDir:    f.stateDir,
		Network:     f.network,
		MemoryBytes: f.memory,
		Pids:        f.pids,
		CPUs:        f.cpus,
		User:        f.user,
		IdleTimeout: f.idle,
	})
}
