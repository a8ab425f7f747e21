package git

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

const stashRef = plumbing.ReferenceName("refs/stash")

// cmdStash is git stash push (also bare), list, show, apply and pop
// (also --index), drop, branch and clear, with git's
// commits: an index commit (parent HEAD) and a worktree commit (parents
// HEAD and the index commit) at refs/stash, each stash a line of its
// reflog. Untracked files stay where they are, as without -u.
func cmdStash(s *session, args []string) error {
	sub := "push"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	switch sub {
	case "push", "save":
		var quiet, untracked bool
		var msg string
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case a == "-q" || a == "--quiet":
				quiet = true
			case a == "-u" || a == "--include-untracked":
				untracked = true
			case (a == "-m" || a == "--message") && i+1 < len(args) && sub == "push":
				msg = args[i+1]
				i++
			default:
				return unsupported("git stash " + sub + " " + a)
			}
		}
		if quiet {
			r.out = io.Discard
		}
		return r.stashPush(msg, untracked)
	case "list":
		if len(args) > 0 {
			return unsupported("git stash list " + strings.Join(args, " "))
		}
		return r.stashList()
	case "clear":
		if len(args) > 0 {
			return errorf(1, "error: git stash clear with arguments is unimplemented\n")
		}
		if err := r.r.Storer.RemoveReference(stashRef); err != nil {
			return err
		}
		return r.dropLog(stashRef)
	case "apply", "pop", "drop", "show", "branch":
		var quiet, withIndex bool
		var show diffOutput
		var rest []string
		for _, a := range args {
			switch {
			case (a == "-q" || a == "--quiet") && sub != "show" && sub != "branch":
				quiet = true
			case a == "--index" && (sub == "apply" || sub == "pop"):
				withIndex = true
			case (a == "-p" || a == "--patch" || a == "-u") && sub == "show":
				show.patch = true
			case a == "--stat" && sub == "show":
				show.stat = true
			case strings.HasPrefix(a, "-"):
				return unsupported("git stash " + sub + " " + a)
			default:
				rest = append(rest, a)
			}
		}
		branch := ""
		if sub == "branch" {
			if len(rest) == 0 {
				return errorf(1, "No branch name specified\n")
			}
			branch, rest, withIndex = rest[0], rest[1:], true
		}
		if len(rest) > 1 {
			return fatalf("Too many revisions specified: %s", strings.Join(rest, " "))
		}
		list, err := r.stashes()
		if err != nil {
			return err
		}
		arg := ""
		if len(rest) == 1 {
			arg = rest[0]
		}
		e, err := pickStash(list, arg)
		if err != nil {
			return err
		}
		switch sub {
		case "show":
			return r.stashShow(e, show)
		case "drop":
			return r.dropStash(list, e, quiet)
		}
		if sub == "branch" {
			// git checkout -b BRANCH at the commit the stash was made on,
			// then pop --index.
			w, err := r.r.CommitObject(e.hash)
			if err != nil {
				return err
			}
			if w.NumParents() == 0 {
				return fatalf("'%s' is not a stash-like commit", e.name)
			}
			if err := r.checkoutNewBranch(branch, w.ParentHashes[0].String(), false); err != nil {
				// git runs checkout as a child: stash exits 1 whatever it said.
				if ee := (*exitError)(nil); errors.As(err, &ee) {
					return &exitError{code: 1, msg: ee.msg}
				}
				return err
			}
		}
		err = r.stashApply(e, quiet, withIndex)
		var refused *exitError
		if sub == "pop" && errors.As(err, &refused) {
			fmt.Fprintln(r.out, "The stash entry is kept in case you need it again.")
		}
		if err != nil || sub == "apply" {
			return err
		}
		return r.dropStash(list, e, quiet)
	}
	return unsupported("git stash " + sub)
}

