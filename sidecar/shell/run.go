package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// run is the state of one Exec: its limits and what it has consumed. Every
// interpreter and command started on its behalf (pipelines, subshells,
// sh -c, xargs) shares it.
type run struct {
	id     string // labels the run's goroutines (procLabel)
	b      *Backend
	limits sidecar.Limits
	ctx    context.Context
	http   http.RoundTripper // the exec's network; nil: none
	actor  string            // whom the audit trail names for the exec's changes
	cancel context.CancelCauseFunc
	fs     *view
	// fifos is the host directory of this run's process-substitution
	// FIFOs, made before the first one and removed when the exec ends.
	fifos *fifoExec

	out       *outputLimiter
	stdout    io.Writer
	stderr    io.Writer
	rawStderr io.Writer // the caller's, for the backend's own messages

	commands        atomic.Int64
	startGoroutines int // the process's, when the run began
	written         atomic.Int64
	globSeen        atomic.Int64 // directory entries read by globbing since the last command
	glob            globWalk

	held         atomic.Int64 // bytes commands have charged to the memory budget
	varBytes     atomic.Int64 // size of the variables at the last check
	nextVarCheck atomic.Int64 // unix nanoseconds before which checkVars skips

	stoppedAt atomic.Int64 // unix nanoseconds of the first stop by a limit

	mu       sync.Mutex
	limitHit sidecar.Limit
	finished bool // the result is taken: a late stop (a background job's) changes nothing
}

// limitError is the cause a run is cancelled with when a limit stops it.
type limitError struct {
	limit sidecar.Limit
	msg   string
}

func (e *limitError) Error() string { return e.msg }

var (
	errTimeout = errors.New("timeout")
	// errFinished is the cause a run is cancelled with once Exec has its
	// result: it ends background jobs, and stops nothing early.
	errFinished = errors.New("exec finished")
)

func newRun(parent context.Context, b *Backend, limits sidecar.Limits, stdout, stderr io.Writer) *run {
	ctx, cancel := context.WithCancelCause(parent)
	tctx, tcancel := context.WithTimeoutCause(ctx, limits.Timeout, errTimeout)
	r := &run{id: strconv.FormatUint(execIDs.Add(1), 10), b: b, limits: limits, ctx: tctx,
		startGoroutines: runtime.NumGoroutine()}
	r.cancel = func(cause error) {
		cancel(cause)
		tcancel()
	}
	r.fs = &view{m: b.m, run: r}
	r.fifos = b.m.fifos.execDir(r.id)
	r.out = &outputLimiter{left: limits.MaxOutputBytes, max: limits.MaxOutputBytes}
	r.stdout = &limitedWriter{l: r.out, w: orDiscard(stdout)}
	r.rawStderr = orDiscard(stderr)
	r.stderr = &limitedWriter{l: r.out, w: r.rawStderr}
	return r
}

// noStdin is a command's standard input when the shell has none.
type noStdin struct{}

func (noStdin) Read([]byte) (int, error) { return 0, io.EOF }

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// stop ends the run because limit was reached: the message goes to stderr
// (past the output cap, it is short) and everything is cancelled.
func (r *run) stop(limit sidecar.Limit, format string, args ...any) error {
	err := &limitError{limit: limit, msg: fmt.Sprintf(format, args...)}
	r.stoppedAt.CompareAndSwap(0, time.Now().UnixNano())
	// The message is written under r.mu, which result takes too: once the
	// result is taken, nothing more reaches the caller's stderr.
	r.mu.Lock()
	if r.limitHit == "" && !r.finished {
		r.limitHit = limit
		r.out.writeAlways(r.rawStderr, "sqlfs: "+err.msg+"\n")
	}
	r.mu.Unlock()
	r.cancel(err)
	return err
}

// stopTime is when the run was told to stop: its deadline, the first
// limit it hit, else now (the caller cancelled).
func (r *run) stopTime() time.Time {
	if errors.Is(context.Cause(r.ctx), errTimeout) {
		if d, ok := r.ctx.Deadline(); ok {
			return d
		}
	}
	if ns := r.stoppedAt.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Now()
}

