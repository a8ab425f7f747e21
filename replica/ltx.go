package replica

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/superfly/ltx"
)

// A restore reads Litestream's LTX files (github.com/superfly/ltx) from the
// bucket itself and writes the database, the way `litestream restore`
// v0.5.18 does (replica.go's CalcRestorePlan and Restore), without a
// process or a SQLite of its own: the plan picks the newest snapshot
// (level 9) before the target, then from levels 8 to 0 the file that
// extends the transactions covered furthest, until the target. Each file's
// pages go to their place in the database in plan order (later files'
// pages replace earlier ones', as Litestream's compaction of the plan
// does), every file's CRC-64 is checked, and the database is cut to the
// last file's page count.

// ErrDamaged: an LTX file of the replica does not decode or fails its
// checksum (a truncated or corrupted object), or the plan's files do not
// fit together.
var ErrDamaged = errors.New("damaged LTX file in the replica")

// errTxNotAvailable: no plan reaches the target (Litestream's
// ErrTxNotAvailable).
var errTxNotAvailable = errors.New("no LTX files reach the transaction asked for")

const (
	// snapshotLevel is Litestream's SnapshotLevel.
	snapshotLevel = 9
	// metadataTimestamp is the object metadata where Litestream's S3
	// client keeps an LTX file's header time (its upload may be later).
	metadataTimestamp = "litestream-timestamp"
	// headConcurrency is Litestream's DefaultMetadataConcurrency.
	headConcurrency = 50
	// openAhead bounds the GETs a restore has open beyond the file it
	// decodes (Litestream opens up to 32 at once): with several restores
	// at once, more kept the object store from the hosts' lease renewals.
	openAhead = 4
	// maxStoreSize bounds the database an LTX header may claim (commit
	// times page size): a damaged one must not make a sparse file of
	// terabytes, nor the page bitset of it.
	maxStoreSize = 256 << 30
	// indexEntryMax is the most an LTX page index entry takes: three
	// uvarints.
	indexEntryMax = 3 * binary.MaxVarintLen64
)

// blockBound is LZ4's CompressBlockBound: the most a compressed page of
// pageSize takes.
func blockBound(pageSize uint32) int64 { return int64(pageSize) + int64(pageSize)/255 + 16 }

// ltxFile is one LTX file of a store's replica: PATH/LEVEL/MIN-MAX.ltx,
// LEVEL four hex digits.
type ltxFile struct {
	level    int
	min, max ltx.TXID
	size     int64
	key      string
	modified time.Time // the object's upload
	created  time.Time // its header's time when read (headTimes), else modified
}

func (f ltxFile) String() string {
	return fmt.Sprintf("level %d %s", f.level, ltx.FormatFilename(f.min, f.max))
}

// ltxFiles lists the LTX files of the store whose replica is at the
// bucket's prefix, by level (0 to 9), each level in transaction order.
func (b bucket) ltxFiles(ctx context.Context) ([][]ltxFile, error) {
	levels := make([][]ltxFile, snapshotLevel+1)
	in := &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: aws.String(b.prefix)}
	for p := s3.NewListObjectsV2Paginator(b.client, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing %s/%s: %w", b.name, b.prefix, err)
		}
		for _, obj := range page.Contents {
			key := aws.ToString(obj.Key)
			dir, name := path.Split(strings.TrimPrefix(key, b.prefix))
			level, err := strconv.ParseUint(strings.TrimSuffix(dir, "/"), 16, 8)
			if err != nil || len(dir) != 5 || level > snapshotLevel {
				continue
			}
			min, max, err := ltx.ParseFilename(name)
			if err != nil {
				continue
			}
			m := aws.ToTime(obj.LastModified).UTC()
			levels[level] = append(levels[level], ltxFile{level: int(level), min: min, max: max,
				size: aws.ToInt64(obj.Size), key: key, modified: m, created: m})
		}
	}
	for _, l := range levels {
		slices.SortFunc(l, func(a, b ltxFile) int {
			return cmp.Or(cmp.Compare(a.min, b.min), cmp.Compare(a.max, b.max))
		})
	}
	return levels, nil
}

