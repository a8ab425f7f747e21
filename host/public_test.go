package host_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/exectest"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// servePublic is serve with a public listener (PublicHandler), whose URL
// it returns.
func servePublic(t *testing.T, o host.Options) (*env, string) {
	t.Helper()
	return servePublicWith(t, o, host.HandlerOptions{})
}

// servePublicWith is servePublic with handler options ho, whose Admission
// the public listener shares.
func servePublicWith(t *testing.T, o host.Options, ho host.HandlerOptions) (*env, string) {
	t.Helper()
	var h atomic.Value // the handler, set once the host exists
	ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(ps.Close)
	e, d := serveDir(t, o, ho, workspace.Options{PublicURL: ps.URL})
	h.Store(host.PublicHandler(e.host, d, ho.Admission))
	return e, ps.URL
}

// get fetches path of the public listener at url (no token: it asks
// none) and returns the status and body.
func get(t *testing.T, url, path string) (int, string) {
	t.Helper()
	return exectest.Call(t, url, "", "GET", path, "")
}

func (e *env) publish(id, path string) string {
	e.t.Helper()
	var out struct {
		Result struct {
			URL string `json:"url"`
		} `json:"result"`
	}
	e.must(http.StatusOK, "POST", "/v1/workspaces/"+id+"/tools/publish", map[string]any{"path": path, "ttl_seconds": 600}, &out)
	return out.Result.URL
}

// TestPublicLinks: on a host's public listener a workspace's links live
// under /w/ID/, are checked with that workspace's own key (a link of a
// served under b's prefix, or without one, finds nothing, though b has
// the same file), wake a hibernated workspace when valid and never when
// not, and no id trick reaches a workspace.
func TestPublicLinks(t *testing.T) {
	e, pub := servePublic(t, host.Options{IdleTimeout: testenv.Slack(100 * time.Millisecond)})
	e.create("a")
	e.create("b")
	e.write("a", "f.txt", "of a")
	e.write("b", "f.txt", "of b")
	link := e.publish("a", "f.txt")
	suffix, ok := strings.CutPrefix(link, pub+"/w/a/p/")
	if !ok {
		t.Fatalf("link %q, want it under %s/w/a/p/", link, pub)
	}
	if st, b := get(t, link, ""); st != http.StatusOK || b != "of a" {
		t.Fatalf("link of a: %d %q", st, b)
	}
	e.waitState("a", "hibernated")
	if st, b := get(t, link, ""); st != http.StatusOK || b != "of a" {
		t.Fatalf("link of a hibernated a: %d %q", st, b)
	}
	e.waitState("a", "hibernated")
	e.waitState("b", "hibernated")
	sig := link[strings.LastIndex(link, "s=")+2:]
	for _, u := range []string{
		pub + "/w/b/p/" + suffix, // a's signature on b's file
		pub + "/p/" + suffix,     // the single-store form
		pub + "/w/a/p/" + strings.Replace(suffix, sig, strings.Repeat("0", len(sig)), 1),
		pub + "/w/a/p/g.txt?" + link[strings.Index(link, "?")+1:], // another path, a's signature
		pub + "/w/A/p/" + suffix,
		pub + "/w/%61/p/" + suffix + "x",
		pub + "/w/a%2f..%2fb/p/" + suffix,
		pub + "/w/%2e%2e/b/p/" + suffix,
		pub + "/w/../b/p/" + suffix,
		pub + "/w/\u0430/p/" + suffix, // Cyrillic a
		pub + "/w/a/x/" + sig + "/",   // no preview by that token
		pub + "/w/a/x/" + sig,
		pub + "/w/a/../b/p/" + suffix,
		pub + "/v1/workspaces",
		pub + "/w/a/v1/health",
	} {
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(b), "of ") {
			t.Errorf("%s: %d %q", u, resp.StatusCode, b)
		}
		if resp.StatusCode == http.StatusFound && !strings.HasPrefix(resp.Header.Get("Location"), "/w/a/x/") {
			t.Errorf("%s redirects to %s", u, resp.Header.Get("Location"))
		}
	}
	for _, id := range []string{"a", "b"} {
		if st := e.state(id); st != "hibernated" {
			t.Errorf("refused public requests woke %s: %s", id, st)
		}
	}
}

// TestPublicPreviews: /w/ID/x/... reaches workspace ID's own previews
// (its Public handler, as /x/...) and no other's, only while it is open:
// a preview request never wakes a workspace.
func TestPublicPreviews(t *testing.T) {
	f := &fakes{t: t, open: map[string]*fake{}, removed: map[string]bool{}}
	h := host.New(host.Options{Opener: f, IdleTimeout: time.Hour, Logger: quiet})
	t.Cleanup(func() { h.Close(t.Context()) })
	ps := httptest.NewServer(host.PublicHandler(h, nil, nil))
	t.Cleanup(ps.Close)
	_, release, err := h.Acquire(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	release()
	for _, c := range []struct{ path, want string }{
		{"/w/a/x/tok/index.html", "a /x/tok/index.html"},
		{"/w/a/x/tok/", "a /x/tok/"},
	} {
		if st, b := get(t, ps.URL, c.path); st != http.StatusOK || b != c.want {
			t.Errorf("%s: %d %q, want %q", c.path, st, b, c.want)
		}
	}
	for _, p := range []string{"/w/b/x/tok/", "/x/tok/", "/w/B/x/tok/", "/w/a%2f..%2fb/x/tok/"} {
		if st, b := get(t, ps.URL, p); st != http.StatusNotFound {
			t.Errorf("%s: %d %q, want 404", p, st, b)
		}
	}
	if n := f.opens.Load(); n != 1 {
		t.Errorf("%d opens: a preview request woke a workspace", n)
	}
}
