package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/itchyny/timefmt-go"
)

func init() {
	register("printf", textPrintf)
	register("echo", textEcho)
}

// MaxPrintfWidth caps a printf field width or precision. bash allocates
// whatever a format asks for ("%0100000000d" is 100 MB); past this, printf
// fails with a message instead.
const MaxPrintfWidth = 1 << 20

// PrintfUsage is bash's usage line, printed with exit status 2.
const PrintfUsage = "printf: usage: printf [-v var] format [arguments]"

// textPrintf is bash's printf builtin without -v (the shell handles -v,
// which must assign in the calling shell).
func textPrintf(ctx context.Context, env *Env, args []string) int {
	args = args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	} else if len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		env.Errorf("printf", "%s: invalid option", args[0][:2])
		fmt.Fprintln(env.Stderr, PrintfUsage)
		return 2
	}
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, PrintfUsage)
		return 2
	}
	out := bufio.NewWriter(env.Stdout)
	status := Printf(ctx, out, env.Stderr, env.Getenv("TZ"), args[0], args[1:])
	if err := out.Flush(); err != nil {
		return writeFailed(env, "printf", err)
	}
	return status
}

// Printf writes format applied to args to w as bash's printf does,
// reusing the format until the arguments run out. Diagnostics go to
// stderr; the result is the exit status (1 after an invalid number or
// format, output up to that point written).
func Printf(ctx context.Context, w io.Writer, stderr io.Writer, tz string, format string, args []string) int {
	p := &printer{ctx: ctx, w: w, stderr: stderr, args: args, tz: tz}
	for {
		consumed := p.next
		if stop := p.once(format); stop {
			break
		}
		if p.next == consumed || p.next >= len(p.args) {
			break
		}
	}
	if p.werr != nil {
		return 1 // the caller reports the write error
	}
	return p.status
}

type printer struct {
	ctx    context.Context
	w      io.Writer
	stderr io.Writer
	args   []string
	next   int
	tz     string
	status int
	werr   error
}

func (p *printer) write(s string) {
	if p.werr == nil {
		_, p.werr = io.WriteString(p.w, s)
	}
}

func (p *printer) errorf(format string, a ...any) {
	fmt.Fprintf(p.stderr, "printf: "+format+"\n", a...)
	p.status = 1
}

// arg takes the next argument; missing ones are empty.
func (p *printer) arg() string {
	if p.next >= len(p.args) {
		return ""
	}
	p.next++
	return p.args[p.next-1]
}

// once runs the format a single time. It reports whether printing must
// stop: an error in the format, \c in a %b argument, a write error or
// cancellation.
func (p *printer) once(format string) (stop bool) {
	if p.ctx.Err() != nil {
		p.werr = p.ctx.Err()
		return true
	}
	for i := 0; i < len(format); {
		if p.werr != nil {
			return true
		}
		c := format[i]
		switch {
		case c == '\\':
			s, n, _ := unescape(format[i:], escFormat)
			p.write(s)
			i += n
		case c != '%':
			j := i + 1
			for j < len(format) && format[j] != '%' && format[j] != '\\' {
				j++
			}
			p.write(format[i:j])
			i = j
		case i+1 < len(format) && format[i+1] == '%':
			p.write("%")
			i += 2
		default:
			n, stop := p.conversion(format[i:])
			if stop {
				return true
			}
			i += n
		}
	}
	return p.werr != nil
}

// spec is one parsed conversion.
type spec struct {
	flags     string
	width     int
	hasWidth  bool
	prec      int
	hasPrec   bool
	verb      byte
	timeFmt   string // %(…)T
	minusFlag bool
}

