package git

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func gitDate(t time.Time) string { return t.Format("Mon Jan 2 15:04:05 2006 -0700") }

func formatDate(t time.Time, mode string) (string, error) {
	switch mode {
	case "", "default":
		return gitDate(t), nil
	case "iso", "iso8601":
		return t.Format("2006-01-02 15:04:05 -0700"), nil
	case "iso-strict", "iso8601-strict":
		return t.Format(time.RFC3339), nil
	case "raw":
		return fmt.Sprintf("%d %s", t.Unix(), t.Format("-0700")), nil
	case "unix":
		return strconv.FormatInt(t.Unix(), 10), nil
	case "short":
		return t.Format("2006-01-02"), nil
	case "rfc", "rfc2822":
		return t.Format("Mon, 2 Jan 2006 15:04:05 -0700"), nil
	}
	return "", unsupported("--date=" + mode)
}

// resolve finds the commit a revision names, with git's error for one
// that names nothing.
func (r *repo) resolve(rev string) (*object.Commit, error) {
	h, err := r.lookup(rev)
	if err == nil {
		var c *object.Commit
		if c, err = r.peelCommit(h); err == nil {
			return c, nil
		}
	}
	if errors.Is(err, errNoRevision) || errors.As(err, new(*peelError)) || errors.As(err, new(*pathError)) {
		return nil, fatalf("ambiguous argument '%s': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'", rev)
	}
	return nil, err
}

func filterChanges(cs []change, paths []string) []change {
	if len(paths) == 0 {
		return cs
	}
	out := cs[:0:0]
	for _, c := range cs {
		if underAny(c.path(), paths) || (c.from != nil && underAny(c.from.path, paths)) {
			out = append(out, c)
		}
	}
	return out
}

// logOptions are the options log and show share.
type logOptions struct {
	format   string // "medium", "oneline", "short", "full" or "tformat:..."
	date     string
	max      int
	diff     diffOutput
	revs     []string
	paths    []string
	noRename bool
	all      bool
}

