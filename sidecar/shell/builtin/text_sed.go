package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func init() { register("sed", textSed) }

// Address kinds.
const (
	sedLine = iota + 1
	sedLast
	sedRE
	sedStep  // first~step
	sedPlus  // addr1,+N
	sedTilde // addr1,~N
)

type sedAddr struct {
	kind       int
	n, step    int
	re         textRE // nil for sedRE means "the last regex used"
	zeroAnchor bool   // 0,/re/: the end may match on line 1
}

type sedCmd struct {
	a1, a2 *sedAddr
	neg    bool
	name   byte
	// s
	re     textRE
	repl   string
	global bool
	nth    int
	print  int
	wfile  string
	// y
	ymap map[rune]rune
	// a i c r w b t T : q Q l
	text     string
	label    string
	jump     int // branch target or, for '{', the index of its '}'
	exitCode int
	// range state
	active  bool
	endLine int
}

// sedRun is one sed invocation.
type sedRun struct {
	ctx      context.Context
	env      *Env
	mem      memGauge // the pattern and hold spaces
	stdout   io.Writer
	err      error // the memory budget stopped the script
	cmds     []*sedCmd
	quiet    bool
	ere      bool
	lastRE   textRE
	wfiles   map[string]io.Writer
	out      *sedOut
	hold     string
	lineNo   int
	in       *sedReader
	appendQ  []string
	quit     bool
	exitCode int
	fileName string
}

type sedInput struct {
	text string
	nl   bool // the input line ended in a newline
}

// sedOut adds the newline a last line lacked as soon as more follows, as
// GNU sed does.
type sedOut struct {
	w       io.Writer
	missing bool
}

func (o *sedOut) write(s string, nl bool) {
	if o.missing {
		io.WriteString(o.w, "\n")
	}
	io.WriteString(o.w, s)
	o.missing = !nl
	if nl {
		io.WriteString(o.w, "\n")
	}
}

var (
	errSedSyntax = errors.New("syntax")
	errSedLabel  = errors.New("can't find label for jump to")
)

