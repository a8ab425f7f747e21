package fs_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// A file hard-linked before the policy applied is as hidden, or as
// read-only, under its other names: pub/h (a name of ro/f) and pub/s (of
// secrets/k) used to write and read what the rules protect. The other
// names can still be removed, and links of unprotected files work.
func TestHardLinkMadeBeforePolicy(t *testing.T) {
	f, store := open(t, sfs.Options{})
	for _, d := range []string{"/ro", "/secrets", "/pub"} {
		must(t, f.Mkdir(d, 0o755))
	}
	must(t, f.WriteFile("/ro/f", []byte("ro"), 0o644))
	must(t, f.WriteFile("/secrets/k", []byte("s3cret"), 0o644))
	must(t, f.WriteFile("/pub/plain", []byte("plain"), 0o644))
	for link, target := range map[string]string{"/pub/h": "/ro/f", "/pub/s": "/secrets/k", "/pub/plain2": "/pub/plain", "/pub/h2": "/ro/f"} {
		must(t, f.Link(target, link))
	}
	f = reopen(t, f, store, sfs.Options{Policy: sfs.Policy{Hidden: []string{"secrets/**"}, ReadOnly: []string{"ro/**"}}})
	x := f.Inodes()
	pub, err := x.Lookup(sqlstore.Root, "pub")
	must(t, err)
	for _, tc := range []struct {
		name string
		err  error
		want syscall.Errno
	}{
		{"read a name of a hidden file", errOf(f.ReadFile("/pub/s")), syscall.ENOENT},
		{"stat it", errOf(f.Stat("/pub/s")), syscall.ENOENT},
		{"look it up by inode", errOf(x.Lookup(pub.Ino, "s")), syscall.ENOENT},
		{"link it again", f.Link("/pub/s", "/pub/s3"), syscall.ENOENT},
		{"write a name of a read-only file", f.WriteFile("/pub/h", []byte("w"), 0o644), syscall.EROFS},
		{"open it for writing", errOf(f.OpenFile("/pub/h", os.O_WRONLY, 0)), syscall.EROFS},
		{"chmod it", f.Chmod("/pub/h", 0o600), syscall.EROFS},
		{"truncate it", f.Truncate("/pub/h", 0), syscall.EROFS},
		{"link it again", f.Link("/pub/h", "/pub/h3"), syscall.EROFS},
		{"write it by inode", errOf(writeByInode(x, pub.Ino, "h")), syscall.EROFS},
		{"chmod it by inode", errOf(chmodByInode(x, pub.Ino, "h")), syscall.EROFS},
		{"read a name of a read-only file", errOf(f.ReadFile("/pub/h")), 0},
		{"write a plain link", f.WriteFile("/pub/plain2", []byte("w"), 0o644), 0},
		{"link a plain file", f.Link("/pub/plain", "/pub/plain3"), 0},
		{"remove a name of a read-only file", f.Remove("/pub/h2"), 0},
		{"rename a name of a hidden file", f.Rename("/pub/s", "/pub/s4"), 0},
	} {
		if tc.want == 0 && tc.err != nil || tc.want != 0 && !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if b, err := f.ReadFile("/ro/f"); err != nil || string(b) != "ro" {
		t.Errorf("ro/f: %q %v", b, err)
	}
	if b, err := f.ReadFile("/pub/plain"); err != nil || string(b) != "w" {
		t.Errorf("pub/plain: %q %v", b, err)
	}
}

func writeByInode(x sfs.Inodes, dir uint64, name string) (int, error) {
	a, err := x.Lookup(dir, name)
	if err != nil {
		return 0, err
	}
	return x.WriteAt(a.Ino, []byte("w"), 0, true)
}

func chmodByInode(x sfs.Inodes, dir uint64, name string) (sfs.Attr, error) {
	a, err := x.Lookup(dir, name)
	if err != nil {
		return a, err
	}
	mode := uint32(0o600)
	return x.SetAttr(a.Ino, sfs.SetAttr{Mode: &mode})
}

// A listing leaves out a name of a file hidden under another name, as it
// leaves out hidden names: the kernel takes a READDIRPLUS entry for a
// lookup, and with no open to ask (no_open) reads by inode at once, so a
// listed pub/s was cat-able through the mount though its lookup refused.
func TestHardLinkMadeBeforePolicyListed(t *testing.T) {
	f, store := open(t, sfs.Options{})
	must(t, f.Mkdir("/secrets", 0o755))
	must(t, f.Mkdir("/pub", 0o755))
	must(t, f.WriteFile("/secrets/k", []byte("s3cret"), 0o644))
	must(t, f.WriteFile("/pub/plain", []byte("plain"), 0o644))
	must(t, f.Link("/secrets/k", "/pub/s"))
	must(t, f.Link("/pub/plain", "/pub/plain2"))
	f = reopen(t, f, store, sfs.Options{Policy: sfs.Policy{Hidden: []string{"secrets/**"}}})
	x := f.Inodes()
	pub, err := x.Lookup(sqlstore.Root, "pub")
	must(t, err)
	ents, _, err := x.ReadDir(pub.Ino, 0, 100)
	must(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
		if e.Name == "s" {
			b := make([]byte, 16)
			n, _ := x.ReadAt(e.Ino, b, 0)
			t.Errorf("pub/s listed by inode, and its inode read: %q", b[:n])
		}
	}
	if len(names) != 2 {
		t.Errorf("pub lists %v, want plain and plain2", names)
	}
	des, err := f.ReadDir("/pub")
	must(t, err)
	for _, d := range des {
		if d.Name == "s" {
			t.Errorf("pub/s listed by path")
		}
	}
	// An exchange keeps both names but swaps the files they name: the
	// name of the hidden file is the one left out.
	must(t, f.Rename2("/pub/s", "/pub/plain", sfs.RenameExchange))
	des, err = f.ReadDir("/pub")
	must(t, err)
	var after []string
	for _, d := range des {
		after = append(after, d.Name)
	}
	if strings.Join(after, " ") != "plain2 s" {
		t.Errorf("after exchanging pub/s and pub/plain, pub lists %v, want plain2 and s", after)
	}
}

// Random links, unlinks, renames and policy changes (a reopen under other
// rules) over a tree of hard-linked files: after each step every path is
// exactly as hidden and as read-only as a model finds from scratch, a
// file being as protected as its most protected name, and every listing
// leaves out what is hidden. The core keeps what protects a file with
// several names instead of asking the store each time; this is what shows
// that nothing it allows makes that stale.
func TestLinkProtectionRandom(t *testing.T) {
	hiddenPool := []string{"sec/**", "*.key", "a/*/x"}
	readOnlyPool := []string{"ro/**", "**/sub/*", "*.lock", "pub/f"}
	dirNames := []string{"a", "ro", "sec", "sub", "pub"}
	fileNames := []string{"x", "k.key", "l.lock", "f"}
	pick := func(rng *rand.Rand, pool []string) []string {
		var out []string
		for _, g := range pool {
			if rng.IntN(2) == 0 {
				out = append(out, g)
			}
		}
		return out
	}
	for api, mk := range modelAPIs {
		for seed := range uint64(8) {
			t.Run(fmt.Sprintf("%s/%d", api, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 11))
				f, store := open(t, sfs.Options{})
				model := map[string]int{} // path -> entry id
				isDir := map[int]bool{}
				id := 0
				var files []string
				var build func(dir string, depth int)
				build = func(dir string, depth int) {
					for _, n := range dirNames {
						if depth < 2 && rng.IntN(3) == 0 {
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
							files = append(files, p)
						}
					}
				}
				build("/", 0)
				// Links made before any policy applies.
				for range len(files) {
					from := files[rng.IntN(len(files))]
					var dirs []string
					for p, i := range model {
						if isDir[i] {
							dirs = append(dirs, p)
						}
					}
					sort.Strings(dirs)
					dirs = append(dirs, "/")
					to := path.Join(dirs[rng.IntN(len(dirs))], fileNames[rng.IntN(len(fileNames))])
					if f.Link(from, to) == nil {
						model[to] = model[from]
					}
				}
				var policy sfs.Policy
				var x nameAPI
				newPolicy := func() {
					policy = sfs.Policy{Hidden: pick(rng, hiddenPool), ReadOnly: pick(rng, readOnlyPool)}
					f = reopen(t, f, store, sfs.Options{Policy: policy})
					x = mk(f)
				}
				newPolicy()
				paths := func() []string {
					var ps []string
					for p := range model {
						ps = append(ps, p)
					}
					sort.Strings(ps)
					return ps
				}
				for step := range 150 {
					ps := paths()
					var dirs []string
					for _, p := range append(ps, "/") {
						if p == "/" || isDir[model[p]] {
							dirs = append(dirs, p)
						}
					}
					names := append(append([]string(nil), dirNames...), fileNames...)
					to := path.Join(dirs[rng.IntN(len(dirs))], names[rng.IntN(len(names))])
					var from string
					if len(ps) > 0 {
						from = ps[rng.IntN(len(ps))]
					}
					var what string
					switch op := rng.IntN(10); {
					case op == 0:
						what = "policy"
						newPolicy()
					case from == "":
						continue
					case op < 4:
						what = "link " + from + " " + to
						if x.Link(from, to) == nil {
							model[to] = model[from]
						}
					case op < 6:
						what = "remove " + from
						rm := x.Unlink
						if isDir[model[from]] {
							rm = x.Rmdir
						}
						if rm(from) == nil {
							delete(model, from)
						}
					default:
						flags := []uint32{0, 0, sfs.RenameNoReplace, sfs.RenameExchange}[rng.IntN(4)]
						what = fmt.Sprintf("rename %s %s (%d)", from, to, flags)
						if x.Rename2(from, to, flags) != nil || from == to {
							break
						}
						if i, ok := model[to]; ok && i == model[from] {
							break // two names of one file: rename(2) does nothing
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
								}
							} else {
								next[p] = i
							}
						}
						model = next
					}
					checkLinkProtection(t, f, model, isDir, policy, fmt.Sprintf("step %d (%s)", step, what))
				}
			})
		}
	}
}

