package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func init() {
	register("grep", func(ctx context.Context, env *Env, args []string) int { return textGrep(ctx, env, args, "") })
	register("egrep", func(ctx context.Context, env *Env, args []string) int { return textGrep(ctx, env, args, "E") })
	register("fgrep", func(ctx context.Context, env *Env, args []string) int { return textGrep(ctx, env, args, "F") })
}

var grepSpec = textSpec{
	flags:   "EFGiyvwxclLnhHoqsrRaI",
	withArg: "efABCm",
	long: map[string]string{
		"--extended-regexp": "E", "--fixed-strings": "F", "--basic-regexp": "G",
		"--ignore-case": "i", "--no-ignore-case": "--no-ignore-case", "--invert-match": "v",
		"--word-regexp": "w", "--line-regexp": "x", "--count": "c",
		"--files-with-matches": "l", "--files-without-match": "L", "--line-number": "n",
		"--no-filename": "h", "--with-filename": "H", "--only-matching": "o",
		"--quiet": "q", "--silent": "q", "--no-messages": "s", "--recursive": "r",
		"--dereference-recursive": "R", "--text": "a",
		"--regexp": "e=", "--file": "f=", "--after-context": "A=", "--before-context": "B=",
		"--context": "C=", "--max-count": "m=", "--include": "--include=",
		"--exclude": "--exclude=", "--exclude-dir": "--exclude-dir=", "--color": "--color?",
		"--colour": "--color?", "--label": "--label=", "--binary-files": "--binary-files=",
	},
}

// grepRun holds one grep invocation's settings and state.
type grepRun struct {
	ctx                     context.Context
	env                     *Env
	mem                     memGauge // the buffer, past its size for a long line
	lineRE                  textRE
	bufRE                   *regexp.Regexp // nil when back-references rule it out
	invert, word, count     bool
	listMatch, listNoMatch  bool
	number, only, quiet     bool
	noMessages, withName    bool
	textMode, skipBinary    bool
	after, before, maxCount int
	include, exclude        []string
	excludeDir              []string
	label                   string
	out                     *bufio.Writer
	matched, failed         bool
	lastPrinted             int // line number last printed in the current file, for "--"
	buf                     []byte
	anyPrinted              bool
	// dirs is the directories being searched, outermost first: with -R,
	// one met again is a loop, warned about and not entered.
	dirs []fs.FileInfo
}

