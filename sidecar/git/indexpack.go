package git

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// A received pack (clone, fetch, pull, a bundle) is indexed here the way
// git index-pack does it, instead of by go-git's packfile.Parser, which
// inflates every object two or three times (once while scanning, again
// for each object in offset order, and deltas once more as children of
// their base): a third of a 10k-file clone's time. Here the stream is
// scanned once as it arrives (each object inflated once: whole objects
// hashed, deltas kept), then every delta is resolved from its base's
// content, each base inflated once more from the written pack.

// maxDeltaBytes bounds the deltas kept in memory between the two passes;
// past it a delta is inflated again from the pack when it is resolved.
const maxDeltaBytes = 64 << 20

// maxKeptBytes bounds the objects' contents kept as they are inflated:
// bases need not be inflated again, and the storage's object cache gets
// them, so the checkout that follows a clone reads no object from the
// pack. It stays below the cache's own size (96 MiB), which would
// otherwise evict them again. maxKeptObject is the largest object kept.
const (
	maxKeptBytes  = 64 << 20
	maxKeptObject = 1 << 20
)

// maxResolvedSize bounds an object held in memory to resolve a delta:
// git deltifies no object above core.bigFileThreshold (512 MiB), so a
// larger one in a delta chain is a hostile pack, not a repository.
const maxResolvedSize = 512 << 20

// maxChainDepth is git's limit on delta chains (pack-objects' OE_DEPTH_BITS).
const maxChainDepth = 4095

// packObject is one object of a pack being indexed.
type packObject struct {
	offset   int64
	typ      plumbing.ObjectType // the resolved type, once known
	size     int64               // the size in the pack's header
	crc      uint32
	delta    bool
	baseHash plumbing.Hash // a ref delta's base
	hash     plumbing.Hash // zero until known
	data     []byte        // a delta's inflated instructions, if kept
	content  []byte        // the object's content, if kept
	children []*packObject // ofs deltas against this object
}

// packWriter receives a pack and indexes it into the repository's
// objects/pack; nothing is left there unless the whole pack is valid.
type packWriter struct {
	st   storage
	fs   billy.Filesystem
	tmp  billy.File
	pw   *io.PipeWriter
	done chan packScan
	n    int64 // bytes received
	kept int   // bytes of content kept (maxKeptBytes)
}

type packScan struct {
	objs     []*packObject
	checksum plumbing.Hash
	err      error
}

// PackfileWriter is go-git's seam for a received pack (storer.PackfileWriter).
func (s storage) PackfileWriter() (io.WriteCloser, error) {
	fs := s.Filesystem()
	dir := path.Join("objects", "pack")
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := fs.TempFile(dir, "tmp_pack_")
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	w := &packWriter{st: s, fs: fs, tmp: tmp, pw: pw, done: make(chan packScan, 1)}
	go func() {
		res := w.scan(pr)
		// Whatever the scan left unread still goes to the file, so a
		// writer is never blocked on a scan that has stopped.
		_, _ = io.Copy(io.Discard, pr)
		w.done <- res
	}()
	return w, nil
}

func (w *packWriter) Write(p []byte) (int, error) {
	n, err := w.pw.Write(p)
	w.n += int64(n)
	return n, err
}

