package shell

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
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
	mark     int   // failures when a printing declaration began (declMark)
	err      error // the last write error
}

func (f *trackedFile) Write(b []byte) (int, error) {
	if isDeclTrace(b) {
		return len(b), nil
	}
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

// writeErrorStatus holds the interpreter builtins that print and leave
// control flow alone, with the status bash gives each after a lost write:
// 1, except pushd and popd, which only report it (exit, return, break and
// eval are not here; echo and printf are the backend's own; type, command
// and pwd -P are routed to the backend, which checks them the same way;
// command -v, like bash's, says nothing).
var writeErrorStatus = map[string]int{
	"pwd": 1, "cd": 1, "set": 1, "shopt": 1, "trap": 1, "alias": 1, "dirs": 1,
	"hash": 1, "times": 1, "type": 1, "pushd": 0, "popd": 0,
}

const checkedRoute = routedPrefix + "checked"

// routeChecked sends a printing builtin whose standard output is a
// redirected file to checkedBuiltin.
func routeChecked(hc interp.HandlerContext, args []string) []string {
	if _, ok := writeErrorStatus[args[0]]; ok && isTracked(hc.Stdout) {
		return append([]string{checkedRoute}, args...)
	}
	return args
}

// checkedBuiltin runs an interpreter builtin (args[0]) and reports the
// write errors it ignored.
func checkedBuiltin(ctx context.Context, hc interp.HandlerContext, args []string) error {
	return checkWrites(hc, args[0], func() error { return hc.Builtin(ctx, args) })
}

func isTracked(w io.Writer) bool {
	_, ok := w.(*trackedFile)
	return ok
}

// checkWrites runs one command writing to hc.Stdout and, when a write to
// a redirected file failed meanwhile and the command says nothing of it,
// reports it as bash does (writeErrorStatus).
func checkWrites(hc interp.HandlerContext, name string, run func() error) error {
	f, ok := hc.Stdout.(*trackedFile)
	status, checked := writeErrorStatus[name]
	if !ok || !checked {
		return run()
	}
	before, _ := f.failed()
	err := run()
	after, werr := f.failed()
	if after == before || err != nil {
		return err
	}
	fmt.Fprintf(hc.Stderr, "%s: write error: %s\n", name, strerror(werr))
	return exitErr(status)
}

// Declarations (declare, typeset, local, export, readonly) are not simple
// commands: no handler runs for them. Those that print (`declare -p x`,
// `export`, `declare -f`) are rewritten when parsed into
// `{ MARK; declaration; CHECK; }` under the statement's own redirections:
// MARK notes the failed writes of the redirected file, CHECK reports any
// new one as the builtin would or keeps the declaration's status.
const (
	declMarkRoute  = routedPrefix + "declmark"
	declCheckRoute = routedPrefix + "declcheck"
)

// declTracePrefix starts the line `set -x` traces for MARK and CHECK: the
// writers the backend owns (the caller's streams, redirected files) drop
// it, since the script never wrote those commands. No shell word holds the
// NUL byte in it.
var declTracePrefix = []byte("+ " + routedPrefix + "decl")

func isDeclTrace(b []byte) bool { return bytes.HasPrefix(b, declTracePrefix) }

// parseScript parses a script as bash and prepares its printing
// declarations for the write check.
func parseScript(src io.Reader, name string) (*syntax.File, error) {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(src, name)
	if err != nil {
		return nil, err
	}
	var prints []*syntax.Stmt
	syntax.Walk(file, func(n syntax.Node) bool {
		if st, ok := n.(*syntax.Stmt); ok {
			if d, ok := st.Cmd.(*syntax.DeclClause); ok && declPrints(d) {
				prints = append(prints, st)
			}
		}
		return true
	})
	for _, st := range prints {
		d := st.Cmd.(*syntax.DeclClause)
		st.Cmd = &syntax.Block{Lbrace: d.Pos(), Rbrace: d.End(), Stmts: []*syntax.Stmt{
			routeStmt(d.Pos(), declMarkRoute),
			{Position: d.Pos(), Cmd: d},
			routeStmt(d.Pos(), declCheckRoute, d.Variant.Value),
		}}
	}
	return file, nil
}

// declPrints reports whether a declaration prints: -p, -f or -F, or no
// names at all (`export`, `declare -x`).
func declPrints(d *syntax.DeclClause) bool {
	names := false
	for _, a := range d.Args {
		if a.Name != nil || !a.Naked {
			names = true
			continue
		}
		if flag := a.Value.Lit(); strings.HasPrefix(flag, "-") && strings.ContainsAny(flag, "pfF") {
			return true
		}
	}
	return !names
}

// routeStmt is a statement calling a routed name with literal arguments.
func routeStmt(pos syntax.Pos, args ...string) *syntax.Stmt {
	call := &syntax.CallExpr{}
	for _, a := range args {
		call.Args = append(call.Args, &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{ValuePos: pos, ValueEnd: pos, Value: a}}})
	}
	return &syntax.Stmt{Position: pos, Cmd: call}
}

// declMark notes the failed writes so far of the redirected file a
// printing declaration writes to.
func declMark(hc interp.HandlerContext) {
	if f, ok := hc.Stdout.(*trackedFile); ok {
		f.mu.Lock()
		f.mark = f.failures
		f.mu.Unlock()
	}
}

// declCheck reports a write the declaration (name) lost since declMark,
// or returns the declaration's own status.
func declCheck(hc interp.HandlerContext, name string) error {
	if f, ok := hc.Stdout.(*trackedFile); ok {
		f.mu.Lock()
		failed, err := f.failures > f.mark, f.err
		f.mu.Unlock()
		if failed && hc.LastExitStatus == 0 {
			fmt.Fprintf(hc.Stderr, "%s: write error: %s\n", name, strerror(err))
			return interp.ExitStatus(1)
		}
	}
	return exitErr(hc.LastExitStatus)
}