// headTimes sets each file's created to the header time Litestream keeps
// in the object's metadata (a timestamp restore needs it: a compacted
// file is uploaded long after the transactions it holds), as Litestream's
// restore reads it, a HEAD each.
func (b bucket) headTimes(ctx context.Context, levels [][]ltxFile) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, headConcurrency)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, l := range levels {
		for i := range l {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				break
			}
			wg.Go(func() {
				defer func() { <-sem }()
				out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.name, Key: &l[i].key})
				if err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("reading the time of %s: %w", l[i].key, err)
						cancel()
					}
					mu.Unlock()
					return
				}
				if t, err := time.Parse(time.RFC3339Nano, out.Metadata[metadataTimestamp]); err == nil {
					l[i].created = t.UTC()
				}
			})
		}
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

// restorePlan is Litestream's CalcRestorePlan over levels: the files that
// restore the store to transaction txid (0: any), or to the newest
// transaction created before at (zero: any), in the order to apply them.
func restorePlan(levels [][]ltxFile, txid ltx.TXID, at time.Time) ([]ltxFile, error) {
	eligible := func(f ltxFile) bool {
		return (txid == 0 || f.max <= txid) && (at.IsZero() || f.created.Before(at))
	}
	var plan []ltxFile
	for _, f := range levels[snapshotLevel] {
		if eligible(f) {
			plan = plan[:0]
			plan = append(plan, f)
		}
	}
	var covered ltx.TXID
	if len(plan) > 0 {
		covered = plan[0].max
	}
	if txid != 0 && covered >= txid {
		return plan, nil
	}
	cursors := make([]*planCursor, 0, snapshotLevel)
	for level := snapshotLevel - 1; level >= 0; level-- {
		cursors = append(cursors, &planCursor{files: levels[level]})
	}
	for {
		var next *planCursor
		for _, c := range cursors {
			c.refresh(covered, eligible)
			if c.candidate != nil && (next == nil || betterCandidate(*next.candidate, *c.candidate)) {
				next = c
			}
		}
		if next == nil {
			break
		}
		plan = append(plan, *next.candidate)
		covered = next.candidate.max
		next.candidate = nil
		if txid != 0 && covered >= txid {
			break
		}
	}
	if len(plan) > 0 && txid == 0 && at.IsZero() {
		// Files beyond a gap: the newest state is not restorable.
		for _, c := range cursors {
			if c.i < len(c.files) && c.files[c.i].min > covered+1 {
				return nil, fmt.Errorf("%w: non-contiguous LTX files: have up to %s but %s starts at %s", ErrDamaged, covered, c.files[c.i], c.files[c.i].min)
			}
		}
	}
	if len(plan) == 0 || (txid != 0 && covered < txid) {
		return nil, errTxNotAvailable
	}
	return plan, nil
}

// planCursor walks one level's files for restorePlan (Litestream's
// restoreLevelCursor).
type planCursor struct {
	files     []ltxFile
	i         int      // the next file not yet looked at
	candidate *ltxFile // the best file seen that extends covered
}

// refresh looks at every file that could follow covered, keeping the best.
func (c *planCursor) refresh(covered ltx.TXID, eligible func(ltxFile) bool) {
	if c.candidate != nil && c.candidate.max <= covered {
		c.candidate = nil
	}
	for ; c.i < len(c.files) && c.files[c.i].min <= covered+1; c.i++ {
		f := &c.files[c.i]
		if f.max <= covered || !eligible(*f) {
			continue
		}
		if c.candidate == nil || betterCandidate(*c.candidate, *f) {
			c.candidate = f
		}
	}
}

// betterCandidate is Litestream's restoreCandidateBetter: next reaches
// further, or as far from earlier, or from a higher level, or earlier.
func betterCandidate(cur, next ltxFile) bool {
	switch {
	case next.max != cur.max:
		return next.max > cur.max
	case next.min != cur.min:
		return next.min < cur.min
	case next.level != cur.level:
		return next.level > cur.level
	}
	return next.created.Before(cur.created)
}

// applyPlan writes the database that plan restores to the new file out
// (mode 0600) and syncs it. A file of the plan gone meanwhile (compacted
// away by a live replicator) gives an error that is fs.ErrNotExist.
func applyPlan(ctx context.Context, b bucket, plan []ltxFile, out string) (err error) {
	f, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	slots, done := b.openAll(ctx, plan)
	next := 0
	defer func() {
		cancel()
		for _, slot := range slots[next:] { // opened ahead, unread
			if r := <-slot; r.body != nil {
				r.body.Close()
			}
		}
	}()
	db := dbWriter{f: f}
	for _, lf := range plan {
		r := <-slots[next]
		next++
		if r.err != nil {
			return r.err
		}
		err := db.apply(lf, r.body)
		r.body.Close()
		done()
		if err != nil {
			return err
		}
	}
	if err := db.finish(); err != nil {
		return err
	}
	return f.Sync()
}