func (r *repo) parseLogArgs(args []string, o *logOptions) error {
	opts, paths, _ := splitDashDash(args)
	o.max = -1
	for i := 0; i < len(opts); i++ {
		a := opts[i]
		switch {
		case a == "--oneline":
			o.format = "oneline"
		case a == "-n" && i+1 < len(opts):
			i++
			n, err := strconv.Atoi(opts[i])
			if err != nil {
				return fatalf("'%s': not an integer", opts[i])
			}
			o.max = n
		case strings.HasPrefix(a, "--max-count="):
			n, err := strconv.Atoi(strings.TrimPrefix(a, "--max-count="))
			if err != nil {
				return fatalf("'%s': not an integer", a)
			}
			o.max = n
		case len(a) > 1 && a[0] == '-' && isDigits(a[1:]):
			o.max, _ = strconv.Atoi(a[1:])
		case strings.HasPrefix(a, "-n") && isDigits(a[2:]) && len(a) > 2:
			o.max, _ = strconv.Atoi(a[2:])
		case strings.HasPrefix(a, "--format="), strings.HasPrefix(a, "--pretty="):
			f := a[strings.Index(a, "=")+1:]
			switch {
			case f == "oneline":
				o.format = "oneline-full"
			case f == "short" || f == "medium" || f == "full":
				o.format = f
			case strings.HasPrefix(f, "format:"), strings.HasPrefix(f, "tformat:"):
				if strings.HasPrefix(f, "format:") {
					return unsupported("--format=format: (separator semantics)")
				}
				o.format = f
			case strings.Contains(f, "%"):
				o.format = "tformat:" + f
			default:
				return unsupported("--pretty=" + f)
			}
		case strings.HasPrefix(a, "--date="):
			o.date = strings.TrimPrefix(a, "--date=")
		case a == "--stat":
			o.diff.stat = true
		case a == "--shortstat":
			o.diff.shortstat = true
		case a == "-p" || a == "-u" || a == "--patch":
			o.diff.patch = true
		case a == "--name-only":
			o.diff.nameOnly = true
		case a == "--name-status":
			o.diff.nameStatus = true
		case a == "--summary":
			o.diff.summary = true
		case a == "--no-renames":
			o.noRename = true
		case a == "--all":
			o.all = true
		case a == "--no-decorate" || a == "--no-color":
		case strings.HasPrefix(a, "-"):
			return unsupported(a)
		default:
			o.revs = append(o.revs, a)
		}
	}
	for _, p := range paths {
		rp, err := r.rel(p)
		if err != nil {
			return err
		}
		o.paths = append(o.paths, rp)
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func cmdLog(s *session, args []string) error {
	r, err := s.open()
	if err != nil {
		return err
	}
	o := logOptions{format: "medium"}
	if err := r.parseLogArgs(args, &o); err != nil {
		return err
	}
	starts, hidden, err := r.revisions(o.revs)
	if err != nil {
		return err
	}
	if o.all {
		tips, err := r.allTips()
		if err != nil {
			return err
		}
		starts = append(starts, tips...)
	}
	if len(o.revs) == 0 && !o.all {
		h, err := r.head()
		if err != nil {
			return err
		}
		if h.commit == nil {
			return fatalf("your current branch '%s' does not have any commits yet", h.branch)
		}
		starts = append(starts, h.commit)
	}
	return r.walk(starts, hidden, func(c *object.Commit) (bool, error) {
		var cs []change
		if len(o.paths) > 0 || o.diff.any() {
			var err error
			cs, err = r.commitChanges(c)
			if err != nil {
				return false, err
			}
			cs = filterChanges(cs, o.paths)
			if len(o.paths) > 0 && len(cs) == 0 {
				return false, nil
			}
		}
		if o.max == 0 {
			return false, errStop
		}
		if o.max > 0 {
			o.max--
		}
		return true, r.printCommit(c, &o, cs)
	})
}

var errStop = errors.New("stop")

// parents is c's parents, none for a commit at a shallow clone's boundary
// (listed in .git/shallow), whose parents the repository does not have.
func (r *repo) parents(c *object.Commit) ([]*object.Commit, error) {
	if r.shallow == nil {
		r.shallow = map[plumbing.Hash]bool{}
		hs, err := r.r.Storer.Shallow()
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			r.shallow[h] = true
		}
	}
	if r.shallow[c.Hash] {
		return nil, nil
	}
	ps := make([]*object.Commit, 0, c.NumParents())
	err := c.Parents().ForEach(func(p *object.Commit) error {
		ps = append(ps, p)
		return nil
	})
	return ps, err
}

// revisions is what a list of revision arguments selects: the commits to
// start from, and those hidden (reachable from ^REV, the A of A..B, and
// for A...B from both sides).
func (r *repo) revisions(revs []string) ([]*object.Commit, map[plumbing.Hash]bool, error) {
	var starts, exclude []*object.Commit
	resolve := func(rev string) (*object.Commit, error) {
		if rev == "" {
			rev = "HEAD"
		}
		return r.resolve(rev)
	}
	for _, rev := range revs {
		if a, b, ok := strings.Cut(rev, "..."); ok {
			ca, err := resolve(a)
			if err != nil {
				return nil, nil, err
			}
			cb, err := resolve(b)
			if err != nil {
				return nil, nil, err
			}
			bases, err := r.mergeBases(ca, cb)
			if err != nil {
				return nil, nil, err
			}
			starts = append(starts, ca, cb)
			exclude = append(exclude, bases...)
			continue
		}
		if a, b, ok := strings.Cut(rev, ".."); ok {
			ca, err := resolve(a)
			if err != nil {
				return nil, nil, err
			}
			cb, err := resolve(b)
			if err != nil {
				return nil, nil, err
			}
			exclude = append(exclude, ca)
			starts = append(starts, cb)
			continue
		}
		if not, ok := strings.CutPrefix(rev, "^"); ok {
			c, err := resolve(not)
			if err != nil {
				return nil, nil, err
			}
			exclude = append(exclude, c)
			continue
		}
		c, err := resolve(rev)
		if err != nil {
			return nil, nil, err
		}
		starts = append(starts, c)
	}
	hidden, err := r.reachable(exclude)
	return starts, hidden, err
}

// mergeBases is the best common ancestors of a and b: those reachable from
// both that no other such commit reaches.
func (r *repo) mergeBases(a, b *object.Commit) ([]*object.Commit, error) {
	ra, err := r.reachable([]*object.Commit{a})
	if err != nil {
		return nil, err
	}
	rb, err := r.reachable([]*object.Commit{b})
	if err != nil {
		return nil, err
	}
	var common []*object.Commit
	for h := range ra {
		if rb[h] {
			c, err := r.r.CommitObject(h)
			if err != nil {
				return nil, err
			}
			common = append(common, c)
		}
	}
	// Drop every common commit that is a strict ancestor of another; newest
	// first, so one walk usually marks all the others.
	slices.SortFunc(common, func(x, y *object.Commit) int { return y.Committer.When.Compare(x.Committer.When) })
	below := map[plumbing.Hash]bool{}
	for _, c := range common {
		if below[c.Hash] {
			continue
		}
		parents, err := r.parents(c)
		if err != nil {
			return nil, err
		}
		anc, err := r.reachable(parents)
		if err != nil {
			return nil, err
		}
		for h := range anc {
			below[h] = true
		}
	}
	var bases []*object.Commit
	for _, c := range common {
		if !below[c.Hash] {
			bases = append(bases, c)
		}
	}
	slices.SortFunc(bases, func(x, y *object.Commit) int { return strings.Compare(x.Hash.String(), y.Hash.String()) })
	return bases, nil
}

// reachable is every commit reachable from the given ones.
func (r *repo) reachable(from []*object.Commit) (map[plumbing.Hash]bool, error) {
	seen := map[plumbing.Hash]bool{}
	stack := append([]*object.Commit(nil), from...)
	for len(stack) > 0 {
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c.Hash] {
			continue
		}
		seen[c.Hash] = true
		parents, err := r.parents(c)
		if err != nil {
			return nil, err
		}
		stack = append(stack, parents...)
	}
	return seen, nil
}

