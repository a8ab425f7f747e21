package git_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell"
)

// benchFiles is the size of the generated project.
const benchFiles = 10000

// genProject writes a deterministic project of n small text files in
// nested directories and commits it with real git, then adds 120 small
// commits, so log -n 100 has history to walk.
func genProject(b *testing.B, dir string, n int) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		p := filepath.Join(dir, projectPath(i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "package p%d\n\n", i%40)
		for l := range 10 + rng.IntN(60) {
			fmt.Fprintf(&sb, "// line %d of file %d: %x\n", l, i, rng.Uint64())
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	realGit(b, dir, "init", "-q", "-b", "main")
	// No background auto-gc: it repacks while the clones copy objects.
	realGit(b, dir, "config", "gc.auto", "0")
	realGit(b, dir, "add", "-A")
	realGit(b, dir, "commit", "-q", "-m", "import")
	for i := range 120 {
		p := filepath.Join(dir, projectPath((i*37)%n))
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(f, "// change %d\n", i)
		f.Close()
		realGit(b, dir, "commit", "-q", "-am", fmt.Sprintf("change %d", i))
	}
}

func projectPath(i int) string {
	return fmt.Sprintf("pkg%02d/sub%02d/file%05d.go", i%40, (i/40)%25, i)
}

// gitSides is a fresh clone of the same project twice: by real git on a
// native directory and by the built-in on a store.
type gitSides struct {
	native string
	b      *shell.Backend
}

func setupSides(b *testing.B) *gitSides {
	b.Helper()
	requireGit(b)
	src := b.TempDir()
	start := time.Now()
	genProject(b, src, benchFiles)
	b.Logf("generated the project with real git in %v", time.Since(start))
	native := filepath.Join(b.TempDir(), "clone")
	start = time.Now()
	realGit(b, filepath.Dir(native), "clone", "-q", src, native)
	b.Logf("real git clone: %v", time.Since(start))
	sb, fsys := newStore(b)
	start = time.Now()
	importDir(b, fsys, filepath.Join(src, ".git"), "/src/.git")
	b.Logf("imported the source repository's .git into the store: %v", time.Since(start))
	start = time.Now()
	if res := runBuiltin(b, sb, "git clone -q /workspace/src /workspace/clone"); res.code != 0 {
		b.Fatalf("built-in clone: %d %s", res.code, res.stderr)
	}
	b.Logf("built-in clone: %v", time.Since(start))
	return &gitSides{native: native, b: sb}
}

// native runs a command line with bash and real git in the clone.
func (s *gitSides) runNative(b *testing.B, cmdline string) {
	cmd := exec.Command("bash", "-c", cmdline)
	cmd.Dir = s.native
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + s.native, "GIT_CONFIG_NOSYSTEM=1"}
	for k, v := range gitEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var errb strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v %s", cmdline, err, errb.String())
	}
}

func (s *gitSides) runBuiltin(b *testing.B, cmdline string) {
	res, err := s.b.Exec(context.Background(), sidecar.Request{Command: cmdline, Dir: "/workspace/clone", Env: gitEnv, Stdout: io.Discard})
	if err != nil || res.ExitCode != 0 {
		b.Fatalf("%s: %v %+v", cmdline, err, res)
	}
}

// BenchmarkGit10k measures status, add -A && commit, diff and log -n 100
// on a fresh clone of a 10k-file project with one file changed: real git
// on a native directory against the built-in on a store. Each iteration
// runs both sides back to back, so load on the machine hits both alike;
// the metrics are the medians and their ratio (built-in / native).
//
//	go test ./sidecar/git -run '^$' -bench Git10k -benchtime 15x
func BenchmarkGit10k(b *testing.B) {
	s := setupSides(b)
	edit := "echo edit-$RANDOM >> pkg01/sub00/file00001.go"
	// Warm both sides once: the built-in's first status refreshes the
	// stat data of the files it checked out, as git's does.
	s.runNative(b, edit+" && git status")
	s.runBuiltin(b, edit+" && git status")
	for _, op := range []struct{ name, cmd string }{
		{"status", "git status"},
		{"diff", "git diff"},
		{"log-n100", "git log -n 100"},
		{"add-commit", edit + " && git add -A && git commit -q -m edit"},
	} {
		b.Run(op.name, func(b *testing.B) {
			var native, builtin []time.Duration
			for b.Loop() {
				start := time.Now()
				s.runNative(b, op.cmd)
				native = append(native, time.Since(start))
				start = time.Now()
				s.runBuiltin(b, op.cmd)
				builtin = append(builtin, time.Since(start))
			}
			reportSides(b, native, builtin)
		})
	}
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	slices.Sort(s)
	return s[len(s)/2]
}