// textGrep is grep. mode "E" or "F" comes from the egrep/fgrep names.
func textGrep(ctx context.Context, env *Env, args []string, mode string) int {
	// -NUM is --context=NUM.
	for i, a := range args[1:] {
		if len(a) > 1 && a[0] == '-' && a[1] >= '0' && a[1] <= '9' {
			if _, err := strconv.Atoi(a[1:]); err == nil {
				args[i+1] = "-C" + a[1:]
			}
		}
	}
	opts, ops, err := textParse(args[1:], grepSpec)
	if err != nil {
		env.Errorf("grep", "%s", strings.TrimPrefix(err.Error(), errTextUsage.Error()+": "))
		fmt.Fprintln(env.Stderr, "Usage: grep [OPTION]... PATTERNS [FILE]...")
		fmt.Fprintln(env.Stderr, "Try 'grep --help' for more information.")
		return 2
	}
	g := &grepRun{ctx: ctx, env: env, mem: memGauge{env: env}, maxCount: -1, label: "(standard input)"}
	var patterns []string
	havePattern := false
	icase, line, recursive, follow := false, false, false, false
	withName, noName := false, false
	ctxA, ctxB := -1, -1
	ctxC := 0
	for _, o := range opts {
		switch o.Name {
		case "E", "F":
			mode = o.Name
		case "G":
			mode = ""
		case "i", "y":
			icase = true
		case "--no-ignore-case":
			icase = false
		case "v":
			g.invert = true
		case "w":
			g.word = true
		case "x":
			line = true
		case "c":
			g.count = true
		case "l":
			g.listMatch = true
		case "L":
			g.listNoMatch = true
		case "n":
			g.number = true
		case "h":
			noName, withName = true, false
		case "H":
			withName, noName = true, false
		case "o":
			g.only = true
		case "q":
			g.quiet = true
		case "s":
			g.noMessages = true
		case "r":
			recursive = true
		case "R":
			recursive, follow = true, true
		case "a":
			g.textMode = true
		case "I":
			g.skipBinary = true
		case "e":
			patterns = append(patterns, strings.Split(o.Val, "\n")...)
			havePattern = true
		case "f":
			data, err := textReadAll(ctx, env, o.Val)
			if err != nil {
				textFileErr(env, "grep", o.Val, err)
				return 2
			}
			lines, _ := textSplitLines(data, '\n')
			for _, l := range lines {
				patterns = append(patterns, string(l))
			}
			havePattern = true
		case "A", "B", "C", "m":
			n, err := strconv.Atoi(o.Val)
			if err != nil || n < 0 {
				if o.Name == "m" {
					env.Errorf("grep", "invalid max count")
				} else {
					env.Errorf("grep", "%s: invalid context length argument", o.Val)
				}
				return 2
			}
			switch o.Name {
			case "A":
				ctxA = n
			case "B":
				ctxB = n
			case "C":
				ctxC = n
			case "m":
				g.maxCount = n
			}
		case "--include":
			g.include = append(g.include, o.Val)
		case "--exclude":
			g.exclude = append(g.exclude, o.Val)
		case "--exclude-dir":
			g.excludeDir = append(g.excludeDir, o.Val)
		case "--label":
			g.label = o.Val
		case "--binary-files":
			g.textMode = o.Val == "text"
			g.skipBinary = o.Val == "without-match"
		}
	}
	g.after, g.before = ctxC, ctxC
	if ctxA >= 0 {
		g.after = ctxA
	}
	if ctxB >= 0 {
		g.before = ctxB
	}
	if !havePattern {
		if len(ops) == 0 {
			fmt.Fprintln(env.Stderr, "Usage: grep [OPTION]... PATTERNS [FILE]...")
			fmt.Fprintln(env.Stderr, "Try 'grep --help' for more information.")
			return 2
		}
		patterns = strings.Split(ops[0], "\n")
		ops = ops[1:]
	}
	if err := g.compile(patterns, mode, icase, line); err != nil {
		env.Errorf("grep", "%v", err)
		return 2
	}
	if len(ops) == 0 {
		if recursive {
			// GNU omits the "./" prefix when it picked "." itself.
			g.withName = !noName
			g.out = bufio.NewWriter(env.Stdout)
			g.walk(ctx, ".", "", follow, true)
			return g.finish()
		}
		ops = []string{"-"}
	}
	g.withName = !noName && (withName || recursive || len(ops) > 1)
	g.out = bufio.NewWriter(env.Stdout)
	for _, op := range ops {
		if ctx.Err() != nil || (g.quiet && g.matched) {
			break
		}
		if op == "-" {
			g.searchReader(g.label, env.Stdin)
			continue
		}
		if recursive {
			g.walk(ctx, op, op, follow, true)
			continue
		}
		g.searchFile(op, true)
	}
	return g.finish()
}

func (g *grepRun) finish() int {
	g.out.Flush()
	switch {
	case g.failed && !(g.quiet && g.matched):
		return 2
	case g.matched:
		return 0
	}
	return 1
}

// compile builds the per-line regexp and a multi-line one used to skip
// quickly over lines that cannot match.
func (g *grepRun) compile(patterns []string, mode string, icase, line bool) error {
	alts := make([]string, 0, len(patterns))
	for _, p := range patterns {
		var s string
		var err error
		switch mode {
		case "F":
			s = regexp.QuoteMeta(p)
		case "E":
			s, err = textTranslateRE(p, true)
		default:
			s, err = textTranslateRE(p, false)
		}
		if err != nil {
			return err
		}
		alts = append(alts, "(?:"+s+")")
	}
	expr := strings.Join(alts, "|")
	if line {
		expr = "^(?:" + expr + ")$"
	}
	flags := "(?s"
	if icase {
		flags += "i"
	}
	var err error
	if g.lineRE, err = textRegexp(flags + ")" + expr); err != nil {
		return err
	}
	if _, plain := g.lineRE.(*regexp.Regexp); !plain {
		return nil
	}
	g.bufRE, err = regexp.Compile(flags + "m)" + expr)
	return err
}

