package git

import (
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// errNoRevision is a revision that names nothing; errPeel one whose object
// cannot be peeled to the type asked (git's message in its text).
var errNoRevision = errors.New("unknown revision")

type peelError struct{ msg string }

func (e *peelError) Error() string { return e.msg }

type pathError struct{ msg string }

func (e *pathError) Error() string { return e.msg }

// lookup finds the object a revision names, as git's get_oid does: a full
// or unique abbreviated object name or a ref (git's dwim order), then
// ~N, ^N, ^{type}, ^{} and ^{/regex} suffixes, then :path. Unlike go-git's
// ResolveRevision it does not peel to a commit on its own: an annotated
// tag is the tag object, HEAD^{tree} the tree.
func (r *repo) lookup(rev string) (plumbing.Hash, error) {
	named, ok, err := r.expandPrevious(rev)
	if err != nil {
		return plumbing.ZeroHash, err
	} else if !ok {
		return plumbing.ZeroHash, errNoRevision
	}
	spec, file, hasPath := strings.Cut(named, ":")
	end := strings.IndexAny(spec, "~^")
	if end < 0 {
		end = len(spec)
	}
	h, err := r.lookupBase(spec[:end])
	if err != nil {
		return h, err
	}
	for rest := spec[end:]; rest != ""; {
		op := rest[0]
		rest = rest[1:]
		if op == '^' && strings.HasPrefix(rest, "{") {
			inner, after, ok := strings.Cut(rest[1:], "}")
			if !ok {
				return plumbing.ZeroHash, errNoRevision
			}
			rest = after
			if h, err = r.peelSuffix(h, inner, spec); err != nil {
				return h, err
			}
			continue
		}
		digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
		n := 1
		if digits > 0 {
			if n, err = strconv.Atoi(rest[:digits]); err != nil {
				return plumbing.ZeroHash, errNoRevision
			}
			rest = rest[digits:]
		}
		c, err := r.peelCommit(h)
		if err != nil {
			return plumbing.ZeroHash, errNoRevision
		}
		switch {
		case op == '~':
			for ; n > 0; n-- {
				if c.NumParents() == 0 {
					return plumbing.ZeroHash, errNoRevision
				}
				h = c.ParentHashes[0]
				if c, err = r.r.CommitObject(h); err != nil {
					return plumbing.ZeroHash, err
				}
			}
			h = c.Hash
		case n == 0:
			h = c.Hash
		case n > c.NumParents():
			return plumbing.ZeroHash, errNoRevision
		default:
			h = c.ParentHashes[n-1]
		}
	}
	if !hasPath {
		return h, nil
	}
	return r.lookupPath(h, file, spec)
}

// lookupBase resolves the name before any suffix.
func (r *repo) lookupBase(name string) (plumbing.Hash, error) {
	if name == "" || name == "@" {
		name = "HEAD"
	}
	if len(name) == 40 {
		if _, err := hex.DecodeString(name); err == nil {
			return plumbing.NewHash(name), nil
		}
	}
	fulls := []string{"refs/" + name, "refs/tags/" + name, "refs/heads/" + name, "refs/remotes/" + name, "refs/remotes/" + name + "/HEAD"}
	if strings.HasPrefix(name, "refs/") || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == "" {
		// Only HEAD, FETCH_HEAD and the like live outside refs/.
		fulls = append([]string{name}, fulls...)
	}
	for _, full := range fulls {
		ref, err := storer.ResolveReference(r.r.Storer, plumbing.ReferenceName(full))
		if err == nil {
			return ref.Hash(), nil
		}
		if !errors.Is(err, plumbing.ErrReferenceNotFound) {
			return plumbing.ZeroHash, err
		}
	}
	if len(name) < 4 {
		return plumbing.ZeroHash, errNoRevision
	}
	even := name[:len(name)&^1]
	prefix, err := hex.DecodeString(even)
	if err != nil {
		return plumbing.ZeroHash, errNoRevision
	}
	hp, ok := r.r.Storer.(interface {
		HashesWithPrefix([]byte) ([]plumbing.Hash, error)
	})
	if !ok {
		return plumbing.ZeroHash, errNoRevision
	}
	cands, err := hp.HashesWithPrefix(prefix)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var found []plumbing.Hash
	for _, h := range cands {
		if strings.HasPrefix(h.String(), name) && !containsHash(found, h) {
			found = append(found, h)
		}
	}
	if len(found) != 1 {
		return plumbing.ZeroHash, errNoRevision
	}
	return found[0], nil
}

func containsHash(hs []plumbing.Hash, h plumbing.Hash) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

// peelSuffix applies ^{inner} to h.
func (r *repo) peelSuffix(h plumbing.Hash, inner, spec string) (plumbing.Hash, error) {
	switch inner {
	case "":
		for {
			t, err := r.r.TagObject(h)
			if err != nil {
				return h, nil
			}
			h = t.Target
		}
	case "commit", "tree", "blob", "tag", "object":
		return r.peelTo(h, inner, spec)
	}
	if re, ok := strings.CutPrefix(inner, "/"); ok {
		c, err := r.peelCommit(h)
		if err != nil {
			return plumbing.ZeroHash, errNoRevision
		}
		neg := strings.HasPrefix(re, "!-")
		re = strings.TrimPrefix(re, "!-")
		rx, err := regexp.Compile(re)
		if err != nil {
			return plumbing.ZeroHash, errNoRevision
		}
		var found plumbing.Hash
		err = r.walk([]*object.Commit{c}, nil, func(c *object.Commit) (bool, error) {
			if rx.MatchString(c.Message) != neg {
				found = c.Hash
				return false, errStop
			}
			return false, nil
		})
		if err != nil || found.IsZero() {
			return plumbing.ZeroHash, errNoRevision
		}
		return found, nil
	}
	return plumbing.ZeroHash, errNoRevision
}

// peelTo follows tags, then commit to tree, until h is of type want.
func (r *repo) peelTo(h plumbing.Hash, want, spec string) (plumbing.Hash, error) {
	for {
		o, err := r.r.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return plumbing.ZeroHash, errNoRevision
		}
		typ := o.Type().String()
		if want == "object" || typ == want {
			return h, nil
		}
		switch o.Type() {
		case plumbing.TagObject:
			t, err := object.DecodeTag(r.r.Storer, o)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			h = t.Target
		case plumbing.CommitObject:
			if want != "tree" && want != "blob" {
				return plumbing.ZeroHash, r.peelFailed(spec, want, typ)
			}
			c, err := object.DecodeCommit(r.r.Storer, o)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			h = c.TreeHash
		default:
			return plumbing.ZeroHash, r.peelFailed(spec, want, typ)
		}
	}
}

func (r *repo) peelFailed(spec, want, typ string) error {
	msg := fmt.Sprintf("error: %s: expected %s type, but the object dereferences to %s type\n", spec, want, typ)
	// git reports it once looking for a revision and once more checking
	// whether it is a file.
	return &peelError{msg + msg}
}

// peelCommit is the commit h names, through tags.
func (r *repo) peelCommit(h plumbing.Hash) (*object.Commit, error) {
	h, err := r.peelTo(h, "commit", "")
	if err != nil {
		return nil, err
	}
	return r.r.CommitObject(h)
}

// lookupPath is the entry file of the tree h names (the tree itself for
// an empty path).
func (r *repo) lookupPath(h plumbing.Hash, file, spec string) (plumbing.Hash, error) {
	th, err := r.peelTo(h, "tree", spec)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	file = strings.Trim(file, "/")
	if file == "" {
		return th, nil
	}
	t, err := r.r.TreeObject(th)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	e, err := t.FindEntry(file)
	if err != nil {
		return plumbing.ZeroHash, &pathError{fmt.Sprintf("fatal: path '%s' does not exist in '%s'\n", file, spec)}
	}
	return e.Hash, nil
}