// conversion handles the directive at the start of f ("%…") and returns
// how many bytes it took.
func (p *printer) conversion(f string) (int, bool) {
	var s spec
	i := 1
	for i < len(f) && strings.IndexByte("-+ #0'", f[i]) >= 0 {
		s.flags += f[i : i+1]
		i++
	}
	var ok bool
	if i, ok = p.number(f, i, &s.width, &s.hasWidth, true); !ok {
		return i, true
	}
	if i < len(f) && f[i] == '.' {
		i++
		s.hasPrec = true
		if i, ok = p.number(f, i, &s.prec, &s.hasPrec, false); !ok {
			return i, true
		}
	}
	for i < len(f) && strings.IndexByte("hjlLtz", f[i]) >= 0 {
		i++
	}
	if i >= len(f) {
		p.errorf("`%%': missing format character")
		return i, true
	}
	s.verb = f[i]
	i++
	if s.verb == '(' {
		end := strings.Index(f[i:], ")T")
		if end < 0 {
			p.errorf("`(': invalid format character")
			return i, true
		}
		s.timeFmt, s.verb = f[i:i+end], 'T'
		i += end + 2
	}
	if s.width < 0 {
		s.flags += "-"
		s.width = -s.width
	}
	s.minusFlag = strings.Contains(s.flags, "-")
	if s.width > MaxPrintfWidth || s.prec > MaxPrintfWidth {
		p.errorf("`%s': field width or precision over the limit of %d", f[:i], MaxPrintfWidth)
		return i, true
	}
	return i, p.convert(&s)
}

// number reads a width or precision: digits or '*' (from the arguments).
// A '*' precision below zero counts as none.
func (p *printer) number(f string, i int, n *int, has *bool, isWidth bool) (int, bool) {
	if i < len(f) && f[i] == '*' {
		a := p.arg()
		v := int64(p.integer(a, false))
		switch {
		case v > MaxPrintfWidth || v < -MaxPrintfWidth:
			p.errorf("%s: field width or precision over the limit of %d", a, MaxPrintfWidth)
			return i + 1, false
		case !isWidth && v < 0:
			*has = false
		default:
			*has = true
			*n = int(v)
		}
		return i + 1, true
	}
	j := i
	for j < len(f) && f[j] >= '0' && f[j] <= '9' {
		j++
	}
	if j > i {
		v, err := strconv.Atoi(f[i:j])
		if err != nil || v > MaxPrintfWidth {
			p.errorf("`%s': field width or precision over the limit of %d", f[:j], MaxPrintfWidth)
			return j, false
		}
		*n, *has = v, true
	}
	return j, true
}

func (p *printer) convert(s *spec) (stop bool) {
	a := p.arg()
	switch s.verb {
	case 's':
		if s.hasPrec && s.prec < len(a) {
			a = a[:s.prec]
		}
		p.pad(s, a)
	case 'b':
		text, _, sawC := unescape(a, escArg)
		if s.hasPrec && s.prec < len(text) {
			text = text[:s.prec]
		}
		p.pad(s, text)
		if sawC {
			return true
		}
	case 'q', 'Q':
		// %Q cuts the argument to the precision, %q the quoted text.
		if s.verb == 'Q' && s.hasPrec && s.prec < len(a) {
			a = a[:s.prec]
		}
		q := shellQuote(a)
		if s.verb == 'q' && s.hasPrec && s.prec < len(q) {
			q = q[:s.prec]
		}
		p.pad(s, q)
	case 'c':
		c := "\x00" // bash prints the empty argument's terminating NUL
		if a != "" {
			c = a[:1]
		}
		p.pad(s, c)
	case 'd', 'i':
		v := int64(p.integer(a, false))
		p.pad(s, formatInt(s, v < 0, abs(v), 10, false))
	case 'u', 'o', 'x', 'X':
		v := p.integer(a, true)
		base := 16
		switch s.verb {
		case 'u':
			base = 10
		case 'o':
			base = 8
		}
		p.pad(s, formatInt(s, false, v, base, s.verb == 'X'))
	case 'f', 'F', 'e', 'E', 'g', 'G':
		p.pad(s, formatFloat(s, p.float(a)))
	case 'T':
		p.pad(s, p.time(s, a))
	default:
		p.errorf("`%c': invalid format character", s.verb)
		return true
	}
	return p.werr != nil
}

