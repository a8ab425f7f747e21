// Package workspace opens a workspace store with everything that serves it
// in one process: the fs core, the shell backend, the agent tools, the FUSE
// mount with the container backend over it, and the usage gauges. Both
// sqlfs-mount and sqlfs-exec (serve, and run/tool without an owner) build
// their workspace here, so the two cannot drift apart.
package workspace

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/egress"
	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/git"
	"github.com/sqlfs/sqlfs/sidecar/httpcred"
	"github.com/sqlfs/sqlfs/sidecar/js"
	"github.com/sqlfs/sqlfs/sidecar/preview"
	"github.com/sqlfs/sqlfs/sidecar/publish"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// Options say how to open a workspace.
type Options struct {
	FS sfs.Options
	// Mount, when set, mounts the workspace at this empty directory.
	Mount string
	// FUSE tunes the mount. ActorForPID is set here when a container
	// backend is opened.
	FUSE fuse.Options
	// Container opens the container backend over the mountpoint (Mount
	// must be set). Its user reaches the mount through allow_other, so the
	// mountpoint's parent must be private (mode 0700): other host users
	// then cannot reach the workspace. out is the workspace's egress
	// dialer (the operator's policy, audited), nil when it allows nothing
	// and LiveEgress is off: the container's way out
	// (container.Options.Egress). root is the
	// workspace's root through the store's core, for what the backend
	// changes there (container.Options.Root): this process serves the mount.
	// lim is ContainerLimits, whose zero fields the opener fills with its
	// own defaults.
	Container func(ctx context.Context, mountpoint string, root sidecar.Root, out *egress.Dialer, lim ContainerLimits) (sidecar.Backend, error)
	// ContainerLimits are the workspace's own container limits (a host's
	// limits.json), given to Container.
	ContainerLimits ContainerLimits
	// MountOnDemand mounts at Mount only for the container backend, at
	// its first exec, and unmounts when the workspace closes (a host's
	// hibernation), removing the mountpoint it made: a workspace that runs
	// no container holds no mount. Its previews (with PublicURL) reach the
	// container while it runs and end when the workspace closes.
	MountOnDemand bool
	// ContainerSlots, when set, bound the container execs run at once,
	// shared with every workspace holding them (a host's
	// --max-containers); one past them is refused at once.
	ContainerSlots *sidecar.Slots
	// Shell configures the shell backend; its Logger defaults to FS.Logger.
	Shell shell.Options
	// PublicURL is the base URL of published links. "" uses the one a
	// serving process recorded beside the store; without either, the
	// publish tool and sqlfs:publish say publishing is unavailable.
	PublicURL string
	// Egress is the operator's network rules for execs (--egress-allow):
	// nil or empty leaves the network off, and an exec's allow_network
	// reaches only what it allows, so an API caller cannot grant itself
	// what the operator did not.
	Egress *egress.Policy
	// LiveEgress builds the egress dialer even while Egress allows
	// nothing, so that SetEgress can grant network to the open workspace
	// (a host's PATCH): the shell's git, the js fetch and the container's
	// proxy then all go through it.
	LiveEgress bool
	// NoAutoCheckpoint turns off the checkpoint taken before every exec
	// (which undo needs); AutoCheckpoint bounds how many stay, nil meaning
	// tools.DefaultCheckpointRetention.
	NoAutoCheckpoint bool
	AutoCheckpoint   *tools.CheckpointRetention
	// Credentials are the operator's tokens, attached to the shell's git
	// requests to matching hosts (--http-credential); the execs never see
	// them.
	Credentials []httpcred.Rule
	// JSMemory is the memory one js exec may use (its worker's heap);
	// zero means js.DefaultMaxHeapBytes.
	JSMemory int64
	// NoUsageGauges leaves the process-wide usage gauges (files, bytes)
	// alone: a host serves many stores, and each would overwrite them.
	NoUsageGauges bool
}

