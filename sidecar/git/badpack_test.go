package git_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// badPackServer passes requests through to gs and damages the pack in
// every upload-pack response with corrupt (the request body, the response
// body, the offset of "PACK" in it).
func badPackServer(t *testing.T, gs *gitServer, corrupt func(req, body []byte, pack int) []byte) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		in, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out := req.Clone(req.Context())
		out.URL.Scheme, out.URL.Host, out.RequestURI = "http", hostOf(gs.Server), ""
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(in)), int64(len(in))
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if i := bytes.Index(body, []byte("PACK")); strings.HasSuffix(req.URL.Path, "/git-upload-pack") && i > 0 {
			body = corrupt(in, body, i)
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

// zlibDetail is what only git's zlib and curl say about a bad stream (the
// reason an object does not inflate, the bytes a body lacked).
var zlibDetail = regexp.MustCompile(`(?m)^error: (inflate: .*|\d+ bytes of body are still expected)\n`)

// TestHTTPBadPack: a pack damaged in transit (an object that does not
// inflate, a stream cut short, a wrong trailing checksum) fails clone and
// fetch with git's messages and exit status, as real git fails against
// the same server; the clone leaves no directory, the fetch no pack, and
// the repository fetched into stays as it was.
func TestHTTPBadPack(t *testing.T) {
	requireGit(t)
	srv := t.TempDir()
	seedBare(t, filepath.Join(srv, "repo.git"))
	gs := newGitServer(t, srv)
	auth := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(testUser+":"+testToken))
	for _, tc := range []struct {
		name    string
		corrupt func(req, body []byte, pack int) []byte
		// git's fetch words a pack cut short otherwise, when it reads
		// the pack's header itself (fetch.unpackLimit).
		fetchWords bool
	}{
		// The first object's zlib stream, inside the first sideband packet.
		{"object does not inflate", func(_, b []byte, i int) []byte { b[i+30] ^= 0xff; return b }, false},
		{"cut short", func(_, b []byte, i int) []byte { return b[:i+(len(b)-i)/2] }, true},
		// The pack's last byte, before the closing flush packet.
		{"bad checksum", func(_, b []byte, i int) []byte { b[len(b)-5] ^= 0xff; return b }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := badPackServer(t, gs, tc.corrupt)
			// fetch.unpackLimit=1: real git indexes even a small pack
			// as a pack (index-pack), as the built-in always does.
			clone := `git clone URL/repo.git; echo "exit $?"; ls`
			fetch := `git init -q f && cd f && git remote add origin URL/repo.git
git -c fetch.unpackLimit=1 fetch origin; echo "exit $?"
git rev-parse --verify origin/main; echo "exit $?"`
			env := []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=" + auth, "GIT_TERMINAL_PROMPT=0"}
			b, _ := netStore(t, allowOnly(t, hostOf(bad)), 0, "127.0.0.1")
			fix := func(s string) string {
				return strings.ReplaceAll(zlibDetail.ReplaceAllString(s, ""), bad.URL, "URL")
			}
			for _, script := range []string{clone, fetch} {
				isFetch := script == fetch
				script = strings.ReplaceAll(script, "URL", bad.URL)
				want, got := runNative(t, t.TempDir(), script, env...), runBuiltin(t, b, script)
				if got.stdout != want.stdout || !(isFetch && tc.fetchWords) && fix(got.stderr) != fix(want.stderr) {
					t.Errorf("differs from git\n--- git\n%s%s--- built-in\n%s%s", want.stdout, want.stderr, got.stdout, got.stderr)
				}
			}
			// Real git leaves its temporary pack behind; the built-in
			// leaves nothing.
			if o := runBuiltin(t, b, "find f/.git/objects -type f | wc -l"); o.stdout != "0\n" {
				t.Errorf("files in objects after the failed fetch: %+v", o)
			}
		})
	}
}

