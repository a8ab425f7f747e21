package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

func init() {
	register("sort", textSort)
	register("uniq", textUniq)
	register("comm", textComm)
}

// sortKey is one -k field spec; opts are its own ordering letters.
type sortKey struct {
	f1, c1, f2, c2 int // 1-based; f2 0 means end of line, c2 0 end of field
	opts           string
}

type sortRun struct {
	keys   []sortKey
	global string // global ordering letters (bdfghinrV)
	sep    byte   // 0: runs of blanks
	stable bool
}

func textSort(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "bcCdfghiMnrRsuVz", withArg: "ktoST",
		long: map[string]string{"--ignore-leading-blanks": "b", "--check": "c", "--dictionary-order": "d",
			"--ignore-case": "f", "--general-numeric-sort": "g", "--human-numeric-sort": "h",
			"--ignore-nonprinting": "i", "--numeric-sort": "n", "--reverse": "r", "--stable": "s",
			"--unique": "u", "--version-sort": "V", "--key": "k=", "--field-separator": "t=",
			"--output": "o=", "--buffer-size": "S=", "--temporary-directory": "T=", "--zero-terminated": "z",
			"--parallel": "--parallel="}})
	if err != nil {
		return textUsage(env, "sort", err, 2)
	}
	s := &sortRun{}
	unique, check, output, recSep := false, false, "", byte('\n')
	for _, o := range opts {
		switch o.Name {
		case "b", "d", "f", "g", "h", "i", "M", "n", "r", "V", "R":
			s.global += o.Name
		case "c", "C":
			check = true
		case "s":
			s.stable = true
		case "u":
			unique = true
		case "z":
			recSep = 0
		case "o":
			output = o.Val
		case "t":
			v := strings.ReplaceAll(o.Val, `\0`, "\x00")
			if len(v) != 1 {
				env.Errorf("sort", "multi-character tab %s", textQuote(o.Val))
				return 2
			}
			s.sep = v[0]
		case "k":
			k, ok := parseSortKey(o.Val)
			if !ok {
				env.Errorf("sort", "invalid number at field start: invalid count at start of %s", textQuote(o.Val))
				return 2
			}
			s.keys = append(s.keys, k)
		}
	}
	data, ok := textInputs(ctx, env, "sort", ops)
	if !ok {
		return 2
	}
	lines, _, err := textHoldLines(ctx, env, data, recSep)
	if err != nil {
		env.Errorf("sort", "%v", err)
		return 2
	}
	// -u compares keys only: the first of equal lines is kept.
	s.stable = s.stable || unique
	if check {
		for i := 1; i < len(lines); i++ {
			c := s.compare(lines[i-1], lines[i])
			if c > 0 || (unique && c == 0) {
				name := "-"
				if len(ops) > 0 {
					name = ops[0]
				}
				fmt.Fprintf(env.Stderr, "sort: %s:%d: disorder: %s\n", name, i+1, lines[i])
				return 1
			}
		}
		return 0
	}
	if !sortCancellable(ctx, lines, func(a, b []byte) int { return s.compare(a, b) }) {
		return 2
	}
	if unique {
		out := lines[:0]
		for i, l := range lines {
			if i == 0 || s.compareKeys(out[len(out)-1], l) != 0 {
				out = append(out, l)
			}
		}
		lines = out
	}
	var w io.Writer = env.Stdout
	if output != "" {
		f, err := env.FS.OpenFile(env.Abs(output), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, textCreatePerm)
		if err != nil {
			env.Errorf("sort", "open failed: %s: %s", output, textStrerror(err))
			return 2
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		if ctx.Err() != nil {
			break
		}
		bw.Write(l)
		bw.WriteByte(recSep)
	}
	if err := bw.Flush(); err != nil {
		env.Errorf("sort", "write failed: %s", textStrerror(err))
		return 2
	}
	return 0
}

