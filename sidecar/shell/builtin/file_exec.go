package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

func init() {
	register("env", fileEnvCmd)
	register("xargs", fileXargs)
	register("timeout", fileTimeout)
}

// fileRun runs argv through env.Run, reporting a missing runner.
func fileRun(ctx context.Context, env *Env, cmd string, argv []string) int {
	if env.Run == nil {
		env.Errorf(cmd, "cannot run commands here")
		return 126
	}
	return env.Run(ctx, env, argv)
}

func fileEnvCmd(ctx context.Context, env *Env, args []string) int {
	args = args[1:]
	ignore, nul := false, false
	var unset []string
	chdir := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		a := args[0]
		args = args[1:]
		switch {
		case a == "--":
			goto operands
		case a == "-" || a == "-i" || a == "--ignore-environment":
			ignore = true
		case a == "-0" || a == "--null":
			nul = true
		case a == "-u" || a == "--unset":
			if len(args) == 0 {
				return textUsage(env, "env", fmt.Errorf("option requires an argument -- 'u'"), 125)
			}
			unset, args = append(unset, args[0]), args[1:]
		case strings.HasPrefix(a, "--unset="):
			unset = append(unset, strings.TrimPrefix(a, "--unset="))
		case strings.HasPrefix(a, "-u"):
			unset = append(unset, a[2:])
		case a == "-C" || a == "--chdir":
			if len(args) == 0 {
				return textUsage(env, "env", fmt.Errorf("option requires an argument -- 'C'"), 125)
			}
			chdir, args = args[0], args[1:]
		default:
			return textUsage(env, "env", fmt.Errorf("invalid option -- '%s'", strings.TrimLeft(a, "-")), 125)
		}
	}
operands:
	vars := map[string]string{}
	var order []string
	set := func(kv string) {
		k, v, _ := strings.Cut(kv, "=")
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	if !ignore && env.Environ != nil {
		for _, kv := range env.Environ() {
			set(kv)
		}
	}
	for _, u := range unset {
		delete(vars, u)
	}
	for len(args) > 0 && strings.Contains(args[0], "=") && !strings.HasPrefix(args[0], "=") {
		set(args[0])
		args = args[1:]
	}
	var list []string
	for _, k := range order {
		if v, ok := vars[k]; ok {
			list = append(list, k+"="+v)
		}
	}
	if len(args) == 0 {
		sep := "\n"
		if nul {
			sep = "\x00"
		}
		sorted := append([]string(nil), list...)
		sort.Strings(sorted)
		w := bufio.NewWriter(env.Stdout)
		for _, kv := range sorted {
			w.WriteString(kv + sep)
		}
		w.Flush()
		return 0
	}
	sub := *env
	sub.Environ = func() []string { return list }
	sub.Getenv = func(name string) string { return vars[name] }
	if chdir != "" {
		sub.Dir = env.Abs(chdir)
	}
	return fileRun(ctx, &sub, "env", args)
}

func fileTimeout(ctx context.Context, env *Env, args []string) int {
	args = args[1:]
	preserve := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		a := args[0]
		args = args[1:]
		switch {
		case a == "--":
			goto operands
		case a == "--preserve-status":
			preserve = true
		case a == "--foreground", a == "-v", a == "--verbose":
		case a == "-s" || a == "-k" || a == "--signal" || a == "--kill-after":
			if len(args) == 0 {
				return textUsage(env, "timeout", fmt.Errorf("option requires an argument -- '%s'", strings.TrimLeft(a, "-")), 125)
			}
			args = args[1:] // signals and kill delays mean nothing in-process
		case strings.HasPrefix(a, "-s"), strings.HasPrefix(a, "-k"), strings.HasPrefix(a, "--signal="), strings.HasPrefix(a, "--kill-after="):
		default:
			return textUsage(env, "timeout", fmt.Errorf("invalid option -- '%s'", strings.TrimLeft(a, "-")), 125)
		}
	}
