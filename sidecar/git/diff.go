package git

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// blobRef is one side of a file in a comparison: from a tree, the index or
// the worktree.
type blobRef struct {
	path string
	mode filemode.FileMode
	hash plumbing.Hash
	load func() ([]byte, error)
}

// change is a file that differs between two sides; from or to is nil for
// an added or deleted file.
type change struct {
	from, to *blobRef
	score    int // rename similarity in percent
}

// typeChange reports a file that became a symlink or the other way round.
func (c change) typeChange() bool {
	return c.from != nil && c.to != nil && (c.from.mode == filemode.Symlink) != (c.to.mode == filemode.Symlink)
}

func (c change) path() string {
	if c.to != nil {
		return c.to.path
	}
	return c.from.path
}

// snapshot is every file of one side, by path.
type snapshot map[string]*blobRef

// compare lists the changes from a to b, sorted by path.
func compare(a, b snapshot) []change {
	var out []change
	for p, x := range a {
		y, ok := b[p]
		switch {
		case !ok:
			out = append(out, change{from: x})
		case x.hash != y.hash || x.mode != y.mode:
			out = append(out, change{from: x, to: y})
		}
	}
	for p, y := range b {
		if _, ok := a[p]; !ok {
			out = append(out, change{to: y})
		}
	}
	sortChanges(out)
	return out
}

func sortChanges(cs []change) {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].path() < cs[j].path() })
}

// withRenames pairs deletions and additions into renames as git's
// diff.renames default does: identical content first, then files at
// least 50% similar by git's own measure.
func withRenames(cs []change) ([]change, error) {
	cs = pairRenames(cs)
	cs, err := pairSimilar(cs)
	if err != nil {
		return nil, err
	}
	sortChanges(cs)
	return cs, nil
}

// pairRenames turns a deletion and an addition of the same content into a
// rename.
func pairRenames(cs []change) []change {
	deleted := map[plumbing.Hash][]int{}
	for i, c := range cs {
		if c.to == nil {
			deleted[c.from.hash] = append(deleted[c.from.hash], i)
		}
	}
	if len(deleted) == 0 {
		return cs
	}
	for k := range deleted {
		sort.Slice(deleted[k], func(i, j int) bool { return cs[deleted[k][i]].from.path < cs[deleted[k][j]].from.path })
	}
	adds := []int{}
	for i, c := range cs {
		if c.from == nil {
			adds = append(adds, i)
		}
	}
	sort.Slice(adds, func(i, j int) bool { return cs[adds[i]].to.path < cs[adds[j]].to.path })
	used := map[int]bool{}
	for _, i := range adds {
		cands := deleted[cs[i].to.hash]
		for _, d := range cands {
			if used[d] || cs[d].from.mode.IsFile() != cs[i].to.mode.IsFile() {
				continue
			}
			used[d] = true
			cs[i].from, cs[i].score = cs[d].from, 100
			break
		}
	}
	out := cs[:0]
	for i, c := range cs {
		if !used[i] {
			out = append(out, c)
		}
	}
	return out
}

func isBinary(data []byte) bool {
	if len(data) > 8000 {
		data = data[:8000]
	}
	return bytes.IndexByte(data, 0) >= 0
}

// fileDiff is the content comparison of one change.
type fileDiff struct {
	change
	a, b     []byte
	binary   bool
	adds     int
	dels     int
	lines    []diffLine
	loadErr  error
	loadedOK bool
}

type diffLine struct {
	op   byte // ' ', '-', '+'
	text string
}

func loadSide(b *blobRef) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	return b.load()
}

