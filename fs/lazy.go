package fs

import (
	"context"
	"fmt"
	"slices"
	"syscall"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// The RAM copy of the metadata is filled on demand: opening a store reads
// the root, the totals and the unlinked inodes only, and a directory's
// entries (with their inodes and extended attributes) are read from the
// store the first time anything needs them, then kept like everything else.
// What is in RAM is authoritative; what is not was never touched since
// the store opened, so the store's committed rows are its current state.
// See "The lazy metadata cache" in doc.go.

// adopt makes store row r an inode in RAM, with its extended attributes.
// A new inode's data generation starts past any an earlier inode of the
// same number had (only a restore brings a number back). Called with c.mu
// held.
func (c *core) adopt(r sqlstore.Inode) *inode {
	n := inodeFromRow(r)
	n.dataGen = c.restores << 40
	c.inodes[n.ino] = n
	return n
}

// addXattr sets an extended attribute read from the store.
func (n *inode) addXattr(x sqlstore.Xattr) {
	if n.xattrs == nil {
		n.xattrs = make(map[string][]byte)
	}
	n.xattrs[x.Name] = x.Value
}

// loadError is what a failed read of metadata becomes: logged, EIO.
func (c *core) loadError(what string, ino uint64, err error) error {
	c.log.Error("reading metadata from the store failed", "what", what, "ino", ino, "err", err)
	return fmt.Errorf("%s %d: %w", what, ino, syscall.EIO)
}

// loadDir reads directory n's entries from the store unless they are in
// RAM already. An entry's inode already in RAM (another name of a hard
// link, reached first) is kept as it is: RAM is authoritative. Called with
// c.mu held, which it keeps across the read: the directory is then one
// step that no change sees half loaded.
func (c *core) loadDir(n *inode) error {
	if n.children != nil || !n.isDir() {
		return nil
	}
	dentryCache.Misses.Inc()
	ents, xattrs, err := c.store.ReadDir(context.Background(), n.ino)
	if err != nil {
		return c.loadError("read directory", n.ino, err)
	}
	children := make(map[string]uint64, len(ents))
	fresh := make(map[uint64]*inode, len(ents))
	for _, e := range ents {
		children[e.Name] = e.Inode.Ino
		if c.inodes[e.Inode.Ino] != nil {
			continue
		}
		child := c.adopt(e.Inode)
		fresh[child.ino] = child
		if child.isDir() {
			child.parent = n.ino
		}
	}
	for _, x := range xattrs {
		if child := fresh[x.Ino]; child != nil {
			child.addXattr(x)
		}
	}
	n.children = children
	return nil
}

// maxDepth bounds the climb of dirAt, so a corrupt store whose
// directories name each other cannot loop it.
const maxDepth = 1 << 16

// dirAt returns directory ino with its entries in RAM, reading the
// directories above it first when it is not in RAM yet: a directory not in
// RAM lies in one whose entries were never loaded, so its name in the
// store is its name now. ENOENT when no such directory is reachable.
// Called with c.mu held.
func (c *core) dirAt(ino uint64) (*inode, error) {
	var below []uint64 // the directories not in RAM, ino first
	cur := ino
	for c.inodes[cur] == nil {
		if len(below) == maxDepth {
			return nil, c.loadError("find directory", ino, fmt.Errorf("deeper than %d: %w", maxDepth, sqlstore.ErrStoreCorrupt))
		}
		below = append(below, cur)
		names, err := c.store.NamesOf(context.Background(), cur)
		if err != nil {
			return nil, c.loadError("find directory", cur, err)
		}
		if len(names) != 1 {
			return nil, syscall.ENOENT
		}
		cur = names[0].Parent
	}
	// Down again: each directory's entries bring the next one into RAM.
	n := c.inodes[cur]
	for i := len(below) - 1; i >= 0; i-- {
		if err := c.loadDir(n); err != nil {
			return nil, err
		}
		if n = c.inodes[below[i]]; n == nil {
			return nil, syscall.ENOENT
		}
	}
	if !n.isDir() {
		return nil, syscall.ENOTDIR
	}
	return n, c.loadDir(n)
}

// namesInStore finds the names of ino in directories whose entries are
// not in RAM (a hard link reached through another directory), loading
// those directories. Called with c.mu held.
func (c *core) namesInStore(ino uint64) ([]DirName, error) {
	names, err := c.store.NamesOf(context.Background(), ino)
	if err != nil {
		return nil, c.loadError("find names of inode", ino, err)
	}
	// Where the entries are in RAM, RAM is authoritative (and was searched).
	names = slices.DeleteFunc(names, func(d sqlstore.Dentry) bool {
		p := c.inodes[d.Parent]
		return p != nil && p.children != nil
	})
	var out []DirName
	for _, d := range names {
		p, err := c.dirAt(d.Parent)
		if err != nil {
			return nil, err
		}
		if p.children[d.Name] == ino {
			out = append(out, DirName{Dir: p.ino, Name: d.Name})
		}
	}
	return out, nil
}

// readInode brings inode ino into RAM from the store (after a restore,
// whose rows are the truth then); nil when the store has none. Called with
// c.mu held.
func (c *core) readInode(ino uint64) (*inode, error) {
	if n := c.inodes[ino]; n != nil {
		return n, nil
	}
	r, ok, err := c.store.ReadInode(context.Background(), ino)
	if err != nil || !ok {
		return nil, err
	}
	xattrs, err := c.store.InodeXattrs(context.Background(), ino)
	if err != nil {
		return nil, err
	}
	n := c.adopt(r)
	for _, x := range xattrs {
		n.addXattr(x)
	}
	return n, nil
}