func textSed(ctx context.Context, env *Env, args []string) int {
	// -i takes an optional suffix glued to it ("-i.bak", "-ni"), which the
	// generic parser cannot express: take it out first.
	inPlace, suffix := false, ""
	var rest []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		k := strings.IndexByte(a, 'i')
		if len(a) >= 2 && a[0] == '-' && a[1] != '-' && k > 0 && !strings.ContainsAny(a[:k], "ef") {
			inPlace, suffix = true, a[k+1:]
			if k > 1 {
				rest = append(rest, a[:k])
			}
			continue
		}
		rest = append(rest, a)
		if a == "-e" || a == "-f" {
			// The next argument is a script or file, even if it looks like -i.
			if i+1 < len(args) {
				i++
				rest = append(rest, args[i])
			}
		}
	}
	opts, ops, err := textParse(rest, textSpec{flags: "nErsu", withArg: "ef",
		long: map[string]string{"--quiet": "n", "--silent": "n", "--expression": "e=", "--file": "f=",
			"--regexp-extended": "E", "--separate": "s", "--in-place": "--in-place?", "--posix": "--posix",
			"--debug": "--debug", "--unbuffered": "u"}})
	if err != nil {
		return textUsage(env, "sed", err, 1)
	}
	s := &sedRun{ctx: ctx, env: env, mem: memGauge{env: env}, wfiles: map[string]io.Writer{}}
	var script []string
	haveScript, separate := false, false
	// Output goes out in blocks, not two writes a line, unless -u.
	buffered := bufio.NewWriterSize(env.Stdout, 64<<10)
	defer buffered.Flush()
	var stdout io.Writer = buffered
	for _, o := range opts {
		switch o.Name {
		case "u":
			stdout = env.Stdout
		case "n":
			s.quiet = true
		case "E", "r":
			s.ere = true
		case "s":
			separate = true
		case "e":
			script = append(script, o.Val)
			haveScript = true
		case "f":
			b, err := textReadAll(ctx, env, o.Val)
			if err != nil {
				env.Errorf("sed", "couldn't open file %s: %s", o.Val, textStrerror(err))
				return 1
			}
			script = append(script, strings.TrimSuffix(string(b), "\n"))
			haveScript = true
		case "--in-place":
			inPlace, suffix = true, o.Val
		}
	}
	if !haveScript {
		if len(ops) == 0 {
			fmt.Fprintln(env.Stderr, "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...")
			return 1
		}
		script = []string{ops[0]}
		ops = ops[1:]
	}
	s.stdout = stdout
	if err := s.parse(strings.Join(script, "\n")); err != nil {
		if errors.Is(err, errSedLabel) {
			env.Errorf("sed", "%v", err)
			return 4 // GNU sed reports this one as a panic
		}
		env.Errorf("sed", "-e expression #1, %s", strings.TrimPrefix(err.Error(), errSedSyntax.Error()+": "))
		return 1
	}
	if inPlace && len(ops) == 0 {
		env.Errorf("sed", "no input files")
		return 1
	}
	if len(ops) == 0 {
		ops = []string{"-"}
	}
	status := 0
	if inPlace || separate {
		for _, name := range ops {
			if s.quit || ctx.Err() != nil {
				break
			}
			var buf bytes.Buffer
			if inPlace {
				s.out = &sedOut{w: &chargedWriter{env: env, w: &buf}}
			} else {
				s.out = &sedOut{w: s.stdout}
			}
			s.lineNo = 0
			s.fileName = name
			s.in = &sedReader{env: env, names: []string{name}}
			s.runLines(ctx)
			if s.in.failed {
				status = 2
				continue
			}
			if inPlace {
				if err := s.writeBack(name, suffix, buf.Bytes()); err != nil {
					env.Errorf("sed", "couldn't edit %s: %s", name, textStrerror(err))
					status = 4
				}
			}
		}
	} else {
		s.fileName = "-"
		if len(ops) == 1 {
			s.fileName = ops[0]
		}
		s.out = &sedOut{w: s.stdout}
		s.in = &sedReader{env: env, names: ops}
		s.runLines(ctx)
		if s.in.failed {
			status = 2
		}
	}
	for _, w := range s.wfiles {
		if c, ok := w.(io.Closer); ok {
			c.Close()
		}
	}
	if s.err != nil {
		env.Errorf("sed", "%v", s.err)
		return 4
	}
	if s.quit && s.exitCode != 0 {
		return s.exitCode
	}
	return status
}

func (s *sedRun) writeBack(name, suffix string, data []byte) error {
	abs := s.env.Abs(name)
	st, err := s.env.FS.Stat(abs)
	if err != nil {
		return err
	}
	if suffix != "" {
		backup := suffix
		if strings.Contains(suffix, "*") {
			backup = strings.ReplaceAll(suffix, "*", path.Base(abs))
			if !strings.Contains(backup, "/") {
				backup = path.Join(path.Dir(abs), backup)
			}
		} else {
			backup = abs + suffix
		}
		if err := s.env.FS.Rename(abs, s.env.Abs(backup)); err != nil {
			return err
		}
	}
	if lst, err := s.env.FS.Lstat(abs); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		// GNU sed writes a new file in place of the link; the target
		// keeps its content.
		if err := s.env.FS.Remove(abs); err != nil {
			return err
		}
	}
	f, err := s.env.FS.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sedReader streams the lines of the input files one line ahead, so "$"
// is known and "yes | sed 3q" ends.
type sedReader struct {
	env    *Env
	names  []string
	cur    *bufio.Reader
	closer io.Closer
	ahead  *sedInput
	failed bool // some file could not be read
}

