package shell

import (
	"bytes"
	"context"
	"io"
	"strings"

	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// shCommand is sh and bash: `-c STRING [NAME [ARG…]]`, `SCRIPT [ARG…]`,
// or a script on standard input, each in a new shell (no functions or
// unexported variables of the caller), with the -e -u -x -f -o options.
func (r *run) shCommand(ctx context.Context, env *builtin.Env, args []string) int {
	cmd := args[0]
	var opts []string
	command, hasCommand := "", false
	args = args[1:]
	for len(args) > 0 {
		a := args[0]
		if a == "--" || a == "-" {
			args = args[1:]
			break
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		args = args[1:]
		for _, c := range a[1:] {
			switch c {
			case 'c':
				hasCommand = true
			case 'o':
				if len(args) == 0 {
					env.Errorf(cmd, "%s: option requires an argument", a)
					return 2
				}
				opts = append(opts, a[:1]+"o", args[0])
				args = args[1:]
			case 'e', 'u', 'x', 'f', 'n', 'a':
				opts = append(opts, a[:1]+string(c))
			case 's', 'i', 'l':
				// Interactive, login and "read from stdin" change nothing here.
			default:
				env.Errorf(cmd, "-%c: invalid option", c)
				return 2
			}
		}
	}
	name := cmd
	var src io.Reader
	switch {
	case hasCommand:
		if len(args) == 0 {
			env.Errorf(cmd, "-c: option requires an argument")
			return 2
		}
		command, args = args[0], args[1:]
		if len(args) > 0 {
			name, args = args[0], args[1:]
		}
		src = strings.NewReader(command)
	case len(args) > 0:
		name = args[0]
		data, err := readFile(env.FS, env.Abs(name))
		if err != nil {
			env.Errorf(cmd, "%s: %s", name, strerror(err))
			return exitNotFound
		}
		src, args = bytes.NewReader(data), args[1:]
	default:
		src = env.Stdin
		env = withStdin(env, noStdin{})
	}
	file, err := parseScript(src, name)
	if err != nil {
		env.Errorf(cmd, "%v", err)
		return 2
	}
	return r.runNode(ctx, env, file, opts, args)
}

// withStdin returns a copy of env reading from in.
func withStdin(env *builtin.Env, in io.Reader) *builtin.Env {
	c := *env
	c.Stdin = in
	return &c
}