func (c change) diff() (*fileDiff, error) {
	fd := &fileDiff{change: c}
	var err error
	if fd.a, err = loadSide(c.from); err != nil {
		return nil, err
	}
	if fd.b, err = loadSide(c.to); err != nil {
		return nil, err
	}
	if c.from != nil && c.to != nil && c.from.hash == c.to.hash {
		return fd, nil
	}
	if isBinary(fd.a) || isBinary(fd.b) {
		fd.binary = true
		return fd, nil
	}
	if c.typeChange() {
		// Counted as all of one removed and all of the other added.
		fd.dels, fd.adds = len(splitLines(string(fd.a))), len(splitLines(string(fd.b)))
		return fd, nil
	}
	for _, d := range diff.Do(string(fd.a), string(fd.b)) {
		var op byte
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			op = ' '
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		for _, l := range splitLines(d.Text) {
			fd.lines = append(fd.lines, diffLine{op, l})
			switch op {
			case '-':
				fd.dels++
			case '+':
				fd.adds++
			}
		}
	}
	return fd, nil
}

// splitLines splits text after each newline; the last line may lack one.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

const contextLines = 3

func (fd *fileDiff) header(w io.Writer, abbrev func(plumbing.Hash) string) {
	c := fd.change
	ap, bp := "a/"+c.path(), "b/"+c.path()
	if c.from != nil {
		ap = "a/" + c.from.path
	}
	fmt.Fprintf(w, "diff --git %s %s\n", ap, bp)
	switch {
	case c.from == nil:
		fmt.Fprintf(w, "new file mode %o\nindex %s..%s\n", c.to.mode, abbrev(plumbing.ZeroHash), abbrev(c.to.hash))
	case c.to == nil:
		fmt.Fprintf(w, "deleted file mode %o\nindex %s..%s\n", c.from.mode, abbrev(c.from.hash), abbrev(plumbing.ZeroHash))
	default:
		if c.from.mode != c.to.mode {
			fmt.Fprintf(w, "old mode %o\nnew mode %o\n", c.from.mode, c.to.mode)
		}
		if c.from.path != c.to.path {
			fmt.Fprintf(w, "similarity index %d%%\nrename from %s\nrename to %s\n", c.score, c.from.path, c.to.path)
		}
		if c.from.hash != c.to.hash {
			fmt.Fprintf(w, "index %s..%s", abbrev(c.from.hash), abbrev(c.to.hash))
			if c.from.mode == c.to.mode {
				fmt.Fprintf(w, " %o", c.to.mode)
			}
			fmt.Fprintln(w)
		}
	}
}