func (r *sedReader) fill() {
	for r.ahead == nil {
		if r.cur == nil {
			if len(r.names) == 0 {
				return
			}
			name := r.names[0]
			r.names = r.names[1:]
			f, err := textOpen(r.env, name)
			if err != nil {
				r.env.Errorf("sed", "can't read %s: %s", name, textStrerror(err))
				r.failed = true
				continue
			}
			r.cur, r.closer = bufio.NewReader(f), f
		}
		line, err := r.cur.ReadString('\n')
		if line != "" {
			r.ahead = &sedInput{text: strings.TrimSuffix(line, "\n"), nl: strings.HasSuffix(line, "\n")}
		}
		if err != nil {
			r.closer.Close()
			r.cur = nil
		}
	}
}

// next reads the next input line.
func (s *sedRun) next() (sedInput, bool) {
	s.in.fill()
	if s.in.ahead == nil {
		return sedInput{}, false
	}
	l := *s.in.ahead
	s.in.ahead = nil
	s.lineNo++
	return l, true
}

func (s *sedRun) isLast() bool {
	s.in.fill()
	return s.in.ahead == nil
}

func (s *sedRun) flushAppends() {
	for _, a := range s.appendQ {
		if strings.HasPrefix(a, "\x00r") {
			if b, err := textReadAll(s.ctx, s.env, a[2:]); err == nil && len(b) > 0 {
				lines, nl := textSplitLines(b, '\n')
				for i, l := range lines {
					s.out.write(string(l), i < len(lines)-1 || nl)
				}
			}
			continue
		}
		s.out.write(a, true)
	}
	s.appendQ = s.appendQ[:0]
}

// runLines runs the script over the loaded lines.
func (s *sedRun) runLines(ctx context.Context) {
	for !s.quit && ctx.Err() == nil {
		l, ok := s.next()
		if !ok {
			return
		}
		ps, nl := l.text, l.nl
		s.cycle(&ps, &nl)
	}
}

// cycle runs the script on one pattern space, again while D restarts it.
func (s *sedRun) cycle(ps *string, nl *bool) {
	tflag := false
	for {
		restart := false
		autoprint := !s.quiet
		pc := 0
	loop:
		for ; pc < len(s.cmds); pc++ {
			c := s.cmds[pc]
			if !s.selected(c, *ps) {
				if c.name == '{' {
					pc = c.jump
				}
				continue
			}
			switch c.name {
			case '{', '}', ':', '#':
			case '=':
				s.out.write(strconv.Itoa(s.lineNo), true)
			case 'a':
				s.appendQ = append(s.appendQ, c.text)
			case 'i':
				s.out.write(c.text, true)
			case 'c':
				// In a range, the text replaces the whole range: print at its end.
				if c.a2 == nil || !c.active {
					s.out.write(c.text, true)
				}
				autoprint = false
				break loop
			case 'd':
				autoprint = false
				break loop
			case 'D':
				i := strings.IndexByte(*ps, '\n')
				if i < 0 {
					autoprint = false
					break loop
				}
				*ps = (*ps)[i+1:]
				autoprint = false
				restart = true
				break loop
			case 'p':
				s.out.write(*ps, true)
			case 'P':
				i := strings.IndexByte(*ps, '\n')
				if i < 0 {
					i = len(*ps)
				}
				s.out.write((*ps)[:i], true)
			case 'n':
				if s.isLast() {
					// GNU: no next line ends the script without running the rest.
					break loop
				}
				if !s.quiet {
					s.out.write(*ps, *nl)
				}
				s.flushAppends()
				l, _ := s.next()
				*ps, *nl = l.text, l.nl
			case 'N':
				if s.isLast() {
					break loop
				}
				s.flushAppends()
				l, _ := s.next()
				*ps += "\n" + l.text
				*nl = l.nl
			case 'g':
				*ps = s.hold
			case 'G':
				*ps += "\n" + s.hold
			case 'h':
				s.hold = *ps
			case 'H':
				s.hold += "\n" + *ps
			case 'x':
				*ps, s.hold = s.hold, *ps
			case 'z':
				*ps = ""
			case 'l':
				s.out.write(textSedEscape(*ps), true)
			case 'F':
				s.out.write(s.fileName, true)
			case 'q':
				s.exitCode, s.quit = c.exitCode, true
				break loop
			case 'Q':
				s.exitCode, s.quit = c.exitCode, true
				s.appendQ = s.appendQ[:0]
				return
			case 'b':
				pc = c.jump - 1
			case 't':
				if tflag {
					tflag = false
					pc = c.jump - 1
				}
			case 'T':
				if !tflag {
					pc = c.jump - 1
				} else {
					tflag = false
				}
			case 'r':
				s.appendQ = append(s.appendQ, "\x00r"+c.text)
			case 'w':
				s.writeFile(c.text, *ps)
			case 'y':
				*ps = strings.Map(func(r rune) rune {
					if m, ok := c.ymap[r]; ok {
						return m
					}
					return r
				}, *ps)
			case 's':
				if s.substitute(c, ps) {
					tflag = true
				}
			}
			// A branch can loop forever and s, G, H and N can grow the
			// spaces on every turn: both end with the exec.
			if err := s.mem.set(int64(len(*ps) + len(s.hold))); err != nil {
				s.err, s.quit = err, true
				return
			}
			if s.ctx.Err() != nil {
				s.quit = true
				return
			}
		}
		if autoprint {
			s.out.write(*ps, *nl)
		}
		s.flushAppends()
		if !restart || s.quit {
			return
		}
		// D with text left: start over without reading, unless it is empty.
		if *ps == "" {
			return
		}
	}
}

