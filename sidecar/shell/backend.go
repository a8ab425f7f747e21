// Package shell is the exec backend that interprets POSIX shell in-process
// with mvdan.cc/sh/v3 against the workspace store: no mount, no container,
// no host files. Every place where the interpreter would reach the host
// (files, directories, stat, access, external commands, PATH lookups,
// `pwd -P`, `~user`, process-substitution FIFOs, the working directory and
// the environment) is routed to the shell's own filesystem or refused.
package shell

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// Options configure a Backend.
type Options struct {
	// Limits apply to requests that leave a field zero and bound those
	// that set one (a request may only lower them); fields zero here take
	// sidecar.DefaultLimits.
	Limits sidecar.Limits
	// Logger receives operational events (a command that ignored
	// cancellation, a recovered panic). Nil means slog.Default().
	Logger *slog.Logger
	// Actor is whom the audit trail names for the backend's changes to
	// the workspace; empty means DefaultActor.
	Actor string
	// TmpMaxBytes caps the file data the backend's /tmp holds at once,
	// across commands. Zero means 256 MiB.
	TmpMaxBytes int64
	// MaxMemoryBytes is the memory budget all running commands share:
	// what they charge, and the Go heap's growth over its size when the
	// first of them started, which the watchdog checks. Zero means 1 GiB.
	// Each exec has its own Limits.MaxMemoryBytes within it.
	MaxMemoryBytes int64
	// Memory, when set, is a budget shared with other backends (a host's
	// workspaces), replacing MaxMemoryBytes: one bound for them all.
	Memory *Memory
	// StopGrace is how long Exec waits for a cancelled command to unwind
	// before it gives up on it and returns. Zero means 5s.
	StopGrace time.Duration
	// HTTP carries the commands' outbound HTTP (git's smart HTTP remotes)
	// for execs whose Request.AllowNetwork asks: the owner's transport,
	// which applies its egress policy and injects its credentials. Nil
	// means no network.
	HTTP http.RoundTripper
	// Commands are the commands the caller adds to the built-in ones
	// (the workspace adds git and node), by name; they take precedence.
	Commands map[string]builtin.Func
}

// Backend runs commands in-process. It is safe for concurrent use; each
// Exec gets its own interpreter, limits and output accounting, while the
// workspace and /tmp are shared.
type Backend struct {
	m    *mounts
	opts Options
	log  *slog.Logger
	mem  *Memory
}

var _ sidecar.Backend = (*Backend)(nil)

// The exit codes for commands stopped by the backend: 124 as GNU timeout
// uses, 125 for the other limits.
const (
	exitTimeout   = 124
	exitLimit     = 125
	exitCancelled = 130
	exitNotFound  = 127
)

func newBackend(workspace tree, opts Options) *Backend {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 5 * time.Second
	}
	if opts.TmpMaxBytes <= 0 {
		opts.TmpMaxBytes = 256 << 20
	}
	if opts.MaxMemoryBytes <= 0 {
		opts.MaxMemoryBytes = 1 << 30
	}
	if opts.Memory == nil {
		opts.Memory = NewMemory(opts.MaxMemoryBytes, opts.Logger)
	}
	return &Backend{
		m:    &mounts{workspace: workspace, tmp: newMemFS(opts.TmpMaxBytes), fifos: newFIFORoot(opts.Logger)},
		opts: opts,
		log:  opts.Logger,
		mem:  opts.Memory,
	}
}

// watchdogInterval is how often the watchdog reads the heap while commands
// run: a read costs about a microsecond, and copying at memory bandwidth
// fills some 100 MiB in that time.
const watchdogInterval = 10 * time.Millisecond

// Name implements sidecar.Backend.
func (b *Backend) Name() string { return "shell" }

// Close removes the backend's host FIFO directory. The workspace store is
// the caller's to close.
func (b *Backend) Close() error {
	return b.m.fifos.close()
}