// walk searches name recursively; display is how names are printed.
func (g *grepRun) walk(ctx context.Context, name, display string, follow, top bool) {
	if ctx.Err() != nil || (g.quiet && g.matched) {
		return
	}
	abs := g.env.Abs(name)
	var st fs.FileInfo
	var err error
	if follow || top {
		st, err = g.env.FS.Stat(abs)
	} else {
		st, err = g.env.FS.Lstat(abs)
	}
	if err != nil {
		if !g.noMessages {
			textFileErr(g.env, "grep", display, err)
		}
		g.failed = true
		return
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return // -r skips symlinks met while recursing
	}
	if !st.IsDir() {
		if !top || display != "" {
			base := path.Base(name)
			if !g.included(base) {
				return
			}
		}
		if !st.Mode().IsRegular() && !top {
			return
		}
		g.searchFile(display, false)
		return
	}
	if !top && textGlobAny(g.excludeDir, path.Base(name)) {
		return
	}
	for _, d := range g.dirs {
		if fileSame(d, st) {
			if !g.noMessages {
				g.out.Flush()
				g.env.Errorf("grep", "%s: warning: recursive directory loop", display)
			}
			return
		}
	}
	g.dirs = append(g.dirs, st)
	defer func() { g.dirs = g.dirs[:len(g.dirs)-1] }()
	entries, err := g.env.FS.ReadDir(abs)
	if err != nil {
		if !g.noMessages {
			textFileErr(g.env, "grep", display, err)
		}
		g.failed = true
		return
	}
	for _, e := range entries {
		childDisplay := e.Name()
		if display != "" {
			childDisplay = strings.TrimSuffix(display, "/") + "/" + e.Name()
		}
		g.walk(ctx, path.Join(name, e.Name()), childDisplay, follow, false)
	}
}

func (g *grepRun) included(base string) bool {
	if len(g.include) > 0 && !textGlobAny(g.include, base) {
		return false
	}
	return !textGlobAny(g.exclude, base)
}

func textGlobAny(globs []string, name string) bool {
	for _, pat := range globs {
		if fileGlob(pat, name, false) {
			return true
		}
	}
	return false
}

func (g *grepRun) searchFile(name string, operand bool) {
	if operand && (len(g.include) > 0 || len(g.exclude) > 0) && !g.included(path.Base(name)) {
		return
	}
	f, err := g.env.FS.Open(g.env.Abs(name))
	if err == nil {
		var st fs.FileInfo
		if st, err = f.Stat(); err == nil && st.IsDir() {
			f.Close()
			if !g.noMessages {
				g.env.Errorf("grep", "%s: Is a directory", name)
			}
			g.failed = true
			return
		}
	}
	if err != nil {
		if !g.noMessages {
			textFileErr(g.env, "grep", name, err)
		}
		g.failed = true
		return
	}
	defer f.Close()
	g.searchReader(name, f)
}

// grepChunk is how much searchReader reads at a time: big enough for the
// multi-line prefilter to pay off, small enough that "yes | grep -m1 y"
// stops early.
const grepChunk = 256 << 10

// grepFile is the state of one input while it is scanned chunk by chunk.
type grepFile struct {
	name, prefix   string
	binary, output bool
	count, lineNo  int
	pendingAfter   int
	before         [][]byte // recent non-matching lines, for -B
	maxReached     bool     // -m reached: only trailing context is left
	done           bool     // nothing more to read
}

