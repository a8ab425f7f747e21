package main

import (
	"flag"
	"fmt"
	"log/slog"

	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell"
)

// shellMemoryFlags are the shell backend's memory budgets (serve).
type shellMemoryFlags struct {
	total, perExec int64
}

func (f *shellMemoryFlags) register(fs *flag.FlagSet) {
	fs.Int64Var(&f.total, "shell-memory", 1<<30, "memory `BYTES` all running shell-backend commands share (held data, and Go heap growth the watchdog checks)")
	fs.Int64Var(&f.perExec, "exec-memory", sidecar.DefaultLimits.MaxMemoryBytes, "default memory `BYTES` one shell-backend command may hold (a request's max_memory_bytes overrides it)")
}

// check refuses a budget that is not positive: 0 or less would silently
// mean the default.
func (f shellMemoryFlags) check() error {
	if f.total <= 0 || f.perExec <= 0 {
		return fmt.Errorf("--shell-memory and --exec-memory must be positive, got %d and %d", f.total, f.perExec)
	}
	return nil
}

func (f shellMemoryFlags) options(log *slog.Logger) shell.Options {
	return shell.Options{Logger: log, MaxMemoryBytes: f.total, Limits: sidecar.Limits{MaxMemoryBytes: f.perExec}}
}
