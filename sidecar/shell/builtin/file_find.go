package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/pattern"
)

func init() {
	register("find", fileFind)
}

// findEntry is one file find visits.
type findEntry struct {
	path  string // as printed
	abs   string
	start string // the starting point it was found under
	depth int
	fi    fs.FileInfo // Lstat, or Stat under -L
}

// findExpr is a node of find's expression.
type findExpr interface {
	eval(f *finder, e *findEntry) bool
}

type (
	findAnd   struct{ l, r findExpr }
	findOr    struct{ l, r findExpr }
	findNot   struct{ x findExpr }
	findComma struct{ l, r findExpr }
	findTest  func(f *finder, e *findEntry) bool
)

func (x findAnd) eval(f *finder, e *findEntry) bool   { return x.l.eval(f, e) && x.r.eval(f, e) }
func (x findOr) eval(f *finder, e *findEntry) bool    { return x.l.eval(f, e) || x.r.eval(f, e) }
func (x findNot) eval(f *finder, e *findEntry) bool   { return !x.x.eval(f, e) }
func (x findComma) eval(f *finder, e *findEntry) bool { x.l.eval(f, e); return x.r.eval(f, e) }
func (x findTest) eval(f *finder, e *findEntry) bool  { return x(f, e) }

type finder struct {
	env      *Env
	ctx      context.Context
	out      *bufio.Writer
	follow   bool // -L
	maxDepth int
	minDepth int
	depth    bool // -depth: directories after their contents
	now      time.Time
	pruned   bool // set by -prune for the entry being evaluated
	quit     bool
	status   int
	batches  []*findBatch
	// dirs is the directories being walked, outermost first: with -L, a
	// directory that is one of them is a loop, reported and not entered.
	dirs []*findEntry

	args      []string // the expression being parsed
	pos       int
	hasAction bool
}

// findBatch is one -exec … {} + collecting paths.
type findBatch struct {
	cmd   []string
	dir   string
	paths []string
}

func fileFind(ctx context.Context, env *Env, args []string) int {
	f := &finder{env: env, ctx: ctx, out: bufio.NewWriterSize(env.Stdout, 32<<10), maxDepth: -1, now: time.Now()}
	defer f.out.Flush()
	args = args[1:]
	for len(args) > 0 && (args[0] == "-L" || args[0] == "-H" || args[0] == "-P") {
		f.follow = args[0] == "-L"
		args = args[1:]
	}
	var starts []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "(" && args[0] != "!" {
		starts = append(starts, args[0])
		args = args[1:]
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	f.args = args
	var expr findExpr = findTest(func(*finder, *findEntry) bool { return true })
	if len(args) > 0 {
		var err error
		expr, err = f.parseOr()
		if err == nil && f.pos < len(f.args) {
			err = fmt.Errorf("unexpected extra predicate '%s'", f.args[f.pos])
		}
		if err != nil {
			env.Errorf("find", "%v", err)
			return 1
		}
	}
	if !f.hasAction {
		inner := expr
		expr = findAnd{inner, findTest(func(f *finder, e *findEntry) bool {
			f.out.WriteString(e.path + "\n")
			return true
		})}
	}
	for _, s := range starts {
		if f.quit || ctx.Err() != nil {
			break
		}
		abs := env.Abs(s)
		var fi fs.FileInfo
		var err error
		if f.follow || strings.HasSuffix(s, "/") {
			fi, err = env.FS.Stat(abs)
		} else {
			fi, err = env.FS.Lstat(abs)
		}
		if err != nil {
			f.out.Flush()
			textFileErr(env, "find", textQuoteGNU(s), err)
			f.status = 1
			continue
		}
		f.walk(expr, &findEntry{path: s, abs: abs, start: s, fi: fi})
	}
	for _, b := range f.batches {
		f.flushBatch(b)
	}
	if ctx.Err() != nil {
		return 1
	}
	return f.status
}

func (f *finder) walk(expr findExpr, e *findEntry) {
	if f.quit || f.ctx.Err() != nil {
		return
	}
	if f.follow && e.fi.IsDir() {
		for _, d := range f.dirs {
			if fileSame(d.fi, e.fi) {
				f.out.Flush()
				f.env.Errorf("find", "File system loop detected; %s is part of the same file system loop as %s.", textQuoteGNU(e.path), textQuoteGNU(d.path))
				f.status = 1
				return
			}
		}
	}
	inRange := e.depth >= f.minDepth
	f.pruned = false
	if inRange && !f.depth {
		expr.eval(f, e)
	}
	pruned := f.pruned
	if e.fi.IsDir() && !pruned && (f.maxDepth < 0 || e.depth < f.maxDepth) {
		ents, err := f.env.FS.ReadDir(e.abs)
		if err != nil {
			f.out.Flush()
			textFileErr(f.env, "find", textQuoteGNU(e.path), err)
			f.status = 1
		}
		f.dirs = append(f.dirs, e)
		for _, de := range ents {
			if f.quit {
				break
			}
			abs := path.Join(e.abs, de.Name())
			p := fileJoin(e.path, de.Name())
			var fi fs.FileInfo
			if f.follow {
				fi, err = f.env.FS.Stat(abs)
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					// A link loop (ELOOP) is an error; only a dangling
					// link stands for itself.
					f.out.Flush()
					textFileErr(f.env, "find", textQuoteGNU(p), err)
					f.status = 1
					continue
				}
			}
			if fi == nil || err != nil {
				fi, err = f.env.FS.Lstat(abs)
			}
			if err != nil {
				continue
			}
			f.walk(expr, &findEntry{path: p, abs: abs, start: e.start, depth: e.depth + 1, fi: fi})
		}
		f.dirs = f.dirs[:len(f.dirs)-1]
		if f.quit {
			return
		}
	}
	if inRange && f.depth && !f.quit {
		expr.eval(f, e)
	}
}