// Workspace is an open store with what serves it.
type Workspace struct {
	FS       *sfs.FS
	Mount    *fuse.Mount // nil without Options.Mount
	Backends map[string]sidecar.Backend
	Tools    *tools.Service
	// Egress carries the execs' connections under Options.Egress (or
	// the last SetEgress), each audited as its exec's; nil when the
	// operator allows none and the workspace was opened without
	// LiveEgress.
	Egress http.RoundTripper
	// Previews gives ports of the container preview URLs on the public
	// listener (served at preview.PathPrefix); nil without a container
	// backend or a public URL.
	Previews *preview.Registry

	// order is Backends in the order they were opened: one may run its
	// programs through an earlier one (js through shell), so Close stops
	// them in reverse.
	order []sidecar.Backend

	stopUsage    context.CancelFunc
	usageDone    chan struct{}
	stopPreviews context.CancelFunc
	// dialer is the one point the execs' connections go through (nil:
	// none may be made).
	dialer *egress.Dialer
}

// ErrNoLiveEgress is SetEgress's refusal in a workspace opened without
// LiveEgress and allowing no network: no dialer exists to take new rules.
var ErrNoLiveEgress = errors.New("the workspace was opened without network; reopen it with its new egress rules")

// SetEgress replaces the execs' network rules from their next connection
// on (egress.Dialer.SetPolicy; nil allows nothing); a connection open now
// stays open.
func (w *Workspace) SetEgress(p *egress.Policy) error {
	if w.dialer == nil {
		if p.Empty() {
			return nil
		}
		return ErrNoLiveEgress
	}
	w.dialer.SetPolicy(p)
	return nil
}

// EgressPolicy is the rules the execs' next connections are checked
// against (nil: none allowed).
func (w *Workspace) EgressPolicy() *egress.Policy { return w.dialer.Current() }

// ErrNotPrivate is returned when a mount other users' processes must reach
// (allow_other) sits in a directory other host users can enter.
var ErrNotPrivate = errors.New("the mountpoint's parent directory is not private")

// actorNamer is what a container backend offers to name the exec a pid
// belongs to (its per-exec cgroup), so the mount audits its writes as that
// exec's.
type actorNamer interface {
	ActorForPID(pid uint32) (actor string, ok bool)
}

// portDialer is what a container backend offers to reach a port inside it
// (a preview).
type portDialer interface {
	DialPort(ctx context.Context, port uint16) (net.Conn, error)
}

