package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sqlfs/sqlfs/internal/diffspan"
)

func init() { register("diff", textDiff) }

type diffRun struct {
	env                          *Env
	out                          *bufio.Writer
	unified                      bool
	context                      int
	brief, recursive, newFile    bool
	icase, ignoreAllSpace, space bool
	ignoreBlank, reportSame      bool
	labels                       []string
	cmdline                      string // "diff -ru" as typed, for -r headers
	trouble                      bool
}

// diffHunk replaces lines [Start, End) of the first file with lines
// [ReplStart, ReplEnd) of the second.
type diffHunk struct{ Start, End, ReplStart, ReplEnd int }

// textDiff is diff: normal and unified output, -q, -r over directories.
// Lines are matched by a port of GNU diff's own algorithm (diffMark), so
// that among equally short diffs it shows the one GNU shows.
func textDiff(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "uqrNiwbBsaT", withArg: "U",
		long: map[string]string{"--unified": "U?", "--brief": "q", "--recursive": "r", "--new-file": "N",
			"--ignore-case": "i", "--ignore-all-space": "w", "--ignore-space-change": "b", "--ignore-blank-lines": "B",
			"--report-identical-files": "s", "--text": "a", "--label": "--label=", "--color": "--color?"}})
	if err != nil {
		env.Errorf("diff", "%s", strings.TrimPrefix(err.Error(), errTextUsage.Error()+": "))
		env.Errorf("diff", "Try 'diff --help' for more information.")
		return 2
	}
	d := &diffRun{env: env, context: 3}
	var shown []string
	for _, o := range opts {
		switch o.Name {
		case "u":
			d.unified = true
		case "U":
			d.unified = true
			if o.Val != "" {
				n, err := strconv.Atoi(o.Val)
				if err != nil || n < 0 {
					env.Errorf("diff", "invalid context length '%s'", o.Val)
					return 2
				}
				d.context = n
			}
		case "q":
			d.brief = true
		case "r":
			d.recursive = true
		case "N":
			d.newFile = true
		case "i":
			d.icase = true
		case "w":
			d.ignoreAllSpace = true
		case "b":
			d.space = true
		case "B":
			d.ignoreBlank = true
		case "s":
			d.reportSame = true
		case "--label":
			d.labels = append(d.labels, o.Val)
		}
	}
	// -r prints the options as typed before each pair of files.
	for i, a := range args[1:] {
		prev := args[i]
		if strings.HasPrefix(a, "-") && a != "-" || prev == "--label" || prev == "-U" {
			shown = append(shown, a)
		}
	}
	d.cmdline = strings.Join(append([]string{"diff"}, shown...), " ")
	if len(ops) != 2 {
		if len(ops) < 2 {
			env.Errorf("diff", "missing operand after '%s'", args[len(args)-1])
		} else {
			env.Errorf("diff", "extra operand '%s'", ops[2])
		}
		env.Errorf("diff", "Try 'diff --help' for more information.")
		return 2
	}
	d.out = bufio.NewWriter(env.Stdout)
	differ := d.compare(ctx, ops[0], ops[1], true)
	d.out.Flush()
	switch {
	case d.trouble:
		return 2
	case differ:
		return 1
	}
	return 0
}

func (d *diffRun) stat(name string) (fs.FileInfo, error) {
	if name == "-" {
		return nil, nil
	}
	return d.env.FS.Stat(d.env.Abs(name))
}

