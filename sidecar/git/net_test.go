package git_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sqlfs/sqlfs/egress"
	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/httpcred"
	"github.com/sqlfs/sqlfs/sidecar/shell"
)

const (
	testUser    = "agent-bot"
	testToken   = "tok-7f3a9c1e5b2d4f60"
	httpBackend = "/usr/lib/git-core/git-http-backend"
)

// gitServer is git http-backend (Debian's git) behind Go's CGI handler on
// 127.0.0.1, serving the bare repositories under root to requests with
// testUser's basic auth, and counting the requests it saw.
type gitServer struct {
	*httptest.Server
	// root is the directory served; a test may point the same server
	// (the same URL, which merge messages name) at another between runs.
	root     atomic.Pointer[string]
	requests atomic.Int64
	authSeen atomic.Int64 // requests that carried an Authorization header
}

func newGitServer(t testing.TB, root string) *gitServer {
	t.Helper()
	if _, err := os.Stat(httpBackend); err != nil {
		fusetest.Require(t, "git http-backend", err)
	}
	gs := &gitServer{}
	gs.root.Store(&root)
	gs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		gs.requests.Add(1)
		if req.Header.Get("Authorization") != "" {
			gs.authSeen.Add(1)
		}
		user, pass, ok := req.BasicAuth()
		if !ok || user != testUser || pass != testToken {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		// http-backend allows push to an authenticated user.
		r2 := req.Clone(req.Context())
		r2.Header.Del("Authorization")
		backend := &cgi.Handler{Path: httpBackend, Env: []string{"GIT_PROJECT_ROOT=" + *gs.root.Load(), "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=" + user}}
		backend.ServeHTTP(w, r2)
	}))
	t.Cleanup(gs.Close)
	return gs
}

// seedBare writes a bare repository with real git: two branches, a
// lightweight and an annotated tag, a few commits of a small tree.
func seedBare(t *testing.T, dir string) {
	t.Helper()
	work := t.TempDir()
	runNative(t, work, `set -e
git init -q -b main
mkdir src && echo 'package main' > src/main.go && printf 'a\nb\nc\n' > notes.txt
git add . && git commit -q -m 'first'
echo d >> notes.txt && git commit -q -am 'second'
git tag light
git tag -a -m 'release one' v1
git switch -q -c topic
echo t > topic.txt && git add topic.txt && git commit -q -m 'topic work'
git switch -q main
echo e >> notes.txt && git commit -q -am 'third'
git clone -q --bare . `+dir+`
git -C `+dir+` config http.receivepack true
`)
}

// allowOnly is the owner's egress transport with a policy of the given
// rules (loopback is refused unless a rule names its address).
func allowOnly(t testing.TB, rules ...string) http.RoundTripper {
	t.Helper()
	p, err := egress.NewPolicy(rules...)
	if err != nil {
		t.Fatal(err)
	}
	return (&egress.Dialer{Policy: p}).Transport()
}

func hostOf(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

// netStore is a store whose shell reaches the network through rt, with
// the test token injected for the given host globs.
func netStore(t testing.TB, rt http.RoundTripper, maxResponse int64, credHosts ...string) (*shell.Backend, *sfs.FS) {
	t.Helper()
	var rules []httpcred.Rule
	for _, h := range credHosts {
		host, err := egress.ParseRule(h)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, httpcred.Rule{Host: host, User: testUser, Token: testToken})
	}
	var opts shell.Options
	if rt != nil {
		ct, err := httpcred.New(rt, httpcred.Options{Rules: rules, MaxResponseBytes: maxResponse})
		if err != nil {
			t.Fatal(err)
		}
		opts.HTTP = ct
	}
	return newStoreWith(t, opts)
}

