package git

import (
	"fmt"
	"github.com/go-git/go-git/v5/plumbing"
	"io"
	"sort"
	"strings"
)

// state is everything status reports.
type state struct {
	head     *head
	upstream *upstream // nil without one
	idx      *gitIndex
	staged   []change // HEAD -> index
	unstaged []change // index -> worktree, tracked files only
	scan     *scanResult
}

func (r *repo) state(allUntracked bool) (*state, error) {
	h, err := r.head()
	if err != nil {
		return nil, err
	}
	idx, err := r.index()
	if err != nil {
		return nil, err
	}
	headSnap, err := r.commitSnapshot(h.commit)
	if err != nil {
		return nil, err
	}
	sc := r.newScanner(idx)
	sc.allUntracked = allUntracked
	res, err := sc.scan(nil)
	if err != nil {
		return nil, err
	}
	if err := r.refresh(idx, res); err != nil {
		return nil, err
	}
	idxSnap := r.indexSnapshot(idx)
	up, err := r.upstream(h)
	if err != nil {
		return nil, err
	}
	staged, err := withRenames(compare(headSnap, idxSnap))
	if err != nil {
		return nil, err
	}
	return &state{
		head:     h,
		upstream: up,
		idx:      idx,
		staged:   staged,
		unstaged: compare(idxSnap, r.worktreeSnapshot(idx, res)),
		scan:     res,
	}, nil
}

func changeCode(c change) byte {
	switch {
	case c.from == nil:
		return 'A'
	case c.to == nil:
		return 'D'
	case c.from.path != c.to.path:
		return 'R'
	case c.typeChange():
		return 'T'
	}
	return 'M'
}

var longLabel = map[byte]string{
	'A': "new file:", 'D': "deleted:", 'M': "modified:", 'R': "renamed:", 'T': "typechange:",
}