func (r *run) chargeWrite(n int64) error {
	if r.written.Add(n) > r.limits.MaxWriteBytes {
		return r.stop(sidecar.LimitMaxWriteBytes, "write limit of %d bytes exceeded", r.limits.MaxWriteBytes)
	}
	return nil
}

// result turns the interpreter's return into a sidecar.Result.
func (r *run) result(err error) sidecar.Result {
	r.out.close()
	res := sidecar.Result{Truncated: r.out.wasTruncated()}
	r.mu.Lock()
	res.LimitHit = r.limitHit
	r.finished = true
	r.mu.Unlock()
	cause := context.Cause(r.ctx)
	switch {
	case errors.Is(cause, errTimeout):
		res.TimedOut = true
		res.LimitHit = sidecar.LimitTimeout
		res.ExitCode = exitTimeout
		r.out.writeAlways(r.rawStderr, fmt.Sprintf("sqlfs: command timed out after %v\n", r.limits.Timeout))
	case res.LimitHit != "":
		res.ExitCode = exitLimit
	case r.ctx.Err() != nil:
		res.ExitCode = exitCancelled
	case err == nil:
	default:
		if st, ok := errors.AsType[interp.ExitStatus](err); ok {
			res.ExitCode = int(st)
			break
		}
		r.out.writeAlways(r.rawStderr, "sh: "+err.Error()+"\n")
		res.ExitCode = 1
	}
	return res
}

// callHandler runs before every simple command: it enforces the command
// and depth budgets and routes the builtins that would reach the host.
func (r *run) callHandler(ctx context.Context, args []string) ([]string, error) {
	r.globSeen.Store(0)
	r.glob.reset()
	n := r.commands.Add(1)
	if n > r.limits.MaxCommands {
		return nil, r.stop(sidecar.LimitMaxCommands, "command limit of %d exceeded", r.limits.MaxCommands)
	}
	// Unwinding the stack costs microseconds: sample one command in
	// depthEvery, which lets recursion overshoot the limit by at most
	// that many levels.
	if n%depthEvery == 0 && callDepth(r.limits.MaxCallDepth) > r.limits.MaxCallDepth {
		return nil, r.stop(sidecar.LimitMaxCallDepth, "call depth limit of %d exceeded", r.limits.MaxCallDepth)
	}
	if err := r.checkProcs(); err != nil {
		return nil, err
	}
	hc := interp.HandlerCtx(ctx)
	if err := r.checkVars(hc); err != nil {
		return nil, err
	}
	if alwaysPrints[args[0]] && readerGone(hc.Stdout) {
		// The interpreter's own writers ignore EPIPE; a shell process
		// would die of SIGPIPE at this write, so this (sub)shell exits
		// (`while :; do pwd; done | head -1` ends). Commands from the
		// registry stop through outputWriter instead.
		return []string{routedPrefix + "sigpipe"}, nil
	}
	if args, ok := r.replaceBuiltin(ctx, args); ok {
		return args, nil
	}
	if parsesAtRun(args) {
		r.fifos.ensure()
	}
	return routeChecked(hc, routeBuiltin(args)), nil
}

// alwaysPrints are the interpreter builtins that write to standard output
// whatever their arguments (cd writes only for `cd -`, set and shopt only
// when they list): with a broken pipe there, they would die of SIGPIPE.
var alwaysPrints = map[string]bool{
	"echo": true, "printf": true, "pwd": true, "dirs": true, "pushd": true, "popd": true,
	"times": true,
}

// readerGone reports whether w is a pipe whose read end is closed, which
// poll(2) flags as POLLERR on the write end.
func readerGone(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	_ = rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd)}}
		n, err := unix.Poll(fds, 0)
		gone = err == nil && n > 0 && fds[0].Revents&unix.POLLERR != 0
	})
	return gone
}

