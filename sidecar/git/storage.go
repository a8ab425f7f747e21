package git

import (
	"container/list"
	"fmt"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	gostorage "github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// storage is go-git's filesystem storage that does not write an object it
// already has: go-git writes every tree of every commit again (about a
// thousand for a 10k-file project), each a temporary file and a rename
// through the store.
type storage struct {
	*filesystem.Storage
	// objects is the storage's object cache, which a received pack fills
	// with what it inflated (indexpack.go).
	objects cache.Object
}

// newStorage opens a repository's storage for the session. Pack files stay
// open until the session ends (go-git otherwise opens the pack again for
// every object it reads: a third of a 10k-file checkout's time).
func (s *session) newStorage(dot *billyFS) storage {
	objects := cache.NewObjectLRUDefault()
	st := storage{filesystem.NewStorageWithOptions(dot, objects, filesystem.Options{KeepDescriptors: true}), objects}
	s.storages = append(s.storages, st)
	return st
}

func (s storage) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	if s.HasEncodedObject(o.Hash()) == nil {
		return o.Hash(), nil
	}
	return s.Storage.SetEncodedObject(o)
}

// CheckAndSetReference sets new if the ref is still at old. go-git's
// version rewrites the locked file in place (seek and truncate), which the
// view's files do not offer; refs are written whole here, as SetReference
// does.
func (s storage) CheckAndSetReference(new, old *plumbing.Reference) error {
	if old != nil {
		cur, err := s.Reference(old.Name())
		if err == nil && cur.Hash() != old.Hash() {
			return fmt.Errorf("reference %s: %w", old.Name(), gostorage.ErrReferenceHasChanged)
		}
	}
	return s.SetReference(new)
}

// treeFile is a file of a flattened tree.
type treeFile struct {
	path string
	mode filemode.FileMode
	hash plumbing.Hash
}

// treeCache keeps the last few flattened trees by hash. Trees are
// immutable and named by their content, so an entry is valid in every
// repository; status and diff against HEAD then need no tree reads from
// the store, which git gets from its index's cache tree.
var treeCache = struct {
	sync.Mutex
	order *list.List // of plumbing.Hash, most recent first
	trees map[plumbing.Hash][]treeFile
}{order: list.New(), trees: map[plumbing.Hash][]treeFile{}}

const treeCacheSize = 8

func cachedTree(h plumbing.Hash) ([]treeFile, bool) {
	treeCache.Lock()
	defer treeCache.Unlock()
	files, ok := treeCache.trees[h]
	if ok {
		for e := treeCache.order.Front(); e != nil; e = e.Next() {
			if e.Value.(plumbing.Hash) == h {
				treeCache.order.MoveToFront(e)
				break
			}
		}
	}
	return files, ok
}

func cacheTree(h plumbing.Hash, files []treeFile) {
	treeCache.Lock()
	defer treeCache.Unlock()
	if _, ok := treeCache.trees[h]; ok {
		return
	}
	treeCache.trees[h] = files
	treeCache.order.PushFront(h)
	for treeCache.order.Len() > treeCacheSize {
		last := treeCache.order.Back()
		treeCache.order.Remove(last)
		delete(treeCache.trees, last.Value.(plumbing.Hash))
	}
}

// indexKey identifies one version of an index file.
type indexKey struct {
	path  string
	ino   uint64
	size  int64
	mtime int64
}

// indexCache keeps the last decoded index: decoding 10k entries costs
// more than the rest of a status. Callers get a copy they may change.
var indexCache struct {
	sync.Mutex
	key indexKey
	idx *index.Index
}

func cachedIndex(k indexKey) (*index.Index, bool) {
	indexCache.Lock()
	defer indexCache.Unlock()
	if indexCache.idx == nil || indexCache.key != k {
		return nil, false
	}
	return copyIndex(indexCache.idx), true
}

func cacheIndex(k indexKey, idx *index.Index) {
	indexCache.Lock()
	defer indexCache.Unlock()
	indexCache.key, indexCache.idx = k, copyIndex(idx)
}

// copyIndex copies the entries, which commands change in place; the
// extensions are replaced, never changed, when the index is written.
func copyIndex(idx *index.Index) *index.Index {
	c := *idx
	entries := make([]index.Entry, len(idx.Entries))
	c.Entries = make([]*index.Entry, len(idx.Entries))
	for i, e := range idx.Entries {
		entries[i] = *e
		c.Entries[i] = &entries[i]
	}
	return &c
}