// checkLinkProtection holds f to the model: a path is hidden when it or
// one above it is covered by a hidden glob, or, for a file, when another
// name of it is; a change through it is refused by its own path's rule
// first, then by its other names'.
func checkLinkProtection(t *testing.T, f *sfs.FS, model map[string]int, isDir map[int]bool, policy sfs.Policy, where string) {
	t.Helper()
	names := map[int][]string{}
	for p, i := range model {
		names[i] = append(names[i], p)
	}
	anyName := func(i int, globs []string) bool {
		for _, p := range names[i] {
			if covered(globs, p) {
				return true
			}
		}
		return false
	}
	hidden := func(p string) bool {
		i := model[p]
		return covered(policy.Hidden, p) || !isDir[i] && anyName(i, policy.Hidden)
	}
	for p, i := range model {
		_, err := f.Lstat(p)
		if want := hidden(p); (err != nil) != want || err != nil && !errors.Is(err, syscall.ENOENT) {
			t.Fatalf("%s: lstat %s (names %v): %v, want hidden %v", where, p, names[i], err, want)
		}
		var want syscall.Errno
		switch {
		case covered(policy.Hidden, p):
			want = syscall.ENOENT
		case covered(policy.ReadOnly, p):
			want = syscall.EROFS
		case isDir[i]:
		case anyName(i, policy.Hidden):
			want = syscall.ENOENT
		case anyName(i, policy.ReadOnly):
			want = syscall.EROFS
		}
		if err := f.Chmod(p, 0o644|uint32(isDirBits(isDir[i]))); want == 0 && err != nil || want != 0 && !errors.Is(err, want) {
			t.Fatalf("%s: chmod %s (names %v): %v, want %v", where, p, names[i], err, want)
		}
	}
	for p, i := range model {
		if !isDir[i] || hidden(p) {
			continue
		}
		var want []string
		for q := range model {
			if path.Dir(q) == p && !hidden(q) {
				want = append(want, path.Base(q))
			}
		}
		sort.Strings(want)
		ents, err := f.ReadDir(p)
		must(t, err)
		var got []string
		for _, e := range ents {
			got = append(got, e.Name)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%s: %s lists %v, want %v", where, p, got, want)
		}
	}
}

func isDirBits(dir bool) uint32 {
	if dir {
		return 0o111
	}
	return 0
}
