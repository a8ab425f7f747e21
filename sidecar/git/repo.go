package git

import (
	"errors"
	"io"
	"path"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// head is where HEAD points: a branch (possibly unborn) or a commit.
type head struct {
	branch string         // short name; "" when detached
	commit *object.Commit // nil when unborn
}

func (r *repo) head() (*head, error) {
	ref, err := r.r.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return nil, err
	}
	h := &head{}
	target := ref
	if ref.Type() == plumbing.SymbolicReference {
		h.branch = ref.Target().Short()
		target, err = r.r.Storer.Reference(ref.Target())
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return h, nil
		}
		if err != nil {
			return nil, err
		}
	}
	h.commit, err = r.r.CommitObject(target.Hash())
	if err != nil {
		return nil, err
	}
	return h, nil
}

func (r *repo) index() (*gitIndex, error) {
	key, keyed := r.indexKey()
	if keyed {
		if idx, ok := cachedIndex(key); ok {
			return newGitIndex(idx), nil
		}
	}
	idx, err := r.r.Storer.Index()
	if err != nil {
		return nil, err
	}
	if idx.Version == 0 {
		idx.Version = 2
	}
	if keyed {
		cacheIndex(key, idx)
	}
	return newGitIndex(idx), nil
}

// indexKey names the index file as it is now: where it is and its inode,
// size and mtime (nanoseconds), which any write changes.
func (r *repo) indexKey() (indexKey, bool) {
	fi, err := r.dot.Lstat("index")
	if err != nil {
		return indexKey{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return indexKey{}, false
	}
	return indexKey{path: r.dot.root, ino: st.Ino, size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
}

// setIndex writes the index; the cache tree is dropped since entries may
// have changed (git rebuilds it on its next commit).
func (r *repo) setIndex(idx *gitIndex) error {
	idx.Cache = nil
	idx.ResolveUndo = nil
	if err := r.r.Storer.SetIndex(idx.Index); err != nil {
		return err
	}
	if key, ok := r.indexKey(); ok {
		cacheIndex(key, idx.Index)
	}
	return nil
}

func (r *repo) blobLoader(h plumbing.Hash) func() ([]byte, error) {
	return func() ([]byte, error) {
		b, err := r.r.BlobObject(h)
		if err != nil {
			return nil, err
		}
		rd, err := b.Reader()
		if err != nil {
			return nil, err
		}
		defer rd.Close()
		return io.ReadAll(&ctxReader{r.ctx, rd})
	}
}

// treeSnapshot lists every file of a tree; a nil tree is empty.
func (r *repo) treeSnapshot(t *object.Tree) (snapshot, error) {
	if t == nil {
		return snapshot{}, nil
	}
	files, ok := cachedTree(t.Hash)
	if !ok {
		var err error
		if files, err = r.flatten(t); err != nil {
			return nil, err
		}
		if err := checkTreePaths(files); err != nil {
			return nil, err
		}
		cacheTree(t.Hash, files)
	}
	s := make(snapshot, len(files))
	for _, f := range files {
		s[f.path] = &blobRef{path: f.path, mode: f.mode, hash: f.hash, load: r.blobLoader(f.hash)}
	}
	return s, nil
}

// flatten lists the files of a tree and its subtrees.
func (r *repo) flatten(t *object.Tree) ([]treeFile, error) {
	var files []treeFile
	w := object.NewTreeWalker(t, true, nil)
	defer w.Close()
	for {
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		name, e, err := w.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if e.Mode == filemode.Dir || e.Mode == filemode.Submodule {
			continue
		}
		files = append(files, treeFile{path: name, mode: e.Mode, hash: e.Hash})
	}
}

// checkTreePaths refuses a tree git itself would not check out (git fsck
// flags each): a name twice, or a path that is both a file and a
// directory, as a crafted tree holding a symlink "a" and a directory "a"
// does to write through the link. It runs before a checkout writes
// anything, so a refused tree changes nothing.
func checkTreePaths(files []treeFile) error {
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		if seen[f.path] {
			return errorf(128, "fatal: invalid tree: %s appears twice\n", f.path)
		}
		seen[f.path] = true
	}
	for _, f := range files {
		for d := path.Dir(f.path); d != "."; d = path.Dir(d) {
			if seen[d] {
				return errorf(128, "fatal: invalid tree: %s is a file and a directory\n", d)
			}
		}
	}
	return nil
}

func (r *repo) commitSnapshot(c *object.Commit) (snapshot, error) {
	if c == nil {
		return snapshot{}, nil
	}
	t, err := c.Tree()
	if err != nil {
		return nil, err
	}
	return r.treeSnapshot(t)
}

// revSnapshot is the tree of rev; HEAD on an unborn branch is empty, as
// git compares against it.
func (r *repo) revSnapshot(rev string) (snapshot, error) {
	if rev == "HEAD" {
		h, err := r.head()
		if err != nil {
			return nil, err
		}
		if h.commit == nil {
			return snapshot{}, nil
		}
	}
	c, err := r.resolve(rev)
	if err != nil {
		return nil, err
	}
	return r.commitSnapshot(c)
}

func (r *repo) indexSnapshot(idx *gitIndex) snapshot {
	s := make(snapshot, len(idx.Entries))
	for _, e := range idx.Entries {
		s[e.Name] = &blobRef{path: e.Name, mode: e.Mode, hash: e.Hash, load: r.blobLoader(e.Hash)}
	}
	return s
}

// worktreeSnapshot is the tracked files of the worktree as they are now,
// for diffs against the index (git diff ignores untracked files).
func (r *repo) worktreeSnapshot(idx *gitIndex, res *scanResult) snapshot {
	s := r.indexSnapshot(idx)
	for _, p := range res.deleted {
		delete(s, p)
	}
	for _, p := range res.modified {
		f := res.files[p]
		s[p] = &blobRef{path: p, mode: f.mode, hash: res.hashes[p], load: func() ([]byte, error) { return r.readWorktree(f) }}
	}
	return s
}

// writeBlob stores data as a blob unless it is there already.
func (r *repo) writeBlob(data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(plumbing.BlobObject, data)
	if r.r.Storer.HasEncodedObject(h) == nil {
		return h, nil
	}
	obj := r.r.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return h, err
	}
	if _, err := w.Write(data); err != nil {
		return h, err
	}
	if err := w.Close(); err != nil {
		return h, err
	}
	return r.r.Storer.SetEncodedObject(obj)
}

// stage records the worktree file f in the index with its stat data, so
// the next scan can trust the stat cache.
func (r *repo) stage(idx *gitIndex, f *wtFile) error {
	data, err := r.readWorktree(f)
	if err != nil {
		return err
	}
	h, err := r.writeBlob(data)
	if err != nil {
		return err
	}
	e := idx.add(f.path)
	e.Hash = h
	setStat(e, f)
	return nil
}

// setStat records f's stat data in e, for the stat cache.
func setStat(e *index.Entry, f *wtFile) {
	e.Mode = f.mode
	e.Size = uint32(f.fi.Size())
	e.ModifiedAt = f.fi.ModTime()
	e.Stage, e.IntentToAdd, e.SkipWorktree = 0, false, false
	if st, ok := f.fi.Sys().(*syscall.Stat_t); ok {
		e.CreatedAt = timeOf(st.Ctim)
		e.Dev, e.Inode = uint32(st.Dev), uint32(st.Ino)
		e.UID, e.GID = st.Uid, st.Gid
	}
}

func timeOf(ts syscall.Timespec) time.Time { return time.Unix(ts.Unix()) }
