package replica

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/superfly/ltx"
)

// history is a database's pages after each transaction (states[txid],
// states[0] empty) and the pages each transaction wrote.
type history struct {
	pageSize uint32
	states   [][][]byte
	changed  []map[uint32]bool
}

// newHistory makes n random transactions: each rewrites some pages and
// may grow or shrink the database (the pages it grows by are written).
func newHistory(seed uint64, n int) *history {
	r := rand.New(rand.NewPCG(seed, 0))
	h := &history{pageSize: 512, states: [][][]byte{nil}, changed: []map[uint32]bool{nil}}
	page := func() []byte {
		b := make([]byte, h.pageSize)
		for i := range b {
			b[i] = byte(r.IntN(4)) // compressible, like real pages
		}
		b[r.IntN(len(b))] = byte(r.Uint32())
		return b
	}
	for tx := 1; tx <= n; tx++ {
		prev := h.states[tx-1]
		commit := max(2, len(prev)+r.IntN(9)-3)
		if tx == 1 {
			commit = 8 + r.IntN(8)
		}
		state := slices.Clone(prev[:min(len(prev), commit)])
		ch := map[uint32]bool{}
		for len(state) < commit {
			state = append(state, page())
			ch[uint32(len(state))] = true
		}
		for range r.IntN(commit) + 1 {
			p := r.IntN(commit)
			state[p] = page()
			ch[uint32(p+1)] = true
		}
		h.states = append(h.states, state)
		h.changed = append(h.changed, ch)
	}
	return h
}

func (h *history) db(tx ltx.TXID) []byte { return bytes.Join(h.states[tx], nil) }

func (h *history) checksum(tx ltx.TXID) ltx.Checksum {
	sum := ltx.ChecksumFlag
	for i, p := range h.states[tx] {
		sum = ltx.ChecksumFlag | (sum ^ ltx.ChecksumPage(uint32(i+1), p))
	}
	return sum
}

// file encodes the LTX file of transactions min to max: every page of the
// database for a snapshot (min 1), else those the transactions wrote
// that the database still has at max. withSums: the database checksums
// are in it (Litestream 0.5.18 writes none).
func (h *history) file(t *testing.T, min, max ltx.TXID, withSums bool) []byte {
	t.Helper()
	return h.encode(t, min, max, withSums, h.checksum(max))
}

// encode is file with post as the database's checksum after it.
func (h *history) encode(t *testing.T, min, max ltx.TXID, withSums bool, post ltx.Checksum) []byte {
	t.Helper()
	state := h.states[max]
	hdr := ltx.Header{Version: ltx.Version, PageSize: h.pageSize, Commit: uint32(len(state)), MinTXID: min, MaxTXID: max,
		Timestamp: time.Unix(1_700_000_000+int64(max), 0).UnixMilli()}
	if !withSums {
		hdr.Flags = ltx.HeaderFlagNoChecksum
	} else if min > 1 {
		hdr.PreApplyChecksum = h.checksum(min - 1)
	}
	pages := map[uint32]bool{}
	for tx := min; tx <= max; tx++ {
		for p := range h.changed[tx] {
			if int(p) <= len(state) { // a compaction drops those past the end
				pages[p] = true
			}
		}
	}
	if min == 1 {
		pages = map[uint32]bool{}
		for p := range len(state) {
			pages[uint32(p+1)] = true
		}
	}
	if !withSums {
		post = 0
	}
	return writeLTX(t, hdr, slices.Sorted(func(yield func(uint32) bool) {
		for p := range pages {
			if !yield(p) {
				return
			}
		}
	}), func(p uint32) []byte { return state[p-1] }, post)
}

