//go:build integration

package replica

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/s3test"
	"github.com/sqlfs/sqlfs/internal/testenv"
)

// TestRestoreThroughput replicates 16 stores of 10 MiB (random bytes) to
// the real S3 server, then restores them, 8 at a time (SQLFS_RESTORE_N),
// in process (Restore, with its check, as a host does) and with
// `litestream restore` processes (no check), alternating, three rounds
// each: restores a second, and single 10 MiB restores' medians.
func TestRestoreThroughput(t *testing.T) {
	bin := testenv.Tool(t, "litestream")
	s := s3test.Start(t, s3test.Options{})
	keys := Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}
	n := 8
	if v, err := strconv.Atoi(os.Getenv("SQLFS_RESTORE_N")); err == nil && v > 0 {
		n = v
	}
	const stores = 16
	ctx := context.Background()
	var urls []Options
	buf := make([]byte, 1<<20)
	for i := range stores {
		u, err := ParseURL(s.URL(fmt.Sprintf("tp/ws%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		o := options(t, u)
		o.Credentials = keys
		store := filepath.Join(t.TempDir(), "ws.sqlfs")
		f := openFS(t, store)
		sup := startStore(t, store, o)
		for j := range 10 {
			rand.Read(buf)
			if err := f.WriteFile(fmt.Sprintf("/f%d", j), buf, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := sup.Sync(ctx, store); err != nil {
			t.Fatal(err)
		}
		sup.Close(ctx)
		urls = append(urls, o)
	}
	inProcess := func(o Options) time.Duration {
		start := time.Now()
		if err := Restore(ctx, o, filepath.Join(t.TempDir(), "r.sqlfs"), time.Time{}); err != nil {
			t.Error(err)
		}
		return time.Since(start)
	}
	child := func(o Options) time.Duration {
		out := filepath.Join(t.TempDir(), "r.db")
		cmd := exec.Command(bin, "restore", "-o", out, o.URL.String())
		cmd.Env = append(os.Environ(), o.Credentials.env()...)
		start := time.Now()
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("litestream restore: %v: %s", err, b)
		}
		d := time.Since(start)
		os.Remove(out)
		return d
	}
	parallel := func(restore func(Options) time.Duration) float64 {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range n {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < stores; i = next.Add(1) - 1 {
					restore(urls[i])
				}
			})
		}
		wg.Wait()
		return stores / time.Since(start).Seconds()
	}
	var oneOurs, oneTheirs []time.Duration
	var rateOurs, rateTheirs []float64
	for round := range 3 {
		oneOurs = append(oneOurs, inProcess(urls[round]))
		oneTheirs = append(oneTheirs, child(urls[round]))
		rateOurs = append(rateOurs, parallel(inProcess))
		rateTheirs = append(rateTheirs, parallel(child))
	}
	med := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	medf := func(d []float64) float64 {
		slices.Sort(d)
		return d[len(d)/2]
	}
	t.Logf("REPORT 10 MiB restore, median of 3 alternating: in process (with check) %.3f s, litestream restore (no check) %.3f s, ratio %.2f; load average %.2f",
		med(oneOurs).Seconds(), med(oneTheirs).Seconds(), med(oneOurs).Seconds()/med(oneTheirs).Seconds(), testenv.LoadAverage())
	t.Logf("REPORT %d stores of 10 MiB, %d at a time, median of 3 alternating: in process %.1f restores/s %v, litestream %.1f restores/s %v, ratio %.2f; load average %.2f",
		stores, n, medf(rateOurs), rateOurs, medf(rateTheirs), rateTheirs, medf(rateOurs)/medf(rateTheirs), testenv.LoadAverage())
}
