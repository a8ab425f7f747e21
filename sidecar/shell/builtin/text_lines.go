package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

func init() {
	register("head", textHead)
	register("tail", textTail)
	register("wc", textWc)
	register("tac", textTac)
	register("rev", textRev)
	register("nl", textNl)
	register("fold", textFold)
	register("tee", textTee)
}

// textObsoleteCount turns "-5" into "-n5", the historical form head and
// tail still accept.
func textObsoleteCount(args []string) []string {
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		a := out[i]
		switch {
		case a == "--":
			return out
		case a == "-n" || a == "-c" || a == "--lines" || a == "--bytes":
			i++ // its value may be negative: "-n -5"
		case len(a) > 1 && a[0] == '-' && a[1] >= '0' && a[1] <= '9':
			out[i] = "-n" + a[1:]
		}
	}
	return out
}

// textHeader prints "==> name <==" between files as head and tail do.
func textHeader(env *Env, name string, first bool) {
	if name == "-" {
		name = "standard input"
	}
	if !first {
		fmt.Fprintln(env.Stdout)
	}
	fmt.Fprintf(env.Stdout, "==> %s <==\n", name)
}

// textCounted is what head and tail share: the count, its unit, the sign
// written before it, and whether file headers are printed.
type textCounted struct {
	n       int64
	bytes   bool
	sign    byte // '-', '+' or 0
	headers bool
	ops     []string
}

// parseCounted reads head's and tail's options; status is the exit
// status when they are wrong.
func parseCounted(env *Env, cmd string, args []string) (c textCounted, status int, ok bool) {
	opts, ops, err := textParse(args, textSpec{flags: "qvzfF", withArg: "ncs",
		long: map[string]string{"--lines": "n=", "--bytes": "c=", "--quiet": "q", "--silent": "q", "--verbose": "v"}})
	if err != nil {
		return c, textUsage(env, cmd, err, 1), false
	}
	c.n = 10
	verbose, quiet := false, false
	for _, o := range opts {
		switch o.Name {
		case "n", "c":
			v := o.Val
			c.sign = 0
			if v != "" && (v[0] == '-' || v[0] == '+') {
				c.sign = v[0]
			}
			n, good := textSize(strings.TrimLeft(v, "+-"))
			if !good {
				kind := "lines"
				if o.Name == "c" {
					kind = "bytes"
				}
				env.Errorf(cmd, "invalid number of %s: %s", kind, textQuote(o.Val))
				return c, 1, false
			}
			c.n, c.bytes = n, o.Name == "c"
		case "q":
			quiet, verbose = true, false
		case "v":
			verbose, quiet = true, false
		case "f", "F":
			env.Errorf(cmd, "following files (-f) is not supported by the shell backend; the container backend has a full userland")
			return c, 1, false
		case "z", "s":
			// -z (NUL-terminated lines) is not implemented; -s is tail's
			// sleep interval for -f, which head does not have either.
			if o.Name == "z" || cmd == "head" {
				return c, textUsage(env, cmd, fmt.Errorf("%w: invalid option -- '%s'", errTextUsage, o.Name), 1), false
			}
		}
	}
	if len(ops) == 0 {
		ops = []string{"-"}
	}
	c.ops = ops
	c.headers = verbose || (len(ops) > 1 && !quiet)
	return c, 0, true
}

func textHead(ctx context.Context, env *Env, args []string) int {
	c, status, good := parseCounted(env, "head", textObsoleteCount(args[1:]))
	if !good {
		return status
	}
	n, bytesMode, allBut, ops := c.n, c.bytes, c.sign == '-', c.ops
	showHeaders := c.headers
	ok := true
	for i, name := range ops {
		r, err := textOpen(env, name)
		if err != nil {
			env.Errorf("head", "cannot open %s for reading: %s", textQuote(name), textStrerror(err))
			ok = false
			continue
		}
		if showHeaders {
			textHeader(env, name, i == 0)
		}
		if err := textHeadCopy(ctx, env, r, n, bytesMode, allBut); err != nil && ctx.Err() == nil {
			env.Errorf("head", "error reading %s: %s", textQuote(name), textStrerror(err))
			ok = false
		}
		r.Close()
	}
	return textStatus(ok)
}