// writeLTX encodes an LTX file of hdr with pages pgnos, post as its
// database checksum when not 0.
func writeLTX(t *testing.T, hdr ltx.Header, pgnos []uint32, page func(uint32) []byte, post ltx.Checksum) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := ltx.NewEncoder(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.EncodeHeader(hdr); err != nil {
		t.Fatal(err)
	}
	for _, p := range pgnos {
		if err := enc.EncodePage(ltx.PageHeader{Pgno: p}, page(p)); err != nil {
			t.Fatal(err)
		}
	}
	if post != 0 {
		enc.SetPostApplyChecksum(post)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ltxReplica is a store's replica in the fake S3, written by the test.
type ltxReplica struct {
	o      Options
	client *s3.Client
	bucket bucket
}

func newLTXReplica(t *testing.T, prefix string) *ltxReplica {
	srv := newS3(t)
	u := srv.url(t, prefix)
	client := NewS3Client(u, testKeys).(*s3.Client)
	o := Options{URL: u, Credentials: testKeys, client: client}
	o.defaults()
	return &ltxReplica{o: o, client: client, bucket: newBucket(client, u)}
}

func (r *ltxReplica) key(level int, min, max ltx.TXID) string {
	return fmt.Sprintf("%s%04x/%s", r.bucket.prefix, level, ltx.FormatFilename(min, max))
}

func (r *ltxReplica) put(t *testing.T, level int, min, max ltx.TXID, b []byte) {
	t.Helper()
	_, err := r.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &r.bucket.name, Key: aws.String(r.key(level, min, max)), Body: bytes.NewReader(b)})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *ltxReplica) del(t *testing.T, level int, min, max ltx.TXID) {
	t.Helper()
	if _, err := r.client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: &r.bucket.name, Key: aws.String(r.key(level, min, max))}); err != nil {
		t.Fatal(err)
	}
}

// layout writes h's 30 transactions as Litestream lays them out: L0 one
// file each, L1 five at a time, L2 ten, snapshots at 10 and 20.
func (r *ltxReplica) layout(t *testing.T, h *history, withSums bool) {
	for tx := ltx.TXID(1); tx <= 30; tx++ {
		r.put(t, 0, tx, tx, h.file(t, tx, tx, withSums))
	}
	for tx := ltx.TXID(1); tx <= 30; tx += 5 {
		r.put(t, 1, tx, tx+4, h.file(t, tx, tx+4, withSums))
	}
	for tx := ltx.TXID(1); tx <= 20; tx += 10 {
		r.put(t, 2, tx, tx+9, h.file(t, tx, tx+9, withSums))
	}
	for _, tx := range []ltx.TXID{10, 20} {
		r.put(t, snapshotLevel, 1, tx, h.file(t, 1, tx, withSums))
	}
}

// restore restores r at transaction txid (0: the newest) into a new file.
func (r *ltxReplica) restore(t *testing.T, txid ltx.TXID) ([]byte, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "db")
	o := r.o
	o.txid = uint64(txid)
	if err := restoreTo(context.Background(), o, out, time.Time{}); err != nil {
		if _, serr := os.Stat(out); serr == nil {
			t.Errorf("a failed restore left %s", out)
		}
		return nil, err
	}
	return os.ReadFile(out)
}

// TestLTXRestoreEveryTransaction restores replicas of random histories at
// every transaction and the newest, from snapshots, compacted levels and
// level 0 files, with and without database checksums, and compares each
// byte with the database the history had then.
func TestLTXRestoreEveryTransaction(t *testing.T) {
	for _, tc := range []struct {
		name     string
		seed     uint64
		withSums bool
		// pruned: level 0 files 1 to 12 gone (retention), so only 5, 10
		// (level 1, the snapshot) and from 15 on restore exactly.
		pruned bool
	}{
		{"no checksums", 1, false, false},
		{"checksums", 2, true, false},
		{"no checksums 2", 3, false, false},
		{"pruned level 0", 4, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHistory(tc.seed, 30)
			r := newLTXReplica(t, "ws")
			r.layout(t, h, tc.withSums)
			if tc.pruned {
				for tx := ltx.TXID(1); tx <= 12; tx++ {
					r.del(t, 0, tx, tx)
				}
			}
			for tx := ltx.TXID(0); tx <= 30; tx++ {
				got, err := r.restore(t, tx)
				want := tx
				if tx == 0 {
					want = 30
				}
				unreachable := tc.pruned && tx > 0 && tx < 15 && tx%5 != 0
				switch {
				case unreachable && !errors.Is(err, errTxNotAvailable):
					t.Errorf("txid %d: %v; want %v", tx, err, errTxNotAvailable)
				case unreachable:
				case err != nil:
					t.Errorf("txid %d: %v", tx, err)
				case !bytes.Equal(got, h.db(want)):
					t.Errorf("txid %d: restored %d bytes unlike the %d of the database then", tx, len(got), len(h.db(want)))
				}
			}
		})
	}
}

