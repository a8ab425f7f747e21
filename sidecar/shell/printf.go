package shell

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// printf replaces the interpreter's own (no %f, no -v, no `--`), as echo
// does (the interpreter's ignore write errors): the call
// handler sends `printf` to the builtin registry's, and `printf -v NAME`
// becomes an eval of the assignment, since only the interpreter can set a
// variable in the calling shell (or the function's local scope).
func (r *run) routePrintf(ctx context.Context, args []string) []string {
	if len(args) < 2 || args[1] != "-v" {
		return routed(args)
	}
	hc := interp.HandlerCtx(ctx)
	rest := args[2:]
	if len(rest) == 0 {
		fmt.Fprintf(hc.Stderr, "printf: -v: option requires an argument\n%s\n", builtin.PrintfUsage)
		return statusArgs(2)
	}
	name := rest[0]
	rest = rest[1:]
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if !varName.MatchString(name) {
		fmt.Fprintf(hc.Stderr, "printf: `%s': not a valid identifier\n", name)
		return statusArgs(2)
	}
	if len(rest) == 0 {
		fmt.Fprintln(hc.Stderr, builtin.PrintfUsage)
		return statusArgs(2)
	}
	out := &cappedBuilder{left: maxPrintfVar}
	tz := ""
	if v := hc.Env.Get("TZ"); v.Exported {
		tz = v.String()
	}
	status := builtin.Printf(ctx, out, hc.Stderr, tz, rest[0], rest[1:])
	if out.left < 0 {
		fmt.Fprintf(hc.Stderr, "printf: -v %s: value over the limit of %d bytes\n", name, maxPrintfVar)
		return statusArgs(1)
	}
	// A shell variable ends at its first NUL, as in bash.
	value, _, _ := strings.Cut(out.String(), "\x00")
	quoted, err := syntax.Quote(value, syntax.LangBash)
	if err != nil {
		fmt.Fprintf(hc.Stderr, "printf: %v\n", err)
		return statusArgs(1)
	}
	assign := name + "=" + quoted
	if status != 0 {
		assign += fmt.Sprintf("; (exit %d)", status)
	}
	return []string{"eval", assign}
}

// statusArgs is a command that only sets $?.
func statusArgs(status int) []string {
	if status == 0 {
		return []string{"true"}
	}
	return []string{"eval", fmt.Sprintf("(exit %d)", status)}
}

// varName is what printf -v may assign: a name or an array element whose
// subscript cannot run commands.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\[[^]$` + "`" + `]*\])?$`)

// replaceBuiltin sends echo and printf to the registry's versions, also
// behind `builtin` or `command`, but not a call of a shell function that
// has one of those names.
func (r *run) replaceBuiltin(ctx context.Context, args []string) ([]string, bool) {
	name := args[0]
	if len(args) > 1 && (name == "builtin" || name == "command") {
		name = args[1]
		if name == "printf" || name == "echo" {
			args = args[1:]
		}
	} else if (name == "printf" || name == "echo") && funcDefined(interp.HandlerCtx(ctx), name) {
		return nil, false
	}
	switch name {
	case "printf":
		return r.routePrintf(ctx, args), true
	case "echo":
		return routed(args), true
	}
	return nil, false
}

// maxPrintfVar caps what printf -v may assign: the value is built in memory
// whole, and `printf -v x '%1000000s' {1..5000}` would be 5 GB.
const maxPrintfVar = 64 << 20

var errPrintfVar = errors.New("value too large")

// cappedBuilder collects printf -v's value up to left bytes.
type cappedBuilder struct {
	strings.Builder
	left int
}

func (b *cappedBuilder) Write(p []byte) (int, error) {
	return b.WriteString(string(p))
}

// WriteString is what Printf calls (through io.WriteString); it must
// not bypass the cap.
func (b *cappedBuilder) WriteString(s string) (int, error) {
	if b.left -= len(s); b.left < 0 {
		return 0, errPrintfVar
	}
	return b.Builder.WriteString(s)
}