// parseSortKey reads "F[.C][opts][,F[.C][opts]]".
func parseSortKey(spec string) (sortKey, bool) {
	var k sortKey
	parsePos := func(s string) (f, c int, opts string, ok bool) {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		f, err := strconv.Atoi(s[:i])
		if err != nil {
			return 0, 0, "", false
		}
		if i < len(s) && s[i] == '.' {
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if c, err = strconv.Atoi(s[i+1 : j]); err != nil {
				return 0, 0, "", false
			}
			i = j
		}
		opts = s[i:]
		return f, c, opts, strings.Trim(opts, "bdfghiMnrRV") == ""
	}
	start, end, hasEnd := strings.Cut(spec, ",")
	var o1, o2 string
	var ok bool
	if k.f1, k.c1, o1, ok = parsePos(start); !ok || k.f1 < 1 {
		return k, false
	}
	if hasEnd {
		if k.f2, k.c2, o2, ok = parsePos(end); !ok || k.f2 < 1 {
			return k, false
		}
	}
	k.opts = o1 + o2
	return k, true
}

func sortBlank(c byte) bool { return c == ' ' || c == '\t' }

// fields splits a line into [start,end) offsets of each field. Without a
// separator a field is its leading blanks plus the non-blanks after them.
func (s *sortRun) fields(line []byte) [][2]int {
	var out [][2]int
	if s.sep != 0 {
		start := 0
		for i, c := range line {
			if c == s.sep {
				out = append(out, [2]int{start, i})
				start = i + 1
			}
		}
		return append(out, [2]int{start, len(line)})
	}
	i := 0
	for i < len(line) {
		start := i
		for i < len(line) && sortBlank(line[i]) {
			i++
		}
		for i < len(line) && !sortBlank(line[i]) {
			i++
		}
		out = append(out, [2]int{start, i})
	}
	return out
}

// keyText extracts the key k from line.
func (s *sortRun) keyText(line []byte, k sortKey, skipBlanks bool) []byte {
	f := s.fields(line)
	if k.f1 > len(f) {
		return nil
	}
	begin := f[k.f1-1][0]
	if skipBlanks {
		for begin < len(line) && sortBlank(line[begin]) {
			begin++
		}
	}
	if k.c1 > 0 {
		begin = min(begin+k.c1-1, len(line))
	}
	end := len(line)
	if k.f2 > 0 && k.f2 <= len(f) {
		if k.c2 == 0 {
			end = f[k.f2-1][1]
		} else {
			fs := f[k.f2-1][0]
			if skipBlanks {
				for fs < len(line) && sortBlank(line[fs]) {
					fs++
				}
			}
			end = min(fs+k.c2, f[k.f2-1][1])
		}
	}
	if end < begin {
		return nil
	}
	return line[begin:end]
}

func (s *sortRun) compareKeys(a, b []byte) int {
	if len(s.keys) == 0 {
		return sortCompare(a, b, s.global)
	}
	for _, k := range s.keys {
		opts := k.opts
		if opts == "" {
			opts = s.global
		}
		skip := strings.Contains(opts, "b")
		if c := sortCompare(s.keyText(a, k, skip), s.keyText(b, k, skip), opts); c != 0 {
			return c
		}
	}
	return 0
}

// compare orders two lines: keys first, then the whole line bytewise as a
// last resort unless -s (or -u, which compares keys only).
func (s *sortRun) compare(a, b []byte) int {
	if c := s.compareKeys(a, b); c != 0 {
		return c
	}
	if s.stable {
		return 0
	}
	c := bytes.Compare(a, b)
	if strings.Contains(s.global, "r") {
		c = -c
	}
	return c
}

// sortCompare compares two keys under ordering letters opts.
func sortCompare(a, b []byte, opts string) int {
	rev := strings.Contains(opts, "r")
	if strings.Contains(opts, "b") {
		a, b = bytes.TrimLeft(a, " \t"), bytes.TrimLeft(b, " \t")
	}
	if strings.Contains(opts, "d") || strings.Contains(opts, "i") {
		keep := func(c byte) bool {
			if strings.Contains(opts, "d") {
				return sortBlank(c) || isTextAlnum(c) && c != '_'
			}
			return c >= 32 && c < 127
		}
		filter := func(s []byte) []byte {
			var out []byte
			for _, c := range s {
				if keep(c) {
					out = append(out, c)
				}
			}
			return out
		}
		a, b = filter(a), filter(b)
	}
	if strings.Contains(opts, "f") {
		a, b = bytes.ToUpper(a), bytes.ToUpper(b)
	}
	var c int
	switch {
	case strings.Contains(opts, "n"):
		c = sortNumeric(a, b)
	case strings.Contains(opts, "g"):
		c = sortGeneral(a, b)
	case strings.Contains(opts, "h"):
		c = sortHuman(a, b)
	case strings.Contains(opts, "V"):
		c = sortVersion(string(a), string(b))
	default:
		c = bytes.Compare(a, b)
	}
	if rev {
		c = -c
	}
	return c
}