func abs(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

// pad writes text justified in the field width; '0' pads with zeros
// after a sign or 0x for numbers (formatInt and formatFloat do that).
func (p *printer) pad(s *spec, text string) {
	if n := s.width - len(text); n > 0 {
		fill := strings.Repeat(" ", n)
		if s.minusFlag {
			text += fill
		} else {
			text = fill + text
		}
	}
	p.write(text)
}

// formatInt renders an integer conversion with its precision and flags;
// a zero flag without a precision or '-' pads to the width with zeros.
func formatInt(s *spec, neg bool, mag uint64, base int, upper bool) string {
	digits := strconv.FormatUint(mag, base)
	if upper {
		digits = strings.ToUpper(digits)
	}
	if s.hasPrec && s.prec == 0 && mag == 0 {
		digits = ""
	}
	if s.hasPrec && len(digits) < s.prec {
		digits = strings.Repeat("0", s.prec-len(digits)) + digits
	}
	prefix := ""
	switch {
	case neg:
		prefix = "-"
	case s.verb == 'd' || s.verb == 'i':
		if strings.Contains(s.flags, "+") {
			prefix = "+"
		} else if strings.Contains(s.flags, " ") {
			prefix = " "
		}
	}
	if strings.Contains(s.flags, "#") {
		switch {
		case base == 8 && !strings.HasPrefix(digits, "0"):
			digits = "0" + digits
		case base == 16 && mag != 0:
			prefix = "0x"
			if upper {
				prefix = "0X"
			}
		}
	}
	return zeroPad(s, prefix, digits, !s.hasPrec)
}

// zeroPad inserts the zeros of a '0' flag between prefix and digits.
func zeroPad(s *spec, prefix, digits string, allowed bool) string {
	if allowed && strings.Contains(s.flags, "0") && !s.minusFlag {
		if n := s.width - len(prefix) - len(digits); n > 0 {
			digits = strings.Repeat("0", n) + digits
		}
	}
	return prefix + digits
}

func formatFloat(s *spec, v float64) string {
	prec := 6
	if s.hasPrec {
		prec = s.prec
	}
	prefix := ""
	switch {
	case math.Signbit(v):
		prefix = "-"
		v = -v
	case strings.Contains(s.flags, "+"):
		prefix = "+"
	case strings.Contains(s.flags, " "):
		prefix = " "
	}
	upper := s.verb == 'F' || s.verb == 'E' || s.verb == 'G'
	if math.IsInf(v, 0) || math.IsNaN(v) {
		text := "inf"
		if math.IsNaN(v) {
			text = "nan"
		}
		if upper {
			text = strings.ToUpper(text)
		}
		return prefix + text
	}
	verb := s.verb
	if verb == 'F' {
		verb = 'f'
	}
	f := "%"
	if strings.Contains(s.flags, "#") {
		f += "#"
	}
	text := fmt.Sprintf(f+"."+strconv.Itoa(prec)+string(verb), v)
	return zeroPad(s, prefix, text, true)
}

// integer parses a numeric argument as bash does (strtoimax, or
// strtoumax for the unsigned conversions: leading blanks, sign, 0x hex, 0
// octal, 'c for a character's code). An invalid or partly numeric
// argument is reported and yields its numeric prefix; a value out of
// range is clamped with a warning. The result is the value's bits.
func (p *printer) integer(a string, unsigned bool) uint64 {
	if v, ok := charCode(a); ok {
		return uint64(v)
	}
	t := strings.TrimLeft(a, " \t\n")
	if t == "" {
		return 0
	}
	neg := false
	body := t
	if body[0] == '+' || body[0] == '-' {
		neg = body[0] == '-'
		body = body[1:]
	}
	base, kind := 10, "number"
	switch {
	case len(body) > 1 && body[0] == '0' && (body[1]|0x20) == 'x':
		base, kind, body = 16, "hex number", body[2:]
	case len(body) > 1 && body[0] == '0':
		base, kind = 8, "octal number"
	}
	end := 0
	for end < len(body) && digitValue(body[end]) < base {
		end++
	}
	var mag uint64
	var err error
	if end > 0 {
		mag, err = strconv.ParseUint(body[:end], base, 64)
	}
	v, clamped := mag, true
	switch {
	case unsigned && err != nil:
		v = math.MaxUint64
	case !unsigned && (err != nil || !neg && mag > math.MaxInt64):
		v = math.MaxInt64
	case !unsigned && neg && mag > 1<<63:
		v = 1 << 63 // math.MinInt64
	default:
		clamped = false
		if neg {
			v = -mag
		}
	}
	if clamped {
		fmt.Fprintf(p.stderr, "printf: warning: %s: Numerical result out of range\n", a)
	}
	switch {
	case end == len(body) && (end > 0 || base == 8):
	case base != 10 && end < len(body) && digitValue(body[end]) < 10, base == 16 && end == 0:
		p.errorf("%s: invalid %s", a, kind)
	default:
		p.errorf("%s: invalid number", a)
	}
	return v
}

func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}

