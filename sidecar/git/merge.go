package git

import (
	"fmt"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// mergeOpts say how merge or pull goes on when HEAD cannot fast-forward.
type mergeOpts struct {
	cmd    string // merge or pull, for messages
	ffOnly bool
	// reflog starts the reflog message: the command as typed ("merge
	// topic", "pull -q"), as git logs it.
	reflog string
	// message is the merge commit's ("Merge branch 'topic'").
	message string
	// divergent, when set, is returned instead of making a merge commit:
	// pull's refusal when nobody said how to reconcile.
	divergent error
}

// applyChanges applies changes (from a base to theirs) onto ours: a file
// ours still has as the base had it takes their version, one ours already
// has as theirs is kept. It returns the result and the paths changed on
// both sides, which would need a content merge.
func applyChanges(ours snapshot, changes []change) (snapshot, []string) {
	result := make(snapshot, len(ours))
	for p, b := range ours {
		result[p] = b
	}
	var both []string
	for _, ch := range changes {
		p := ch.path()
		cur, now := ours[p]
		switch {
		case same(cur, now, ch.to):
		case same(cur, now, ch.from):
			if ch.to == nil {
				delete(result, p)
			} else {
				result[p] = ch.to
			}
		default:
			both = append(both, p)
		}
	}
	return result, both
}

// mergeCommit merges target into HEAD with a merge commit, as git's ort
// strategy does: files changed on both sides are merged line by line; a
// conflict, or a merge that would overwrite a local change, is refused
// before anything changes.
func (r *repo) mergeCommit(h *head, target *object.Commit, o mergeOpts) error {
	bases, err := r.mergeBases(h.commit, target)
	if err != nil {
		return err
	}
	if len(bases) != 1 {
		return unsupported("git " + o.cmd + " with other than one merge base")
	}
	base, err := r.commitSnapshot(bases[0])
	if err != nil {
		return err
	}
	ours, err := r.commitSnapshot(h.commit)
	if err != nil {
		return err
	}
	theirs, err := r.commitSnapshot(target)
	if err != nil {
		return err
	}
	result, notes, blobs, err := r.mergeTrees(base, ours, theirs, "the merge was not made")
	if err != nil {
		return err
	}
	st, err := r.state(false)
	if err != nil {
		return err
	}
	if len(st.staged) > 0 {
		return unsupported("git " + o.cmd + " that makes a merge commit over staged changes")
	}
	changes := compare(ours, result)
	var dirty []string
	for _, u := range st.unstaged {
		if _, ok := changedPath(changes, u.path()); ok {
			dirty = append(dirty, u.path())
		}
	}
	if len(dirty) > 0 {
		return errorf(2, "error: Your local changes to the following files would be overwritten by merge:\n\t%s\nPlease commit your changes or stash them before you merge.\nAborting\nMerge with strategy ort failed.\n", strings.Join(dirty, "\n\t"))
	}
	for _, data := range blobs {
		if _, err := r.writeBlob(data); err != nil {
			return err
		}
	}
	if _, err := r.switchTrees(ours, result, false); err != nil {
		return err
	}
	author, committer, err := r.identities()
	if err != nil {
		return err
	}
	hash, err := r.wt.Commit(o.message+"\n", &gogit.CommitOptions{Author: author, Committer: committer,
		Parents: []plumbing.Hash{h.commit.Hash, target.Hash}, AllowEmptyCommits: true})
	if err != nil {
		return err
	}
	if err := r.logHeadMove(h, hash, o.reflog+": Merge made by the 'ort' strategy."); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(r.out, n)
	}
	fmt.Fprintln(r.out, "Merge made by the 'ort' strategy.")
	cs, err := withRenames(changes)
	if err != nil {
		return err
	}
	return diffOutput{stat: true, summary: true}.write(r.out, cs, r.abbrev)
}

// mergeMessage is git's merge commit message for merging rev (as typed)
// into branch.
func (r *repo) mergeMessage(rev, branch string) (string, error) {
	what := "commit '" + rev + "'"
	for _, k := range []struct{ prefix, name string }{{"refs/heads/", "branch"}, {"refs/remotes/", "remote-tracking branch"}, {"refs/tags/", "tag"}} {
		if _, ok, err := r.ref(plumbing.ReferenceName(k.prefix + rev)); err != nil {
			return "", err
		} else if ok {
			if k.name == "tag" {
				return "", unsupported("git merge of a tag that needs a merge commit")
			}
			what = k.name + " '" + rev + "'"
			break
		}
	}
	return "Merge " + what + into(branch), nil
}

// into is what git's merge message says of the branch merged into: nothing
// for main and master (merge.suppressDest's default).
func into(branch string) string {
	if branch == "main" || branch == "master" || branch == "" {
		return ""
	}
	return " into " + branch
}

// pullHint is pull's refusal of divergent branches when neither the
// command line nor pull.rebase or pull.ff says what to do.
var pullHint = errorf(128, `hint: You have divergent branches and need to specify how to reconcile them.
hint: You can do so by running one of the following commands sometime before
hint: your next pull:
hint: 
hint:   git config pull.rebase false  # merge
hint:   git config pull.rebase true   # rebase
hint:   git config pull.ff only       # fast-forward only
hint: 
hint: You can replace "git config" with "git config --global" to set a default
hint: preference for all repositories. You can also pass --rebase, --no-rebase,
hint: or --ff-only on the command line to override the configured default per
hint: invocation.
fatal: Need to specify how to reconcile divergent branches.
`)
