package builtin

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

func init() {
	register("cut", textCut)
	register("paste", textPaste)
	register("tr", textTr)
}

// cutRange is an inclusive 1-based range; hi 0 means to the end.
type cutRange struct{ lo, hi int }

func parseCutList(s string) ([]cutRange, bool) {
	var out []cutRange
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		r := cutRange{}
		var err error
		if lo == "" {
			r.lo = 1
		} else if r.lo, err = strconv.Atoi(lo); err != nil || r.lo < 1 {
			return nil, false
		}
		switch {
		case !isRange:
			r.hi = r.lo
		case hi == "":
			if lo == "" {
				return nil, false
			}
			r.hi = 0
		default:
			if r.hi, err = strconv.Atoi(hi); err != nil || r.hi < r.lo {
				return nil, false
			}
		}
		out = append(out, r)
	}
	return out, true
}

func cutSelected(rs []cutRange, i int) bool {
	for _, r := range rs {
		if i >= r.lo && (r.hi == 0 || i <= r.hi) {
			return true
		}
	}
	return false
}

func textCut(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "nsz", withArg: "bcdf",
		long: map[string]string{"--bytes": "b=", "--characters": "c=", "--delimiter": "d=", "--fields": "f=",
			"--only-delimited": "s", "--complement": "--complement", "--output-delimiter": "--output-delimiter="}})
	if err != nil {
		return textUsage(env, "cut", err, 1)
	}
	mode, list, delim, onlyDelim, complement := "", "", "\t", false, false
	outDelim, haveOutDelim := "", false
	for _, o := range opts {
		switch o.Name {
		case "b", "c", "f":
			if mode != "" {
				env.Errorf("cut", "only one type of list may be specified")
				return 1
			}
			mode, list = o.Name, o.Val
		case "d":
			if len(o.Val) != 1 {
				env.Errorf("cut", "the delimiter must be a single character")
				fmt.Fprintln(env.Stderr, "Try 'cut --help' for more information.")
				return 1
			}
			delim = o.Val
		case "s":
			onlyDelim = true
		case "--complement":
			complement = true
		case "--output-delimiter":
			outDelim, haveOutDelim = o.Val, true
		}
	}
	if mode == "" {
		env.Errorf("cut", "you must specify a list of bytes, characters, or fields")
		fmt.Fprintln(env.Stderr, "Try 'cut --help' for more information.")
		return 1
	}
	ranges, okList := parseCutList(list)
	if !okList {
		env.Errorf("cut", "invalid field value %s", textQuote(list))
		fmt.Fprintln(env.Stderr, "Try 'cut --help' for more information.")
		return 1
	}
	if !haveOutDelim {
		outDelim = delim
		if mode != "f" {
			outDelim = ""
		}
	}
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	// cut ends every line with a newline, even a last one without.
	ok := textEachLine(ctx, env, "cut", ops, '\n', func(l []byte, _ bool) {
		if mode == "f" {
			if bytes.IndexByte(l, delim[0]) < 0 {
				if !onlyDelim {
					w.Write(l)
					w.WriteByte('\n')
				}
				return
			}
			first := true
			for k, f := range bytes.Split(l, []byte(delim)) {
				if cutSelected(ranges, k+1) != complement {
					if !first {
						w.WriteString(outDelim)
					}
					w.Write(f)
					first = false
				}
			}
		} else {
			// Byte positions; --output-delimiter goes between separate runs.
			prevSel, wrote := false, false
			for k := range l {
				sel := cutSelected(ranges, k+1) != complement
				if sel {
					if !prevSel && wrote {
						w.WriteString(outDelim)
					}
					w.WriteByte(l[k])
					wrote = true
				}
				prevSel = sel
			}
		}
		w.WriteByte('\n')
	})
	return textStatus(ok)
}

// textUnescapeList reads paste's -d list: \n \t \\ and \0 (empty).
func textUnescapeList(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				out = append(out, "\n")
			case 't':
				out = append(out, "\t")
			case '0':
				out = append(out, "")
			default:
				out = append(out, string(s[i]))
			}
			continue
		}
		out = append(out, string(s[i]))
	}
	return out
}

