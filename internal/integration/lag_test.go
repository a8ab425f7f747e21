//go:build integration

package integration

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/superfly/ltx"

	"github.com/sqlfs/sqlfs/internal/s3test"
	"github.com/sqlfs/sqlfs/replica"
)

// uploadWatch lists a store's level-0 LTX objects (Litestream uploads one
// per transaction it reads from the WAL) every few milliseconds and notes
// when each first appeared: the object store took it after the listing
// before was sent and before the listing that showed it returned.
type uploadWatch struct {
	client         replica.S3API
	bucket, prefix string // prefix: PATH/0000/
	every          time.Duration

	mu   sync.Mutex
	seen map[ltx.TXID]upload
	last string // the last key listed, where the next listing starts
	stop chan struct{}
	done chan struct{}
}

// upload brackets when the object store took one LTX object.
type upload struct {
	key       string
	after, by time.Time
}

func watchUploads(t *testing.T, s3srv *s3test.Server, rawURL string, every time.Duration) *uploadWatch {
	t.Helper()
	u, err := replica.ParseURL(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	pu, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	w := &uploadWatch{
		client: replica.NewS3Client(u, replica.Credentials{AccessKeyID: s3srv.AccessKey, SecretAccessKey: s3srv.SecretKey}),
		bucket: pu.Host, prefix: strings.Trim(pu.Path, "/") + "/0000/",
		every: every, seen: map[ltx.TXID]upload{}, stop: make(chan struct{}), done: make(chan struct{}),
	}
	if err := w.poll(t.Context(), time.Time{}); err != nil { // what was there before
		t.Fatal(err)
	}
	go w.run(t)
	t.Cleanup(w.Stop)
	return w
}

func (w *uploadWatch) run(t *testing.T) {
	defer close(w.done)
	sent := time.Now()
	for {
		select {
		case <-w.stop:
			return
		case <-time.After(w.every):
		}
		next := time.Now()
		if err := w.poll(t.Context(), sent); err != nil && t.Context().Err() == nil {
			t.Errorf("listing the replica's uploads: %v", err)
			return
		}
		sent = next
	}
}

// poll lists the objects after the last one seen; those it finds were
// taken after prev (the previous listing's start).
func (w *uploadWatch) poll(ctx context.Context, prev time.Time) error {
	in := &s3.ListObjectsV2Input{Bucket: &w.bucket, Prefix: &w.prefix}
	if w.last != "" {
		in.StartAfter = aws.String(w.last)
	}
	var keys []string
	for p := s3.NewListObjectsV2Paginator(w.client, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	by := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		min, max, err := ltx.ParseFilename(path.Base(k))
		if err != nil || min != max {
			continue // level 0 holds one transaction a file
		}
		if _, ok := w.seen[max]; !ok {
			w.seen[max] = upload{key: k, after: prev, by: by}
		}
		w.last = k // listings are in key order
	}
	return nil
}

// Stop ends the polling.
func (w *uploadWatch) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// firstHeld rebuilds the store from its level-0 objects, one transaction
// at a time in order, and returns for each load/N file the transaction
// that first held it, read from the rebuilt store itself: exactly which
// upload first made write N restorable.
func (w *uploadWatch) firstHeld(t *testing.T, want int) map[int]ltx.TXID {
	t.Helper()
	w.Stop()
	if err := w.poll(t.Context(), time.Now()); err != nil {
		t.Fatal(err)
	}
	txids := make([]ltx.TXID, 0, len(w.seen))
	for tx := range w.seen {
		txids = append(txids, tx)
	}
	slices.Sort(txids)
	if len(txids) == 0 || txids[0] != 1 {
		t.Fatalf("the replica's level 0 does not start at transaction 1 (%d objects)", len(txids))
	}
	dbPath := filepath.Join(t.TempDir(), "rebuilt.sqlfs")
	f, err := os.Create(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first := make(map[int]ltx.TXID, want)
	var page []byte
	for i, tx := range txids {
		if i > 0 && tx != txids[i-1]+1 {
			t.Fatalf("level 0 of the replica skips from transaction %s to %s", txids[i-1], tx)
		}
		out, err := w.client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: &w.bucket, Key: aws.String(w.seen[tx].key)})
		if err != nil {
			t.Fatal(err)
		}
		dec := ltx.NewDecoder(bufio.NewReader(out.Body))
		if err := dec.DecodeHeader(); err != nil {
			t.Fatalf("%s: %v", w.seen[tx].key, err)
		}
		hdr := dec.Header()
		if page == nil {
			page = make([]byte, hdr.PageSize)
		}
		for {
			var ph ltx.PageHeader
			err := dec.DecodePage(&ph, page)
			if errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", w.seen[tx].key, err)
			}
			if _, err := f.WriteAt(page, int64(ph.Pgno-1)*int64(hdr.PageSize)); err != nil {
				t.Fatal(err)
			}
		}
		if err := dec.Close(); err != nil {
			t.Fatalf("%s: %v", w.seen[tx].key, err)
		}
		out.Body.Close()
		if err := f.Truncate(int64(hdr.Commit) * int64(hdr.PageSize)); err != nil {
			t.Fatal(err)
		}
		names, err := loadNames(dbPath)
		if err != nil {
			t.Fatalf("the store rebuilt to transaction %s: %v", tx, err)
		}
		for _, n := range names {
			if _, ok := first[n]; !ok {
				first[n] = tx
			}
		}
	}
	return first
}

