package shell

import (
	"context"
	"fmt"
	"io"
	"sync"

	"mvdan.cc/sh/v3/interp"
)

// The interpreter's builtins (pwd, cd -, set, type, dirs, trap …) ignore
// the errors of their writes, so `pwd > full` would succeed with nothing
// written. Files that redirections open for writing count their failed
// writes, and the builtins that print run through the exec handler
// (checkedBuiltin), which compares the count before and after and reports
// a failure as bash does: "pwd: write error: No space left on device",
// status 1.

// trackedFile is a file a redirection opened for writing.
type trackedFile struct {
	io.ReadWriteCloser
	mu       sync.Mutex
	failures int
	err      error // the last write error
}

func (f *trackedFile) Write(b []byte) (int, error) {
	n, err := f.ReadWriteCloser.Write(b)
	if err != nil {
		f.mu.Lock()
		f.failures++
		f.err = err
		f.mu.Unlock()
	}
	return n, err
}

// failed returns the number of failed writes so far and the last error.
func (f *trackedFile) failed() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failures, f.err
}

// printingBuiltins are the interpreter builtins that write to standard
// output and leave control flow alone (exit, return, break and eval are
// not among them; echo and printf are the backend's own; type, command -v
// and pwd -P are routed to the backend, which checks them the same way).
var printingBuiltins = map[string]bool{
	"pwd": true, "cd": true, "set": true, "shopt": true, "trap": true, "alias": true,
	"dirs": true, "pushd": true, "popd": true, "hash": true, "times": true, "help": true,
}

const checkedRoute = routedPrefix + "checked"

// routeChecked sends a printing builtin whose standard output is a
// redirected file to checkedBuiltin.
func routeChecked(hc interp.HandlerContext, args []string) []string {
	if _, ok := hc.Stdout.(*trackedFile); ok && printingBuiltins[args[0]] {
		return append([]string{checkedRoute}, args...)
	}
	return args
}

// checkedBuiltin runs an interpreter builtin (args[0]) and reports the
// write errors it ignored.
func checkedBuiltin(ctx context.Context, hc interp.HandlerContext, args []string) error {
	return checkWrites(hc, args[0], func() error { return hc.Builtin(ctx, args) })
}

// checkWrites runs one command writing to hc.Stdout and, when a write to
// a redirected file failed meanwhile and the command says nothing of it,
// reports it and fails with status 1.
func checkWrites(hc interp.HandlerContext, name string, run func() error) error {
	f, ok := hc.Stdout.(*trackedFile)
	if !ok {
		return run()
	}
	before, _ := f.failed()
	err := run()
	after, werr := f.failed()
	if after == before || err != nil {
		return err
	}
	fmt.Fprintf(hc.Stderr, "%s: write error: %s\n", name, strerror(werr))
	return interp.ExitStatus(1)
}