// TestHTTPFetchMissing: a server that answers a fetch (a request with
// haves) with a pack lacking objects the new tips reach fails fetch and
// pull with real git's connectivity messages; refs and the working tree
// stay as they were, the built-in keeps none of the pack, and a good fetch
// afterwards works.
func TestHTTPFetchMissing(t *testing.T) {
	requireGit(t)
	srv := t.TempDir()
	bare := filepath.Join(srv, "repo.git")
	seedBare(t, bare)
	gs := newGitServer(t, srv)
	auth := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(testUser+":"+testToken))
	env := []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=" + auth, "GIT_TERMINAL_PROMPT=0"}
	var pack atomic.Pointer[[]byte] // what the server sends a fetch
	// The pack starts in a sideband-1 packet: keep what precedes that
	// packet, send the replacement in packets of its own.
	bad := badPackServer(t, gs, func(in, body []byte, i int) []byte {
		p := pack.Load()
		if i < 5 || body[i-1] != 1 || !bytes.Contains(in, []byte("have ")) || p == nil {
			return body
		}
		body = body[: i-5 : i-5]
		for p := *p; len(p) > 0; {
			n := min(len(p), 65515)
			body = append(body, fmt.Sprintf("%04x\x01", n+5)...)
			body, p = append(body, p[:n]...), p[n:]
		}
		return append(body, "0000"...)
	})

	native := t.TempDir()
	b, _ := netStore(t, allowOnly(t, hostOf(bad)), 0, "127.0.0.1")
	clone := strings.ReplaceAll("git clone -q URL/repo.git f && git -C f config pull.ff only", "URL", bad.URL)
	runNative(t, native, clone, env...)
	runBuiltin(t, b, clone)
	packs := runBuiltin(t, b, "ls f/.git/objects/pack")
	// Two new commits on main: a changed file, a new one in a new directory.
	runNative(t, t.TempDir(), `set -e
git clone -q `+bare+` w && cd w
echo f >> notes.txt && git commit -q -am fourth
mkdir doc && echo new > doc/new.txt && git add doc && git commit -q -m fifth
git push -q origin main`)
	packOf := func(objects string) []byte {
		t.Helper()
		cmd := exec.Command("bash", "-c", objects+" | git pack-objects --stdout -q")
		cmd.Dir, cmd.Env = bare, []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1"}
		p, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", objects, err)
		}
		return p
	}
	after := `echo "exit $?"; git rev-parse origin/main; git log --oneline -1; git status --short; ls`
	for _, tc := range []struct{ name, objects string }{
		// The tip commit alone, the commits alone, all but the new blob;
		// then the server's own pack.
		{"missing-commit", "git rev-parse main"},
		{"missing-tree", "git rev-list main~2..main"},
		{"missing-blob", "git rev-list --objects main~2..main | grep -v ' doc/new.txt$'"},
		{"complete", ""},
	} {
		if tc.objects == "" {
			pack.Store(nil)
		} else {
			p := packOf(tc.objects)
			pack.Store(&p)
		}
		for _, cmd := range []string{"git -c fetch.unpackLimit=1 fetch", "git -c fetch.unpackLimit=1 pull"} {
			t.Run(tc.name+"/"+strings.Fields(cmd)[3], func(t *testing.T) {
				script := "cd f && " + cmd + "; " + after
				want, got := runNative(t, native, script, env...), runBuiltin(t, b, script)
				if got != want {
					t.Errorf("differs from git\n--- git\n%s%s--- built-in\n%s%s", want.stdout, want.stderr, got.stdout, got.stderr)
				}
				// Real git keeps the pack it received; the built-in
				// keeps nothing of a fetch that failed.
				if o := runBuiltin(t, b, "ls f/.git/objects/pack"); tc.objects != "" && o != packs {
					t.Errorf("objects/pack after the failed %s: %+v, want %+v", cmd, o, packs)
				}
			})
		}
	}
}
