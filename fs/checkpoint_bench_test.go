package fs_test

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// The checkpoint benchmarks run on trees of 1k, 10k and 100k files holding
// SQLFS_CKPT_BYTES of data between them (default 256 MiB; the issue's
// target table is for 1 GiB). Each reports its
// median as p50-ms. Run:
//
//	SQLFS_CKPT_BYTES=1073741824 go test ./fs -run '^$' -bench 'Checkpoint|Restore|Diff|Fork' -benchtime 10x
type ckptTree struct {
	f     *sfs.FS
	store string
	files int
}

func ckptTreeOf(b *testing.B, files int) *ckptTree {
	total := int64(256 << 20)
	if s := os.Getenv("SQLFS_CKPT_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		must(b, err)
		total = n
	}
	store := filepath.Join(b.TempDir(), "ws.db")
	f, err := sfs.Open(b.Context(), store, sfs.Options{NoAudit: true})
	must(b, err)
	b.Cleanup(func() { f.Close() })
	start := time.Now()
	data := patterned(int(total / int64(files)))
	for i := range files {
		if i%1000 == 0 {
			must(b, f.Mkdir(fmt.Sprintf("/d%d", i/1000), 0o755))
		}
		must(b, f.WriteFile(ckptFile(i), data, 0o644))
	}
	must(b, f.Sync(b.Context()))
	// The WAL keeper copies what was built into the database in the
	// background; time the operations once it is done, not beside it.
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, wal := f.Store().FileBytes(); wal == 0 {
			break
		}
	}
	b.Logf("%d files, %d bytes built in %v", files, total, time.Since(start).Round(time.Millisecond))
	return &ckptTree{f: f, store: store, files: files}
}

func ckptFile(i int) string { return fmt.Sprintf("/d%d/f%d", i/1000, i) }

// touch rewrites n files' first bytes.
func (t *ckptTree) touch(b *testing.B, n, round int) {
	for i := range n {
		fl, err := t.f.OpenFile(ckptFile((i*7919+round)%t.files), os.O_RDWR, 0)
		must(b, err)
		_, err = fl.WriteAt([]byte(strconv.Itoa(round)), 0)
		must(b, err)
		must(b, fl.Close())
	}
}

func reportP50(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
}

var ckptSizes = []int{1_000, 10_000, 100_000}

// BenchmarkCheckpoint: a checkpoint of a live tree after one change,
// committed (unsynced) before the clock starts: a file's chunk is 128 KiB
// at 1k files of 1 GiB and 10 KiB at 100k, and writing it is the change's
// cost, not the checkpoint's (whose synced commit still carries it to the
// disk).
func BenchmarkCheckpoint(b *testing.B) {
	for _, files := range ckptSizes {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			t := ckptTreeOf(b, files)
			var ds []time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				t.touch(b, 1, i)
				must(b, t.f.Flush(b.Context()))
				b.StartTimer()
				start := time.Now()
				_, err := t.f.Checkpoint(b.Context(), sfs.CheckpointOptions{})
				ds = append(ds, time.Since(start))
				must(b, err)
			}
			reportP50(b, ds)
		})
	}
}

// BenchmarkRestore: 100 files changed since a checkpoint, then restored.
func BenchmarkRestore(b *testing.B) {
	t := ckptTreeOf(b, 100_000)
	ci, err := t.f.Checkpoint(b.Context(), sfs.CheckpointOptions{})
	must(b, err)
	ref := strconv.FormatInt(ci.ID, 10)
	var ds []time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		t.touch(b, 100, i)
		must(b, t.f.Flush(b.Context()))
		b.StartTimer()
		start := time.Now()
		must(b, t.f.Restore(b.Context(), ref))
		ds = append(ds, time.Since(start))
	}
	reportP50(b, ds)
}