const (
	runnerCallFunc = "mvdan.cc/sh/v3/interp.(*Runner).call"
	depthEvery     = 8
)

// callDepth counts the interpreter's nested command calls on this
// goroutine's stack (functions, eval, source, sh -c all nest through
// Runner.call). The interpreter recurses on the Go stack, so counting
// frames is exact, and it needs no help from the interpreter. Shallow
// stacks are not inspected at all.
func callDepth(limit int) int {
	const shallow = 128
	var small [shallow]uintptr
	if runtime.Callers(3, small[:]) < shallow {
		return 0
	}
	pcs := make([]uintptr, 64*(limit+2))
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	depth := 0
	for {
		f, more := frames.Next()
		if f.Function == runnerCallFunc {
			depth++
		}
		if !more {
			return depth
		}
	}
}

func (r *run) openHandler(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	f, err := r.fs.OpenFile(absPath(hc.Dir, name), flag, perm)
	if err != nil {
		return nil, asOSPathError(err)
	}
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		return &trackedFile{ReadWriteCloser: f}, nil
	}
	pr, err := readPipe(ctx, f)
	if err != nil {
		return nil, err
	}
	return pr, nil
}

// readPipe gives the interpreter an *os.File reading f. For any other
// reader it starts a goroutine copying into a pipe that nothing stops:
// once `read` stopped reading (a cancelled `while read l; do …; done <
// big`), it stays blocked until a collection finalizes the pipe. This one
// stops when the reader closes the pipe or the run ends.
func readPipe(ctx context.Context, f io.ReadCloser) (*os.File, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		f.Close()
		return nil, asOSPathError(err)
	}
	go func() {
		defer context.AfterFunc(ctx, func() { _ = pw.SetWriteDeadline(time.Unix(1, 0)) })()
		_, _ = io.Copy(pw, f)
		pw.Close()
		f.Close()
	}()
	return pr, nil
}

// asOSPathError makes err the *os.PathError the interpreter expects for a
// non-fatal "cannot open" (any other error type halts the shell).
func asOSPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &fs.PathError{Op: le.Op, Path: le.Old, Err: le.Err}
	}
	return &fs.PathError{Op: "open", Path: "", Err: err}
}

func (r *run) statHandler(ctx context.Context, name string, follow bool) (fs.FileInfo, error) {
	hc := interp.HandlerCtx(ctx)
	p := absPath(hc.Dir, name)
	if follow {
		return r.fs.Stat(p)
	}
	return r.fs.Lstat(p)
}

// accessHandler checks modes against the shell's filesystem. Commands run
// as the file's owner, so the owner bits decide, except that execute needs
// some execute bit as for root.
func (r *run) accessHandler(ctx context.Context, name string, mode interp.AccessMode) error {
	fi, err := r.fs.Stat(name)
	if err != nil {
		return err
	}
	perm := fi.Mode().Perm()
	switch {
	case mode&interp.AccessRead != 0 && perm&0o400 == 0,
		mode&interp.AccessWrite != 0 && perm&0o200 == 0,
		mode&interp.AccessExec != 0 && perm&0o111 == 0:
		return pathErr("access", name, syscall.EACCES)
	}
	return nil
}

// absPath makes name absolute against dir without cleaning it: ".." must
// be resolved physically, by the view, since a symlink may precede it.
func absPath(dir, name string) string {
	if path.IsAbs(name) {
		return name
	}
	return dir + "/" + name
}