// fastImport writes a bare repository of n files and commits commits with
// git fast-import (a commit per git process would take minutes here): the
// first commit adds every file, each later one changes one.
func fastImport(b *testing.B, dir string, n, commits int) {
	b.Helper()
	realGit(b, filepath.Dir(dir), "init", "-q", "--bare", "-b", "main", dir)
	rng := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	data := func(s string) { fmt.Fprintf(&sb, "data %d\n%s\n", len(s), s) }
	for c := range commits {
		fmt.Fprintf(&sb, "commit refs/heads/main\ncommitter A U Thor <author@example.com> %d +0000\n", 1700000000+c)
		data(fmt.Sprintf("commit %d", c))
		files := []int{(c * 37) % n}
		if c == 0 {
			files = make([]int, n)
			for i := range files {
				files[i] = i
			}
		}
		for _, i := range files {
			var body strings.Builder
			fmt.Fprintf(&body, "package p%d\n\n", i%40)
			for l := range 10 + rng.IntN(60) {
				fmt.Fprintf(&body, "// line %d of file %d: %x\n", l, i, rng.Uint64())
			}
			fmt.Fprintf(&sb, "M 100644 inline %s\n", projectPath(i))
			data(body.String())
		}
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(sb.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("fast-import: %v\n%s", err, out)
	}
	realGit(b, dir, "config", "http.receivepack", "true")
}

// cachedBenchRepo is the directory holding a bare repository name made
// by fastImport(n, commits), kept in the user's cache directory between
// runs (generating it takes seconds to minutes on a loaded machine). It
// is made under a temporary name and renamed, so an interrupted run
// leaves no half-made repository to reuse.
func cachedBenchRepo(b *testing.B, name string, n, commits int) string {
	b.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		b.Logf("no cache directory (%v): generating the repository in a temporary one", err)
		base = b.TempDir()
	}
	// The version names the generator: bump it when fastImport changes.
	dir := filepath.Join(base, "sqlfs-bench", fmt.Sprintf("git-v1-%d-%d", n, commits))
	if _, err := os.Stat(filepath.Join(dir, name, "HEAD")); err == nil {
		return dir
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		b.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "tmp-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	fastImport(b, filepath.Join(tmp, name), n, commits)
	b.Logf("generated the repository in %v (cached in %s)", time.Since(start), dir)
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkCloneHTTP10k clones a 10,000-file, 1,000-commit repository over
// smart HTTP (git http-backend on 127.0.0.1, basic auth): real git into a
// native directory against the built-in into a store, back to back in
// each iteration; the metrics are the medians and their ratio (built-in
// / native). The server's work (upload-pack building the pack) is in
// both sides' times alike. The repository is generated once and cached
// (cachedBenchRepo); the clones only read it.
//
//	go test ./sidecar/git -run '^$' -bench CloneHTTP10k -benchtime 5x
func BenchmarkCloneHTTP10k(b *testing.B) {
	requireGit(b)
	gs := newGitServer(b, cachedBenchRepo(b, "repo.git", benchFiles, 1000))
	url := gs.URL + "/repo.git"
	auth := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(testUser+":"+testToken))
	sb, _ := netStore(b, allowOnly(b, hostOf(gs.Server)), 0, "127.0.0.1")
	native := b.TempDir()
	var nat, blt []time.Duration
	i := 0
	for b.Loop() {
		i++
		dst := fmt.Sprintf("c%d", i)
		start := time.Now()
		if o := runNative(b, native, "git clone -q "+url+" "+dst, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0="+auth); o.code != 0 {
			b.Fatalf("git clone: %+v", o)
		}
		nat = append(nat, time.Since(start))
		start = time.Now()
		if o := runBuiltin(b, sb, "git clone -q "+url+" "+dst); o.code != 0 {
			b.Fatalf("built-in clone: %+v", o)
		}
		blt = append(blt, time.Since(start))
	}
	reportSides(b, nat, blt)
}

// BenchmarkFetchHTTP10k fetches one new commit (one file changed) into a
// clone of the 10,000-file, 1,000-commit repository over smart HTTP: real
// git into a native directory against the built-in into a store, back to
// back in each iteration, as BenchmarkCloneHTTP10k; what the built-in's
// connectivity check (connected.go) costs shows here.
//
//	go test ./sidecar/git -run '^$' -bench FetchHTTP10k -benchtime 5x
func BenchmarkFetchHTTP10k(b *testing.B) {
	requireGit(b)
	srv := b.TempDir()
	runNative(b, srv, "git clone -q --bare "+filepath.Join(cachedBenchRepo(b, "repo.git", benchFiles, 1000), "repo.git")+" repo.git && git clone -q repo.git w")
	gs := newGitServer(b, srv)
	url := gs.URL + "/repo.git"
	env := []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(testUser+":"+testToken))}
	sb, _ := netStore(b, allowOnly(b, hostOf(gs.Server)), 0, "127.0.0.1")
	native := b.TempDir()
	runNative(b, native, "git clone -q "+url+" c", env...)
	runBuiltin(b, sb, "git clone -q "+url+" c")
	var nat, blt []time.Duration
	i := 0
	for b.Loop() {
		i++
		runNative(b, filepath.Join(srv, "w"), fmt.Sprintf("echo %d >> %s && git commit -qam %d && git push -q", i, projectPath(i), i))
		start := time.Now()
		if o := runNative(b, native, "git -C c fetch -q", env...); o.code != 0 {
			b.Fatalf("git fetch: %+v", o)
		}
		nat = append(nat, time.Since(start))
		start = time.Now()
		if o := runBuiltin(b, sb, "cd c && git fetch -q"); o.code != 0 {
			b.Fatalf("built-in fetch: %+v", o)
		}
		blt = append(blt, time.Since(start))
	}
	reportSides(b, nat, blt)
}

// reportSides reports the medians of native and built-in times and their
// ratio (built-in / native).
func reportSides(b *testing.B, nat, blt []time.Duration) {
	n, g := median(nat), median(blt)
	b.ReportMetric(float64(n.Microseconds())/1000, "native-ms")
	b.ReportMetric(float64(g.Microseconds())/1000, "builtin-ms")
	b.ReportMetric(float64(g)/float64(n), "ratio")
}