// Close ends the stream, resolves the deltas and, if the pack is whole,
// installs it under its checksum's name with its index; otherwise it
// removes what it wrote and says what git's index-pack would.
func (w *packWriter) Close() error {
	w.pw.Close()
	res := <-w.done
	err := res.err
	if err == nil {
		err = w.resolve(res.objs)
	}
	if err == nil {
		err = w.tmp.Close()
	} else {
		w.tmp.Close()
	}
	if err == nil && w.n > 0 {
		err = w.install(res.objs, res.checksum)
	}
	if err != nil || w.n == 0 {
		if rerr := w.fs.Remove(w.tmp.Name()); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}

// badPackError is index-pack's complaint about a received pack; the
// command that received it adds its own lines (fetchError, bundle clone).
// git also prints zlib's own words for an object that does not inflate,
// which Go's flate does not have.
type badPackError struct{ msg string }

func (e *badPackError) Error() string { return e.msg }

func indexPackError(format string, args ...any) error {
	return &badPackError{fmt.Sprintf(format, args...)}
}

// scan reads the pack as it arrives, writing it to the temporary file:
// every object's header, offset and CRC; whole objects are hashed, deltas
// kept for resolve. The scanner checks the trailing checksum.
func (w *packWriter) scan(r io.Reader) packScan {
	out := bufio.NewWriterSize(w.tmp, 1<<20)
	var received countingWriter
	sc := packfile.NewScanner(io.TeeReader(r, io.MultiWriter(out, &received)))
	_, count, err := sc.Header()
	if err != nil {
		if received == 0 {
			return packScan{} // nothing was sent: no pack
		}
		return packScan{err: indexPackError("protocol error: bad pack header")}
	}
	objs := make([]*packObject, 0, min(count, 1<<16))
	byOffset := make(map[int64]*packObject, min(count, 1<<16))
	kept := 0
	var buf bytes.Buffer
	for range count {
		oh, err := sc.NextObjectHeader()
		if err != nil {
			return packScan{err: packReadError(err)}
		}
		o := &packObject{offset: oh.Offset, typ: oh.Type, size: oh.Length}
		switch oh.Type {
		case plumbing.OFSDeltaObject:
			base, ok := byOffset[oh.OffsetReference]
			if !ok {
				return packScan{err: indexPackError("pack has bad object at offset %d: delta base offset is out of bound", oh.Offset)}
			}
			o.delta = true
			base.children = append(base.children, o)
		case plumbing.REFDeltaObject:
			o.delta, o.baseHash = true, oh.Reference
		case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
		default:
			return packScan{err: indexPackError("pack has bad object at offset %d: unknown object type %d", oh.Offset, oh.Type)}
		}
		if o.delta {
			buf.Reset()
			if _, o.crc, err = sc.NextObject(&buf); err != nil {
				return packScan{err: objectError(err, oh.Offset)}
			}
			if kept+buf.Len() <= maxDeltaBytes {
				o.data = bytes.Clone(buf.Bytes())
				kept += len(o.data)
			}
		} else {
			h := plumbing.NewHasher(oh.Type, oh.Length)
			var dst io.Writer = h
			keep := w.canKeep(oh.Length)
			if keep {
				buf.Reset()
				dst = io.MultiWriter(h, &buf)
			}
			var n int64
			if n, o.crc, err = sc.NextObject(dst); err != nil {
				return packScan{err: objectError(err, oh.Offset)}
			}
			if n != oh.Length {
				return packScan{err: indexPackError("pack has bad object at offset %d: inflate returned -5", oh.Offset)}
			}
			o.hash = h.Sum()
			if keep {
				o.content = bytes.Clone(buf.Bytes())
				w.kept += len(o.content)
			}
		}
		objs = append(objs, o)
		byOffset[o.offset] = o
	}
	sum, err := sc.Checksum()
	if errors.Is(err, packfile.ErrMalformedPackFile) {
		return packScan{err: indexPackError("pack is corrupted (SHA1 mismatch)")}
	} else if err != nil {
		return packScan{err: packReadError(err)}
	}
	if err := out.Flush(); err != nil {
		return packScan{err: err}
	}
	return packScan{objs: objs, checksum: sum}
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// packReadError is git's word for a stream that ended or failed early.
func packReadError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return indexPackError("early EOF")
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return fmt.Errorf("reading the pack: %w", err)
}

// objectError is git's report of an object that does not inflate.
func objectError(err error, offset int64) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return indexPackError("early EOF")
	}
	return indexPackError("pack has bad object at offset %d: inflate returned -3", offset)
}

