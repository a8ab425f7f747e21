package main

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/sqlfs/sqlfs/fleet"
	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/netlimit"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/replica"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/publish"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// hostOptions are serve --workspaces' flags.
type hostOptions struct {
	dir, listen, token, metricsAddr string
	publicAddr, publicURL           string // the public listener's address and base URL, "" for none
	public                          publish.ServerOptions
	grace, idle                     time.Duration
	maxOpen, maxRestores, maxConns  int
	restoreNice                     int
	maxContainers                   int
	memoryHigh                      int64
	admission                       host.AdmissionOptions
	workspaceLabel                  bool
	flags                           *workspace.Flags
	container                       *containerFlags
	fleet                           *fleet.Flags
	replica                         *replica.Flags
	logger                          *slog.Logger
}

// serveHost serves every workspace under o.dir until ctx ends, then lets
// running execs finish for the grace and closes every open workspace.
func serveHost(ctx context.Context, o hostOptions) (code int) {
	if o.maxOpen < 0 || o.idle <= 0 || o.memoryHigh < 0 || o.maxRestores < 1 || o.restoreNice < 0 || o.restoreNice > 19 {
		return fail("serve", errors.New("--max-open and --memory-high must be 0 or more, --idle-timeout positive, --max-restores 1 or more and --restore-nice 0 to 19"))
	}
	if o.publicAddr != "" {
		if o.fleet.Enabled() {
			// Why it is more than a step is in the README's fleet section.
			return fail("serve", errors.New("--public-addr is not available with --fleet-lease yet: a link's signing key lives beside one lease generation's store, not in the replica, so links would stop working when a workspace moves, and the public listener does not forward to the host holding a workspace"))
		}
		// Facing the internet, the caps must leave the host its files.
		if err := netlimit.CheckFiles(o.maxConns, o.public.MaxConns); err != nil {
			return fail("serve", err)
		}
	}
	var ro replica.Options
	if o.replica.Enabled() {
		var err error
		if ro, err = o.replica.Options(replica.DirStateDir(o.dir), o.logger); err != nil {
			return fail("serve", err)
		}
	}
	wo, err := workspaceOptions{flags: o.flags, container: o.container, onDemand: true, logger: o.logger, replicated: o.replica.Enabled(), publicURL: o.publicURL}.options()
	if err != nil {
		return fail("serve", err)
	}
	if a := o.admission; a.MaxRequests < 0 || a.MaxQueued < 0 || a.MaxQueuedPerWorkspace < 0 || a.MaxHold <= 0 {
		return fail("serve", errors.New("--max-requests, --max-queued and --max-queued-per-workspace must be 0 or more, --max-request-hold positive"))
	}
	if o.maxContainers < 0 {
		return fail("serve", errors.New("--max-containers must be 0 or more"))
	}
	if o.maxContainers > 0 {
		wo.ContainerSlots = sidecar.NewSlots(o.maxContainers, "container slots of this host (--max-containers)")
	}
	dir, err := host.OpenDir(o.dir, wo, api.Options{Version: metrics.Version, Logger: o.logger})
	if err != nil {
		return fail("serve", err)
	}
	defer dir.Close()
	// base opens a workspace's store, in the folder of a lease generation
	// when in a fleet.
	var base interface {
		host.Opener
		fleet.Opener
	} = dir
	// remote is where workspaces live beyond DIR, deleted with them.
	var remote host.Remote
	if o.fleet.Enabled() {
		// No lease is held yet: every local copy leaves the replicator's
		// sight until this host takes its lease.
		if err := fleet.ParkAll(o.dir); err != nil {
			return fail("serve", err)
		}
	}
	if o.replica.Enabled() {
		sup, err := replica.StartDir(ctx, o.dir, host.StoreName, ro)
		if err != nil {
			return fail("serve", err)
		}
		// Runs after the host closed every workspace (each waits for
		// its own sync): what is left is stopping litestream.
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := sup.Close(sctx); err != nil {
				o.logger.Error("final replication failed: the replica may miss the last changes", "err", err)
				code = 1
			}
		}()
		rop := &replica.Opener{Dir: dir, Supervisor: sup, Options: ro, MaxRestores: o.maxRestores, RestoreNice: cmp.Or(o.restoreNice, -1)}
		base, remote = rop, rop
	}
	var opener host.Opener = base
	addr := o.listen
	if addr == "" {
		addr = "unix:" + filepath.Clean(o.dir) + ".sock"
	}
	ln, err := api.Listen(addr, o.token != "")
	if err != nil {
		return fail("serve", err)
	}
	var member *fleet.Fleet
	if o.fleet.Enabled() {
		if member, err = joinFleet(ctx, o, dir, base, remote); err != nil {
			return fail("serve", errors.Join(err, ln.Close()))
		}
		opener, remote = member, member
	}
	h := host.New(host.Options{Opener: opener, MaxOpen: o.maxOpen, IdleTimeout: o.idle, MemoryHigh: o.memoryHigh, Logger: o.logger})
	if o.metricsAddr != "" {
		go func() {
			if err := metrics.Serve(ctx, o.metricsAddr); err != nil {
				o.logger.Error("metrics server stopped", "addr", o.metricsAddr, "err", err)
			}
		}()
	}
	// One bound for the API, the public listener and what the fleet
	// serves.
	admission := host.NewAdmission(o.admission)
	if o.publicAddr != "" {
		if err := listenPublic(ctx, host.PublicHandler(h, dir, admission), o.publicAddr, o.public, func() {}, o.logger); err != nil {
			return fail("serve", errors.Join(err, ln.Close()))
		}
		o.logger.Info("serving published links and previews", "addr", o.publicAddr, "base", o.publicURL)
	}
	handler := host.Handler(h, dir, host.HandlerOptions{OperatorToken: o.token, WorkspaceLabel: o.workspaceLabel, Remote: remote, Admission: admission, Logger: o.logger})
	if member != nil {
		handler = fleetHandler(member, h, dir, o, admission, handler)
		o.logger.Info("in a fleet", "advertise", member.Addr())
	}
	o.logger.Info("hosting", "workspaces", o.dir, "listen", ln.Addr().String(), "pid", os.Getpid(), "max_open", o.maxOpen, "idle_timeout", o.idle, "max_requests", o.admission.MaxRequests)
	code = 0
	err = api.Serve(ctx, ln, handler, api.ServeOptions{Grace: o.grace, MaxConns: o.maxConns, Logger: o.logger, Drain: h.Drain})
	if err != nil {
		o.logger.Error("serve", "err", err)
		code = 1
	}
	if err := h.Close(context.WithoutCancel(ctx)); err != nil {
		o.logger.Error("final commit failed: recent changes may be lost", "err", err)
		return 1
	}
	o.logger.Info("workspaces closed cleanly")
	return code
}