func (s *sedRun) writeFile(name, text string) {
	w, ok := s.wfiles[name]
	if !ok {
		return
	}
	io.WriteString(w, text+"\n")
}

func (s *sedRun) substitute(c *sedCmd, ps *string) bool {
	re := c.re
	if re == nil {
		re = s.lastRE
	} else {
		s.lastRE = re
	}
	if re == nil {
		return false
	}
	// Without g, matches past the nth are not needed: finding them all
	// made s/y/z/ on long lines many times slower.
	limit := -1
	if !c.global {
		limit = max(c.nth, 1)
	}
	matches := re.FindAllStringSubmatchIndex(*ps, limit)
	if len(matches) == 0 {
		return false
	}
	var b strings.Builder
	last, done := 0, false
	for i, m := range matches {
		if i+1 < c.nth || (done && !c.global) {
			continue
		}
		b.WriteString((*ps)[last:m[0]])
		b.WriteString(textSedExpand(c.repl, *ps, m))
		last = m[1]
		done = true
	}
	if !done {
		return false
	}
	b.WriteString((*ps)[last:])
	*ps = b.String()
	for range c.print {
		s.out.write(*ps, true)
	}
	if c.wfile != "" {
		s.writeFile(c.wfile, *ps)
	}
	return true
}

// textSedExpand builds a replacement: & and \1..\9, \n, and GNU's case
// conversions \U \L \u \l \E.
func textSedExpand(repl, src string, m []int) string {
	var b strings.Builder
	caseMode := byte(0) // 'U' or 'L'
	oneShot := byte(0)  // 'u' or 'l'
	emit := func(t string) {
		for _, r := range t {
			switch {
			case oneShot == 'u':
				r = unicode.ToUpper(r)
				oneShot = 0
			case oneShot == 'l':
				r = unicode.ToLower(r)
				oneShot = 0
			case caseMode == 'U':
				r = unicode.ToUpper(r)
			case caseMode == 'L':
				r = unicode.ToLower(r)
			}
			b.WriteRune(r)
		}
	}
	group := func(k int) string {
		if 2*k+1 < len(m) && m[2*k] >= 0 {
			return src[m[2*k]:m[2*k+1]]
		}
		return ""
	}
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch {
		case c == '&':
			emit(group(0))
		case c == '\\' && i+1 < len(repl):
			i++
			d := repl[i]
			switch {
			case d >= '0' && d <= '9':
				emit(group(int(d - '0')))
			case d == 'n':
				emit("\n")
			case d == 't':
				emit("\t")
			case d == 'U' || d == 'L':
				caseMode, oneShot = d, 0
			case d == 'E':
				caseMode, oneShot = 0, 0
			case d == 'u' || d == 'l':
				oneShot = d
			default:
				emit(string(d))
			}
		default:
			_, size := utf8.DecodeRuneInString(repl[i:])
			emit(repl[i : i+size])
			i += size - 1
		}
	}
	return b.String()
}

