package fs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// BenchmarkHardLinkedPolicy stats one file with two names, and lists a
// directory of 2,000 such files for the first time since the store opened
// (FS.ReadDirAttrs, ls -l), with no rules and with rules that protect none
// of them, against the same on a native directory, alternating. Under
// rules a file with several names is as protected as its most protected
// name, which the core has to find.
func BenchmarkHardLinkedPolicy(b *testing.B) {
	const files = 2000
	policies := []struct {
		name   string
		policy sfs.Policy
	}{
		{"norules", sfs.Policy{}},
		{"rules", sfs.Policy{Hidden: []string{"secrets/**", "*.pem"}, ReadOnly: []string{"ro/**"}}},
	}
	for _, pc := range policies {
		setup := func(b *testing.B) (*sideBySide, string) {
			dir := b.TempDir()
			store := filepath.Join(dir, "ws.db")
			f, err := sfs.Open(b.Context(), store, sfs.Options{})
			must(b, err)
			native := filepath.Join(dir, "native")
			for _, d := range []string{"/src", "/pub"} {
				must(b, f.Mkdir(d, 0o755))
				must(b, os.MkdirAll(filepath.Join(native, d), 0o755))
			}
			for i := range files {
				name := fmt.Sprintf("f%05d", i)
				must(b, f.WriteFile("/src/"+name, []byte(name), 0o644))
				must(b, f.Link("/src/"+name, "/pub/"+name))
				must(b, os.WriteFile(filepath.Join(native, "src", name), []byte(name), 0o644))
				must(b, os.Link(filepath.Join(native, "src", name), filepath.Join(native, "pub", name)))
			}
			must(b, f.Close())
			s := &sideBySide{native: native}
			s.reopen(b, store, pc.policy)
			return s, store
		}
		b.Run("stat/"+pc.name, func(b *testing.B) {
			s, _ := setup(b)
			np := filepath.Join(s.native, "pub", "f00007")
			for b.Loop() {
				s.run(b, func() {
					_, err := s.f.Stat("/pub/f00007")
					must(b, err)
				}, func() {
					_, err := os.Stat(np)
					must(b, err)
				})
			}
			s.report(b, 1, "stat")
		})
		b.Run("firstlist/"+pc.name, func(b *testing.B) {
			s, store := setup(b)
			nd := filepath.Join(s.native, "pub")
			for b.Loop() {
				b.StopTimer()
				s.reopen(b, store, pc.policy)
				b.StartTimer()
				s.run(b, func() {
					ents, _, err := s.f.ReadDirAttrs("/pub")
					must(b, err)
					if len(ents) != files {
						b.Fatalf("%d entries, want %d", len(ents), files)
					}
				}, func() {
					ents, err := os.ReadDir(nd)
					must(b, err)
					for _, e := range ents {
						_, err := e.Info()
						must(b, err)
					}
					if len(ents) != files {
						b.Fatalf("native: %d entries, want %d", len(ents), files)
					}
				})
			}
			s.report(b, 1, "listing")
		})
	}
}

// reopen opens the store afresh under policy: nothing of the tree is in
// RAM yet.
func (s *sideBySide) reopen(b *testing.B, store string, policy sfs.Policy) {
	if s.f != nil {
		must(b, s.f.Close())
	}
	f, err := sfs.Open(b.Context(), store, sfs.Options{Policy: policy})
	must(b, err)
	b.Cleanup(func() { f.Close() })
	s.f, s.nodes = f, f.Inodes()
}