// resolve finds every delta's object: each whole object that is a base is
// inflated again from the written pack and its deltas applied to it, depth
// first, so only one chain's contents are in memory at a time.
func (w *packWriter) resolve(objs []*packObject) error {
	var pending map[plumbing.Hash][]*packObject // ref deltas by base
	deltas := 0
	for _, o := range objs {
		if o.delta {
			deltas++
			if !o.baseHash.IsZero() {
				if pending == nil {
					pending = map[plumbing.Hash][]*packObject{}
				}
				pending[o.baseHash] = append(pending[o.baseHash], o)
			}
		}
	}
	if deltas == 0 {
		return nil
	}
	f, err := w.fs.Open(w.tmp.Name())
	if err != nil {
		return err
	}
	defer f.Close()
	sc := packfile.NewScanner(f)
	read := func(o *packObject) ([]byte, error) {
		if o.content != nil {
			return o.content, nil
		}
		if o.size > maxResolvedSize {
			return nil, indexPackError("pack has bad object at offset %d: object of %d bytes in a delta chain", o.offset, o.size)
		}
		if _, err := sc.SeekObjectHeader(o.offset); err != nil {
			return nil, objectError(err, o.offset)
		}
		var b bytes.Buffer
		b.Grow(int(o.size))
		if _, _, err := sc.NextObject(&b); err != nil {
			return nil, objectError(err, o.offset)
		}
		return b.Bytes(), nil
	}
	var walk func(base *packObject, content []byte, depth int) error
	walk = func(base *packObject, content []byte, depth int) error {
		kids := base.children
		if p, ok := pending[base.hash]; ok {
			kids = append(kids, p...)
			delete(pending, base.hash)
		}
		if depth > maxChainDepth && len(kids) > 0 {
			return indexPackError("pack has bad object at offset %d: delta chain depth exceeds %d", kids[0].offset, maxChainDepth)
		}
		for _, d := range kids {
			instr := d.data
			if instr == nil {
				var err error
				if instr, err = read(d); err != nil {
					return err
				}
			}
			d.data = nil
			if target, ok := deltaTargetSize(instr); !ok || target > maxResolvedSize {
				return indexPackError("pack has bad object at offset %d: invalid delta", d.offset)
			}
			out, err := packfile.PatchDelta(content, instr)
			if err != nil {
				return indexPackError("pack has bad object at offset %d: failed to apply delta", d.offset)
			}
			d.typ = base.typ
			d.hash = plumbing.ComputeHash(d.typ, out)
			if w.canKeep(int64(len(out))) {
				d.content = out
				w.kept += len(out)
			}
			deltas--
			if len(d.children) > 0 || len(pending[d.hash]) > 0 {
				if err := walk(d, out, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, o := range objs {
		if o.delta || len(o.children) == 0 && len(pending[o.hash]) == 0 {
			continue
		}
		content, err := read(o)
		if err != nil {
			return err
		}
		if err := walk(o, content, 1); err != nil {
			return err
		}
	}
	if deltas > 0 {
		return indexPackError("pack has %d unresolved %s", deltas, plural(deltas, "delta", "deltas"))
	}
	return nil
}

// deltaTargetSize is the result size a delta's header announces.
func deltaTargetSize(delta []byte) (uint64, bool) {
	var v [2]uint64
	for i := range v {
		shift := 0
		for {
			if len(delta) == 0 || shift > 63 {
				return 0, false
			}
			b := delta[0]
			delta = delta[1:]
			v[i] |= uint64(b&0x7f) << shift
			shift += 7
			if b&0x80 == 0 {
				break
			}
		}
	}
	return v[1], true
}

// install writes the index and moves the pack to its name, index first:
// a pack is read only once its .pack is there, so a reader never finds
// one without its index. The storage then reads the new index.
func (w *packWriter) install(objs []*packObject, sum plumbing.Hash) error {
	var iw idxfile.Writer
	if err := iw.OnHeader(uint32(len(objs))); err != nil {
		return err
	}
	for _, o := range objs {
		iw.Add(o.hash, uint64(o.offset), o.crc)
	}
	if err := iw.OnFooter(sum); err != nil {
		return err
	}
	idx, err := iw.Index()
	if err != nil {
		return err
	}
	base := path.Join("objects", "pack", "pack-"+sum.String())
	if _, err := w.fs.Lstat(base + ".pack"); err == nil {
		return w.fs.Remove(w.tmp.Name()) // the same pack is already here
	}
	f, err := w.fs.Create(base + ".idx")
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if _, err := idxfile.NewEncoder(bw).Encode(idx); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := w.fs.Rename(w.tmp.Name(), base+".pack"); err != nil {
		return err
	}
	// git's packs and their indexes are read-only.
	if c, ok := w.fs.(billy.Chmod); ok {
		for _, p := range []string{base + ".idx", base + ".pack"} {
			if err := c.Chmod(p, 0o444); err != nil {
				return err
			}
		}
	}
	w.st.Reindex()
	for _, o := range objs {
		if o.content != nil {
			w.st.objects.Put(&keptObject{hash: o.hash, typ: o.typ, content: o.content})
		}
	}
	return nil
}

func (w *packWriter) canKeep(size int64) bool {
	return size <= maxKeptObject && w.kept+int(size) <= maxKeptBytes
}

// keptObject is an object of an installed pack, in memory.
type keptObject struct {
	hash    plumbing.Hash
	typ     plumbing.ObjectType
	content []byte
}

func (o *keptObject) Hash() plumbing.Hash       { return o.hash }
func (o *keptObject) Type() plumbing.ObjectType { return o.typ }
func (o *keptObject) Size() int64               { return int64(len(o.content)) }

// go-git sets type and size, and writes, only on objects it builds; a
// stored object's are its content's.
func (o *keptObject) SetType(plumbing.ObjectType) {}
func (o *keptObject) SetSize(int64)               {}
func (o *keptObject) Writer() (io.WriteCloser, error) {
	return nil, errors.New("git: a stored object is read-only")
}

func (o *keptObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.content)), nil
}
