// Package sidecar runs commands against a workspace. Every backend (shell,
// container, …) implements Backend, so callers hold one exec surface whatever
// runs the command.
package sidecar

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"reflect"
	"time"
)

// WorkspaceDir is where every backend shows the workspace, so absolute paths
// mean the same thing in the shell backend and in the container.
const WorkspaceDir = "/workspace"

// Request is one command to run.
type Request struct {
	Command string            // a POSIX shell command line
	Dir     string            // working directory; "" means WorkspaceDir
	Env     map[string]string // extra environment; never the host's
	Stdin   io.Reader         // nil means empty input
	Stdout  io.Writer         // streamed as produced; nil discards
	Stderr  io.Writer         // streamed as produced; nil discards
	Timeout time.Duration     // 0 means Limits.Timeout
	Limits  Limits
	// Actor names the command in the audit trail (e.g. "exec:ID"), so the
	// changes it made can be listed afterwards; "" uses the backend's own.
	Actor string
	// AllowNetwork asks for the network where its backend decides per exec
	// (the js backend's fetch): it can only use what the operator's egress
	// policy allows (package egress), and without it the exec has none.
	AllowNetwork bool
}

// Limits bound what one command may consume. Zero fields take the defaults
// from DefaultLimits.
type Limits struct {
	Timeout        time.Duration // wall clock
	MaxOutputBytes int64         // stdout+stderr; the rest is dropped behind a marker
	MaxWriteBytes  int64         // bytes written to the workspace
	MaxCommands    int64         // simple commands executed (shell backend)
	MaxCallDepth   int           // nested function calls and sh -c (shell backend)
	MaxGlobMatches int           // paths one glob may expand to (shell backend)
	// MaxProcs bounds the concurrent subshells, pipeline stages and
	// background jobs of one command (shell backend: its goroutines).
	MaxProcs int
	// MaxMemoryBytes bounds the data one command holds at once (shell
	// backend: sort's and tac's input, command substitution output,
	// variables, sed's and awk's buffers); the container backend leaves
	// memory to its cgroup.
	MaxMemoryBytes int64
}

// DefaultLimits are safe for an untrusted agent.
var DefaultLimits = Limits{
	Timeout:        2 * time.Minute,
	MaxOutputBytes: 1 << 20,
	MaxWriteBytes:  1 << 30,
	MaxCommands:    1_000_000,
	MaxCallDepth:   100,
	MaxGlobMatches: 100_000,
	MaxProcs:       1024,
	MaxMemoryBytes: 256 << 20,
}

// WithDefaults returns l with every zero field set from DefaultLimits.
func (l Limits) WithDefaults() Limits { return l.Or(DefaultLimits) }

// Or returns l with every zero field set from d.
func (l Limits) Or(d Limits) Limits { return l.fieldwise(d, positiveOr[int64]) }

// Within returns l with every zero field set from ceiling and every other
// field lowered to ceiling's where it is above: what a request asks may
// lower the operator's limits, never raise them.
func (l Limits) Within(ceiling Limits) Limits {
	return l.Or(ceiling).fieldwise(ceiling, func(v, c int64) int64 { return min(v, c) })
}

// fieldwise returns l with each field set to f of l's and o's: every limit
// is an integer, so a new one is combined without being listed here.
func (l Limits) fieldwise(o Limits, f func(v, o int64) int64) Limits {
	lv, ov := reflect.ValueOf(&l).Elem(), reflect.ValueOf(o)
	for i := range lv.NumField() {
		lv.Field(i).SetInt(f(lv.Field(i).Int(), ov.Field(i).Int()))
	}
	return l
}

// LimitsWithin is what req runs under on a backend whose operator set
// ceiling (its zero fields: DefaultLimits): the request's own limits may
// lower the ceiling's, never raise them. req.Timeout chooses the wall
// clock, bounded only when the operator set a Timeout.
func (req Request) LimitsWithin(ceiling Limits) Limits {
	limits := req.Limits.Within(ceiling.WithDefaults())
	if req.Timeout > 0 && (ceiling.Timeout <= 0 || req.Timeout < ceiling.Timeout) {
		limits.Timeout = req.Timeout
	}
	return limits
}

// positiveOr is v, or d when v is zero or negative (unset).
func positiveOr[T int | int64 | time.Duration](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

// Result is how a command ended.
type Result struct {
	ExitCode  int
	Duration  time.Duration
	Truncated bool  // output went past MaxOutputBytes
	TimedOut  bool  // killed by the timeout
	LimitHit  Limit // the limit that stopped the command, if any
}

// Limit names a limit that stopped a command, as the API and the metrics
// spell it (the snake_case of its Limits field).
type Limit string

const (
	LimitTimeout        Limit = "timeout"
	LimitMaxWriteBytes  Limit = "max_write_bytes"
	LimitMaxCommands    Limit = "max_commands"
	LimitMaxCallDepth   Limit = "max_call_depth"
	LimitMaxGlobMatches Limit = "max_glob_matches"
	LimitMaxProcs       Limit = "max_procs"
	LimitMaxMemoryBytes Limit = "max_memory_bytes"
)

// Root is a workspace's root directory as the process that owns the
// store reads and changes it, through its core. A backend over that
// process's own FUSE mount of the workspace goes through Root rather than
// the mount: a request from the server to itself, caught in flight by a
// SIGKILL, is never answered, and the process can then never exit (nor let
// go of the store).
type Root interface {
	Owner() (uid, gid uint32, perm fs.FileMode, err error)
	Chown(uid, gid int) error
	Chmod(perm fs.FileMode) error
}

// Backend runs commands. Exec returns a non-nil error only when the command
// could not be run at all; a command that ran and failed reports it in
// Result.ExitCode.
type Backend interface {
	Name() string
	Exec(ctx context.Context, req Request) (Result, error)
	Close() error
}

// ErrUnknownBackend is returned for a backend name nobody registered.
var ErrUnknownBackend = errors.New("unknown backend")
