package git

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func validRefName(name string) bool {
	if name == "" || strings.HasPrefix(name, "-") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".lock") ||
		strings.Contains(name, "..") || strings.Contains(name, "//") || strings.Contains(name, "@{") || name == "@" {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	return true
}

func (r *repo) branches() ([]string, error) {
	it, err := r.r.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	var names []string
	err = it.ForEach(func(ref *plumbing.Reference) error {
		if ref.Name().IsBranch() {
			names = append(names, ref.Name().Short())
		}
		return nil
	})
	sort.Strings(names)
	return names, err
}

func (r *repo) ref(name plumbing.ReferenceName) (*plumbing.Reference, bool, error) {
	ref, err := r.r.Storer.Reference(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, false, nil
	}
	return ref, err == nil, err
}

// isAncestor reports whether a is reachable from b.
func (r *repo) isAncestor(a, b *object.Commit) (bool, error) {
	seen, err := r.reachable([]*object.Commit{b})
	if err != nil {
		return false, err
	}
	return seen[a.Hash], nil
}

func cmdBranch(s *session, args []string) error {
	r, err := s.open()
	if err != nil {
		return err
	}
	h, err := r.head()
	if err != nil {
		return err
	}
	var del, force, move, showCurrent bool
	var rest []string
	for _, a := range args {
		switch a {
		case "-d", "--delete":
			del = true
		case "-D":
			del, force = true, true
		case "-f", "--force":
			force = true
		case "-m", "--move":
			move = true
		case "-M":
			move, force = true, true
		case "--show-current":
			showCurrent = true
		case "--list", "-l":
		default:
			if strings.HasPrefix(a, "-") {
				return unsupported("git branch " + a)
			}
			rest = append(rest, a)
		}
	}
	switch {
	case showCurrent:
		if h.branch != "" {
			fmt.Fprintln(s.out, h.branch)
		}
		return nil
	case del:
		return r.deleteBranches(h, rest, force)
	case move:
		return r.renameBranch(h, rest, force)
	case len(rest) == 0:
		names, err := r.branches()
		if err != nil {
			return err
		}
		if h.branch == "" {
			fmt.Fprintf(s.out, "* (HEAD detached %s)\n", r.detachedName(h))
		}
		for _, n := range names {
			mark := "  "
			if n == h.branch {
				mark = "* "
			}
			fmt.Fprintf(s.out, "%s%s\n", mark, n)
		}
		return nil
	case len(rest) <= 2:
		// git names the start in the new branch's reflog: the current
		// branch by default.
		start := cmp.Or(h.branch, "HEAD")
		if len(rest) == 2 {
			start = rest[1]
		}
		return r.createBranch(rest[0], start, force)
	}
	return unsupported("git branch with these arguments")
}

func (r *repo) createBranch(name, start string, force bool) error {
	if !validRefName(name) {
		return fatalf("'%s' is not a valid branch name", name)
	}
	refName := plumbing.NewBranchReferenceName(name)
	existing, ok, err := r.ref(refName)
	if err != nil {
		return err
	} else if ok && !force {
		return fatalf("a branch named '%s' already exists", name)
	}
	c, err := r.resolve(start)
	if err != nil {
		return fatalf("not a valid object name: '%s'", start)
	}
	if err := r.r.Storer.SetReference(plumbing.NewHashReference(refName, c.Hash)); err != nil {
		return err
	}
	return r.logBranchStart(refName, existing, c.Hash, start)
}

// logBranchStart logs a branch created, or reset when it existed, at start.
func (r *repo) logBranchStart(name plumbing.ReferenceName, existing *plumbing.Reference, to plumbing.Hash, start string) error {
	if existing != nil {
		return r.logRef(name, existing.Hash(), to, "branch: Reset to "+start)
	}
	return r.logRef(name, plumbing.ZeroHash, to, "branch: Created from "+start)
}