// patch writes the change as git diff does; a type change is a deletion
// and an addition.
func (fd *fileDiff) patch(w io.Writer, abbrev func(plumbing.Hash) string) error {
	if fd.typeChange() {
		for _, c := range []change{{from: fd.from}, {to: fd.to}} {
			d, err := c.diff()
			if err != nil {
				return err
			}
			if err := d.patch(w, abbrev); err != nil {
				return err
			}
		}
		return nil
	}
	fd.header(w, abbrev)
	c := fd.change
	if c.from != nil && c.to != nil && c.from.hash == c.to.hash {
		return nil
	}
	ap, bp := "/dev/null", "/dev/null"
	if c.from != nil {
		ap = "a/" + c.from.path
	}
	if c.to != nil {
		bp = "b/" + c.to.path
	}
	if fd.binary {
		fmt.Fprintf(w, "Binary files %s and %s differ\n", ap, bp)
		return nil
	}
	if len(fd.lines) == 0 {
		return nil // an empty file added or deleted
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", ap, bp)
	fd.hunks(w)
	return nil
}

func (fd *fileDiff) hunks(w io.Writer) {
	old := splitLines(string(fd.a))
	lines := fd.lines
	// Indexes of changed lines, grouped into hunks.
	var changed []int
	for i, l := range lines {
		if l.op != ' ' {
			changed = append(changed, i)
		}
	}
	for k := 0; k < len(changed); {
		start := max(changed[k]-contextLines, 0)
		end := changed[k]
		for k < len(changed) && changed[k]-end <= 2*contextLines+1 {
			end = changed[k]
			k++
		}
		end = min(end+contextLines+1, len(lines))
		// Line numbers at start.
		o, n := 0, 0
		for _, l := range lines[:start] {
			if l.op != '+' {
				o++
			}
			if l.op != '-' {
				n++
			}
		}
		ol, nl := 0, 0
		for _, l := range lines[start:end] {
			if l.op != '+' {
				ol++
			}
			if l.op != '-' {
				nl++
			}
		}
		fmt.Fprintf(w, "@@ -%s +%s @@%s\n", hunkRange(o, ol), hunkRange(n, nl), funcLine(old, o))
		for _, l := range lines[start:end] {
			w.Write([]byte{l.op})
			io.WriteString(w, l.text)
			if !strings.HasSuffix(l.text, "\n") {
				io.WriteString(w, "\n\\ No newline at end of file\n")
			}
		}
	}
}

func hunkRange(start, n int) string {
	switch n {
	case 0:
		return strconv.Itoa(start) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(n)
}

// funcLine is git's default hunk header context: the last line before the
// hunk that starts with a letter, '_' or '$', at most 80 bytes.
func funcLine(old []string, before int) string {
	for i := min(before, len(old)) - 1; i >= 0; i-- {
		l := old[i]
		if l == "" {
			continue
		}
		c := l[0]
		if c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			l = strings.TrimRight(l, "\n")
			if len(l) > 80 {
				l = l[:80]
			}
			return " " + strings.TrimRight(l, " \t\r\v\f")
		}
	}
	return ""
}

// displayName is how stat shows a path, with renames in git's compact
// "{old => new}" form.
func (c change) displayName() string {
	if c.from == nil || c.to == nil || c.from.path == c.to.path {
		return c.path()
	}
	a, b := c.from.path, c.to.path
	// Common directory prefix and suffix, as git's pprint_rename.
	pfx := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '/' {
			pfx = i + 1
		}
	}
	sfx := 0
	for i := 1; i <= len(a)-pfx && i <= len(b)-pfx && a[len(a)-i] == b[len(b)-i]; i++ {
		if a[len(a)-i] == '/' {
			sfx = i
		}
	}
	if pfx == 0 && sfx == 0 {
		return a + " => " + b
	}
	return a[:pfx] + "{" + a[pfx:len(a)-sfx] + " => " + b[pfx:len(b)-sfx] + "}" + a[len(a)-sfx:]
}

// stat writes git's --stat block for the diffs.
func writeStat(w io.Writer, fds []*fileDiff) {
	width := 80
	maxLen, maxChange, numberWidth := 0, 0, 0
	hasBinary := false
	for _, fd := range fds {
		maxLen = max(maxLen, len(fd.displayName()))
		if fd.binary {
			hasBinary = true
			continue
		}
		maxChange = max(maxChange, fd.adds+fd.dels)
	}
	numberWidth = len(strconv.Itoa(maxChange))
	if hasBinary {
		numberWidth = max(numberWidth, 3)
	}
	graphWidth := maxChange
	nameWidth := maxLen
	if nameWidth+numberWidth+6+graphWidth > width {
		if graphWidth > width*3/8-numberWidth-6 {
			graphWidth = max(width*3/8-numberWidth-6, 6)
		}
		if nameWidth > width-numberWidth-6-graphWidth {
			nameWidth = width - numberWidth - 6 - graphWidth
		} else {
			graphWidth = width - numberWidth - 6 - nameWidth
		}
	}
	for _, fd := range fds {
		name := fd.displayName()
		if len(name) > nameWidth {
			name = "..." + name[len(name)-(nameWidth-3):]
		}
		fmt.Fprintf(w, " %-*s |", nameWidth, name)
		if fd.binary {
			fmt.Fprintf(w, " %*s", numberWidth, "Bin")
			if len(fd.a) == 0 && len(fd.b) == 0 {
				fmt.Fprintln(w)
				continue
			}
			fmt.Fprintf(w, " %d -> %d bytes\n", len(fd.a), len(fd.b))
			continue
		}
		add, del := fd.adds, fd.dels
		total := add + del
		if graphWidth <= maxChange && maxChange > 0 {
			add, del = scaleLinear(add, graphWidth, maxChange), scaleLinear(total, graphWidth, maxChange)
			del -= add
		}
		sep := ""
		if total > 0 {
			sep = " "
		}
		fmt.Fprintf(w, " %*d%s%s%s\n", numberWidth, total, sep, strings.Repeat("+", add), strings.Repeat("-", del))
	}
	writeShortStat(w, fds)
}