func (f *finder) peek() string {
	if f.pos < len(f.args) {
		return f.args[f.pos]
	}
	return ""
}

func (f *finder) parseOr() (findExpr, error) {
	l, err := f.parseAnd()
	if err != nil {
		return nil, err
	}
	for {
		switch f.peek() {
		case "-o", "-or":
			f.pos++
			r, err := f.parseAnd()
			if err != nil {
				return nil, err
			}
			l = findOr{l, r}
		case ",":
			f.pos++
			r, err := f.parseAnd()
			if err != nil {
				return nil, err
			}
			l = findComma{l, r}
		default:
			return l, nil
		}
	}
}

func (f *finder) parseAnd() (findExpr, error) {
	l, err := f.parseNot()
	if err != nil {
		return nil, err
	}
	for {
		switch p := f.peek(); p {
		case "", "-o", "-or", ",", ")":
			return l, nil
		case "-a", "-and":
			f.pos++
		}
		r, err := f.parseNot()
		if err != nil {
			return nil, err
		}
		l = findAnd{l, r}
	}
}

func (f *finder) parseNot() (findExpr, error) {
	switch f.peek() {
	case "!", "-not":
		f.pos++
		x, err := f.parseNot()
		if err != nil {
			return nil, err
		}
		return findNot{x}, nil
	case "(":
		f.pos++
		x, err := f.parseOr()
		if err != nil {
			return nil, err
		}
		if f.peek() != ")" {
			return nil, errors.New("invalid expression; I was expecting to find a ')' somewhere but did not see one.")
		}
		f.pos++
		return x, nil
	case "":
		return nil, errors.New("invalid expression")
	}
	return f.parsePrimary()
}

func (f *finder) arg(name string) (string, error) {
	if f.pos >= len(f.args) {
		return "", fmt.Errorf("missing argument to `%s'", name)
	}
	a := f.args[f.pos]
	f.pos++
	return a, nil
}

// findNum parses find's [+-]N into a comparison.
func findNum(s string) (func(v float64) bool, error) {
	cmp := byte('=')
	if s != "" && (s[0] == '+' || s[0] == '-') {
		cmp, s = s[0], s[1:]
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, err
	}
	switch cmp {
	case '+':
		return func(v float64) bool { return v > n }, nil
	case '-':
		return func(v float64) bool { return v < n }, nil
	}
	return func(v float64) bool { return v == n }, nil
}

