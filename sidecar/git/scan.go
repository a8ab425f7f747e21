package git

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// wtFile is a file found in the worktree.
type wtFile struct {
	path string
	fi   os.FileInfo
	mode filemode.FileMode
}

// scanResult is the worktree compared with the index, under a set of
// paths.
type scanResult struct {
	// modified and deleted list tracked paths whose worktree file differs
	// from the index (hash, mode or type) or is gone; typechange counts
	// as modified.
	modified []string
	deleted  []string
	// untracked are files (all=true) or the topmost wholly untracked
	// directories, with a trailing slash (all=false), not ignored.
	untracked []string
	ignored   []string
	// files holds every worktree file seen that is tracked or untracked
	// (not ignored), by path, with the hash where it was computed.
	files  map[string]*wtFile
	hashes map[string]plumbing.Hash
	// stale lists tracked files whose content matches the index but whose
	// stat data does not: refreshing them keeps the next scan fast.
	stale []string
}

// scanner walks a worktree against an index with git's stat-cache rule: a
// file whose size, mtime and mode match its index entry and is older than
// the index file is unchanged without reading it.
type scanner struct {
	r       *repo
	idx     *gitIndex
	dirs    map[string]bool // directories holding tracked entries
	idxTime time.Time
	// allUntracked lists untracked files one by one instead of
	// collapsing wholly untracked directories.
	allUntracked bool
	wantIgnored  bool
}

func (r *repo) newScanner(idx *gitIndex) *scanner {
	sc := &scanner{r: r, idx: idx, dirs: map[string]bool{"": true}}
	for _, e := range idx.Entries {
		for d := path.Dir(e.Name); d != "." && !sc.dirs[d]; d = path.Dir(d) {
			sc.dirs[d] = true
		}
	}
	if fi, err := r.dot.Stat("index"); err == nil {
		sc.idxTime = fi.ModTime()
	}
	return sc
}

// fileMode is the git mode of a worktree file.
func fileMode(fi os.FileInfo) (filemode.FileMode, bool) {
	switch {
	case fi.Mode().IsRegular():
		if fi.Mode().Perm()&0o100 != 0 {
			return filemode.Executable, true
		}
		return filemode.Regular, true
	case fi.Mode()&iofs.ModeSymlink != 0:
		return filemode.Symlink, true
	}
	return 0, false
}

// unchanged applies the stat cache.
func (sc *scanner) unchanged(e *index.Entry, f *wtFile) bool {
	if e.Mode != f.mode || int64(e.Size) != f.fi.Size()%(1<<32) || !e.ModifiedAt.Equal(f.fi.ModTime()) {
		return false
	}
	// Racily clean: written in the same instant as the index, so a later
	// change in that instant would not show in the mtime.
	return sc.idxTime.IsZero() || f.fi.ModTime().Before(sc.idxTime)
}

// hash computes the blob hash of a worktree file.
func (r *repo) hashFile(f *wtFile) (plumbing.Hash, []byte, error) {
	data, err := r.readWorktree(f)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	return plumbing.ComputeHash(plumbing.BlobObject, data), data, nil
}

func (r *repo) readWorktree(f *wtFile) ([]byte, error) {
	if f.mode == filemode.Symlink {
		t, err := r.fs.Readlink(f.path)
		return []byte(t), err
	}
	return readAll(r.fs, f.path)
}

func readAll(b *billyFS, name string) ([]byte, error) {
	p, err := b.abs(name)
	if err != nil {
		return nil, err
	}
	fh, err := b.fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var buf bytes.Buffer
	if fi, err := fh.Stat(); err == nil {
		buf.Grow(int(fi.Size()))
	}
	_, err = buf.ReadFrom(&ctxReader{b.ctx, fh})
	return buf.Bytes(), err
}

// ignoreRules are the .gitignore patterns that apply in one directory.
type ignoreRules struct {
	patterns []gitignore.Pattern
}

