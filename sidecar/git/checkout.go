package git

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// writeFile puts b into the worktree and records it in the index.
func (r *repo) writeFile(idx *gitIndex, b *blobRef) error {
	f, err := r.writeWorktree(b)
	if err != nil {
		return err
	}
	e := idx.add(b.path)
	setStat(e, f)
	e.Hash = b.hash
	return nil
}

// writeWorktree puts b into the worktree.
func (r *repo) writeWorktree(b *blobRef) (*wtFile, error) {
	data, err := b.load()
	if err != nil {
		return nil, err
	}
	// A symlink (or file) where b needs a directory is replaced, never
	// written through: as git's create_directories, so a checkout writes
	// only the paths its tree names.
	if d := r.leadingNonDir(b.path); d != "" {
		if err := r.fs.Remove(d); err != nil {
			return nil, err
		}
	}
	if fi, err := r.fs.Lstat(b.path); err == nil {
		if fi.IsDir() {
			return nil, fmt.Errorf("cannot replace directory %s", b.path)
		}
		if err := r.fs.Remove(b.path); err != nil {
			return nil, err
		}
	}
	if err := r.fs.MkdirAll(path.Dir(b.path), 0o755); err != nil {
		return nil, err
	}
	if b.mode == filemode.Symlink {
		if err := r.fs.Symlink(string(data), b.path); err != nil {
			return nil, err
		}
	} else {
		perm := os.FileMode(0o644)
		if b.mode == filemode.Executable {
			perm = 0o755
		}
		f, err := r.fs.OpenFile(b.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		if err := r.fs.Chmod(b.path, perm); err != nil {
			return nil, err
		}
	}
	fi, err := r.fs.Lstat(b.path)
	if err != nil {
		return nil, err
	}
	return &wtFile{path: b.path, fi: fi, mode: b.mode}, nil
}

// removeFile deletes a tracked file from the worktree and the index.
func (r *repo) removeFile(idx *gitIndex, p string) error {
	idx.remove(p)
	if r.leadingNonDir(p) != "" {
		// Not in the worktree: what a symlink there leads to is not ours
		// to remove (git's unlink_entry).
		return nil
	}
	if err := r.fs.Remove(p); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return err
	}
	removeEmptyParents(r.fs, p)
	return nil
}

// leadingNonDir is the first directory above worktree path p that is
// something else in the worktree (a symlink, a file), or "" when there is
// none: the path lies beyond it, as git's has_symlink_leading_path says.
func (r *repo) leadingNonDir(p string) string {
	for i := range len(p) {
		if p[i] != '/' {
			continue
		}
		fi, err := r.fs.Lstat(p[:i])
		if err != nil {
			return "" // missing: so is what is below
		}
		if !fi.IsDir() {
			return p[:i]
		}
	}
	return ""
}

// switchTrees moves the worktree and index from the HEAD snapshot to the
// target one the way git checkout does: files that differ between the two
// are replaced, refused where that would lose a local change; local
// changes to other files are kept. It returns the paths left modified.
func (r *repo) switchTrees(from, to snapshot, force bool) ([]string, error) {
	idx, err := r.index()
	if err != nil {
		return nil, err
	}
	sc := r.newScanner(idx)
	sc.allUntracked = true
	res, err := sc.scan(nil)
	if err != nil {
		return nil, err
	}
	local := map[string]bool{}
	for _, p := range append(res.modified, res.deleted...) {
		local[p] = true
	}
	for _, e := range idx.Entries {
		if h, ok := from[e.Name]; !ok || h.hash != e.Hash || h.mode != e.Mode {
			local[e.Name] = true
		}
	}
	for p := range from {
		if _, ok := idx.entry(p); !ok {
			local[p] = true
		}
	}
	cs := compare(from, to)
	var conflicts, untracked []string
	untrackedSet := map[string]bool{}
	for _, p := range res.untracked {
		untrackedSet[p] = true
	}
	for _, c := range cs {
		p := c.path()
		if local[p] && !force {
			// A local change that already equals the target is fine.
			if e, ok := idx.entry(p); ok && c.to != nil && e.Hash == c.to.hash && e.Mode == c.to.mode && !contains(res.modified, p) {
				continue
			}
			conflicts = append(conflicts, p)
		}
		if c.from == nil && untrackedSet[p] && !force {
			untracked = append(untracked, p)
		}
		// An untracked symlink or file where the target needs a directory.
		if d := r.leadingNonDir(p); c.to != nil && d != "" && untrackedSet[d] && !force && !contains(untracked, d) {
			untracked = append(untracked, d)
		}
	}
	if len(conflicts) > 0 {
		return nil, errorf(1, "error: Your local changes to the following files would be overwritten by checkout:\n\t%s\nPlease commit your changes or stash them before you switch branches.\nAborting\n", strings.Join(conflicts, "\n\t"))
	}
	if len(untracked) > 0 {
		return nil, errorf(1, "error: The following untracked working tree files would be overwritten by checkout:\n\t%s\nPlease move or remove them before you switch branches.\nAborting\n", strings.Join(untracked, "\n\t"))
	}
	if force {
		// Everything tracked goes back to the target.
		for _, e := range append([]*index.Entry(nil), idx.Entries...) {
			if _, ok := to[e.Name]; !ok {
				if err := r.removeFile(idx, e.Name); err != nil {
					return nil, err
				}
			}
		}
		for p, b := range to {
			e, ok := idx.entry(p)
			if ok && e.Hash == b.hash && e.Mode == b.mode && !local[p] {
				continue
			}
			if err := r.writeFile(idx, b); err != nil {
				return nil, err
			}
		}
		return nil, r.setIndex(idx)
	}
	// Removals first, as git does: a directory the target replaces with
	// a file or a symlink is gone before that is written.
	for _, c := range cs {
		if c.to == nil {
			if err := r.removeFile(idx, c.from.path); err != nil {
				return nil, err
			}
		}
	}
	for _, c := range cs {
		if c.to != nil {
			if err := r.writeFile(idx, c.to); err != nil {
				return nil, err
			}
		}
	}
	if err := r.setIndex(idx); err != nil {
		return nil, err
	}
	var kept []string
	for p := range local {
		if _, changed := changedPath(cs, p); !changed {
			kept = append(kept, p)
		}
	}
	sort.Strings(kept)
	return kept, nil
}

func changedPath(cs []change, p string) (change, bool) {
	for _, c := range cs {
		if c.path() == p {
			return c, true
		}
	}
	return change{}, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