// compare diffs two operands; top is true for the command line ones.
func (d *diffRun) compare(ctx context.Context, a, b string, top bool) bool {
	if ctx.Err() != nil {
		return false
	}
	sa, errA := d.stat(a)
	sb, errB := d.stat(b)
	if top && errA == nil && errB == nil && sa != nil && sb != nil && sa.IsDir() != sb.IsDir() {
		// "diff dir file" compares dir/file.
		if sa.IsDir() {
			a = path.Join(a, path.Base(b))
		} else {
			b = path.Join(b, path.Base(a))
		}
		sa, errA = d.stat(a)
		sb, errB = d.stat(b)
	}
	if errA != nil && !(d.newFile && errB == nil) {
		textFileErr(d.env, "diff", a, errA)
		d.trouble = true
		return false
	}
	if errB != nil && !(d.newFile && errA == nil) {
		textFileErr(d.env, "diff", b, errB)
		d.trouble = true
		return false
	}
	if sa != nil && sb != nil && sa.IsDir() && sb.IsDir() {
		return d.compareDirs(ctx, a, b)
	}
	var dataA, dataB []byte
	if errA == nil {
		if dataA, errA = textReadAll(ctx, d.env, a); errA != nil {
			textFileErr(d.env, "diff", a, errA)
			d.trouble = true
			return false
		}
	}
	if errB == nil {
		if dataB, errB = textReadAll(ctx, d.env, b); errB != nil {
			textFileErr(d.env, "diff", b, errB)
			d.trouble = true
			return false
		}
	}
	if bytes.Equal(dataA, dataB) {
		if d.reportSame {
			fmt.Fprintf(d.out, "Files %s and %s are identical\n", a, b)
		}
		return false
	}
	if d.brief {
		fmt.Fprintf(d.out, "Files %s and %s differ\n", a, b)
		return true
	}
	if bytes.IndexByte(dataA, 0) >= 0 || bytes.IndexByte(dataB, 0) >= 0 {
		fmt.Fprintf(d.out, "Binary files %s and %s differ\n", a, b)
		return true
	}
	linesA, nlA, errA := textHoldLines(ctx, d.env, dataA, '\n')
	linesB, nlB, errB := textHoldLines(ctx, d.env, dataB, '\n')
	if err := errors.Join(errA, errB); err != nil {
		d.env.Errorf("diff", "%v", err)
		d.trouble = true
		return false
	}
	diffs, err := d.lineDiffs(ctx, linesA, linesB, nlA, nlB)
	if err != nil {
		d.trouble = true
		return false
	}
	if len(diffs) == 0 {
		return false
	}
	if !top {
		na, nb := a, b
		if len(d.labels) > 1 {
			na, nb = d.labels[0], d.labels[1]
		}
		fmt.Fprintf(d.out, "%s %s %s\n", d.cmdline, na, nb)
	}
	if d.unified {
		d.writeUnified(ctx, a, b, sa, sb, linesA, linesB, nlA, nlB, diffs)
	} else {
		d.writeNormal(ctx, linesA, linesB, nlA, nlB, diffs)
	}
	return true
}

