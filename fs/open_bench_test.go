package fs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/internal/testenv"
)

// benchTree makes a store and a native directory of the same tree: 100
// directories of files/100 one-byte files each.
func benchTree(b *testing.B, files int) (store, native string) {
	b.Helper()
	store = filepath.Join(b.TempDir(), "ws.db")
	native = b.TempDir()
	f, err := sfs.Open(b.Context(), store, sfs.Options{NoAudit: true, CommitInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	for d := range 100 {
		dir := fmt.Sprintf("/d%d", d)
		if err := f.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.Mkdir(native+dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range files / 100 {
			name := fmt.Sprintf("%s/file-%d.js", dir, i)
			if err := f.WriteFile(name, []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(native+name, []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return store, native
}

// BenchmarkMetadata measures the metadata cache on trees of 10k and 100k
// files, each beside a native directory of the same tree:
//
//   - wake: what waking a hibernated workspace costs the core, opening its
//     store and the first stat of a file in it (the native stat has
//     nothing to open);
//   - warmwalk: a walk of the whole tree once its metadata is in RAM,
//     listing every directory with attributes as ls -lR does (natively:
//     readdir and lstat of each entry), which lazy loading must not slow.
func BenchmarkMetadata(b *testing.B) {
	const name = "/d50/file-7.js"
	for _, files := range []int{10_000, 100_000} {
		store, native := benchTree(b, files)
		b.Run(fmt.Sprintf("files=%d/wake/sqlfs", files), func(b *testing.B) {
			for b.Loop() {
				f, err := sfs.Open(b.Context(), store, sfs.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := f.Stat(name); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				f.Close()
				b.StartTimer()
			}
		})
		b.Run(fmt.Sprintf("files=%d/wake/native", files), func(b *testing.B) {
			for b.Loop() {
				if _, err := os.Stat(native + name); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("files=%d/warmwalk/sqlfs", files), func(b *testing.B) {
			f, err := sfs.Open(b.Context(), store, sfs.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			walk := func() int {
				seen := 0
				var dir func(p string)
				dir = func(p string) {
					ents, _, err := f.ReadDirAttrs(p)
					if err != nil {
						b.Fatal(err)
					}
					for _, e := range ents {
						seen++
						if e.Mode == 0o040000 {
							dir(filepath.Join(p, e.Name))
						}
					}
				}
				dir("/")
				return seen
			}
			if got := walk(); got != files+100 { // the first walk reads the tree
				b.Fatalf("walk saw %d entries, want %d", got, files+100)
			}
			cpu := testenv.CPUTime(b)
			for b.Loop() {
				walk()
			}
			reportCPU(b, cpu)
		})
		b.Run(fmt.Sprintf("files=%d/warmwalk/native", files), func(b *testing.B) {
			cpu := testenv.CPUTime(b)
			for b.Loop() {
				err := filepath.WalkDir(native, func(p string, d os.DirEntry, err error) error {
					if err != nil {
						return err
					}
					_, err = d.Info()
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// reportCPU reports the CPU time (all threads, the garbage collector's
// included) per iteration since CPUTime said start: on a loaded machine
// the wall time of a walk is mostly waiting for a CPU.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((testenv.CPUTime(b)-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
