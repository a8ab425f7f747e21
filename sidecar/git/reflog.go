package git

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Reflogs are written as git writes them (core.logAllRefUpdates, on by
// default in a worktree): one line per update of HEAD, a branch or a
// remote-tracking branch in .git/logs/<ref>, "<old> <new> <committer>
// <time> <tz>\t<message>". Real git's reflog, @{-1} and status read them.

// logRef appends an update of name to its reflog, its message's
// whitespace squeezed as git's copy_reflog_msg does. Without a committer
// identity (git would refuse the commit anyway) nothing is logged.
func (r *repo) logRef(name plumbing.ReferenceName, old, new plumbing.Hash, msg string) error {
	// git logs an update that changes nothing in HEAD's log only.
	if old == new && name != plumbing.HEAD {
		return nil
	}
	return r.appendLog(name, old, new, msg)
}

func (r *repo) appendLog(name plumbing.ReferenceName, old, new plumbing.Hash, msg string) error {
	if !name.IsBranch() && !name.IsRemote() && name != plumbing.HEAD && name != stashRef {
		return nil
	}
	who, err := r.signature("COMMITTER")
	if err != nil {
		return nil
	}
	f, err := r.dot.OpenFile("logs/"+name.String(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	_, err = fmt.Fprintf(f, "%s %s %s <%s> %d %s\t%s\n", old, new, who.Name, who.Email, who.When.Unix(), who.When.Format("-0700"), strings.Join(strings.Fields(msg), " "))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	return nil
}

// logHeadMove logs a change of the commit under HEAD: in HEAD's reflog
// and, when HEAD is on a branch, in the branch's.
func (r *repo) logHeadMove(h *head, new plumbing.Hash, msg string) error {
	old := plumbing.ZeroHash
	if h.commit != nil {
		old = h.commit.Hash
	}
	if h.branch != "" {
		if err := r.logRef(plumbing.NewBranchReferenceName(h.branch), old, new, msg); err != nil {
			return err
		}
	}
	return r.logRef(plumbing.HEAD, old, new, msg)
}

// logCheckout logs HEAD moving from where h was to the branch or revision
// named to, as git checkout and switch do.
func (r *repo) logCheckout(h *head, to string, new plumbing.Hash) error {
	from, old := h.branch, plumbing.ZeroHash
	if h.commit != nil {
		old = h.commit.Hash
		if from == "" {
			from = old.String()
		}
	}
	return r.logRef(plumbing.HEAD, old, new, fmt.Sprintf("checkout: moving from %s to %s", from, to))
}

// checkout is one "checkout: moving from X to Y" entry of HEAD's reflog.
type checkout struct {
	from, to string
	new      plumbing.Hash
}

// checkouts are HEAD's checkout entries, latest first.
func (r *repo) checkouts() ([]checkout, error) {
	data, err := readAll(r.dot, "logs/HEAD")
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []checkout
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ids, msg, ok := strings.Cut(sc.Text(), "\t")
		if !ok || len(ids) < 81 {
			continue
		}
		rest, ok := strings.CutPrefix(msg, "checkout: moving from ")
		if !ok {
			continue
		}
		if from, to, ok := strings.Cut(rest, " to "); ok {
			out = append(out, checkout{from: from, to: to, new: plumbing.NewHash(ids[41:81])})
		}
	}
	slices.Reverse(out)
	return out, sc.Err()
}

func (r *repo) lastCheckout() (checkout, bool, error) {
	cs, err := r.checkouts()
	if err != nil || len(cs) == 0 {
		return checkout{}, false, err
	}
	return cs[0], true, nil
}

// previousCheckout is what @{-n} names: the branch (or commit) HEAD was on
// before its nth latest checkout.
func (r *repo) previousCheckout(n int) (string, bool, error) {
	cs, err := r.checkouts()
	if err != nil || n < 1 || n > len(cs) {
		return "", false, err
	}
	return cs[n-1].from, true, nil
}

// peelsTo says whether the object h (a commit or an annotated tag) is or
// points at commit.
func (r *repo) peelsTo(h, commit plumbing.Hash) bool {
	if h == commit {
		return true
	}
	t, err := r.r.TagObject(h)
	return err == nil && t.Target == commit
}

// renameLog moves a branch's reflog with its rename, logging the rename
// there and, for the current branch, in HEAD's as git does.
func (r *repo) renameLog(from, to plumbing.ReferenceName, h plumbing.Hash, current bool) error {
	msg := fmt.Sprintf("Branch: renamed %s to %s", from, to)
	if from != to {
		if err := r.dot.Rename("logs/"+from.String(), "logs/"+to.String()); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return fmt.Errorf("reflog %s: %w", from, err)
		}
	}
	if err := r.appendLog(to, h, h, msg); err != nil {
		return err
	}
	if !current {
		return nil
	}
	if err := r.logRef(plumbing.HEAD, h, plumbing.ZeroHash, msg); err != nil {
		return err
	}
	return r.logRef(plumbing.HEAD, plumbing.ZeroHash, h, msg)
}

// dropLog removes a deleted branch's reflog.
func (r *repo) dropLog(name plumbing.ReferenceName) error {
	if err := r.dot.Remove("logs/" + name.String()); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	return nil
}

// expandPrevious replaces a leading @{-n} in rev with the branch or commit
// it names; ok is false when HEAD's reflog has fewer than n checkouts.
func (r *repo) expandPrevious(rev string) (string, bool, error) {
	rest, found := strings.CutPrefix(rev, "@{-")
	if !found {
		return rev, true, nil
	}
	num, suffix, found := strings.Cut(rest, "}")
	n, err := strconv.Atoi(num)
	if !found || err != nil || n < 1 {
		return rev, true, nil
	}
	name, ok, err := r.previousCheckout(n)
	if err != nil || !ok {
		return rev, false, err
	}
	return name + suffix, true, nil
}