func (ir ignoreRules) ignored(p string, isDir bool) bool {
	return gitignore.NewMatcher(ir.patterns).Match(strings.Split(p, "/"), isDir)
}

func parseIgnore(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasSuffix(line, "\\ ") {
			line = strings.TrimRight(line, " ")
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// rootIgnore reads .git/info/exclude.
func (r *repo) rootIgnore() ignoreRules {
	data, err := readAll(r.dot, "info/exclude")
	if err != nil {
		return ignoreRules{}
	}
	return ignoreRules{patterns: parseIgnore(data, nil)}
}

// dirIgnore adds the .gitignore of dir (a repository path).
func (r *repo) dirIgnore(parent ignoreRules, dir string, names map[string]os.FileInfo) ignoreRules {
	fi, ok := names[".gitignore"]
	if !ok || !fi.Mode().IsRegular() {
		return parent
	}
	data, err := readAll(r.fs, path.Join(dir, ".gitignore"))
	if err != nil {
		return parent
	}
	var domain []string
	if dir != "" {
		domain = strings.Split(dir, "/")
	}
	ps := append(append([]gitignore.Pattern(nil), parent.patterns...), parseIgnore(data, domain)...)
	return ignoreRules{patterns: ps}
}

// isIgnored reports whether repository path p (not tracked) is ignored,
// reading the .gitignore files along its way.
func (r *repo) isIgnored(p string, isDir bool) bool {
	rules := r.rootIgnore()
	parts := strings.Split(p, "/")
	for i := range parts {
		dir := strings.Join(parts[:i], "/")
		if i > 0 && rules.ignored(dir, true) {
			return true
		}
		fi, err := r.fs.Lstat(path.Join(dir, ".gitignore"))
		if err == nil {
			rules = r.dirIgnore(rules, dir, map[string]os.FileInfo{".gitignore": fi})
		}
	}
	return rules.ignored(p, isDir)
}

// scan compares the worktree under the given repository paths ("" is
// everything) with the index. Hashes are computed only where the stat
// cache cannot tell.
func (sc *scanner) scan(paths []string) (*scanResult, error) {
	res := &scanResult{files: map[string]*wtFile{}, hashes: map[string]plumbing.Hash{}}
	if len(paths) == 0 {
		paths = []string{""}
	}
	seen := map[string]bool{}
	rules := sc.r.rootIgnore()
	for _, p := range paths {
		if err := sc.scanPath(res, p, rules, seen); err != nil {
			return nil, err
		}
	}
	// Tracked entries under the paths that the walk did not find.
	for _, e := range sc.idx.Entries {
		if seen[e.Name] || !underAny(e.Name, paths) {
			continue
		}
		res.deleted = append(res.deleted, e.Name)
	}
	sort.Strings(res.modified)
	sort.Strings(res.deleted)
	sort.Strings(res.untracked)
	sort.Strings(res.ignored)
	return res, nil
}

func underAny(p string, paths []string) bool {
	for _, q := range paths {
		if q == "" || p == q || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}

// scanPath scans one path: it finds the ignore rules on the way down to it
// and walks it.
func (sc *scanner) scanPath(res *scanResult, p string, rules ignoreRules, seen map[string]bool) error {
	parts := strings.Split(p, "/")
	if p == "" {
		parts = nil
	}
	ignoredAbove := false
	for i := range parts {
		dir := strings.Join(parts[:i], "/")
		if i > 0 && rules.ignored(dir, true) {
			ignoredAbove = true
		}
		if fi, err := sc.r.fs.Lstat(path.Join(dir, ".gitignore")); err == nil {
			rules = sc.r.dirIgnore(rules, dir, map[string]os.FileInfo{".gitignore": fi})
		}
	}
	fi, err := sc.r.fs.Lstat(p)
	if errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscallENOTDIR) {
		return nil
	}
	if err != nil {
		return err
	}
	if p == "" {
		return sc.walkDir(res, "", rules, false, seen)
	}
	return sc.visit(res, p, fi, rules, ignoredAbove, seen)
}

func (sc *scanner) visit(res *scanResult, p string, fi os.FileInfo, rules ignoreRules, ignoredAbove bool, seen map[string]bool) error {
	if fi.IsDir() {
		if path.Base(p) == ".git" {
			return nil
		}
		ign := ignoredAbove || rules.ignored(p, true)
		if !sc.dirs[p] {
			if _, err := sc.r.fs.Lstat(path.Join(p, ".git")); err == nil {
				return nil // a nested repository: git shows it as untracked "dir/"; not supported here
			}
			if !sc.allUntracked {
				// Wholly untracked: one line for the directory when it holds
				// anything not ignored.
				has, err := sc.hasUntracked(p, rules, ign)
				if err != nil {
					return err
				}
				if has {
					res.untracked = append(res.untracked, p+"/")
				} else if ign && sc.wantIgnored {
					res.ignored = append(res.ignored, p+"/")
				}
				return nil
			}
		}
		return sc.walkDir(res, p, rules, ign, seen)
	}
	mode, ok := fileMode(fi)
	if !ok {
		return nil
	}
	f := &wtFile{path: p, fi: fi, mode: mode}
	e := sc.idx.byName[p]
	if e == nil {
		if ignoredAbove || rules.ignored(p, false) {
			if sc.wantIgnored {
				res.ignored = append(res.ignored, p)
			}
			return nil
		}
		res.files[p] = f
		res.untracked = append(res.untracked, p)
		return nil
	}
	seen[p] = true
	res.files[p] = f
	if sc.unchanged(e, f) {
		return nil
	}
	h, _, err := sc.r.hashFile(f)
	if err != nil {
		return err
	}
	res.hashes[p] = h
	if h != e.Hash || e.Mode != mode {
		res.modified = append(res.modified, p)
	} else {
		res.stale = append(res.stale, p)
	}
	return nil
}

func (sc *scanner) walkDir(res *scanResult, dir string, rules ignoreRules, ignored bool, seen map[string]bool) error {
	list, err := sc.r.fs.ReadDir(dir)
	if err != nil {
		return err
	}
	names := make(map[string]os.FileInfo, len(list))
	for _, fi := range list {
		names[fi.Name()] = fi
	}
	rules = sc.r.dirIgnore(rules, dir, names)
	for _, fi := range list {
		if dir == "" && fi.Name() == ".git" {
			continue
		}
		if err := sc.visit(res, path.Join(dir, fi.Name()), fi, rules, ignored, seen); err != nil {
			return err
		}
	}
	return nil
}

// hasUntracked reports whether the untracked directory dir holds a file
// that is not ignored.
func (sc *scanner) hasUntracked(dir string, rules ignoreRules, ignored bool) (bool, error) {
	if ignored {
		return false, nil
	}
	list, err := sc.r.fs.ReadDir(dir)
	if err != nil {
		return false, err
	}
	names := make(map[string]os.FileInfo, len(list))
	for _, fi := range list {
		names[fi.Name()] = fi
	}
	rules = sc.r.dirIgnore(rules, dir, names)
	for _, fi := range list {
		p := path.Join(dir, fi.Name())
		if fi.IsDir() {
			if fi.Name() == ".git" || rules.ignored(p, true) {
				continue
			}
			has, err := sc.hasUntracked(p, rules, false)
			if has || err != nil {
				return has, err
			}
			continue
		}
		if _, ok := fileMode(fi); ok && !rules.ignored(p, false) {
			return true, nil
		}
	}
	return false, nil
}

var syscallENOTDIR = syscall.ENOTDIR

// ctxReader stops a long read when the command is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// refresh records the current stat data of files found unchanged by
// content, and writes the index if there were any, as git status does.
func (r *repo) refresh(idx *gitIndex, res *scanResult) error {
	if len(res.stale) == 0 {
		return nil
	}
	for _, p := range res.stale {
		if e, ok := idx.entry(p); ok {
			setStat(e, res.files[p])
		}
	}
	res.stale = nil
	return r.setIndex(idx)
}
