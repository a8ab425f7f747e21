package sqlstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// benchFileBytes is what one iteration of the sequential benchmarks writes.
const benchFileBytes = 256 << 20

// BenchmarkCommitSequential commits one new file of benchFileBytes in
// batches the size the core commits under a sequential writer (a quarter of
// its dirty limit), then a synced commit, beside writing the same bytes to
// an os file in 1 MiB writes and fsyncing it. It reports both rates, their
// ratio (sqlstore/native: how many times slower the store is) and the CPU
// time (all threads, the WAL keeper's included) per MiB of each.
func BenchmarkCommitSequential(b *testing.B) {
	const batchBytes = 64 << 20
	dir := b.TempDir()
	data := make([]byte, benchFileBytes)
	for i := range data {
		data[i] = byte(i * 7)
	}
	var storeTime, nativeTime, storeCPU, nativeCPU time.Duration
	ino := uint64(100)
	st, err := sqlstore.Open(b.Context(), filepath.Join(dir, "ws.db"), sqlstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cs := int64(st.ChunkSize())
	for b.Loop() {
		ino++
		start, cpu := time.Now(), testenv.CPUTime(b)
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
		storeCPU += testenv.CPUTime(b) - cpu

		start, cpu = time.Now(), testenv.CPUTime(b)
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
		nativeCPU += testenv.CPUTime(b) - cpu
	}
	mib := float64(benchFileBytes) / (1 << 20) * float64(b.N)
	b.ReportMetric(mib/storeTime.Seconds(), "store-MiB/s")
	b.ReportMetric(mib/nativeTime.Seconds(), "native-MiB/s")
	b.ReportMetric(storeTime.Seconds()/nativeTime.Seconds(), "x-native")
	b.ReportMetric(float64(storeCPU.Microseconds())/mib, "store-cpu-µs/MiB")
	b.ReportMetric(float64(nativeCPU.Microseconds())/mib, "native-cpu-µs/MiB")
}

// BenchmarkCommitCreates commits what creating files commits, 1,000 at a
// time (the batch a group commit takes under untar or npm ci): each file a
// new inode, its name and one 4 KiB chunk, in a directory that already
// holds files, then one synced commit. It reports the CPU time (all
// threads) per file.
func BenchmarkCommitCreates(b *testing.B) {
	const files = 1000
	st, err := sqlstore.Open(b.Context(), filepath.Join(b.TempDir(), "ws.db"), sqlstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	data := make([]byte, 4<<10)
	ino := uint64(100)
	batch := func() *sqlstore.Batch {
		b := &sqlstore.Batch{}
		for range files {
			ino++
			b.Inodes = append(b.Inodes, sqlstore.Inode{Ino: ino, Mode: 0o100644, Nlink: 1, Size: int64(len(data))})
			b.Dentries = append(b.Dentries, sqlstore.Dentry{Parent: sqlstore.Root, Name: fmt.Sprintf("file-%08d.js", ino), Ino: ino})
			b.Chunks = append(b.Chunks, sqlstore.Chunk{Ino: ino, Data: data})
		}
		return b
	}
	if err := st.Commit(b.Context(), batch()); err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	for b.Loop() {
		bt := batch()
		start := testenv.CPUTime(b)
		if err := st.Commit(b.Context(), bt); err != nil {
			b.Fatal(err)
		}
		if err := st.Commit(b.Context(), &sqlstore.Batch{Durable: true}); err != nil {
			b.Fatal(err)
		}
		cpu += testenv.CPUTime(b) - start
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(files*b.N), "cpu-µs/file")
}

// BenchmarkCommitSmallDurable commits what a tool's small write commits
// (issue 21: 1,000 clients writing through one host): a durable batch of
// one file's inode, its one 4 KiB chunk and an audit event, beside
// rewriting 4 KiB of a native file and fsyncing it. It reports the CPU
// time (all threads) per commit of each and their ratio; CPU, not time,
// since a loaded machine moves the time of an fsync far more.
func BenchmarkCommitSmallDurable(b *testing.B) {
	dir := b.TempDir()
	st, err := sqlstore.Open(b.Context(), filepath.Join(dir, "ws.db"), sqlstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	f, err := os.Create(filepath.Join(dir, "native.dat"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	data := make([]byte, 4<<10)
	const ino = 100
	var storeCPU, nativeCPU time.Duration
	for i := 0; b.Loop(); i++ {
		data[0] = byte(i)
		batch := &sqlstore.Batch{
			Inodes:  []sqlstore.Inode{{Ino: ino, Mode: 0o100644, Nlink: 1, Size: int64(len(data)), Mtime: int64(i)}},
			Chunks:  []sqlstore.Chunk{{Ino: ino, Data: data}},
			Audit:   []sqlstore.AuditEvent{{Time: time.Now(), Actor: "tool:write", Op: "write", Path: "/notes.md", Result: "ok"}},
			Durable: true,
		}
		if i == 0 {
			batch.Dentries = []sqlstore.Dentry{{Parent: sqlstore.Root, Name: "notes.md", Ino: ino}}
		}
		cpu := testenv.CPUTime(b)
		if err := st.Commit(b.Context(), batch); err != nil {
			b.Fatal(err)
		}
		storeCPU += testenv.CPUTime(b) - cpu

		cpu = testenv.CPUTime(b)
		if _, err := f.WriteAt(data, 0); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		nativeCPU += testenv.CPUTime(b) - cpu
	}
	b.ReportMetric(float64(storeCPU.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(nativeCPU.Nanoseconds())/float64(b.N), "native-cpu-ns/op")
	b.ReportMetric(storeCPU.Seconds()/nativeCPU.Seconds(), "x-native")
}

// BenchmarkReadChunks reads a committed 64 MiB file back in 1 MiB spans,
// one ReadChunks each (what a sequential READ of the mount asks the store
// for), with the store file in the page cache: the CPU time (all threads)
// per MiB is the store's own read cost, without the disk's.
func BenchmarkReadChunks(b *testing.B) {
	const size, span = 64 << 20, 1 << 20
	st, err := sqlstore.Open(b.Context(), filepath.Join(b.TempDir(), "ws.db"), sqlstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cs := int64(st.ChunkSize())
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	const ino = 100
	batch := &sqlstore.Batch{Durable: true, Inodes: []sqlstore.Inode{{Ino: ino, Mode: 0o100644, Nlink: 1, Size: size}}}
	for c := int64(0); c < size; c += cs {
		batch.Chunks = append(batch.Chunks, sqlstore.Chunk{Ino: ino, Idx: c / cs, Data: data[c : c+cs]})
	}
	if err := st.Commit(b.Context(), batch); err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	for b.Loop() {
		start := testenv.CPUTime(b)
		var got int64
		for from := int64(0); from < size/cs; from += span / cs {
			err := st.ReadChunks(b.Context(), ino, from, from+span/cs, func(_ int64, d []byte) { got += int64(len(d)) })
			if err != nil {
				b.Fatal(err)
			}
		}
		cpu += testenv.CPUTime(b) - start
		if got != size {
			b.Fatalf("read %d bytes, want %d", got, size)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/(float64(size>>20)*float64(b.N)), "cpu-µs/MiB")
}
