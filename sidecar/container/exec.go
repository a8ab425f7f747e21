package container

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"

	"github.com/sqlfs/sqlfs/sidecar"
)

// daemonGrace is how long output is still collected after the command's
// main process exited. Only a process that outlives it and still holds
// stdout or stderr (a daemon forked without redirecting them) waits that
// long; its later writes get EPIPE instead of keeping the exec open.
const daemonGrace = 100 * time.Millisecond

// Exec implements sidecar.Backend: it runs req.Command with /bin/sh -c as a
// new process in the workspace's container, starting the container first
// if it is not running.
func (b *Backend) Exec(ctx context.Context, req sidecar.Request) (sidecar.Result, error) {
	begin := time.Now()
	limits := req.Limits.WithDefaults()
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = limits.Timeout
	}
	cwd, err := containerDir(req.Dir)
	if err != nil {
		return sidecar.Result{}, err
	}
	r, seq, err := b.acquire(ctx)
	if err != nil {
		return sidecar.Result{}, err
	}
	defer b.release(r)

	tree, err := newExecTree(r.c, fmt.Sprintf("exec-%d", seq))
	if err != nil {
		return sidecar.Result{}, err
	}
	actor := req.Actor
	if actor == "" {
		actor = fmt.Sprintf("exec:container-%d", seq)
	}
	b.setActor(tree.dir, actor, req.AllowNetwork)
	// An exec ends with everything it started: a daemon (setsid, nohup,
	// &) is killed with it, so no write reaches the workspace after the
	// exec's result is out and every write can be named by its exec.
	defer func() {
		tree.kill()
		tree.remove()
		b.setActor(tree.dir, "", false)
	}()

	budget := newOutputBudget(limits.MaxOutputBytes)
	outR, outW, err := os.Pipe()
	if err != nil {
		return sidecar.Result{}, fmt.Errorf("exec pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		return sidecar.Result{}, fmt.Errorf("exec pipe: %w", err)
	}
	stdin, stopStdin, err := stdinFile(req.Stdin)
	if err != nil {
		closeAll(outR, outW, errR, errW)
		return sidecar.Result{}, err
	}
	defer stopStdin()

	proc := &libcontainer.Process{
		Args:           []string{"/bin/sh", "-c", req.Command},
		Env:            execEnv(b.env(), req.Env),
		UID:            b.uid,
		GID:            b.gid,
		Cwd:            cwd,
		Stdin:          stdin,
		Stdout:         outW,
		Stderr:         errW,
		SubCgroupPaths: tree.sub,
	}
	err = r.c.Run(proc)
	// The child holds its own copies; ours must go so EOF can come.
	closeAll(outW, errW)
	if stdin != nil {
		_ = stdin.Close()
	}
	if err != nil {
		closeAll(outR, errR)
		return sidecar.Result{}, fmt.Errorf("%w: command: %w", ErrNotStarted, err)
	}

	var copies sync.WaitGroup
	for _, p := range []struct {
		r *os.File
		w io.Writer
	}{{outR, req.Stdout}, {errR, req.Stderr}} {
		copies.Go(func() {
			w := p.w
			if w == nil {
				w = io.Discard
			}
			_, _ = io.Copy(&limitedWriter{budget: budget, w: w}, p.r)
		})
	}
	waited := make(chan *os.ProcessState, 1)
	go func() {
		st, _ := proc.Wait()
		waited <- st
	}()

	res := sidecar.Result{}
	var ctxErr error
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var st *os.ProcessState
	select {
	case st = <-waited:
	case <-timer.C:
		res.TimedOut = true
		res.LimitHit = sidecar.LimitTimeout
		st = killTree(tree, proc, waited)
	case <-ctx.Done():
		ctxErr = ctx.Err()
		st = killTree(tree, proc, waited)
	}
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(daemonGrace):
		closeAll(outR, errR)
		<-drained
	}
	closeAll(outR, errR)

	// Exit codes as the shell backend reports them, so callers need not
	// care which backend ran the command.
	switch {
	case res.TimedOut:
		res.ExitCode = exitTimeout
		budget.writeAlways(req.Stderr, fmt.Sprintf("sqlfs: command timed out after %v\n", timeout))
	case ctxErr != nil:
		res.ExitCode = exitCancelled
	default:
		res.ExitCode = exitCode(st)
	}
	res.Duration = time.Since(begin)
	res.Truncated = budget.truncated()
	return res, ctxErr
}