operands:
	if len(args) < 2 {
		return textUsage(env, "timeout", fmt.Errorf("missing operand"), 125)
	}
	d, err := fileDuration(args[0])
	if err != nil {
		env.Errorf("timeout", "invalid time interval %s", textQuoteGNU(args[0]))
		return 125
	}
	tctx := ctx
	if d > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	code := fileRun(tctx, env, "timeout", args[1:])
	if ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		if preserve {
			return 128 + 15
		}
		return 124
	}
	return code
}

type xargsOpts struct {
	nul        bool
	delim      byte
	hasDelim   bool
	maxArgs    int
	maxLines   int
	replace    string
	noRunEmpty bool
	trace      bool
	eofStr     string
}

func fileXargs(ctx context.Context, env *Env, args []string) int {
	o := xargsOpts{}
	args = args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		a := args[0]
		args = args[1:]
		val := func(short string) (string, bool) {
			if v := strings.TrimPrefix(a, short); v != "" && !strings.HasPrefix(a, "--") {
				return v, true
			}
			if i := strings.IndexByte(a, '='); i >= 0 && strings.HasPrefix(a, "--") {
				return a[i+1:], true
			}
			if len(args) == 0 {
				return "", false
			}
			v := args[0]
			args = args[1:]
			return v, true
		}
		var v string
		ok := true
		switch {
		case a == "--":
			goto operands
		case a == "-0" || a == "--null":
			o.nul = true
		case a == "-r" || a == "--no-run-if-empty":
			o.noRunEmpty = true
		case a == "-t" || a == "--verbose":
			o.trace = true
		case a == "-x" || a == "--exit" || a == "-p" || a == "--interactive":
		case strings.HasPrefix(a, "-n") || strings.HasPrefix(a, "--max-args"):
			v, ok = val("-n")
			if ok {
				o.maxArgs, _ = strconv.Atoi(v)
				ok = o.maxArgs > 0
			}
		case strings.HasPrefix(a, "-L") || strings.HasPrefix(a, "--max-lines"):
			v, ok = val("-L")
			if ok {
				o.maxLines, _ = strconv.Atoi(v)
				ok = o.maxLines > 0
			}
		case a == "-I" || strings.HasPrefix(a, "-I") || strings.HasPrefix(a, "--replace"):
			v, ok = val("-I")
			o.replace = v
			o.maxLines = 1
		case a == "-i":
			o.replace, o.maxLines = "{}", 1
		case strings.HasPrefix(a, "-d") || strings.HasPrefix(a, "--delimiter"):
			v, ok = val("-d")
			if ok {
				v = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\0`, "\x00", `\\`, `\`).Replace(v)
				ok = len(v) == 1
				if ok {
					o.delim, o.hasDelim = v[0], true
				}
			}
		case strings.HasPrefix(a, "-P") || strings.HasPrefix(a, "--max-procs") || strings.HasPrefix(a, "-s") ||
			strings.HasPrefix(a, "--max-chars"):
			_, ok = val(a[:2]) // parallelism and size limits: commands run one at a time
		case strings.HasPrefix(a, "-E"):
			o.eofStr, ok = val("-E")
		default:
			return textUsage(env, "xargs", fmt.Errorf("invalid option -- '%s'", strings.TrimLeft(a, "-")), 1)
		}
		if !ok {
			return textUsage(env, "xargs", fmt.Errorf("invalid argument for %s", a), 1)
		}
	}
operands:
	cmd := args
	if len(cmd) == 0 {
		cmd = []string{"echo"}
	}
	// xargs reads all its input before it runs anything: what it holds is
	// charged, the items' headers as well as the bytes.
	data, err := readAllCharged(ctx, env, env.Stdin)
	if err != nil {
		env.Errorf("xargs", "%v", err)
		return 1
	}
	items, lines, err := xargsSplit(data, o)
	if err == nil {
		err = env.grow(lineHeader * int64(len(items)))
	}
	if err != nil {
		env.Errorf("xargs", "%v", err)
		return 1
	}
	// One child environment with stdin at EOF: xargs does not give its
	// input to the commands it runs.
	sub := *env
	sub.Stdin = bytes.NewReader(nil)
	status := 0
	runOne := func(argv []string) bool {
		if ctx.Err() != nil {
			status = 1
			return false
		}
		if o.trace {
			fmt.Fprintln(env.Stderr, strings.Join(argv, " "))
		}
		code := fileRun(ctx, &sub, "xargs", argv)
		switch {
		case code == 255:
			env.Errorf("xargs", "%s: exited with status 255; aborting", argv[0])
			status = 124
			return false
		case code == 126 || code == 127:
			status = code
			return false
		case code != 0:
			status = 123
		}
		return true
	}
	if len(items) == 0 {
		if !o.noRunEmpty && o.replace == "" {
			runOne(cmd)
		}
		return status
	}
	switch {
	case o.replace != "":
		for _, line := range lines {
			arg := strings.Join(line, " ")
			argv := make([]string, len(cmd))
			for i, c := range cmd {
				argv[i] = strings.ReplaceAll(c, o.replace, arg)
			}
			if !runOne(argv) {
				break
			}
		}
	case o.maxLines > 0:
		for i := 0; i < len(lines); i += o.maxLines {
			var argv []string
			argv = append(argv, cmd...)
			for _, l := range lines[i:min(i+o.maxLines, len(lines))] {
				argv = append(argv, l...)
			}
			if !runOne(argv) {
				break
			}
		}
	default:
		n := o.maxArgs
		if n == 0 {
			n = 5000
		}
		for i := 0; i < len(items); i += n {
			argv := append(append([]string{}, cmd...), items[i:min(i+n, len(items))]...)
			if !runOne(argv) {
				break
			}
		}
	}
	return status
}

// xargsSplit splits xargs input into items and, for -L and -I, lines of
// items. Without -0 or -d, blanks separate items and quotes and
// backslashes escape, as in POSIX xargs.
func xargsSplit(data []byte, o xargsOpts) (items []string, lines [][]string, err error) {
	if o.nul || o.hasDelim {
		d := byte(0)
		if o.hasDelim {
			d = o.delim
		}
		parts := bytes.Split(data, []byte{d})
		if len(parts) > 0 && len(parts[len(parts)-1]) == 0 {
			parts = parts[:len(parts)-1]
		}
		for _, p := range parts {
			items = append(items, string(p))
			lines = append(lines, []string{string(p)})
		}
		return items, lines, nil
	}
	if o.replace != "" {
		// -I: each line is one argument, leading blanks removed.
		for _, l := range strings.Split(string(data), "\n") {
			l = strings.TrimLeft(l, " \t")
			if l == "" {
				continue
			}
			if o.eofStr != "" && l == o.eofStr {
				break
			}
			items = append(items, l)
			lines = append(lines, []string{l})
		}
		return items, lines, nil
	}
	var cur strings.Builder
	inItem := false
	var quote byte
	var line []string
	flush := func() {
		if inItem {
			items = append(items, cur.String())
			line = append(line, cur.String())
		}
		cur.Reset()
		inItem = false
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\n' {
				return nil, nil, fmt.Errorf("unmatched %s quote; by default quotes are special to xargs unless you use the -0 option",
					map[byte]string{'"': "double", '\'': "single"}[quote])
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inItem = c, true
		case c == '\\' && i+1 < len(data):
			i++
			cur.WriteByte(data[i])
			inItem = true
		case c == '\n':
			flush()
			// A line ending in a blank continues with -L.
			if len(line) > 0 && !(i > 0 && (data[i-1] == ' ' || data[i-1] == '\t')) {
				lines = append(lines, line)
				line = nil
			}
		case c == ' ' || c == '\t':
			flush()
		default:
			cur.WriteByte(c)
			inItem = true
		}
		if o.eofStr != "" && len(items) > 0 && items[len(items)-1] == o.eofStr {
			items = items[:len(items)-1]
			return items, lines, nil
		}
	}
	if quote != 0 {
		return nil, nil, fmt.Errorf("unmatched %s quote; by default quotes are special to xargs unless you use the -0 option",
			map[byte]string{'"': "double", '\'': "single"}[quote])
	}
	flush()
	if len(line) > 0 {
		lines = append(lines, line)
	}
	return items, lines, nil
}
