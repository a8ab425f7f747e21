package sqlstore_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// benchFileBytes is what one iteration of the sequential benchmarks writes.
const benchFileBytes = 256 << 20

// BenchmarkCommitSequential commits one new file of benchFileBytes in
// batches the size the core commits under a sequential writer (a quarter of
// its dirty limit), then a synced commit, beside writing the same bytes to
// an os file in 1 MiB writes and fsyncing it. It reports both rates and
// their ratio (native/sqlstore: how many times slower the store is).
func BenchmarkCommitSequential(b *testing.B) {
	const batchBytes = 64 << 20
	dir := b.TempDir()
	data := make([]byte, benchFileBytes)
	for i := range data {
		data[i] = byte(i * 7)
	}
	var storeTime, nativeTime time.Duration
	ino := uint64(100)
	st, err := sqlstore.Open(b.Context(), filepath.Join(dir, "ws.db"), sqlstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cs := int64(st.ChunkSize())
	for b.Loop() {
		ino++
		start := time.Now()
		for off := int64(0); off < benchFileBytes; off += batchBytes {
			batch := &sqlstore.Batch{Inodes: []sqlstore.Inode{{Ino: ino, Mode: 0o100644, Nlink: 1, Size: off + batchBytes}}}
			for c := off; c < off+batchBytes; c += cs {
				batch.Chunks = append(batch.Chunks, sqlstore.Chunk{Ino: ino, Idx: c / cs, Data: data[c : c+cs]})
			}
			if err := st.Commit(b.Context(), batch); err != nil {
				b.Fatal(err)
			}
		}
		if err := st.Commit(b.Context(), &sqlstore.Batch{Durable: true}); err != nil {
			b.Fatal(err)
		}
		storeTime += time.Since(start)

		start = time.Now()
		f, err := os.Create(filepath.Join(dir, "native.dat"))
		if err != nil {
			b.Fatal(err)
		}
		for off := 0; off < benchFileBytes; off += 1 << 20 {
			if _, err := f.Write(data[off : off+1<<20]); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		f.Close()
		nativeTime += time.Since(start)
	}
	mib := float64(benchFileBytes) / (1 << 20) * float64(b.N)
	b.ReportMetric(mib/storeTime.Seconds(), "store-MiB/s")
	b.ReportMetric(mib/nativeTime.Seconds(), "native-MiB/s")
	b.ReportMetric(storeTime.Seconds()/nativeTime.Seconds(), "x-native")
}