// sortNumPrefix returns the leading number of s ("-12.5abc" → "-12.5").
func sortNumPrefix(s []byte) string {
	s = bytes.TrimLeft(s, " \t")
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := false
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') {
		i++
		digits = true
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits = true
		}
	}
	if !digits {
		return "0"
	}
	return string(s[:i])
}

func sortNumeric(a, b []byte) int {
	x, _ := strconv.ParseFloat(sortNumPrefix(a), 64)
	y, _ := strconv.ParseFloat(sortNumPrefix(b), 64)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// sortFloat reads the longest leading number the way strtod does,
// including hexadecimal ("0x10").
func sortFloat(s []byte) (float64, error) {
	t := strings.TrimSpace(string(s))
	if v, err := strconv.ParseFloat(t, 64); err == nil {
		return v, nil
	}
	if v, err := strconv.ParseInt(t, 0, 64); err == nil {
		return float64(v), nil
	}
	for end := len(t) - 1; end > 0; end-- {
		if v, err := strconv.ParseFloat(t[:end], 64); err == nil {
			return v, nil
		}
	}
	return 0, strconv.ErrSyntax
}

// sortGeneral is -g: floats, with non-numbers first.
func sortGeneral(a, b []byte) int {
	x, errx := sortFloat(a)
	y, erry := sortFloat(b)
	switch {
	case errx != nil && erry != nil:
		return 0
	case errx != nil:
		return -1
	case erry != nil:
		return 1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// sortHuman is -h: the SI suffix ranks first, then the number.
func sortHuman(a, b []byte) int {
	rank := func(s []byte) (int, float64) {
		num := sortNumPrefix(s)
		v, _ := strconv.ParseFloat(num, 64)
		rest := bytes.TrimLeft(s, " \t")[min(len(num), len(bytes.TrimLeft(s, " \t"))):]
		r := 0
		if len(rest) > 0 {
			r = strings.IndexByte("KMGTPEZY", rest[0]&^0x20) + 1
			if rest[0] == 'k' {
				r = 1
			}
		}
		if v < 0 {
			r = -r
		}
		return r, v
	}
	ra, va := rank(a)
	rb, vb := rank(b)
	switch {
	case ra != rb:
		if ra < rb {
			return -1
		}
		return 1
	case va < vb:
		return -1
	case va > vb:
		return 1
	}
	return 0
}

// sortVersion compares digit runs numerically and the rest bytewise.
func sortVersion(a, b string) int {
	for a != "" && b != "" {
		da, db := a[0] >= '0' && a[0] <= '9', b[0] >= '0' && b[0] <= '9'
		if da && db {
			i, j := 0, 0
			for i < len(a) && a[i] >= '0' && a[i] <= '9' {
				i++
			}
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			na, nb := strings.TrimLeft(a[:i], "0"), strings.TrimLeft(b[:j], "0")
			if len(na) != len(nb) {
				if len(na) < len(nb) {
					return -1
				}
				return 1
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[i:], b[j:]
			continue
		}
		if a[0] != b[0] {
			// Letters sort before other characters, as in GNU's filevercmp.
			la, lb := isTextLetter(a[0]), isTextLetter(b[0])
			switch {
			case da:
				return -1
			case db:
				return 1
			case la && !lb:
				return -1
			case lb && !la:
				return 1
			case a[0] < b[0]:
				return -1
			}
			return 1
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func isTextLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func textUniq(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "cdDiuz", withArg: "fsw",
		long: map[string]string{"--count": "c", "--repeated": "d", "--all-repeated": "D", "--ignore-case": "i",
			"--unique": "u", "--skip-fields": "f=", "--skip-chars": "s=", "--check-chars": "w="}})
	if err != nil {
		return textUsage(env, "uniq", err, 1)
	}
	count, dupOnly, allDup, icase, uniqOnly := false, false, false, false, false
	skipF, skipC, checkW := 0, 0, -1
	for _, o := range opts {
		switch o.Name {
		case "c":
			count = true
		case "d":
			dupOnly = true
		case "D":
			allDup = true
		case "i":
			icase = true
		case "u":
			uniqOnly = true
		case "f", "s", "w":
			n, err := strconv.Atoi(o.Val)
			if err != nil || n < 0 {
				env.Errorf("uniq", "%s: invalid number", o.Val)
				return 1
			}
			switch o.Name {
			case "f":
				skipF = n
			case "s":
				skipC = n
			case "w":
				checkW = n
			}
		}
	}
	if len(ops) > 2 {
		env.Errorf("uniq", "extra operand %s", textQuote(ops[2]))
		return 1
	}
	in := "-"
	if len(ops) > 0 {
		in = ops[0]
	}
	r, err := textOpen(env, in)
	if err != nil {
		textFileErr(env, "uniq", in, err)
		return 1
	}
	defer r.Close()
	var w io.Writer = env.Stdout
	if len(ops) == 2 && ops[1] != "-" {
		f, err := env.FS.OpenFile(env.Abs(ops[1]), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, textCreatePerm)
		if err != nil {
			textFileErr(env, "uniq", ops[1], err)
			return 1
		}
		defer f.Close()
		w = f
	}
	key := func(l []byte) []byte {
		for f := 0; f < skipF; f++ {
			i := 0
			for i < len(l) && sortBlank(l[i]) {
				i++
			}
			for i < len(l) && !sortBlank(l[i]) {
				i++
			}
			l = l[i:]
		}
		l = l[min(skipC, len(l)):]
		if checkW >= 0 {
			l = l[:min(checkW, len(l))]
		}
		if icase {
			l = bytes.ToLower(l)
		}
		return l
	}
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	// One group of equal lines at a time: its first line, and all of them
	// for -D, which is what is charged.
	var group [][]byte
	mem := memGauge{env: env}
	held := int64(0)
	n := 0
	flush := func() {
		show := !(dupOnly && n < 2) && !(uniqOnly && n > 1) && !(allDup && n < 2)
		if show {
			for _, l := range group {
				if count {
					fmt.Fprintf(bw, "%7d ", n)
				}
				bw.Write(l)
				bw.WriteByte('\n')
			}
		}
	}
	lr := newTextLineReader(ctx, env, r, '\n')
	for l, _, ok := lr.next(); ok; l, _, ok = lr.next() {
		if n > 0 && bytes.Equal(key(group[0]), key(l)) {
			n++
			if !allDup {
				continue
			}
		} else {
			if n > 0 {
				flush()
			}
			group, held, n = group[:0], 0, 1
		}
		group = append(group, bytes.Clone(l))
		held += lineHeader + int64(len(l))
		if err := mem.set(held); err != nil {
			env.Errorf("uniq", "%v", err)
			return 1
		}
	}
	if lr.err != nil {
		env.Errorf("uniq", "%v", lr.err)
		return 1
	}
	if n > 0 {
		flush()
	}
	return 0
}

// commOrder is comm's order checking: by default only once a line has no
// pair (GNU's rule), always with --check-order, never with --nocheck-order.
type commOrder int

const (
	commOrderDefault commOrder = iota
	commOrderEnabled
	commOrderDisabled
)

// textComm merges two sorted inputs a line at a time, as GNU comm does:
// it holds the current and the previous line of each, whatever their size.
func textComm(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "123",
		long: map[string]string{"--output-delimiter": "--output-delimiter=", "--check-order": "--check-order",
			"--nocheck-order": "--nocheck-order", "--total": "--total"}})
	if err != nil {
		return textUsage(env, "comm", err, 1)
	}
	var hide [4]bool
	delim, order, total := "\t", commOrderDefault, false
	for _, o := range opts {
		switch o.Name {
		case "1", "2", "3":
			hide[o.Name[0]-'0'] = true
		case "--output-delimiter":
			delim = o.Val
		case "--check-order":
			order = commOrderEnabled
		case "--nocheck-order":
			order = commOrderDisabled
		case "--total":
			total = true
		}
	}
	if len(ops) != 2 {
		if len(ops) < 2 {
			env.Errorf("comm", "missing operand")
		} else {
			env.Errorf("comm", "extra operand %s", textQuote(ops[2]))
		}
		return 1
	}
	var in [2]*textLineReader
	for i, name := range ops {
		r, err := textOpen(env, name)
		if err != nil {
			textFileErr(env, "comm", name, err)
			return 1
		}
		defer r.Close()
		in[i] = newTextLineReader(ctx, env, r, '\n')
	}
	bw := bufio.NewWriter(env.Stdout)
	defer bw.Flush()
	// cur and prev are each input's current and previous line, copied
	// out of the reader's buffer; has tells whether cur holds one.
	var cur, prev [2][]byte
	var has [2]bool
	read := func(i int) {
		line, _, ok := in[i].next()
		has[i] = ok
		cur[i] = append(cur[i][:0], line...)
	}
	var counts [4]int
	emit := func(col int, l []byte) {
		counts[col]++
		if hide[col] {
			return
		}
		for c := 1; c < col; c++ {
			if !hide[c] {
				bw.WriteString(delim)
			}
		}
		bw.Write(l)
		bw.WriteByte('\n')
	}
	var warned [2]bool
	unpairable := false
	read(0)
	read(1)
	for has[0] || has[1] {
		cmp := 0
		switch {
		case !has[0]:
			cmp = 1
		case !has[1]:
			cmp = -1
		default:
			cmp = bytes.Compare(cur[0], cur[1])
		}
		switch {
		case cmp == 0:
			emit(3, cur[0])
		case cmp < 0:
			unpairable = true
			emit(1, cur[0])
		default:
			unpairable = true
			emit(2, cur[1])
		}
		for i := range 2 {
			if cmp == 0 || (cmp < 0) == (i == 0) {
				prev[i], cur[i] = cur[i], prev[i]
				read(i)
				check := order == commOrderEnabled || order == commOrderDefault && unpairable
				if has[i] && check && !warned[i] && bytes.Compare(prev[i], cur[i]) > 0 {
					bw.Flush()
					env.Errorf("comm", "file %d is not in sorted order", i+1)
					warned[i] = true
					if order == commOrderEnabled {
						return 1
					}
				}
			}
		}
	}
	for i, r := range in {
		if r.err != nil {
			bw.Flush()
			env.Errorf("comm", "%s: %v", ops[i], r.err)
			return 1
		}
	}
	if err := ctx.Err(); err != nil {
		return 1
	}
	if total {
		fmt.Fprintf(bw, "%d%s%d%s%d%stotal\n", counts[1], delim, counts[2], delim, counts[3], delim)
	}
	if warned[0] || warned[1] {
		bw.Flush()
		env.Errorf("comm", "input is not in sorted order")
		return 1
	}
	return 0
}

// errSortCancelled unwinds a sort whose exec ended.
var errSortCancelled = errors.New("sort cancelled")

// sortCancellable sorts lines stably unless ctx ends first, which it checks
// every few thousand comparisons: a sort of millions of lines takes
// seconds, and the standard library's cannot be stopped otherwise than by
// a panic from the comparison. It reports whether the sort completed.
func sortCancellable(ctx context.Context, lines [][]byte, cmp func(a, b []byte) int) (done bool) {
	defer func() {
		if p := recover(); p != nil {
			if p != errSortCancelled {
				panic(p)
			}
			done = false
		}
	}()
	n := 0
	slices.SortStableFunc(lines, func(a, b []byte) int {
		if n++; n%4096 == 0 && ctx.Err() != nil {
			panic(errSortCancelled)
		}
		return cmp(a, b)
	})
	return true
}
