package fs

import (
	"context"
)

// readAheadChunks is how many chunks past a sequential read are fetched
// from the store in the background, so SQLite's reads overlap the kernel's
// round trips on cold sequential reads.
const readAheadChunks = 32

// cleanCacheBytes bounds the clean-chunk cache: chunks as the store holds
// them, fetched by reads and by read-ahead or just committed, so repeated
// reads (an agent's grep over the same tree) skip SQLite. Entries count
// their capacity: a committed buffer may have grown past its length.
const cleanCacheBytes = 64 << 20

type chunkID struct {
	ino uint64
	idx int64
}

// cleanChunk is a chunk as the store held it when the inode's data was at
// generation gen; any write, truncation or release of a committed chunk
// bumps the generation and so invalidates every cached chunk of that inode
// at once.
type cleanChunk struct {
	gen  uint64
	data []byte
}

// cleanCache is a FIFO cache of store chunks. Guarded by core.mu.
type cleanCache struct {
	m        map[chunkID]cleanChunk
	order    []chunkID
	bytes    int64
	inflight map[uint64]bool // inodes with a read-ahead running
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
	if old, ok := cc.m[id]; ok {
		cc.bytes -= int64(cap(old.data))
	} else {
		cc.order = append(cc.order, id)
	}
	cc.m[id] = cleanChunk{gen: gen, data: data}
	cc.bytes += int64(cap(data))
	for cc.bytes > cleanCacheBytes && len(cc.order) > 0 {
		if old, ok := cc.m[cc.order[0]]; ok {
			cc.bytes -= int64(cap(old.data))
			delete(cc.m, cc.order[0])
		}
		cc.order = cc.order[1:]
	}
	chunkCache.Entries.Set(float64(len(cc.m)))
}

// readAhead fetches the chunks after last in the background when reads of
// n are sequential. Called with c.mu held.
func (c *core) readAhead(n *inode, first, last int64) {
	sequential := n.lastRead == first-1 || n.lastRead == first
	n.lastRead = last
	if !sequential || n.size == 0 {
		return
	}
	if c.clean.inflight == nil {
		c.clean.inflight = make(map[uint64]bool)
	}
	end := min(last+1+readAheadChunks, (n.size+c.chunkSize-1)/c.chunkSize, n.truncFrom)
	from := last + 1
	// Start past what is already cached or waiting in RAM.
	for from < end {
		if _, ok := n.chunks[from]; !ok {
			if _, ok := c.clean.get(chunkID{n.ino, from}, n.dataGen); !ok {
				break
			}
		}
		from++
	}
	// A reader that outruns the read-ahead fetches for itself rather than
	// wait: two fetches in flight use both cores (measured: waiting was 10%
	// slower on cold sequential reads).
	if from >= end || c.clean.inflight[n.ino] || end-from < readAheadChunks/4 {
		return
	}
	c.clean.inflight[n.ino] = true
	gen := n.dataGen
	go func() {
		var got []chunkID
		var datas [][]byte
		err := c.store.ReadChunks(context.Background(), n.ino, from, end, func(idx int64, data []byte) {
			got = append(got, chunkID{n.ino, idx})
			datas = append(datas, data)
		})
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.clean.inflight, n.ino)
		if err != nil || n.dataGen != gen {
			return
		}
		for i, id := range got {
			c.clean.put(id, gen, datas[i])
		}
	}()
}