// Exec runs req.Command. See sidecar.Backend.
func (b *Backend) Exec(ctx context.Context, req sidecar.Request) (sidecar.Result, error) {
	start := time.Now()
	// Each limit: the request's, else the backend's (the operator's, e.g.
	// --exec-memory), else the default; a request may lower the backend's,
	// never raise it.
	limits := req.LimitsWithin(b.opts.Limits)

	file, err := parseScript(strings.NewReader(req.Command), "bash")
	if err != nil {
		stderr := req.Stderr
		if stderr == nil {
			stderr = io.Discard
		}
		fmt.Fprintf(stderr, "sh: %v\n", err)
		return sidecar.Result{ExitCode: 2, Duration: time.Since(start)}, nil
	}

	if req.Actor != "" {
		// The owner's egress audit names the exec's connections.
		ctx = egress.WithActor(ctx, req.Actor)
	}
	r := newRun(ctx, b, limits, req.Stdout, req.Stderr)
	if req.AllowNetwork {
		r.http = b.opts.HTTP
	}
	r.actor = cmp.Or(req.Actor, b.opts.Actor, DefaultActor)
	if req.Actor != "" {
		// This exec's changes are audited under its own name.
		if at, ok := b.m.workspace.(actorTree); ok {
			m := *b.m
			m.workspace = at.withActor(req.Actor)
			r.fs.m = &m
		}
	}
	// Deferred first, so it runs after the cancel below has stopped the
	// run.
	defer r.fifos.release()
	if usesProcSubst(file) {
		r.fifos.ensure()
	}
	defer r.cancel(errFinished)
	b.mem.dog.add(r)
	defer b.mem.dog.remove(r)

	dir := sidecar.WorkspaceDir
	if req.Dir != "" {
		dir = path.Join(sidecar.WorkspaceDir, req.Dir)
		if path.IsAbs(req.Dir) {
			dir = path.Clean(req.Dir)
		}
	}
	if fi, err := r.fs.Stat(dir); err != nil || !fi.IsDir() {
		return sidecar.Result{}, fmt.Errorf("shell backend: working directory %s: %w", dir, notDirErr(err))
	}

	stdin, closeStdin, err := stdinFile(req.Stdin)
	if err != nil {
		return sidecar.Result{}, fmt.Errorf("shell backend: stdin: %w", err)
	}
	defer closeStdin()

	env := baseEnv(req.Env)
	runner, err := r.newRunner(dir, env, stdin, r.stdout, r.stderr)
	if err != nil {
		return sidecar.Result{}, fmt.Errorf("shell backend: %w", err)
	}

	done := make(chan error, 1)
	go b.watchStop(r)
	go func() {
		r.labelProcs()
		defer func() {
			if p := recover(); p != nil {
				b.log.Error("shell interpreter panic", "panic", p)
				done <- fmt.Errorf("internal error: %v", p)
			}
		}()
		done <- runner.Run(r.ctx, file)
	}()
	var runErr error
	select {
	case runErr = <-done:
	case <-r.ctx.Done():
		select {
		case runErr = <-done:
		case <-time.After(b.opts.StopGrace):
			// A command ignored cancellation. Its goroutine is left
			// behind, but it can no longer write output, and the caller
			// gets its answer.
			b.log.Warn("shell command did not stop after cancellation", "command", req.Command)
			runErr = r.ctx.Err()
		}
	}
	res := r.result(runErr)
	res.Duration = time.Since(start)
	return res, nil
}

// notDirErr turns a nil error from a successful stat of a non-directory
// into ENOTDIR.
func notDirErr(err error) error {
	if err == nil {
		return errors.New("not a directory")
	}
	return err
}

// stdinFile gives the interpreter an *os.File for in: it would otherwise
// start a copying goroutine it never stops. Ours is stopped by closing the
// pipe when the command ends.
func stdinFile(in io.Reader) (*os.File, func(), error) {
	switch in := in.(type) {
	case nil, noStdin:
		return nil, func() {}, nil
	case *os.File:
		return in, func() {}, nil
	case interface{ Len() int }:
		// An empty bytes or strings reader (xargs' children) needs no
		// pipe and no goroutine.
		if in.Len() == 0 {
			return nil, func() {}, nil
		}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	go func() {
		_, _ = io.Copy(pw, in)
		pw.Close()
	}()
	return pr, func() { pr.Close() }, nil
}

// baseEnv is the environment a command starts with: a fixed, host-free
// set plus the request's variables. Never the host's environment.
func baseEnv(extra map[string]string) []string {
	vars := map[string]string{
		"HOME":  sidecar.WorkspaceDir,
		"PATH":  "/usr/local/bin:/usr/bin:/bin",
		"SHELL": "/bin/sh",
		"USER":  "agent",
		"LANG":  "C.UTF-8",
		"TERM":  "dumb",
	}
	for k, v := range extra {
		vars[k] = v
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

// environ is the runner's base environment. It answers the interpreter's
// "HOME name" queries for `~name` itself: without an answer the
// interpreter looks the user up in the host's user database. Every user's
// home is the workspace.
//
// Until the runner's one reset, fifoDir answers for TMPDIR: the
// interpreter reads it there only, to pick the host directory of its
// process-substitution FIFOs (opened with the host's os.OpenFile), which
// must be the backend's private one. The script then sees its own TMPDIR
// (unset: /tmp is the default, as for bash).
type environ struct {
	expand.Environ
	fifoDir string
}

func (e *environ) Get(name string) expand.Variable {
	if strings.HasPrefix(name, "HOME ") {
		return expand.Variable{Set: true, Kind: expand.String, Str: sidecar.WorkspaceDir}
	}
	if name == "TMPDIR" && e.fifoDir != "" {
		return expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: e.fifoDir}
	}
	v := e.Environ.Get(name)
	if name == "HOME" && !v.IsSet() {
		// An unset HOME would make the interpreter fill in the host
		// user's home directory; it stays empty instead.
		return expand.Variable{Set: true, Kind: expand.String}
	}
	return v
}

// newRunner builds an interpreter whose every handler goes to r.
func (r *run) newRunner(dir string, env []string, stdin *os.File, stdout, stderr io.Writer) (*interp.Runner, error) {
	e := &environ{Environ: expand.ListEnviron(env...), fifoDir: r.fifos.dir}
	runner, err := interp.New(
		interp.Env(e),
		func(rn *interp.Runner) error {
			// interp.Dir would stat the host; the directory was checked
			// against the shell's filesystem by the caller.
			rn.Dir = dir
			return nil
		},
		interp.StdIO(stdin, stdout, stderr),
		interp.OpenHandler(r.openHandler),
		interp.ReadDirHandler2(r.readDirHandler),
		interp.StatHandler(r.statHandler),
		interp.AccessHandler(r.accessHandler),
		interp.CallHandler(r.callHandler),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			// The default handler runs host binaries: never chain to it.
			return r.execHandler
		}),
	)
	if err != nil {
		return nil, err
	}
	runner.Reset()
	e.fifoDir = ""
	return runner, nil
}