// stashPush is git stash push; with untracked (-u) the untracked files
// that are not ignored go into a third commit (the stash's third parent,
// even when there are none) and leave the worktree, as git clean -d does.
func (r *repo) stashPush(msg string, untracked bool) error {
	st, err := r.state(untracked)
	if err != nil {
		return err
	}
	h := st.head
	if h.commit == nil {
		return fatalf("You do not have the initial commit yet")
	}
	if !untracked {
		st.scan.untracked = nil
	}
	if len(st.staged) == 0 && len(st.unstaged) == 0 && len(st.scan.untracked) == 0 {
		fmt.Fprintln(r.out, "No local changes to save")
		return nil
	}
	branch := h.branch
	if branch == "" {
		branch = "(no branch)"
	}
	what := fmt.Sprintf("%s: %s %s", branch, r.abbrev(h.commit.Hash), subject(h.commit.Message))
	wip := "WIP on " + what
	if msg != "" {
		wip = "On " + branch + ": " + msg
	}
	author, committer, err := r.identities()
	if err != nil {
		return err
	}
	idxTree, err := r.writeTree(r.indexSnapshot(st.idx))
	if err != nil {
		return err
	}
	iCommit, err := r.writeCommit(&object.Commit{Author: *author, Committer: *committer, Message: "index on " + what + "\n",
		TreeHash: idxTree, ParentHashes: []plumbing.Hash{h.commit.Hash}})
	if err != nil {
		return err
	}
	parents := []plumbing.Hash{h.commit.Hash, iCommit}
	if untracked {
		files := snapshot{}
		for _, p := range st.scan.untracked {
			f := st.scan.files[p]
			data, err := r.readWorktree(f)
			if err != nil {
				return err
			}
			hash, err := r.writeBlob(data)
			if err != nil {
				return err
			}
			files[p] = &blobRef{path: p, mode: f.mode, hash: hash}
		}
		uTree, err := r.writeTree(files)
		if err != nil {
			return err
		}
		uCommit, err := r.writeCommit(&object.Commit{Author: *author, Committer: *committer, Message: "untracked files on " + what + "\n", TreeHash: uTree})
		if err != nil {
			return err
		}
		parents = append(parents, uCommit)
	}
	work := r.worktreeSnapshot(st.idx, st.scan)
	for _, p := range st.scan.modified {
		data, err := r.readWorktree(st.scan.files[p])
		if err != nil {
			return err
		}
		if _, err := r.writeBlob(data); err != nil {
			return err
		}
	}
	wTree, err := r.writeTree(work)
	if err != nil {
		return err
	}
	wCommit, err := r.writeCommit(&object.Commit{Author: *author, Committer: *committer, Message: wip, // git ends this one without a newline
		TreeHash: wTree, ParentHashes: parents})
	if err != nil {
		return err
	}
	old := plumbing.ZeroHash
	if ref, ok, err := r.ref(stashRef); err != nil {
		return err
	} else if ok {
		old = ref.Hash()
	}
	if err := r.r.Storer.SetReference(plumbing.NewHashReference(stashRef, wCommit)); err != nil {
		return err
	}
	if err := r.appendLog(stashRef, old, wCommit, wip); err != nil {
		return err
	}
	// git reset --hard, as stash runs it.
	headSnap, err := r.commitSnapshot(h.commit)
	if err != nil {
		return err
	}
	if _, err := r.switchTrees(headSnap, headSnap, true); err != nil {
		return err
	}
	if err := r.logRef(plumbing.HEAD, h.commit.Hash, h.commit.Hash, "reset: moving to HEAD"); err != nil {
		return err
	}
	for _, p := range st.scan.untracked {
		if err := r.fs.Remove(p); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return err
		}
		removeEmptyParents(r.fs, p)
	}
	fmt.Fprintf(r.out, "Saved working directory and index state %s\n", wip)
	return nil
}

// stashEntry is a line of refs/stash's reflog.
type stashEntry struct {
	line string
	hash plumbing.Hash
	msg  string
	// n is the entry's place (stash@{n}) and name how git names it in
	// messages: as given, or refs/stash@{n} for a number or none.
	n    int
	name string
}

// pickStash is the entry arg names (stash@{N}, refs/stash@{N} or N; none
// is the newest), or git's complaint.
func pickStash(list []stashEntry, arg string) (stashEntry, error) {
	if len(list) == 0 {
		return stashEntry{}, errorf(1, "No stash entries found.\n")
	}
	name, log := arg, "stash"
	num := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(arg, "refs/"), "stash@{"), "}")
	switch {
	case arg == "":
		name, log, num = "refs/stash@{0}", "refs/stash", "0"
	case !strings.Contains(arg, "@{"):
		name, log = "refs/stash@{"+arg+"}", "refs/stash"
	case strings.HasPrefix(arg, "refs/"):
		log = "refs/stash"
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || num != strconv.Itoa(n) || strings.Contains(arg, "@{") && !strings.HasSuffix(arg, "}") {
		return stashEntry{}, errorf(1, "error: %s is not a valid reference\n", arg)
	}
	if n >= len(list) {
		return stashEntry{}, fatalf("log for '%s' only has %d entries", log, len(list))
	}
	e := list[n]
	e.n, e.name = n, name
	return e, nil
}

// stashes lists the stash reflog, newest first.
func (r *repo) stashes() ([]stashEntry, error) {
	data, err := readAll(r.dot, "logs/"+stashRef.String())
	if err != nil {
		return nil, nil // no stash
	}
	var out []stashEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		_, msg, _ := strings.Cut(line, "\t")
		if len(f) < 2 {
			continue
		}
		out = append(out, stashEntry{line: line, hash: plumbing.NewHash(f[1]), msg: msg})
	}
	slices.Reverse(out)
	return out, nil
}

