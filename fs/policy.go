package fs

import (
	"context"
	"errors"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// Policy limits what callers may see and change, for every frontend alike.
// It is a property of the file, not of the name it was reached by: the
// rules apply to every path the resolver reaches (each component, each
// symlink's target, the entry a change ends at), so a symlink or a ".."
// leads nowhere the path itself could not go. A symlink's target string
// stays readable (readlink); following it is what is refused.
//
// Globs use doublestar syntax over workspace paths and match as
// .gitignore and find -name do: a glob without a "/" (a trailing one
// aside) matches a base name at any depth ("*.pem" covers certs/n.pem, and
// "secrets" any directory of that name); a glob with a "/" at its start or
// in its middle is anchored at the workspace root ("secrets/**",
// "/build"), except "**/name" (name without a "/"), the same as "name".
// A rule on a directory covers what is below.
type Policy struct {
	ReadOnly   []string // changes get EROFS
	Hidden     []string // invisible: ENOENT
	QuotaBytes int64    // file data beyond this gets ENOSPC
}

// Rule is the kind of policy rule that refuses an operation.
type Rule uint8

const (
	RuleHidden   Rule = iota + 1 // invisible: ENOENT
	RuleReadOnly                 // changes refused: EROFS
	RuleQuota                    // file data past the quota: ENOSPC
)

// String is the rule's name, as the metrics label it.
func (r Rule) String() string {
	switch r {
	case RuleHidden:
		return "hidden"
	case RuleReadOnly:
		return "readonly"
	case RuleQuota:
		return "quota"
	}
	return "none"
}

// Errno is what a caller refused by the rule gets.
func (r Rule) Errno() syscall.Errno {
	switch r {
	case RuleHidden:
		return syscall.ENOENT
	case RuleQuota:
		return syscall.ENOSPC
	}
	return syscall.EROFS
}

// count is the one place policy refusals are counted.
func (r Rule) count() { metrics.PolicyRefusals.WithLabelValues(r.String()).Inc() }

// Validate reports a malformed glob.
func (p Policy) Validate() error {
	for _, g := range append(append([]string(nil), p.ReadOnly...), p.Hidden...) {
		if !doublestar.ValidatePattern(compileGlob(g).pattern) {
			return errors.New("bad policy glob: " + g)
		}
	}
	if p.QuotaBytes < 0 {
		return errors.New("negative quota")
	}
	return nil
}

// glob is a policy glob ready to match: anchored at the root, or matching
// base names at any depth.
type glob struct {
	pattern string
	base    bool
}

func compileGlob(g string) glob {
	g = strings.TrimSuffix(g, "/")
	if !strings.Contains(g, "/") {
		return glob{pattern: g, base: true}
	}
	g = strings.TrimPrefix(g, "/")
	// "**/name" matches what "name" does, a base name at any depth; as a
	// base glob a directory's move cannot carry anything out of its reach,
	// so the move is neither refused nor walked.
	if name, ok := strings.CutPrefix(g, "**/"); ok && name != "" && !strings.Contains(name, "/") {
		return glob{pattern: name, base: true}
	}
	return glob{pattern: g}
}

// rules is a Policy's globs compiled.
type rules struct{ hidden, readOnly []glob }

func compileRules(p Policy) rules {
	var r rules
	for _, g := range p.Hidden {
		r.hidden = append(r.hidden, compileGlob(g))
	}
	for _, g := range p.ReadOnly {
		r.readOnly = append(r.readOnly, compileGlob(g))
	}
	return r
}

func (r *rules) hasHidden() bool { return len(r.hidden) > 0 }

// refusesChanges reports whether any rule can refuse a change.
func (r *rules) refusesChanges() bool { return len(r.hidden) > 0 || len(r.readOnly) > 0 }

// refusal is a rule refusing a physical path the resolver reached. It
// stays inside the core: callers get the rule's errno, the audit trail
// the path.
type refusal struct {
	rule Rule
	path string
	// errno, when set, replaces the rule's own: a directory's move that a
	// path below it refuses is EACCES even for a hidden one, since the
	// directory itself exists.
	errno syscall.Errno
}

func (r *refusal) Error() string { return r.path + ": refused by the " + r.rule.String() + " rule" }

// check returns the rule that refuses reaching the physical path p, or
// changing it when change is set; nil if none does.
func (r *rules) check(p string, change bool) *refusal {
	switch {
	case matchAny(r.hidden, p):
		return &refusal{rule: RuleHidden, path: p}
	case change && matchAny(r.readOnly, p):
		return &refusal{rule: RuleReadOnly, path: p}
	}
	return nil
}

// checkOne is check for a read of p whose directories are known to pass:
// p itself is matched, not what is above it.
func (r *rules) checkOne(p string) *refusal {
	if len(r.hidden) == 0 {
		return nil
	}
	rel := strings.TrimPrefix(p, "/")
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	for _, g := range r.hidden {
		name := rel
		if g.base {
			name = base
		}
		if ok, _ := doublestar.Match(g.pattern, name); ok {
			return &refusal{rule: RuleHidden, path: p}
		}
	}
	return nil
}

// otherNamesRefusal applies the rules to every other name of file n: a
// file hard-linked before the policy applied (or under another one) is as
// hidden, or as read-only when change is set, as its most protected name,
// whichever name it is reached by. It returns that name's *refusal (a
// hidden name's first), or the error of reading the names. Called with
// c.mu held.
//
// What protects a file with several names is found once per inode
// (linkProtOf) and kept, so lookups, stats and writes do not query the
// store each time. It cannot go stale while the store is open: under the
// policy no change gives a name another protection or a protected file a
// new name. A protected name cannot be removed, renamed, replaced or
// linked to (each is a change at a protected path, or of a protected
// file); a name cannot be made, or moved, where a rule reaches (a change
// at that path); and a directory's move is refused when it would change
// the protection of anything below it (allowMove), while the entries
// below keep their own parent and name. So the protected names the store
// held when first asked are there for as long as the store is open, and
// no other name ever becomes protected. A restore, which replaces the
// tree, forgets what was kept (forgetLinkProt).
func (c *core) otherNamesRefusal(n *inode, change bool) error {
	if n.nlink <= 1 || n.isDir() || !(c.rules.hasHidden() || change && c.rules.refusesChanges()) {
		return nil
	}
	p, err := c.linkProtOf(n)
	switch {
	case err != nil:
		return err
	case p.hidden.Dir != 0:
		return &refusal{rule: RuleHidden, path: c.namePath(p.hidden)}
	case change && p.readOnly.Dir != 0:
		return &refusal{rule: RuleReadOnly, path: c.namePath(p.readOnly)}
	}
	return nil
}

// linkProt is what protects a file with several names: a name of it the
// hidden rules cover and one the read-only rules cover, zero for none.
type linkProt struct{ hidden, readOnly DirName }

// namePath is the path of name d now: a directory's move that keeps the
// protection of everything below it may have moved it.
func (c *core) namePath(d DirName) string {
	if dir := c.inodes[d.Dir]; dir != nil {
		if at := c.pathOf(dir); at != "" {
			return childPath(at, d.Name)
		}
	}
	return d.Name
}

// linkProtOf is what protects file n, from all its names: kept once found
// (see otherNamesRefusal). Called with c.mu held.
func (c *core) linkProtOf(n *inode) (linkProt, error) {
	if p, ok := c.linked[n.ino]; ok {
		return p, nil
	}
	names, err := c.store.NamesOf(context.Background(), n.ino)
	if err != nil {
		return linkProt{}, c.loadError("find names of inode", n.ino, err)
	}
	return c.keepLinkProt(n, names)
}

// prefetchLinkProt finds in one store query what protects those of the
// files in ns with several names whose protection is not known yet: a
// directory's first listing asks for each of them. Called with c.mu held.
func (c *core) prefetchLinkProt(ns []*inode) error {
	var inos []uint64
	for _, n := range ns {
		if n == nil || n.nlink <= 1 || n.isDir() {
			continue
		}
		if _, ok := c.linked[n.ino]; !ok {
			inos = append(inos, n.ino)
		}
	}
	if len(inos) < 2 {
		return nil // one query either way
	}
	names, err := c.store.NamesOfMany(context.Background(), inos)
	if err != nil {
		return c.loadError("find names of inodes", inos[0], err)
	}
	byIno := make(map[uint64][]sqlstore.Dentry, len(inos))
	for _, d := range names {
		byIno[d.Ino] = append(byIno[d.Ino], d)
	}
	for _, ino := range inos {
		if _, err := c.keepLinkProt(c.inodes[ino], byIno[ino]); err != nil {
			return err
		}
	}
	return nil
}

// keepLinkProt finds what protects file n from the names the store holds
// of it, checked against RAM (the store may still hold a name removed
// since; a name made since is never a protected one), and keeps it.
// Called with c.mu held.
func (c *core) keepLinkProt(n *inode, names []sqlstore.Dentry) (linkProt, error) {
	var p linkProt
	for _, d := range names {
		dir, err := c.dirAt(d.Parent)
		if errors.Is(err, syscall.ENOENT) {
			continue // gone since the store had it
		}
		if err != nil {
			return linkProt{}, err
		}
		at := c.pathOf(dir)
		if at == "" || dir.children[d.Name] != n.ino {
			continue
		}
		name := childPath(at, d.Name)
		if p.hidden.Dir == 0 && matchAny(c.rules.hidden, name) {
			p.hidden = DirName{Dir: dir.ino, Name: d.Name}
		}
		if p.readOnly.Dir == 0 && matchAny(c.rules.readOnly, name) {
			p.readOnly = DirName{Dir: dir.ino, Name: d.Name}
		}
	}
	if c.linked == nil {
		c.linked = make(map[uint64]linkProt)
	}
	c.linked[n.ino] = p
	return p, nil
}

// forgetLinkProt drops what was kept of the protection of files with
// several names: a restore changed the tree under it. Called with c.mu
// held.
func (c *core) forgetLinkProt() { c.linked = nil }

// refused turns a refusal into its errno, counting it; other errors pass
// as they are. r is the refusal, nil for other errors.
func refused(err error) (_ error, r *refusal) {
	if !errors.As(err, &r) {
		return err, nil
	}
	r.rule.count()
	if r.errno != 0 {
		return r.errno, r
	}
	return r.rule.Errno(), r
}

// anchoredBelow reports whether a glob anchored at the root may match a
// path strictly below directory dir: one whose literal leading components
// (those before the first with a wildcard) agree with dir's as far as
// both go. Base-name globs never need it: a directory's move keeps every
// base name below it.
func (r *rules) anchoredBelow(dir string) bool {
	d := splitPath(dir)
	for _, gs := range [][]glob{r.hidden, r.readOnly} {
		for _, g := range gs {
			if g.base {
				continue
			}
			lit := splitPath(g.pattern)
			i := 0
			for i < len(lit) && i < len(d) && !hasMeta(lit[i]) && lit[i] == d[i] {
				i++
			}
			// Agreeing as far as the literal part goes: the rest of the
			// glob may match what is below dir.
			if i == len(d) || i == len(lit) || hasMeta(lit[i]) {
				return true
			}
		}
	}
	return false
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[{\\") }

// matchAny reports whether p or any directory above it matches a glob.
func matchAny(globs []glob, p string) bool {
	if len(globs) == 0 {
		return false
	}
	rel := strings.TrimPrefix(p, "/")
	for rel != "" {
		i := strings.LastIndexByte(rel, '/')
		for _, g := range globs {
			name := rel
			if g.base {
				name = rel[i+1:]
			}
			if ok, _ := doublestar.Match(g.pattern, name); ok {
				return true
			}
		}
		if i < 0 {
			break
		}
		rel = rel[:i]
	}
	return false
}

func isErrno(err error, e syscall.Errno) bool { return errors.Is(err, e) }
