package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/benhoyt/goawk/interp"
	"github.com/benhoyt/goawk/lexer"
	"github.com/benhoyt/goawk/parser"
)

func init() { register("awk", textAwk) }

// awkAssign matches a command-line "var=value" operand.
var awkAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// awkOpenError is a file operand awk could not open.
type awkOpenError struct {
	name string
	err  error
}

func (e *awkOpenError) Error() string {
	return fmt.Sprintf("cannot open %s (%s)", e.name, textStrerror(e.err))
}

func (e *awkOpenError) Unwrap() error { return e.err }

// awkInputs serves the file operands one after another through a single
// reader. goawk opens files with the host's os.Open, so every operand is
// passed to it as "-" (standard input) and this reader ends each file with
// an io.EOF, after which goawk's next "-" reads the next file. FNR, NR and
// getline keep their meaning; FILENAME reads "-".
type awkInputs struct {
	env   *Env
	names []string
	cur   io.ReadCloser
}

func (a *awkInputs) Read(p []byte) (int, error) {
	if a.cur == nil {
		if len(a.names) == 0 {
			return 0, io.EOF
		}
		name := a.names[0]
		a.names = a.names[1:]
		r, err := textOpen(a.env, name)
		if err != nil {
			return 0, &awkOpenError{name, err}
		}
		a.cur = r
	}
	n, err := a.cur.Read(p)
	if errors.Is(err, io.EOF) {
		a.cur.Close()
		a.cur = nil
		if n > 0 {
			return n, nil
		}
		return 0, io.EOF
	}
	return n, err
}

func textAwk(ctx context.Context, env *Env, args []string) int {
	var vars []string
	var progFiles []string
	var fs string
	haveFS := false
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		switch {
		case strings.HasPrefix(a, "-F"):
			v, ok := textOptValue(env, "awk", args, &i, "-F", "")
			if !ok {
				return 2
			}
			fs, haveFS = v, true
		case strings.HasPrefix(a, "-v"):
			v, ok := textOptValue(env, "awk", args, &i, "-v", "")
			if !ok {
				return 2
			}
			name, val, found := strings.Cut(v, "=")
			if !found {
				env.Errorf("awk", "invalid -v argument %s", textQuote(v))
				return 2
			}
			if u, err := lexer.Unescape(val); err == nil {
				val = u
			}
			vars = append(vars, name, val)
		case strings.HasPrefix(a, "-f"):
			v, ok := textOptValue(env, "awk", args, &i, "-f", "")
			if !ok {
				return 2
			}
			progFiles = append(progFiles, v)
		default:
			env.Errorf("awk", "unknown option %s", a)
			return 2
		}
	}
	var src string
	if len(progFiles) > 0 {
		var b strings.Builder
		for _, f := range progFiles {
			data, err := textReadAll(ctx, env, f)
			if err != nil {
				env.Errorf("awk", "can't open file %s: %s", f, textStrerror(err))
				return 2
			}
			b.Write(data)
			b.WriteByte('\n')
		}
		src = b.String()
	} else {
		if i >= len(args) {
			fmt.Fprintln(env.Stderr, "usage: awk [-F fs][-v var=value][prog | -f progfile][file ...]")
			return 2
		}
		src = args[i]
		i++
	}
	if haveFS {
		if fs == "t" {
			fs = "\t" // POSIX: -Ft is a tab
		} else if u, err := lexer.Unescape(fs); err == nil {
			fs = u
		}
		vars = append(vars, "FS", fs)
	}
	prog, err := parser.ParseProgram([]byte(src), nil)
	if err != nil {
		env.Errorf("awk", "%v", err)
		return 2
	}
	in, err := interp.New(prog)
	if err != nil {
		env.Errorf("awk", "%v", err)
		return 2
	}
	var operands, files []string
	for _, a := range args[i:] {
		if awkAssign.MatchString(a) || a == "" {
			operands = append(operands, a)
			continue
		}
		operands = append(operands, "-")
		files = append(files, a)
	}
	environ := []string{}
	for _, kv := range textEnviron(env) {
		k, v, _ := strings.Cut(kv, "=")
		environ = append(environ, k, v)
	}
	cfg := &interp.Config{
		Stdin:  env.Stdin,
		Output: env.Stdout,
		Error:  env.Stderr,
		Argv0:  "awk",
		Args:   operands,
		Vars:   vars,
		// Everything goes through the shell's filesystem, never the host:
		// files only as operands, no redirections to files, no commands.
		NoExec:       true,
		NoFileWrites: true,
		NoFileReads:  true,
		Environ:      environ,
		Chars:        true,
		// goawk checks ctx every 1000 instructions, while s = s s
		// doubles a string on each: only a cap stops it in time.
		MaxStringBytes: int(env.memLimit()),
	}
	if len(files) > 0 {
		cfg.Stdin = &awkInputs{env: env, names: files}
	}
	status, err := in.ExecuteContext(ctx, cfg)
	if err != nil && ctx.Err() != nil {
		return 2 // stopped with the exec, which reports why
	}
	if err != nil {
		var oe *awkOpenError
		if errors.Is(err, interp.ErrStringTooLong) {
			// Past the exec's whole budget: charging it stops the exec
			// with the memory limit's message.
			_ = env.grow(env.memLimit() + 1)
			env.Errorf("awk", "%v", err)
		} else if errors.As(err, &oe) {
			env.Errorf("awk", "%v", oe)
		} else {
			env.Errorf("awk", "%v", err)
		}
		return 2
	}
	return status
}