func (r *repo) stashList() error {
	list, err := r.stashes()
	if err != nil {
		return err
	}
	for i, e := range list {
		fmt.Fprintf(r.out, "stash@{%d}: %s\n", i, e.msg)
	}
	return nil
}

// stashApply applies a stash entry. The worktree takes the stash's
// changes; the index keeps HEAD's version but of files the stash adds,
// as git stash apply without --index leaves it; withIndex (--index) gives
// it the stash's staged changes too, where HEAD has the files the stash
// was made on (git applies them as a patch; elsewhere it is refused as
// not supported). A file changed both in
// the stash and since is merged line by line, as git's ort merge does;
// changes that collide are refused with git's Auto-merging and CONFLICT
// lines and nothing changes (git would write conflict markers). Local
// changes the stash would overwrite are refused as git refuses them;
// other local changes are refused as not supported.
func (r *repo) stashApply(top stashEntry, quiet, withIndex bool) error {
	w, err := r.r.CommitObject(top.hash)
	if err != nil {
		return err
	}
	if n := w.NumParents(); n != 2 && n != 3 {
		return fatalf("'%s' is not a stash-like commit", top.name)
	}
	baseCommit, err := w.Parent(0)
	if err != nil {
		return err
	}
	st, err := r.state(false)
	if err != nil {
		return err
	}
	h := st.head
	if h.commit == nil {
		return unsupported("git stash pop onto an unborn branch")
	}
	base, err := r.commitSnapshot(baseCommit)
	if err != nil {
		return err
	}
	stashed, err := r.commitSnapshot(w)
	if err != nil {
		return err
	}
	ours, err := r.commitSnapshot(h.commit)
	if err != nil {
		return err
	}
	var untracked snapshot // the stash's untracked files (-u)
	if w.NumParents() == 3 {
		uc, err := w.Parent(2)
		if err != nil {
			return err
		}
		if untracked, err = r.commitSnapshot(uc); err != nil {
			return err
		}
		// git restores them before it looks at anything else, and keeps
		// them when it then refuses: a half-applied stash, not copied.
		if len(untracked) > 0 && (len(st.staged) > 0 || len(st.unstaged) > 0) {
			return unsupported("git stash apply or pop of untracked files over local changes")
		}
		for p := range untracked {
			if _, err := r.fs.Lstat(p); err == nil {
				return unsupported("git stash apply or pop of untracked files over files that exist (" + p + ")")
			}
		}
	}
	var staged []change // base to the stash's index, for --index
	var staging snapshot
	if withIndex {
		ic, err := w.Parent(1)
		if err != nil {
			return err
		}
		if staging, err = r.commitSnapshot(ic); err != nil {
			return err
		}
		staged = compare(base, staging)
		for _, c := range staged {
			p := c.path()
			if o, b := ours[p], base[p]; (o == nil) != (b == nil) || o != nil && (o.hash != b.hash || o.mode != b.mode) {
				return unsupported("git stash apply --index where HEAD changed a file staged in the stash")
			}
		}
	}
	result, notes, blobs, err := r.mergeTrees(base, ours, stashed, "the stash was not applied")
	if err != nil {
		return err
	}
	changes := compare(base, stashed)
	var dirty []string
	for _, c := range append(slices.Clone(st.staged), st.unstaged...) {
		if _, ok := changedPath(changes, c.path()); ok && !slices.Contains(dirty, c.path()) {
			dirty = append(dirty, c.path())
		}
	}
	if len(dirty) > 0 {
		slices.Sort(dirty)
		if !quiet {
			r.statusLong(r.out, st, "No commits yet")
		}
		return errorf(1, "error: Your local changes to the following files would be overwritten by merge:\n\t%s\nPlease commit your changes or stash them before you merge.\nAborting\n", strings.Join(dirty, "\n\t"))
	}
	if len(st.staged) > 0 || len(st.unstaged) > 0 {
		return unsupported("git stash apply or pop over local changes")
	}
	for _, data := range blobs {
		if _, err := r.writeBlob(data); err != nil {
			return err
		}
	}
	for _, n := range notes {
		fmt.Fprintln(r.out, n)
	}
	if len(changes) == 0 {
		// Only untracked files: ort's word for a merge that changes nothing.
		fmt.Fprintln(r.out, "Already up to date.")
	}
	for _, b := range untracked {
		if _, err := r.writeWorktree(b); err != nil {
			return err
		}
	}
	if _, err := r.switchTrees(ours, result, false); err != nil {
		return err
	}
	// Unstage what the stash changed, but new files.
	idx, err := r.index()
	if err != nil {
		return err
	}
	for _, c := range compare(ours, result) {
		p := c.path()
		b, inHead := ours[p]
		if !inHead {
			continue
		}
		e, ok := idx.entry(p)
		if !ok {
			e = idx.add(p)
		}
		*e = index.Entry{Name: p, Hash: b.hash, Mode: b.mode} // no stat data: the worktree is compared by content
	}
	for _, c := range staged {
		p := c.path()
		b, ok := staging[p]
		if !ok {
			idx.remove(p)
			continue
		}
		e, ok := idx.entry(p)
		if !ok {
			e = idx.add(p)
		}
		*e = index.Entry{Name: p, Hash: b.hash, Mode: b.mode}
	}
	if err := r.setIndex(idx); err != nil {
		return err
	}
	if len(staged) > 0 {
		// git resets to HEAD after applying the staged changes.
		if err := r.logRef(plumbing.HEAD, h.commit.Hash, h.commit.Hash, "reset: moving to HEAD"); err != nil {
			return err
		}
	}
	if !quiet {
		st, err := r.state(false)
		if err != nil {
			return err
		}
		r.statusLong(r.out, st, "No commits yet")
	}
	return nil
}

