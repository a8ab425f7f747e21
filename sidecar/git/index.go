package git

import (
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// gitIndex is the index with entries found by name in constant time (go-git's
// Entry scans them all, which is quadratic over a 10k-file checkout).
type gitIndex struct {
	*index.Index
	byName map[string]*index.Entry
}

func newGitIndex(idx *index.Index) *gitIndex {
	g := &gitIndex{Index: idx, byName: make(map[string]*index.Entry, len(idx.Entries))}
	for _, e := range idx.Entries {
		g.byName[e.Name] = e
	}
	return g
}

func (g *gitIndex) entry(p string) (*index.Entry, bool) {
	e, ok := g.byName[p]
	return e, ok
}

// add returns p's entry, created when missing.
func (g *gitIndex) add(p string) *index.Entry {
	if e, ok := g.byName[p]; ok {
		return e
	}
	e := g.Index.Add(p)
	g.byName[p] = e
	return e
}

func (g *gitIndex) remove(p string) {
	if _, ok := g.byName[p]; !ok {
		return
	}
	delete(g.byName, p)
	_, _ = g.Index.Remove(p)
}

// rename moves an entry to a new name.
func (g *gitIndex) rename(e *index.Entry, to string) {
	delete(g.byName, e.Name)
	e.Name = to
	g.byName[to] = e
}
