package builtin

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/itchyny/timefmt-go"
)

func init() {
	register("true", func(context.Context, *Env, []string) int { return 0 })
	register("false", func(context.Context, *Env, []string) int { return 1 })
	register("yes", textYes)
	register("basename", textBasename)
	register("dirname", textDirname)
	register("printenv", textPrintenv)
	register("seq", textSeq)
	register("date", textDate)
}

// textYes repeats its arguments until the reader goes away or ctx ends.
func textYes(ctx context.Context, env *Env, args []string) int {
	line := "y\n"
	if len(args) > 1 {
		line = strings.Join(args[1:], " ") + "\n"
	}
	// Fill a buffer so each write moves many lines.
	buf := []byte(strings.Repeat(line, max(1, 8192/len(line))))
	for ctx.Err() == nil {
		if _, err := env.Stdout.Write(buf); err != nil {
			return 0
		}
	}
	return 1
}

func textBasename(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "az", withArg: "s",
		long: map[string]string{"--multiple": "a", "--suffix": "s=", "--zero": "z"}})
	if err != nil {
		return textUsage(env, "basename", err, 1)
	}
	multi, suffix, term := false, "", "\n"
	for _, o := range opts {
		switch o.Name {
		case "a":
			multi = true
		case "s":
			suffix, multi = o.Val, true
		case "z":
			term = "\x00"
		}
	}
	if len(ops) == 0 {
		env.Errorf("basename", "missing operand")
		return 1
	}
	if !multi {
		if len(ops) > 2 {
			env.Errorf("basename", "extra operand %s", textQuote(ops[2]))
			return 1
		}
		if len(ops) == 2 {
			suffix = ops[1]
		}
		ops = ops[:1]
	}
	for _, name := range ops {
		b := textBase(name)
		if suffix != "" && b != suffix && strings.HasSuffix(b, suffix) {
			b = strings.TrimSuffix(b, suffix)
		}
		fmt.Fprint(env.Stdout, b+term)
	}
	return 0
}

// textBase is POSIX basename: trailing slashes do not count, "/" stays.
func textBase(name string) string {
	if name == "" {
		return ""
	}
	t := strings.TrimRight(name, "/")
	if t == "" {
		return "/"
	}
	return path.Base(t)
}

func textDirname(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "z", long: map[string]string{"--zero": "z"}})
	if err != nil {
		return textUsage(env, "dirname", err, 1)
	}
	term := "\n"
	if len(opts) > 0 {
		term = "\x00"
	}
	if len(ops) == 0 {
		env.Errorf("dirname", "missing operand")
		return 1
	}
	for _, name := range ops {
		fmt.Fprint(env.Stdout, textDir(name)+term)
	}
	return 0
}

// textDir is POSIX dirname, which keeps a leading "//" and never cleans
// "a/./b" the way path.Dir does.
func textDir(name string) string {
	t := strings.TrimRight(name, "/")
	if t == "" {
		if name == "" {
			return "."
		}
		return "/"
	}
	i := strings.LastIndexByte(t, '/')
	if i < 0 {
		return "."
	}
	d := strings.TrimRight(t[:i], "/")
	if d == "" {
		return "/"
	}
	return d
}

func textPrintenv(ctx context.Context, env *Env, args []string) int {
	_, ops, err := textParse(args[1:], textSpec{flags: "0"})
	if err != nil {
		return textUsage(env, "printenv", err, 2)
	}
	if len(ops) == 0 {
		for _, kv := range textEnviron(env) {
			fmt.Fprintln(env.Stdout, kv)
		}
		return 0
	}
	status := 0
	for _, n := range ops {
		v := env.Getenv(n)
		if v == "" && !textHasEnv(env, n) {
			status = 1
			continue
		}
		fmt.Fprintln(env.Stdout, v)
	}
	return status
}

// textEnviron lists the exported environment, NAME=value.
func textEnviron(env *Env) []string {
	if env.Environ == nil {
		return nil
	}
	return env.Environ()
}