func (f *finder) parsePrimary() (findExpr, error) {
	name := f.args[f.pos]
	f.pos++
	always := func(fn func(f *finder, e *findEntry)) findExpr {
		return findTest(func(f *finder, e *findEntry) bool { fn(f, e); return true })
	}
	switch name {
	case "-maxdepth", "-mindepth":
		v, err := f.arg(name)
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("Expected a positive decimal integer argument to %s, but got `%s'", name, v)
		}
		if name == "-maxdepth" {
			f.maxDepth = n
		} else {
			f.minDepth = n
		}
		return findTest(func(*finder, *findEntry) bool { return true }), nil
	case "-depth", "-d":
		f.depth = true
		return findTest(func(*finder, *findEntry) bool { return true }), nil
	case "-follow":
		f.follow = true
		return findTest(func(*finder, *findEntry) bool { return true }), nil
	case "-xdev", "-mount", "-noleaf", "-ignore_readdir_race", "-true":
		return findTest(func(*finder, *findEntry) bool { return true }), nil
	case "-false":
		return findTest(func(*finder, *findEntry) bool { return false }), nil
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-lname", "-ilname":
		pat, err := f.arg(name)
		if err != nil {
			return nil, err
		}
		match := globMatcher(pat, strings.HasPrefix(name, "-i"))
		return findTest(func(f *finder, e *findEntry) bool {
			switch name {
			case "-name", "-iname":
				base := path.Base(e.path)
				if e.depth == 0 {
					base = fileBase(e.path)
				}
				return match(base)
			case "-lname", "-ilname":
				if e.fi.Mode()&fs.ModeSymlink == 0 {
					return false
				}
				t, err := f.env.FS.Readlink(e.abs)
				return err == nil && match(t)
			}
			return match(e.path)
		}), nil
	case "-regex", "-iregex":
		pat, err := f.arg(name)
		if err != nil {
			return nil, err
		}
		if name == "-iregex" {
			pat = "(?i)" + pat
		}
		re, err := regexp.Compile("^(?:" + pat + ")$")
		if err != nil {
			return nil, fmt.Errorf("invalid regular expression %s: %v", textQuoteGNU(pat), err)
		}
		return findTest(func(f *finder, e *findEntry) bool { return re.MatchString(e.path) }), nil
	case "-type", "-xtype":
		v, err := f.arg(name)
		if err != nil {
			return nil, err
		}
		kinds := strings.Split(v, ",")
		for _, k := range kinds {
			if len(k) != 1 || !strings.Contains("fdlpsbc", k) {
				return nil, fmt.Errorf("Unknown argument to %s: %s", name, v)
			}
		}
		return findTest(func(f *finder, e *findEntry) bool {
			fi := e.fi
			if name == "-xtype" {
				if s, err := f.env.FS.Stat(e.abs); err == nil {
					fi = s
				}
			}
			t := findTypeLetter(fi.Mode())
			for _, k := range kinds {
				if k == t {
					return true
				}
			}
			return false
		}), nil
	case "-size":
		v, err := f.arg(name)
		if err != nil {
			return nil, err
		}
		unit := int64(512)
		if v != "" {
			switch v[len(v)-1] {
			case 'c':
				unit, v = 1, v[:len(v)-1]
			case 'w':
				unit, v = 2, v[:len(v)-1]
			case 'b':
				v = v[:len(v)-1]
			case 'k':
				unit, v = 1024, v[:len(v)-1]
			case 'M':
				unit, v = 1<<20, v[:len(v)-1]
			case 'G':
				unit, v = 1<<30, v[:len(v)-1]
			}
		}
		cmp, err := findNum(v)
		if err != nil {
			return nil, fmt.Errorf("invalid -size argument `%s'", v)
		}
		return findTest(func(f *finder, e *findEntry) bool {
			n := (e.fi.Size() + unit - 1) / unit
			return cmp(float64(n))
		}), nil
	case "-mtime", "-atime", "-ctime", "-mmin", "-amin", "-cmin":
		v, err := f.arg(name)
		if err != nil {
			return nil, err
		}
		cmp, err := findNum(v)
		if err != nil {
			return nil, fmt.Errorf("invalid argument `%s' to `%s'", v, name)
		}
		unit := 24 * time.Hour
		if strings.HasSuffix(name, "min") {
			unit = time.Minute
		}
		return findTest(func(f *finder, e *findEntry) bool {
			st := fileStat(e.fi)
			t := e.fi.ModTime()
			switch name[1] {
			case 'a':
				t = statTime(st.Atim)
			case 'c':
				t = statTime(st.Ctim)
			}
			age := f.now.Sub(t)
			n := math.Floor(float64(age) / float64(unit))
			if unit == time.Minute {
				n = math.Ceil(float64(age) / float64(unit))
			}
			return cmp(n)
		}), nil
	case "-newer", "-anewer", "-cnewer", "-newermt":
		v, err := f.arg(name)
		if err != nil {
			return nil, err
		}
		var ref time.Time
		if name == "-newermt" {
			ref, err = fileParseDate(v)
			if err != nil {
				return nil, fmt.Errorf("I cannot figure out how to interpret %s as a date or time", textQuoteGNU(v))
			}
		} else {
			fi, err := f.env.FS.Stat(f.env.Abs(v))
			if err != nil {
				return nil, fmt.Errorf("%s: %s", textQuoteGNU(v), textStrerror(err))
			}
			ref = fi.ModTime()
		}
		return findTest(func(f *finder, e *findEntry) bool {
			t := e.fi.ModTime()
			st := fileStat(e.fi)
			switch name {
			case "-anewer":
				t = statTime(st.Atim)
			case "-cnewer":
				t = statTime(st.Ctim)
			}
			return t.After(ref)
		}), nil
	case "-empty":
		return findTest(func(f *finder, e *findEntry) bool {
			switch {
			case e.fi.IsDir():
				ents, err := f.env.FS.ReadDir(e.abs)
				return err == nil && len(ents) == 0
			case e.fi.Mode().IsRegular():
				return e.fi.Size() == 0
			}
			return false
		}), nil
	case "-perm":
		v, err := f.arg(name)
		if err != nil {
			return nil, err
		}
		kind := byte('=')
		if v != "" && (v[0] == '-' || v[0] == '/' || v[0] == '+') {
			kind, v = v[0], v[1:]
		}
		m, err := fileParseMode(v, 0, false)
		if err != nil {
			return nil, fmt.Errorf("invalid mode %s", textQuoteGNU(v))
		}
		want := fileModeBits(m)
		return findTest(func(f *finder, e *findEntry) bool {
			have := fileModeBits(e.fi.Mode())
			switch kind {
			case '-':
				return have&want == want
			case '/', '+':
				return want == 0 || have&want != 0
			}
			return have&0o7777 == want
		}), nil
	case "-user", "-group", "-uid", "-gid", "-links", "-inum":
		v, err := f.arg(name)
		if err != nil {
			return nil, err
		}
		if name == "-user" || name == "-group" {
			if v == "root" {
				v = "0"
			}
		}
		cmp, err := findNum(v)
		if err != nil {
			return nil, fmt.Errorf("invalid argument %s to %s", textQuoteGNU(v), name)
		}
		return findTest(func(f *finder, e *findEntry) bool {
			st := fileStat(e.fi)
			switch name {
			case "-user", "-uid":
				return cmp(float64(st.Uid))
			case "-group", "-gid":
				return cmp(float64(st.Gid))
			case "-links":
				return cmp(float64(st.Nlink))
			}
			return cmp(float64(st.Ino))
		}), nil
	case "-readable", "-writable", "-executable":
		bit := map[string]fs.FileMode{"-readable": 0o444, "-writable": 0o222, "-executable": 0o111}[name]
		return findTest(func(f *finder, e *findEntry) bool { return e.fi.Mode()&bit != 0 }), nil
	case "-prune":
		return findTest(func(f *finder, e *findEntry) bool {
			f.pruned = !f.depth
			return true
		}), nil
	case "-quit":
		f.hasAction = true
		return findTest(func(f *finder, e *findEntry) bool { f.quit = true; return true }), nil
	case "-print", "-print0", "-ls":
		f.hasAction = true
		return always(func(f *finder, e *findEntry) {
			switch name {
			case "-print":
				f.out.WriteString(e.path + "\n")
			case "-print0":
				f.out.WriteString(e.path + "\x00")
			default:
				st := fileStat(e.fi)
				target := ""
				if e.fi.Mode()&fs.ModeSymlink != 0 {
					t, _ := f.env.FS.Readlink(e.abs)
					target = " -> " + t
				}
				fmt.Fprintf(f.out, "%9d %6d %s %3d %-8s %-8s %8d %s %s%s\n", st.Ino, blocks1K(e.fi),
					fileModeString(e.fi.Mode()), st.Nlink, fileUser(st.Uid), fileUser(st.Gid), e.fi.Size(),
					e.fi.ModTime().Format("Jan _2 15:04"), e.path, target)
			}
		}), nil
	case "-printf", "-fprintf":
		if name == "-fprintf" {
			return nil, errors.New("-fprintf is not supported; use -printf with a redirection")
		}
		format, err := f.arg(name)
		if err != nil {
			return nil, err
		}
		f.hasAction = true
		return always(func(f *finder, e *findEntry) { f.out.WriteString(f.printf(format, e)) }), nil
	case "-delete":
		f.hasAction = true
		f.depth = true
		return findTest(func(f *finder, e *findEntry) bool {
			if e.depth == 0 && (e.path == "." || e.path == "./") {
				return true
			}
			if err := f.env.FS.Remove(e.abs); err != nil {
				f.out.Flush()
				textFileErr(f.env, "find", "cannot delete "+textQuoteGNU(e.path), err)
				f.status = 1
				return false
			}
			return true
		}), nil
	case "-exec", "-execdir", "-ok", "-okdir":
		f.hasAction = true
		var cmd []string
		plus := false
		for {
			a, err := f.arg(name)
			if err != nil {
				return nil, fmt.Errorf("missing argument to `%s'", name)
			}
			if a == ";" {
				break
			}
			if a == "+" && len(cmd) > 0 && cmd[len(cmd)-1] == "{}" {
				plus = true
				cmd = cmd[:len(cmd)-1]
				break
			}
			cmd = append(cmd, a)
		}
		if len(cmd) == 0 {
			return nil, fmt.Errorf("missing argument to `%s'", name)
		}
		inDir := strings.HasSuffix(name, "dir")
		if plus {
			batches := map[string]*findBatch{}
			return always(func(f *finder, e *findEntry) {
				dir, p := f.env.Dir, e.path
				if inDir {
					dir, p = path.Dir(e.abs), "./"+path.Base(e.abs)
				}
				b := batches[dir]
				if b == nil {
					b = &findBatch{cmd: cmd, dir: dir}
					batches[dir] = b
					f.batches = append(f.batches, b)
				}
				b.paths = append(b.paths, p)
				if len(b.paths) >= 4096 {
					f.flushBatch(b)
				}
			}), nil
		}
		return findTest(func(f *finder, e *findEntry) bool {
			dir, p := f.env.Dir, e.path
			if inDir {
				dir, p = path.Dir(e.abs), "./"+path.Base(e.abs)
			}
			argv := make([]string, len(cmd))
			for i, a := range cmd {
				argv[i] = strings.ReplaceAll(a, "{}", p)
			}
			return f.run(dir, argv) == 0
		}), nil
	}
	return nil, fmt.Errorf("unknown predicate `%s'", name)
}