// textHeadCopy copies the head of r to w. It stops reading as soon as it
// has what it needs, so "yes | head" ends; only -n -K and -c -K read all.
func textHeadCopy(ctx context.Context, env *Env, r io.Reader, n int64, bytesMode, allBut bool) error {
	w := env.Stdout
	if allBut {
		data, err := readAllCharged(ctx, env, r)
		if err != nil {
			return err
		}
		_, err = w.Write(textHeadAllBut(data, n, bytesMode))
		return err
	}
	if bytesMode {
		_, err := io.CopyN(w, r, n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	br := bufio.NewReader(r)
	// Lines are written in blocks, not one write each: a pipe write per
	// line made `yes | head -n 50000000` take minutes.
	bw := bufio.NewWriterSize(w, 64<<10)
	for ; n > 0; n-- {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if _, werr := bw.Write(line); werr != nil {
				return werr
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			n++ // the same line goes on
		case errors.Is(err, io.EOF):
			return bw.Flush()
		case err != nil:
			bw.Flush()
			return err
		}
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return bw.Flush()
}

// textHeadAllBut is head -n -K and -c -K: all but the last n.
func textHeadAllBut(data []byte, n int64, bytesMode bool) []byte {
	if bytesMode {
		return data[:max(0, int64(len(data))-n)]
	}
	ends := textLineEnds(data)
	keep := int64(len(ends)) - n
	if keep <= 0 {
		return nil
	}
	return data[:ends[keep-1]]
}

// textLineEnds returns the offset just past each line (a last line without
// newline counts).
func textLineEnds(data []byte) []int64 {
	var ends []int64
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, int64(i+1))
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, int64(len(data)))
	}
	return ends
}

