package replica

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// TestWALStaysBounded writes 160 MiB while litestream owns the WAL
// checkpoints (the store runs none of its own), sampling the WAL file.
// Litestream copies the WAL into the database as it ships it (where a WAL
// nobody checkpoints would hold all 160 MiB for good); it must read every
// frame before a checkpoint may drop it, so while it reads slower than the
// writer writes, the WAL grows by the difference (the peaks measured are
// in the README).
// SQLFS_WAL_TEST_MIB=N writes N MiB; SQLFS_WAL_TEST_OWN_KEEPER=1 measures
// sqlstore's own WAL keeper without replication instead.
func TestWALStaysBounded(t *testing.T) {
	ctx := context.Background()
	s3 := newS3(t)
	o := options(t, s3.url(t, "wal"))
	store := filepath.Join(t.TempDir(), "ws.sqlfs")
	total, file := 160<<20, 1<<20
	if mib, err := strconv.Atoi(os.Getenv("SQLFS_WAL_TEST_MIB")); err == nil {
		total = mib << 20 // to measure longer runs
	}
	external := os.Getenv("SQLFS_WAL_TEST_OWN_KEEPER") == ""
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if fi, err := os.Stat(store + "-wal"); err == nil && fi.Size() > peak.Load() {
				peak.Store(fi.Size())
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	f, err := sfs.Open(ctx, store, sfs.Options{ExternalWALCheckpoints: external})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sup *Supervisor
	if external {
		sup = startStore(t, store, o)
	}
	// Compressible data: the WAL holds it raw, the replica compressed.
	start := time.Now()
	for i := range total / file {
		data := bytes.Repeat([]byte(fmt.Sprintf("%08d", i)), file/8)
		if err := f.WriteFile(fmt.Sprintf("f%03d", i), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if i%8 == 7 {
			if err := f.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	wrote := time.Since(start)
	if sup != nil {
		if err := sup.Sync(ctx, store); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	<-sampled
	// Checkpoints copied the WAL into the database file, as they went.
	var db int64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if fi, err := os.Stat(store); err == nil {
			db = fi.Size()
		}
		if db >= int64(total/2) || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("wrote %d MiB in %s (litestream checkpoints: %v); WAL file peak %.1f MiB; database %.1f MiB",
		total>>20, wrote.Round(time.Millisecond), external, float64(peak.Load())/(1<<20), float64(db)/(1<<20))
	if db < int64(total/2) {
		t.Fatalf("the database holds %d bytes of the %d written: nobody checkpoints the WAL", db, total)
	}
	if peak.Load() == 0 {
		t.Fatal("no WAL seen")
	}
}