func (r *repo) deleteBranches(h *head, names []string, force bool) error {
	if len(names) == 0 {
		return fatalf("branch name required")
	}
	var errs strings.Builder
	for _, n := range names {
		ref, ok, err := r.ref(plumbing.NewBranchReferenceName(n))
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintf(&errs, "error: branch '%s' not found.\n", n)
			continue
		}
		if n == h.branch {
			fmt.Fprintf(&errs, "error: Cannot delete branch '%s' checked out at '%s'\n", n, r.root)
			continue
		}
		if !force && h.commit != nil {
			c, err := r.r.CommitObject(ref.Hash())
			if err != nil {
				return err
			}
			ok, err := r.isAncestor(c, h.commit)
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintf(&errs, "error: The branch '%s' is not fully merged.\nIf you are sure you want to delete it, run 'git branch -D %s'.\n", n, n)
				continue
			}
		}
		if err := r.r.Storer.RemoveReference(ref.Name()); err != nil {
			return err
		}
		if err := r.dropLog(ref.Name()); err != nil {
			return err
		}
		fmt.Fprintf(r.out, "Deleted branch %s (was %s).\n", n, r.abbrev(ref.Hash()))
	}
	if errs.Len() > 0 {
		return errorf(1, "%s", errs.String())
	}
	return nil
}

func (r *repo) renameBranch(h *head, names []string, force bool) error {
	var from, to string
	switch len(names) {
	case 1:
		if h.branch == "" {
			return fatalf("cannot rename the current branch while not on any.")
		}
		from, to = h.branch, names[0]
	case 2:
		from, to = names[0], names[1]
	default:
		return fatalf("branch name required")
	}
	if !validRefName(to) {
		return fatalf("'%s' is not a valid branch name", to)
	}
	old, ok, err := r.ref(plumbing.NewBranchReferenceName(from))
	if err != nil {
		return err
	}
	if !ok && !(from == h.branch && h.commit == nil) {
		return fatalf("no branch named '%s'", from)
	}
	newName := plumbing.NewBranchReferenceName(to)
	if _, exists, err := r.ref(newName); err != nil {
		return err
	} else if exists && !force && from != to {
		return fatalf("a branch named '%s' already exists", to)
	}
	if ok {
		if err := r.r.Storer.SetReference(plumbing.NewHashReference(newName, old.Hash())); err != nil {
			return err
		}
		if from != to {
			if err := r.r.Storer.RemoveReference(old.Name()); err != nil {
				return err
			}
		}
		if err := r.renameLog(old.Name(), newName, old.Hash(), from == h.branch); err != nil {
			return err
		}
	}
	if from == h.branch {
		return r.r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, newName))
	}
	return nil
}