// searchReader scans r in chunks of whole lines.
func (g *grepRun) searchReader(name string, r io.Reader) {
	f := &grepFile{name: name, output: !g.count && !g.listMatch && !g.listNoMatch && !g.quiet}
	if g.withName {
		f.prefix = name
	}
	g.lastPrinted = 0
	// One buffer serves every file of the run: -r over many small files
	// would otherwise allocate (and clear) a chunk per file.
	if g.buf == nil {
		g.buf = make([]byte, 0, grepChunk)
	}
	buf := g.buf[:0]
	defer func() { g.buf = buf[:0] }()
	first := true
	for !f.done && g.maxCount != 0 && g.ctx.Err() == nil {
		// One Read, not ReadFull: lines from a slow pipe are handled as
		// they come.
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		eof := err != nil
		if err != nil && !errors.Is(err, io.EOF) {
			if !g.noMessages {
				textFileErr(g.env, "grep", name, err)
			}
			g.failed = true
			return
		}
		if first {
			first = false
			if !g.textMode && bytes.IndexByte(buf, 0) >= 0 {
				if g.skipBinary {
					if g.listNoMatch {
						fmt.Fprintln(g.out, name)
					}
					return
				}
				f.binary = true
			}
		} else if !g.textMode && bytes.IndexByte(buf, 0) >= 0 {
			f.binary = true
		}
		// Scan up to the last complete line; the rest waits for more.
		cut := len(buf)
		if !eof {
			cut = bytes.LastIndexByte(buf, '\n') + 1
			if cut == 0 {
				buf = slices.Grow(buf, cap(buf)) // a line longer than the buffer
				if err := g.mem.set(int64(cap(buf))); err != nil {
					g.env.Errorf("grep", "%v", err)
					g.failed = true
					return
				}
				continue
			}
		}
		g.scan(f, buf[:cut])
		if eof {
			break
		}
		buf = buf[:copy(buf, buf[cut:])]
	}
	switch {
	case g.count:
		count := f.count
		if g.listMatch && count > 0 {
			count = 1
		}
		if f.prefix != "" {
			fmt.Fprintf(g.out, "%s:%d\n", f.prefix, count)
		} else {
			fmt.Fprintf(g.out, "%d\n", count)
		}
	case g.quiet:
	case g.listMatch && f.count > 0:
		fmt.Fprintln(g.out, name)
	case g.listNoMatch && f.count == 0:
		fmt.Fprintln(g.out, name)
	}
}

// scan processes whole lines of data (the last one may lack its newline
// only at the end of the input).
func (g *grepRun) scan(f *grepFile, data []byte) {
	nextCand := -1 // start of the next line that may match (non-inverted)
	for pos := 0; pos < len(data) && !f.done; {
		if !g.invert && g.bufRE != nil && !f.maxReached && f.pendingAfter == 0 {
			if nextCand < pos {
				nextCand = len(data)
				if loc := g.bufRE.FindIndex(data[pos:]); loc != nil {
					nextCand = pos + bytes.LastIndexByte(data[pos:pos+loc[0]], '\n') + 1
				}
			}
			if nextCand > pos {
				// Jump over lines that cannot match, counting them and
				// keeping the last few for -B.
				g.skip(f, data[pos:nextCand])
				pos = nextCand
				continue
			}
		}
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end < 0 {
			end = len(data)
		} else {
			end += pos
			next = end + 1
		}
		f.lineNo++
		line := data[pos:end]
		if f.maxReached {
			// GNU still prints the trailing context after the last match.
			if f.output && f.pendingAfter > 0 {
				g.printLine(f.prefix, f.lineNo, line, '-')
				f.pendingAfter--
			}
			f.done = !f.output || f.pendingAfter == 0
			pos = next
			continue
		}
		var isMatch bool
		if g.invert || g.bufRE == nil || nextCand != pos {
			// Inverted, without prefilter, or inside trailing context.
			isMatch = g.lineMatches(line) != g.invert
		} else {
			isMatch = g.lineMatches(line)
			nextCand = -1
		}
		switch {
		case isMatch:
			f.count++
			g.matched = true
			if g.quiet || g.listMatch && !g.count {
				f.done = true
				break
			}
			if f.output && f.binary {
				g.out.Flush()
				fmt.Fprintf(g.env.Stderr, "grep: %s: binary file matches\n", f.name)
				f.output = false
			}
			if f.output {
				first := f.lineNo - len(f.before)
				for k, l := range f.before {
					g.printLine(f.prefix, first+k, l, '-')
				}
				f.before = f.before[:0]
				if g.only {
					g.printOnly(f.prefix, f.lineNo, line)
				} else {
					g.printLine(f.prefix, f.lineNo, line, ':')
				}
				f.pendingAfter = g.after
			}
			if g.maxCount >= 0 && f.count >= g.maxCount {
				f.maxReached = true
				f.done = !f.output || f.pendingAfter == 0
			}
		case f.output && f.pendingAfter > 0:
			g.printLine(f.prefix, f.lineNo, line, '-')
			f.pendingAfter--
		case f.output && g.before > 0:
			if len(f.before) == g.before {
				f.before = f.before[1:]
			}
			f.before = append(f.before, append([]byte(nil), line...))
		}
		pos = next
	}
}

