package git

import (
	"fmt"
	"strings"

	gogit "github.com/go-git/go-git/v5"
)

func cmdCherryPick(s *session, args []string) error { return pick(s, args, "cherry-pick") }
func cmdRevert(s *session, args []string) error     { return pick(s, args, "revert") }

// pick applies one commit's change (cherry-pick) or its inverse (revert)
// onto HEAD and commits it. Only what needs no content merge is done: each
// file the commit changes must be, in HEAD, as the commit found it (or
// already as it leaves it); anything else, an empty result, a merge or
// root commit, is refused before anything changes.
func pick(s *session, args []string, cmd string) error {
	rest, err := flags(cmd, args, map[string]*bool{})
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return unsupported("git " + cmd + " of other than one commit")
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	h, err := r.head()
	if err != nil {
		return err
	}
	c, err := r.resolve(rest[0])
	if err != nil {
		return fatalf("bad revision '%s'", rest[0])
	}
	if h.commit == nil {
		return unsupported("git " + cmd + " onto an unborn branch")
	}
	if c.NumParents() != 1 {
		return unsupported("git " + cmd + " of a merge or root commit")
	}
	st, err := r.state(false)
	if err != nil {
		return err
	}
	if len(st.staged) > 0 {
		return errorf(128, "error: your local changes would be overwritten by %s.\nhint: commit your changes or stash them to proceed.\nfatal: %s failed\n", cmd, cmd)
	}
	parent, err := c.Parent(0)
	if err != nil {
		return err
	}
	base, err := r.commitSnapshot(parent)
	if err != nil {
		return err
	}
	theirs, err := r.commitSnapshot(c)
	if err != nil {
		return err
	}
	if cmd == "revert" {
		base, theirs = theirs, base
	}
	ours, err := r.commitSnapshot(h.commit)
	if err != nil {
		return err
	}
	changes := compare(base, theirs)
	result, both := applyChanges(ours, changes)
	if len(both) > 0 {
		return unsupported("git " + cmd + " that needs a content merge (" + both[0] + " changed on both sides)")
	}
	if len(compare(ours, result)) == 0 {
		return unsupported("git " + cmd + " whose result is empty")
	}
	var dirty []string
	for _, u := range st.unstaged {
		if _, ok := changedPath(changes, u.path()); ok {
			dirty = append(dirty, u.path())
		}
	}
	if len(dirty) > 0 {
		return errorf(128, "error: Your local changes to the following files would be overwritten by merge:\n\t%s\nPlease commit your changes or stash them before you merge.\nAborting\nfatal: %s failed\n", strings.Join(dirty, "\n\t"), cmd)
	}
	if _, err := r.switchTrees(ours, result, false); err != nil {
		return err
	}
	committer, err := r.signature("COMMITTER")
	if err != nil {
		return err
	}
	author, msg := &c.Author, c.Message
	if cmd == "revert" {
		if author, err = r.signature("AUTHOR"); err != nil {
			return err
		}
		msg = fmt.Sprintf("Revert \"%s\"\n\nThis reverts commit %s.\n", subject(c.Message), c.Hash)
	}
	hash, err := r.wt.Commit(msg, &gogit.CommitOptions{Author: author, Committer: committer, AllowEmptyCommits: true})
	if err != nil {
		return err
	}
	nc, err := r.r.CommitObject(hash)
	if err != nil {
		return err
	}
	if err := r.logHeadMove(h, hash, cmd+": "+subject(msg)); err != nil {
		return err
	}
	cs, err := r.commitChanges(nc)
	if err != nil {
		return err
	}
	return r.printCommitSummary(nc, h, cs, true)
}

// same says whether the file a side has at a path (b, present) is x (nil:
// absent).
func same(b *blobRef, present bool, x *blobRef) bool {
	if x == nil {
		return !present
	}
	return present && b.hash == x.hash && b.mode == x.mode
}