// Open opens the store at path and builds the rest over it. A store owned
// by another process fails with *sqlstore.OwnedError.
func Open(ctx context.Context, path string, o Options) (*Workspace, error) {
	log := o.FS.Logger
	if log == nil {
		log = slog.Default()
	}
	if o.Container != nil {
		if o.Mount == "" {
			return nil, errors.New("the container backend needs a mount")
		}
		if err := checkPrivateParent(o.Mount); err != nil {
			return nil, err
		}
		o.FUSE.AllowOther = true
	}
	if o.MountOnDemand && o.Container == nil {
		return nil, errors.New("a mount on demand is the container backend's: set Container")
	}
	f, err := sfs.Open(ctx, path, o.FS)
	if err != nil {
		return nil, err
	}
	if o.Shell.Logger == nil {
		o.Shell.Logger = log
	}
	var egressT http.RoundTripper
	var dialer *egress.Dialer
	if !o.Egress.Empty() || o.LiveEgress {
		dialer = &egress.Dialer{Policy: o.Egress, Audit: auditEgress(f, log)}
		egressT = dialer.Transport()
		// The shell's git reaches the network through the same
		// transport, with the operator's credentials added.
		ct, err := httpcred.New(egressT, httpcred.Options{Rules: o.Credentials})
		if err != nil {
			return nil, errors.Join(err, f.Close())
		}
		o.Shell.HTTP = ct
	}
	pub, err := newPublisher(path, f, o.PublicURL)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	w := &Workspace{FS: f, Backends: map[string]sidecar.Backend{}, Egress: egressT, dialer: dialer}
	// git and node are the shell's commands; node's programs publish and
	// checkpoint through this workspace, and fetch through o.Shell.HTTP.
	o.Shell.Commands = maps.Clone(o.Shell.Commands)
	if o.Shell.Commands == nil {
		o.Shell.Commands = map[string]builtin.Func{}
	}
	o.Shell.Commands["git"] = git.Main
	o.Shell.Commands["node"] = js.Command(js.Options{Publish: pub, MaxHeapBytes: o.JSMemory, Checkpoint: func(ctx context.Context, actor, op string, args []byte) ([]byte, error) {
		return w.Tools.CheckpointOp(ctx, actor, op, args) // set below, before any exec
	}})
	sh := shell.New(f, o.Shell)
	w.addBackend(sh)
	if !o.NoUsageGauges {
		w.trackUsage()
	}
	if o.Mount != "" {
		// The container backend is opened over the mount, after it; until
		// then no pid is a container exec's.
		var mu sync.Mutex
		var namer actorNamer
		if o.Container != nil && o.FUSE.ActorForPID == nil {
			o.FUSE.ActorForPID = func(pid uint32) (string, bool) {
				mu.Lock()
				n := namer
				mu.Unlock()
				if n == nil {
					return "", false
				}
				return n.ActorForPID(pid)
			}
		}
		if o.FUSE.FSName == "" {
			o.FUSE.FSName = "sqlfs:" + path
		}
		mount := func(ctx context.Context, mountpoint string) (*fuse.Mount, error) {
			m, err := fuse.Start(ctx, f, mountpoint, o.FUSE)
			if err == nil {
				log.Info("mounted", "store", path, "mountpoint", m.Mountpoint(), "pid", os.Getpid())
			}
			return m, err
		}
		startContainer := func(ctx context.Context, mountpoint string) (sidecar.Backend, error) {
			cb, err := o.Container(ctx, mountpoint, coreRoot{f}, dialer, o.ContainerLimits)
			if err != nil {
				return nil, err
			}
			if n, ok := cb.(actorNamer); ok {
				mu.Lock()
				namer = n
				mu.Unlock()
			}
			return cb, nil
		}
		if o.MountOnDemand {
			d := &onDemand{open: mountOnDemand(o.Mount, mount, startContainer)}
			d.ctx, d.cancel = context.WithCancel(context.WithoutCancel(ctx))
			w.addBackend(d)
			if o.PublicURL != "" {
				w.openPreviews(d, d.Name(), o.PublicURL, log)
			}
		} else {
			if w.Mount, err = mount(ctx, o.Mount); err != nil {
				return nil, errors.Join(err, w.Close(ctx))
			}
			if o.Container != nil {
				cb, err := startContainer(ctx, w.Mount.Mountpoint())
				if err != nil {
					return nil, errors.Join(fmt.Errorf("container backend: %w", err), w.Close(ctx))
				}
				w.addBackend(cb)
				if d, ok := cb.(portDialer); ok && o.PublicURL != "" {
					w.openPreviews(d, cb.Name(), o.PublicURL, log)
				}
			}
		}
	}
	// The JavaScript backend runs its programs through the shell backend.
	w.addBackend(js.New(sh))
	to := tools.Options{Admit: admitContainers(o.ContainerSlots), Publish: pub, Previews: w.Previews, Egress: dialer}
	if !o.NoAutoCheckpoint {
		to.AutoCheckpoint = &tools.DefaultCheckpointRetention
		if o.AutoCheckpoint != nil {
			to.AutoCheckpoint = o.AutoCheckpoint
		}
	}
	w.Tools = tools.NewForCore(f, w.Backends, to)
	return w, nil
}

// auditEgress records each connection an exec tried in the audit trail, as
// op "connect" on HOST:PORT under the exec's actor.
func auditEgress(f *sfs.FS, log *slog.Logger) func(egress.Attempt) {
	return func(a egress.Attempt) {
		target := net.JoinHostPort(a.Host, strconv.Itoa(int(a.Port)))
		// A refusal is EACCES with its reason (the rule that refused, or
		// that none allowed) beside it: the result alone would be EIO.
		err, why := a.Err, ""
		if d := (*egress.DeniedError)(nil); errors.As(a.Err, &d) {
			err, why = syscall.EACCES, d.Reason
		}
		f.WithActor(a.Actor).RecordDetail("connect", target, why, err)
		if a.Outcome == egress.Denied {
			log.Info("egress refused", "actor", a.Actor, "target", target, "err", a.Err)
		}
	}
}