// execHandler runs every command that is neither a shell function nor an
// interpreter builtin: from the builtin registry, never from the host.
func (r *run) execHandler(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	env := r.commandEnv(hc)
	if name, ok := strings.CutPrefix(args[0], routedPrefix); ok {
		switch args[0] {
		case routedPrefix + "sigpipe":
			return hc.Builtin(ctx, []string{"exit", strconv.Itoa(exitSIGPIPE)})
		case checkedRoute:
			return checkedBuiltin(ctx, hc, args[1:])
		case declMarkRoute:
			declMark(hc)
			return nil
		case declCheckRoute:
			return declCheck(hc, args[1])
		}
		if fn, ok := builtin.Lookup(name); ok && interp.IsBuiltin(name) {
			// An interpreter builtin the registry replaces (echo, printf).
			return exitErr(r.call(ctx, fn, env, append([]string{name}, args[1:]...)))
		}
		return checkWrites(hc, name, func() error { return exitErr(r.routedBuiltin(hc, env, name, args[1:])) })
	}
	if strings.Contains(args[0], "/") {
		return exitErr(r.runPath(ctx, env, args))
	}
	fn, ok := r.lookup(args[0])
	if !ok {
		fmt.Fprintf(env.Stderr, "%s: command not found (the shell backend runs built-in commands only; "+
			"use the container backend for a full userland)\n", args[0])
		return interp.ExitStatus(exitNotFound)
	}
	return exitErr(r.call(ctx, fn, env, args))
}

func exitErr(code int) error {
	if code == 0 {
		return nil
	}
	if code < 0 || code > 255 {
		code = 255
	}
	return interp.ExitStatus(uint8(code))
}

// call runs one command function. A panicking command fails alone, and a
// command blocked on a pipe is released when the run is cancelled.
func (r *run) call(ctx context.Context, fn builtin.Func, env *builtin.Env, args []string) (code int) {
	defer func() {
		if p := recover(); p != nil {
			r.b.log.Error("shell command panic", "command", args[0], "panic", p)
			fmt.Fprintf(env.Stderr, "%s: internal error: %v\n", args[0], p)
			code = 2
		}
	}()
	if f, ok := env.Stdin.(*os.File); ok {
		defer context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })()
	}
	if f, ok := env.Stdout.(*os.File); ok {
		defer context.AfterFunc(ctx, func() { _ = f.SetWriteDeadline(time.Unix(1, 0)) })()
	}
	// A failed write ends the command's context, as the process would
	// die: SIGPIPE once the reader of a pipe is gone (`yes | head`),
	// otherwise "write error" (`yes > f` on a full disk or past a quota),
	// which many commands would otherwise ignore and keep writing.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ow := &outputWriter{w: r.boundSubst(env.Stdout), cancel: cancel}
	mem := &cmdMem{r: r}
	defer mem.release()
	cenv := *env
	cenv.Stdout = ow
	cenv.Mem = mem
	code = fn(cctx, &cenv, args)
	if sb, ok := env.Stdout.(*strings.Builder); ok && r.ctx.Err() != nil {
		// A stopped run's substitution is never used: drop its output
		// before the interpreter splits it into fields.
		sb.Reset()
	}
	switch err := ow.failed(); {
	case errors.Is(err, syscall.EPIPE):
		return exitSIGPIPE
	case err != nil && code == 0 && r.ctx.Err() == nil:
		// The command ignored it; one that noticed has said so.
		fmt.Fprintf(env.Stderr, "%s: write error: %s\n", args[0], strerror(err))
		return 1
	}
	return code
}

// exitSIGPIPE is the status of a process killed by SIGPIPE.
const exitSIGPIPE = 128 + 13

// outputWriter is a command's standard output: it remembers the first
// write error and ends the command's context with it.
type outputWriter struct {
	w      io.Writer
	cancel context.CancelFunc
	mu     sync.Mutex
	err    error
}

func (o *outputWriter) Write(b []byte) (int, error) {
	n, err := o.w.Write(b)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		o.mu.Lock()
		if o.err == nil {
			o.err = err
		}
		o.mu.Unlock()
		o.cancel()
	}
	return n, err
}

