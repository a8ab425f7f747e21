package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

func init() {
	register("run", "run one command against a workspace and exit with its status", runCmd)
}

const runUsage = `usage: sqlfs-exec run --store STORE [--backend shell|js|container] [--cwd DIR] [--timeout D] [--] COMMAND

Runs COMMAND (a POSIX shell command line; with --backend js, a JavaScript
program) with the workspace at /workspace,
passes its output through and exits with its status. When a process owns
the store (sqlfs-exec serve), the command runs there; otherwise the store is
opened here. The container backend opened here mounts the workspace on a
temporary directory and needs --rootfs (see sqlfs-exec busybox-rootfs).

`

// runDirPattern names the private directory of a container run's mount.
const runDirPattern = "sqlfs-run-"

// sweepKilledRuns detaches the mounts that killed container runs left
// behind (their server gone) and removes their directories; a live run's
// mount answers, and is left alone.
func sweepKilledRuns() {
	mnts, _ := filepath.Glob(filepath.Join(os.TempDir(), runDirPattern+"*", "mnt"))
	for _, mnt := range mnts {
		detached, err := fuse.DetachStale(mnt)
		if err != nil {
			slog.Warn("a killed run's mount stays", "mountpoint", mnt, "err", err)
			continue
		}
		if detached {
			_ = os.Remove(mnt)
			_ = os.Remove(filepath.Dir(mnt))
		}
	}
}

// maxRunStdin caps what run reads from a piped standard input.
const maxRunStdin = 16 << 20

func runCmd(ctx context.Context, args []string) int {
	fset, ws := clientFlags("run", runUsage)
	ws.egressFlag(fset)
	backend := fset.String("backend", "shell", "exec backend: shell, js or container")
	cwd := fset.String("cwd", sidecar.WorkspaceDir, "working `directory`, absolute or relative to "+sidecar.WorkspaceDir)
	timeout := fset.Duration("timeout", sidecar.DefaultLimits.Timeout, "wall-clock limit")
	allowNetwork := fset.Bool("allow-network", false, "let a js program's fetch, the shell's git over HTTP(S) or the container's tools through its proxy reach the hosts the operator allows (--egress-allow)")
	var cf containerFlags
	cf.register(fset)
	if code, ok := parseFlags(fset, args); !ok {
		return code
	}
	if !ws.named() || fset.NArg() == 0 {
		fset.Usage()
		return 2
	}
	var stdin string
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, maxRunStdin+1))
		if err != nil {
			return fail("run", fmt.Errorf("read stdin: %w", err))
		}
		if len(b) > maxRunStdin {
			return fail("run", fmt.Errorf("stdin is larger than %d bytes", maxRunStdin))
		}
		stdin = string(b)
	}
	if *backend == "container" {
		sweepKilledRuns()
		// The mount needs allow_other for the container's user: it goes in
		// a private directory (0700) other host users cannot enter.
		private, err := os.MkdirTemp("", runDirPattern)
		if err != nil {
			return fail("run", err)
		}
		defer os.Remove(private)
		mnt := filepath.Join(private, "mnt")
		if err := os.Mkdir(mnt, 0o700); err != nil {
			return fail("run", err)
		}
		// Remove, never RemoveAll: a mount left behind keeps its files.
		defer os.Remove(mnt)
		ws.local.mount, ws.local.container = mnt, &cf
	}
	return ws.run(ctx, "run", func(conn api.Conn) int {
		res, err := conn.Exec(ctx, tools.ExecInput{
			Command: strings.Join(fset.Args(), " "), Backend: *backend, Cwd: *cwd,
			TimeoutSeconds: timeout.Seconds(), Stdin: stdin, AllowNetwork: *allowNetwork,
		}, os.Stdout, os.Stderr)
		if err != nil {
			return fail("run", err)
		}
		return res.ExitCode
	})
}
