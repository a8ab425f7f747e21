package main

import (
	"flag"
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

func (f shellMemoryFlags) options(log *slog.Logger) shell.Options {
	return shell.Options{Logger: log, MaxMemoryBytes: f.total, Limits: sidecar.Limits{MaxMemoryBytes: f.perExec}}
}
