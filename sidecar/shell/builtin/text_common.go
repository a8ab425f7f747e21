package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
)

// textCreatePerm is the mode of files the commands create: 0666 under the
// usual umask 022, as the shell applies no umask of its own.
const textCreatePerm = 0o644

// textOpt is one parsed option: Name is the short letter ("n") or the long
// name with its dashes ("--include"); Val is its argument, if it takes one.
type textOpt struct {
	Name, Val string
}

// textSpec describes a command's options for textParse.
type textSpec struct {
	flags   string // short options without argument
	withArg string // short options taking an argument
	// long maps a long name (with "--") to its canonical name; a canonical
	// name ending in "=" takes an argument, one ending in "?" an optional one.
	long map[string]string
	// noPermute stops at the first operand (POSIX order), for commands whose
	// operands may look like options (expr, seq, printf-like ones).
	noPermute bool
}

// errTextUsage is wrapped by textParse errors; the message is GNU's.
var errTextUsage = errors.New("usage")

// textParse parses GNU-style options: bundled short flags, "-nVAL" and
// "-n VAL", "--long=VAL" and "--long VAL", "--" ending options, and
// operands mixed with options unless noPermute.
func textParse(args []string, spec textSpec) ([]textOpt, []string, error) {
	var opts []textOpt
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return opts, append(operands, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a, "=")
			canon, ok := spec.long[name]
			if !ok {
				return nil, nil, fmt.Errorf("%w: unrecognized option '%s'", errTextUsage, a)
			}
			if strings.HasSuffix(canon, "?") {
				// Optional argument: only in the "--long=VAL" form.
				canon = strings.TrimSuffix(canon, "?")
			} else if strings.HasSuffix(canon, "=") {
				canon = strings.TrimSuffix(canon, "=")
				if !hasVal {
					if i+1 >= len(args) {
						return nil, nil, fmt.Errorf("%w: option '%s' requires an argument", errTextUsage, name)
					}
					i++
					val = args[i]
				}
			} else if hasVal {
				return nil, nil, fmt.Errorf("%w: option '%s' doesn't allow an argument", errTextUsage, name)
			}
			opts = append(opts, textOpt{canon, val})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				c := a[j : j+1]
				switch {
				case strings.Contains(spec.withArg, c):
					val := a[j+1:]
					if val == "" {
						if i+1 >= len(args) {
							return nil, nil, fmt.Errorf("%w: option requires an argument -- '%s'", errTextUsage, c)
						}
						i++
						val = args[i]
					}
					opts = append(opts, textOpt{c, val})
					j = len(a)
				case strings.Contains(spec.flags, c):
					opts = append(opts, textOpt{c, ""})
				default:
					return nil, nil, fmt.Errorf("%w: invalid option -- '%s'", errTextUsage, c)
				}
			}
		default:
			if spec.noPermute {
				return opts, append(operands, args[i:]...), nil
			}
			operands = append(operands, a)
		}
	}
	return opts, operands, nil
}

// textOptValue reads the value of the option at args[*i], for commands
// that parse their own arguments: glued ("-s,"), after "=" in the long
// form, or the next argument (which *i then moves to).
func textOptValue(env *Env, cmd string, args []string, i *int, short, long string) (string, bool) {
	a := args[*i]
	if long != "" {
		if v, ok := strings.CutPrefix(a, long); ok {
			return v, true
		}
	}
	if a != short {
		return a[len(short):], true
	}
	if *i+1 >= len(args) {
		env.Errorf(cmd, "option requires an argument -- '%s'", short[1:])
		return "", false
	}
	*i++
	return args[*i], true
}

// textUsage prints a parse error the way GNU tools do and returns status.
func textUsage(env *Env, cmd string, err error, status int) int {
	msg := strings.TrimPrefix(err.Error(), errTextUsage.Error()+": ")
	env.Errorf(cmd, "%s", msg)
	fmt.Fprintf(env.Stderr, "Try '%s --help' for more information.\n", cmd)
	return status
}

// textStrerror renders err like C's strerror, which is what GNU tools print
// after the file name.
func textStrerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied"
	}
	return err.Error()
}

// textFileErr prints "cmd: name: strerror".
func textFileErr(env *Env, cmd, name string, err error) {
	env.Errorf(cmd, "%s: %s", name, textStrerror(err))
}

// textOpen opens a file operand for reading; "-" is standard input. A
// directory is refused with EISDIR, as read(2) on it would.
func textOpen(env *Env, name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(env.Stdin), nil
	}
	f, err := env.FS.Open(env.Abs(name))
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	return f, nil
}

// textReadAll reads a whole file operand ("-" is standard input), charging
// what it holds to the exec's memory budget.
func textReadAll(ctx context.Context, env *Env, name string) ([]byte, error) {
	r, err := textOpen(env, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readAllCharged(ctx, env, r)
}

// textInputs reads every operand (standard input when there are none) and
// concatenates them, reporting unreadable ones on stderr as cmd does. ok is
// false if any operand failed.
func textInputs(ctx context.Context, env *Env, cmd string, names []string) (data []byte, ok bool) {
	if len(names) == 0 {
		names = []string{"-"}
	}
	ok = true
	for _, n := range names {
		b, err := textReadAll(ctx, env, n)
		if err != nil {
			textFileErr(env, cmd, n, err)
			ok = false
			continue
		}
		if data == nil {
			data = b
			continue
		}
		if err := env.grow(int64(len(b))); err != nil {
			textFileErr(env, cmd, n, err)
			return data, false
		}
		data = append(data, b...)
	}
	return data, ok
}

// textSplitLines splits data into lines without their terminator; a final
// line without newline is kept. It reports whether the data ended in one.
func textSplitLines(data []byte, sep byte) (lines [][]byte, lastNL bool) {
	lines, lastNL, _ = splitLines(context.Background(), data, sep)
	return lines, lastNL
}

// linesPerCheck is how many held lines a loop goes through between two
// checks of its context: about a millisecond of cutting or printing.
const linesPerCheck = 1 << 16

// splitLines is textSplitLines stopping with ctx's error.
func splitLines(ctx context.Context, data []byte, sep byte) (lines [][]byte, lastNL bool, err error) {
	if len(data) == 0 {
		return nil, true, nil
	}
	lastNL = data[len(data)-1] == sep
	if lastNL {
		data = data[:len(data)-1]
	}
	// Sized once and cut with IndexByte: growing a slice of millions of
	// headers copies it again and again.
	lines = make([][]byte, 0, bytes.Count(data, []byte{sep})+1)
	for {
		if len(lines)%linesPerCheck == 0 && ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		i := bytes.IndexByte(data, sep)
		if i < 0 {
			break
		}
		lines = append(lines, data[:i:i])
		data = data[i+1:]
	}
	lines = append(lines, data)
	return lines, lastNL, nil
}

// lineHeader is what holding one line costs besides its bytes: a slice
// header.
const lineHeader = 24

// textHoldLines splits data like textSplitLines for a command that keeps
// every line, charging the line headers to the exec's budget.
func textHoldLines(ctx context.Context, env *Env, data []byte, sep byte) ([][]byte, bool, error) {
	if err := env.grow(lineHeader * int64(bytes.Count(data, []byte{sep})+1)); err != nil {
		return nil, false, err
	}
	return splitLines(ctx, data, sep)
}

// textStatus maps a success flag to an exit status.
func textStatus(ok bool) int {
	if ok {
		return 0
	}
	return 1
}

// textQuote quotes a file name for messages the way GNU coreutils do
// ('name' when it has spaces or specials).
func textQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$*?[]{}()<>|&;#~`!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