func (o *outputWriter) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// commandEnv is what a command sees of the shell that runs it.
func (r *run) commandEnv(hc interp.HandlerContext) *builtin.Env {
	var stdin io.Reader = noStdin{}
	if hc.Stdin != nil {
		stdin = hc.Stdin
	}
	return &builtin.Env{
		Stdin:  stdin,
		Stdout: hc.Stdout,
		Stderr: hc.Stderr,
		Dir:    hc.Dir,
		Getenv: func(name string) string {
			if v := hc.Env.Get(name); v.Exported {
				return v.String()
			}
			return ""
		},
		Environ: func() []string {
			var out []string
			for name, v := range hc.Env.Each {
				if v.Exported && v.IsSet() {
					out = append(out, name+"="+v.String())
				}
			}
			return out
		},
		FS:    r.fs,
		Run:   r.runArgs,
		HTTP:  r.http,
		Actor: r.actor,
	}
}

// runArgs runs args as a new process would be run by xargs, find -exec,
// timeout or env: registry commands directly, interpreter builtins in a
// fresh shell. Shell functions are not visible, as with a real exec.
func (r *run) runArgs(ctx context.Context, env *builtin.Env, args []string) int {
	if len(args) == 0 {
		return 0
	}
	if n := r.commands.Add(1); n > r.limits.MaxCommands {
		_ = r.stop(sidecar.LimitMaxCommands, "command limit of %d exceeded", r.limits.MaxCommands)
		return exitLimit
	}
	if !interp.IsBuiltin(args[0]) && !strings.Contains(args[0], "/") {
		if fn, ok := r.lookup(args[0]); ok {
			return r.call(ctx, fn, env, args)
		}
	}
	call := &syntax.CallExpr{}
	for _, a := range args {
		call.Args = append(call.Args, &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: a}}})
	}
	return r.runNode(ctx, env, call, nil, nil)
}

// runNode runs a parsed program in a fresh interpreter with env's
// directory, environment and streams: sh -c, sh script, ./script.sh.
func (r *run) runNode(ctx context.Context, env *builtin.Env, node syntax.Node, opts, params []string) int {
	stdin, closeStdin, err := stdinFile(env.Stdin)
	if err != nil {
		env.Errorf("sh", "%v", err)
		return 2
	}
	defer closeStdin()
	if usesProcSubst(node) {
		r.fifos.ensure()
	}
	runner, err := r.newRunner(env.Dir, env.Environ(), stdin, env.Stdout, env.Stderr)
	if err != nil {
		env.Errorf("sh", "%v", err)
		return 2
	}
	if opts != nil || params != nil {
		if err := interp.Params(append(append(opts, "--"), params...)...)(runner); err != nil {
			env.Errorf("sh", "%v", err)
			return 2
		}
	}
	err = runner.Run(ctx, node)
	if err == nil {
		return 0
	}
	if st, ok := errors.AsType[interp.ExitStatus](err); ok {
		return int(st)
	}
	if ctx.Err() == nil {
		env.Errorf("sh", "%v", err)
	}
	return 1
}

// outputLimiter caps stdout and stderr together. Past the cap, output is
// dropped behind one marker line and the command keeps running: a command
// that fails because its output was cut would be worse than a short log.
type outputLimiter struct {
	mu        sync.Mutex
	left      int64
	max       int64
	truncated bool
	closed    bool
}

type limitedWriter struct {
	l *outputLimiter
	w io.Writer
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if isDeclTrace(p) {
		return len(p), nil
	}
	l := w.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.truncated {
		return len(p), nil
	}
	if int64(len(p)) <= l.left {
		l.left -= int64(len(p))
		return w.w.Write(p)
	}
	if _, err := w.w.Write(p[:l.left]); err != nil {
		return 0, err
	}
	l.left = 0
	l.truncated = true
	fmt.Fprintf(w.w, "\n[sqlfs: output truncated at %d bytes]\n", l.max)
	return len(p), nil
}

// writeAlways writes a backend message past the cap, unless closed.
func (l *outputLimiter) writeAlways(w io.Writer, s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(w, s)
}

// close drops every later write: a command that outlived its run (it
// ignored cancellation) must not write into the caller's streams.
func (l *outputLimiter) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
}

func (l *outputLimiter) wasTruncated() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.truncated
}
