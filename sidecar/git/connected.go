package git

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// checkConnected walks from tips through every commit, tree and blob they
// reach (not past a shallow clone's boundary nor into the objects named by
// haves, the refs the repository had before a fetch), as git's
// connectivity check after a clone or fetch does (rev-list --objects
// --not --all: the commits first, then their trees), and fails with what
// git says of the first object missing, then last, with exit status code:
// a server or bundle that sends a pack without all that its refs need
// leaves no repository that cannot be checked out.
//
// A commit whose parent is in haves has its tree checked against the
// parent's: subtrees they share are already there, so a fetch of a few
// commits costs what they change, not their whole trees.
func (r *repo) checkConnected(tips []plumbing.Hash, haves map[plumbing.Hash]bool, code int, last string) error {
	missing := func(format string, args ...any) error {
		return errorf(code, format+last, args...)
	}
	shallow := map[plumbing.Hash]bool{}
	hs, err := r.r.Storer.Shallow()
	if err != nil {
		return err
	}
	for _, h := range hs {
		shallow[h] = true
	}
	seen := map[plumbing.Hash]bool{}
	var commits []*object.Commit
	type todo struct {
		h    plumbing.Hash
		from *object.Commit // the commit whose parent h is
	}
	stack := make([]todo, 0, len(tips))
	for i := len(tips) - 1; i >= 0; i-- {
		stack = append(stack, todo{h: tips[i]})
	}
	for len(stack) > 0 {
		next := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		h := next.h
		if seen[h] || haves[h] {
			continue
		}
		seen[h] = true
		if err := r.ctx.Err(); err != nil {
			return err
		}
		o, err := r.r.Storer.EncodedObject(plumbing.AnyObject, h)
		switch {
		case errors.Is(err, plumbing.ErrObjectNotFound) && next.from != nil && len(haves) > 0:
			// A walk with commits to leave out reads every parent
			// before it starts (limit_list).
			return missing("error: Could not read %s\nfatal: revision walk setup failed\n", h)
		case errors.Is(err, plumbing.ErrObjectNotFound) && next.from != nil:
			return missing("error: Could not read %s\nfatal: Failed to traverse parents of commit %s\n", h, next.from.Hash)
		case errors.Is(err, plumbing.ErrObjectNotFound):
			return missing("fatal: bad object %s\n", h)
		case err != nil:
			return err
		}
		switch o.Type() {
		case plumbing.TagObject:
			t, err := object.DecodeTag(r.r.Storer, o)
			if err != nil {
				return err
			}
			if t.TargetType == plumbing.CommitObject || t.TargetType == plumbing.TagObject {
				stack = append(stack, todo{h: t.Target})
			} else if err := r.checkObject(t.Target, plumbing.ZeroHash, t.TargetType, seen, missing); err != nil {
				return err
			}
		case plumbing.CommitObject:
			c, err := object.DecodeCommit(r.r.Storer, o)
			if err != nil {
				return err
			}
			commits = append(commits, c)
			if shallow[h] {
				continue
			}
			for i := len(c.ParentHashes) - 1; i >= 0; i-- {
				stack = append(stack, todo{h: c.ParentHashes[i], from: c})
			}
		default:
			seen[h] = false // checkObject marks it
			if err := r.checkObject(h, plumbing.ZeroHash, o.Type(), seen, missing); err != nil {
				return err
			}
		}
	}
	for _, c := range commits {
		var old plumbing.Hash
		if len(c.ParentHashes) > 0 && haves[c.ParentHashes[0]] {
			p, err := r.r.CommitObject(c.ParentHashes[0])
			if err != nil {
				return fmt.Errorf("commit %s: %w", c.ParentHashes[0], err)
			}
			old = p.TreeHash
		}
		if err := r.checkObject(c.TreeHash, old, plumbing.TreeObject, seen, missing); err != nil {
			return err
		}
	}
	return nil
}

// checkObject checks that the tree or blob h is there, and for a tree
// everything it names that the tree old (one the repository had before,
// or zero) does not name at the same path.
func (r *repo) checkObject(h, old plumbing.Hash, typ plumbing.ObjectType, seen map[plumbing.Hash]bool, missing func(string, ...any) error) error {
	if seen[h] || h == old {
		return nil
	}
	seen[h] = true
	if typ != plumbing.TreeObject {
		if r.r.Storer.HasEncodedObject(h) != nil {
			return missing("fatal: missing %s object '%s'\n", typ, h)
		}
		return nil
	}
	t, err := object.GetTree(r.r.Storer, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return missing("fatal: bad tree object %s\n", h)
	} else if err != nil {
		return fmt.Errorf("tree %s: %w", h, err)
	}
	var had map[string]plumbing.Hash
	if !old.IsZero() {
		ot, err := object.GetTree(r.r.Storer, old)
		if err != nil {
			return fmt.Errorf("tree %s: %w", old, err)
		}
		had = make(map[string]plumbing.Hash, len(ot.Entries))
		for _, e := range ot.Entries {
			had[e.Name] = e.Hash
		}
	}
	for _, e := range t.Entries {
		var err error
		switch e.Mode {
		case filemode.Submodule: // a commit of another repository
		case filemode.Dir:
			err = r.checkObject(e.Hash, had[e.Name], plumbing.TreeObject, seen, missing)
		default:
			err = r.checkObject(e.Hash, had[e.Name], plumbing.BlobObject, seen, missing)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