func cmdStatus(s *session, args []string) error {
	short, branch, porcelain, allUntracked := false, false, 0, false
	for _, a := range expandShortFlags(args) {
		switch a {
		case "-s", "--short":
			short = true
		case "-b", "--branch":
			branch = true
		case "--porcelain", "--porcelain=v1", "--porcelain=1":
			porcelain = 1
		case "--porcelain=v2", "--porcelain=2":
			porcelain = 2
		case "-uall", "--untracked-files=all", "-u":
			allUntracked = true
		case "--long", "-unormal", "--untracked-files=normal":
		default:
			return unsupported("git status " + a)
		}
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	st, err := r.state(allUntracked)
	if err != nil {
		return err
	}
	switch {
	case porcelain == 2:
		r.statusV2(st, branch)
	case porcelain == 1 || short:
		r.statusShort(st, branch, porcelain == 1)
	default:
		r.statusLong(s.out, st, "No commits yet")
	}
	return nil
}

// statusLong prints the long status; initialLine is how an unborn branch
// is announced ("No commits yet"; commit says "Initial commit").
func (r *repo) statusLong(w io.Writer, st *state, initialLine string) {
	if st.head.branch != "" {
		fmt.Fprintf(w, "On branch %s\n", st.head.branch)
	} else {
		fmt.Fprintf(w, "HEAD detached %s\n", r.detachedName(st.head))
	}
	if st.upstream != nil && !st.upstream.unborn {
		fmt.Fprint(w, st.upstream.longText()+"\n")
	}
	initial := st.head.commit == nil
	if initial {
		fmt.Fprintf(w, "\n%s\n\n", initialLine)
	}
	if len(st.staged) > 0 {
		fmt.Fprintln(w, "Changes to be committed:")
		if initial {
			fmt.Fprintln(w, `  (use "git rm --cached <file>..." to unstage)`)
		} else {
			fmt.Fprintln(w, `  (use "git restore --staged <file>..." to unstage)`)
		}
		for _, c := range st.staged {
			name := r.quote(r.show(c.path()))
			if c.from != nil && c.to != nil && c.from.path != c.to.path {
				name = r.quote(r.show(c.from.path)) + " -> " + name
			}
			fmt.Fprintf(w, "\t%-12s%s\n", longLabel[changeCode(c)], name)
		}
		fmt.Fprintln(w)
	}
	if len(st.unstaged) > 0 {
		fmt.Fprintln(w, "Changes not staged for commit:")
		if len(st.scan.deleted) > 0 {
			fmt.Fprintln(w, `  (use "git add/rm <file>..." to update what will be committed)`)
		} else {
			fmt.Fprintln(w, `  (use "git add <file>..." to update what will be committed)`)
		}
		fmt.Fprintln(w, `  (use "git restore <file>..." to discard changes in working directory)`)
		for _, c := range st.unstaged {
			fmt.Fprintf(w, "\t%-12s%s\n", longLabel[changeCode(c)], r.quote(r.show(c.path())))
		}
		fmt.Fprintln(w)
	}
	if len(st.scan.untracked) > 0 {
		fmt.Fprintln(w, "Untracked files:")
		fmt.Fprintln(w, `  (use "git add <file>..." to include in what will be committed)`)
		for _, p := range st.scan.untracked {
			fmt.Fprintf(w, "\t%s\n", r.quote(r.show(p)))
		}
		fmt.Fprintln(w)
	}
	switch {
	case len(st.staged) > 0:
	case len(st.unstaged) > 0:
		fmt.Fprintln(w, `no changes added to commit (use "git add" and/or "git commit -a")`)
	case len(st.scan.untracked) > 0:
		fmt.Fprintln(w, `nothing added to commit but untracked files present (use "git add" to track)`)
	case initial:
		fmt.Fprintln(w, `nothing to commit (create/copy files and use "git add" to track)`)
	default:
		fmt.Fprintln(w, "nothing to commit, working tree clean")
	}
}

// detachedName is how status and branch say where a detached HEAD is: "at
// X" while HEAD is still where the latest checkout put it, "from X" after
// commits or resets, X naming what was checked out (a tag or remote branch
// by name when it still points there, else the commit), as git's
// wt_status_get_detached_from.
func (r *repo) detachedName(h *head) string {
	last, ok, err := r.lastCheckout()
	if err != nil || !ok {
		return "at " + r.abbrev(h.commit.Hash)
	}
	name := r.abbrev(last.new)
	if ref, err := r.r.Reference(plumbing.NewTagReferenceName(last.to), true); err == nil && r.peelsTo(ref.Hash(), last.new) {
		name = last.to
	} else if ref, err := r.r.Reference(plumbing.ReferenceName("refs/remotes/"+last.to), true); err == nil && ref.Hash() == last.new {
		name = last.to
	}
	if last.new == h.commit.Hash {
		return "at " + name
	}
	return "from " + name
}

// entryStatus pairs the staged and unstaged change of one path.
type entryStatus struct {
	path     string
	staged   *change
	unstaged *change
}

func (st *state) entries() []entryStatus {
	by := map[string]*entryStatus{}
	var order []string
	get := func(p string) *entryStatus {
		e, ok := by[p]
		if !ok {
			e = &entryStatus{path: p}
			by[p] = e
			order = append(order, p)
		}
		return e
	}
	for i := range st.staged {
		get(st.staged[i].path()).staged = &st.staged[i]
	}
	for i := range st.unstaged {
		get(st.unstaged[i].path()).unstaged = &st.unstaged[i]
	}
	sort.Strings(order)
	out := make([]entryStatus, len(order))
	for i, p := range order {
		out[i] = *by[p]
	}
	return out
}

func (r *repo) statusShort(st *state, branch, porcelain bool) {
	w := r.out
	name := func(p string) string {
		if porcelain {
			return quoteSP(r.quote(p))
		}
		return quoteSP(r.quote(r.show(p)))
	}
	if branch {
		switch {
		case st.head.branch == "":
			fmt.Fprintln(w, "## HEAD (no branch)")
		case st.head.commit == nil:
			fmt.Fprintf(w, "## No commits yet on %s\n", st.head.branch)
		case st.upstream != nil && !st.upstream.unborn:
			fmt.Fprintf(w, "## %s%s\n", st.head.branch, st.upstream.shortText())
		default:
			fmt.Fprintf(w, "## %s\n", st.head.branch)
		}
	}
	for _, e := range st.entries() {
		x, y := byte(' '), byte(' ')
		label := name(e.path)
		if e.staged != nil {
			x = changeCode(*e.staged)
			if x == 'R' {
				label = name(e.staged.from.path) + " -> " + label
			}
		}
		if e.unstaged != nil {
			y = changeCode(*e.unstaged)
		}
		fmt.Fprintf(w, "%c%c %s\n", x, y, label)
	}
	for _, p := range st.scan.untracked {
		fmt.Fprintf(w, "?? %s\n", name(p))
	}
}

func (r *repo) statusV2(st *state, branch bool) {
	w := r.out
	if branch {
		if st.head.commit == nil {
			fmt.Fprintln(w, "# branch.oid (initial)")
		} else {
			fmt.Fprintf(w, "# branch.oid %s\n", st.head.commit.Hash)
		}
		if st.head.branch == "" {
			fmt.Fprintln(w, "# branch.head (detached)")
		} else {
			fmt.Fprintf(w, "# branch.head %s\n", st.head.branch)
		}
		if u := st.upstream; u != nil {
			fmt.Fprintf(w, "# branch.upstream %s\n", u.name)
			if !u.gone {
				fmt.Fprintf(w, "# branch.ab +%d -%d\n", u.ahead, u.behind)
			}
		}
	}
	zero := strings.Repeat("0", 40)
	for _, e := range st.entries() {
		x, y := byte('.'), byte('.')
		mH, mI, mW := "000000", "000000", "000000"
		hH, hI := zero, zero
		var orig string
		score := ""
		if e.staged != nil {
			x = changeCode(*e.staged)
			if f := e.staged.from; f != nil {
				mH, hH = fmt.Sprintf("%06o", uint32(f.mode)), f.hash.String()
			}
			if t := e.staged.to; t != nil {
				mI, hI = fmt.Sprintf("%06o", uint32(t.mode)), t.hash.String()
			}
			if x == 'R' {
				orig, score = e.staged.from.path, fmt.Sprintf("R%d ", e.staged.score)
			}
		} else {
			ent, _ := st.idx.entry(e.path)
			mH, hH = fmt.Sprintf("%06o", uint32(ent.Mode)), ent.Hash.String()
			mI, hI = mH, hH
		}
		mW = mI
		if e.unstaged != nil {
			y = changeCode(*e.unstaged)
			if e.unstaged.to == nil {
				mW = "000000"
			} else {
				mW = fmt.Sprintf("%06o", uint32(e.unstaged.to.mode))
			}
		}
		if orig != "" {
			fmt.Fprintf(w, "2 %c%c N... %s %s %s %s %s %s%s\t%s\n", x, y, mH, mI, mW, hH, hI, score, r.quote(e.path), r.quote(orig))
			continue
		}
		fmt.Fprintf(w, "1 %c%c N... %s %s %s %s %s %s\n", x, y, mH, mI, mW, hH, hI, r.quote(e.path))
	}
	for _, p := range st.scan.untracked {
		fmt.Fprintf(w, "? %s\n", r.quote(p))
	}
}

// quoteSP quotes a name with a space, as the short status does.
func quoteSP(q string) string {
	if strings.HasPrefix(q, "\"") || !strings.Contains(q, " ") {
		return q
	}
	return "\"" + q + "\""
}

// quote is git's core.quotePath quoting: names with control characters,
// quotes, backslashes or bytes above 0x7f are C-quoted.
func (r *repo) quote(p string) string {
	need := false
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			need = true
			break
		}
	}
	if !need {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// expandShortFlags splits combined single-letter flags ("-sb" is "-s -b").
func expandShortFlags(args []string) []string {
	var out []string
	for _, a := range args {
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && !strings.ContainsAny(a, "=") && a[1] != 'u' {
			for _, c := range a[1:] {
				out = append(out, "-"+string(c))
			}
			continue
		}
		out = append(out, a)
	}
	return out
}
