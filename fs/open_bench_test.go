package fs_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// BenchmarkOpen100k times opening a store of 100k files: the start-up of a
// mount, all metadata loaded into RAM.
func BenchmarkOpen100k(b *testing.B) {
	store := filepath.Join(b.TempDir(), "ws.db")
	f, err := sfs.Open(b.Context(), store, sfs.Options{NoAudit: true, CommitInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	for d := range 100 {
		dir := fmt.Sprintf("/d%d", d)
		if err := f.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range 1000 {
			if err := f.WriteFile(fmt.Sprintf("%s/file-%d.js", dir, i), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		f, err := sfs.Open(b.Context(), store, sfs.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		f.Close()
		b.StartTimer()
	}
}
