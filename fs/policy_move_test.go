package fs_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/bmatcuk/doublestar/v4"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/metrics"
)

// A directory's move renames everything below it, so it must not carry a
// hidden or read-only entry out of its rule's reach: conf/a.key stays
// hidden and conf/sub/b.yml read-only however conf is renamed.
func TestMoveParentOfProtected(t *testing.T) {
	policy := sfs.Policy{Hidden: []string{"conf/**/*.key"}, ReadOnly: []string{"conf/sub/**"}}
	for api, mk := range modelAPIs {
		t.Run(api, func(t *testing.T) {
			f, store := open(t, sfs.Options{})
			for _, d := range []string{"/conf", "/conf/sub", "/pub", "/empty"} {
				must(t, f.Mkdir(d, 0o755))
			}
			for p, data := range map[string]string{"/conf/a.key": "s3cret", "/conf/sub/b.yml": "ro", "/conf/ok": "ok", "/pub/c.key": "mine"} {
				must(t, f.WriteFile(p, []byte(data), 0o644))
			}
			f = reopen(t, f, store, sfs.Options{Policy: policy})
			x := mk(f)
			for _, tc := range []struct {
				from, to string
				flags    uint32
				want     syscall.Errno
			}{
				{"/conf", "/moved", 0, syscall.EACCES},
				{"/conf", "/pub/conf", 0, syscall.EACCES},
				{"/conf", "/empty", 0, syscall.EACCES},
				{"/conf", "/pub", sfs.RenameExchange, syscall.EACCES},
				{"/pub", "/conf", sfs.RenameExchange, syscall.EACCES},
				// Into the rule's reach: as writing conf/c.key would be.
				{"/pub", "/conf2", 0, 0},
				{"/conf2", "/conf/p", 0, syscall.EACCES},
			} {
				err := x.Rename2(tc.from, tc.to, tc.flags)
				if tc.want == 0 && err != nil || tc.want != 0 && !errors.Is(err, tc.want) {
					t.Errorf("rename %s %s (%d): %v, want %v", tc.from, tc.to, tc.flags, err, tc.want)
				}
			}
			if b, err := f.ReadFile("/conf/ok"); err != nil || string(b) != "ok" {
				t.Errorf("conf/ok: %q %v", b, err)
			}
			for _, p := range []string{"/moved/a.key", "/pub/conf/a.key", "/empty/a.key", "/pub/a.key"} {
				if b, err := f.ReadFile(p); err == nil {
					t.Errorf("%s readable: %q", p, b)
				}
			}
			if err := f.WriteFile("/conf/sub/b.yml", []byte("w"), 0o644); !errors.Is(err, syscall.EROFS) {
				t.Errorf("conf/sub/b.yml writable: %v", err)
			}
		})
	}
}

