//go:build linux

package fuse

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Benchmarks of memFS mounted through this package against a native directory on the
// same disk, with the knobs of the sqlfs patches. Compare builds side by side:
//
//	go test ./fuse/ -run XXX -bench Fuse3            # libfuse2
//	go test -tags fuse3 ./fuse/ -run XXX -bench Fuse3 # libfuse3

// benchTargets are the directories the benchmarks compare. The knobs are no-ops on
// libfuse2.
var benchTargets = []struct {
	name  string
	setup func(*FileSystemHost)
}{
	{"native", nil},
	{"fuse", func(h *FileSystemHost) {}},
	{"fuse_noflush", func(h *FileSystemHost) { h.SetNoFlush(true) }},
	{"fuse_writeback", func(h *FileSystemHost) { h.SetCapWritebackCache(true) }},
}

func benchDir(b *testing.B, setup func(*FileSystemHost)) (string, *memFS) {
	if setup == nil {
		return b.TempDir(), nil
	}
	opts := "attr_timeout=60,entry_timeout=60,negative_timeout=60,kernel_cache"
	if !fuse3Build {
		opts += ",big_writes" // libfuse2 otherwise writes in 4 KiB pieces
	}
	fs := newMemFS()
	fs.discard = true
	mnt, _ := mountMemFS(b, fs, setup, "-o", opts)
	return mnt, fs
}

// BenchmarkFuse3Write writes 64 MiB sequentially in 128 KiB and 1 MiB write(2) calls
// (like dd bs=...) and closes the file: MB/s, and WRITE requests per file.
func BenchmarkFuse3Write(b *testing.B) {
	const total = 64 << 20
	for _, bs := range []int{128 << 10, 1 << 20} {
		for _, tgt := range benchTargets {
			b.Run(fmt.Sprintf("bs=%dk/%s", bs>>10, tgt.name), func(b *testing.B) {
				dir, fs := benchDir(b, tgt.setup)
				buf := bytes.Repeat([]byte{'w'}, bs)
				p := filepath.Join(dir, "big")
				b.SetBytes(total)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					f, err := os.Create(p)
					if err != nil {
						b.Fatal(err)
					}
					for n := 0; n < total; n += bs {
						if _, err := f.Write(buf); err != nil {
							b.Fatal(err)
						}
					}
					if err := f.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if fs != nil {
					b.ReportMetric(float64(fs.writes.Load())/float64(b.N), "WRITEs/op")
				}
			})
		}
	}
}

// BenchmarkFuse3Create creates, writes (4 KiB) and closes small files: time per file,
// and FLUSH requests per file.
func BenchmarkFuse3Create(b *testing.B) {
	data := bytes.Repeat([]byte{'c'}, 4096)
	for _, tgt := range benchTargets {
		b.Run(tgt.name, func(b *testing.B) {
			dir, fs := benchDir(b, tgt.setup)
			for i := 0; i < b.N; i++ {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if fs != nil {
				b.ReportMetric(float64(fs.flushes.Load())/float64(b.N), "FLUSHes/op")
			}
		})
	}
}