// walk visits commits newest first by committer date, ties in the order
// they were reached, as git's default log order does.
func (r *repo) walk(starts []*object.Commit, hidden map[plumbing.Hash]bool, visit func(*object.Commit) (bool, error)) error {
	seen := map[plumbing.Hash]bool{}
	var queue []*object.Commit
	push := func(c *object.Commit) {
		if seen[c.Hash] || hidden[c.Hash] {
			return
		}
		seen[c.Hash] = true
		i := len(queue)
		for j, q := range queue {
			if c.Committer.When.After(q.Committer.When) {
				i = j
				break
			}
		}
		queue = append(queue, nil)
		copy(queue[i+1:], queue[i:])
		queue[i] = c
	}
	for _, c := range starts {
		push(c)
	}
	for len(queue) > 0 {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		c := queue[0]
		queue = queue[1:]
		if _, err := visit(c); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
		parents, err := r.parents(c)
		if err != nil {
			return err
		}
		for _, p := range parents {
			push(p)
		}
	}
	return nil
}

func indent(msg string) string {
	msg = strings.TrimRight(msg, "\n")
	var b strings.Builder
	for _, l := range strings.Split(msg, "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// printCommit prints one commit as log does, with its diff output.
func (r *repo) printCommit(c *object.Commit, o *logOptions, cs []change) error {
	w := r.out
	first := !r.printed
	r.printed = true
	diffSep := "\n"
	switch o.format {
	case "oneline", "oneline-full":
		id := r.abbrev(c.Hash)
		if o.format == "oneline-full" {
			id = c.Hash.String()
		}
		fmt.Fprintf(w, "%s %s\n", id, subject(c.Message))
		diffSep = ""
	case "medium", "short", "full":
		if !first {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "commit %s\n", c.Hash)
		if c.NumParents() > 1 {
			var ps []string
			for _, p := range c.ParentHashes {
				ps = append(ps, r.abbrev(p))
			}
			fmt.Fprintf(w, "Merge: %s\n", strings.Join(ps, " "))
		}
		fmt.Fprintf(w, "Author: %s <%s>\n", c.Author.Name, c.Author.Email)
		switch o.format {
		case "medium":
			d, err := formatDate(c.Author.When, o.date)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "Date:   %s\n", d)
		case "full":
			fmt.Fprintf(w, "Commit: %s <%s>\n", c.Committer.Name, c.Committer.Email)
		}
		if o.format == "short" {
			fmt.Fprintf(w, "\n    %s\n", subject(c.Message))
		} else {
			fmt.Fprintf(w, "\n%s", indent(c.Message))
		}
	default:
		s, err := expandFormat(strings.TrimPrefix(o.format, "tformat:"), c, o.date, r.abbrev)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, s)
	}
	if o.diff.stat && o.diff.patch && diffSep != "" {
		// git's log_tree_diff_flush: "---" between message and a diffstat
		// followed by a patch.
		diffSep = "---\n"
	}
	if o.diff.any() && len(cs) > 0 {
		if o.diff.nameOnly || o.diff.nameStatus {
			if !strings.HasPrefix(o.format, "oneline") {
				fmt.Fprint(w, diffSep)
			}
		} else {
			fmt.Fprint(w, diffSep)
		}
		return o.diff.write(w, cs, r.abbrev)
	}
	return nil
}

