package git_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// badPackServer passes requests through to gs and damages the pack in
// every upload-pack response with corrupt (the response body, the offset
// of "PACK" in it).
func badPackServer(t *testing.T, gs *gitServer, corrupt func(body []byte, pack int) []byte) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		out := req.Clone(req.Context())
		out.URL.Scheme, out.URL.Host, out.RequestURI = "http", hostOf(gs.Server), ""
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
			body = corrupt(body, i)
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
		corrupt func(body []byte, pack int) []byte
		// git's fetch words a pack cut short otherwise, when it reads
		// the pack's header itself (fetch.unpackLimit).
		fetchWords bool
	}{
		// The first object's zlib stream, inside the first sideband packet.
		{"object does not inflate", func(b []byte, i int) []byte { b[i+30] ^= 0xff; return b }, false},
		{"cut short", func(b []byte, i int) []byte { return b[:i+(len(b)-i)/2] }, true},
		// The pack's last byte, before the closing flush packet.
		{"bad checksum", func(b []byte, i int) []byte { b[len(b)-5] ^= 0xff; return b }, false},
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
