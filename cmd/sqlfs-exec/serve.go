package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/fleet"
	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/netlimit"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/replica"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/container"
	"github.com/sqlfs/sqlfs/sidecar/publish"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// workspaceOptions say how to open a workspace in this process.
type workspaceOptions struct {
	flags  *workspace.Flags // an owner's flags (serve); nil: the defaults
	socket string           // advertised to later openers
	mount  string           // FUSE mountpoint, "" for none
	// onDemand: a host sets each workspace's mountpoint, mounted for the
	// container backend only (workspace.Options.MountOnDemand).
	onDemand  bool
	container *containerFlags // the container backend, over the mount
	logger    *slog.Logger
	publicURL string             // base URL of published links, "" for the one recorded beside the store
	egress    workspace.ListFlag // --egress-allow of a client command opening the store itself
	// egressDeny: its --egress-deny.
	egressDeny workspace.ListFlag
	// replicated leaves WAL checkpoints to Litestream (--replica).
	replicated bool
}

// openWorkspace opens the store with its backends and tools (and the mount
// and container backend when asked) through the constructor sqlfs-mount
// uses too. A store owned by another process fails with
// *sqlstore.OwnedError.
func openWorkspace(ctx context.Context, store string, o workspaceOptions) (*workspace.Workspace, error) {
	wo, err := o.options()
	if err != nil {
		return nil, err
	}
	return workspace.Open(ctx, store, wo)
}

// options are the workspace.Options o stands for.
func (o workspaceOptions) options() (workspace.Options, error) {
	// The shell and the tools create files as the user the container runs
	// commands as, so either backend can change what the other made.
	user := container.DefaultUser
	if o.container != nil && o.container.user != "" {
		user = o.container.user
	}
	uid, gid, err := container.ParseUser(user)
	if err != nil {
		return workspace.Options{}, err
	}
	wo := workspace.Options{
		FS:        sfs.Options{Logger: o.logger},
		Shell:     shell.Options{Logger: o.logger},
		Mount:     o.mount,
		PublicURL: o.publicURL,
	}
	if o.flags != nil {
		if err := o.flags.Apply(&wo, o.logger); err != nil {
			return workspace.Options{}, err
		}
	}
	if len(o.egress) > 0 || len(o.egressDeny) > 0 {
		if wo.Egress, err = egress.ParsePolicy(o.egress, o.egressDeny); err != nil {
			return workspace.Options{}, fmt.Errorf("--egress-allow/--egress-deny: %w", err)
		}
	}
	wo.FS.Socket, wo.FS.Uid, wo.FS.Gid = o.socket, uint32(uid), uint32(gid)
	wo.FS.ExternalWALCheckpoints = o.replicated
	if (o.mount != "" || o.onDemand) && o.container != nil && o.container.rootfs != "" {
		wo.Container = func(ctx context.Context, mountpoint string, root sidecar.Root, out *egress.Dialer, lim workspace.ContainerLimits) (sidecar.Backend, error) {
			return o.container.open(ctx, mountpoint, root, out, lim)
		}
	}
	return wo, nil
}

func init() {
	register("serve", "own a workspace and serve the HTTP API, tools and MCP", runServe)
}

const serveUsage = `usage: sqlfs-exec serve --store STORE [flags]
       sqlfs-exec serve --workspaces DIR [--max-open N] [--idle-timeout D] [--memory-high BYTES] [flags]

Owns the workspace STORE (created when missing), optionally mounts it, and
serves the HTTP JSON API, the agent tools and MCP (at /mcp) until SIGTERM or
SIGINT. Other sqlfs-exec commands on STORE go through this process. The
default listener is the Unix socket STORE.sock (mode 0600); TCP needs
--token-file. The container backend needs --mount and --rootfs.

With --workspaces, hosts every workspace stored under DIR (one folder per
id): created, listed and removed at /v1/workspaces, each served under
/v1/workspaces/ID/ with the routes above (MCP at /v1/workspaces/ID/mcp),
opened on first use and hibernated (closed, after a final commit) when idle.
The default listener is DIR.sock; on TCP the --token-file token is the
operator's, and POST /v1/workspaces/ID/tokens mints tokens for one
workspace. The workspace flags (policy, quota, limits) apply to every
workspace, and --memory, --pids, --cpus to every container whose workspace
sets no container limits of its own (PATCH /v1/workspaces/ID). With --rootfs, a workspace's first container exec mounts it under
DIR/.mounts/ID, unmounted when it hibernates; --mount is not available there
yet. --public-addr serves workspace ID's links under /w/ID/p/ and, with
--rootfs, the previews of its container execs under /w/ID/x/ (sqlfs-exec
expose --host URL --workspace ID); not with --fleet-lease yet.

With --replica URL, every change is shipped continuously to S3-compatible
object storage by a litestream child process (a host's workspace ID to
URL/ID/workspace.sqlfs); shutdown, and a host's hibernation of a workspace,
return only once the replica holds everything committed. A host restores a
workspace it does not have from the replica on its first request.
sqlfs-exec restore brings a store back, to any second of the retention.

With --fleet-lease URL, several hosts share the workspaces: each is served
by one host at a time, under a lease kept in the bucket URL names (S3
conditional writes); a request for a workspace another host holds is
forwarded to it (its --advertise-addr). A host that dies loses its leases
after --lease-ttl, and the next host asked restores each workspace from
the replica and serves it; one shutting down hands its workspaces off at
once (final replication, leases released). Every host of a fleet has the
same --token-file token.

flags:
`