func textPaste(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "sz", withArg: "d",
		long: map[string]string{"--serial": "s", "--delimiters": "d="}})
	if err != nil {
		return textUsage(env, "paste", err, 1)
	}
	delims, serial := []string{"\t"}, false
	for _, o := range opts {
		switch o.Name {
		case "s":
			serial = true
		case "d":
			delims = textUnescapeList(o.Val)
			if len(delims) == 0 {
				delims = []string{""}
			}
		}
	}
	if len(ops) == 0 {
		ops = []string{"-"}
	}
	// Every "-" shares standard input, taking turns line by line: one
	// reader serves them all.
	readers := make([]*textLineReader, len(ops))
	var stdin *textLineReader
	ok := true
	for i, name := range ops {
		if name == "-" {
			if stdin == nil {
				stdin = newTextLineReader(ctx, env, env.Stdin, '\n')
			}
			readers[i] = stdin
			continue
		}
		r, err := textOpen(env, name)
		if err != nil {
			textFileErr(env, "paste", name, err)
			ok = false
			continue
		}
		defer r.Close()
		readers[i] = newTextLineReader(ctx, env, r, '\n')
	}
	if !ok {
		return 1
	}
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	failed := func() int {
		for _, r := range readers {
			if r.err != nil {
				env.Errorf("paste", "%v", r.err)
				return 1
			}
		}
		return 0
	}
	if serial {
		for _, r := range readers {
			k := 0
			for l, _, more := r.next(); more; l, _, more = r.next() {
				if k > 0 {
					w.WriteString(delims[(k-1)%len(delims)])
				}
				w.Write(l)
				k++
			}
			w.WriteByte('\n')
		}
		return failed()
	}
	// A row is built before it is written: when every input has ended,
	// no row is.
	var row []byte
	mem := memGauge{env: env}
	for ctx.Err() == nil {
		row = row[:0]
		any := false
		for i, r := range readers {
			if i > 0 {
				row = append(row, delims[(i-1)%len(delims)]...)
			}
			if l, _, more := r.next(); more {
				row = append(row, l...)
				any = true
			}
		}
		if !any {
			return failed()
		}
		if err := mem.set(int64(cap(row))); err != nil {
			env.Errorf("paste", "%v", err)
			return 1
		}
		w.Write(row)
		w.WriteByte('\n')
	}
	return 1
}

