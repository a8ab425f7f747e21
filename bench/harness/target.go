package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Kind names a benchmark target.
type Kind string

const (
	Sqlfs  Kind = "sqlfs"  // a fresh sqlfs store served by sqlfs-mount
	Native Kind = "native" // a directory on the disk holding the work dir
	Tmpfs  Kind = "tmpfs"  // a tmpfs mount: the RAM bound
)

// ParseKind checks a -subject style flag value.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case Sqlfs, Native, Tmpfs:
		return k, nil
	}
	return "", fmt.Errorf("unknown target %q (want sqlfs, native or tmpfs)", s)
}

// ColdMeaning says, per target, what the harness does before a "cold" measurement.
var ColdMeaning = map[Kind]string{
	Sqlfs:  "sync, stop sqlfs-mount (SIGTERM: flush, unmount), drop_caches, start it again on the same store (RAM cache rebuilt from SQLite); restart time excluded",
	Native: "sync, drop_caches (page, dentry and inode caches)",
	Tmpfs:  "sync, drop_caches (tmpfs content stays in RAM: cold = warm)",
}

// Target is one place a benchmark runs in.
type Target struct {
	Kind  Kind
	Root  string // the directory benchmarks work in
	dir   string // private directory holding Root (and the store for sqlfs)
	mount *Mount
	// metricsAddr is where the sqlfs mount serves /metrics, "" when it does not.
	metricsAddr string
}

// Env says where targets live and how to start sqlfs.
type Env struct {
	WorkDir   string   // parent of all target directories; native targets use its disk
	MountBin  string   // sqlfs-mount binary (needed for Sqlfs targets)
	MountArgs []string // extra sqlfs-mount flags
	// Metrics makes sqlfs targets serve Prometheus metrics on a free loopback port,
	// so Counters can attribute FUSE requests and commits to each phase.
	Metrics bool
}

// Open creates a fresh, empty target of kind k.
func (e *Env) Open(ctx context.Context, k Kind) (_ *Target, err error) {
	dir, err := os.MkdirTemp(e.WorkDir, string(k)+"-")
	if err != nil {
		return nil, fmt.Errorf("target dir: %w", err)
	}
	t := &Target{Kind: k, Root: filepath.Join(dir, "root"), dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(err, t.removeDir())
		}
	}()
	if err := os.Mkdir(t.Root, 0o755); err != nil {
		return nil, fmt.Errorf("target root: %w", err)
	}
	switch k {
	case Native:
	case Tmpfs:
		if err := unix.Mount("tmpfs", t.Root, "tmpfs", 0, "mode=0755"); err != nil {
			return nil, fmt.Errorf("mount tmpfs at %s: %w", t.Root, err)
		}
	case Sqlfs:
		if e.MountBin == "" {
			return nil, errors.New("sqlfs target without a sqlfs-mount binary")
		}
		args := e.MountArgs
		if e.Metrics {
			if t.metricsAddr, err = FreeAddr(); err != nil {
				return nil, err
			}
			args = append(slices.Clone(args), "--metrics-addr", t.metricsAddr)
		}
		t.mount = &Mount{
			Bin:   e.MountBin,
			Args:  args,
			Store: filepath.Join(dir, "store.sqlfs"),
			Point: t.Root,
			Log:   filepath.Join(dir, "mount.log"),
		}
		if err := t.mount.Start(ctx); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("open target: unknown kind %q", k)
	}
	return t, nil
}

// Mount is the sqlfs-mount process of a Sqlfs target, nil for the others.
func (t *Target) Mount() *Mount { return t.mount }

// counterPrefixes are the series Counters reports: requests by op, the sum and
// count of the sampled handler durations by op, commits, and the mount's CPU
// time (steadier than elapsed time on a machine shared with other work).
var counterPrefixes = []string{"sqlfs_fuse_requests_total", durationSum, durationCount,
	"sqlfs_store_commits_total", "sqlfs_store_sync_commits_total", serverCPU}

// serverCPU is the mount's own CPU time (user and system), from the process
// collector of its metrics.
const serverCPU = "process_cpu_seconds_total"