// textSize parses a count with GNU's optional suffixes (k, K, M, G, KB…).
func textSize(s string) (int64, bool) {
	mult := int64(1)
	for _, suf := range []struct {
		s string
		m int64
	}{{"KiB", 1024}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"kB", 1000}, {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000},
		{"b", 512}, {"k", 1024}, {"K", 1024}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if strings.HasSuffix(s, suf.s) && len(s) > len(suf.s) {
			s, mult = strings.TrimSuffix(s, suf.s), suf.m
			break
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return v * mult, true
}

func textTail(ctx context.Context, env *Env, args []string) int {
	// "+N" as an operand-looking count only in the obsolete "tail +N" form.
	a := textObsoleteCount(args[1:])
	if len(a) > 0 && len(a[0]) > 1 && a[0][0] == '+' {
		if _, err := strconv.Atoi(a[0][1:]); err == nil {
			a[0] = "-n" + a[0]
		}
	}
	c, status, good := parseCounted(env, "tail", a)
	if !good {
		return status
	}
	n, bytesMode, fromStart, ops := c.n, c.bytes, c.sign == '+', c.ops
	showHeaders := c.headers
	ok := true
	for i, name := range ops {
		r, err := textOpen(env, name)
		if err != nil {
			env.Errorf("tail", "cannot open %s for reading: %s", textQuote(name), textStrerror(err))
			ok = false
			continue
		}
		if showHeaders {
			textHeader(env, name, i == 0)
		}
		if fromStart {
			err = textTailFrom(ctx, env.Stdout, r, n, bytesMode)
		} else {
			err = textTailLast(ctx, env, r, n, bytesMode)
		}
		r.Close()
		if err != nil {
			if ctx.Err() != nil {
				return 1
			}
			env.Errorf("tail", "error reading %s: %s", textQuote(name), textStrerror(err))
			ok = false
		}
	}
	return textStatus(ok)
}

// textTailFrom is tail +N: it skips N-1 lines (or bytes) and streams the
// rest.
func textTailFrom(ctx context.Context, w io.Writer, r io.Reader, n int64, bytesMode bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if bytesMode {
		if _, err := br.Discard(int(min(max(0, n-1), math.MaxInt32))); err != nil {
			return ignoreEOF(err)
		}
	}
	for skip := max(0, n-1); !bytesMode && skip > 0; {
		_, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			skip--
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			return ignoreEOF(err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return textCopy(ctx, w, br)
}

// textTailLast is tail -N: a window over the input keeps the last N lines
// (or bytes), trimmed whenever it has doubled, so memory follows what is
// kept, which is charged, and not the input.
func textTailLast(ctx context.Context, env *Env, r io.Reader, n int64, bytesMode bool) error {
	mem := memGauge{env: env}
	var win []byte
	kept := 0
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		k, err := r.Read(buf)
		win = append(win, buf[:k]...)
		if len(win) > 2*kept+len(buf) {
			tail := textTailSlice(win, n, bytesMode)
			win = append(win[:0], tail...)
			kept = len(win)
		}
		if merr := mem.set(int64(cap(win))); merr != nil {
			return merr
		}
		if errors.Is(err, io.EOF) {
			_, err := env.Stdout.Write(textTailSlice(win, n, bytesMode))
			return err
		}
		if err != nil {
			return err
		}
	}
}

// textTailSlice is the last n lines (or bytes) of data; a last line
// without newline counts.
func textTailSlice(data []byte, n int64, bytesMode bool) []byte {
	if bytesMode {
		return data[max(0, int64(len(data))-n):]
	}
	if n == 0 {
		return nil
	}
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	for ; n > 0; n-- {
		i := bytes.LastIndexByte(data[:end], '\n')
		if i < 0 {
			return data
		}
		end = i
	}
	return data[end+1:]
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// textCopy copies r to w, checking ctx between reads.
func textCopy(ctx context.Context, w io.Writer, r io.Reader) error {
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err != nil {
			return ignoreEOF(err)
		}
	}
}

type textCounts struct{ lines, words, chars, bytes, maxLine int64 }

// textCounter counts a stream chunk by chunk; a character split between
// chunks is carried over to the next.
type textCounter struct {
	c       textCounts
	inWord  bool
	lineLen int64
	carry   []byte
}

// add counts data; final says no more follows, so an incomplete character
// at the end counts as it is.
func (t *textCounter) add(data []byte, final bool) {
	t.c.bytes += int64(len(data))
	if len(t.carry) > 0 {
		data = append(t.carry, data...)
		t.carry = nil
	}
	for i := 0; i < len(data); {
		if !final && !utf8.FullRune(data[i:]) {
			t.carry = append([]byte(nil), data[i:]...)
			return
		}
		r, size := utf8.DecodeRune(data[i:])
		i += size
		t.c.chars++
		switch r {
		case '\n':
			t.c.lines++
			t.c.maxLine = max(t.c.maxLine, t.lineLen)
			t.lineLen = 0
		case '\t':
			t.lineLen += 8 - t.lineLen%8
		default:
			t.lineLen++
		}
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '\v' || r == '\f'
		if !space && !t.inWord {
			t.c.words++
		}
		t.inWord = !space
	}
}

func (t *textCounter) counts() textCounts {
	t.add(nil, true)
	t.c.maxLine = max(t.c.maxLine, t.lineLen)
	return t.c
}

// textCountFile counts one operand in constant memory.
func textCountFile(ctx context.Context, env *Env, name string) (textCounts, error) {
	r, err := textOpen(env, name)
	if err != nil {
		return textCounts{}, err
	}
	defer r.Close()
	var t textCounter
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return textCounts{}, err
		}
		n, err := r.Read(buf)
		t.add(buf[:n], false)
		if errors.Is(err, io.EOF) {
			return t.counts(), nil
		}
		if err != nil {
			return textCounts{}, err
		}
	}
}