func cmdSwitch(s *session, args []string) error {
	var create, detach, force, quiet bool
	var rest []string
	for _, a := range args {
		switch a {
		case "-q", "--quiet":
			quiet = true
		case "-c", "--create":
			create = true
		case "-C", "--force-create":
			create, force = true, true
		case "-d", "--detach":
			detach = true
		case "-f", "--force", "--discard-changes":
			force = true
		case "-":
			rest = append(rest, "@{-1}")
		default:
			if strings.HasPrefix(a, "-") {
				return unsupported("git switch " + a)
			}
			rest = append(rest, a)
		}
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	if quiet {
		r.errw = io.Discard
	}
	switch {
	case create && len(rest) >= 1 && len(rest) <= 2:
		start := "HEAD"
		if len(rest) == 2 {
			start = rest[1]
		}
		return r.checkoutNewBranch(rest[0], start, force)
	case len(rest) != 1:
		return unsupported("git switch with these arguments")
	}
	name, ok, err := r.expandPrevious(rest[0])
	if err != nil {
		return err
	} else if !ok {
		return fatalf("invalid reference: %s", rest[0])
	}
	rest[0] = name
	if detach {
		return r.checkoutCommit(rest[0], force, false)
	}
	if _, ok, err := r.ref(plumbing.NewBranchReferenceName(rest[0])); err != nil {
		return err
	} else if !ok {
		if _, err := r.resolve(rest[0]); err == nil {
			return fatalf("a branch is expected, got commit '%s'\nhint: If you want to detach HEAD at the commit, try again with the --detach option.", rest[0])
		}
		return fatalf("invalid reference: %s", rest[0])
	}
	return r.checkoutBranch(rest[0], force)
}

func cmdCheckout(s *session, args []string) error {
	opts, paths, dashdash := splitDashDash(args)
	var create, detach, force, quiet bool
	var rest []string
	for _, a := range opts {
		switch a {
		case "-b":
			create = true
		case "-B":
			create, force = true, true
		case "--detach":
			detach = true
		case "-f", "--force":
			force = true
		case "-q", "--quiet":
			quiet = true
		case "-":
			rest = append(rest, "@{-1}")
		default:
			if strings.HasPrefix(a, "-") {
				return unsupported("git checkout " + a)
			}
			rest = append(rest, a)
		}
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	if quiet {
		r.errw = io.Discard
	}
	if create {
		if len(rest) < 1 || len(rest) > 2 || dashdash {
			return unsupported("git checkout -b with these arguments")
		}
		start := "HEAD"
		if len(rest) == 2 {
			start = rest[1]
		}
		return r.checkoutNewBranch(rest[0], start, force)
	}
	if dashdash || len(rest) != 1 {
		// checkout [<tree-ish>] -- <paths>
		source := ""
		if dashdash && len(rest) == 1 {
			source = rest[0]
		} else if len(rest) > 1 || dashdash && len(rest) > 1 {
			return unsupported("git checkout with these arguments")
		}
		if len(paths) == 0 {
			return unsupported("git checkout with these arguments")
		}
		return r.restorePaths(paths, source, source != "", true, !dashdash && !quiet)
	}
	name, ok, err := r.expandPrevious(rest[0])
	if err != nil {
		return err
	} else if !ok {
		typed := rest[0]
		if slices.Contains(opts, "-") {
			typed = "-"
		}
		return errorf(1, "error: pathspec '%s' did not match any file(s) known to git\n", typed)
	}
	if _, ok, err := r.ref(plumbing.NewBranchReferenceName(name)); err != nil {
		return err
	} else if ok && !detach {
		return r.checkoutBranch(name, force)
	}
	if _, err := r.resolve(name); err == nil {
		return r.checkoutCommit(name, force, true)
	}
	// Not a revision: a path.
	return r.restorePaths(rest, "", false, true, !quiet)
}

func (r *repo) checkoutNewBranch(name, start string, force bool) error {
	h, err := r.head()
	if err != nil {
		return err
	}
	if h.commit == nil && start == "HEAD" {
		// On an unborn branch, -b just renames it.
		if !validRefName(name) {
			return fatalf("'%s' is not a valid branch name", name)
		}
		if err := r.r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(name))); err != nil {
			return err
		}
		fmt.Fprintf(r.errw, "Switched to a new branch '%s'\n", name)
		return nil
	}
	target, err := r.resolve(start)
	if err != nil {
		return err
	}
	if !validRefName(name) {
		return fatalf("'%s' is not a valid branch name", name)
	}
	existing, ok, err := r.ref(plumbing.NewBranchReferenceName(name))
	if err != nil {
		return err
	} else if ok && !force {
		return fatalf("a branch named '%s' already exists", name)
	}
	kept, err := r.moveTo(h, target, false)
	if err != nil {
		return err
	}
	refName := plumbing.NewBranchReferenceName(name)
	if err := r.r.Storer.SetReference(plumbing.NewHashReference(refName, target.Hash)); err != nil {
		return err
	}
	if err := r.r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, refName)); err != nil {
		return err
	}
	if err := r.logBranchStart(refName, existing, target.Hash, start); err != nil {
		return err
	}
	if err := r.logCheckout(h, name, target.Hash); err != nil {
		return err
	}
	r.printKept(kept)
	fmt.Fprintf(r.errw, "Switched to a new branch '%s'\n", name)
	return nil
}

// moveTo updates worktree and index from HEAD's commit to target's.
func (r *repo) moveTo(h *head, target *object.Commit, force bool) ([]string, error) {
	from, err := r.commitSnapshot(h.commit)
	if err != nil {
		return nil, err
	}
	to, err := r.commitSnapshot(target)
	if err != nil {
		return nil, err
	}
	return r.switchTrees(from, to, force)
}

func (r *repo) printKept(kept []string) {
	for _, p := range kept {
		fmt.Fprintf(r.out, "M\t%s\n", p)
	}
}