type openedLTX struct {
	body io.ReadCloser
	err  error
}

// openAll GETs the files of plan, up to openAhead at once ahead of the
// reader, each into its slot (every slot gets one, an error once ctx is
// done). The reader calls done after each body it closed.
func (b bucket) openAll(ctx context.Context, plan []ltxFile) (slots []chan openedLTX, done func()) {
	slots = make([]chan openedLTX, len(plan))
	for i := range slots {
		slots[i] = make(chan openedLTX, 1)
	}
	sem := make(chan struct{}, openAhead)
	go func() {
		for i, lf := range plan {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				for _, slot := range slots[i:] {
					slot <- openedLTX{err: ctx.Err()}
				}
				return
			}
			go func() {
				o, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.name, Key: &lf.key})
				var ae smithy.APIError
				switch {
				case errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound"):
					slots[i] <- openedLTX{err: fmt.Errorf("%s: %w: %w", lf.key, fs.ErrNotExist, err)}
				case err != nil:
					slots[i] <- openedLTX{err: fmt.Errorf("reading %s: %w", lf.key, err)}
				default:
					slots[i] <- openedLTX{body: o.Body}
				}
			}()
		}
	}()
	return slots, func() { <-sem }
}

// dbWriter puts the pages of a plan's files in their place.
type dbWriter struct {
	f        *os.File
	pageSize uint32
	last     ltx.Header
	lastTr   ltx.Trailer
	written  []uint64 // bitset by page number - 1
	data     []byte
}

// apply writes the pages of LTX file lf, read from body (lf.size bytes,
// no more read).
func (w *dbWriter) apply(lf ltxFile, body io.Reader) (err error) {
	damaged := func(err error) error { return fmt.Errorf("%w %s (%s): %w", ErrDamaged, lf.key, lf, err) }
	lim := &io.LimitedReader{R: body, N: lf.size}
	rd := &errReader{r: lim}
	br := bufio.NewReaderSize(rd, 1<<20)
	dec := ltx.NewDecoder(br)
	// ltx v0.5.2's decoder panics on some damaged files (Close, on one cut
	// a few bytes after its pages): that file is damaged, not the host.
	defer func() {
		if p := recover(); p != nil {
			err = damaged(fmt.Errorf("the LTX decoder panicked: %v", p))
		}
	}()
	// A read of the object that failed is that error, not damage.
	fail := func(err error) error {
		if rd.err != nil && !errors.Is(rd.err, io.EOF) {
			return fmt.Errorf("reading %s: %w", lf.key, rd.err)
		}
		return damaged(err)
	}
	if err := dec.DecodeHeader(); err != nil {
		return fail(fmt.Errorf("header: %w", err))
	}
	hdr := dec.Header()
	bound := blockBound(hdr.PageSize)
	// The most an object of commit pages takes: each page compressed
	// at worst, with its header, size and index entry.
	maxSize := ltx.HeaderSize + int64(hdr.Commit)*(ltx.PageHeaderSize+4+bound+indexEntryMax) + ltx.PageHeaderSize + 1 + 8 + ltx.TrailerSize
	switch {
	case hdr.MinTXID != lf.min || hdr.MaxTXID != lf.max:
		return damaged(fmt.Errorf("its header holds transactions %s-%s", hdr.MinTXID, hdr.MaxTXID))
	case int64(hdr.Commit)*int64(hdr.PageSize) > maxStoreSize:
		return damaged(fmt.Errorf("its header claims a database of %d pages of %d bytes, above %d GiB", hdr.Commit, hdr.PageSize, maxStoreSize>>30))
	case lf.size > maxSize:
		return damaged(fmt.Errorf("%d bytes, above the %d that %d pages can take", lf.size, maxSize, hdr.Commit))
	case w.pageSize == 0 && hdr.MinTXID != 1:
		return damaged(errors.New("the plan starts with a file that is no snapshot"))
	case w.pageSize != 0 && hdr.PageSize != w.pageSize:
		return damaged(fmt.Errorf("page size %d after %d", hdr.PageSize, w.pageSize))
	case w.pageSize != 0 && !ltx.IsContiguous(w.last.MaxTXID, hdr.MinTXID, hdr.MaxTXID):
		return damaged(fmt.Errorf("does not follow transaction %s", w.last.MaxTXID))
	}
	if w.pageSize == 0 {
		w.pageSize = hdr.PageSize
		w.data = make([]byte, hdr.PageSize)
	}
	lock := hdr.LockPgno()
	var ph ltx.PageHeader
	for {
		// The decoder allocates a page's compressed size as the file
		// gives it: look at it first.
		if b, err := br.Peek(ltx.PageHeaderSize + 4); err == nil {
			pgno, flags, size := binary.BigEndian.Uint32(b), binary.BigEndian.Uint16(b[4:]), binary.BigEndian.Uint32(b[ltx.PageHeaderSize:])
			if pgno != 0 && flags&ltx.PageHeaderFlagSize != 0 && int64(size) > bound {
				return damaged(fmt.Errorf("page %d: %d compressed bytes, above the %d a page of %d can take", pgno, size, bound, hdr.PageSize))
			}
		}
		err := dec.DecodePage(&ph, w.data)
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fail(fmt.Errorf("page: %w", err))
		}
		if ph.Pgno > hdr.Commit {
			return damaged(fmt.Errorf("page %d beyond the database's %d", ph.Pgno, hdr.Commit))
		}
		if ph.Pgno == lock {
			continue // SQLite never writes it; it stays zero
		}
		if _, err := w.f.WriteAt(w.data, int64(ph.Pgno-1)*int64(w.pageSize)); err != nil {
			return err
		}
		i := ph.Pgno - 1
		if n := int(i/64) + 1; n > len(w.written) {
			w.written = append(w.written, make([]uint64, n-len(w.written))...)
		}
		w.written[i/64] |= 1 << (i % 64)
	}
	// What follows is the page index and the trailer, which the decoder
	// reads whole into memory: no more than the pages' index can take.
	lim.N = min(lim.N, int64(dec.PageN())*indexEntryMax+1+8+ltx.TrailerSize)
	if err := dec.Close(); err != nil {
		return fail(err)
	}
	w.last, w.lastTr = hdr, dec.Trailer()
	return nil
}