// skip accounts for whole lines that hold no match.
func (g *grepRun) skip(f *grepFile, region []byte) {
	if !g.number && g.before == 0 && g.after == 0 {
		return // line numbers are never shown: no need to count
	}
	n := bytes.Count(region, []byte{'\n'})
	if len(region) > 0 && region[len(region)-1] != '\n' {
		n++
	}
	f.lineNo += n
	if !f.output || g.before == 0 {
		return
	}
	// Only the last g.before lines can be context for a later match.
	start := len(region)
	for k := 0; k < g.before && start > 0; k++ {
		start = bytes.LastIndexByte(region[:start-1], '\n') + 1
	}
	lines, _ := textSplitLines(region[start:], '\n')
	for _, l := range lines {
		if len(f.before) == g.before {
			f.before = f.before[1:]
		}
		f.before = append(f.before, append([]byte(nil), l...))
	}
}

func (g *grepRun) lineMatches(line []byte) bool {
	if !g.word {
		return g.lineRE.Match(line)
	}
	return g.wordMatch(line, 0) != nil
}

// wordMatch finds the first match at or after from that stands alone as
// a word (GNU -w: no word character just before or after it).
func (g *grepRun) wordMatch(line []byte, from int) []int {
	for from <= len(line) {
		loc := g.lineRE.FindIndex(line[from:])
		if loc == nil {
			return nil
		}
		s, e := from+loc[0], from+loc[1]
		if (s == 0 || !isTextAlnum(line[s-1])) && (e == len(line) || !isTextAlnum(line[e])) {
			return []int{s, e}
		}
		from = s + 1
	}
	return nil
}

func (g *grepRun) printLine(prefix string, n int, line []byte, sep byte) {
	if (g.before > 0 || g.after > 0) && g.anyPrinted && n > g.lastPrinted+1 {
		g.out.WriteString("--\n")
	}
	g.writePrefix(prefix, n, sep)
	g.out.Write(line)
	g.out.WriteByte('\n')
	g.lastPrinted = n
	g.anyPrinted = true
}

func (g *grepRun) writePrefix(prefix string, n int, sep byte) {
	if prefix != "" {
		g.out.WriteString(prefix)
		g.out.WriteByte(sep)
	}
	if g.number {
		g.out.WriteString(strconv.Itoa(n))
		g.out.WriteByte(sep)
	}
}

// printOnly prints each non-empty match of the line on its own line.
func (g *grepRun) printOnly(prefix string, n int, line []byte) {
	if g.invert {
		return
	}
	if (g.before > 0 || g.after > 0) && g.anyPrinted && n > g.lastPrinted+1 {
		g.out.WriteString("--\n")
	}
	for from := 0; from <= len(line); {
		var loc []int
		if g.word {
			loc = g.wordMatch(line, from)
		} else if l := g.lineRE.FindIndex(line[from:]); l != nil {
			loc = []int{from + l[0], from + l[1]}
		}
		if loc == nil {
			break
		}
		if loc[1] == loc[0] {
			from = loc[1] + 1
			continue
		}
		g.writePrefix(prefix, n, ':')
		g.out.Write(line[loc[0]:loc[1]])
		g.out.WriteByte('\n')
		from = loc[1]
	}
	g.lastPrinted = n
	g.anyPrinted = true
}
