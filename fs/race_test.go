package fs_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// Writers, truncations, O_TRUNC opens, appends, reads (with read-ahead)
// and commits race on a few files with small chunks. Whatever order they
// landed in, what the core serves at the end must be what the store holds
// after a reopen, and the store must pass Check.
func TestConcurrentDataMatchesStore(t *testing.T) {
	const cs = 64
	for round := range 6 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			f, store := open(t, sfs.Options{ChunkSize: cs, CommitInterval: time.Millisecond, NoAudit: true})
			files := []string{"/a", "/b", "/c"}
			for _, name := range files {
				must(t, f.WriteFile(name, bytes.Repeat([]byte{'0'}, 40*cs), 0o644))
			}
			must(t, f.Sync(t.Context()))
			var wg sync.WaitGroup
			for g := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(round), uint64(g)))
					buf := make([]byte, 4*cs)
					for range 300 {
						name := files[r.IntN(len(files))]
						off, n := int64(r.IntN(45*cs)), 1+r.IntN(3*cs)
						b := byte('a' + r.IntN(26))
						var err error
						switch r.IntN(8) {
						case 0, 1:
							err = writeAt(f, name, os.O_RDWR, bytes.Repeat([]byte{b}, n), off)
						case 2:
							err = f.Truncate(name, off)
						case 3:
							err = writeAt(f, name, os.O_RDWR|os.O_TRUNC, bytes.Repeat([]byte{b}, n), off)
						case 4:
							err = writeAt(f, name, os.O_WRONLY|os.O_APPEND, bytes.Repeat([]byte{b}, n), 0)
						case 5:
							err = f.Flush(t.Context())
						default:
							fl, oerr := f.OpenFile(name, os.O_RDONLY, 0)
							if oerr != nil {
								err = oerr
								break
							}
							for pos := int64(0); pos < 10*cs; pos += int64(len(buf)) {
								_, _ = fl.ReadAt(buf, pos)
							}
							fl.Close()
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			want := map[string][]byte{}
			for _, name := range files {
				b, err := f.ReadFile(name)
				must(t, err)
				want[name] = b
			}
			g := reopen(t, f, store, sfs.Options{ChunkSize: cs})
			check(t, g)
			for _, name := range files {
				got, err := g.ReadFile(name)
				must(t, err)
				if !bytes.Equal(got, want[name]) {
					t.Fatalf("%s after reopen differs from what the core served (len %d vs %d)", name, len(got), len(want[name]))
				}
			}
		})
	}
}

func writeAt(f *sfs.FS, name string, flag int, p []byte, off int64) error {
	fl, err := f.OpenFile(name, flag, 0)
	if err != nil {
		return err
	}
	defer fl.Close()
	_, err = fl.WriteAt(p, off)
	return err
}