// textSedEscape renders the pattern space for "l": C escapes, octal for
// other unprintables, lines wrapped at 70 columns, "$" at the end.
func textSedEscape(ps string) string {
	var b strings.Builder
	col := 0
	for i := 0; i < len(ps); i++ {
		c := ps[i]
		var piece string
		switch c {
		case '\\':
			piece = `\\`
		case '\a':
			piece = `\a`
		case '\b':
			piece = `\b`
		case '\f':
			piece = `\f`
		case '\n':
			piece = `\n`
		case '\r':
			piece = `\r`
		case '\t':
			piece = `\t`
		case '\v':
			piece = `\v`
		default:
			if c < 32 || c >= 127 {
				piece = fmt.Sprintf("\\%03o", c)
			} else {
				piece = string(c)
			}
		}
		if col+len(piece) > 69 {
			b.WriteString("\\\n")
			col = 0
		}
		b.WriteString(piece)
		col += len(piece)
	}
	b.WriteString("$")
	return b.String()
}

// selected reports whether c's address matches the current line,
// advancing its range state.
func (s *sedRun) selected(c *sedCmd, ps string) bool {
	return s.matchRange(c, ps) != c.neg
}

func (s *sedRun) matchOne(a *sedAddr, ps string) bool {
	switch a.kind {
	case sedLine:
		return s.lineNo == a.n
	case sedLast:
		return s.isLast()
	case sedStep:
		if a.step <= 0 {
			return s.lineNo == a.n
		}
		return s.lineNo >= a.n && (s.lineNo-a.n)%a.step == 0
	case sedRE:
		re := a.re
		if re == nil {
			re = s.lastRE
		} else {
			s.lastRE = re
		}
		return re != nil && re.MatchString(ps)
	}
	return false
}

func (s *sedRun) matchRange(c *sedCmd, ps string) bool {
	if c.a1 == nil {
		return true
	}
	if c.a2 == nil {
		return s.matchOne(c.a1, ps)
	}
	if c.active {
		switch c.a2.kind {
		case sedLine:
			if s.lineNo >= c.a2.n {
				c.active = false
			}
		case sedPlus:
			if s.lineNo >= c.endLine {
				c.active = false
			}
		case sedTilde:
			if c.a2.n <= 0 || s.lineNo%c.a2.n == 0 {
				c.active = false
			}
		default:
			if s.matchOne(c.a2, ps) {
				c.active = false
			}
		}
		return true
	}
	start := s.matchOne(c.a1, ps)
	if c.a1.kind == sedLine && c.a1.n == 0 {
		start = s.lineNo == 1
	}
	if !start {
		return false
	}
	switch c.a2.kind {
	case sedLine:
		c.active = c.a2.n > s.lineNo
	case sedPlus:
		c.endLine = s.lineNo + c.a2.n
		c.active = c.a2.n > 0
	case sedTilde:
		c.active = c.a2.n > 0 && s.lineNo%c.a2.n != 0
	case sedLast:
		c.active = !s.isLast()
	default:
		c.active = !(c.a2.zeroAnchor && s.matchOne(c.a2, ps))
	}
	return true
}

// sedParser reads a script.
type sedParser struct {
	src string
	pos int
	ere bool
}

func (p *sedParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: char %d: %s", errSedSyntax, p.pos, fmt.Sprintf(format, args...))
}