func scaleLinear(it, width, maxChange int) int {
	if it == 0 {
		return 0
	}
	return 1 + it*(width-1)/maxChange
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func writeShortStat(w io.Writer, fds []*fileDiff) {
	if len(fds) == 0 {
		return
	}
	adds, dels := 0, 0
	for _, fd := range fds {
		adds += fd.adds
		dels += fd.dels
	}
	fmt.Fprintf(w, " %d %s changed", len(fds), plural(len(fds), "file", "files"))
	if adds > 0 || dels == 0 {
		fmt.Fprintf(w, ", %d %s(+)", adds, plural(adds, "insertion", "insertions"))
	}
	if dels > 0 || adds == 0 {
		fmt.Fprintf(w, ", %d %s(-)", dels, plural(dels, "deletion", "deletions"))
	}
	fmt.Fprintln(w)
}

// writeSummary writes git's --summary lines.
func writeSummary(w io.Writer, cs []change) {
	for _, c := range cs {
		switch {
		case c.from == nil:
			fmt.Fprintf(w, " create mode %o %s\n", c.to.mode, c.to.path)
		case c.to == nil:
			fmt.Fprintf(w, " delete mode %o %s\n", c.from.mode, c.from.path)
		case c.from.path != c.to.path:
			fmt.Fprintf(w, " rename %s (%d%%)\n", c.displayName(), c.score)
			if c.from.mode != c.to.mode {
				fmt.Fprintf(w, " mode change %o => %o %s\n", c.from.mode, c.to.mode, c.to.path)
			}
		case c.from.mode != c.to.mode:
			fmt.Fprintf(w, " mode change %o => %o %s\n", c.from.mode, c.to.mode, c.to.path)
		}
	}
}

func nameStatus(c change) string {
	switch {
	case c.from == nil:
		return "A\t" + c.to.path
	case c.to == nil:
		return "D\t" + c.from.path
	case c.from.path != c.to.path:
		return fmt.Sprintf("R%03d\t%s\t%s", c.score, c.from.path, c.to.path)
	}
	return "M\t" + c.to.path
}

// diffOutput is what a diff, log or show prints per commit or comparison.
type diffOutput struct {
	patch, stat, shortstat, nameOnly, nameStatus, summary bool
}

func (o diffOutput) any() bool {
	return o.patch || o.stat || o.shortstat || o.nameOnly || o.nameStatus || o.summary
}

// write prints cs; abbrev shortens object names.
func (o diffOutput) write(w io.Writer, cs []change, abbrev func(plumbing.Hash) string) error {
	if o.nameOnly {
		for _, c := range cs {
			fmt.Fprintln(w, c.path())
		}
		return nil
	}
	if o.nameStatus {
		for _, c := range cs {
			fmt.Fprintln(w, nameStatus(c))
		}
		return nil
	}
	fds := make([]*fileDiff, 0, len(cs))
	for _, c := range cs {
		fd, err := c.diff()
		if err != nil {
			return err
		}
		fds = append(fds, fd)
	}
	if o.stat {
		writeStat(w, fds)
	} else if o.shortstat {
		writeShortStat(w, fds)
	}
	if o.summary {
		writeSummary(w, cs)
	}
	if o.patch {
		if o.stat || o.shortstat {
			fmt.Fprintln(w)
		}
		for _, fd := range fds {
			if err := fd.patch(w, abbrev); err != nil {
				return err
			}
		}
	}
	return nil
}