func textHasEnv(env *Env, name string) bool {
	for _, kv := range textEnviron(env) {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}

func textSeq(ctx context.Context, env *Env, args []string) int {
	// Negative numbers are operands, not options: stop at the first one.
	var rest []string
	sep, format, width := "\n", "", false
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9') || a[1] == '.' {
			break
		}
		switch {
		case a == "-w" || a == "--equal-width":
			width = true
		case strings.HasPrefix(a, "-s") || strings.HasPrefix(a, "--separator="):
			v, ok := textOptValue(env, "seq", args, &i, "-s", "--separator=")
			if !ok {
				return 1
			}
			sep = v
		case strings.HasPrefix(a, "-f") || strings.HasPrefix(a, "--format="):
			v, ok := textOptValue(env, "seq", args, &i, "-f", "--format=")
			if !ok {
				return 1
			}
			format = v
		default:
			env.Errorf("seq", "invalid option -- '%s'", a[1:2])
			fmt.Fprintln(env.Stderr, "Try 'seq --help' for more information.")
			return 1
		}
	}
	rest = args[i:]
	if len(rest) == 0 || len(rest) > 3 {
		if len(rest) == 0 {
			env.Errorf("seq", "missing operand")
		} else {
			env.Errorf("seq", "extra operand %s", textQuote(rest[3]))
		}
		fmt.Fprintln(env.Stderr, "Try 'seq --help' for more information.")
		return 1
	}
	first, incr := "1", "1"
	last := rest[len(rest)-1]
	if len(rest) >= 2 {
		first = rest[0]
	}
	if len(rest) == 3 {
		incr = rest[1]
	}
	var nums [3]float64
	prec := 0
	for k, s := range []string{first, incr, last} {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) {
			env.Errorf("seq", "invalid floating point argument: %s", textQuote(s))
			fmt.Fprintln(env.Stderr, "Try 'seq --help' for more information.")
			return 1
		}
		nums[k] = v
		// Precision comes from FIRST and INCREMENT, as in GNU seq.
		if dot := strings.IndexByte(s, '.'); dot >= 0 && k < 2 && !strings.ContainsAny(s, "eE") {
			prec = max(prec, len(s)-dot-1)
		}
	}
	if nums[1] == 0 {
		env.Errorf("seq", "invalid Zero increment value: %s", textQuote(incr))
		fmt.Fprintln(env.Stderr, "Try 'seq --help' for more information.")
		return 1
	}
	fmtOne := func(v float64) string {
		if format != "" {
			return fmt.Sprintf(format, v)
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	w := 0
	if width && format == "" {
		w = max(len(fmtOne(nums[0])), len(fmtOne(nums[2])))
	}
	out := bufio.NewWriter(env.Stdout)
	defer out.Flush()
	n := 0
	for k := 0; ; k++ {
		// Multiply rather than accumulate, so decimal steps do not drift.
		v := nums[0] + float64(k)*nums[1]
		if (nums[1] > 0 && v > nums[2]+1e-10*math.Abs(nums[1])) || (nums[1] < 0 && v < nums[2]-1e-10*math.Abs(nums[1])) {
			break
		}
		if k%1024 == 0 && (ctx.Err() != nil || out.Flush() != nil) {
			return 1
		}
		if n > 0 {
			out.WriteString(sep)
		}
		s := fmtOne(v)
		if w > 0 && len(s) < w {
			if strings.HasPrefix(s, "-") {
				s = "-" + strings.Repeat("0", w-len(s)) + s[1:]
			} else {
				s = strings.Repeat("0", w-len(s)) + s
			}
		}
		out.WriteString(s)
		n++
	}
	if n > 0 {
		out.WriteString("\n")
	}
	return 0
}

func textDate(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "uR", withArg: "dr",
		long: map[string]string{"--utc": "u", "--universal": "u", "--date": "d=", "--reference": "r=", "--rfc-email": "R"}})
	if err != nil {
		return textUsage(env, "date", err, 1)
	}
	loc := time.UTC
	if tz := env.Getenv("TZ"); tz != "" {
		if l, err := time.LoadLocation(tz); err == nil {
			loc = l
		}
	}
	now := time.Now()
	format := "%a %b %e %H:%M:%S %Z %Y"
	for _, o := range opts {
		switch o.Name {
		case "u":
			loc = time.UTC
		case "R":
			format = "%a, %d %b %Y %H:%M:%S %z"
		case "d":
			t, ok := textParseDate(o.Val, loc)
			if !ok {
				env.Errorf("date", "invalid date %s", textQuote(o.Val))
				return 1
			}
			now = t
		case "r":
			st, err := env.FS.Stat(env.Abs(o.Val))
			if err != nil {
				textFileErr(env, "date", o.Val, err)
				return 1
			}
			now = st.ModTime()
		}
	}
	for _, op := range ops {
		if !strings.HasPrefix(op, "+") {
			env.Errorf("date", "invalid date %s", textQuote(op))
			return 1
		}
		format = op[1:]
	}
	t := now.In(loc)
	// timefmt lacks %N (nanoseconds); expand it first, leaving "%%N" alone.
	format = strings.ReplaceAll(format, "%%", "\x00")
	format = strings.ReplaceAll(format, "%N", fmt.Sprintf("%09d", t.Nanosecond()))
	format = strings.ReplaceAll(format, "\x00", "%%")
	fmt.Fprintln(env.Stdout, timefmt.Format(t, format))
	return 0
}

// textParseDate understands what agents pass to date -d: @EPOCH, "now",
// ISO dates and date-times.
func textParseDate(s string, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "@") {
		f, err := strconv.ParseFloat(s[1:], 64)
		if err != nil {
			return time.Time{}, false
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)), true
	}
	if s == "now" || s == "" {
		return time.Now(), true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02", time.RFC1123Z, time.RFC1123} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
