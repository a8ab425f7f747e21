// Package container is the exec backend that runs commands in a real Linux
// userland: one long-lived container per workspace whose /workspace is a bind
// mount of the workspace (the FUSE mountpoint in production).
//
// Containers are driven by libcontainer in-process
// (github.com/opencontainers/runc/libcontainer) rather than by the runc
// binary, because:
//   - a warm exec is one fork of our own binary (the nsenter/"init" re-exec)
//     instead of a runc process that re-reads state, re-parses the spec and
//     then does that same re-exec;
//   - the version is pinned in go.mod (runc v1.5.x) instead of whatever the
//     host ships (Debian 12 has runc 1.1.5), and the configuration is typed Go
//     rather than a bundle on disk;
//   - the sidecar owns the container's init as a child and shares a pipe
//     with it: a crashed sidecar takes its containers with it (see
//     initScript) and only cgroups and state dirs are left for the next
//     start to remove.
//
// The cost: the binary needs cgo, must import libcontainer/nsenter (this
// package does) and must call Init when started with the "init" argument
// (cmd/sqlfs-exec registers that subcommand; tests do it in TestMain). Build
// with -tags seccomp (libseccomp-dev) to get the seccomp filter.
//
// Each exec runs in its own sub-cgroup and everything it started is killed
// when it ends: a daemon (setsid, nohup, `cmd &`) does not outlive its exec,
// so no write reaches the workspace after the exec's result, and
// ActorForPID can name the exec behind any write the FUSE mount sees.
package container

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	// nsenter's C constructor joins the container's namespaces in the
	// re-executed "init" before the Go runtime starts.
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
	"golang.org/x/sys/unix"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar"
)

// Name is the backend name used by --backend.
const Name = "container"

// Defaults for zero Options fields.
const (
	DefaultStateDir    = "/run/sqlfs-exec/container"
	DefaultMemoryBytes = 2 << 30
	DefaultPids        = 1024
	DefaultCPUs        = 2.0
	DefaultUser        = "1000:1000"
	DefaultIdleTimeout = 5 * time.Minute
	DefaultTmpBytes    = 1 << 30
)

// Options describes the container of one workspace. Zero fields take the
// defaults above.
type Options struct {
	// Workspace is the host directory bind-mounted read-write at
	// /workspace: the workspace's FUSE mountpoint (mounted with allow_other,
	// since commands run as User).
	Workspace string
	// Root, when set, is the workspace's root as the process serving the
	// mount at Workspace sees it: New reads and gives the root to User
	// through it, and never calls into Workspace itself (see sidecar.Root).
	// Workspace must then be absolute.
	Root sidecar.Root
	// Rootfs is the root filesystem directory (see BuildBusyboxRootfs and
	// mkrootfs.sh). It is mounted read-only.
	Rootfs string
	// StateDir holds libcontainer state. Container ids in it name their
	// owner's pid, so a later New finds and removes a crashed owner's leftovers.
	StateDir string
	// Network shares the host's network namespace; otherwise the container
	// has its own with loopback only.
	Network bool
	// Egress, when set, is the container's only way out: its namespace
	// holds the owner's HTTP(S) proxy at ProxyAddr (egress.Proxy over this
	// Dialer, the operator's policy), which HTTP(S)_PROXY name in every
	// exec, and nothing else; no DNS (the proxy resolves names). A
	// connection is served only for an exec whose request set
	// AllowNetwork, and audited under that exec's actor. Not with Network.
	Egress *egress.Dialer
	// MemoryBytes, Pids and CPUs are cgroup limits for the whole container.
	MemoryBytes int64
	Pids        int64
	CPUs        float64
	// TmpBytes sizes the /tmp tmpfs (charged to the container's memory).
	TmpBytes int64
	// User is "uid:gid" for every process in the container.
	User string
	// IdleTimeout stops the container when no exec ran for this long; a
	// negative value keeps it until Close.
	IdleTimeout time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Errors returned by New and Exec.
var (
	ErrClosed     = errors.New("container backend closed")
	ErrBadDir     = errors.New("working directory must be under " + sidecar.WorkspaceDir)
	ErrBadConfig  = errors.New("bad container config")
	ErrNotStarted = errors.New("could not start") // the container, or a command in it
)

// Backend runs commands in the workspace's container. It is safe for
// concurrent use; concurrent Execs share one container.
type Backend struct {
	cfg      Options
	uid, gid int
	owner    string // "<pid>-<start time>", the prefix of our container ids
	log      *slog.Logger
	stopCtx  func() bool

	mu      sync.Mutex
	ctr     *running // nil while stopped
	active  int      // Execs in flight
	idle    *time.Timer
	closed  bool
	closing chan struct{} // closed when Close has finished

	// actors maps the host path of each running exec's cgroup to the
	// actor its writes are audited under (ActorForPID).
	actorsMu sync.RWMutex
	actors   map[string]execEntry
}

// New checks cfg, removes containers left behind by crashed owners in
// cfg.StateDir and returns a backend whose container starts on first Exec.
// When ctx ends the backend is closed, as by Close.
func New(ctx context.Context, cfg Options) (*Backend, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	uid, gid, err := ParseUser(cfg.User)
	if err != nil {
		return nil, err
	}
	owner, err := ownerTag(os.Getpid())
	if err != nil {
		return nil, err
	}
	log := cfg.Logger.With("backend", Name)
	root := cfg.Root
	if root == nil {
		root = dirRoot(cfg.Workspace)
	}
	if err := ensureWritable(root, cfg.Workspace, uid, gid, log); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("container state dir: %w", err)
	}
	b := &Backend{
		cfg:     cfg,
		uid:     uid,
		gid:     gid,
		owner:   owner,
		log:     log,
		closing: make(chan struct{}),
	}
	if err := b.removeStale(ctx); err != nil {
		return nil, err
	}
	b.stopCtx = context.AfterFunc(ctx, func() {
		if err := b.Close(); err != nil {
			b.log.Warn("close on context end", "err", err)
		}
	})
	return b, nil
}

