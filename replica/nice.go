package replica

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// niced runs fn on a thread of its own whose niceness is raised by nice
// (none when 0), as nice(1) did for the restores' litestream: beside a
// restore, the host's lease renewals and requests come first. Niceness is
// per thread on Linux; the thread, never unlocked, ends with fn's
// goroutine, so no other goroutine runs niced.
func niced(nice int, fn func() error) error {
	if nice <= 0 {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		tid := unix.Gettid()
		// getpriority(2) gives 20 - nice.
		if p, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err == nil {
			_ = unix.Setpriority(unix.PRIO_PROCESS, tid, min(20-p+nice, 19))
		}
		errc <- fn()
	}()
	return <-errc
}