func textWc(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "lwcmL",
		long: map[string]string{"--lines": "l", "--words": "w", "--bytes": "c", "--chars": "m", "--max-line-length": "L"}})
	if err != nil {
		return textUsage(env, "wc", err, 1)
	}
	var want [5]bool // lines words chars bytes maxline
	for _, o := range opts {
		want[strings.IndexByte("lwmcL", o.Name[0])] = true
	}
	if want == [5]bool{} {
		want = [5]bool{true, true, false, true, false}
	}
	names := ops
	if len(names) == 0 {
		names = []string{""}
	}
	nWanted := 0
	for _, w := range want {
		if w {
			nWanted++
		}
	}
	type result struct {
		name string
		c    textCounts
	}
	var results []result
	var total textCounts
	ok := true
	width, regularTotal, minWidth := 1, int64(0), 1
	for _, name := range names {
		arg := name
		if arg == "" {
			arg = "-"
		}
		c, err := textCountFile(ctx, env, arg)
		if err != nil {
			if ctx.Err() != nil {
				return 1
			}
			textFileErr(env, "wc", arg, err)
			ok = false
			continue
		}
		if arg == "-" {
			minWidth = 7
		} else if st, err := env.FS.Stat(env.Abs(arg)); err == nil && st.Mode().IsRegular() {
			regularTotal += st.Size()
		} else {
			minWidth = 7
		}
		results = append(results, result{name, c})
		total.lines += c.lines
		total.words += c.words
		total.chars += c.chars
		total.bytes += c.bytes
		total.maxLine = max(total.maxLine, c.maxLine)
	}
	// GNU sizes the columns from the total size of the regular files, at
	// least 7 when a pipe is involved, and does not pad a lone count.
	if !(len(names) == 1 && nWanted == 1) {
		for t := regularTotal; t >= 10; t /= 10 {
			width++
		}
		width = max(width, minWidth)
	}
	print := func(name string, c textCounts) {
		vals := []int64{c.lines, c.words, c.chars, c.bytes, c.maxLine}
		var parts []string
		for k, w := range want {
			if w {
				parts = append(parts, fmt.Sprintf("%*d", width, vals[k]))
			}
		}
		line := strings.Join(parts, " ")
		if name != "" {
			line += " " + name
		}
		fmt.Fprintln(env.Stdout, line)
	}
	for _, r := range results {
		print(r.name, r.c)
	}
	if len(names) > 1 {
		print("total", total)
	}
	return textStatus(ok)
}

func textTac(ctx context.Context, env *Env, args []string) int {
	_, ops, err := textParse(args[1:], textSpec{})
	if err != nil {
		return textUsage(env, "tac", err, 1)
	}
	if len(ops) == 0 {
		ops = []string{"-"}
	}
	ok := true
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	for _, name := range ops {
		data, err := textReadAll(ctx, env, name)
		if err != nil {
			env.Errorf("tac", "failed to open %s for reading: %s", textQuote(name), textStrerror(err))
			ok = false
			continue
		}
		// A last line without newline is printed as it is, so "a\nb" gives "ba\n".
		lines, lastNL, err := textHoldLines(ctx, env, data, '\n')
		if err != nil {
			env.Errorf("tac", "%v", err)
			return 1
		}
		for i := len(lines) - 1; i >= 0; i-- {
			if i%linesPerCheck == 0 && ctx.Err() != nil {
				return 1
			}
			w.Write(lines[i])
			if i < len(lines)-1 || lastNL {
				w.WriteByte('\n')
			}
		}
	}
	return textStatus(ok)
}

func textRev(ctx context.Context, env *Env, args []string) int {
	_, ops, err := textParse(args[1:], textSpec{})
	if err != nil {
		return textUsage(env, "rev", err, 1)
	}
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	ok := textEachLine(ctx, env, "rev", ops, '\n', func(l []byte, nl bool) {
		r := []rune(string(l))
		for a, b := 0, len(r)-1; a < b; a, b = a+1, b-1 {
			r[a], r[b] = r[b], r[a]
		}
		w.WriteString(string(r))
		if nl {
			w.WriteByte('\n')
		}
	})
	return textStatus(ok)
}