func (r *repo) checkoutBranch(name string, force bool) error {
	h, err := r.head()
	if err != nil {
		return err
	}
	if h.branch == name {
		if force && h.commit != nil {
			if _, err := r.moveTo(h, h.commit, true); err != nil {
				return err
			}
		} else if st, err := r.state(false); err == nil && h.commit != nil {
			for _, e := range st.entries() {
				code := byte(' ')
				if e.unstaged != nil {
					code = changeCode(*e.unstaged)
				} else if e.staged != nil {
					code = changeCode(*e.staged)
				}
				fmt.Fprintf(r.out, "%c\t%s\n", code, e.path)
			}
		}
		if h.commit != nil {
			if err := r.logCheckout(h, name, h.commit.Hash); err != nil {
				return err
			}
		}
		fmt.Fprintf(r.errw, "Already on '%s'\n", name)
		return nil
	}
	target, err := r.resolve(plumbing.NewBranchReferenceName(name).String())
	if err != nil {
		return err
	}
	kept, err := r.moveTo(h, target, force)
	if err != nil {
		return err
	}
	if err := r.r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(name))); err != nil {
		return err
	}
	if err := r.logCheckout(h, name, target.Hash); err != nil {
		return err
	}
	if h.branch == "" && h.commit != nil {
		fmt.Fprintf(r.errw, "Previous HEAD position was %s %s\n", r.abbrev(h.commit.Hash), subject(h.commit.Message))
	}
	r.printKept(kept)
	fmt.Fprintf(r.errw, "Switched to branch '%s'\n", name)
	return nil
}

const detachedAdvice = `Note: switching to '%s'.

You are in 'detached HEAD' state. You can look around, make experimental
changes and commit them, and you can discard any commits you make in this
state without impacting any branches by switching back to a branch.

If you want to create a new branch to retain commits you create, you may
do so (now or later) by using -c with the switch command. Example:

  git switch -c <new-branch-name>

Or undo this operation with:

  git switch -

Turn off this advice by setting config variable advice.detachedHead to false

`

// checkoutCommit detaches HEAD at rev; advise prints git's note on the
// detached state (checkout does, switch --detach does not).
func (r *repo) checkoutCommit(rev string, force, advise bool) error {
	h, err := r.head()
	if err != nil {
		return err
	}
	target, err := r.resolve(rev)
	if err != nil {
		return err
	}
	kept, err := r.moveTo(h, target, force)
	if err != nil {
		return err
	}
	if err := r.r.Storer.SetReference(plumbing.NewHashReference(plumbing.HEAD, target.Hash)); err != nil {
		return err
	}
	if err := r.logCheckout(h, rev, target.Hash); err != nil {
		return err
	}
	if h.branch == "" && h.commit != nil && h.commit.Hash != target.Hash {
		fmt.Fprintf(r.errw, "Previous HEAD position was %s %s\n", r.abbrev(h.commit.Hash), subject(h.commit.Message))
	}
	r.printKept(kept)
	if h.branch != "" && advise {
		if v, ok := r.configValue("advice.detachedhead"); !ok || v != "false" {
			fmt.Fprintf(r.errw, detachedAdvice, rev)
		}
	}
	fmt.Fprintf(r.errw, "HEAD is now at %s %s\n", r.abbrev(target.Hash), subject(target.Message))
	return nil
}