func withDefaults(cfg Options) (Options, error) {
	if cfg.Workspace == "" || cfg.Rootfs == "" {
		return cfg, fmt.Errorf("%w: Workspace and Rootfs are required", ErrBadConfig)
	}
	if cfg.Network && cfg.Egress != nil {
		return cfg, fmt.Errorf("%w: Network (the host's network) and Egress (the owner's proxy) exclude each other", ErrBadConfig)
	}
	// libcontainer refuses a symlinked rootfs path, and both must exist now
	// rather than fail on first Exec. A workspace with a Root is a mount
	// this process serves: only the path to it is resolved.
	for _, p := range []*string{&cfg.Workspace, &cfg.Rootfs} {
		resolve := *p
		if p == &cfg.Workspace && cfg.Root != nil {
			if !filepath.IsAbs(resolve) {
				return cfg, fmt.Errorf("%w: Workspace %q is not absolute", ErrBadConfig, resolve)
			}
			resolve = filepath.Dir(filepath.Clean(resolve))
		}
		abs, err := filepath.Abs(resolve)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return cfg, fmt.Errorf("%w: %w", ErrBadConfig, err)
		}
		if resolve != *p {
			abs = filepath.Join(abs, filepath.Base(*p))
		}
		*p = abs
	}
	if _, err := os.Stat(filepath.Join(cfg.Rootfs, "bin", "sh")); err != nil {
		return cfg, fmt.Errorf("%w: rootfs has no /bin/sh: %w", ErrBadConfig, err)
	}
	if cfg.StateDir == "" {
		cfg.StateDir = DefaultStateDir
	}
	if cfg.MemoryBytes == 0 {
		cfg.MemoryBytes = DefaultMemoryBytes
	}
	if cfg.Pids == 0 {
		cfg.Pids = DefaultPids
	}
	if cfg.CPUs == 0 {
		cfg.CPUs = DefaultCPUs
	}
	if cfg.TmpBytes == 0 {
		cfg.TmpBytes = DefaultTmpBytes
	}
	if cfg.User == "" {
		cfg.User = DefaultUser
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg, nil
}

// ensureWritable gives the workspace root to uid:gid when they could not
// write to it (a new store's root is root's, 0755): commands run as that
// user and /workspace is the only place they can keep files. dir names it
// in the log.
func ensureWritable(root sidecar.Root, dir string, uid, gid int, log *slog.Logger) error {
	ruid, rgid, perm, err := root.Owner()
	if err != nil {
		return fmt.Errorf("%w: workspace: %w", ErrBadConfig, err)
	}
	switch {
	case int(ruid) == uid:
		if perm&0o300 == 0o300 {
			return nil
		}
	case int(rgid) == gid:
		if perm&0o030 == 0o030 {
			return nil
		}
	case perm&0o003 == 0o003:
		return nil
	}
	log.Info("giving the workspace root to the container user", "dir", dir, "uid", uid, "gid", gid,
		"was_uid", ruid, "was_gid", rgid, "mode", fmt.Sprintf("%#o", perm))
	if err := root.Chown(uid, gid); err != nil {
		return fmt.Errorf("workspace root: %w", err)
	}
	if perm&0o300 != 0o300 {
		if err := root.Chmod(perm | 0o700); err != nil {
			return fmt.Errorf("workspace root: %w", err)
		}
	}
	return nil
}