// BenchmarkDiff: 10 files changed since a checkpoint, against the live tree.
func BenchmarkDiff(b *testing.B) {
	t := ckptTreeOf(b, 100_000)
	ci, err := t.f.Checkpoint(b.Context(), sfs.CheckpointOptions{})
	must(b, err)
	t.touch(b, 10, 1)
	must(b, t.f.Flush(b.Context()))
	ref := strconv.FormatInt(ci.ID, 10)
	var ds []time.Duration
	for b.Loop() {
		start := time.Now()
		d, err := t.f.Diff(b.Context(), ref, "")
		ds = append(ds, time.Since(start))
		must(b, err)
		if len(d) != 10 {
			b.Fatalf("diff lists %d paths, want 10", len(d))
		}
	}
	reportP50(b, ds)
}

// BenchmarkCheckpointGrowth: one file of SQLFS_CKPT_BYTES, a checkpoint,
// then a one-byte write into the middle of the file: the store keeps one
// chunk for the checkpoint, not a copy of the file. hist-bytes is the data
// kept for the checkpoint, growth-bytes what the store's pages grew by.
func BenchmarkCheckpointGrowth(b *testing.B) {
	t := ckptTreeOf(b, 1)
	size, err := t.f.Stat(ckptFile(0))
	must(b, err)
	db, err := sql.Open("sqlite3", "file:"+t.store+"?mode=ro")
	must(b, err)
	defer db.Close()
	pages := func() int64 {
		var n, size int64
		must(b, db.QueryRow("PRAGMA page_count").Scan(&n))
		must(b, db.QueryRow("PRAGMA page_size").Scan(&size))
		return n * size
	}
	var hist, growth int64
	for i := 0; b.Loop(); i++ {
		_, err := t.f.Checkpoint(b.Context(), sfs.CheckpointOptions{})
		must(b, err)
		before := pages()
		fl, err := t.f.OpenFile(ckptFile(0), os.O_RDWR, 0)
		must(b, err)
		_, err = fl.WriteAt([]byte{byte(i)}, size.Size/2)
		must(b, err)
		must(b, fl.Close())
		must(b, t.f.Sync(b.Context()))
		growth += pages() - before
		var h int64
		must(b, db.QueryRow("SELECT coalesce(sum(length(data)), 0) FROM chunks_hist").Scan(&h))
		hist = h / int64(i+1)
	}
	b.ReportMetric(float64(hist), "hist-bytes")
	b.ReportMetric(float64(growth)/float64(b.N), "growth-bytes")
}

// BenchmarkFork: a fork of the live tree beside cp of the store file, in
// the same run; x-cp is fork's time over cp's. A fork is synced before it
// returns and cp's copy is not, so cp's fsync of its copy is timed too
// (x-cp+fsync: fork's time over cp's and that fsync's).
func BenchmarkFork(b *testing.B) {
	t := ckptTreeOf(b, 100_000)
	dir := b.TempDir()
	var forkT, cpT, syncT time.Duration
	for i := 0; b.Loop(); i++ {
		dst := filepath.Join(dir, fmt.Sprintf("fork%d.db", i))
		start := time.Now()
		must(b, t.f.Fork(b.Context(), "", dst))
		forkT += time.Since(start)
		must(b, t.f.Sync(b.Context()))
		cp := filepath.Join(dir, fmt.Sprintf("cp%d.db", i))
		start = time.Now()
		if out, err := exec.Command("cp", t.store, cp).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v: %s", err, out)
		}
		cpT += time.Since(start)
		start = time.Now()
		fl, err := os.Open(cp)
		must(b, err)
		must(b, fl.Sync())
		fl.Close()
		syncT += time.Since(start)
		os.Remove(dst)
		os.Remove(cp)
	}
	b.ReportMetric(float64(forkT.Microseconds())/1000/float64(b.N), "fork-ms")
	b.ReportMetric(float64(cpT.Microseconds())/1000/float64(b.N), "cp-ms")
	b.ReportMetric(float64(forkT)/float64(cpT), "x-cp")
	b.ReportMetric(float64(forkT)/float64(cpT+syncT), "x-cp+fsync")
}
