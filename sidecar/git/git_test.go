package git_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sqlstore"
)

func requireGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		fusetest.Require(t, "git", err)
	}
}

// realGit runs the real git in dir with the fixed environment.
func realGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
	for k, v := range gitEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// importDir copies a native directory into the store at to.
func importDir(t testing.TB, fsys *sfs.FS, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := path.Join(to, filepath.ToSlash(rel))
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return fsys.MkdirAll(dst, 0o755)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return fsys.Symlink(target, dst)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := fsys.WriteFile(dst, data, uint32(fi.Mode().Perm())); err != nil {
				return err
			}
			return fsys.Chmod(dst, uint32(fi.Mode().Perm()))
		}
	})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
}

// makeHistory builds a small repository with real git: renames, a
// deletion, a binary file, a symlink, a branch and a tag.
func makeHistory(t testing.TB, dir string) {
	t.Helper()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	realGit(t, dir, "init", "-q", "-b", "main")
	write("README", "hello\n")
	write("src/a.go", "package a\n\nfunc A() {}\n")
	write("bin.dat", "\x00\x01\x02")
	if err := os.Symlink("README", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	realGit(t, dir, "add", ".")
	realGit(t, dir, "commit", "-q", "-m", "first")
	realGit(t, dir, "tag", "-a", "v1", "-m", "version one")
	realGit(t, dir, "mv", "src/a.go", "src/b.go")
	write("README", "hello\nworld\n")
	realGit(t, dir, "rm", "-q", "bin.dat")
	realGit(t, dir, "commit", "-q", "-am", "second")
	realGit(t, dir, "branch", "side", "HEAD~1")
	write("README", "hello\nthere\n")
	write("new.txt", "untracked\n")
}

// TestReadsWhatGitWrote gives the built-in repositories real git wrote
// (index versions 2, 3 and 4; loose objects; packs with packed refs) and
// compares what it says with what real git says.
func TestReadsWhatGitWrote(t *testing.T) {
	requireGit(t)
	for _, tc := range []struct {
		name  string
		setup []string
	}{
		{"index-v2-loose", []string{"update-index", "--index-version", "2"}},
		{"index-v3", []string{"update-index", "--index-version", "3"}},
		{"index-v4", []string{"update-index", "--index-version", "4"}},
		{"packed", []string{"gc", "-q", "--aggressive"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			native := t.TempDir()
			makeHistory(t, native)
			realGit(t, native, tc.setup...)
			if tc.name == "packed" {
				if _, err := os.Stat(filepath.Join(native, ".git/packed-refs")); err != nil {
					t.Fatalf("gc left no packed-refs: %v", err)
				}
			}
			b, fsys := newStore(t)
			importDir(t, fsys, native, "/")
			for _, cmd := range []string{
				"git status", "git status -s -b", "git status --porcelain=v2 -b",
				"git log --stat", "git log -p --format=%H", "git diff", "git diff HEAD~1 --stat",
				"git show v1 --stat", "git ls-files -s", "git branch", "git tag", "git rev-parse side HEAD",
				"git show HEAD:src/b.go",
			} {
				args := strings.Fields(cmd)[1:]
				want := realGit(t, native, args...)
				got := runBuiltin(t, b, cmd)
				if got.code != 0 || got.stdout != want {
					t.Errorf("%s: exit %d, stderr %q\n--- git\n%s--- built-in\n%s", cmd, got.code, got.stderr, want, got.stdout)
				}
			}
			// And real git reads what the built-in then writes.
			if res := runBuiltin(t, b, "git add -A && git commit -q -m third && git checkout -q side"); res.code != 0 {
				t.Fatalf("commit: %d %s", res.code, res.stderr)
			}
			out := t.TempDir()
			export(t, fsys, "/", out)
			realGit(t, out, "fsck", "--strict", "--no-dangling")
			if got := realGit(t, out, "log", "--format=%s", "main"); got != "third\nsecond\nfirst\n" {
				t.Errorf("real git log after the built-in's commit: %q", got)
			}
			if got := realGit(t, out, "status", "--porcelain"); got != "" {
				t.Errorf("real git status after the built-in's checkout: %q", got)
			}
		})
	}
}

// TestAudited checks every change git makes is in the audit trail under
// the exec's actor.
func TestAudited(t *testing.T) {
	b, fsys := newStore(t)
	res, err := b.Exec(context.Background(), sidecar.Request{
		Command: "git init -q && echo hi > f && git add f && git commit -q -m one",
		Env:     gitEnv, Actor: "exec:git-audit",
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %v %+v", err, res)
	}
	if err := fsys.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs, err := fsys.Store().Audit(context.Background(), sqlstore.AuditFilter{PathPrefix: "/.git", Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]bool{}
	for _, ev := range evs {
		if ev.Actor != "exec:git-audit" {
			t.Errorf("%s %s audited as %q", ev.Op, ev.Path, ev.Actor)
		}
		ops[ev.Op+" "+ev.Path] = true
	}
	for _, want := range []string{"mkdir /.git", "create /.git/HEAD"} {
		if !ops[want] {
			t.Errorf("no audit event %q in %v", want, ops)
		}
	}
	if len(evs) < 10 {
		t.Errorf("only %d audit events for init+add+commit", len(evs))
	}
}

// TestUnsupportedForms checks forms the built-in does not implement say so
// with exit status 1 and change nothing.
func TestUnsupportedForms(t *testing.T) {
	b, _ := newStore(t)
	if res := runBuiltin(t, b, "git init -q && echo a > a && git add a && git commit -q -m a && git branch side && echo b >> a && git commit -q -am b && git checkout -q side && echo c >> a && echo c > c && git add . && git commit -q -m c"); res.code != 0 {
		t.Fatalf("setup: %d %s", res.code, res.stderr)
	}
	before := runBuiltin(t, b, "git log --all --format=%H && git status --porcelain=v2 -b && git ls-files -s")
	for _, cmd := range []string{
		"git pull --rebase",    // option not implemented
		"git commit",           // no editor
		"git status -z",        // option not implemented
		"git log --graph",      // option not implemented
		"git add '*.txt'",      // pathspec magic
		"git rebase master",    // command not implemented
		"git log --format=%G?", // placeholder not implemented
	} {
		got := runBuiltin(t, b, cmd)
		if got.code != 1 || !strings.Contains(got.stderr, "not supported") {
			t.Errorf("%s: exit %d, stderr %q; want 1 and a clear message", cmd, got.code, got.stderr)
		}
		if got.stdout != "" {
			t.Errorf("%s printed %q", cmd, got.stdout)
		}
	}
	after := runBuiltin(t, b, "git log --all --format=%H && git status --porcelain=v2 -b && git ls-files -s")
	if after.stdout != before.stdout {
		t.Errorf("unsupported forms changed the repository:\n%s\n---\n%s", before.stdout, after.stdout)
	}
}

// TestCancelStopsAdd checks a git add over many files stops at the
// timeout instead of running to its end.
func TestCancelStopsAdd(t *testing.T) {
	b, fsys := newStore(t)
	const n = 4000
	for i := range n {
		if err := fsys.MkdirAll(fmt.Sprintf("/d%02d", i%50), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fsys.WriteFile(fmt.Sprintf("/d%02d/f%05d", i%50, i), []byte(strings.Repeat(fmt.Sprint(i), 200)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if res := runBuiltin(t, b, "git init -q"); res.code != 0 {
		t.Fatal(res.stderr)
	}
	// Uncancelled, the add takes this long once its objects exist (the
	// first add also writes them, which the timed add below need not).
	var uncancelled time.Duration
	for range 2 {
		full := time.Now()
		if res := runBuiltin(t, b, "git add -A && git rm -q -r --cached ."); res.code != 0 {
			t.Fatal(res.stderr)
		}
		uncancelled = time.Since(full)
	}
	timeout := uncancelled / 10
	start := time.Now()
	res, err := b.Exec(context.Background(), sidecar.Request{Command: "git add -A", Env: gitEnv, Timeout: timeout})
	took := time.Since(start)
	t.Logf("uncancelled %v, timeout %v, stopped after %v", uncancelled, timeout, took)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 {
		t.Fatalf("git add finished within %v (uncancelled %v)", timeout, uncancelled)
	}
	if took > timeout+uncancelled/4 {
		t.Errorf("git add stopped %v after a %v timeout (uncancelled it takes %v)", took, timeout, uncancelled)
	}
}

// TestLimits checks git's output is capped like any command's and its
// writes count against the exec's write budget.
func TestLimits(t *testing.T) {
	b, _ := newStore(t)
	setup := "git init -q && for i in $(seq 1 200); do git commit -q --allow-empty -m \"commit number $i\"; done"
	if res := runBuiltin(t, b, setup); res.code != 0 {
		t.Fatalf("setup: %d %s", res.code, res.stderr)
	}
	var out, errb strings.Builder
	res, err := b.Exec(context.Background(), sidecar.Request{Command: "git log", Env: gitEnv, Stdout: &out, Stderr: &errb, Limits: sidecar.Limits{MaxOutputBytes: 2000}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Len()+errb.Len() > 2200 || !strings.Contains(out.String()+errb.String(), "output truncated") {
		t.Errorf("git log with a 2000-byte output cap printed %d+%d bytes (exit %d)", out.Len(), errb.Len(), res.ExitCode)
	}
	// git add past the write budget fails, says why and stages nothing.
	if res := runBuiltin(t, b, "seq 1 20000 > big"); res.code != 0 {
		t.Fatal(res.stderr)
	}
	out.Reset()
	errb.Reset()
	res, err = b.Exec(context.Background(), sidecar.Request{Command: "git add big", Env: gitEnv, Stdout: &out, Stderr: &errb, Limits: sidecar.Limits{MaxWriteBytes: 64}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || !strings.Contains(errb.String(), "write limit of 64 bytes exceeded") {
		t.Errorf("git add past the write budget: exit %d, stderr %q", res.ExitCode, errb.String())
	}
	if st := runBuiltin(t, b, "git status --porcelain"); st.stdout != "?? big\n" {
		t.Errorf("after the refused add, status is %q", st.stdout)
	}
}

// TestAbbrevGrowsWithPackedObjects checks the built-in abbreviates like git
// in a repository of 16,384 packed objects, where git's automatic length
// becomes 8 hex digits (7 below that).
func TestAbbrevGrowsWithPackedObjects(t *testing.T) {
	requireGit(t)
	for _, blobs := range []int{16381, 16382} { // plus a tree and a commit
		t.Run(fmt.Sprint(blobs+2), func(t *testing.T) {
			native := t.TempDir()
			realGit(t, native, "init", "-q")
			var stream strings.Builder
			for i := 0; i < blobs; i++ {
				d := fmt.Sprintf("blob %d\n", i)
				fmt.Fprintf(&stream, "blob\nmark :%d\ndata %d\n%s\n", i+1, len(d), d)
			}
			stream.WriteString("commit refs/heads/main\ncommitter a <a@b> 0 +0000\ndata 2\nm\nM 100644 :1 f\n\n")
			cmd := exec.Command("git", "fast-import", "--quiet")
			cmd.Dir, cmd.Stdin = native, strings.NewReader(stream.String())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("fast-import: %v\n%s", err, out)
			}
			realGit(t, native, "checkout", "-q", "main")
			b, fsys := newStore(t)
			importDir(t, fsys, native, "/")
			for _, cmd := range []string{"git log --oneline", "git rev-parse --short HEAD", "git show --format=%h:%t"} {
				want := realGit(t, native, strings.Fields(cmd)[1:]...)
				got := runBuiltin(t, b, cmd)
				if got.code != 0 || got.stdout != want {
					t.Errorf("%s: exit %d, stderr %q\n--- git\n%s--- built-in\n%s", cmd, got.code, got.stderr, want, got.stdout)
				}
			}
		})
	}
}

// TestMergeConflictRefused: a merge or a stash apply or pop whose changes
// collide (the same line changed differently, and changes to adjacent
// lines) prints git's Auto-merging and CONFLICT lines, as real git does,
// and exits 1 without changing the worktree, the index, HEAD or the stash
// (real git would write conflict markers; the built-in writes nothing).
func TestMergeConflictRefused(t *testing.T) {
	const base = `git init -q -b main
seq 1 6 > f && printf 'a\nb\nc\n' > g && echo k > keep && git add . && git commit -q -m base
`
	const conflict = "Auto-merging f\nCONFLICT (content): Merge conflict in f\nAuto-merging g\nCONFLICT (content): Merge conflict in g\n"
	for _, tc := range []struct {
		name, setup, cmd, kept string
	}{
		{"merge", `git checkout -q -b topic
sed -i 's/^3$/THREE/' f && sed -i 's/^b$/B/' g && git commit -q -am topic
git checkout -q main
sed -i 's/^3$/drei/' f && sed -i 's/^a$/A/' g && git commit -q -am main
`, "git merge topic\n", ""},
		{"stash apply", `sed -i 's/^3$/THREE/' f && sed -i 's/^b$/B/' g && git stash -q
sed -i 's/^3$/drei/' f && sed -i 's/^a$/A/' g && git commit -q -am main
`, "git stash apply\n", ""},
		{"stash pop", `sed -i 's/^3$/THREE/' f && sed -i 's/^b$/B/' g && git stash -q
sed -i 's/^3$/drei/' f && sed -i 's/^a$/A/' g && git commit -q -am main
`, "git stash pop\n", "The stash entry is kept in case you need it again.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := "git status --porcelain; git log --format=%s; git stash list; cat f g; ls .git\n"
			native := t.TempDir()
			want := runNative(t, native, base+tc.setup+tc.cmd)
			b, _ := newStore(t)
			before := runBuiltin(t, b, base+tc.setup+after)
			got := runBuiltin(t, b, tc.cmd)
			if !strings.HasPrefix(want.stdout, conflict) || !strings.HasSuffix(want.stdout, tc.kept) || want.code != 1 {
				t.Fatalf("real git: exit %d\n%s", want.code, want.stdout)
			}
			if got.stdout != conflict+tc.kept || got.code != 1 || !strings.Contains(got.stderr, "nothing changed") {
				t.Errorf("built-in: exit %d\n%s%s", got.code, got.stdout, got.stderr)
			}
			if now := runBuiltin(t, b, after); now != before {
				t.Errorf("the refused %s changed the repository:\n%+v\nwas\n%+v", tc.name, now, before)
			}
		})
	}
}