// TestHTTPRemoteAgainstGit runs the same clone, ls-remote, fetch, push and
// pull script with real git on a native directory and with the built-in
// on a store, each against its own git http-backend serving an identical
// repository, and compares output, exit status, trees and what real git
// says about both clones and both servers' repositories afterwards.
func TestHTTPRemoteAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		fusetest.Require(t, "git", err)
	}
	script := `git clone URL/repo.git
cd repo
git log --oneline --all
git status -sb
git ls-remote
git ls-remote --heads origin
git ls-remote --tags URL/repo.git
git remote -v
git config --get remote.origin.fetch
echo new > new.txt && git add new.txt && git commit -q -m 'from the clone'
git push
git push
git status -sb
git switch -q -c feature
echo f > f.txt && git add f.txt && git commit -q -m feature
git push -u origin feature
git push origin feature:other
cd ..
git clone -q URL/repo.git second
cd second
echo s >> notes.txt && git commit -q -am 'second clone'
git push -q
cd ../repo
git switch -q main
git fetch
git status -sb
git pull
git log --oneline -3
git ls-remote origin
cd ../second
echo s2 >> notes.txt && git commit -q -am 'second again'
git push -q
cd ../repo
echo r > r.txt && git add r.txt && git commit -q -m 'local'
git pull; echo "exit $?"
git pull --no-rebase
git log --format='%s' -3
git status -sb
git push -q
git -c pull.ff=only pull; echo "exit $?"
cd ..
git clone --depth 1 URL/repo.git shallow
git -C shallow log --oneline
git -C shallow rev-list --count HEAD
git clone --depth=2 -b topic URL/repo.git shallow2
git -C shallow2 log --format=%s
git -C shallow2 rev-parse --abbrev-ref HEAD
git -C shallow2 config --get remote.origin.fetch
git clone URL/nope.git; echo "exit $?"
`
	// One server for both runs, serving each its own copy: the merge
	// commit pull makes names the URL.
	var gs *gitServer
	run := func(do func(url string) outcome, dir string) (outcome, string) {
		srv := t.TempDir()
		seedBare(t, filepath.Join(srv, "repo.git"))
		if gs == nil {
			gs = newGitServer(t, srv)
		}
		gs.root.Store(&srv)
		o := do(gs.URL)
		fix := func(s string) string { return strings.ReplaceAll(s, gs.URL, "URL") }
		o.stdout, o.stderr = fix(o.stdout), fix(o.stderr)
		return o, filepath.Join(srv, "repo.git")
	}
	auth := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(testUser+":"+testToken))
	native := t.TempDir()
	want, wantSrv := run(func(url string) outcome {
		return runNative(t, native, strings.ReplaceAll(script, "URL", url),
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0="+auth, "GIT_TERMINAL_PROMPT=0")
	}, native)
	var fsys *sfs.FS
	got, gotSrv := run(func(url string) outcome {
		var b *shell.Backend
		b, fsys = netStore(t, allowOnly(t, strings.TrimPrefix(url, "http://")), 0, "127.0.0.1")
		return runBuiltin(t, b, strings.ReplaceAll(script, "URL", url))
	}, "")
	if got.stdout != want.stdout {
		t.Errorf("stdout differs\n--- git\n%s--- built-in\n%s", want.stdout, got.stdout)
	}
	if got.stderr != want.stderr {
		t.Errorf("stderr differs\n--- git\n%s--- built-in\n%s", want.stderr, got.stderr)
	}
	if got.code != want.code {
		t.Errorf("exit status: git %d, built-in %d", want.code, got.code)
	}
	copyDir := t.TempDir()
	export(t, fsys, "/", copyDir)
	for _, p := range []string{"repo", "second", "shallow", "shallow2"} {
		wi, gi := inspect(t, filepath.Join(native, p)), inspect(t, filepath.Join(copyDir, p))
		for k, v := range wi {
			if gi[k] != v {
				t.Errorf("real git %s in %s differs\n--- on git's clone\n%s--- on the built-in's\n%s", k, p, v, gi[k])
			}
		}
	}
	wi, gi := inspectBare(t, wantSrv), inspectBare(t, gotSrv)
	if wi != gi {
		t.Errorf("the server's repository differs after the pushes\n--- pushed by git\n%s--- pushed by the built-in\n%s", wi, gi)
	}
}

func inspectBare(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("git", "log", "--all", "--format=%H %T %P %s", "--date=raw")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git log in %s: %v\n%s", dir, err, out)
	}
	refs := exec.Command("git", "for-each-ref")
	refs.Dir = dir
	r, err := refs.CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	fsck := exec.Command("git", "fsck", "--strict", "--no-dangling")
	fsck.Dir = dir
	f, err := fsck.CombinedOutput()
	if err != nil {
		t.Errorf("fsck of %s: %v\n%s", dir, err, f)
	}
	return string(out) + string(r)
}