// loadNames reads the load/N names of the store at p (opened immutable:
// no lock, no WAL, nothing written).
func loadNames(p string) ([]int, error) {
	db, err := sql.Open("sqlite3", "file:"+p+"?mode=ro&immutable=1")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT d.name FROM dentries d JOIN dentries l ON d.parent = l.ino WHERE l.parent = 1 AND l.name = 'load'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		if n, err := strconv.Atoi(name); err == nil {
			out = append(out, n)
		}
	}
	return out, rows.Err()
}

// lagBounds is the lag of each acknowledged write, from its commit (after
// the write was sent, before its answer: a tool's write answers after its
// durable commit) to the object store first holding it (after one
// listing, before the next returned): hi bounds it from above, lo from
// below.
func lagBounds(t *testing.T, acks []ack, first map[int]ltx.TXID, w *uploadWatch) (lo, hi []float64) {
	t.Helper()
	for _, a := range acks {
		tx, ok := first[a.n]
		if !ok {
			t.Fatalf("load/%d, acknowledged, is in no upload of the replica", a.n)
		}
		u := w.seen[tx]
		hi = append(hi, u.by.Sub(a.sent).Seconds())
		lo = append(lo, math.Max(0, u.after.Sub(a.at).Seconds()))
	}
	slices.Sort(lo)
	slices.Sort(hi)
	return lo, hi
}

// quantileOf is the q quantile of sorted (nearest rank).
func quantileOf(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// longestGap is the longest time between two uploads first seen during
// [from, to]: a stall of litestream's uploads or of the object store.
func (w *uploadWatch) longestGap(from, to time.Time) time.Duration {
	var ts []time.Time
	for _, u := range w.seen {
		if !u.by.Before(from) && !u.by.After(to) {
			ts = append(ts, u.by)
		}
	}
	slices.SortFunc(ts, time.Time.Compare)
	var gap time.Duration
	for i := 1; i < len(ts); i++ {
		gap = max(gap, ts[i].Sub(ts[i-1]))
	}
	return gap
}

func formatLag(lo, hi []float64) string {
	var b strings.Builder
	for _, q := range []float64{0.5, 0.9, 0.99, 1} {
		fmt.Fprintf(&b, " p%g %.3f-%.3f s", q*100, quantileOf(lo, q), quantileOf(hi, q))
	}
	return strings.TrimSpace(b.String())
}
