package git

import (
	"fmt"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// cmdBlame is git blame FILE in git's default format, for a file whose
// worktree copy is HEAD's: each line's commit (abbreviated one digit
// longer than usual; a root commit, a boundary, as ^ and one digit
// fewer), author, date, line number and text. Lines are attributed by
// go-git's blame, which does not follow renames: a file renamed in its
// history is refused.
func cmdBlame(s *session, args []string) error {
	opts, paths, _ := splitDashDash(args)
	paths = append(opts, paths...)
	if len(paths) != 1 || strings.HasPrefix(paths[0], "-") {
		return unsupported("git blame other than of one file")
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	p, err := r.rel(paths[0])
	if err != nil {
		return err
	}
	h, err := r.head()
	if err != nil {
		return err
	}
	if h.commit == nil {
		return fatalf("no such ref: HEAD")
	}
	snap, err := r.commitSnapshot(h.commit)
	if err != nil {
		return err
	}
	b, ok := snap[p]
	if !ok {
		return fatalf("no such path '%s' in HEAD", p)
	}
	if !r.worktreeHas(b) {
		return unsupported("git blame of a file with uncommitted changes")
	}
	if renamed, err := r.renamedInHistory(p); err != nil {
		return err
	} else if renamed {
		return unsupported("git blame of a file renamed in its history")
	}
	res, err := gogit.Blame(h.commit, p)
	if err != nil {
		return err
	}
	nameWidth, numWidth := 0, len(fmt.Sprint(len(res.Lines)))
	for _, l := range res.Lines {
		nameWidth = max(nameWidth, len(l.AuthorName))
	}
	roots := map[string]bool{}
	for i, l := range res.Lines {
		hash := r.abbrevTo(l.Hash, r.abbrevState().min+1)
		if _, seen := roots[hash]; !seen {
			c, err := r.r.CommitObject(l.Hash)
			if err != nil {
				return err
			}
			roots[hash] = c.NumParents() == 0
		}
		if roots[hash] {
			hash = "^" + hash[:len(hash)-1]
		}
		fmt.Fprintf(r.out, "%s (%-*s %s %*d) %s\n", hash, nameWidth, l.AuthorName, l.Date.Format("2006-01-02 15:04:05 -0700"), numWidth, i+1, l.Text)
	}
	return nil
}

// renamedInHistory reports whether p was another path in some commit
// that leads to HEAD (a rename git blame would follow).
func (r *repo) renamedInHistory(p string) (bool, error) {
	h, err := r.head()
	if err != nil {
		return false, err
	}
	renamed := false
	err = r.walk([]*object.Commit{h.commit}, nil, func(c *object.Commit) (bool, error) {
		if c.NumParents() != 1 {
			return true, nil
		}
		parent, err := c.Parent(0)
		if err != nil {
			return false, err
		}
		a, err := r.commitSnapshot(parent)
		if err != nil {
			return false, err
		}
		b, err := r.commitSnapshot(c)
		if err != nil {
			return false, err
		}
		if _, before := a[p]; before {
			return true, nil
		}
		if _, after := b[p]; !after {
			return true, nil
		}
		cs, err := withRenames(compare(a, b))
		if err != nil {
			return false, err
		}
		for _, ch := range cs {
			if ch.to != nil && ch.to.path == p && ch.from != nil && ch.from.path != p {
				renamed = true
				return false, nil
			}
		}
		return true, nil
	})
	return renamed, err
}