func (p *sedParser) eof() bool { return p.pos >= len(p.src) }
func (p *sedParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.src[p.pos]
}

func (p *sedParser) skipSpace() {
	for !p.eof() && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *sedParser) number() (int, bool) {
	start := p.pos
	for !p.eof() && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	if start == p.pos {
		return 0, false
	}
	n, _ := strconv.Atoi(p.src[start:p.pos])
	return n, true
}

// delimited reads up to the unescaped delimiter; "\delim" becomes delim
// and "\n" stays an escape for the regex translator.
func (p *sedParser) delimited(delim byte, isRegex bool) (string, error) {
	var b strings.Builder
	for !p.eof() {
		c := p.src[p.pos]
		p.pos++
		switch {
		case c == delim:
			return b.String(), nil
		case c == '\\' && !p.eof():
			d := p.src[p.pos]
			p.pos++
			switch {
			case d == delim:
				b.WriteByte(d)
			case isRegex && d == 't':
				// GNU sed turns \t and \n into the characters before
				// compiling, so they work inside brackets too.
				b.WriteByte('\t')
			case isRegex && d == 'n':
				b.WriteByte('\n')
			case d == '\n':
				if isRegex {
					b.WriteString(`\n`)
				} else {
					b.WriteString("\\\n")
				}
			default:
				b.WriteByte('\\')
				b.WriteByte(d)
			}
		case c == '\n' && isRegex:
			return "", p.errorf("unterminated address regex")
		case c == '[' && isRegex:
			// A bracket expression may hold the delimiter unescaped.
			b.WriteByte(c)
			j := p.pos
			if j < len(p.src) && p.src[j] == '^' {
				j++
			}
			if j < len(p.src) && p.src[j] == ']' {
				j++
			}
			for j < len(p.src) && p.src[j] != ']' && p.src[j] != '\n' {
				if p.src[j] == '[' && j+1 < len(p.src) && strings.IndexByte(":.=", p.src[j+1]) >= 0 {
					if k := strings.Index(p.src[j+2:], string(p.src[j+1])+"]"); k >= 0 {
						j += 2 + k + 2
						continue
					}
				}
				j++
			}
			if j < len(p.src) && p.src[j] == ']' {
				b.WriteString(sedBracketEscapes.Replace(p.src[p.pos : j+1]))
				p.pos = j + 1
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", p.errorf("unterminated `s' command")
}

// sedBracketEscapes are the escapes GNU sed expands inside brackets too.
var sedBracketEscapes = strings.NewReplacer(`\t`, "\t", `\n`, "\n")

func (p *sedParser) regex(src string, icase, multiline bool) (textRE, error) {
	if src == "" {
		return nil, nil // the last regex used
	}
	tr, err := textTranslateRE(src, p.ere)
	if err != nil {
		return nil, p.errorf("%v", err)
	}
	flags := "(?s"
	if icase {
		flags += "i"
	}
	if multiline {
		flags += "m"
	}
	re, err := textRegexp(flags + ")" + tr)
	if err != nil {
		return nil, p.errorf("%v", err)
	}
	return re, nil
}

func (p *sedParser) address() (*sedAddr, error) {
	c := p.peek()
	switch {
	case c >= '0' && c <= '9':
		n, _ := p.number()
		if p.peek() == '~' {
			p.pos++
			step, _ := p.number()
			return &sedAddr{kind: sedStep, n: n, step: step}, nil
		}
		return &sedAddr{kind: sedLine, n: n}, nil
	case c == '$':
		p.pos++
		return &sedAddr{kind: sedLast}, nil
	case c == '/' || c == '\\':
		p.pos++
		delim := byte('/')
		if c == '\\' {
			delim = p.peek()
			p.pos++
		}
		src, err := p.delimited(delim, true)
		if err != nil {
			return nil, err
		}
		icase, multi := false, false
		for p.peek() == 'I' || p.peek() == 'M' {
			if p.peek() == 'I' {
				icase = true
			} else {
				multi = true
			}
			p.pos++
		}
		re, err := p.regex(src, icase, multi)
		if err != nil {
			return nil, err
		}
		return &sedAddr{kind: sedRE, re: re}, nil
	}
	return nil, nil
}

// text reads the argument of a, i, c: "a text", "a\" newline "text", with
// backslash-newline continuing it.
func (p *sedParser) text() string {
	p.skipSpace()
	if strings.HasPrefix(p.src[p.pos:], "\\\n") {
		p.pos += 2
	} else if p.peek() == '\\' {
		p.pos++
	}
	var b strings.Builder
	for !p.eof() && p.src[p.pos] != '\n' {
		c := p.src[p.pos]
		p.pos++
		if c == '\\' && !p.eof() {
			d := p.src[p.pos]
			p.pos++
			switch d {
			case '\n', 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(d)
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// word reads a label or file name: up to a newline or ';' (labels) and
// trailing spaces dropped.
func (p *sedParser) word(semicolon bool) string {
	p.skipSpace()
	start := p.pos
	for !p.eof() && p.src[p.pos] != '\n' && !(semicolon && p.src[p.pos] == ';') {
		p.pos++
	}
	return strings.TrimRight(p.src[start:p.pos], " \t")
}

func (s *sedRun) parse(script string) error {
	p := &sedParser{src: script, ere: s.ere}
	var blocks []int
	labels := map[string]int{}
	for {
		for !p.eof() && strings.IndexByte(" \t\n;", p.peek()) >= 0 {
			p.pos++
		}
		if p.eof() {
			break
		}
		if p.peek() == '#' {
			for !p.eof() && p.peek() != '\n' {
				p.pos++
			}
			continue
		}
		c := &sedCmd{}
		var err error
		if c.a1, err = p.address(); err != nil {
			return err
		}
		if c.a1 != nil {
			p.skipSpace() // GNU takes "2 , 3p"
		}
		if c.a1 != nil && p.peek() == ',' {
			p.pos++
			p.skipSpace()
			switch p.peek() {
			case '+', '~':
				kind := sedPlus
				if p.peek() == '~' {
					kind = sedTilde
				}
				p.pos++
				n, _ := p.number()
				c.a2 = &sedAddr{kind: kind, n: n}
			default:
				if c.a2, err = p.address(); err != nil {
					return err
				}
				if c.a2 == nil {
					return p.errorf("unexpected `,'")
				}
				if c.a1.kind == sedLine && c.a1.n == 0 {
					if c.a2.kind != sedRE {
						return p.errorf("invalid usage of line address 0")
					}
					c.a2.zeroAnchor = true
				}
			}
		} else if c.a1 != nil && c.a1.kind == sedLine && c.a1.n == 0 {
			return p.errorf("invalid usage of line address 0")
		}
		p.skipSpace()
		for p.peek() == '!' {
			c.neg = true
			p.pos++
			p.skipSpace()
		}
		if p.eof() {
			return p.errorf("missing command")
		}
		c.name = p.src[p.pos]
		p.pos++
		switch c.name {
		case '{':
			blocks = append(blocks, len(s.cmds))
		case '}':
			if len(blocks) == 0 || c.a1 != nil {
				return p.errorf("unexpected `}'")
			}
			s.cmds[blocks[len(blocks)-1]].jump = len(s.cmds)
			blocks = blocks[:len(blocks)-1]
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'a', 'i', 'c':
			c.text = p.text()
		case ':':
			if c.a1 != nil {
				return p.errorf(": doesn't want any addresses")
			}
			c.label = p.word(true)
			if c.label == "" {
				return p.errorf("\":\" lacks a label")
			}
			labels[c.label] = len(s.cmds)
		case 'b', 't', 'T':
			c.label = p.word(true)
		case 'r', 'w':
			c.text = p.word(false)
			if c.name == 'w' {
				if err := s.openW(c.text); err != nil {
					return err
				}
			}
		case 'q', 'Q':
			p.skipSpace()
			c.exitCode, _ = p.number()
		case 's':
			if err := s.parseS(p, c); err != nil {
				return err
			}
		case 'y':
			if err := parseY(p, c); err != nil {
				return err
			}
		default:
			return p.errorf("unknown command: `%c'", c.name)
		}
		s.cmds = append(s.cmds, c)
		// Only a separator, comment or "}" may follow a command.
		p.skipSpace()
		if c.name != '{' && !p.eof() && strings.IndexByte(";\n}#", p.peek()) < 0 {
			return p.errorf("extra characters after command")
		}
	}
	if len(blocks) > 0 {
		return p.errorf("unmatched `{'")
	}
	for _, c := range s.cmds {
		if c.name == 'b' || c.name == 't' || c.name == 'T' {
			if c.label == "" {
				c.jump = len(s.cmds)
				continue
			}
			target, ok := labels[c.label]
			if !ok {
				return fmt.Errorf("%w `%s'", errSedLabel, c.label)
			}
			c.jump = target
		}
	}
	return nil
}

