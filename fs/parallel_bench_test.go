package fs_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// BenchmarkParallel runs what make -j2 and npm ci send the core from many
// threads at once: each goroutine (-cpu sets how many run: GOMAXPROCS
// times b.SetParallelism's 4) works in a directory of its own, so no
// request waits for another's data, only for the core's locks. create
// makes a file and writes 15 KiB into it in two WRITEs (npm ci's average
// file) and stats it; write writes 1 MiB pieces into a file of the
// goroutine's own. Commits run meanwhile as they do under a mount. With
// -mutexprofile the profile shows which lock each waited on:
//
//	go test ./fs -run '^$' -bench Parallel -benchtime 20000x -mutexprofile /tmp/mutex.prof
//	go tool pprof -top fs.test /tmp/mutex.prof
//
// It reports the process's CPU time per operation.
func BenchmarkParallel(b *testing.B) {
	small := patterned(15 << 10)
	big := patterned(1 << 20)
	for _, bc := range []struct {
		name string
		op   func(b *testing.B, x sfs.Inodes, dir uint64, i int)
	}{
		{"create", func(b *testing.B, x sfs.Inodes, dir uint64, i int) {
			a, err := x.Mknod(dir, fileName(i), syscall.S_IFREG|0o644, 0, "")
			must(b, err)
			_, err = x.WriteAt(a.Ino, small[:8<<10], 0, false)
			must(b, err)
			_, err = x.WriteAt(a.Ino, small[8<<10:], 8<<10, false)
			must(b, err)
			_, err = x.GetAttr(a.Ino)
			must(b, err)
		}},
		{"stat", func(b *testing.B, x sfs.Inodes, dir uint64, i int) {
			// git commit's shape: GETATTRs of cached inodes (3.3 a file),
			// a LOOKUP and now and then a change (a loose object).
			name := fileName(i % 64)
			if i < 64 {
				_, err := x.Mknod(dir, name, syscall.S_IFREG|0o644, 0, "")
				must(b, err)
			}
			a, err := x.Lookup(dir, name)
			must(b, err)
			for range 4 {
				_, err = x.GetAttr(a.Ino)
				must(b, err)
			}
			if i%4 == 0 {
				_, err = x.WriteAt(a.Ino, small[:100], 0, false)
				must(b, err)
			}
		}},
		{"write", func(b *testing.B, x sfs.Inodes, file uint64, i int) {
			// 64 MiB a file, then over again: the store's size stays put.
			_, err := x.WriteAt(file, big, int64(i%64)<<20, false)
			must(b, err)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f, err := sfs.Open(b.Context(), filepath.Join(b.TempDir(), "ws.db"), sfs.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			x := f.As(sfs.Caller{Kernel: true, Actor: "fuse:pid=1 comm=bench"}).Inodes()
			var worker atomic.Int64
			b.SetParallelism(4)
			cpu := testenv.CPUTime(b)
			b.RunParallel(func(pb *testing.PB) {
				name := fmt.Sprintf("w%d", worker.Add(1))
				mode := uint32(syscall.S_IFDIR | 0o755)
				if bc.name == "write" {
					mode = syscall.S_IFREG | 0o644
				}
				a, err := x.Mknod(sqlstore.Root, name, mode, 0, "")
				must(b, err)
				for i := 0; pb.Next(); i++ {
					bc.op(b, x, a.Ino, i)
				}
			})
			// What the work costs to commit belongs to it.
			must(b, f.Sync(b.Context()))
			b.StopTimer()
			b.ReportMetric(float64(testenv.CPUTime(b)-cpu)/float64(b.N)/1e3, "cpu-µs/op")
		})
	}
}