// expandFormat expands the common --format placeholders; others are
// refused rather than printed wrong.
func expandFormat(f string, c *object.Commit, dateMode string, abbrev func(plumbing.Hash) string) (string, error) {
	var b strings.Builder
	parents := func(short bool) string {
		var ps []string
		for _, p := range c.ParentHashes {
			if short {
				ps = append(ps, abbrev(p))
			} else {
				ps = append(ps, p.String())
			}
		}
		return strings.Join(ps, " ")
	}
	date := func(t time.Time, kind byte) (string, error) {
		switch kind {
		case 'd':
			return formatDate(t, dateMode)
		case 't':
			return formatDate(t, "unix")
		case 'i':
			return formatDate(t, "iso")
		case 'I':
			return formatDate(t, "iso-strict")
		case 'D':
			return formatDate(t, "rfc")
		case 's':
			return formatDate(t, "short")
		}
		return "", unsupported("--format placeholder")
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case '%':
			b.WriteByte('%')
		case 'n':
			b.WriteByte('\n')
		case 'H':
			b.WriteString(c.Hash.String())
		case 'h':
			b.WriteString(abbrev(c.Hash))
		case 'T':
			b.WriteString(c.TreeHash.String())
		case 't':
			b.WriteString(abbrev(c.TreeHash))
		case 'P':
			b.WriteString(parents(false))
		case 'p':
			b.WriteString(parents(true))
		case 's':
			b.WriteString(subject(c.Message))
		case 'b':
			b.WriteString(body(c.Message))
		case 'B':
			b.WriteString(c.Message)
		case 'a', 'c':
			sig := c.Author
			if f[i] == 'c' {
				sig = c.Committer
			}
			if i+1 == len(f) {
				return "", unsupported("--format placeholder %" + f[i:])
			}
			i++
			switch k := f[i]; k {
			case 'n':
				b.WriteString(sig.Name)
			case 'e':
				b.WriteString(sig.Email)
			case 'd', 't', 'i', 'I', 'D', 's':
				d, err := date(sig.When, k)
				if err != nil {
					return "", err
				}
				b.WriteString(d)
			default:
				return "", unsupported("--format placeholder %" + f[i-1:i+1])
			}
		default:
			return "", unsupported("--format placeholder %" + f[i:i+1])
		}
	}
	return b.String(), nil
}

// body is the message after the subject paragraph.
func body(m string) string {
	_, rest, ok := strings.Cut(strings.TrimLeft(m, "\n"), "\n\n")
	if !ok {
		return ""
	}
	return strings.TrimLeft(rest, "\n")
}

func cmdShow(s *session, args []string) error {
	r, err := s.open()
	if err != nil {
		return err
	}
	o := logOptions{format: "medium"}
	if err := r.parseLogArgs(args, &o); err != nil {
		return err
	}
	if !o.diff.any() {
		o.diff.patch = true
	}
	if len(o.revs) == 0 {
		o.revs = []string{"HEAD"}
	}
	for _, rev := range o.revs {
		if cpart, file, ok := strings.Cut(rev, ":"); ok {
			if err := r.showFile(cpart, file); err != nil {
				return err
			}
			continue
		}
		if err := r.showTagHeader(rev); err != nil {
			return err
		}
		c, err := r.resolve(rev)
		if err != nil {
			return err
		}
		if c.NumParents() > 1 {
			return unsupported("git show of a merge commit (combined diff)")
		}
		cs, err := r.commitChanges(c)
		if err != nil {
			return err
		}
		if err := r.printCommit(c, &o, filterChanges(cs, o.paths)); err != nil {
			return err
		}
	}
	return nil
}

// showFile prints a file of a commit ("REV:path").
func (r *repo) showFile(rev, file string) error {
	if rev == "" {
		return unsupported("git show :path (index)")
	}
	c, err := r.resolve(rev)
	if err != nil {
		return err
	}
	p := strings.TrimPrefix(file, "./")
	if strings.HasPrefix(file, "./") || strings.HasPrefix(file, "../") {
		rp, err := r.rel(file)
		if err != nil {
			return err
		}
		p = rp
	}
	f, err := c.File(p)
	if err != nil {
		return fatalf("path '%s' does not exist in '%s'", p, rev)
	}
	rd, err := f.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	_, err = io.Copy(r.out, &ctxReader{r.ctx, rd})
	return err
}