// wrote reports whether a file wrote page pgno.
func (w *dbWriter) wrote(pgno uint32) bool {
	i := pgno - 1
	return int(i/64) < len(w.written) && w.written[i/64]&(1<<(i%64)) != 0
}

// finish cuts the database to the last file's size, checks every page of
// it was written, and, when the files carry the database's checksum
// (Litestream 0.5.18's do not), compares it.
func (w *dbWriter) finish() error {
	if w.pageSize == 0 {
		return fmt.Errorf("%w: an empty plan", ErrDamaged)
	}
	commit := w.last.Commit
	if err := w.f.Truncate(int64(commit) * int64(w.pageSize)); err != nil {
		return err
	}
	lock := w.last.LockPgno()
	for pgno := uint32(1); pgno <= commit; pgno++ {
		if pgno != lock && !w.wrote(pgno) {
			return fmt.Errorf("%w: page %d of %d is in none of the files up to transaction %s", ErrDamaged, pgno, commit, w.last.MaxTXID)
		}
	}
	if w.last.NoChecksum() {
		return nil
	}
	sum, err := dbChecksum(w.f, w.pageSize, commit)
	if err != nil {
		return err
	}
	if sum != w.lastTr.PostApplyChecksum {
		return fmt.Errorf("%w: the restored database's checksum is %s, transaction %s's %s", ErrDamaged, sum, w.last.MaxTXID, w.lastTr.PostApplyChecksum)
	}
	return nil
}

// dbChecksum is LTX's rolling checksum of the database in f: its pages'
// CRC-64s XORed, the lock page left out.
func dbChecksum(f *os.File, pageSize, commit uint32) (ltx.Checksum, error) {
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, int64(commit)*int64(pageSize)), 1<<20)
	data := make([]byte, pageSize)
	h := ltx.NewHasher()
	sum := ltx.ChecksumFlag
	lock := ltx.LockPgno(pageSize)
	for pgno := uint32(1); pgno <= commit; pgno++ {
		if _, err := io.ReadFull(r, data); err != nil {
			return 0, err
		}
		if pgno != lock {
			sum = ltx.ChecksumFlag | (sum ^ ltx.ChecksumPageWithHasher(h, pgno, data))
		}
	}
	return sum, nil
}

// errReader remembers the error its reader gave.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.err = err
	}
	return n, err
}