// TestLTXRestoreDamaged: a corrupted, truncated or missing LTX object, or a
// gap in the files, is a clear error (ErrDamaged), and no store is left.
func TestLTXRestoreDamaged(t *testing.T) {
	h := newHistory(7, 30)
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, r *ltxReplica)
	}{
		{"flipped byte in the snapshot", func(t *testing.T, r *ltxReplica) {
			b := h.file(t, 1, 20, false)
			b[len(b)/2] ^= 0x40
			r.put(t, snapshotLevel, 1, 20, b)
		}},
		{"truncated compacted file", func(t *testing.T, r *ltxReplica) {
			b := h.file(t, 26, 30, false)
			r.put(t, 1, 26, 30, b[:len(b)-30])
		}},
		{"header only", func(t *testing.T, r *ltxReplica) {
			r.put(t, 1, 26, 30, h.file(t, 26, 30, false)[:ltx.HeaderSize])
		}},
		{"empty object", func(t *testing.T, r *ltxReplica) { r.put(t, 1, 26, 30, nil) }},
		{"another file's content under its name", func(t *testing.T, r *ltxReplica) {
			r.put(t, 1, 26, 30, h.file(t, 21, 25, false))
		}},
		{"gap", func(t *testing.T, r *ltxReplica) {
			r.del(t, 1, 21, 25)
			for tx := ltx.TXID(21); tx <= 25; tx++ {
				r.del(t, 0, tx, tx)
			}
		}},
		{"wrong database checksum", func(t *testing.T, r *ltxReplica) {
			// The right pages, another database's checksum after them.
			r.put(t, 1, 26, 30, h.encode(t, 26, 30, true, newHistory(8, 30).checksum(30)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLTXReplica(t, "ws")
			r.layout(t, h, strings.Contains(tc.name, "checksum"))
			tc.damage(t, r)
			if _, err := r.restore(t, 0); !errors.Is(err, ErrDamaged) {
				t.Fatalf("restore: %v; want %v", err, ErrDamaged)
			}
			out := filepath.Join(t.TempDir(), "ws.sqlfs")
			if err := Restore(context.Background(), r.o, out, time.Time{}); !errors.Is(err, ErrDamaged) {
				t.Fatalf("Restore: %v; want %v", err, ErrDamaged)
			}
			if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) > 0 {
				t.Fatalf("a failed Restore left %v", ents)
			}
		})
	}
}

// vanishing deletes the compacted files 21-30 of level 1 at the first GET
// of one of them, after writing level 2's file of those transactions,
// and answers that GET NoSuchKey: a live Litestream compacting while a
// restore reads.
type vanishing struct {
	*s3.Client
	t    *testing.T
	r    *ltxReplica
	h    *history
	once sync.Once
}

func (v *vanishing) GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if aws.ToString(in.Key) == v.r.key(1, 21, 25) {
		v.once.Do(func() {
			v.r.put(v.t, 2, 21, 30, v.h.file(v.t, 21, 30, false))
			v.r.del(v.t, 1, 21, 25)
			v.r.del(v.t, 1, 26, 30)
		})
	}
	return v.Client.GetObject(ctx, in, opts...)
}

// TestLTXRestorePlansAgainWhenAFileGoes: a file of the plan compacted away
// before its GET has the restore plan the same transaction again from
// the files there now.
func TestLTXRestorePlansAgainWhenAFileGoes(t *testing.T) {
	h := newHistory(9, 30)
	r := newLTXReplica(t, "ws")
	r.layout(t, h, false)
	r.o.client = &vanishing{Client: r.client, t: t, r: r, h: h}
	got, err := r.restore(t, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, h.db(30)) {
		t.Fatal("restored database differs from transaction 30's")
	}
}