// dirRoot is the Root of a directory reached through the kernel.
type dirRoot string

func (d dirRoot) Owner() (uid, gid uint32, perm fs.FileMode, err error) {
	fi, err := os.Stat(string(d))
	if err != nil {
		return 0, 0, 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, errors.New("no ownership information")
	}
	return st.Uid, st.Gid, fi.Mode().Perm(), nil
}

func (d dirRoot) Chown(uid, gid int) error     { return os.Chown(string(d), uid, gid) }
func (d dirRoot) Chmod(perm fs.FileMode) error { return os.Chmod(string(d), perm) }

// ParseUser parses "uid:gid".
func ParseUser(s string) (uid, gid int, err error) {
	u, g, ok := strings.Cut(s, ":")
	if ok {
		uid, err = strconv.Atoi(u)
		if err == nil {
			gid, err = strconv.Atoi(g)
		}
	}
	if !ok || err != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("%w: user %q is not uid:gid", ErrBadConfig, s)
	}
	return uid, gid, nil
}

// Name implements sidecar.Backend.
func (b *Backend) Name() string { return Name }

// Init is the container-side half of libcontainer: call it first thing when
// the binary runs with the "init" argument. It never returns.
func Init() { libcontainer.Init() }

// running is a started container.
type running struct {
	c        *libcontainer.Container
	lifeline *os.File      // write end of init's fd 3; see initScript
	exited   chan struct{} // closed when init has been waited for
	execSeq  int           // execs started, guarded by Backend.mu
	net      *netns        // the proxy's namespace (Options.Egress), or nil
	initPID  int           // init's pid, seen from here
	// netNS is the container's network namespace, opened while init was
	// certainly alive (a pid read later could be another process's), for
	// DialPort; nil with Config.Network.
	netNS *os.File
}

// Execs that started the container (cold) or found it running (warm).
var (
	coldStarts = metrics.ContainerStarts.WithLabelValues("cold")
	warmStarts = metrics.ContainerStarts.WithLabelValues("warm")
)

// acquire returns the running container, starting it if needed, and counts
// the caller as active until release. seq numbers the caller's exec in it.
func (b *Backend) acquire(ctx context.Context) (r *running, seq int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, 0, ErrClosed
	}
	if b.idle != nil {
		b.idle.Stop()
		b.idle = nil
	}
	if b.ctr != nil {
		select {
		case <-b.ctr.exited:
			// Init died under us (OOM kill, or killed from outside): start over.
			b.log.Warn("container init exited; restarting", "id", b.ctr.c.ID())
			b.stopLocked()
		default:
		}
	}
	if b.ctr == nil {
		r, err := b.start(ctx)
		if err != nil {
			return nil, 0, err
		}
		b.ctr = r
		coldStarts.Inc()
	} else {
		warmStarts.Inc()
	}
	b.active++
	b.ctr.execSeq++
	return b.ctr, b.ctr.execSeq, nil
}

func (b *Backend) release(r *running) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active--
	if b.active > 0 || b.closed || b.ctr != r || b.cfg.IdleTimeout < 0 {
		return
	}
	b.idle = time.AfterFunc(b.cfg.IdleTimeout, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.active == 0 && b.ctr == r {
			b.log.Info("stopping idle container", "id", r.c.ID())
			b.stopLocked()
		}
	})
}

// initScript is the container's pid 1, run as root (with no capabilities)
// so the agent's commands, which run as User, cannot signal it.
//   - A shell blocked on a foreground child waits with waitpid(-1), so the
//     sleep loop also reaps the orphans (daemons forked by commands) that the
//     kernel reparents to pid 1.
//   - fd 3 is the read end of a pipe whose write end only the sidecar holds:
//     it reads EOF when the sidecar dies, even by SIGKILL, and the watcher
//     then ends pid 1, which takes down every process in the pid namespace.
//     (libcontainer's ParentDeathSignal does not reach the final init.)
//   - A line on fd 4 tells start that the shell runs: libcontainer's Run
//     returns once init was told to exec it, and an exec joining init's
//     namespaces half-way through that execve finds none (runc: "failed to
//     open /proc/PID/ns/ipc").
const initScript = `trap 'exit 0' TERM
{ read x <&3; kill -TERM 1; kill -KILL -1; } 4>&- &
echo >&4; exec 4>&-
while :; do sleep 86400; done`

// initReadyWait bounds the wait for the init script's first line.
const initReadyWait = 30 * time.Second