// Exit codes for commands the backend stopped: 124 as GNU timeout uses,
// 130 for a cancelled request, as in the shell backend.
const (
	exitTimeout   = 124
	exitCancelled = 130
)

// killTree kills the exec's whole process tree and waits for its main
// process. The direct kill covers a tree kill that could not act (the
// cgroup vanished): the exec must not hang on it.
func killTree(tree *execTree, proc *libcontainer.Process, waited <-chan *os.ProcessState) *os.ProcessState {
	tree.kill()
	_ = proc.Signal(unix.SIGKILL)
	return <-waited
}

// env is the environment of every exec: the base one, and the proxy's
// variables when the container has one.
func (b *Backend) env() map[string]string {
	vars := map[string]string{}
	for _, kv := range baseEnv() {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	if b.cfg.Egress != nil {
		maps.Copy(vars, proxyEnv())
	}
	return vars
}

// execEnv is base with the request's variables over it; sorted, so a
// command sees the same environment for the same request.
func execEnv(base, extra map[string]string) []string {
	vars := maps.Clone(base)
	maps.Copy(vars, extra)
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// containerDir resolves a request's working directory, which must be
// WorkspaceDir or below it; a relative one is taken from WorkspaceDir.
func containerDir(dir string) (string, error) {
	if dir == "" {
		return sidecar.WorkspaceDir, nil
	}
	if !path.IsAbs(dir) {
		dir = path.Join(sidecar.WorkspaceDir, dir)
	}
	dir = path.Clean(dir)
	if dir != sidecar.WorkspaceDir && !isUnder(dir, sidecar.WorkspaceDir) {
		return "", fmt.Errorf("%w: %q", ErrBadDir, dir)
	}
	return dir, nil
}

func isUnder(p, dir string) bool {
	return len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == '/'
}

// stdinFile gives the command a pipe for its standard input, fed from in
// by a pump; nil means /dev/null (libcontainer's default). stop closes the
// pipe once the command is done, so a command that never drains its input
// cannot pin the pump on a write.
func stdinFile(in io.Reader) (f *os.File, stop func(), err error) {
	if in == nil {
		return nil, func() {}, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("stdin pipe: %w", err)
	}
	go func() {
		_, _ = io.Copy(w, in)
		_ = w.Close()
	}()
	return r, func() { _ = w.Close() }, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// exitCode follows the shell: 128+n for a command killed by signal n.
func exitCode(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// outputBudget caps stdout and stderr together and serialises their
// writes, since callers may pass one writer for both. Past the cap, output
// is dropped behind one marker line (the shell backend's) and the command
// keeps running.
type outputBudget struct {
	mu     sync.Mutex
	left   int64
	max    int64
	marked bool
}

func newOutputBudget(max int64) *outputBudget { return &outputBudget{left: max, max: max} }

func (o *outputBudget) truncated() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.marked
}

// writeAlways writes a backend message past the cap.
func (o *outputBudget) writeAlways(w io.Writer, s string) {
	if w == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_, _ = io.WriteString(w, s)
}

type limitedWriter struct {
	budget *outputBudget
	w      io.Writer
	failed bool // the caller's writer failed: keep draining, drop
}

// Write always reports success, so the copy keeps draining the pipe and
// the command never blocks on a full pipe.
func (l *limitedWriter) Write(p []byte) (int, error) {
	o := l.budget
	o.mu.Lock()
	defer o.mu.Unlock()
	n := min(int64(len(p)), o.left)
	if n > 0 && !l.failed {
		if _, err := l.w.Write(p[:n]); err != nil {
			l.failed = true
		}
	}
	o.left -= n
	if n < int64(len(p)) && !o.marked {
		o.marked = true
		if !l.failed {
			_, _ = fmt.Fprintf(l.w, "\n[sqlfs: output truncated at %d bytes]\n", o.max)
		}
	}
	return len(p), nil
}