// The series of the mount's sampled request durations (one request in 8 is
// timed, from the handler's start to its reply; go-fuse's decoding and the
// syscalls on /dev/fuse are outside).
const (
	durationSum   = "sqlfs_fuse_request_duration_seconds_sum"
	durationCount = "sqlfs_fuse_request_duration_seconds_count"
)

// Counters returns the mount's request and commit counters, or nil for targets
// without metrics.
func (t *Target) Counters(ctx context.Context) (map[string]float64, error) {
	if t.metricsAddr == "" {
		return nil, nil
	}
	// Right after a (re)start the metrics listener may still be coming up.
	var err error
	for range 50 {
		var c map[string]float64
		if c, err = Scrape(ctx, t.metricsAddr, counterPrefixes...); err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil, err
}

// StoreSize is the on-disk size of a Sqlfs target's store and its WAL, 0 for others.
func (t *Target) StoreSize() int64 {
	if t.mount == nil {
		return 0
	}
	var n int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(t.mount.Store + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// Settle writes back everything written so far: sync(2) for the kernel's caches, then
// fsync of the root directory, after which sqlfs has committed all earlier work (its
// durability contract), so background commits do not run into the next measurement.
func (t *Target) Settle() error {
	unix.Sync()
	fd, err := unix.Open(t.Root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("settle %s: %w", t.Root, err)
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return fmt.Errorf("settle: fsync %s: %w", t.Root, err)
	}
	return nil
}

// Cold empties every cache between the benchmark and the target's data; see ColdMeaning.
func (t *Target) Cold(ctx context.Context) error {
	if t.mount != nil {
		if err := t.mount.Stop(); err != nil {
			return fmt.Errorf("cold remount: %w", err)
		}
	}
	if err := DropCaches(); err != nil {
		return err
	}
	if t.mount != nil {
		return t.mount.Start(ctx)
	}
	return nil
}

// Close unmounts the target and removes its directory.
func (t *Target) Close() error {
	var err error
	switch {
	case t.mount != nil:
		err = t.mount.Stop()
	case t.Kind == Tmpfs:
		err = Unmount(t.Root)
	}
	if err != nil {
		return fmt.Errorf("close %s target, leaving %s: %w", t.Kind, t.dir, err)
	}
	return t.removeDir()
}

// removeDir removes the target's directory unless Root is still mounted: removing
// would then delete through the mount.
func (t *Target) removeDir() error {
	if mounted, err := IsMounted(t.Root); err != nil || mounted {
		return fmt.Errorf("%s target: %s still mounted, leaving it (%v)", t.Kind, t.Root, err)
	}
	if err := os.RemoveAll(t.dir); err != nil {
		return fmt.Errorf("remove %s: %w", t.dir, err)
	}
	return nil
}

// DropCaches writes dirty data back and drops the page, dentry and inode caches.
func DropCaches() error {
	unix.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0); err != nil {
		return fmt.Errorf("drop caches (needs root): %w", err)
	}
	return nil
}

// FSType names the file system holding dir, for the report header.
func FSType(dir string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "unknown"
	}
	switch st.Type {
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlayfs"
	}
	return fmt.Sprintf("0x%x", st.Type)
}

// ProcMemory reads VmRSS and VmHWM (peak RSS) of pid in bytes.
func ProcMemory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("proc status: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		var kb int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kb); err != nil {
				return 0, 0, fmt.Errorf("parse %q: %w", line, err)
			}
			rss = kb << 10
		case strings.HasPrefix(line, "VmHWM:"):
			if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err != nil {
				return 0, 0, fmt.Errorf("parse %q: %w", line, err)
			}
			hwm = kb << 10
		}
	}
	return rss, hwm, nil
}

// CanMount says why this process cannot run the benchmarks (they mount FUSE and
// tmpfs and drop caches), or nil when it can.
func CanMount() error {
	if os.Geteuid() != 0 {
		return errors.New("benchmarks need root (mounts, drop_caches)")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("benchmarks need /dev/fuse: %w", err)
	}
	return nil
}
