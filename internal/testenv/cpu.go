package testenv

import (
	"syscall"
	"testing"
	"time"
)

// CPUTime is the CPU time (user and system, all threads) this process has
// used so far. Benchmarks report it per operation beside wall time: on a
// machine shared with other work it is the steadier of the two.
func CPUTime(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