// showTagHeader prints an annotated tag's header as git show does before
// the commit it points at; other revisions print nothing.
func (r *repo) showTagHeader(rev string) error {
	ref, ok, err := r.ref(plumbing.NewTagReferenceName(rev))
	if err != nil || !ok {
		return err
	}
	tag, err := r.r.TagObject(ref.Hash())
	if err != nil {
		return nil
	}
	d, err := formatDate(tag.Tagger.When, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(r.out, "tag %s\nTagger: %s <%s>\nDate:   %s\n\n%s\n", tag.Name, tag.Tagger.Name, tag.Tagger.Email, d, strings.TrimRight(tag.Message, "\n"))
	r.printed = true // the commit follows after a blank line
	return nil
}

// cmdRevList lists commits as log walks them (newest first by committer
// date), or counts them.
func cmdRevList(s *session, args []string) error {
	opts, paths, _ := splitDashDash(args)
	if len(paths) > 0 {
		return unsupported("git rev-list with paths")
	}
	count, all, reverse, leftRight := false, false, false, false
	maxCount := -1
	var revs []string
	for i := 0; i < len(opts); i++ {
		a := opts[i]
		switch {
		case a == "--count":
			count = true
		case a == "--all":
			all = true
		case a == "--reverse":
			reverse = true
		case a == "--left-right":
			leftRight = true
		case a == "-n" && i+1 < len(opts):
			i++
			n, err := strconv.Atoi(opts[i])
			if err != nil {
				return fatalf("'%s': not an integer", opts[i])
			}
			maxCount = n
		case strings.HasPrefix(a, "--max-count="):
			n, err := strconv.Atoi(strings.TrimPrefix(a, "--max-count="))
			if err != nil {
				return fatalf("'%s': not an integer", a)
			}
			maxCount = n
		case len(a) > 1 && a[0] == '-' && isDigits(a[1:]):
			maxCount, _ = strconv.Atoi(a[1:])
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "^"):
			return unsupported("git rev-list " + a)
		default:
			revs = append(revs, a)
		}
	}
	if len(revs) == 0 && !all {
		return errorf(129, "usage: git rev-list [<options>] <commit>... [--] [<path>...]\n")
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	if leftRight {
		if !count || len(revs) != 1 || !strings.Contains(revs[0], "...") {
			return unsupported("git rev-list --left-right without --count A...B")
		}
		return r.leftRightCount(revs[0])
	}
	starts, hidden, err := r.revisions(revs)
	if err != nil {
		return err
	}
	if all {
		tips, err := r.allTips()
		if err != nil {
			return err
		}
		starts = append(starts, tips...)
	}
	var list []plumbing.Hash
	err = r.walk(starts, hidden, func(c *object.Commit) (bool, error) {
		if maxCount >= 0 && len(list) >= maxCount {
			return false, errStop
		}
		list = append(list, c.Hash)
		return true, nil
	})
	if err != nil {
		return err
	}
	if count {
		fmt.Fprintln(s.out, len(list))
		return nil
	}
	if reverse {
		slices.Reverse(list)
	}
	for _, h := range list {
		fmt.Fprintln(s.out, h)
	}
	return nil
}

// leftRightCount prints how many commits of A...B only A reaches and how
// many only B reaches.
func (r *repo) leftRightCount(rev string) error {
	a, b, _ := strings.Cut(rev, "...")
	var sides [2]map[plumbing.Hash]bool
	for i, name := range []string{a, b} {
		c, err := r.resolve(cmp.Or(name, "HEAD"))
		if err != nil {
			return err
		}
		if sides[i], err = r.reachable([]*object.Commit{c}); err != nil {
			return err
		}
	}
	var n [2]int
	for i := range sides {
		for h := range sides[i] {
			if !sides[1-i][h] {
				n[i]++
			}
		}
	}
	fmt.Fprintf(r.out, "%d\t%d\n", n[0], n[1])
	return nil
}

// allTips is the commits every ref and HEAD point at (--all).
func (r *repo) allTips() ([]*object.Commit, error) {
	it, err := r.r.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	var refs []*plumbing.Reference
	if err := it.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference {
			refs = append(refs, ref)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	// git adds the refs in name order, then HEAD; ties in date are walked
	// in that order.
	slices.SortFunc(refs, func(a, b *plumbing.Reference) int { return strings.Compare(a.Name().String(), b.Name().String()) })
	var tips []*object.Commit
	add := func(h plumbing.Hash) error {
		c, err := r.peelCommit(h)
		if err == nil {
			tips = append(tips, c)
		}
		if errors.Is(err, errNoRevision) || errors.As(err, new(*peelError)) {
			return nil // a tag of a tree or blob
		}
		return err
	}
	for _, ref := range refs {
		if err := add(ref.Hash()); err != nil {
			return nil, err
		}
	}
	if h, err := r.head(); err == nil && h.commit != nil {
		tips = append(tips, h.commit)
	}
	return tips, nil
}
