// Command sqlfs-mount mounts a workspace store as a filesystem and serves it
// in the foreground until SIGINT/SIGTERM or an unmount from outside.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/replica"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
	"github.com/sqlfs/sqlfs/sqlstore"
)

const usage = `usage: sqlfs-mount [flags] STORE MOUNTPOINT

Mounts the workspace in the SQLite file STORE (created when missing) at the
empty directory MOUNTPOINT and serves it in the foreground. SIGINT or SIGTERM,
or 'fusermount3 -u MOUNTPOINT', unmount it after everything is committed.
While mounted, 'sqlfs-exec run|tool|log --store STORE' work on the same files
through this process's control socket (STORE.sock). With --replica URL every
change is shipped continuously to S3-compatible object storage (see
sqlfs-exec serve --help and sqlfs-exec restore).

flags:
`

func main() {
	os.Exit(run())
}

func run() int {
	fl := flag.NewFlagSet("sqlfs-mount", flag.ContinueOnError)
	var (
		readOnly    = fl.Bool("read-only", false, "mount read-only: every change fails with EROFS")
		allowOther  = fl.Bool("allow-other", false, "let users other than the mounting one use the mount")
		metricsAddr = fl.String("metrics-addr", "", "serve Prometheus metrics at http://`HOST:PORT`/metrics")
		pprofAddr   = fl.String("pprof-addr", "", "serve Go's profiles at http://`HOST:PORT`/debug/pprof/, without authentication, for tuning; :PORT listens on loopback only (off by default)")
		listen      = fl.String("listen", "", "control socket `unix:PATH` for sqlfs-exec and the agent tools (default unix:STORE.sock; \"none\" to serve none)")
		debug       = fl.Bool("debug", false, "log every FUSE request to stderr")
		writeback   = fl.Bool("writeback-cache", false, "let the kernel cache writes and write them back later (fewer round trips for small writes; a GETATTR after every close)")
		xattr       = fl.Bool("xattr", false, "serve extended attributes (user.* and the rest, kept in the store and its checkpoints); without it the kernel fails xattr calls with EOPNOTSUPP and stops asking, which saves the security.capability request it sends before the first write after each refresh of a file's attributes (untar 10.8 -> 8.8 requests a file, git add -A 14.1 -> 13.1, make -j2 32.6 -> 25.5 a source) and the two ls -l sends per file (a warm ls -lR 2.2 -> 0)")
		noXattr     = fl.Bool("no-xattr", false, "serve no extended attributes: the default, kept for scripts that ask for it")
		lowLatency  = fl.Bool("low-latency", false, "keep the CPUs out of idle sleep while the mount is busy (root): round trips about 2x faster on VMs whose idle CPUs halt, for CPU time spent polling")
		noMetrics   = fl.Bool("no-metrics", false, "do not record metrics (to measure what they cost)")
		ioURing     = fl.Bool("io-uring", false, "serve requests over FUSE over io_uring (Linux 6.14+): each CPU's requests go to server threads pinned to it, one io_uring_enter a round trip; needs /sys/module/fuse/parameters/enable_uring to be Y (as root: echo Y > ...), otherwise, or where io_uring is refused, the mount serves on /dev/fuse as without the flag")
		extra       workspace.ListFlag
		wf          workspace.Flags
		rf          replica.Flags
	)
	fl.Var(&extra, "o", "extra FUSE mount `options`, comma separated (repeatable)")
	wf.Register(fl)
	rf.Register(fl)
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), usage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() != 2 {
		fl.Usage()
		return 2
	}
	if *xattr && *noXattr {
		fmt.Fprintln(os.Stderr, "sqlfs-mount: --xattr and --no-xattr contradict each other")
		return 2
	}
	store, mountpoint := fl.Arg(0), fl.Arg(1)
	metrics.SetEnabled(!*noMetrics)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	slog.SetDefault(log)

	wo := workspace.Options{Mount: mountpoint}
	if err := wf.Apply(&wo, log); err != nil {
		fmt.Fprintln(os.Stderr, "sqlfs-mount:", err)
		return 2
	}
	var ro replica.Options
	if rf.Enabled() {
		var err error
		if ro, err = rf.Options(replica.StoreStateDir(store), log); err != nil {
			fmt.Fprintln(os.Stderr, "sqlfs-mount:", err)
			return 2
		}
		wo.FS.ExternalWALCheckpoints = true
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	sock := strings.TrimPrefix(*listen, "unix:")
	switch sock {
	case "":
		sock = api.SocketPath(store)
	case "none":
		sock = ""
	}
	advertised := ""
	if sock != "" && !*readOnly {
		advertised = api.Advertised("unix:" + sock)
	}
	wo.FS.ReadOnly, wo.FS.Socket = *readOnly, advertised
	wo.FUSE = fuse.Options{ReadOnly: *readOnly, AllowOther: *allowOther, Extra: extra, FSName: "sqlfs:" + store, Debug: *debug, WritebackCache: *writeback, NoXattr: !*xattr, LowLatency: *lowLatency, IOUring: *ioURing}
	ws, err := workspace.Open(ctx, store, wo)
	if err != nil {
		var owned *sqlstore.OwnedError
		switch {
		case errors.Is(err, context.Canceled):
			log.Info("signal received while mounting; stopping")
			return 0
		case errors.As(err, &owned):
			fmt.Fprintf(os.Stderr, "sqlfs-mount: %v\nsqlfs-mount: talk to the owner instead, or stop it first\n", owned)
		default:
			fmt.Fprintln(os.Stderr, "sqlfs-mount:", err)
		}
		return 1
	}
	m := ws.Mount
	var sup *replica.Supervisor
	if rf.Enabled() {
		if sup, err = replica.StartStore(ctx, store, ro); err != nil {
			fmt.Fprintln(os.Stderr, "sqlfs-mount:", err)
			ws.Close(context.WithoutCancel(ctx))
			return 1
		}
	}
	if *metricsAddr != "" {
		go func() {
			if err := metrics.Serve(ctx, *metricsAddr); err != nil {
				log.Error("metrics server stopped", "addr", *metricsAddr, "err", err)
			}
		}()
	}

	// The owner serves the control socket, so sqlfs-exec commands and the
	// agent tools work on the mounted store through this process.
	stopAPI := func() {}
	if advertised != "" {
		if stopAPI, err = serveAPI(ctx, ws.Tools, sock, log); err != nil {
			log.Error("control socket not served", "socket", sock, "err", err)
		}
	}

	if *pprofAddr != "" {
		ln, err := metrics.ListenPprof(ctx, *pprofAddr)
		if err != nil {
			log.Error("profiles not served", "err", err)
		} else {
			go metrics.ServePprof(ctx, ln, log)
		}
	}

	code := 0
	select {
	case <-ctx.Done():
		log.Info("signal received; unmounting")
	case <-m.Done():
		if err := m.Err(); err != nil {
			log.Error("mount ended", "err", err)
			code = 1
		} else {
			log.Info("unmounted from outside")
		}
	}
	stopAPI()
	if err := ws.Close(context.WithoutCancel(ctx)); err != nil {
		log.Error("final commit or unmount failed: recent changes may be lost", "err", err)
		return 1
	}
	if sup != nil {
		// Everything committed reaches the replica before the exit.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := sup.Close(sctx); err != nil {
			log.Error("final replication failed: the replica may miss the last changes", "err", err)
			return 1
		}
	}
	log.Info("store closed cleanly")
	return code
}

// serveAPI serves the agent API (tools and the shell backend) on the Unix
// socket sock until the returned stop is called.
func serveAPI(ctx context.Context, svc *tools.Service, sock string, log *slog.Logger) (stop func(), err error) {
	ln, err := api.Listen("unix:"+sock, false)
	if err != nil {
		return func() {}, err
	}
	srv := api.NewServer(api.Options{Tools: svc, Grace: 5 * time.Second, Version: metrics.Version, Logger: log})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			log.Error("control socket", "err", err)
		}
	}()
	log.Info("serving the agent API", "socket", sock)
	return func() {
		cancel()
		<-done
	}, nil
}
