package fs

import (
	"context"
)

// readAheadChunks is how many chunks past a sequential read are fetched
// from the store in the background, so SQLite's reads overlap the kernel's
// round trips on cold sequential reads.
const readAheadChunks = 4

// cleanCacheChunks bounds the clean-chunk cache (chunks fetched from the
// store, mostly by read-ahead).
const cleanCacheChunks = 64

type chunkID struct {
	ino uint64
	idx int64
}

// cleanChunk is a chunk as the store held it when the inode's data was at
// generation gen; any write or truncation bumps the generation and so
// invalidates every cached chunk of that inode at once.
type cleanChunk struct {
	gen  uint64
	data []byte
}

// cleanCache is a FIFO cache of store chunks. Guarded by core.mu.
type cleanCache struct {
	m        map[chunkID]cleanChunk
	order    []chunkID
	inflight map[chunkID]bool
}

func (cc *cleanCache) get(id chunkID, gen uint64) ([]byte, bool) {
	e, ok := cc.m[id]
	if !ok || e.gen != gen {
		return nil, false
	}
	return e.data, true
}

func (cc *cleanCache) put(id chunkID, gen uint64, data []byte) {
	if cc.m == nil {
		cc.m = make(map[chunkID]cleanChunk)
	}
	if _, ok := cc.m[id]; !ok {
		cc.order = append(cc.order, id)
	}
	cc.m[id] = cleanChunk{gen: gen, data: data}
	for len(cc.order) > cleanCacheChunks {
		delete(cc.m, cc.order[0])
		cc.order = cc.order[1:]
	}
}

// readAhead fetches the chunks after idx in the background when reads of n
// are sequential. Called with c.mu held.
func (c *core) readAhead(n *inode, idx int64) {
	sequential := n.lastRead == idx-1
	n.lastRead = idx
	if !sequential {
		return
	}
	if c.clean.inflight == nil {
		c.clean.inflight = make(map[chunkID]bool)
	}
	last := (n.size - 1) / c.chunkSize
	var todo []int64
	for k := idx + 1; k <= min(idx+readAheadChunks, last); k++ {
		id := chunkID{n.ino, k}
		if _, ok := n.chunks[k]; ok || k >= n.truncFrom || c.clean.inflight[id] {
			continue
		}
		if _, ok := c.clean.get(id, n.dataGen); ok {
			continue
		}
		c.clean.inflight[id] = true
		todo = append(todo, k)
	}
	if len(todo) == 0 {
		return
	}
	gen := n.dataGen
	go func() {
		for _, k := range todo {
			data, err := c.store.ReadChunk(context.Background(), n.ino, k)
			c.mu.Lock()
			id := chunkID{n.ino, k}
			delete(c.clean.inflight, id)
			if err == nil && n.dataGen == gen {
				c.clean.put(id, gen, data)
			}
			c.mu.Unlock()
		}
	}()
}