// trClasses are the POSIX classes tr knows, in the C locale.
var trClasses = map[string]func(byte) bool{
	"alpha":  func(c byte) bool { return isTextLetter(c) },
	"digit":  func(c byte) bool { return c >= '0' && c <= '9' },
	"alnum":  func(c byte) bool { return isTextLetter(c) || c >= '0' && c <= '9' },
	"upper":  func(c byte) bool { return c >= 'A' && c <= 'Z' },
	"lower":  func(c byte) bool { return c >= 'a' && c <= 'z' },
	"space":  func(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' },
	"blank":  func(c byte) bool { return c == ' ' || c == '\t' },
	"punct":  func(c byte) bool { return c > 32 && c < 127 && !isTextLetter(c) && !(c >= '0' && c <= '9') },
	"print":  func(c byte) bool { return c >= 32 && c < 127 },
	"graph":  func(c byte) bool { return c > 32 && c < 127 },
	"cntrl":  func(c byte) bool { return c < 32 || c == 127 },
	"xdigit": func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' },
}

// trExpand turns a tr SET into its bytes: escapes, ranges, classes and
// [c*n] repeats (n empty: fill up to fill bytes). fill is -1 for SET1,
// whose repeats all count (each byte maps by its last position); grow
// charges them.
func trExpand(set string, fill int, grow func(int64) error) ([]byte, error) {
	var out []byte
	unesc := func(i int) (byte, int) {
		if set[i] != '\\' || i+1 >= len(set) {
			return set[i], i + 1
		}
		c := set[i+1]
		if k := strings.IndexByte("ntrabfv", c); k >= 0 {
			return "\n\t\r\a\b\f\v"[k], i + 2
		}
		if c >= '0' && c <= '7' {
			j, v := i+1, 0
			for j < len(set) && j < i+4 && set[j] >= '0' && set[j] <= '7' {
				v = v*8 + int(set[j]-'0')
				j++
			}
			return byte(v), j
		}
		return c, i + 2
	}
	for i := 0; i < len(set); {
		if strings.HasPrefix(set[i:], "[:") {
			if end := strings.Index(set[i+2:], ":]"); end >= 0 {
				name := set[i+2 : i+2+end]
				f, ok := trClasses[name]
				if !ok {
					return nil, fmt.Errorf("invalid character class %s", textQuote(name))
				}
				for c := 0; c < 256; c++ {
					if f(byte(c)) {
						out = append(out, byte(c))
					}
				}
				i += 2 + end + 2
				continue
			}
		}
		if set[i] == '[' && i+2 < len(set) {
			c, j := unesc(i + 1)
			if j < len(set) && set[j] == '*' {
				if end := strings.IndexByte(set[j:], ']'); end >= 0 {
					nStr := set[j+1 : j+end]
					n := 0
					if nStr != "" {
						v, err := strconv.ParseInt(nStr, 0, 32)
						if err != nil {
							return nil, fmt.Errorf("invalid repeat count %s in [c*n] construct", textQuote(nStr))
						}
						n = int(v)
						if fill >= 0 {
							// SET2 is used up to SET1's length: a count of
							// 10^9 need not allocate a GiB.
							n = min(n, max(0, fill-len(out)))
						}
					} else {
						n = max(0, fill-len(out))
					}
					if err := grow(int64(n)); err != nil {
						return nil, err
					}
					out = append(out, bytes.Repeat([]byte{c}, n)...)
					i = j + end + 1
					continue
				}
			}
		}
		c, j := unesc(i)
		if j < len(set) && set[j] == '-' && j+1 < len(set) {
			hi, k := unesc(j + 1)
			if hi < c {
				return nil, fmt.Errorf("range-endpoints of '%c-%c' are in reverse collating sequence order", c, hi)
			}
			for x := int(c); x <= int(hi); x++ {
				out = append(out, byte(x))
			}
			i = k
			continue
		}
		out = append(out, c)
		i = j
	}
	return out, nil
}

func textTr(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "cCdst",
		long: map[string]string{"--complement": "c", "--delete": "d", "--squeeze-repeats": "s", "--truncate-set1": "t"}})
	if err != nil {
		return textUsage(env, "tr", err, 1)
	}
	complement, del, squeeze, truncate := false, false, false, false
	for _, o := range opts {
		switch o.Name {
		case "c", "C":
			complement = true
		case "d":
			del = true
		case "s":
			squeeze = true
		case "t":
			truncate = true
		}
	}
	need := 2
	if del && !squeeze || squeeze && !del && len(ops) == 1 {
		need = 1
	}
	if len(ops) < need {
		if len(ops) == 0 {
			env.Errorf("tr", "missing operand")
		} else {
			env.Errorf("tr", "missing operand after %s", textQuote(ops[len(ops)-1]))
		}
		fmt.Fprintln(env.Stderr, "Try 'tr --help' for more information.")
		return 1
	}
	if len(ops) > need {
		env.Errorf("tr", "extra operand %s", textQuote(ops[need]))
		fmt.Fprintln(env.Stderr, "Try 'tr --help' for more information.")
		return 1
	}
	set1, err := trExpand(ops[0], -1, env.grow)
	if err != nil {
		env.Errorf("tr", "%v", err)
		return 1
	}
	var in1 [256]bool
	for _, c := range set1 {
		in1[c] = true
	}
	if complement {
		set1 = set1[:0]
		for c := 0; c < 256; c++ {
			if !in1[c] {
				set1 = append(set1, byte(c))
			}
			in1[c] = !in1[c]
		}
	}
	var set2 []byte
	if len(ops) == 2 {
		if set2, err = trExpand(ops[1], len(set1), env.grow); err != nil {
			env.Errorf("tr", "%v", err)
			return 1
		}
	}
	var xlate [256]byte
	for c := range xlate {
		xlate[c] = byte(c)
	}
	translating := !del && len(set2) > 0
	if translating {
		if truncate && len(set1) > len(set2) {
			set1 = set1[:len(set2)]
		}
		for i, c := range set1 {
			xlate[c] = set2[min(i, len(set2)-1)]
		}
	} else if !del && len(ops) == 2 && len(set2) == 0 {
		env.Errorf("tr", "when not truncating set1, string2 must be non-empty")
		return 1
	}
	// Squeezing applies to the last set given.
	var sq [256]bool
	sqSet := set1
	if len(ops) == 2 {
		sqSet = set2
	}
	if squeeze {
		for _, c := range sqSet {
			sq[c] = true
		}
		if len(ops) == 1 && complement {
			sq = in1
		}
	}
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	buf := make([]byte, 32*1024)
	last := -1
	for ctx.Err() == nil {
		n, rerr := env.Stdin.Read(buf)
		for _, c := range buf[:n] {
			if del && in1[c] {
				continue
			}
			c = xlate[c]
			if squeeze && sq[c] && last == int(c) {
				continue
			}
			last = int(c)
			w.WriteByte(c)
		}
		if rerr != nil {
			break
		}
	}
	return 0
}
