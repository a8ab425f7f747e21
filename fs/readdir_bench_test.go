package fs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadDir lists a directory of n files by path (FS.ReadDir,
// what the ls tool and JavaScript's readdir call) again and again,
// against os.ReadDir of the same names in a native directory (which
// sorts them by name too). The listing is name-sorted once per change,
// not once per call.
func BenchmarkReadDir(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("%dfiles", n), func(b *testing.B) {
			s := newSideBySide(b)
			must(b, s.f.Mkdir("/d", 0o755))
			nd := filepath.Join(s.native, "d")
			must(b, os.Mkdir(nd, 0o755))
			for i := range n {
				name := fmt.Sprintf("f%05d.txt", (i*7919)%n) // not created in name order
				must(b, s.f.WriteFile("/d/"+name, nil, 0o644))
				must(b, os.WriteFile(filepath.Join(nd, name), nil, 0o644))
			}
			for b.Loop() {
				s.run(b, func() {
					ents, err := s.f.ReadDir("/d")
					must(b, err)
					if len(ents) != n {
						b.Fatalf("%d entries, want %d", len(ents), n)
					}
				}, func() {
					ents, err := os.ReadDir(nd)
					must(b, err)
					if len(ents) != n {
						b.Fatalf("native: %d entries, want %d", len(ents), n)
					}
				})
			}
			s.report(b, 1, "listing")
		})
	}
}
