package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar"
)

// ExecInput is a command to run. It is the exec tool's argument and the
// body of POST /v1/exec.
type ExecInput struct {
	Command        string            `json:"command" jsonschema:"POSIX shell command line, run with the workspace at /workspace"`
	Backend        string            `json:"backend,omitempty" jsonschema:"where to run it. shell (default): an in-process POSIX shell with built-in commands (ls cat grep sed awk find jq sort head tail wc diff xargs …) straight on the workspace; starts in microseconds, best for file inspection and text processing. js: command is a Node.js program (fresh runtime per exec; node:fs/promises, path, child_process… on the workspace; ESM and TypeScript). container: a real Linux userland (runc) with the workspace mounted at /workspace; slower to start (tens of ms), needed for real programs such as compilers, interpreters, package managers, git or anything not built into the shell"`
	Cwd            string            `json:"cwd,omitempty" jsonschema:"working directory, relative to the workspace root or under /workspace (default /workspace)"`
	Env            map[string]string `json:"env,omitempty" jsonschema:"extra environment variables; a name must be non-empty without '=' or NUL, a value without NUL"`
	Stdin          string            `json:"stdin,omitempty" jsonschema:"text fed to the command's standard input"`
	TimeoutSeconds float64           `json:"timeout_seconds,omitempty" jsonschema:"wall-clock limit in seconds (default 120)"`
	MaxMemoryBytes int64             `json:"max_memory_bytes,omitempty" jsonschema:"shell backend: memory the command may hold at once, e.g. for sort or a command substitution (default and ceiling 268435456, i.e. 256 MiB, or the server's --exec-memory; a larger value is lowered to it)"`
	AllowNetwork   bool              `json:"allow_network,omitempty" jsonschema:"let js fetch, the shell's git over HTTP(S) and the container's tools through its HTTP(S) proxy (npm, pip, git, curl) reach the hosts the operator allows (--egress-allow); refused when the operator allows none"`
}

// ExecResult is how a command ended.
type ExecResult struct {
	ID         string   `json:"id"`
	ExitCode   int      `json:"exit_code"`
	DurationMS float64  `json:"duration_ms"`
	Truncated  bool     `json:"truncated,omitempty" jsonschema:"output went past the limit and the rest was dropped"`
	TimedOut   bool     `json:"timed_out,omitempty"`
	Killed     bool     `json:"killed,omitempty" jsonschema:"stopped by a kill request or a vanished client"`
	LimitHit   string   `json:"limit_hit,omitempty" jsonschema:"the limit that stopped the command"`
	Changed    []string `json:"changed,omitempty" jsonschema:"workspace paths the command changed"`
	Checkpoint string   `json:"checkpoint,omitempty" jsonschema:"id of the checkpoint taken just before the command: undo this exec, or restore the checkpoint, to go back"`
}

// ExecOutput is what the exec tool returns: the result and the output.
type ExecOutput struct {
	ExecResult
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// Text is the result as a model reads it.
func (o ExecOutput) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit code %d (%.0f ms)\n", o.ExitCode, o.DurationMS)
	if o.Stdout != "" {
		b.WriteString("--- stdout ---\n" + o.Stdout)
		if !strings.HasSuffix(o.Stdout, "\n") {
			b.WriteByte('\n')
		}
	}
	if o.Stderr != "" {
		b.WriteString("--- stderr ---\n" + o.Stderr)
		if !strings.HasSuffix(o.Stderr, "\n") {
			b.WriteByte('\n')
		}
	}
	switch {
	case o.TimedOut:
		b.WriteString("[timed out]\n")
	case o.Killed:
		b.WriteString("[killed]\n")
	case o.LimitHit != "":
		fmt.Fprintf(&b, "[stopped by limit %s]\n", o.LimitHit)
	}
	if o.Truncated {
		b.WriteString("[output truncated: redirect it to a file and read it in pages]\n")
	}
	if len(o.Changed) > 0 {
		fmt.Fprintf(&b, "[changed: %s]\n", strings.Join(o.Changed, ", "))
	}
	if o.Checkpoint != "" && len(o.Changed) > 0 {
		fmt.Fprintf(&b, "[to take this back: undo exec_id %s, or restore checkpoint %s]\n", o.ID, o.Checkpoint)
	}
	return b.String()
}

// ExecInfo describes a running or finished exec.
type ExecInfo struct {
	ID      string      `json:"id"`
	Command string      `json:"command"`
	Backend string      `json:"backend"`
	Cwd     string      `json:"cwd"`
	Started time.Time   `json:"started"`
	Running bool        `json:"running"`
	Result  *ExecResult `json:"result,omitempty"`
}

type execEntry struct {
	info   ExecInfo
	cancel context.CancelFunc
	killed bool
}

// Actor is the audit actor of an exec: the backend must make its changes
// through Service's view for this name so changes can be listed per exec.
func Actor(execID string) string { return "exec:" + execID }

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b[:])
}

