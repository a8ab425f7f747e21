package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// routedPrefix marks an interpreter builtin the call handler redirected to
// the backend because the interpreter's own version reaches the host
// (PATH lookups on host directories, host symlinks). No shell word can
// hold a NUL byte, so a script cannot call these names itself.
const routedPrefix = "\x00sqlfs:"

// binDirs are where scripts name commands by path (/usr/bin/env, /bin/sh):
// such names run the built-in command of the same base name.
var binDirs = []string{"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"}

// routeBuiltin rewrites the interpreter builtins that would reach the host.
func routeBuiltin(args []string) []string {
	switch args[0] {
	case "type":
		return routed(args)
	case "command":
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") || a == "--" {
				break
			}
			if strings.ContainsAny(a, "vV") {
				return routed(args)
			}
		}
	case "pwd":
		if slices.Contains(args[1:], "-P") {
			return routed(args)
		}
	case "source", ".":
		// The interpreter looks a bare name up in PATH with the host's
		// stat. The shell's PATH directories are empty, so bash would find
		// the file in the working directory: name it so.
		if len(args) > 1 && !strings.Contains(args[1], "/") {
			args = slices.Clone(args)
			args[1] = "./" + args[1]
		}
	}
	return args
}

func routed(args []string) []string {
	out := append([]string{routedPrefix + args[0]}, args[1:]...)
	return out
}

// lookup finds the command a name runs when it is not a function or an
// interpreter builtin: the shell commands bound to the run (sh, bash,
// which), the caller's (Options.Commands), then the built-in ones.
func (r *run) lookup(name string) (builtin.Func, bool) {
	switch name {
	case "sh", "bash":
		return r.shCommand, true
	case "which":
		return r.whichCommand, true
	}
	if fn, ok := r.b.opts.Commands[name]; ok {
		return fn, true
	}
	return builtin.Lookup(name)
}

// isCommand reports whether name runs something that exists as a program
// on a real system: a registry command or an interpreter builtin that
// also ships in /usr/bin (echo, printf, test…).
func (r *run) isCommand(name string) bool {
	_, ok := r.lookup(name)
	return ok || interp.IsBuiltin(name)
}

// funcDefined reports whether name is a shell function in the interpreter
// that made hc. The interpreter keeps functions on its Runner, which a
// handler only reaches through HandlerContext's unexported field; reading
// it by reflection keeps `type f` and `command -v f` right for functions
// without the host PATH lookup the builtin versions do. A test pins this.
func funcDefined(hc interp.HandlerContext, name string) bool {
	rv := reflect.ValueOf(hc).FieldByName("runner")
	if !rv.IsValid() || rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false
	}
	funcs := rv.Elem().FieldByName("Funcs")
	if !funcs.IsValid() || funcs.Kind() != reflect.Map || funcs.IsNil() {
		return false
	}
	return funcs.MapIndex(reflect.ValueOf(name)).IsValid()
}

// kind classifies a command name as bash's `type -t` does.
func (r *run) kind(hc interp.HandlerContext, name string) string {
	switch {
	case syntax.IsKeyword(name):
		return "keyword"
	case funcDefined(hc, name):
		return "function"
	case interp.IsBuiltin(name):
		return "builtin"
	}
	if _, ok := r.commandPath(name, hc.Dir); ok {
		return "file"
	}
	return ""
}

// commandPath is where a command name is found, as PATH lookup would:
// built-in commands live in /usr/bin; a name with a slash is a file of
// the shell's filesystem with an execute bit.
func (r *run) commandPath(name, dir string) (string, bool) {
	if strings.Contains(name, "/") {
		p := absPath(dir, name)
		if d := path.Dir(p); slices.Contains(binDirs, d) {
			return name, r.isCommand(path.Base(p))
		}
		fi, err := r.fs.Stat(p)
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return "", false
		}
		return name, true
	}
	if _, ok := r.lookup(name); ok {
		return "/usr/bin/" + name, true
	}
	return "", false
}

// routedBuiltin runs the backend's version of a routed interpreter
// builtin.
func (r *run) routedBuiltin(hc interp.HandlerContext, env *builtin.Env, name string, args []string) int {
	switch name {
	case "type":
		return r.typeCommand(hc, env, args)
	case "command":
		return r.commandV(hc, env, args)
	case "pwd":
		p, err := r.fs.resolve("pwd", hc.Env.Get("PWD").String(), true)
		if err != nil {
			env.Errorf("pwd", "%v", err)
			return 1
		}
		fmt.Fprintln(env.Stdout, p)
		return 0
	}
	env.Errorf(name, "unsupported builtin")
	return 2
}