func (s *sedRun) openW(name string) error {
	if _, ok := s.wfiles[name]; ok {
		return nil
	}
	switch name {
	case "/dev/stdout":
		s.wfiles[name] = s.stdout // in order with the rest of the output
		return nil
	case "/dev/stderr":
		s.wfiles[name] = s.env.Stderr
		return nil
	}
	f, err := s.env.FS.OpenFile(s.env.Abs(name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, textCreatePerm)
	if err != nil {
		return fmt.Errorf("couldn't open file %s: %s", name, textStrerror(err))
	}
	s.wfiles[name] = f
	return nil
}

func (s *sedRun) parseS(p *sedParser, c *sedCmd) error {
	if p.eof() {
		return p.errorf("unterminated `s' command")
	}
	delim := p.src[p.pos]
	p.pos++
	reSrc, err := p.delimited(delim, true)
	if err != nil {
		return err
	}
	repl, err := p.delimited(delim, false)
	if err != nil {
		return err
	}
	// An escaped newline in the replacement is a newline.
	c.repl = strings.ReplaceAll(repl, "\\\n", "\n")
	icase, multi := false, false
	for !p.eof() {
		f := p.src[p.pos]
		switch {
		case f == 'g':
			c.global = true
		case f == 'p':
			c.print++
		case f == 'i' || f == 'I':
			icase = true
		case f == 'm' || f == 'M':
			multi = true
		case f == 'e':
			return p.errorf("the e flag is not supported")
		case f >= '0' && f <= '9':
			c.nth, _ = p.number()
			if c.nth == 0 {
				return p.errorf("number option to `s' command may not be zero")
			}
			continue
		case f == 'w':
			p.pos++
			c.wfile = p.word(false)
			if err := s.openW(c.wfile); err != nil {
				return err
			}
			continue
		default:
			goto done
		}
		p.pos++
	}
done:
	if c.nth == 0 {
		c.nth = 1
	}
	c.re, err = p.regex(reSrc, icase, multi)
	return err
}

func parseY(p *sedParser, c *sedCmd) error {
	if p.eof() {
		return p.errorf("unterminated `y' command")
	}
	delim := p.src[p.pos]
	p.pos++
	from, err := p.delimited(delim, false)
	if err != nil {
		return err
	}
	to, err := p.delimited(delim, false)
	if err != nil {
		return err
	}
	unescape := func(s string) []rune {
		s = strings.NewReplacer(`\n`, "\n", `\\`, `\`, `\t`, "\t").Replace(s)
		return []rune(s)
	}
	f, t := unescape(from), unescape(to)
	if len(f) != len(t) {
		return p.errorf("strings for `y' command are different lengths")
	}
	c.ymap = make(map[rune]rune, len(f))
	for i, r := range f {
		c.ymap[r] = t[i]
	}
	return nil
}