// Exec runs a command, streaming its output to stdout and stderr. started
// is called with the exec's id before the command starts. Exec fails only
// when the command cannot be run at all; a failing command reports its
// exit code.
func (s *Service) Exec(ctx context.Context, in ExecInput, stdout, stderr io.Writer, started func(id string)) (ExecResult, error) {
	res, err := s.exec(ctx, in, stdout, stderr, started)
	return res, classify(err)
}

func (s *Service) exec(ctx context.Context, in ExecInput, stdout, stderr io.Writer, started func(id string)) (ExecResult, error) {
	if strings.TrimSpace(in.Command) == "" {
		return ExecResult{}, toolErr(CodeInvalid, nil, "command is empty")
	}
	name := in.Backend
	if name == "" {
		name = s.opts.DefaultBackend
	}
	backend, ok := s.backends[name]
	if !ok {
		return ExecResult{}, toolErr(CodeBackend, sidecar.ErrUnknownBackend, "unknown backend %q; available: %s", name, strings.Join(s.Backends(), ", "))
	}

	if in.AllowNetwork && s.opts.Egress.Current().Empty() {
		return ExecResult{}, toolErr(CodeDenied, nil, "allow_network is refused: this workspace's operator allows no network to execs (the owner's --egress-allow HOST[:PORT] allows some; --no-network none)")
	}
	if in.TimeoutSeconds < 0 {
		return ExecResult{}, toolErr(CodeInvalid, nil, "timeout_seconds must not be negative")
	}
	if in.MaxMemoryBytes < 0 {
		return ExecResult{}, toolErr(CodeInvalid, nil, "max_memory_bytes must not be negative")
	}
	if err := checkEnv(in.Env); err != nil {
		return ExecResult{}, err
	}
	fsys := s.view("tool:exec")
	cwd, err := resolve(fsys, in.Cwd, true)
	if err != nil {
		return ExecResult{}, err
	}
	if fi, err := fsys.Stat(cwd); err != nil {
		return ExecResult{}, err
	} else if !fi.IsDir() {
		return ExecResult{}, toolErr(CodeNotDir, nil, "cwd %s is not a directory", display(cwd))
	}
	dir := sidecar.WorkspaceDir + strings.TrimSuffix(cwd, "/")

	if s.opts.Admit != nil {
		release, err := s.opts.Admit(name)
		if err != nil {
			return ExecResult{}, err
		}
		defer release()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e := &execEntry{
		info:   ExecInfo{ID: newID(), Command: in.Command, Backend: name, Cwd: dir, Started: time.Now(), Running: true},
		cancel: cancel,
	}
	s.mu.Lock()
	s.running[e.info.ID] = e
	s.mu.Unlock()
	if started != nil {
		started(e.info.ID)
	}
	var checkpoint string
	var freshCheckpoint bool
	if s.opts.AutoCheckpoint != nil && s.core != nil {
		checkpoint, freshCheckpoint = s.autoCheckpoint(ctx, e.info.ID)
	}
	var stdin io.Reader
	if in.Stdin != "" {
		stdin = strings.NewReader(in.Stdin)
	}
	// Every audit event goes through the core, which closes quiet at
	// the first one: still open after the command, nothing was recorded
	// meanwhile, so the command changed nothing and its result needs no
	// audit query (an echo's would be a third of its CPU).
	var quiet <-chan struct{}
	if s.coreAudit {
		quiet = s.core.Changed()
	}
	m := metrics.Exec(name)
	m.Running.Inc()
	r, err := backend.Exec(ctx, sidecar.Request{
		Command:      in.Command,
		Dir:          dir,
		Env:          in.Env,
		Stdin:        stdin,
		Stdout:       countWriter{stdout, m},
		Stderr:       countWriter{stderr, m},
		Timeout:      time.Duration(in.TimeoutSeconds * float64(time.Second)),
		Limits:       sidecar.Limits{MaxMemoryBytes: in.MaxMemoryBytes},
		Actor:        Actor(e.info.ID),
		AllowNetwork: in.AllowNetwork,
	})
	m.Running.Dec()
	res := ExecResult{ID: e.info.ID, ExitCode: r.ExitCode, DurationMS: float64(r.Duration) / float64(time.Millisecond),
		Truncated: r.Truncated, TimedOut: r.TimedOut, LimitHit: string(r.LimitHit), Checkpoint: checkpoint}
	s.mu.Lock()
	res.Killed = e.killed || (ctx.Err() != nil && !r.TimedOut)
	s.mu.Unlock()
	record(m, res, err, time.Since(e.info.Started))
	if s.opts.Audit != nil && !isOpen(quiet) {
		// A failed lookup only leaves the list out of the result; the
		// context may be gone with the client, the audit is not.
		if changed, cerr := s.execResultChanges(context.WithoutCancel(ctx), e.info.ID); cerr == nil {
			res.Changed = changed
		} else {
			slog.Warn("exec changes", "id", e.info.ID, "err", cerr)
		}
	}
	s.finish(e, res)
	if freshCheckpoint {
		s.pruneCheckpoints(context.WithoutCancel(ctx))
	}
	if err != nil {
		return res, fmt.Errorf("exec %s on %s: %w", e.info.ID, name, err)
	}
	return res, nil
}

// checkEnv refuses the variables an environment cannot hold: execve's
// "KEY=value" strings end at a NUL and split at the first '=', so a key
// with '=' would set another variable (A=B to "x" is A to "B=x"), an empty
// one none, and a NUL would cut the rest off.
func checkEnv(env map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(env)) { // the same key named each time
		switch {
		case k == "":
			return toolErr(CodeInvalid, nil, "env: a variable name is empty")
		case strings.ContainsAny(k, "=\x00"):
			return toolErr(CodeInvalid, nil, "env: variable name %q holds '=' or a NUL byte; a name cannot", k)
		case strings.ContainsRune(env[k], 0):
			return toolErr(CodeInvalid, nil, "env: the value of %q holds a NUL byte; a value cannot", k)
		}
	}
	return nil
}

