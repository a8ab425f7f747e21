// Package js is the JavaScript exec backend: each exec runs a program in a
// fresh goja runtime with Node's core modules (fs, path, util, events,
// child_process, …) over the workspace, ES modules and TypeScript through
// esbuild, and `node` as a command of the shell backend. Programs run in a
// confined worker process each (Workers; see worker.go), whose calls the
// owner performs inside the shell backend's machinery, so the workspace,
// /tmp, the audit actor, the timeout, the output cap and the write budget
// are the shell's; the memory limit is the worker's.
package js

import (
	"context"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/sqlfs/sqlfs/sidecar"
)

// Options configure the `node` command (Command). A program's fetch goes
// through the shell's Options.HTTP (the operator's egress rules and
// credentials), for execs whose Request.AllowNetwork asks.
type Options struct {
	// MaxHeapBytes is the heap one program may use before it is stopped
	// (in a worker, the kernel enforces it); zero means
	// DefaultMaxHeapBytes.
	MaxHeapBytes int64
	// Runner runs the programs; nil means DefaultWorkers(), a confined
	// worker process per exec. InProcess runs them on the caller's heap.
	Runner Runner
	// Publish serves sqlfs:publish; nil makes publish fail with a clear
	// error.
	Publish PublishFunc
	// Checkpoint serves sqlfs:checkpoint; nil makes it fail with a clear
	// error.
	Checkpoint CheckpointFunc
}

// PublishFunc makes a public link for sqlfs:publish: a URL serving
// workspacePath (relative to the workspace root) until ttl passes (zero:
// the default), recorded in the audit trail under actor, the exec's.
type PublishFunc func(ctx context.Context, actor, workspacePath string, ttl time.Duration) (string, error)

// Backend runs JavaScript: Request.Command is the program's source.
type Backend struct {
	shell sidecar.Backend
}

var _ sidecar.Backend = (*Backend)(nil)

// New returns a JavaScript backend that runs programs through shell, a
// shell backend whose Options.Commands has this package's Command as
// `node`. The caller keeps ownership of shell.
func New(shell sidecar.Backend) *Backend {
	return &Backend{shell: shell}
}

// Name implements sidecar.Backend.
func (b *Backend) Name() string { return "js" }

// Close implements sidecar.Backend; the shell backend is the caller's.
func (b *Backend) Close() error { return nil }

// Exec runs req.Command as a Node program (`node -e`), with the request's
// directory, environment, streams, limits and actor.
func (b *Backend) Exec(ctx context.Context, req sidecar.Request) (sidecar.Result, error) {
	src, err := syntax.Quote(req.Command, syntax.LangBash)
	if err != nil {
		// Only NUL bytes cannot be quoted; no program contains one.
		return sidecar.Result{}, err
	}
	req.Command = "node -e " + src
	return b.shell.Exec(ctx, req)
}
