package fs

import (
	"context"
	"syscall"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// chunkCache counts reads served from RAM (hits) and from the store (misses).
var chunkCache = metrics.Cache("chunk")

// readAt reads file data at off into p. It returns the bytes read, short
// only at end of file.
func (c *core) readAt(n *inode, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	c.mu.Lock()
	size := n.size
	if off >= size {
		c.mu.Unlock()
		return 0, nil
	}
	if int64(len(p)) > size-off {
		p = p[:size-off]
	}
	// Copy what RAM has; remember which chunks must come from the store.
	type fetch struct {
		idx      int64
		from, to int64 // range in p
		inChunk  int64 // offset in the chunk
	}
	var fetches []fetch
	cs := c.chunkSize
	for done := int64(0); done < int64(len(p)); {
		pos := off + done
		idx, in := pos/cs, pos%cs
		end := min(int64(len(p)), done+cs-in)
		dst := p[done:end]
		ch := n.chunks[idx]
		switch clean, cached := c.clean.get(chunkID{n.ino, idx}, n.dataGen); {
		case ch != nil:
			copyChunk(dst, ch.data, in)
			chunkCache.Hits.Inc()
		case idx >= n.truncFrom:
			clear(dst)
		case cached:
			copyChunk(dst, clean, in)
			chunkCache.Hits.Inc()
		default:
			fetches = append(fetches, fetch{idx, done, end, in})
		}
		done = end
	}
	c.readAhead(n, off/cs, (off+int64(len(p))-1)/cs)
	gen := n.dataGen
	c.mu.Unlock()
	if len(fetches) == 0 {
		return len(p), nil
	}
	// One query for the whole span; chunks it does not return are holes.
	first, last := fetches[0].idx, fetches[len(fetches)-1].idx
	got := make(map[int64][]byte, len(fetches))
	err := c.store.ReadChunks(context.Background(), n.ino, first, last+1, func(idx int64, data []byte) {
		got[idx] = data
	})
	if err != nil {
		return 0, syscall.EIO
	}
	for _, fe := range fetches {
		copyChunk(p[fe.from:fe.to], got[fe.idx], fe.inChunk)
	}
	chunkCache.Misses.Add(float64(len(fetches)))
	c.mu.Lock()
	if n.dataGen == gen {
		for _, fe := range fetches {
			if data, ok := got[fe.idx]; ok {
				c.clean.put(chunkID{n.ino, fe.idx}, gen, data)
			}
		}
	}
	c.mu.Unlock()
	return len(p), nil
}

// copyChunk fills dst from chunk data starting at off; bytes the chunk does
// not hold (a hole or its short tail) read as zeros.
func copyChunk(dst, data []byte, off int64) {
	k := 0
	if off < int64(len(data)) {
		k = copy(dst, data[off:])
	}
	clear(dst[k:])
}

// writeAt writes p at off, growing the file as needed.
func (c *core) writeAt(n *inode, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	cs := c.chunkSize
	if (off+int64(len(p))+cs-1)/cs > sqlstore.MaxChunks {
		return 0, syscall.EFBIG
	}
	n.io.Lock()
	defer n.io.Unlock()
	written := 0
	for written < len(p) {
		pos := off + int64(written)
		idx, in := pos/cs, pos%cs
		piece := p[written:min(len(p), written+int(cs-in))]
		if err := c.writeChunk(n, idx, in, piece); err != nil {
			if written > 0 {
				return written, nil
			}
			return 0, err
		}
		written += len(piece)
	}
	return written, nil
}

// writeChunk writes piece at offset in of chunk idx. Called with n.io held.
func (c *core) writeChunk(n *inode, idx, in int64, piece []byte) error {
	cs := c.chunkSize
	start := idx * cs
	end := start + in + int64(len(piece))

	c.mu.Lock()
	if err := c.waitForRoom(n, end); err != nil {
		c.mu.Unlock()
		return err
	}
	ch := n.chunks[idx]
	// The store holds this chunk's old bytes only if it starts before EOF
	// and no pending truncation removed it.
	needBase := ch == nil && start < n.size && idx < n.truncFrom && !(in == 0 && int64(len(piece)) == cs)
	c.mu.Unlock()

	var base []byte
	if needBase {
		var err error
		if base, err = c.store.ReadChunk(context.Background(), n.ino, idx); err != nil {
			return syscall.EIO
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inodes[n.ino] != n && n.open == 0 {
		return syscall.ENOENT
	}
	ch = n.chunks[idx]
	need := in + int64(len(piece))
	switch {
	case ch == nil:
		valid := min(cs, max(n.size-start, 0)) // bytes of the chunk inside the file
		base = base[:min(int64(len(base)), valid)]
		ch = &chunk{data: growChunk(nil, max(need, int64(len(base))), cs)}
		copy(ch.data, base)
		c.dirtyBytes += int64(cap(ch.data))
		n.chunks = ensureChunks(n.chunks)
		n.chunks[idx] = ch
	case ch.captured:
		// The commit owns the old buffer; write into a copy.
		old := ch
		ch = &chunk{data: growChunk(nil, max(need, int64(len(old.data))), cs)}
		copy(ch.data, old.data)
		c.dirtyBytes += int64(cap(ch.data)) - int64(cap(old.data))
		n.chunks[idx] = ch
	case int64(len(ch.data)) < need:
		oldCap := cap(ch.data)
		ch.data = growChunk(ch.data, need, cs)
		c.dirtyBytes += int64(cap(ch.data) - oldCap)
	}
	copy(ch.data[in:], piece)
	n.dataGen++
	c.dirty.chunked[n.ino] = struct{}{}
	t := now()
	if end > n.size {
		c.used += end - n.size
		n.size = end
	}
	n.mtime, n.ctime = t, t
	c.touchInode(n)
	if c.dirtyBytes > c.opts.DirtyLimit/4 {
		c.kickWriter()
	}
	return nil
}

// waitForRoom blocks a writer while too much data waits for the store, and
// refuses growth past the quota or while the store is failing for lack of
// space. Called with c.mu held.
func (c *core) waitForRoom(n *inode, end int64) error {
	if q := c.opts.Policy.QuotaBytes; q > 0 && end > n.size && c.used+(end-n.size) > q {
		metrics.PolicyRefusals.WithLabelValues("quota").Inc()
		return syscall.ENOSPC
	}
	for c.dirtyBytes > c.opts.DirtyLimit {
		if c.storeErr != nil {
			return syscall.ENOSPC
		}
		c.kickWriter()
		c.room.Wait()
	}
	return nil
}

func ensureChunks(m map[int64]*chunk) map[int64]*chunk {
	if m == nil {
		return make(map[int64]*chunk)
	}
	return m
}

// growChunk returns b extended to length need (zero filled). Capacity
// doubles up to the chunk size so appends in small pieces stay cheap.
func growChunk(b []byte, need, cs int64) []byte {
	if int64(cap(b)) >= need {
		// Bytes past len may be a truncated tail: they must read as zeros.
		old := len(b)
		b = b[:need]
		clear(b[old:])
		return b
	}
	c := max(int64(cap(b))*2, need, 4096)
	c = min(c, cs)
	nb := make([]byte, need, c)
	copy(nb, b)
	return nb
}

// truncate sets n's size. Shrinking drops the chunks past the end and
// zeroes the tail of the last one, so growing later reads zeros.
func (c *core) truncate(n *inode, size int64) error {
	if size < 0 {
		return syscall.EINVAL
	}
	cs := c.chunkSize
	if (size+cs-1)/cs > sqlstore.MaxChunks {
		return syscall.EFBIG
	}
	n.io.Lock()
	defer n.io.Unlock()
	c.mu.Lock()
	if err := c.waitForRoom(n, size); err != nil {
		c.mu.Unlock()
		return err
	}
	oldSize := n.size
	c.mu.Unlock()

	tailIdx, tailLen := size/cs, size%cs
	var base []byte
	if size < oldSize && tailLen > 0 {
		c.mu.Lock()
		_, inRAM := n.chunks[tailIdx]
		fromStore := !inRAM && tailIdx < n.truncFrom
		c.mu.Unlock()
		if fromStore {
			var err error
			if base, err = c.store.ReadChunk(context.Background(), n.ino, tailIdx); err != nil {
				return syscall.EIO
			}
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	t := now()
	n.mtime, n.ctime = t, t
	n.dataGen++
	c.touchInode(n)
	if size >= oldSize {
		c.used += size - n.size
		n.size = size
		return nil
	}
	from := (size + cs - 1) / cs // first chunk wholly past the end
	for idx, ch := range n.chunks {
		if idx >= from {
			delete(n.chunks, idx)
			c.dirtyBytes -= int64(cap(ch.data))
		}
	}
	if from < (oldSize+cs-1)/cs {
		n.truncFrom = min(n.truncFrom, from)
		n.truncPending++
		c.dirty.truncs = append(c.dirty.truncs, sqlstore.Truncation{Ino: n.ino, From: from})
	}
	if tailLen > 0 {
		ch := n.chunks[tailIdx]
		switch {
		case ch != nil && !ch.captured:
			if int64(len(ch.data)) > tailLen {
				ch.data = ch.data[:tailLen]
			}
		case ch != nil: // captured: copy the kept part
			nb := append([]byte(nil), ch.data[:min(int64(len(ch.data)), tailLen)]...)
			c.dirtyBytes += int64(cap(nb)) - int64(cap(ch.data))
			n.chunks[tailIdx] = &chunk{data: nb}
		case len(base) > 0:
			nb := append([]byte(nil), base[:min(int64(len(base)), tailLen)]...)
			c.dirtyBytes += int64(cap(nb))
			n.chunks = ensureChunks(n.chunks)
			n.chunks[tailIdx] = &chunk{data: nb}
		}
		c.dirty.chunked[n.ino] = struct{}{}
	}
	c.used -= oldSize - size
	n.size = size
	return nil
}
