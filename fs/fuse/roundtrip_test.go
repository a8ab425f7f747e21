package fuse_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/internal/testenv"
)

// BenchmarkRoundTrip times one FUSE request and nothing else, through the
// mount and on a native directory of the same disk, alternating batches:
// stat-missing is a lstat of a name not asked before (one LOOKUP,
// answered ENOENT), getattr a statx with AT_STATX_FORCE_SYNC of an open
// file (one GETATTR; the kernel's cached attributes are not used). The
// server runs in this process, so cpu-µs/op is the caller's and the
// server's CPU together (the kernel's work on both sides included); on a
// loaded machine it is steadier than µs/op.
//
//	go test ./fs/fuse -run '^$' -bench RoundTrip -benchtime 20000x
func BenchmarkRoundTrip(b *testing.B) {
	w := fusetest.Mount(b, sfs.Options{}, fuse.Options{})
	native := b.TempDir()
	for _, dir := range []string{w.Dir, native} {
		if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ops := []struct {
		name string
		do   func(dir string, fd, i int) error
	}{
		{"stat-missing", func(dir string, _, i int) error {
			var st unix.Stat_t
			if err := unix.Lstat(fmt.Sprintf("%s/m%d", dir, i), &st); !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("lstat of a missing name: %v", err)
			}
			return nil
		}},
		{"getattr", func(_ string, fd, _ int) error {
			var st unix.Statx_t
			return unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_FORCE_SYNC, unix.STATX_BASIC_STATS, &st)
		}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			const batch = 500
			var t, cpu [2]time.Duration
			var fds [2]int
			for k, dir := range []string{w.Dir, native} {
				fd, err := unix.Open(filepath.Join(dir, "f"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
				if err != nil {
					b.Fatal(err)
				}
				defer unix.Close(fd)
				fds[k] = fd
			}
			before := fuseRequests(b)
			i := 0
			for n := 0; n < b.N; n += batch {
				for k, dir := range []string{w.Dir, native} {
					start, c := time.Now(), testenv.CPUTime(b)
					for j := range min(batch, b.N-n) {
						if err := op.do(dir, fds[k], i+j); err != nil {
							b.Fatal(err)
						}
					}
					t[k] += time.Since(start)
					cpu[k] += testenv.CPUTime(b) - c
				}
				i += batch
			}
			total := 0.0
			for op, v := range fuseRequests(b) {
				if op != "forget" {
					total += v - before[op]
				}
			}
			perOp := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(b.N) }
			b.ReportMetric(perOp(t[0]), "sqlfs-µs/op")
			b.ReportMetric(perOp(t[1]), "native-µs/op")
			b.ReportMetric(t[0].Seconds()/t[1].Seconds(), "x-native")
			b.ReportMetric(perOp(cpu[0]), "sqlfs-cpu-µs/op")
			b.ReportMetric(perOp(cpu[1]), "native-cpu-µs/op")
			b.ReportMetric(total/float64(b.N), "requests/op")
		})
	}
}