func (d *diffRun) compareDirs(ctx context.Context, a, b string) bool {
	list := func(dir string) map[string]fs.DirEntry {
		entries, err := d.env.FS.ReadDir(d.env.Abs(dir))
		if err != nil {
			textFileErr(d.env, "diff", dir, err)
			d.trouble = true
		}
		m := map[string]fs.DirEntry{}
		for _, e := range entries {
			m[e.Name()] = e
		}
		return m
	}
	ea, eb := list(a), list(b)
	names := map[string]bool{}
	for n := range ea {
		names[n] = true
	}
	for n := range eb {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	differ := false
	for _, n := range sorted {
		pa, pb := path.Join(a, n), path.Join(b, n)
		_, inA := ea[n]
		_, inB := eb[n]
		switch {
		case !inA && !d.newFile:
			fmt.Fprintf(d.out, "Only in %s: %s\n", b, n)
			differ = true
			continue
		case !inB && !d.newFile:
			fmt.Fprintf(d.out, "Only in %s: %s\n", a, n)
			differ = true
			continue
		}
		sa, _ := d.stat(pa)
		sb, _ := d.stat(pb)
		if sa != nil && sb != nil && sa.IsDir() != sb.IsDir() {
			kind := func(st fs.FileInfo) string {
				if st.IsDir() {
					return "directory"
				}
				if st.Size() == 0 {
					return "regular empty file"
				}
				return "regular file"
			}
			fmt.Fprintf(d.out, "File %s is a %s while file %s is a %s\n", pa, kind(sa), pb, kind(sb))
			differ = true
			continue
		}
		if (sa != nil && sa.IsDir() || sb != nil && sb.IsDir()) && !d.recursive {
			fmt.Fprintf(d.out, "Common subdirectories: %s and %s\n", pa, pb)
			continue
		}
		if d.compare(ctx, pa, pb, false) {
			differ = true
		}
	}
	return differ
}

// lineDiffs compares lines under the -i -w -b -B rules.
func (d *diffRun) lineDiffs(ctx context.Context, a, b [][]byte, nlA, nlB bool) ([]diffHunk, error) {
	key := func(l []byte) string {
		s := string(l)
		if d.icase {
			s = strings.ToLower(s)
		}
		switch {
		case d.ignoreAllSpace:
			s = strings.Join(strings.Fields(s), "")
		case d.space:
			s = strings.Join(strings.Fields(s), " ")
			if len(l) > 0 && (l[0] == ' ' || l[0] == '\t') {
				s = " " + s
			}
		}
		return s
	}
	keys := func(lines [][]byte) ([]string, error) {
		out := make([]string, len(lines))
		for i, l := range lines {
			if i%linesPerCheck == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out[i] = key(l)
		}
		return out, nil
	}
	ka, errA := keys(a)
	kb, errB := keys(b)
	if err := errors.Join(errA, errB); err != nil {
		return nil, err
	}
	// A last line without newline differs from the same text with one.
	if !nlA && len(ka) > 0 {
		ka[len(ka)-1] += "\x00"
	}
	if !nlB && len(kb) > 0 {
		kb[len(kb)-1] += "\x00"
	}
	horizon := 0
	if d.unified {
		horizon = d.context
	}
	diffs, err := diffHunks(ctx, ka, kb, horizon)
	if err != nil {
		return nil, err
	}
	if d.ignoreBlank {
		// Drop hunks made only of blank lines.
		kept := diffs[:0]
		for _, x := range diffs {
			blank := true
			for _, k := range append(append([]string(nil), ka[x.Start:x.End]...), kb[x.ReplStart:x.ReplEnd]...) {
				if strings.TrimSpace(k) != "" {
					blank = false
				}
			}
			if !blank {
				kept = append(kept, x)
			}
		}
		diffs = kept
	}
	return diffs, nil
}

// diffHunks numbers the lines by equality and groups GNU's changed lines
// into hunks. Like GNU diff, it first sets aside the identical head and
// tail of the files, but for horizon lines (the context shown), and
// analyses only what is left: that bounds how far changes may shift.
func diffHunks(ctx context.Context, ka, kb []string, horizon int) ([]diffHunk, error) {
	pre, suf := diffspan.Common(len(ka), len(kb), func(i, j int) bool { return ka[i] == kb[j] })
	head, tail := max(0, pre-horizon), max(0, suf-horizon)
	ka, kb = ka[head:len(ka)-tail], kb[head:len(kb)-tail]
	classes := map[string]int{}
	class := func(keys []string) []int {
		out := make([]int, len(keys))
		for i, k := range keys {
			if i%linesPerCheck == 0 && ctx.Err() != nil {
				return nil
			}
			c, ok := classes[k]
			if !ok {
				c = len(classes) + 1
				classes[k] = c
			}
			out[i] = c
		}
		return out
	}
	ca, cb := class(ka), class(kb)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	chA, chB, err := diffMark(ctx, ca, cb)
	if err != nil {
		return nil, err
	}
	at := func(ch []bool, i int) bool { return i < len(ch) && ch[i] }
	var hunks []diffHunk
	for i, j := 0, 0; i < len(chA) || j < len(chB); i, j = i+1, j+1 {
		if at(chA, i) || at(chB, j) {
			h := diffHunk{Start: head + i, ReplStart: head + j}
			for at(chA, i) {
				i++
			}
			for at(chB, j) {
				j++
			}
			h.End, h.ReplEnd = head+i, head+j
			hunks = append(hunks, h)
		}
	}
	return hunks, nil
}

// diffRange prints a normal-format range: "n" or "a,b"; an empty range
// names the line before it.
func diffRange(start, end int) string {
	switch {
	case end-start <= 1 && end > start:
		return strconv.Itoa(start + 1)
	case end == start:
		return strconv.Itoa(start)
	}
	return fmt.Sprintf("%d,%d", start+1, end)
}

func (d *diffRun) writeLine(prefix string, line []byte, last, nl bool) {
	d.out.WriteString(prefix)
	d.out.Write(line)
	d.out.WriteByte('\n')
	if last && !nl {
		d.out.WriteString("\\ No newline at end of file\n")
	}
}

func (d *diffRun) writeNormal(ctx context.Context, a, b [][]byte, nlA, nlB bool, diffs []diffHunk) {
	for _, x := range diffs {
		if ctx.Err() != nil {
			return
		}
		switch {
		case x.ReplStart == x.ReplEnd:
			fmt.Fprintf(d.out, "%sd%d\n", diffRange(x.Start, x.End), x.ReplStart)
		case x.Start == x.End:
			fmt.Fprintf(d.out, "%da%s\n", x.Start, diffRange(x.ReplStart, x.ReplEnd))
		default:
			fmt.Fprintf(d.out, "%sc%s\n", diffRange(x.Start, x.End), diffRange(x.ReplStart, x.ReplEnd))
		}
		for i := x.Start; i < x.End; i++ {
			d.writeLine("< ", a[i], i == len(a)-1, nlA)
		}
		if x.Start != x.End && x.ReplStart != x.ReplEnd {
			d.out.WriteString("---\n")
		}
		for i := x.ReplStart; i < x.ReplEnd; i++ {
			d.writeLine("> ", b[i], i == len(b)-1, nlB)
		}
	}
}

// diffHeaderTime is GNU's header timestamp layout.
func diffHeaderTime(st fs.FileInfo) string {
	t := time.Now()
	if st != nil {
		t = st.ModTime()
	}
	return t.Format("2006-01-02 15:04:05.000000000 -0700")
}

// unifiedRange prints "-l,s": a single line drops ",1", an empty range
// names the line before it.
func unifiedRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return strconv.Itoa(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

func (d *diffRun) writeUnified(ctx context.Context, nameA, nameB string, sa, sb fs.FileInfo, a, b [][]byte, nlA, nlB bool, diffs []diffHunk) {
	la, lb := nameA+"\t"+diffHeaderTime(sa), nameB+"\t"+diffHeaderTime(sb)
	if len(d.labels) > 0 {
		la = d.labels[0]
	}
	if len(d.labels) > 1 {
		lb = d.labels[1]
	}
	fmt.Fprintf(d.out, "--- %s\n+++ %s\n", la, lb)
	c := d.context
	for i := 0; i < len(diffs) && ctx.Err() == nil; {
		// A hunk takes every change closer than 2*context to the previous.
		j := i
		for j+1 < len(diffs) && diffs[j+1].Start-diffs[j].End <= 2*c {
			j++
		}
		first, last := diffs[i], diffs[j]
		startA := max(0, first.Start-c)
		endA := min(len(a), last.End+c)
		startB := first.ReplStart - (first.Start - startA)
		endB := last.ReplEnd + (endA - last.End)
		fmt.Fprintf(d.out, "@@ -%s +%s @@\n", unifiedRange(startA, endA-startA), unifiedRange(startB, endB-startB))
		pos := startA
		for k := i; k <= j; k++ {
			x := diffs[k]
			for ; pos < x.Start; pos++ {
				d.writeLine(" ", a[pos], pos == len(a)-1, nlA)
			}
			for p := x.Start; p < x.End; p++ {
				d.writeLine("-", a[p], p == len(a)-1, nlA)
			}
			for p := x.ReplStart; p < x.ReplEnd; p++ {
				d.writeLine("+", b[p], p == len(b)-1, nlB)
			}
			pos = x.End
		}
		for ; pos < endA; pos++ {
			d.writeLine(" ", a[pos], pos == len(a)-1, nlA)
		}
		i = j + 1
	}
}