// TestRestorePlan: the files a restore picks, as Litestream's
// CalcRestorePlan picks them.
func TestRestorePlan(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	f := func(level int, min, max ltx.TXID, sec int) ltxFile {
		return ltxFile{level: level, min: min, max: max, created: t0.Add(time.Duration(sec) * time.Second)}
	}
	levels := func(files ...ltxFile) [][]ltxFile {
		l := make([][]ltxFile, snapshotLevel+1)
		for _, f := range files {
			l[f.level] = append(l[f.level], f)
		}
		return l
	}
	std := levels(
		f(0, 1, 1, 1), f(0, 2, 2, 2), f(0, 3, 3, 3), f(0, 4, 4, 4), f(0, 5, 5, 5), f(0, 6, 6, 6), f(0, 7, 7, 7),
		f(1, 1, 3, 10), f(1, 4, 6, 11),
		f(2, 1, 6, 20),
		f(snapshotLevel, 1, 3, 30),
	)
	for _, tc := range []struct {
		name   string
		levels [][]ltxFile
		txid   ltx.TXID
		at     time.Time
		want   []ltxFile
		err    error
	}{
		{"newest: snapshot, the level reaching furthest, then level 0", std, 0, time.Time{},
			[]ltxFile{f(9, 1, 3, 30), f(2, 1, 6, 20), f(0, 7, 7, 7)}, nil},
		{"transaction 5: no file past it", std, 5, time.Time{},
			[]ltxFile{f(9, 1, 3, 30), f(0, 4, 4, 4), f(0, 5, 5, 5)}, nil},
		{"transaction 3: the snapshot alone", std, 3, time.Time{}, []ltxFile{f(9, 1, 3, 30)}, nil},
		{"before the snapshot and level 2 were written", std, 0, t0.Add(15 * time.Second),
			[]ltxFile{f(1, 1, 3, 10), f(1, 4, 6, 11), f(0, 7, 7, 7)}, nil},
		{"created strictly before at", std, 0, t0.Add(5 * time.Second),
			[]ltxFile{f(0, 1, 1, 1), f(0, 2, 2, 2), f(0, 3, 3, 3), f(0, 4, 4, 4)}, nil},
		{"before anything", std, 0, t0, nil, errTxNotAvailable},
		{"a transaction not there", std, 9, time.Time{}, nil, errTxNotAvailable},
		{"gap", levels(f(0, 1, 1, 1), f(0, 3, 3, 3)), 0, time.Time{}, nil, ErrDamaged},
		{"no snapshot and level 0 pruned", levels(f(0, 5, 5, 5)), 0, time.Time{}, nil, errTxNotAvailable},
		{"the higher level on a tie", levels(f(0, 1, 2, 1), f(1, 1, 2, 9)), 0, time.Time{}, []ltxFile{f(1, 1, 2, 9)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := restorePlan(tc.levels, tc.txid, tc.at)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("error %v; want %v", err, tc.err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("plan %v; want %v", got, tc.want)
			}
		})
	}
}

// encodeLTX is an LTX file of hdr with pages pgnos, each filled with its
// number's low byte.
func encodeLTX(t *testing.T, hdr ltx.Header, pgnos ...uint32) []byte {
	t.Helper()
	hdr.Version, hdr.Flags = ltx.Version, ltx.HeaderFlagNoChecksum
	if hdr.Timestamp == 0 {
		hdr.Timestamp = time.Unix(1_700_000_000, 0).UnixMilli()
	}
	return writeLTX(t, hdr, pgnos, func(p uint32) []byte { return bytes.Repeat([]byte{byte(p)}, int(hdr.PageSize)) }, 0)
}