// stashShow prints what a stash entry changed from the commit it was made
// on: a diffstat unless -p alone.
func (r *repo) stashShow(e stashEntry, o diffOutput) error {
	w, err := r.r.CommitObject(e.hash)
	if err != nil {
		return err
	}
	baseCommit, err := w.Parent(0)
	if err != nil {
		return err
	}
	base, err := r.commitSnapshot(baseCommit)
	if err != nil {
		return err
	}
	stashed, err := r.commitSnapshot(w)
	if err != nil {
		return err
	}
	cs, err := withRenames(compare(base, stashed))
	if err != nil {
		return err
	}
	if !o.patch {
		o.stat = true
	}
	return o.write(r.out, cs, r.abbrev)
}

// dropStash removes entry e from the stash's reflog; refs/stash goes to
// the newest one left, or away with its reflog when none is.
func (r *repo) dropStash(list []stashEntry, e stashEntry, quiet bool) error {
	left := slices.Delete(slices.Clone(list), e.n, e.n+1)
	if len(left) == 0 {
		if err := r.r.Storer.RemoveReference(stashRef); err != nil {
			return err
		}
		if err := r.dropLog(stashRef); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		for i := len(left) - 1; i >= 0; i-- {
			b.WriteString(left[i].line + "\n")
		}
		f, err := r.dot.OpenFile("logs/"+stashRef.String(), os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return fmt.Errorf("reflog %s: %w", stashRef, err)
		}
		_, err = io.WriteString(f, b.String())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("reflog %s: %w", stashRef, err)
		}
		if err := r.r.Storer.SetReference(plumbing.NewHashReference(stashRef, left[0].hash)); err != nil {
			return err
		}
	}
	if !quiet {
		fmt.Fprintf(r.out, "Dropped %s (%s)\n", e.name, e.hash)
	}
	return nil
}

// writeTree stores the trees of s and returns the root's.
func (r *repo) writeTree(s snapshot) (plumbing.Hash, error) {
	type dir struct {
		files map[string]*blobRef
		dirs  map[string]*dir
	}
	newDir := func() *dir { return &dir{files: map[string]*blobRef{}, dirs: map[string]*dir{}} }
	root := newDir()
	for p, b := range s {
		d := root
		parts := strings.Split(p, "/")
		for _, name := range parts[:len(parts)-1] {
			if d.dirs[name] == nil {
				d.dirs[name] = newDir()
			}
			d = d.dirs[name]
		}
		d.files[path.Base(p)] = b
	}
	var write func(d *dir) (plumbing.Hash, error)
	write = func(d *dir) (plumbing.Hash, error) {
		var t object.Tree
		for name, b := range d.files {
			t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: b.mode, Hash: b.hash})
		}
		for name, sub := range d.dirs {
			h, err := write(sub)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		// git orders a directory as if its name ended in "/".
		key := func(e object.TreeEntry) string {
			if e.Mode == filemode.Dir {
				return e.Name + "/"
			}
			return e.Name
		}
		slices.SortFunc(t.Entries, func(a, b object.TreeEntry) int { return strings.Compare(key(a), key(b)) })
		o := r.r.Storer.NewEncodedObject()
		if err := t.Encode(o); err != nil {
			return plumbing.ZeroHash, err
		}
		return r.r.Storer.SetEncodedObject(o)
	}
	return write(root)
}

func (r *repo) writeCommit(c *object.Commit) (plumbing.Hash, error) {
	o := r.r.Storer.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.r.Storer.SetEncodedObject(o)
}