// TestHTTPRemoteRefusals: without a transport the network stays refused;
// a policy that does not name the server refuses it; a redirect from the
// allowed server to another is refused and that one sees nothing; a
// server not named by a credential rule never sees the token; the token
// appears nowhere the agent can read; an endless response is cut off.
func TestHTTPRemoteRefusals(t *testing.T) {
	srv := t.TempDir()
	seedBare(t, filepath.Join(srv, "repo.git"))
	gs := newGitServer(t, srv)
	other := newGitServer(t, srv)

	sh := func(b *shell.Backend, script string) outcome { return runBuiltin(t, b, script) }
	noRepo := func(t *testing.T, fsys *sfs.FS, name string) {
		t.Helper()
		if _, err := fsys.Stat(sidecar.WorkspaceDir + "/" + name + "/.git/HEAD"); err == nil {
			t.Errorf("%s was cloned", name)
		}
	}

	t.Run("no network", func(t *testing.T) {
		b, fsys := netStore(t, nil, 0)
		o := sh(b, "git clone "+gs.URL+"/repo.git; echo \"exit $?\"; git ls-remote "+gs.URL+"/repo.git")
		if !strings.Contains(o.stderr, "this workspace has no network access") || !strings.Contains(o.stdout, "exit 128") || o.code != 128 {
			t.Errorf("clone without network: %+v", o)
		}
		noRepo(t, fsys, "repo")
	})
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, gs.URL+req.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(redirect.Close)
	for _, tc := range []struct {
		name, url, allowed string
	}{
		{"not allowed", gs.URL, hostOf(other.Server)},
		{"loopback refused by default", gs.URL, "*"},
		{"redirect to a denied host", redirect.URL, hostOf(redirect)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := gs.requests.Load()
			b, fsys := netStore(t, allowOnly(t, tc.allowed), 0, "127.0.0.1")
			o := sh(b, "git clone "+tc.url+"/repo.git")
			if o.code != 128 || !strings.Contains(o.stderr, "refused") {
				t.Errorf("clone: %+v", o)
			}
			if gs.requests.Load() != before {
				t.Errorf("the denied server saw a request")
			}
			noRepo(t, fsys, "repo")
		})
	}
	t.Run("exec without allow_network", func(t *testing.T) {
		b, _ := netStore(t, allowOnly(t, hostOf(gs.Server)), 0, "127.0.0.1")
		var out, errb strings.Builder
		res, err := b.Exec(context.Background(), sidecar.Request{Command: "git ls-remote " + gs.URL + "/repo.git", Stdout: &out, Stderr: &errb})
		if err != nil || res.ExitCode != 128 || !strings.Contains(errb.String(), "no network access") {
			t.Errorf("ls-remote without allow_network: %v %+v %q", err, res, errb.String())
		}
	})
	t.Run("token only to matching hosts", func(t *testing.T) {
		before := other.authSeen.Load()
		b, _ := netStore(t, allowOnly(t, hostOf(gs.Server), hostOf(other.Server)), 0, hostOf(gs.Server))
		o := sh(b, "git clone -q "+gs.URL+"/repo.git a && git clone "+other.URL+"/repo.git b; echo \"exit $?\"")
		if !strings.Contains(o.stderr, "fatal: Authentication failed for '"+other.URL+"/repo.git/'") || !strings.Contains(o.stdout, "exit 128") {
			t.Errorf("clone from a host without a credential rule: %+v", o)
		}
		if n := other.authSeen.Load() - before; n != 0 {
			t.Errorf("the host without a rule was sent an Authorization header %d times", n)
		}
	})
	t.Run("token unreadable", func(t *testing.T) {
		echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			// A hostile server repeating the credential back.
			http.Error(w, "you sent "+req.Header.Get("Authorization")+" "+testToken, http.StatusInternalServerError)
		}))
		t.Cleanup(echo.Close)
		b, fsys := netStore(t, allowOnly(t, hostOf(gs.Server), hostOf(echo)), 0, "127.0.0.1")
		o := sh(b, "git clone -q "+gs.URL+"/repo.git && cd repo && env; cat .git/config; git config --list; git remote -v; git ls-remote "+echo.URL+"/x.git; git clone "+echo.URL+"/x.git; git fetch "+echo.URL+"/x.git; cat /proc/self/environ; true")
		enc := base64.StdEncoding.EncodeToString([]byte(testUser + ":" + testToken))
		for _, s := range []string{o.stdout, o.stderr} {
			if strings.Contains(s, testToken) || strings.Contains(s, enc) {
				t.Errorf("the token reached the agent:\n%s", s)
			}
		}
		if !strings.Contains(o.stderr, "fatal: unable to access '"+echo.URL+"/x.git/'") {
			t.Errorf("no error for the echoing server: %s", o.stderr)
		}
		copyDir := t.TempDir()
		export(t, fsys, "/", copyDir)
		grep := exec.Command("grep", "-rlaF", testToken, copyDir)
		if out, _ := grep.CombinedOutput(); len(out) > 0 {
			t.Errorf("the token is in the workspace: %s", out)
		}
	})
	t.Run("oversized response", func(t *testing.T) {
		endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			// A well-formed advertisement that never ends.
			w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
			pkt := func(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }
			id := strings.Repeat("1", 40)
			io.WriteString(w, pkt("# service=git-upload-pack\n")+"0000"+pkt(id+" HEAD\x00multi_ack\n"))
			for i := 0; req.Context().Err() == nil; i++ {
				if _, err := io.WriteString(w, pkt(fmt.Sprintf("%s refs/heads/b%09d\n", id, i))); err != nil {
					return
				}
			}
		}))
		t.Cleanup(endless.Close)
		b, fsys := netStore(t, allowOnly(t, hostOf(endless)), 1<<20)
		o := sh(b, "git clone "+endless.URL+"/repo.git")
		if o.code != 128 || !strings.Contains(o.stderr, httpcred.ErrTooLarge.Error()) {
			t.Errorf("clone of an endless response: %+v", o)
		}
		noRepo(t, fsys, "repo")
	})
}
