package fs_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// sideBySide times the same work on sqlfs and on a native directory of the
// same disk, alternating, and reports both rates and the ratio of their
// times (x-native: how many times slower sqlfs is). It also reports the CPU
// time (user and system, all threads) each side took: on a machine shared
// with other work that is steadier than the rates.
type sideBySide struct {
	f                *sfs.FS
	nodes            sfs.Inodes
	native           string
	fsT, nativT      time.Duration
	fsCPU, nativeCPU time.Duration
}

func newSideBySide(b *testing.B) *sideBySide {
	dir := b.TempDir()
	f, err := sfs.Open(b.Context(), filepath.Join(dir, "ws.db"), sfs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	native := filepath.Join(dir, "native")
	if err := os.Mkdir(native, 0o755); err != nil {
		b.Fatal(err)
	}
	return &sideBySide{f: f, nodes: f.Inodes(), native: native}
}

// run times one iteration of each side.
func (s *sideBySide) run(b *testing.B, sqlfs func(), native func()) {
	start, cpu := time.Now(), testenv.CPUTime(b)
	sqlfs()
	s.fsT += time.Since(start)
	s.fsCPU += testenv.CPUTime(b) - cpu
	start, cpu = time.Now(), testenv.CPUTime(b)
	native()
	s.nativT += time.Since(start)
	s.nativeCPU += testenv.CPUTime(b) - cpu
}

// report gives the rates in unit per second, units counting what one
// iteration does.
func (s *sideBySide) report(b *testing.B, units float64, unit string) {
	n := units * float64(b.N)
	b.ReportMetric(n/s.fsT.Seconds(), "sqlfs-"+unit+"/s")
	b.ReportMetric(n/s.nativT.Seconds(), "native-"+unit+"/s")
	b.ReportMetric(s.fsT.Seconds()/s.nativT.Seconds(), "x-native")
	b.ReportMetric(float64(s.fsCPU.Microseconds())/n, "sqlfs-cpu-µs/"+unit)
	b.ReportMetric(float64(s.nativeCPU.Microseconds())/n, "native-cpu-µs/"+unit)
}

// create makes a new empty file on both sides and returns its inode and
// the open native file.
func (s *sideBySide) create(b *testing.B, name string) (uint64, *os.File) {
	a, err := s.nodes.Mknod(sqlstore.Root, name, 0o100644, 0, "")
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(s.native, name))
	if err != nil {
		b.Fatal(err)
	}
	return a.Ino, f
}

// patterned is n bytes of a repeating pattern, so that no layer can
// shortcut zeros.
func patterned(n int) []byte {
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	return buf
}

// BenchmarkWriteSequential writes a new file of 64 or 256 MiB in 1 MiB
// writes through Inodes.WriteAt (what the FUSE frontend's WRITE does) and
// syncs it: fio's seq write job without the kernel. A 64 MiB file is one
// commit's batch (a quarter of the dirty limit), 256 MiB the whole limit.
func BenchmarkWriteSequential(b *testing.B) {
	for _, size := range []int64{64 << 20, 256 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) { writeSequential(b, size) })
	}
}

func writeSequential(b *testing.B, size int64) {
	const block = 1 << 20
	s := newSideBySide(b)
	buf := patterned(block)
	i := 0
	for b.Loop() {
		i++
		ino, nf := s.create(b, fmt.Sprintf("seq%d", i))
		s.run(b, func() {
			for off := int64(0); off < size; off += block {
				_, err := s.nodes.WriteAt(ino, buf, off, false)
				must(b, err)
			}
			must(b, s.f.Sync(b.Context()))
		}, func() {
			for off := int64(0); off < size; off += block {
				_, err := nf.WriteAt(buf, off)
				must(b, err)
			}
			must(b, nf.Sync())
		})
		nf.Close()
	}
	s.report(b, float64(size>>20), "MiB")
}