func textNl(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{withArg: "bnwsvi",
		long: map[string]string{"--body-numbering": "b=", "--number-format": "n=", "--number-width": "w=",
			"--number-separator": "s=", "--starting-line-number": "v=", "--line-increment": "i="}})
	if err != nil {
		return textUsage(env, "nl", err, 1)
	}
	style, format, width, sep, start, incr := "t", "rn", 6, "\t", int64(1), int64(1)
	for _, o := range opts {
		switch o.Name {
		case "b":
			style = o.Val
		case "n":
			format = o.Val
		case "s":
			sep = o.Val
		case "w", "v", "i":
			v, err := strconv.ParseInt(o.Val, 10, 64)
			if err != nil {
				env.Errorf("nl", "invalid argument: %s", textQuote(o.Val))
				return 1
			}
			switch o.Name {
			case "w":
				width = int(v)
			case "v":
				start = v
			case "i":
				incr = v
			}
		}
	}
	if style != "a" && style != "t" && style != "n" {
		env.Errorf("nl", "invalid body numbering style: %s", textQuote(style))
		return 1
	}
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	n := start
	ok := textEachLine(ctx, env, "nl", ops, '\n', func(l []byte, nl bool) {
		number := style == "a" || (style == "t" && len(l) > 0)
		if number {
			switch format {
			case "ln":
				fmt.Fprintf(w, "%-*d", width, n)
			case "rz":
				fmt.Fprintf(w, "%0*d", width, n)
			default:
				fmt.Fprintf(w, "%*d", width, n)
			}
			w.WriteString(sep)
			n += incr
		} else {
			w.WriteString(strings.Repeat(" ", width+len(sep)))
		}
		w.Write(l)
		if nl {
			w.WriteByte('\n')
		}
	})
	return textStatus(ok)
}

func textFold(ctx context.Context, env *Env, args []string) int {
	// "-20" is "-w 20".
	a := append([]string(nil), args[1:]...)
	for i, s := range a {
		if len(s) > 1 && s[0] == '-' && s[1] >= '0' && s[1] <= '9' {
			a[i] = "-w" + s[1:]
		}
	}
	opts, ops, err := textParse(a, textSpec{flags: "bs", withArg: "w",
		long: map[string]string{"--bytes": "b", "--spaces": "s", "--width": "w="}})
	if err != nil {
		return textUsage(env, "fold", err, 1)
	}
	width, breakSpaces, bytesMode := 80, false, false
	for _, o := range opts {
		switch o.Name {
		case "b":
			bytesMode = true
		case "w":
			v, err := strconv.Atoi(o.Val)
			if err != nil || v <= 0 {
				env.Errorf("fold", "invalid number of columns: %s", textQuote(o.Val))
				return 1
			}
			width = v
		case "s":
			breakSpaces = true
		}
	}
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	ok := textEachLine(ctx, env, "fold", ops, '\n', func(l []byte, nl bool) {
		for {
			cut := foldCut(l, width, bytesMode)
			if cut >= len(l) {
				break
			}
			if breakSpaces {
				if sp := bytes.LastIndexAny(l[:cut], " \t"); sp >= 0 {
					cut = sp + 1
				}
			}
			w.Write(l[:cut])
			w.WriteByte('\n')
			l = l[cut:]
		}
		w.Write(l)
		if nl {
			w.WriteByte('\n')
		}
	})
	return textStatus(ok)
}

// foldCut returns how many bytes of l fit in width columns: a tab moves
// to the next multiple of 8, a backspace goes back one, as in GNU fold.
// At least one byte is always taken.
func foldCut(l []byte, width int, bytesMode bool) int {
	col := 0
	for i, c := range l {
		switch {
		case bytesMode:
			col++
		case c == '\t':
			col += 8 - col%8
		case c == '\b':
			col = max(0, col-1)
		case c == '\r':
			col = 0
		default:
			col++
		}
		if col > width {
			return max(1, i)
		}
	}
	return len(l)
}

func textTee(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "ai",
		long: map[string]string{"--append": "a", "--ignore-interrupts": "i"}})
	if err != nil {
		return textUsage(env, "tee", err, 1)
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	for _, o := range opts {
		if o.Name == "a" {
			flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
		}
	}
	writers := []io.Writer{env.Stdout}
	ok := true
	for _, name := range ops {
		if name == "-" {
			writers = append(writers, env.Stdout)
			continue
		}
		f, err := env.FS.OpenFile(env.Abs(name), flag, textCreatePerm)
		if err != nil {
			textFileErr(env, "tee", name, err)
			ok = false
			continue
		}
		defer f.Close()
		writers = append(writers, f)
	}
	buf := make([]byte, 32*1024)
	for ctx.Err() == nil {
		n, err := env.Stdin.Read(buf)
		for _, w := range writers {
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					ok = false
				}
			}
		}
		if err != nil {
			break
		}
	}
	return textStatus(ok)
}