func runServe(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var (
		store       = fs.String("store", "", "workspace store `FILE` (required)")
		mount       = fs.String("mount", "", "also mount the workspace at `DIR` (FUSE)")
		listen      = fs.String("listen", "", "`unix:PATH` or HOST:PORT to serve on (default unix:STORE.sock)")
		tokenFile   = fs.String("token-file", "", "`FILE` holding the bearer token every request must carry (required on TCP)")
		grace       = fs.Duration("grace", 10*time.Second, "how long shutdown lets running execs finish before cancelling them")
		metricsAddr = fs.String("metrics-addr", "", "also serve Prometheus metrics at http://`HOST:PORT`/metrics (the API serves /metrics too)")
		pprofAddr   = fs.String("pprof-addr", "", "serve Go's profiles at http://`HOST:PORT`/debug/pprof/, without authentication, for tuning; :PORT listens on loopback only (off by default)")
		publicAddr  = fs.String("public-addr", "", "serve published links (sqlfs-exec publish) on `HOST:PORT`, without authentication (off by default)")
		publicURL   = fs.String("public-url", "", "base `URL` published links start with (default http://PUBLIC-ADDR)")
		apiConns    = fs.Int("api-max-conns", api.DefaultMaxConns, "most connections the API listener holds open at once (a TCP client address at most a quarter of them); more are closed on accept")
		hostDir     = fs.String("workspaces", "", "host every workspace stored under `DIR` (instead of --store)")
		maxOpen     = fs.Int("max-open", 0, "with --workspaces: open at most `N` workspaces, hibernating the least recently used idle one first (0: no bound)")
		idle        = fs.Duration("idle-timeout", 30*time.Second, "with --workspaces: hibernate a workspace unused for this long")
		wsLabel     = fs.Bool("metrics-workspace-label", false, "with --workspaces: count each workspace's requests in sqlfs_host_workspace_requests_total{workspace} (one series per workspace)")
		maxReqs     = fs.Int("max-requests", host.DefaultMaxRequests(), "with --workspaces: serve at most `N` requests at once, host-wide (a workspace's own, a published link's, the operator's create, fork, PATCH and DELETE; 16 per CPU by default; 0: no bound); the others wait their turn, round robin over workspaces, first come first served within each")
		maxQueued   = fs.Int("max-queued", host.DefaultMaxQueued, "with --workspaces --max-requests: at most `N` requests wait for a turn, host-wide; one more is refused with 429 and Retry-After")
		maxQueuedWS = fs.Int("max-queued-per-workspace", host.DefaultMaxQueuedPerWorkspace, "with --workspaces --max-requests: at most `N` requests of one workspace wait; one more is refused with 429 and Retry-After")
		maxHold     = fs.Duration("max-request-hold", host.DefaultMaxHold, "with --workspaces --max-requests: a request keeps its turn for at most this long; one running longer (a build's exec, an export) goes on outside the bound, and its turn passes to the next")
		maxCtrs     = fs.Int("max-containers", 0, "with --workspaces and --rootfs: run at most `N` container execs at once on the host; one more is refused with 429 and Retry-After (0: no bound)")
		memHigh     = fs.Int64("memory-high", 0, "with --workspaces: past `BYTES` of resident memory, hibernate idle workspaces early, least recently used first (0: no bound)")
		restoreNice = fs.Int("restore-nice", replica.DefaultRestoreNice, "with --workspaces --replica: run restores from the replica at niceness `N` (nice(1); 0, the default: not niced; a niced restore thread the kernel holds back also holds back the host goroutines that share its scheduler slot)")
		maxRestores = fs.Int("max-restores", replica.DefaultMaxRestores(), "with --workspaces --replica: restore at most `N` workspaces from the replica at once (two per CPU by default); the others wait their turn, their leases renewed meanwhile")
		cf          containerFlags
		wf          workspace.Flags
		ff          fleet.Flags
		rf          replica.Flags
		public      = publish.DefaultServerOptions
	)
	cf.register(fs)
	wf.Register(fs)
	ff.Register(fs)
	rf.Register(fs)
	public.AddFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), serveUsage)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if (*store == "") == (*hostDir == "") || fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	slog.SetDefault(log)
	token, err := readToken(*tokenFile)
	if err != nil {
		return fail("serve", err)
	}
	if *pprofAddr != "" {
		ln, err := metrics.ListenPprof(ctx, *pprofAddr)
		if err != nil {
			return fail("serve", err)
		}
		go metrics.ServePprof(ctx, ln, log)
	}
	if *hostDir != "" {
		if *mount != "" {
			return fail("serve", errors.New("--mount is not available with --workspaces (with --rootfs each workspace is mounted for its container execs under DIR/.mounts)"))
		}
		return serveHost(ctx, hostOptions{
			dir: *hostDir, listen: *listen, token: token, grace: *grace, metricsAddr: *metricsAddr,
			publicAddr: *publicAddr, publicURL: publicBase(*publicAddr, *publicURL), public: public,
			maxOpen: *maxOpen, maxRestores: *maxRestores, restoreNice: *restoreNice, maxConns: *apiConns, idle: *idle, memoryHigh: *memHigh, workspaceLabel: *wsLabel, maxContainers: *maxCtrs,
			admission: host.AdmissionOptions{MaxRequests: *maxReqs, MaxQueued: *maxQueued, MaxQueuedPerWorkspace: *maxQueuedWS, MaxHold: *maxHold}, flags: &wf, container: &cf, fleet: &ff, replica: &rf, logger: log,
		})
	}
	var ro replica.Options
	if rf.Enabled() {
		if ro, err = rf.Options(replica.StoreStateDir(*store), log); err != nil {
			return fail("serve", err)
		}
	}
	if *publicAddr != "" {
		// Facing the internet, the caps must leave the owner its files.
		if err := netlimit.CheckFiles(*apiConns, public.MaxConns); err != nil {
			return fail("serve", err)
		}
	}
	addr := *listen
	if addr == "" {
		addr = "unix:" + api.SocketPath(*store)
	}
	ws, err := openWorkspace(ctx, *store, workspaceOptions{
		flags: &wf, socket: api.Advertised(addr),
		mount: *mount, container: &cf, logger: log,
		publicURL:  publicBase(*publicAddr, *publicURL),
		replicated: rf.Enabled(),
	})
	if err != nil {
		return fail("serve", err)
	}
	closeWS := ws.Close
	if rf.Enabled() {
		if closeWS, err = replicate(ctx, *store, ws, ro); err != nil {
			return fail("serve", errors.Join(err, ws.Close(ctx)))
		}
	}
	// Listening comes after taking the store: the owner lock guarantees a
	// leftover socket file is a dead owner's.
	ln, err := api.Listen(addr, token != "")
	if err != nil {
		return fail("serve", errors.Join(err, closeWS(ctx)))
	}
	if *publicAddr != "" {
		if err := servePublic(ctx, *store, ws, *publicAddr, publicBase(*publicAddr, *publicURL), public, log); err != nil {
			return fail("serve", errors.Join(err, ln.Close(), closeWS(ctx)))
		}
	}
	if *metricsAddr != "" {
		go func() {
			if err := metrics.Serve(ctx, *metricsAddr); err != nil {
				log.Error("metrics server stopped", "addr", *metricsAddr, "err", err)
			}
		}()
	}
	srv := api.NewServer(api.Options{Tools: ws.Tools, Token: token, MaxConns: *apiConns, Grace: *grace, Version: metrics.Version, Logger: log})
	log.Info("serving", "store", *store, "listen", ln.Addr().String(), "pid", os.Getpid(), "backends", ws.Tools.Backends())
	code := 0
	if err := srv.Serve(ctx, ln); err != nil {
		log.Error("serve", "err", err)
		code = 1
	}
	if err := closeWS(context.WithoutCancel(ctx)); err != nil {
		log.Error("final commit, unmount or replication failed: recent changes may be lost", "err", err)
		return 1
	}
	log.Info("store closed cleanly")
	return code
}

// replicate starts replicating the open store (litestream as a child
// process) and returns the close that ships everything committed before
// stopping it.
func replicate(ctx context.Context, store string, ws *workspace.Workspace, o replica.Options) (func(context.Context) error, error) {
	sup, err := replica.StartStore(ctx, store, o)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		err := ws.Close(ctx)
		// A final sync gets a minute of its own, whatever ctx has left.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		return errors.Join(err, sup.Close(sctx))
	}, nil
}