func (b *Backend) start(ctx context.Context) (_ *running, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := containerID(b.owner)
	r := &running{exited: make(chan struct{})}
	var netnsPath string
	if b.cfg.Egress != nil {
		n, nerr := newNetns(&egress.Proxy{Dialer: b.cfg.Egress, Actor: func(req *http.Request) (string, error) {
			return b.reqActor(req, r.initPID)
		}})
		if nerr != nil {
			return nil, nerr
		}
		r.net, netnsPath = n, n.path()
		defer func() {
			if err != nil {
				n.close()
			}
		}()
	}
	config, err := b.libcontainerConfig(id, netnsPath)
	if err != nil {
		return nil, err
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotStarted, err)
	}
	defer lifeR.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		lifeW.Close()
		return nil, fmt.Errorf("%w: %w", ErrNotStarted, err)
	}
	defer readyR.Close()
	c, err := libcontainer.Create(b.cfg.StateDir, id, config)
	if err != nil {
		closeAll(lifeW, readyW)
		return nil, fmt.Errorf("%w: create %s: %w", ErrNotStarted, id, err)
	}
	init := &libcontainer.Process{
		Args:       []string{"/bin/sh", "-c", initScript},
		Env:        baseEnv(),
		Cwd:        "/",
		ExtraFiles: []*os.File{lifeR, readyW},
		Init:       true,
	}
	err = c.Run(init)
	_ = readyW.Close() // init has its own: EOF if it dies before the line
	if err == nil {
		if err = awaitLine(readyR, initReadyWait); err != nil {
			go init.Wait() //nolint:errcheck // reaps the init destroy kills
		}
	}
	if err != nil {
		lifeW.Close()
		if derr := destroy(c); derr != nil {
			b.log.Warn("destroy after failed start", "id", id, "err", derr)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrNotStarted, id, err)
	}
	r.c, r.lifeline = c, lifeW
	if st, serr := c.State(); serr == nil {
		r.initPID = st.InitProcessPid
	}
	if !b.cfg.Network && r.initPID > 0 {
		// init is not reaped before the Wait below, so its pid is still
		// the container's.
		ns, nerr := os.Open(fmt.Sprintf("/proc/%d/ns/net", r.initPID))
		if nerr != nil {
			b.log.Warn("container network namespace", "id", id, "err", nerr)
		}
		r.netNS = ns
	}
	go func() {
		_, _ = init.Wait()
		close(r.exited)
	}()
	b.log.Debug("container started", "id", id)
	return r, nil
}

// awaitLine reads one line from r, for at most wait. Not cut short by the
// exec's context: the container it starts serves the execs after it too.
func awaitLine(r *os.File, wait time.Duration) error {
	if err := r.SetReadDeadline(time.Now().Add(wait)); err != nil {
		return err
	}
	var b [1]byte
	if _, err := r.Read(b[:]); err != nil {
		return fmt.Errorf("init script did not start: %w", err)
	}
	return nil
}

// initExitWait bounds how long stopLocked waits for a SIGKILLed init to be
// reaped (it takes milliseconds; a process stuck in the kernel can take
// for ever, and Close once hung there). A variable for the test of that.
var initExitWait = 10 * time.Second

// stopLocked kills the container and removes its cgroups and state dir.
// Killing pid 1 of the container's pid namespace kills every process in it.
func (b *Backend) stopLocked() {
	r := b.ctr
	if r == nil {
		return
	}
	b.ctr = nil
	if err := r.c.Signal(unix.SIGKILL); err != nil && !errors.Is(err, libcontainer.ErrNotRunning) {
		b.log.Warn("kill container", "id", r.c.ID(), "err", err)
	}
	select {
	case <-r.exited:
	case <-time.After(initExitWait):
		// Never hang Close or a restart on one container: its state dir
		// and cgroups go all the same (destroy kills what is left).
		b.log.Warn("container init did not exit after SIGKILL; destroying it anyway", "id", r.c.ID(), "waited", initExitWait)
	}
	_ = r.lifeline.Close()
	if r.net != nil {
		r.net.close()
	}
	if r.netNS != nil {
		_ = r.netNS.Close()
	}
	if err := destroy(r.c); err != nil {
		b.log.Warn("destroy container", "id", r.c.ID(), "err", err)
	}
}

// Close stops the container and removes everything it left on the host. It
// is safe to call more than once and concurrently with Exec, whose commands
// are killed.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		<-b.closing
		return nil
	}
	b.closed = true
	if b.idle != nil {
		b.idle.Stop()
		b.idle = nil
	}
	b.stopLocked()
	b.mu.Unlock()
	if b.stopCtx != nil {
		b.stopCtx()
	}
	close(b.closing)
	return nil
}

func baseEnv() []string {
	return []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		// The user has no home in a read-only rootfs; caches (npm, pip) go
		// to the tmpfs rather than into the workspace.
		"HOME=/tmp",
		"LANG=C.UTF-8",
	}
}