func (r *run) typeCommand(hc interp.HandlerContext, env *builtin.Env, args []string) int {
	mode := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		for _, c := range args[0][1:] {
			switch c {
			case 't', 'p', 'P':
				mode = string(c)
			case 'a', 'f':
			default:
				env.Errorf("type", "-%c: invalid option", c)
				return 2
			}
		}
		args = args[1:]
	}
	status := 0
	for _, name := range args {
		k := r.kind(hc, name)
		switch mode {
		case "t":
			if k == "" {
				status = 1
				continue
			}
			fmt.Fprintln(env.Stdout, k)
			continue
		case "p", "P":
			if p, ok := r.commandPath(name, hc.Dir); ok && (k == "file" || mode == "P") {
				fmt.Fprintln(env.Stdout, p)
			} else if k == "" || mode == "P" {
				status = 1
			}
			continue
		}
		switch k {
		case "keyword":
			fmt.Fprintf(env.Stdout, "%s is a shell keyword\n", name)
		case "function":
			fmt.Fprintf(env.Stdout, "%s is a function\n", name)
		case "builtin":
			fmt.Fprintf(env.Stdout, "%s is a shell builtin\n", name)
		case "file":
			p, _ := r.commandPath(name, hc.Dir)
			fmt.Fprintf(env.Stdout, "%s is %s\n", name, p)
		default:
			env.Errorf("type", "%s: not found", name)
			status = 1
		}
	}
	return status
}

// commandV is `command -v` and `command -V`.
func (r *run) commandV(hc interp.HandlerContext, env *builtin.Env, args []string) int {
	verbose := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		if strings.Contains(args[0], "V") {
			verbose = true
		}
		args = args[1:]
	}
	if verbose {
		return r.typeCommand(hc, env, args)
	}
	status := 0
	for _, name := range args {
		switch k := r.kind(hc, name); k {
		case "keyword", "function", "builtin":
			fmt.Fprintln(env.Stdout, name)
		case "file":
			p, _ := r.commandPath(name, hc.Dir)
			fmt.Fprintln(env.Stdout, p)
		default:
			status = 1
		}
	}
	return status
}

// whichCommand prints where each built-in command is (-a is accepted; there
// is only ever one). Functions are invisible to it, as to /usr/bin/which.
func (r *run) whichCommand(ctx context.Context, env *builtin.Env, args []string) int {
	status := 0
	for _, name := range args[1:] {
		if name == "-a" || name == "-s" {
			continue
		}
		p, ok := r.commandPath(name, env.Dir)
		if !ok {
			status = 1
			continue
		}
		fmt.Fprintln(env.Stdout, p)
	}
	return status
}

// runPath runs a command named by a path: /usr/bin/NAME runs the built-in
// NAME; a shell script in the shell's filesystem runs in a new shell.
// Anything else is a binary the shell backend cannot run.
func (r *run) runPath(ctx context.Context, env *builtin.Env, args []string) int {
	name := args[0]
	p := env.Abs(name)
	if base := path.Base(p); slices.Contains(binDirs, path.Dir(p)) && r.isCommand(base) {
		return r.runArgs(ctx, env, append([]string{base}, args[1:]...))
	}
	fi, err := r.fs.Stat(p)
	switch {
	case err != nil:
		env.Errorf("sh", "%s: %s", name, strerror(err))
		return exitNotFound
	case fi.IsDir():
		env.Errorf("sh", "%s: Is a directory", name)
		return 126
	case fi.Mode().Perm()&0o111 == 0:
		env.Errorf("sh", "%s: Permission denied", name)
		return 126
	}
	data, err := readFile(r.fs, p)
	if err != nil {
		env.Errorf("sh", "%s: %s", name, strerror(err))
		return 126
	}
	if interp, ok := shebang(data); ok && isNode(interp) && r.isCommand("node") {
		// A package's CLI (node_modules/.bin/*): the js backend's node.
		return r.runArgs(ctx, env, append([]string{"node", p}, args[1:]...))
	}
	if interp, ok := shebang(data); ok && !isShell(interp) {
		env.Errorf("sh", "%s: cannot execute: interpreter %q is not available in the shell backend "+
			"(use the container backend for a full userland)", name, strings.Join(interp, " "))
		return 126
	}
	file, err := parseScript(bytes.NewReader(data), name)
	if err != nil {
		env.Errorf("sh", "%v", err)
		return 2
	}
	return r.runNode(ctx, env, file, nil, args[1:])
}

// shebang returns the interpreter line of a script, split into words.
func shebang(data []byte) ([]string, bool) {
	rest, ok := bytes.CutPrefix(data, []byte("#!"))
	if !ok {
		return nil, false
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	return strings.Fields(string(line)), true
}

// isNode reports whether an interpreter line names node, directly or
// through env.
func isNode(words []string) bool { return interpreter(words) == "node" }

// isShell reports whether an interpreter line names a POSIX shell, directly
// or through env.
func isShell(words []string) bool {
	if len(words) == 0 {
		return true
	}
	switch interpreter(words) {
	case "sh", "bash", "dash", "ash":
		return true
	}
	return false
}

// interpreter is the program an interpreter line runs, past env and its
// options.
func interpreter(words []string) string {
	if len(words) > 0 && path.Base(words[0]) == "env" {
		words = words[1:]
		for len(words) > 0 && strings.HasPrefix(words[0], "-") {
			words = words[1:]
		}
	}
	if len(words) == 0 {
		return ""
	}
	return path.Base(words[0])
}

func readFile(fsys builtin.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(f)
	return buf.Bytes(), err
}

// strerror renders an error's errno as C's strerror does.
func strerror(err error) string {
	if errno, ok := errors.AsType[syscall.Errno](err); ok {
		err = errno
	}
	var pe *fs.PathError
	if e, ok := err.(*fs.PathError); ok {
		pe = e
		err = pe.Err
	}
	s := err.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