// checkPrivateParent refuses a mountpoint whose parent other users can
// enter: with allow_other they could use the workspace through it.
func checkPrivateParent(mountpoint string) error {
	abs, err := filepath.Abs(mountpoint)
	if err != nil {
		return err
	}
	parent := filepath.Dir(abs)
	fi, err := os.Stat(parent)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%w: %s is mode %o; the container's user reaches the mount through allow_other, so make it 0700 (chmod 700 %s) or mount in a private directory",
			ErrNotPrivate, parent, fi.Mode().Perm(), parent)
	}
	return nil
}

// trackUsage keeps the usage gauges current for scrapes until Close.
func (w *Workspace) trackUsage() {
	ctx, cancel := context.WithCancel(context.Background())
	w.stopUsage, w.usageDone = cancel, make(chan struct{})
	go func() {
		defer close(w.usageDone)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		inodeCache := metrics.Cache("inode")
		for {
			u := w.FS.Usage()
			metrics.FSInodes.Set(float64(u.Inodes))
			metrics.FSBytes.Set(float64(u.Bytes))
			inodeCache.Entries.Set(float64(u.Inodes)) // every inode is in RAM
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// openPreviews makes the preview registry over the container backend
// named backend: a preview lives while its exec, one of that backend's,
// runs.
func (w *Workspace) openPreviews(d portDialer, backend, base string, log *slog.Logger) {
	w.Previews = preview.New(preview.Options{
		BaseURL: base,
		Dial:    d.DialPort,
		Running: func(id string) bool {
			info, err := w.Tools.ExecInfo(id) // set before any exec
			return err == nil && info.Running && info.Backend == backend
		},
		Record: func(actor, op, target string, err error) { w.FS.WithActor(actor).Record(op, target, err) },
		Logger: log,
	})
	ctx, cancel := context.WithCancel(context.Background())
	w.stopPreviews = cancel
	go w.Previews.Watch(ctx, time.Second)
}

// PublicHandler serves the workspace on a public listener: its published
// links (/p/, signed with links' key) and its previews (/x/).
func (w *Workspace) PublicHandler(links *publish.Links, log *slog.Logger) http.Handler {
	var h http.Handler = publish.Handler(w.FS, links, log)
	if w.Previews != nil {
		mux := http.NewServeMux()
		mux.Handle("/", h)
		mux.Handle(preview.PathPrefix, w.Previews)
		h = mux
	}
	return h
}

func (w *Workspace) addBackend(b sidecar.Backend) {
	w.Backends[b.Name()] = b
	w.order = append(w.order, b)
}

// Close lets running execs finish until ctx ends and cancels the rest,
// then stops the backends (the last opened first), unmounts and closes the
// store, which commits everything.
func (w *Workspace) Close(ctx context.Context) error {
	if w.Previews != nil {
		w.stopPreviews()
		w.Previews.Close()
	}
	if w.Tools != nil {
		if err := w.Tools.Wait(ctx, false); err != nil {
			_ = w.Tools.Wait(context.WithoutCancel(ctx), true)
		}
	}
	var errs []error
	for i := len(w.order) - 1; i >= 0; i-- {
		if err := w.order[i].Close(); err != nil {
			errs = append(errs, fmt.Errorf("backend %s: %w", w.order[i].Name(), err))
		}
	}
	if w.Mount != nil {
		if err := w.Mount.Unmount(); err != nil {
			errs = append(errs, fmt.Errorf("unmount: %w", err))
		}
	}
	if w.stopUsage != nil {
		w.stopUsage()
		<-w.usageDone
	}
	if err := w.FS.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close store: %w", err))
	}
	return errors.Join(errs...)
}

// coreRoot is a workspace's root through its core (sidecar.Root).
type coreRoot struct{ f *sfs.FS }

func (r coreRoot) Owner() (uid, gid uint32, perm iofs.FileMode, err error) {
	a, err := r.f.Stat("/")
	return a.Uid, a.Gid, iofs.FileMode(a.Mode).Perm(), err
}

func (r coreRoot) Chown(uid, gid int) error       { return r.f.Chown("/", uid, gid) }
func (r coreRoot) Chmod(perm iofs.FileMode) error { return r.f.Chmod("/", uint32(perm.Perm())) }