// isOpen says whether ch, a channel that is only ever closed, is still
// open; false for nil.
func isOpen(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

// record counts a finished exec in the Prometheus metrics.
func record(m *metrics.ExecMetrics, res ExecResult, err error, d time.Duration) {
	outcome := "ok"
	switch {
	case res.TimedOut:
		outcome = "timeout"
	case res.Killed:
		outcome = "killed"
	case res.LimitHit != "":
		outcome = "limit"
		m.LimitHit(string(res.LimitHit))
	case err != nil || res.ExitCode != 0:
		outcome = "error"
	}
	if res.Truncated {
		m.Truncated()
	}
	m.Done(outcome, d)
}

// countWriter counts output bytes for the metrics; a nil w discards.
type countWriter struct {
	w io.Writer
	m *metrics.ExecMetrics
}

func (c countWriter) Write(p []byte) (int, error) {
	c.m.OutputBytes(len(p))
	if c.w == nil {
		return len(p), nil
	}
	return c.w.Write(p)
}

func (s *Service) finish(e *execEntry, res ExecResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, e.info.ID)
	e.info.Running = false
	e.info.Result = &res
	s.finished = append(s.finished, e)
	if n := len(s.finished) - s.opts.KeepFinished; n > 0 {
		s.finished = slices.Delete(s.finished, 0, n)
	}
}

// Execs lists running execs and the most recent finished ones, oldest
// first.
func (s *Service) Execs() []ExecInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ExecInfo, 0, len(s.running)+len(s.finished))
	for _, e := range s.finished {
		out = append(out, e.info)
	}
	for _, e := range s.running {
		out = append(out, e.info)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out
}

// ExecInfo returns one exec by id.
func (s *Service) ExecInfo(id string) (ExecInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.running[id]; ok {
		return e.info, nil
	}
	for _, e := range s.finished {
		if e.info.ID == id {
			return e.info, nil
		}
	}
	return ExecInfo{}, toolErr(CodeNoExec, nil, "no exec with id %q", id)
}

// Kill cancels a running exec. Killing a finished one is not an error.
func (s *Service) Kill(id string) (ExecInfo, error) {
	s.mu.Lock()
	e, ok := s.running[id]
	if ok {
		e.killed = true
		e.cancel()
	}
	s.mu.Unlock()
	return s.ExecInfo(id)
}

// Sync returns once every change made so far is durable. Concurrent
// callers share one commit (the core's group commit), so a burst of
// acknowledged writes costs about one fsync.
func (s *Service) Sync(ctx context.Context) error {
	if s.core == nil {
		return nil
	}
	return s.core.Sync(ctx)
}

// Wait cancels every running exec and waits until they have finished or
// ctx ends; for a graceful shutdown.
func (s *Service) Wait(ctx context.Context, cancelRunning bool) error {
	for {
		s.mu.Lock()
		n := len(s.running)
		if cancelRunning {
			for _, e := range s.running {
				e.killed = true
				e.cancel()
			}
		}
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// ExecTool runs the exec tool: the output is collected, capped, and
// returned with the result.
func (s *Service) ExecTool(ctx context.Context, in ExecInput) (ExecOutput, error) {
	out := capped{max: int(s.opts.ExecOutputBytes)}
	errb := capped{max: int(s.opts.ExecOutputBytes)}
	res, err := s.Exec(ctx, in, &out, &errb, nil)
	if err != nil {
		return ExecOutput{}, err
	}
	res.Truncated = res.Truncated || out.dropped || errb.dropped
	return ExecOutput{ExecResult: res, Stdout: out.String(), Stderr: errb.String()}, nil
}

// capped keeps the first max bytes written to it and drops the rest.
type capped struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	max     int
	dropped bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if room < len(p) {
		c.dropped = true
		c.buf.Write(p[:max(room, 0)])
	} else {
		c.buf.Write(p)
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