// restorePaths copies paths from the source (a commit, or the index when
// source is "") into the index (staged) and/or the worktree.
func (r *repo) restorePaths(args []string, source string, staged, worktree, reportCount bool) error {
	paths, err := r.pathspecs(args)
	if err != nil {
		return err
	}
	idx, err := r.index()
	if err != nil {
		return err
	}
	var from snapshot
	if source == "" && !staged {
		from = r.indexSnapshot(idx)
	} else {
		rev := source
		if rev == "" {
			rev = "HEAD"
		}
		var err error
		if from, err = r.revSnapshot(rev); err != nil {
			return err
		}
	}
	for i, p := range paths {
		if len(restrict(from, []string{p})) == 0 && !(staged && underIndex(idx, p)) {
			return errorf(1, "error: pathspec '%s' did not match any file(s) known to git\n", args[i])
		}
	}
	n := 0
	sel := restrict(from, paths)
	names := make([]string, 0, len(sel))
	for p := range sel {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		b := sel[p]
		if worktree && r.worktreeHas(b) {
			if staged {
				if e, ok := idx.entry(p); ok && e.Hash == b.hash && e.Mode == b.mode {
					continue
				}
			} else {
				continue
			}
		}
		switch {
		case worktree && staged:
			if err := r.writeFile(idx, b); err != nil {
				return err
			}
		case worktree:
			f, err := r.writeWorktree(b)
			if err != nil {
				return err
			}
			if e, ok := idx.entry(p); ok && e.Hash == b.hash && e.Mode == b.mode {
				setStat(e, f)
			}
		default:
			e := idx.add(p)
			e.Hash, e.Mode = b.hash, b.mode
			e.ModifiedAt = e.ModifiedAt.Add(-1) // force the next scan to hash it
		}
		n++
	}
	if staged {
		// Index entries the source does not have are removed.
		var gone []string
		for _, e := range idx.Entries {
			if underAny(e.Name, paths) {
				if _, ok := sel[e.Name]; !ok {
					gone = append(gone, e.Name)
				}
			}
		}
		for _, p := range gone {
			if worktree {
				if err := r.removeFile(idx, p); err != nil {
					return err
				}
			} else {
				idx.remove(p)
			}
		}
	}
	if err := r.setIndex(idx); err != nil {
		return err
	}
	if reportCount {
		where := "the index"
		if source != "" {
			c, err := r.resolve(source)
			if err != nil {
				return err
			}
			where = r.abbrev(c.Hash)
		}
		fmt.Fprintf(r.errw, "Updated %d %s from %s\n", n, plural(n, "path", "paths"), where)
	}
	return nil
}