// charCode is the value of a "'c" or "\"c" argument: the code of the
// character after the quote (0 when there is none).
func charCode(a string) (int64, bool) {
	if a == "" || (a[0] != '\'' && a[0] != '"') {
		return 0, false
	}
	if len(a) == 1 {
		return 0, true
	}
	r, size := utf8.DecodeRuneInString(a[1:])
	if r == utf8.RuneError && size <= 1 {
		return int64(a[1]), true
	}
	return int64(r), true
}

// float parses a floating-point argument (strtold's syntax as far as a
// float64 holds it).
func (p *printer) float(a string) float64 {
	if v, ok := charCode(a); ok {
		return float64(v)
	}
	t := strings.TrimLeft(a, " \t\n")
	if t == "" {
		return 0
	}
	n := floatPrefix(t)
	v, err := parseFloat(t[:n])
	if n == 0 || n < len(t) {
		p.errorf("%s: invalid number", a)
	} else if err != nil && !errors.Is(err, strconv.ErrRange) {
		p.errorf("%s: invalid number", a)
	}
	return v
}

func parseFloat(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	body := strings.TrimLeft(s, "+-")
	if len(body) > 1 && (body[1] == 'x' || body[1] == 'X') && !strings.ContainsAny(body, "pP") {
		s += "p0" // Go needs the exponent of a hex float
	}
	return strconv.ParseFloat(s, 64)
}

