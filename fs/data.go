package fs

import (
	"context"
	"errors"
	"syscall"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// chunkCache counts reads served from RAM (hits) and from the store (misses).
var chunkCache = metrics.Cache("chunk")

// readAt reads file data at off into p. It returns the bytes read, short
// only at end of file. Sequential reads start a read-ahead.
func (c *core) readAt(n *inode, p []byte, off int64) (int, error) {
	return c.read(n, p, off, true)
}

// read is readAt, with a read-ahead only if ahead: a caller that reads
// large spans itself (a copy) fetches each in one query, and a read-ahead
// running beside it would only fetch the same chunks a second time.
func (c *core) read(n *inode, p []byte, off int64, ahead bool) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	// Copy what RAM has; remember which chunks must come from the store.
	type fetch struct {
		idx      int64
		from, to int64 // range in p
		inChunk  int64 // offset in the chunk
	}
	var fetches []fetch
	var gen uint64
	eof := false
	cs := c.chunkSize
	c.locked(func() {
		size := n.size
		if off >= size {
			eof = true
			return
		}
		if int64(len(p)) > size-off {
			p = p[:size-off]
		}
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
		if ahead {
			c.readAhead(n, off/cs, (off+int64(len(p))-1)/cs)
		}
		gen = n.dataGen
	})
	if eof {
		return 0, nil
	}
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
		return 0, c.readError(n, first*cs, err)
	}
	for _, fe := range fetches {
		copyChunk(p[fe.from:fe.to], got[fe.idx], fe.inChunk)
	}
	chunkCache.Misses.Add(float64(len(fetches)))
	c.locked(func() {
		if n.dataGen == gen {
			for _, fe := range fetches {
				if data, ok := got[fe.idx]; ok {
					c.clean.put(chunkID{n.ino, fe.idx}, gen, data)
				}
			}
		}
	})
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

// errMoved tells an appending writer that the end of file moved (a
// truncation) while it read the chunk it extends: it starts again at the
// new end.
var errMoved = errors.New("end of file moved")

// writeAt writes p at off, growing the file as needed; with appending it
// writes at the end of file instead, found under the same locks that make
// the write, so concurrent appends never overlap. It returns the bytes
// written and the offset they start at.
func (c *core) writeAt(n *inode, p []byte, off int64, appending bool) (int, int64, error) {
	if off < 0 && !appending {
		return 0, off, syscall.EINVAL
	}
	cs := c.chunkSize
	// n.io keeps other writers out; only a truncation, which runs under
	// c.mu alone, can move the end meanwhile (writeChunk sees it).
	n.io.Lock()
	defer n.io.Unlock()
	written := 0
	for written < len(p) {
		if appending && written == 0 {
			c.mu.Lock()
			off = n.size
			c.mu.Unlock()
		}
		if off > c.maxFileSize()-int64(len(p)) {
			return 0, off, syscall.EFBIG
		}
		pos := off + int64(written)
		idx, in := pos/cs, pos%cs
		piece := p[written:min(len(p), written+int(cs-in))]
		err := c.writeChunk(n, idx, in, piece, appending && written == 0)
		switch {
		case errors.Is(err, errMoved):
			continue
		case err != nil:
			// A short count always comes with its error (io.WriterAt); the
			// kernel frontends turn a short count into write(2)'s own.
			return written, off, err
		}
		written += len(piece)
	}
	return written, off, nil
}