// applyTo applies body, listed as size bytes, as LTX file min-max to a
// new database in dir: after a snapshot of pageSize when min > 1.
func applyTo(t *testing.T, dir string, pageSize uint32, min, max ltx.TXID, size int64, body io.Reader) (*os.File, error) {
	t.Helper()
	f, err := os.CreateTemp(dir, "db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	w := dbWriter{f: f}
	if min > 1 {
		w.pageSize, w.data, w.last = pageSize, make([]byte, pageSize), ltx.Header{MaxTXID: min - 1}
	}
	lf := ltxFile{level: 0, min: min, max: max, size: size, key: "ws/0000/" + ltx.FormatFilename(min, max)}
	return f, w.apply(lf, body)
}

// TestLTXApplyCut: an LTX file cut anywhere, among others 1 to 8 bytes
// after its end-of-pages marker (where ltx v0.5.2's Decoder.Close
// panics), is ErrDamaged naming the object.
func TestLTXApplyCut(t *testing.T) {
	b := encodeLTX(t, ltx.Header{PageSize: 512, Commit: 1, MinTXID: 1, MaxTXID: 1}, 1)
	dir := t.TempDir()
	for n := range len(b) {
		_, err := applyTo(t, dir, 0, 1, 1, int64(n), bytes.NewReader(b[:n]))
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "ws/0000/") {
			t.Errorf("cut at %d of %d bytes: %v; want %v naming the object", n, len(b), err, ErrDamaged)
		}
	}
	if _, err := applyTo(t, dir, 0, 1, 1, int64(len(b)), bytes.NewReader(b)); err != nil {
		t.Fatalf("whole file: %v", err)
	}
}

// TestLTXApplyHostile: an LTX file whose header or pages claim a huge
// database or page is ErrDamaged, without a huge file or allocation; a
// body longer than its listed size is read only that far.
func TestLTXApplyHostile(t *testing.T) {
	const ps = 4096
	// patch sets the page number of b's first page, or its data size.
	patch := func(b []byte, off int, v uint32) []byte {
		b = slices.Clone(b)
		binary.BigEndian.PutUint32(b[off:], v)
		return b
	}
	small := encodeLTX(t, ltx.Header{PageSize: ps, Commit: 3, MinTXID: 2, MaxTXID: 2}, 2)
	for _, tc := range []struct {
		name   string
		body   []byte
		junk   int64 // zero bytes after body, also listed
		unlist bool  // the junk is not in the listed size
		ok     bool
	}{
		{"page above the commit", patch(small, ltx.HeaderSize, 1<<28), 0, false, false},
		{"huge commit", encodeLTX(t, ltx.Header{PageSize: ps, Commit: 1 << 28, MinTXID: 2, MaxTXID: 2}, 1<<28), 0, false, false},
		{"huge page data size", patch(small, ltx.HeaderSize+ltx.PageHeaderSize, 0xfffffff0), 0, false, false},
		{"256 MiB after the pages", small, 256 << 20, false, false},
		{"256 MiB past the listed size", small, 256 << 20, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := int64(len(tc.body))
			if !tc.unlist {
				size += tc.junk
			}
			body := io.MultiReader(bytes.NewReader(tc.body), io.LimitReader(zeros{}, tc.junk))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			f, err := applyTo(t, t.TempDir(), ps, 2, 2, size, body)
			runtime.ReadMemStats(&after)
			if tc.ok && err != nil {
				t.Errorf("apply: %v", err)
			} else if !tc.ok && !errors.Is(err, ErrDamaged) {
				t.Errorf("apply: %v; want %v", err, ErrDamaged)
			}
			if fi, err := f.Stat(); err != nil {
				t.Fatal(err)
			} else if fi.Size() > 3*ps {
				t.Errorf("the database grew to %d bytes", fi.Size())
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
				t.Errorf("apply allocated %d MiB", n>>20)
			}
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// panicking is an S3 client whose listing panics.
type panicking struct{ *s3.Client }

func (panicking) ListObjectsV2(context.Context, *s3.ListObjectsV2Input, ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	panic("listing")
}

// TestRestorePanicIsAnError: a panic in a restore, niced on a goroutine
// of its own or not, is its error, not the host's end.
func TestRestorePanicIsAnError(t *testing.T) {
	for _, nice := range []int{0, 5} {
		t.Run(fmt.Sprint("nice ", nice), func(t *testing.T) {
			r := newLTXReplica(t, "ws")
			r.o.client, r.o.nice = panicking{r.client}, nice
			out := filepath.Join(t.TempDir(), "ws.sqlfs")
			if err := Restore(context.Background(), r.o, out, time.Time{}); err == nil || !strings.Contains(err.Error(), "listing") {
				t.Fatalf("Restore: %v; want the panic's error", err)
			}
			if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) > 0 {
				t.Fatalf("a failed Restore left %v", ents)
			}
		})
	}
}