// floatPrefix is the length of the longest prefix of s that strtod would
// take: decimal or hex with exponent, inf, infinity, nan.
func floatPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	lower := strings.ToLower(s[i:])
	for _, word := range []string{"infinity", "inf", "nan"} {
		if strings.HasPrefix(lower, word) {
			return i + len(word)
		}
	}
	base, exp := 10, byte('e')
	if strings.HasPrefix(lower, "0x") {
		base, exp = 16, 'p'
		i += 2
	}
	start := i
	for i < len(s) && digitValue(s[i]) < base {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && digitValue(s[i]) < base {
			i++
		}
	}
	if i == start || (i == start+1 && s[start] == '.') {
		if base == 16 {
			return start - 1 // "0x" alone is the number 0
		}
		return 0
	}
	if i < len(s) && (s[i]|0x20) == exp {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

// time renders %(fmt)T: the argument is seconds since the epoch, -1 (or
// none) the current time, -2 the shell's start (here also now).
func (p *printer) time(s *spec, a string) string {
	t := time.Now()
	if a != "" {
		if v := int64(p.integer(a, false)); v >= 0 {
			t = time.Unix(v, 0)
		}
	}
	loc := time.UTC
	if p.tz != "" {
		if l, err := time.LoadLocation(p.tz); err == nil {
			loc = l
		}
	}
	format := s.timeFmt
	if format == "" {
		format = "%X"
	}
	text := timefmt.Format(t.In(loc), format)
	if s.hasPrec && s.prec < len(text) {
		text = text[:s.prec]
	}
	return text
}

// escapes is which backslash escapes a text takes.
type escapes int

const (
	escFormat escapes = iota // printf's format: \NNN octal, one escape at a time
	escArg                   // printf's %b: \0NNN and \NNN octal, \c stops
	escEcho                  // echo -e: only \0NNN is octal, \c stops
)

// unescape decodes backslash escapes. For escFormat it decodes the one at
// the start of s and returns its length; otherwise all of s, reporting \c
// (which ends all output). Unknown escapes stay as they are.
func unescape(s string, mode escapes) (text string, n int, sawC bool) {
	var b strings.Builder
	i := 0
	for i < len(s) {
		if s[i] != '\\' || i+1 == len(s) {
			if mode == escFormat {
				return s[:1], 1, false
			}
			b.WriteByte(s[i])
			i++
			continue
		}
		c := s[i+1]
		i += 2
		switch c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\':
			b.WriteByte('\\')
		case '\'', '"', '?':
			if mode != escFormat { // only the format drops these backslashes
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		case 'c':
			if mode != escFormat {
				return b.String(), i, true
			}
			b.WriteString(`\c`)
		case 'x', 'u', 'U':
			digits := 2 // \xHH, \uHHHH, \UHHHHHHHH
			if c == 'u' {
				digits = 4
			} else if c == 'U' {
				digits = 8
			}
			j := i
			for j < len(s) && j-i < digits && digitValue(s[j]) < 16 {
				j++
			}
			if j == i {
				b.WriteByte('\\')
				b.WriteByte(c)
				break
			}
			v, _ := strconv.ParseUint(s[i:j], 16, 32)
			if c == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i = j
		case '0', '1', '2', '3', '4', '5', '6', '7':
			// Up to three octal digits, after the 0 of \0NNN outside
			// the format; echo knows no \NNN without the 0.
			start := i - 1
			if mode != escFormat && c == '0' {
				start = i
			} else if mode == escEcho {
				b.WriteByte('\\')
				b.WriteByte(c)
				break
			}
			j := start
			for j < len(s) && j < start+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v := uint64(0)
			if j > start {
				v, _ = strconv.ParseUint(s[start:j], 8, 32)
			}
			b.WriteByte(byte(v))
			i = j
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
		if mode == escFormat {
			return b.String(), i, false
		}
	}
	return b.String(), i, false
}

// textEcho is bash's echo builtin: -n, -e, -E (combinable), no `--`.
func textEcho(ctx context.Context, env *Env, args []string) int {
	args = args[1:]
	newline, escape := true, false
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
		for _, c := range args[0][1:] {
			switch c {
			case 'n':
				newline = false
			case 'e':
				escape = true
			case 'E':
				escape = false
			}
		}
		args = args[1:]
	}
	var out strings.Builder
	for i, a := range args {
		if ctx.Err() != nil {
			return 1
		}
		if i > 0 {
			out.WriteByte(' ')
		}
		if escape {
			text, _, sawC := unescape(a, escEcho)
			out.WriteString(text)
			if sawC {
				newline = false
				break
			}
			continue
		}
		out.WriteString(a)
	}
	if newline {
		out.WriteByte('\n')
	}
	if _, err := io.WriteString(env.Stdout, out.String()); err != nil {
		return writeFailed(env, "echo", err)
	}
	return 0
}

// writeFailed reports a failed write to standard output as bash's builtins
// do, unless it is the silent end of SIGPIPE or of cancellation (which
// makes a blocked pipe write fail with a deadline).
func writeFailed(env *Env, cmd string, err error) int {
	if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, context.Canceled) {
		env.Errorf(cmd, "write error: %s", textStrerror(err))
	}
	return 1
}

// shellQuote is bash's %q: backslashes before the shell's special
// characters, or $'…' when the string holds non-printable ones.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r == utf8.RuneError) {
			return ansiCQuote(s)
		}
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte(" \t\n'\"\\|&;()<>!{}*[]?^$`,", c) >= 0,
			c == '~' && (i == 0 || s[i-1] == '=' || s[i-1] == ':'),
			c == '#' && i == 0:
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

func ansiCQuote(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		c := s[i]
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, "\\%03o", c)
		case c == '\a':
			b.WriteString(`\a`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == 0x1b:
			b.WriteString(`\E`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\v':
			b.WriteString(`\v`)
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}