func (f *finder) run(dir string, argv []string) int {
	f.out.Flush()
	if f.env.Run == nil {
		f.env.Errorf("find", "cannot run commands here")
		return 1
	}
	sub := *f.env
	sub.Dir = dir
	return f.env.Run(f.ctx, &sub, argv)
}

func (f *finder) flushBatch(b *findBatch) {
	if len(b.paths) == 0 {
		return
	}
	argv := append(append([]string{}, b.cmd...), b.paths...)
	b.paths = nil
	if f.run(b.dir, argv) != 0 {
		f.status = 1
	}
}

func findTypeLetter(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "d"
	case m&fs.ModeSymlink != 0:
		return "l"
	case m&fs.ModeNamedPipe != 0:
		return "p"
	case m&fs.ModeSocket != 0:
		return "s"
	case m&fs.ModeCharDevice != 0:
		return "c"
	case m&fs.ModeDevice != 0:
		return "b"
	}
	return "f"
}

// printf renders find's -printf directives.
func (f *finder) printf(format string, e *findEntry) string {
	var b strings.Builder
	st := fileStat(e.fi)
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c == '\\' && i+1 < len(format) {
			i++
			switch format[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '0':
				b.WriteByte(0)
			case '\\':
				b.WriteByte('\\')
			default:
				b.WriteByte('\\')
				b.WriteByte(format[i])
			}
			continue
		}
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-0123456789.", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			b.WriteString(format[i:])
			break
		}
		width := format[i+1 : j]
		var v string
		switch format[j] {
		case '%':
			v = "%"
		case 'p':
			v = e.path
		case 'f':
			v = path.Base(e.path)
		case 'h':
			v = path.Dir(e.path)
			if !strings.Contains(e.path, "/") {
				v = "."
			}
		case 'P':
			v = strings.TrimPrefix(strings.TrimPrefix(e.path, e.start), "/")
		case 'H':
			v = e.start
		case 's':
			v = strconv.FormatInt(e.fi.Size(), 10)
		case 'k':
			v = strconv.FormatInt(blocks1K(e.fi), 10)
		case 'b':
			v = strconv.FormatInt(st.Blocks, 10)
		case 'd':
			v = strconv.Itoa(e.depth)
		case 'm':
			v = strconv.FormatUint(uint64(fileModeBits(e.fi.Mode())), 8)
		case 'M':
			v = fileModeString(e.fi.Mode())
		case 'u':
			v = fileUser(st.Uid)
		case 'g':
			v = fileUser(st.Gid)
		case 'U':
			v = strconv.FormatUint(uint64(st.Uid), 10)
		case 'G':
			v = strconv.FormatUint(uint64(st.Gid), 10)
		case 'i':
			v = strconv.FormatUint(st.Ino, 10)
		case 'n':
			v = strconv.FormatUint(uint64(st.Nlink), 10)
		case 'y':
			v = findTypeLetter(e.fi.Mode())
		case 'l':
			if e.fi.Mode()&fs.ModeSymlink != 0 {
				v, _ = f.env.FS.Readlink(e.abs)
			}
		case 't', 'a', 'c':
			v = findTime(e, st, format[j]).Format("Mon Jan _2 15:04:05.0000000000 2006")
		case 'T', 'A', 'C':
			if j+1 >= len(format) {
				v = format[i:]
				break
			}
			j++
			v = findTimeFormat(findTime(e, st, format[j-1]), format[j])
		default:
			v = format[i : j+1]
		}
		if width != "" {
			if n, err := strconv.Atoi(strings.TrimPrefix(width, "-")); err == nil {
				if strings.HasPrefix(width, "-") {
					v = fmt.Sprintf("%-*s", n, v)
				} else {
					v = fmt.Sprintf("%*s", n, v)
				}
			}
		}
		b.WriteString(v)
		i = j
	}
	return b.String()
}

