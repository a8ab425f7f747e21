package js

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/sidecar/git"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// Program is one run of `node`: what its command line asked for and the
// exec's settings.
type Program struct {
	File  string   // the main module ("[eval]" in the working directory for -e)
	Code  string   // its source
	Print bool     // -p: print the value of Code
	Argv  []string // process.argv

	// Fetch carries fetch through the operator's egress rules; nil: the
	// network is off for this program.
	Fetch        *http.Client
	MaxHeapBytes int64
	Publish      PublishFunc
	Checkpoint   CheckpointFunc
	Actor        string // whom publish and checkpoints record in the audit trail

	// scope is whose execs may share a worker (the Backend's, one
	// workspace's); nil: a worker of its own.
	scope any
}

// A Runner runs programs. The shell's `node` command (and so every js
// exec) hands its program to the exec's Runner: InProcess runs it on the
// caller's heap; Workers run it in a confined worker process whose every
// file-system call and service is performed by the caller, so the
// exec's policy, quota, write budget and audit are the same either way.
type Runner interface {
	// Run runs p against env (its file system, streams, directory and
	// environment) to its end, and returns the exit status.
	Run(ctx context.Context, env *builtin.Env, p Program) int
}

// InProcess runs programs in the calling process, under the heap sampling
// of Program.MaxHeapBytes: fast, but one program can still exhaust the
// process's memory with a single allocation. Tests and trusted programs
// use it; execs run in Workers by default.
var InProcess Runner = inProcess{}

type inProcess struct{}

func (inProcess) Run(ctx context.Context, env *builtin.Env, p Program) int {
	return runProgram(ctx, env, &localServices{env: env, p: p}, p)
}

// services are what a program asks of the process that owns the
// workspace beyond file-system calls. A worker reaches them over its
// channel; localServices are the owner's implementation.
type services interface {
	network() bool // whether fetch may try at all
	run(ctx context.Context, r runRequest) runResult
	git(ctx context.Context, args []string, dir string) runResult
	publish(ctx context.Context, path string, ttl time.Duration) (string, error)
	fetch(ctx context.Context, r fetchRequest) (*fetchResponse, error)
	checkpoint(ctx context.Context, op string, args []byte) ([]byte, error)
}

// runRequest is a command line for the shell (child_process).
type runRequest struct {
	Cmd   string
	Dir   string // absolute
	Input string
	Env   map[string]string // nil: the exec's own
}

type runResult struct {
	Status         int
	Stdout, Stderr []byte
}

type fetchRequest struct {
	URL, Method string
	Headers     [][]string
	Body        []byte
}

type fetchResponse struct {
	Status     int
	StatusText string
	Headers    [][]string
	URL        string
	Body       []byte
}

// maxFetchBody caps a fetched body held in memory.
const maxFetchBody = 64 << 20

// maxChildOutput caps what a child_process call collects of each stream,
// so a program cannot make the owner hold unbounded output; past it the
// stream is cut as Node's maxBuffer cuts it.
const maxChildOutput = 16 << 20

// localServices serve a program from the process owning the workspace.
type localServices struct {
	env *builtin.Env
	p   Program
}

func (s *localServices) network() bool { return s.p.Fetch != nil }

func (s *localServices) run(ctx context.Context, r runRequest) runResult {
	stdout, stderr := &cappedBuffer{max: maxChildOutput}, &cappedBuffer{max: maxChildOutput}
	e := *s.env
	e.Stdout, e.Stderr = stdout, stderr
	e.Stdin = strings.NewReader(r.Input)
	e.Dir = r.Dir
	if r.Env != nil {
		e.Environ = func() []string {
			out := make([]string, 0, len(r.Env))
			for k, val := range r.Env {
				out = append(out, k+"="+val)
			}
			return out
		}
		e.Getenv = func(name string) string { return r.Env[name] }
	}
	status := 127
	if e.Run != nil {
		status = e.Run(ctx, &e, []string{"sh", "-c", r.Cmd})
	} else {
		stderr.WriteString("child_process: no shell to run commands in\n")
	}
	return runResult{Status: status, Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
}

func (s *localServices) git(ctx context.Context, args []string, dir string) runResult {
	stdout, stderr := &cappedBuffer{max: maxChildOutput}, &cappedBuffer{max: maxChildOutput}
	e := *s.env
	e.Stdout, e.Stderr = stdout, stderr
	e.Stdin = strings.NewReader("")
	e.Dir = dir
	status := git.Main(ctx, &e, append([]string{"git"}, args...))
	return runResult{Status: status, Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
}

func (s *localServices) publish(ctx context.Context, p string, ttl time.Duration) (string, error) {
	ws, ok := strings.CutPrefix(p, "/workspace")
	if !ok || (ws != "" && ws[0] != '/') {
		return "", errNotPublishable{p}
	}
	if s.p.Publish == nil {
		return "", errors.New("sqlfs:publish: publishing is not configured for this exec (serve has no --public-addr)")
	}
	return s.p.Publish(ctx, s.p.Actor, "/"+strings.TrimPrefix(ws, "/"), ttl)
}

// errNotPublishable is a path outside the workspace given to publish.
type errNotPublishable struct{ path string }

func (e errNotPublishable) Error() string {
	return "sqlfs:publish: only paths in /workspace can be published: " + e.path
}

func (s *localServices) fetch(ctx context.Context, r fetchRequest) (*fetchResponse, error) {
	if s.p.Fetch == nil {
		// The prelude refuses first; this holds for a worker that asks anyway.
		return nil, errors.New("network access is disabled for this exec")
	}
	// The egress transport audits the connection as the exec's.
	req, err := http.NewRequestWithContext(egress.WithActor(ctx, s.p.Actor), r.Method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	for _, h := range r.Headers {
		if len(h) == 2 {
			req.Header.Add(h[0], h[1])
		}
	}
	resp, err := s.p.Fetch.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBody+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFetchBody {
		return nil, fmt.Errorf("response body over %d bytes", maxFetchBody)
	}
	out := &fetchResponse{
		Status:     resp.StatusCode,
		StatusText: strings.TrimSpace(strings.TrimPrefix(resp.Status, fmt.Sprint(resp.StatusCode))),
		URL:        resp.Request.URL.String(),
		Body:       data,
	}
	for k, vals := range resp.Header {
		out.Headers = append(out.Headers, []string{strings.ToLower(k), strings.Join(vals, ", ")})
	}
	return out, nil
}

// cappedBuffer keeps the first max bytes written to it and fails the
// writes past them, which ends a command that keeps writing.
type cappedBuffer struct {
	bytes.Buffer
	max int
}

var errOutputCap = errors.New("child_process: output over the 16 MiB buffer")

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.Buffer.Write(p[:max(room, 0)])
		return max(room, 0), errOutputCap
	}
	return b.Buffer.Write(p)
}