func cmdRestore(s *session, args []string) error {
	opts, paths, _ := splitDashDash(args)
	staged, worktree, source := false, false, ""
	for i := 0; i < len(opts); i++ {
		a := opts[i]
		switch {
		case a == "--staged" || a == "-S":
			staged = true
		case a == "--worktree" || a == "-W":
			worktree = true
		case strings.HasPrefix(a, "--source="):
			source = strings.TrimPrefix(a, "--source=")
		case (a == "-s" || a == "--source") && i+1 < len(opts):
			i++
			source = opts[i]
		case strings.HasPrefix(a, "-"):
			return unsupported("git restore " + a)
		default:
			paths = append(paths, a)
		}
	}
	if !staged {
		worktree = true
	}
	if len(paths) == 0 {
		return fatalf("you must specify path(s) to restore")
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	return r.restorePaths(paths, source, staged, worktree, false)
}

func cmdReset(s *session, args []string) error {
	opts, paths, dashdash := splitDashDash(args)
	mode := "mixed"
	quiet := false
	var rest []string
	for _, a := range opts {
		switch a {
		case "--soft", "--mixed", "--hard":
			mode = a[2:]
		case "-q", "--quiet":
			quiet = true
		default:
			if strings.HasPrefix(a, "-") {
				return unsupported("git reset " + a)
			}
			rest = append(rest, a)
		}
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	rev := "HEAD"
	if len(rest) > 0 {
		_, err := r.resolve(rest[0])
		switch {
		case err == nil || dashdash:
			rev, rest = rest[0], rest[1:]
		case !r.inWorktree(rest[0]):
			// Neither a revision nor a path: git's verify_filename.
			return err
		}
	}
	paths = append(rest, paths...)
	if len(paths) > 0 {
		if mode != "mixed" {
			return fatalf("Cannot do %s reset with paths.", mode)
		}
		if err := r.restorePaths(paths, rev, true, false, false); err != nil {
			return err
		}
		if !quiet {
			return r.printUnstaged()
		}
		return nil
	}
	h, err := r.head()
	if err != nil {
		return err
	}
	target, err := r.resolve(rev)
	if err != nil {
		if rev == "HEAD" && h.commit == nil {
			return unsupported("git reset on an unborn branch")
		}
		return err
	}
	switch mode {
	case "hard":
		if _, err := r.moveTo(h, target, true); err != nil {
			return err
		}
	case "mixed":
		to, err := r.commitSnapshot(target)
		if err != nil {
			return err
		}
		idx, err := r.index()
		if err != nil {
			return err
		}
		keep := map[string]*blobRef{}
		for p, b := range to {
			keep[p] = b
		}
		var entries = idx.Entries[:0]
		for _, e := range idx.Entries {
			b, ok := keep[e.Name]
			if !ok {
				continue
			}
			if e.Hash != b.hash || e.Mode != b.mode {
				e.Hash, e.Mode = b.hash, b.mode
				e.ModifiedAt = e.ModifiedAt.Add(-1)
			}
			delete(keep, e.Name)
			entries = append(entries, e)
		}
		idx.Entries = entries
		idx = newGitIndex(idx.Index)
		for p, b := range keep {
			e := idx.add(p)
			e.Hash, e.Mode = b.hash, b.mode
		}
		if err := r.setIndex(idx); err != nil {
			return err
		}
	}
	if err := r.setHead(h, target, "reset: moving to "+rev); err != nil {
		return err
	}
	switch {
	case mode == "hard" && !quiet:
		fmt.Fprintf(r.out, "HEAD is now at %s %s\n", r.abbrev(target.Hash), subject(target.Message))
	case mode == "mixed" && !quiet:
		return r.printUnstaged()
	}
	return nil
}

// setHead points the current branch (or a detached HEAD) at c, logging
// msg.
func (r *repo) setHead(h *head, c *object.Commit, msg string) error {
	name := plumbing.HEAD
	if h.branch != "" {
		name = plumbing.NewBranchReferenceName(h.branch)
	}
	if err := r.r.Storer.SetReference(plumbing.NewHashReference(name, c.Hash)); err != nil {
		return err
	}
	return r.logHeadMove(h, c.Hash, msg)
}

// printUnstaged is what reset prints after changing the index.
// inWorktree says whether a user's path argument names something in the
// worktree.
func (r *repo) inWorktree(arg string) bool {
	p, err := r.rel(arg)
	if err != nil {
		return false
	}
	_, err = r.fs.Lstat(p)
	return err == nil
}

func (r *repo) printUnstaged() error {
	st, err := r.state(false)
	if err != nil {
		return err
	}
	if len(st.unstaged) == 0 {
		return nil
	}
	fmt.Fprintln(r.out, "Unstaged changes after reset:")
	for _, c := range st.unstaged {
		fmt.Fprintf(r.out, "%c\t%s\n", changeCode(c), c.path())
	}
	return nil
}

func cmdTag(s *session, args []string) error {
	var del, annotate, force bool
	var msgs, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-d" || a == "--delete":
			del = true
		case a == "-a" || a == "--annotate":
			annotate = true
		case a == "-f" || a == "--force":
			force = true
		case (a == "-m" || a == "--message") && i+1 < len(args):
			i++
			msgs = append(msgs, args[i])
			annotate = true
		case a == "-l" || a == "--list":
		case strings.HasPrefix(a, "-"):
			return unsupported("git tag " + a)
		default:
			rest = append(rest, a)
		}
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	switch {
	case del:
		var errs strings.Builder
		for _, n := range rest {
			ref, ok, err := r.ref(plumbing.NewTagReferenceName(n))
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintf(&errs, "error: tag '%s' not found.\n", n)
				continue
			}
			if err := r.r.Storer.RemoveReference(ref.Name()); err != nil {
				return err
			}
			fmt.Fprintf(r.out, "Deleted tag '%s' (was %s)\n", n, r.abbrev(ref.Hash()))
		}
		if errs.Len() > 0 {
			return errorf(1, "%s", errs.String())
		}
		return nil
	case len(rest) == 0:
		it, err := r.r.Storer.IterReferences()
		if err != nil {
			return err
		}
		var names []string
		err = it.ForEach(func(ref *plumbing.Reference) error {
			if ref.Name().IsTag() {
				names = append(names, ref.Name().Short())
			}
			return nil
		})
		if err != nil {
			return err
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintln(r.out, n)
		}
		return nil
	case len(rest) > 2:
		return unsupported("git tag with these arguments")
	}
	name := rest[0]
	if !validRefName(name) {
		return fatalf("'%s' is not a valid tag name.", name)
	}
	if _, ok, err := r.ref(plumbing.NewTagReferenceName(name)); err != nil {
		return err
	} else if ok && !force {
		return fatalf("tag '%s' already exists", name)
	}
	rev := "HEAD"
	if len(rest) == 2 {
		rev = rest[1]
	}
	c, err := r.resolve(rev)
	if err != nil {
		if rev == "HEAD" {
			return fatalf("Failed to resolve 'HEAD' as a valid ref.")
		}
		return err
	}
	if !annotate {
		return r.r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewTagReferenceName(name), c.Hash))
	}
	if len(msgs) == 0 {
		return unsupported("git tag -a without -m (no editor)")
	}
	tagger, err := r.signature("COMMITTER")
	if err != nil {
		return err
	}
	tag := &object.Tag{Name: name, Tagger: *tagger, Message: cleanupMessage(strings.Join(msgs, "\n\n")), TargetType: plumbing.CommitObject, Target: c.Hash}
	obj := r.r.Storer.NewEncodedObject()
	if err := tag.Encode(obj); err != nil {
		return err
	}
	th, err := r.r.Storer.SetEncodedObject(obj)
	if err != nil {
		return err
	}
	return r.r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewTagReferenceName(name), th))
}

