package fs

import (
	"context"
	"slices"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

type dentKey struct {
	parent uint64
	name   string
}

// dirtySet is what changed since the last commit. It holds keys, not
// values: a commit reads the current values, so ten changes to one inode
// cost one row.
type dirtySet struct {
	inodes  map[uint64]struct{}
	dead    map[uint64]struct{}
	dentry  map[dentKey]struct{}
	xattrs  map[sqlstore.XattrKey]struct{}
	chunked map[uint64]struct{} // inodes with chunks not yet captured
	truncs  []sqlstore.Truncation
	audit   []sqlstore.AuditEvent
}

func newDirtySet() dirtySet {
	return dirtySet{
		inodes:  make(map[uint64]struct{}),
		dead:    make(map[uint64]struct{}),
		dentry:  make(map[dentKey]struct{}),
		xattrs:  make(map[sqlstore.XattrKey]struct{}),
		chunked: make(map[uint64]struct{}),
	}
}

func (d *dirtySet) empty() bool { return d.treeEmpty() && len(d.audit) == 0 }

// treeEmpty reports whether nothing of the tree itself (names, inodes,
// data, xattrs) waits to be written: at most audit events do.
func (d *dirtySet) treeEmpty() bool {
	return len(d.inodes) == 0 && len(d.dead) == 0 && len(d.dentry) == 0 && len(d.xattrs) == 0 &&
		len(d.chunked) == 0 && len(d.truncs) == 0
}

// run is the single writer: it turns the dirty set into one commit per
// interval, per fsync request, or when dirty data crosses a quarter of the
// limit, so many operations share each transaction (group commit).
func (c *core) run() {
	defer close(c.done)
	tick := time.NewTicker(c.opts.CommitInterval)
	defer tick.Stop()
	for {
		var waiters []syncRequest
		select {
		case <-c.stop:
			err := c.commit(true)
			if err != nil {
				c.log.Error("final commit failed", "err", err)
			}
			return
		case w := <-c.syncReq:
			waiters = append(waiters, w)
			// Everyone already waiting shares this commit.
			for more := true; more; {
				select {
				case w := <-c.syncReq:
					waiters = append(waiters, w)
				default:
					more = false
				}
			}
		case <-c.kick:
		case <-tick.C:
		case j := <-c.jobs:
			j.reply <- c.runJob(j.fn)
			continue
		}
		durable := false
		for _, w := range waiters {
			durable = durable || w.durable
		}
		err := c.commit(durable)
		for _, w := range waiters {
			w.reply <- err
		}
	}
}

func (c *core) kickWriter() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// commit writes the dirty set as one transaction. durable forces a synced
// commit even when nothing is dirty, since earlier commits were not synced.
func (c *core) commit(durable bool) error {
	if c.opts.ReadOnly {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commitLocked(false, durable)
}

// commitLocked is commit called with c.mu held, on the writer; hold keeps
// it held across the write.
func (c *core) commitLocked(hold, durable bool) error {
	// Nothing to write, and (for a sync) nothing committed unsynced since
	// the last synced commit: a session that only read writes nothing.
	if c.dirty.empty() && (!durable || !c.unsynced) {
		return nil
	}
	start := time.Now()
	if !c.dirty.treeEmpty() {
		// Set before the commit, not after: the tree in flight is no
		// longer in the dirty set, which the reuse check also reads.
		c.sinceCheckpoint = true
	}
	err := c.commitWith(hold, durable, func(b *sqlstore.Batch) error {
		return c.store.Commit(context.Background(), b)
	}, nil)
	metrics.StoreCommitDuration.Observe(time.Since(start).Seconds())
	if durable {
		metrics.StoreSyncCommits.Inc()
	}
	return err
}

type capturedChunk struct {
	n   *inode
	idx int64
	ch  *chunk
}

// snapshot turns the dirty set into a batch. Called with c.mu held, so the
// batch is one consistent state of the filesystem.
func (c *core) snapshot() (*sqlstore.Batch, []capturedChunk) {
	d := &c.dirty
	b := &sqlstore.Batch{Truncations: d.truncs, Audit: d.audit}
	for ino := range d.dead {
		b.DeleteInodes = append(b.DeleteInodes, ino)
	}
	for k := range d.dentry {
		p := c.inodes[k.parent]
		if ino, ok := p.lookupChild(k.name); ok {
			b.Dentries = append(b.Dentries, sqlstore.Dentry{Parent: k.parent, Name: k.name, Ino: ino})
		} else {
			b.DeleteDentries = append(b.DeleteDentries, sqlstore.Dentry{Parent: k.parent, Name: k.name})
		}
	}
	for ino := range d.inodes {
		if n := c.inodes[ino]; n != nil {
			b.Inodes = append(b.Inodes, n.row())
		}
	}
	for k := range d.xattrs {
		n := c.inodes[k.Ino]
		if n == nil {
			continue
		}
		if v, ok := n.xattrs[k.Name]; ok {
			b.Xattrs = append(b.Xattrs, sqlstore.Xattr{Ino: k.Ino, Name: k.Name, Value: v})
		} else {
			b.DeleteXattrs = append(b.DeleteXattrs, k)
		}
	}
	var captured []capturedChunk
	for ino := range d.chunked {
		n := c.inodes[ino]
		if n == nil {
			continue
		}
		for idx, ch := range n.chunks {
			if ch.captured {
				continue
			}
			ch.captured = true
			captured = append(captured, capturedChunk{n, idx, ch})
			b.Chunks = append(b.Chunks, sqlstore.Chunk{Ino: ino, Idx: idx, Data: ch.data})
		}
	}
	c.dirty = newDirtySet()
	return b, captured
}

func (p *inode) lookupChild(name string) (uint64, bool) {
	if p == nil || p.children == nil {
		return 0, false
	}
	ino, ok := p.children[name]
	return ino, ok
}

// keepCommittedMax is the largest file whose chunks a commit moves into
// the clean cache instead of dropping them: a small file is often read
// right after it is written (git hashes the files it just wrote), while a
// big sequential write would only push out what reads fetched.
const keepCommittedMax = 1 << 20

// release drops from RAM what a successful commit made durable in the store.
func (c *core) release(b *sqlstore.Batch, captured []capturedChunk) {
	var kept []capturedChunk
	for _, cc := range captured {
		if cc.n.chunks[cc.idx] == cc.ch {
			delete(cc.n.chunks, cc.idx)
			c.dirtyBytes -= int64(cap(cc.ch.data))
			// A read-ahead may have cached (or be fetching) the bytes this
			// chunk replaced in the store while it shadowed them from RAM;
			// once RAM lets go, those bytes must not be served.
			cc.n.dataGen++
			if cc.n.size <= keepCommittedMax {
				kept = append(kept, cc)
			}
		}
	}
	// The store now holds exactly these bytes, and a captured buffer is
	// never written again. Cached at the generation after all the bumps.
	for _, cc := range kept {
		c.clean.put(chunkID{cc.n.ino, cc.idx}, cc.n.dataGen, cc.ch.data)
	}
	// Commits happen in order, so an inode's committed truncations are the
	// first of its pending ones. The watermark falls back to the lowest
	// still pending: keeping a committed one would hide chunks the same
	// commit wrote after it.
	for _, t := range b.Truncations {
		if n := c.inodes[t.Ino]; n != nil && len(n.truncs) > 0 {
			n.truncs = n.truncs[1:]
			n.truncFrom = noTrunc
			if len(n.truncs) > 0 {
				n.truncFrom = slices.Min(n.truncs)
			}
		}
	}
}

// restore marks a failed batch's rows dirty again so the next commit
// retries them with their then-current values.
func (c *core) restore(b *sqlstore.Batch, captured []capturedChunk) {
	d := &c.dirty
	for _, ino := range b.DeleteInodes {
		d.dead[ino] = struct{}{}
	}
	for _, e := range b.Dentries {
		d.dentry[dentKey{e.Parent, e.Name}] = struct{}{}
	}
	for _, e := range b.DeleteDentries {
		d.dentry[dentKey{e.Parent, e.Name}] = struct{}{}
	}
	for _, n := range b.Inodes {
		d.inodes[n.Ino] = struct{}{}
	}
	for _, x := range b.Xattrs {
		d.xattrs[sqlstore.XattrKey{Ino: x.Ino, Name: x.Name}] = struct{}{}
	}
	for _, x := range b.DeleteXattrs {
		d.xattrs[x] = struct{}{}
	}
	for _, cc := range captured {
		if cc.n.chunks[cc.idx] == cc.ch {
			cc.ch.captured = false
			d.chunked[cc.n.ino] = struct{}{}
		}
	}
	d.truncs = append(b.Truncations, d.truncs...)
	d.audit = append(b.Audit, d.audit...)
}

// Mark helpers, called with c.mu held.
func (c *core) touchInode(n *inode) { c.dirty.inodes[n.ino] = struct{}{} }

func (c *core) touchDentry(parent uint64, name string) {
	c.dirty.dentry[dentKey{parent, name}] = struct{}{}
}