// BenchmarkCopyRange copies a committed 64 MiB file into a new one with
// Inodes.CopyRange and syncs the copy (what the FUSE frontend's
// COPY_FILE_RANGE does for cp), against copy_file_range(2) and fsync on
// the native side.
func BenchmarkCopyRange(b *testing.B) {
	const size, block = 64 << 20, 1 << 20
	s := newSideBySide(b)
	buf := patterned(block)
	src, nsrc := s.create(b, "src")
	defer nsrc.Close()
	for off := int64(0); off < size; off += block {
		_, err := s.nodes.WriteAt(src, buf, off, false)
		must(b, err)
		_, err = nsrc.WriteAt(buf, off)
		must(b, err)
	}
	must(b, s.f.Sync(b.Context()))
	must(b, nsrc.Sync())
	i := 0
	for b.Loop() {
		i++
		dst, ndst := s.create(b, fmt.Sprintf("copy%d", i))
		s.run(b, func() {
			n, err := s.nodes.CopyRange(src, 0, dst, 0, size, false)
			must(b, err)
			if n != size {
				b.Fatalf("copied %d bytes, want %d", n, size)
			}
			must(b, s.f.Sync(b.Context()))
		}, func() {
			var off int64
			for off < size {
				n, err := unix.CopyFileRange(int(nsrc.Fd()), &off, int(ndst.Fd()), nil, int(size-off), 0)
				must(b, err)
				if n == 0 {
					b.Fatalf("native copy stopped at %d", off)
				}
			}
			must(b, ndst.Sync())
		})
		ndst.Close()
	}
	s.report(b, float64(size>>20), "MiB")
}

// BenchmarkWriteRandom sizes a new 64 MiB file (fio's fallocate), writes
// 4 KiB blocks at random offsets of it, every block 8 times, and syncs it:
// fio's rand write job, long enough that commits land meanwhile (the
// interval is 1 s) and later writes find their chunks in the store, not in
// RAM.
func BenchmarkWriteRandom(b *testing.B) {
	const size, block = 64 << 20, 4 << 10
	s := newSideBySide(b)
	buf := patterned(block)
	rng := rand.New(rand.NewPCG(1, 2))
	var order []int
	for range 8 {
		order = append(order, rng.Perm(size/block)...)
	}
	i := 0
	for b.Loop() {
		i++
		ino, nf := s.create(b, fmt.Sprintf("rand%d", i))
		s.run(b, func() {
			_, err := s.nodes.SetAttr(ino, sfs.SetAttr{Size: ptr(int64(size))})
			must(b, err)
			for _, k := range order {
				_, err := s.nodes.WriteAt(ino, buf, int64(k)*block, false)
				must(b, err)
			}
			must(b, s.f.Sync(b.Context()))
		}, func() {
			must(b, nf.Truncate(size))
			for _, k := range order {
				_, err := nf.WriteAt(buf, int64(k)*block)
				must(b, err)
			}
			must(b, nf.Sync())
		})
		nf.Close()
	}
	s.report(b, float64(len(order)), "writes")
}

func ptr[T any](v T) *T { return &v }

// BenchmarkCreateSync creates a 4 KiB file and syncs it, once per file:
// make bench's create+fsync.
func BenchmarkCreateSync(b *testing.B) {
	s := newSideBySide(b)
	buf := make([]byte, 4<<10)
	i := 0
	for b.Loop() {
		i++
		name := fmt.Sprintf("f%d", i)
		s.run(b, func() {
			a, err := s.nodes.Mknod(sqlstore.Root, name, 0o100644, 0, "")
			must(b, err)
			_, err = s.nodes.WriteAt(a.Ino, buf, 0, false)
			must(b, err)
			must(b, s.f.Sync(b.Context()))
		}, func() {
			nf, err := os.Create(filepath.Join(s.native, name))
			must(b, err)
			_, err = nf.Write(buf)
			must(b, err)
			must(b, nf.Sync())
			must(b, nf.Close())
		})
	}
	s.report(b, 1, "files")
}

// BenchmarkReadBack reads back 100 files of 8 KiB right after they were
// written and committed (what git add does to the tree it hashes): the
// read is timed, against the same read of native files still in the page
// cache.
func BenchmarkReadBack(b *testing.B) {
	const files, size = 100, 8 << 10
	s := newSideBySide(b)
	buf := patterned(size)
	got := make([]byte, size)
	inos := make([]uint64, files)
	natives := make([]*os.File, files)
	i := 0
	for b.Loop() {
		for k := range files {
			i++
			ino, nf := s.create(b, fmt.Sprintf("back%d", i))
			_, err := s.nodes.WriteAt(ino, buf, 0, false)
			must(b, err)
			_, err = nf.WriteAt(buf, 0)
			must(b, err)
			inos[k], natives[k] = ino, nf
		}
		must(b, s.f.Sync(b.Context()))
		s.run(b, func() {
			for _, ino := range inos {
				_, err := s.nodes.ReadAt(ino, got, 0)
				must(b, err)
			}
		}, func() {
			for _, nf := range natives {
				_, err := nf.ReadAt(got, 0)
				must(b, err)
			}
		})
		for _, nf := range natives {
			nf.Close()
		}
	}
	s.report(b, files, "files")
}