// cmdMerge fast-forwards; a merge that needs a merge commit is refused
// before anything changes.
func cmdMerge(s *session, args []string) error {
	ffOnly, quiet := false, false
	var rest []string
	for _, a := range args {
		switch a {
		case "-q", "--quiet":
			quiet = true
		case "--ff-only":
			ffOnly = true
		case "--ff":
		default:
			if strings.HasPrefix(a, "-") {
				return unsupported("git merge " + a)
			}
			rest = append(rest, a)
		}
	}
	if len(rest) != 1 {
		return unsupported("git merge with other than one commit")
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	if quiet {
		r.out = io.Discard
	}
	h, err := r.head()
	if err != nil {
		return err
	}
	target, err := r.resolve(rest[0])
	if err != nil {
		return fatalf("%s - not something we can merge", rest[0])
	}
	o := mergeOpts{cmd: "merge", ffOnly: ffOnly, reflog: "merge " + rest[0]}
	if o.message, err = r.mergeMessage(rest[0], h.branch); err != nil {
		return err
	}
	return r.mergeTo(h, target, o)
}

// mergeTo merges target into HEAD for git merge or pull: a fast-forward
// when it can, else a merge commit (mergeCommit) unless o forbids one.
func (r *repo) mergeTo(h *head, target *object.Commit, o mergeOpts) error {
	if h.commit == nil {
		return unsupported("git " + o.cmd + " into an unborn branch")
	}
	if up, err := r.isAncestor(target, h.commit); err != nil {
		return err
	} else if up {
		fmt.Fprintln(r.out, "Already up to date.")
		return nil
	}
	ff, err := r.isAncestor(h.commit, target)
	if err != nil {
		return err
	}
	switch {
	case ff:
		return r.fastForward(h, target, o.reflog+": Fast-forward")
	case o.ffOnly:
		return fatalf("Not possible to fast-forward, aborting.")
	case o.divergent != nil:
		return o.divergent
	}
	return r.mergeCommit(h, target, o)
}

// fastForward moves the branch, index and worktree on to target, a
// descendant, and prints what merge prints.
func (r *repo) fastForward(h *head, target *object.Commit, msg string) error {
	if _, err := r.moveTo(h, target, false); err != nil {
		return err
	}
	if err := r.setHead(h, target, msg); err != nil {
		return err
	}
	fmt.Fprintf(r.out, "Updating %s..%s\nFast-forward\n", r.abbrev(h.commit.Hash), r.abbrev(target.Hash))
	a, err := r.commitSnapshot(h.commit)
	if err != nil {
		return err
	}
	b, err := r.commitSnapshot(target)
	if err != nil {
		return err
	}
	cs, err := withRenames(compare(a, b))
	if err != nil {
		return err
	}
	return diffOutput{stat: true, summary: true}.write(r.out, cs, r.abbrev)
}

// worktreeHas reports whether the worktree file already holds b.
func (r *repo) worktreeHas(b *blobRef) bool {
	fi, err := r.fs.Lstat(b.path)
	if err != nil {
		return false
	}
	mode, ok := fileMode(fi)
	if !ok || mode != b.mode {
		return false
	}
	h, _, err := r.hashFile(&wtFile{path: b.path, fi: fi, mode: mode})
	return err == nil && h == b.hash
}