// Random renames (plain, no-replace, exchange) over a random tree under
// anchored and base-name rules: every entry stays exactly as hidden and
// as read-only as it started, and the tree is what the renames made.
func TestMoveKeepsRulesRandom(t *testing.T) {
	hidden := []string{"conf/*.key", "*/deep/x", "top.pem"}
	readOnly := []string{"a/b/**", "**/sub/z", "*.lock"}
	policy := sfs.Policy{Hidden: hidden, ReadOnly: readOnly}
	dirNames := []string{"a", "b", "conf", "deep", "sub"}
	fileNames := []string{"x", "y.key", "z", "w.lock", "top.pem"}
	for api, mk := range modelAPIs {
		for seed := range uint64(12) {
			t.Run(fmt.Sprintf("%s/%d", api, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 7))
				f, store := open(t, sfs.Options{})
				model := map[string]int{} // path -> entry id (dirs end in "/" in kinds)
				isDir := map[int]bool{}
				id := 0
				var build func(dir string, depth int)
				build = func(dir string, depth int) {
					for _, n := range dirNames {
						if depth < 3 && rng.IntN(3) == 0 {
							p := path.Join(dir, n)
							must(t, f.Mkdir(p, 0o755))
							id++
							model[p], isDir[id] = id, true
							build(p, depth+1)
						}
					}
					for _, n := range fileNames {
						if rng.IntN(2) == 0 {
							p := path.Join(dir, n)
							must(t, f.WriteFile(p, []byte(p), 0o644))
							id++
							model[p] = id
						}
					}
				}
				build("/", 0)
				f = reopen(t, f, store, sfs.Options{Policy: policy})
				x := mk(f)
				orig := map[int]string{}
				for p, i := range model {
					orig[i] = p
				}
				paths := func() []string {
					var ps []string
					for p := range model {
						ps = append(ps, p)
					}
					sort.Strings(ps)
					return ps
				}
				for step := range 300 {
					ps := paths()
					from := ps[rng.IntN(len(ps))]
					var dirs []string
					for _, p := range append(ps, "/") {
						if p == "/" || isDir[model[p]] {
							dirs = append(dirs, p)
						}
					}
					names := append(append([]string(nil), dirNames...), fileNames...)
					to := path.Join(dirs[rng.IntN(len(dirs))], names[rng.IntN(len(names))])
					flags := []uint32{0, 0, sfs.RenameNoReplace, sfs.RenameExchange}[rng.IntN(4)]
					if x.Rename2(from, to, flags) != nil || from == to {
						continue
					}
					next := map[string]int{}
					move := func(p, a, b string) (string, bool) {
						if p == a || strings.HasPrefix(p, a+"/") {
							return b + p[len(a):], true
						}
						return "", false
					}
					for p, i := range model {
						if q, ok := move(p, from, to); ok {
							next[q] = i
						} else if q, ok := move(p, to, from); ok {
							if flags == sfs.RenameExchange {
								next[q] = i
							} // else: replaced, gone
						} else {
							next[p] = i
						}
					}
					model = next
					for p, i := range model {
						for _, r := range []struct {
							kind  string
							globs []string
						}{{"hidden", hidden}, {"read-only", readOnly}} {
							if covered(r.globs, orig[i]) != covered(r.globs, p) {
								t.Fatalf("step %d: rename %s %s (%d) moved %s to %s: %s %v -> %v",
									step, from, to, flags, orig[i], p, r.kind, covered(r.globs, orig[i]), covered(r.globs, p))
							}
						}
					}
				}
				for p := range model {
					_, err := f.Lstat(p)
					if (err != nil) != covered(hidden, p) {
						t.Errorf("lstat %s: %v, hidden %v", p, err, covered(hidden, p))
					}
				}
			})
		}
	}
}

// covered is the policy's matching, written again: p or a directory above
// it matches; a glob without "/" matches base names.
func covered(globs []string, p string) bool {
	for rel := strings.TrimPrefix(p, "/"); rel != "" && rel != "."; rel = path.Dir(rel) {
		for _, g := range globs {
			name := rel
			if !strings.Contains(g, "/") {
				name = path.Base(rel)
			}
			if ok, _ := doublestar.Match(g, name); ok {
				return true
			}
		}
	}
	return false
}

// dirLoads reads how many directories the cores have read from their
// stores (the dentry cache's misses).
func dirLoads(t *testing.T) float64 {
	t.Helper()
	mfs, err := metrics.Registry.Gather()
	must(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "sqlfs_meta_cache_misses_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "cache" && l.GetValue() == "dentry" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatal("no sqlfs_meta_cache_misses_total{cache=dentry}")
	return 0
}

// A "**/name" rule covers a base name at any depth, as "name" does, and a
// directory's move keeps every base name below it: the move has nothing
// to walk, and reads none of the moved tree from the store (a rename of
// node_modules under "**/.env" read every directory below it, the core
// locked meanwhile).
func TestMoveUnderDoubleStarBaseRule(t *testing.T) {
	f, store := open(t, sfs.Options{})
	const dirs = 200
	for i := range dirs {
		d := fmt.Sprintf("/big/d%d", i)
		must(t, f.MkdirAll(d, 0o755))
		must(t, f.WriteFile(d+"/.env", []byte("k"), 0o644))
	}
	f = reopen(t, f, store, sfs.Options{Policy: sfs.Policy{Hidden: []string{"**/.env"}}})
	before := dirLoads(t)
	must(t, f.Rename("/big", "/moved"))
	if n := dirLoads(t) - before; n > 10 {
		t.Errorf("the move read %.0f directories from the store", n)
	}
	if _, err := f.ReadFile("/moved/d7/.env"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("moved/d7/.env: %v, want ENOENT", err)
	}
}