func findTime(e *findEntry, st *syscall.Stat_t, which byte) time.Time {
	switch which {
	case 'a', 'A':
		return statTime(st.Atim)
	case 'c', 'C':
		return statTime(st.Ctim)
	}
	return e.fi.ModTime()
}

// findTimeFormat is the %Tk family of -printf.
func findTimeFormat(t time.Time, k byte) string {
	switch k {
	case '@':
		return fmt.Sprintf("%d.%010d", t.Unix(), t.Nanosecond()*10)
	case 'Y':
		return t.Format("2006")
	case 'm':
		return t.Format("01")
	case 'd':
		return t.Format("02")
	case 'H':
		return t.Format("15")
	case 'M':
		return t.Format("04")
	case 'S':
		return fmt.Sprintf("%02d.%010d", t.Second(), t.Nanosecond()*10)
	case 'T':
		return fmt.Sprintf("%s.%010d", t.Format("15:04:05"), t.Nanosecond()*10)
	case '+':
		return fmt.Sprintf("%s+%s.%010d", t.Format("2006-01-02"), t.Format("15:04:05"), t.Nanosecond()*10)
	case 'F':
		return t.Format("2006-01-02")
	case 'D':
		return t.Format("01/02/06")
	case 's':
		return strconv.FormatInt(t.Unix(), 10)
	case 'y':
		return t.Format("06")
	case 'b':
		return t.Format("Jan")
	case 'a':
		return t.Format("Mon")
	}
	return "%T" + string(k)
}

// globMatcher compiles a shell pattern as fnmatch(3) without FNM_PATHNAME
// or FNM_PERIOD reads it (find -name/-path, grep --include, tar): * and ?
// also match '/' and a leading dot. It uses the shell's own matcher, so ?
// is one character, not one byte, and [!…] negates. An invalid pattern
// (an unclosed '[') matches itself literally, as with fnmatch.
func globMatcher(pat string, fold bool) func(name string) bool {
	mode := pattern.EntireString | pattern.NoGlobStar | pattern.GlobLeadingDot
	if fold {
		mode |= pattern.NoGlobCase
	}
	expr, err := pattern.Regexp(pat, mode)
	if err != nil {
		expr, err = pattern.Regexp(pattern.QuoteMeta(pat, 0), mode)
	}
	re, cerr := regexp.Compile(expr)
	if err != nil || cerr != nil {
		return func(name string) bool { return name == pat }
	}
	return re.MatchString
}

// fileGlob matches name against a shell pattern once; see globMatcher.
func fileGlob(pattern, name string, fold bool) bool {
	return globMatcher(pattern, fold)(name)
}