// writeChunk writes piece at offset in of chunk idx; atEnd requires that
// offset to still be the end of file. Called with n.io held.
func (c *core) writeChunk(n *inode, idx, in int64, piece []byte, atEnd bool) error {
	cs := c.chunkSize
	start := idx * cs
	end := start + in + int64(len(piece))

	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.waitForRoom(n, end); err != nil {
		return err
	}
	var base []byte
	for {
		if atEnd && n.size != start+in {
			return errMoved
		}
		// The store holds this chunk's old bytes only if it starts before
		// EOF and no pending truncation removed it.
		if n.chunks[idx] != nil || start >= n.size || idx >= n.truncFrom || in == 0 && int64(len(piece)) == cs {
			base = nil
			break
		}
		if data, ok := c.clean.get(chunkID{n.ino, idx}, n.dataGen); ok {
			base = data // copied below, never written
			break
		}
		// Read the old bytes without holding up everyone else. Only a
		// truncation can change this chunk meanwhile (writers wait on
		// n.io), and it bumps the generation: then read again.
		gen := n.dataGen
		c.mu.Unlock()
		var err error
		base, err = c.store.ReadChunk(context.Background(), n.ino, idx)
		c.mu.Lock()
		if err != nil {
			return c.readError(n, idx*cs, err)
		}
		if n.dataGen == gen {
			break
		}
	}
	// Checked after the last time c.mu was let go: Close may have begun.
	if c.closed {
		return errClosed
	}
	if c.inodes[n.ino] != n && n.open == 0 {
		return syscall.ENOENT
	}
	ch := n.chunks[idx]
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
// space. Called with c.mu held; it lets go of it while it waits.
func (c *core) waitForRoom(n *inode, end int64) error {
	for {
		if c.closed {
			return errClosed // no commit will make room
		}
		if err := c.checkQuota(n, end); err != nil {
			return err
		}
		if c.dirtyBytes <= c.opts.DirtyLimit {
			return nil
		}
		if c.storeErr != nil {
			return syscall.ENOSPC
		}
		c.kickWriter()
		c.room.Wait()
	}
}

// maxFileSize is the largest size whose chunk indexes fit the store's key.
// Limits are compared against it by subtraction, so that an offset near
// math.MaxInt64 cannot overflow past the check into another inode's keys.
func (c *core) maxFileSize() int64 { return sqlstore.MaxChunks * c.chunkSize }

// checkQuota refuses growing n to end past the quota. Called with c.mu held.
func (c *core) checkQuota(n *inode, end int64) error {
	if q := c.opts.Policy.QuotaBytes; q > 0 && end > n.size && c.used+(end-n.size) > q {
		RuleQuota.count()
		return RuleQuota.Errno()
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
// zeroes the tail of the last one, so growing later reads zeros. Called
// with c.mu held, which it keeps throughout so a truncation is one step of
// the change that makes it: the rare store read of a tail chunk that is
// not in RAM happens under it. Writers reading a base chunk meanwhile see
// the generation move and read again.
func (c *core) truncate(n *inode, size int64) error {
	if size < 0 {
		return syscall.EINVAL
	}
	if size > c.maxFileSize() {
		return syscall.EFBIG
	}
	cs := c.chunkSize
	// No wait for room: a truncation adds at most one chunk to RAM.
	if err := c.checkQuota(n, size); err != nil {
		return err
	}
	oldSize := n.size
	tailIdx, tailLen := size/cs, size%cs
	var base []byte
	if _, inRAM := n.chunks[tailIdx]; size < oldSize && tailLen > 0 && !inRAM && tailIdx < n.truncFrom {
		var err error
		if base, err = c.store.ReadChunk(context.Background(), n.ino, tailIdx); err != nil {
			return c.readError(n, tailIdx*cs, err)
		}
	}
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
		n.truncs = append(n.truncs, from)
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

// readError maps a failed store read of n's data at off to EIO. A chunk
// whose data does not match its checksum is counted, and logged with the
// offset of that chunk.
func (c *core) readError(n *inode, off int64, err error) error {
	if ce := (*sqlstore.ChecksumError)(nil); errors.As(err, &ce) {
		metrics.StoreChecksumErrors.Inc()
		off = ce.Index * c.chunkSize
	}
	c.log.Error("store read failed", "ino", n.ino, "offset", off, "err", err)
	return syscall.EIO
}
