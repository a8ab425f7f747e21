package host_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/host"
)

// mint returns a new token of workspace id.
func (e *env) mint(id string, ttl float64) host.TokenResponse {
	e.t.Helper()
	var tr host.TokenResponse
	e.must(http.StatusCreated, "POST", "/v1/workspaces/"+id+"/tokens", map[string]any{"ttl_seconds": ttl}, &tr)
	return tr
}

// TestTokenScope: a workspace token reaches its own workspace's routes and
// nothing else: not another workspace, not the operator's routes, not
// after revocation or expiry.
func TestTokenScope(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("a")
	e.create("b")
	e.write("b", "secret.txt", "b's")
	tokA := e.mint("a", 0).Secret

	if st, b := e.do("POST", "/v1/workspaces/a/tools/write", tokA, map[string]any{"path": "mine.txt", "content": "a's"}); st != http.StatusOK {
		t.Fatalf("a's token on a: %d %s", st, b)
	}
	// A's token is known on a's operator routes, and refused there with 403.
	const own = http.StatusForbidden
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"POST", "/v1/workspaces/b/tools/read", http.StatusUnauthorized},
		{"POST", "/v1/workspaces/b/exec", http.StatusUnauthorized},
		{"GET", "/v1/workspaces/b/audit", http.StatusUnauthorized},
		{"GET", "/v1/workspaces/b/export", http.StatusUnauthorized},
		{"POST", "/v1/workspaces/b/mcp", http.StatusUnauthorized},
		// Dot segments are cleaned by the mux into b's path (a redirect
		// the client follows with the header): still b, still refused.
		{"POST", "/v1/workspaces/a/../b/tools/read", http.StatusUnauthorized},
		{"GET", "/v1/workspaces", http.StatusUnauthorized},
		{"POST", "/v1/workspaces", http.StatusUnauthorized},
		{"GET", "/v1/workspaces/a", own},
		{"PATCH", "/v1/workspaces/a", own},
		{"PATCH", "/v1/workspaces/b", http.StatusUnauthorized},
		{"DELETE", "/v1/workspaces/a", own},
		{"POST", "/v1/workspaces/a/tokens", own},
		{"GET", "/v1/workspaces/a/tokens", own},
		{"GET", "/v1/health", http.StatusUnauthorized},
		{"GET", "/metrics", http.StatusUnauthorized},
	} {
		st, b := e.do(tc.method, tc.path, tokA, map[string]any{"path": "secret.txt"})
		if st != tc.want || strings.Contains(string(b), "b's") {
			t.Errorf("a's token on %s %s: %d %s", tc.method, tc.path, st, b)
		}
	}
	// a's folder holds its tokens hashed only.
	raw, err := os.ReadFile(filepath.Join(e.dir, "a", "tokens.json"))
	if err != nil || strings.Contains(string(raw), tokA) || strings.Contains(string(raw), strings.TrimPrefix(tokA, "sqlfs_")) {
		t.Fatalf("token file %s (%v) holds the secret", raw, err)
	}

	// Listed without secrets; revoked, it stops working.
	var list struct {
		Tokens []host.Token `json:"tokens"`
	}
	e.must(http.StatusOK, "GET", "/v1/workspaces/a/tokens", nil, &list)
	if len(list.Tokens) != 1 || list.Tokens[0].Hash != "" || list.Tokens[0].Expires != nil {
		t.Fatalf("tokens %+v", list.Tokens)
	}
	e.must(http.StatusOK, "DELETE", "/v1/workspaces/a/tokens/"+list.Tokens[0].ID, nil, nil)
	if st, _ := e.do("GET", "/v1/workspaces/a/tools", tokA, nil); st != http.StatusUnauthorized {
		t.Fatalf("revoked token: %d", st)
	}
	if st, b := e.do("DELETE", "/v1/workspaces/a/tokens/"+list.Tokens[0].ID, "", nil); st != http.StatusNotFound {
		t.Fatalf("revoking twice: %d %s", st, b)
	}
	// b's token id is no token of a.
	tb := e.mint("b", 0)
	if st, _ := e.do("DELETE", "/v1/workspaces/a/tokens/"+tb.ID, "", nil); st != http.StatusNotFound {
		t.Fatalf("revoking b's token through a: %d", st)
	}
	if st, _ := e.do("GET", "/v1/workspaces/b/tools", tb.Secret, nil); st != http.StatusOK {
		t.Fatalf("b's token after the attempt: %d", st)
	}

	// Expiry.
	short := e.mint("a", 1)
	if short.Expires == nil {
		t.Fatal("no expiry on a token with a ttl")
	}
	if st, _ := e.do("GET", "/v1/workspaces/a/tools", short.Secret, nil); st != http.StatusOK {
		t.Fatalf("fresh token: %d", st)
	}
	time.Sleep(time.Until(*short.Expires) + 50*time.Millisecond)
	if st, _ := e.do("GET", "/v1/workspaces/a/tools", short.Secret, nil); st != http.StatusUnauthorized {
		t.Fatalf("expired token: %d", st)
	}
	if st, b := e.do("POST", "/v1/workspaces/a/tokens", "", map[string]any{"ttl_seconds": -1}); st != http.StatusBadRequest {
		t.Fatalf("negative ttl: %d %s", st, b)
	}
	for _, tok := range []string{"", "x", "sqlfs_", operator + "x", tb.Secret[:len(tb.Secret)-1]} {
		req, _ := http.NewRequest("GET", e.url+"/v1/workspaces/b/tools", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("token %q: %d", tok, resp.StatusCode)
		}
	}
}

// TestHostileIDs: no id reaches a folder but its own, whatever its
// spelling, and nothing is created by trying.
func TestHostileIDs(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("alpha")
	e.write("alpha", "f", "alpha's")
	outside := filepath.Join(filepath.Dir(e.dir), "outside")
	for _, tc := range []struct {
		id     string
		status int
	}{
		{"%2e%2e", 400},
		{"%2E%2E%2Foutside", 400},
		{"alpha%2F..%2Falpha", 400},
		{"..%2Foutside", 400},
		{"Alpha", 400},
		{"ALPHA", 400},
		{"%D0%B0lpha", 400},     // Cyrillic a
		{"alph%C9%91", 400},     // Latin alpha
		{"alpha%E2%80%8B", 400}, // zero-width space
		{"alpha%00", 400},       // NUL
		{"-alpha", 400},         // leading dash
		{"alpha.sqlfs", 400},    // dots
		{"%ff", 400},            // not UTF-8
		{strings.Repeat("a", 64), 400},
		{"beta", 404}, // valid, absent
	} {
		st, b := e.do("POST", "/v1/workspaces/"+tc.id+"/tools/read", "", map[string]any{"path": "f"})
		if st != tc.status || strings.Contains(string(b), "alpha's") {
			t.Errorf("id %s: %d %s, want %d", tc.id, st, b, tc.status)
		}
		if st, _ := e.do("GET", "/v1/workspaces/"+tc.id, "", nil); st != tc.status {
			t.Errorf("GET /v1/workspaces/%s: %d, want %d", tc.id, st, tc.status)
		}
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("a hostile id made %s", outside)
	}
	ents, _ := os.ReadDir(e.dir)
	var names []string
	for _, de := range ents {
		names = append(names, de.Name())
	}
	if strings.Join(names, " ") != ".host.lock alpha" {
		t.Fatalf("DIR holds %v", names)
	}
}

// TestPlantedSymlinks: a symlink in DIR (to a workspace elsewhere, or in
// place of a store) is no workspace.
func TestPlantedSymlinks(t *testing.T) {
	e := serve(t, host.Options{IdleTimeout: 30 * time.Millisecond})
	e.create("real")
	e.write("real", "f", "real's")
	e.waitState("real", "hibernated")
	other := filepath.Join(filepath.Dir(e.dir), "elsewhere")
	must(t, os.CopyFS(other, os.DirFS(filepath.Join(e.dir, "real"))))
	must(t, os.Symlink(other, filepath.Join(e.dir, "evil")))
	must(t, os.Mkdir(filepath.Join(e.dir, "evil2"), 0o700))
	must(t, os.Symlink(filepath.Join(other, "workspace.sqlfs"), filepath.Join(e.dir, "evil2", "workspace.sqlfs")))
	e2 := e
	for _, id := range []string{"evil", "evil2"} {
		st, b := e2.do("POST", "/v1/workspaces/"+id+"/tools/read", "", map[string]any{"path": "f"})
		if st != http.StatusNotFound || strings.Contains(string(b), "real's") {
			t.Errorf("planted %s: %d %s", id, st, b)
		}
	}
	var page host.ListResponse
	e2.must(http.StatusOK, "GET", "/v1/workspaces", nil, &page)
	var ids []string
	for _, w := range page.Workspaces {
		ids = append(ids, w.ID)
	}
	// evil2 is a real folder (listed), but never opens its linked store.
	if strings.Join(ids, " ") != "evil2 real" {
		t.Fatalf("listed %v", ids)
	}
	if st, _ := e2.do("DELETE", "/v1/workspaces/evil", "", nil); st != http.StatusNotFound {
		t.Fatalf("deleting through a planted link: %d", st)
	}
	if _, err := os.Stat(filepath.Join(other, "workspace.sqlfs")); err != nil {
		t.Fatalf("the link's target was touched: %v", err)
	}
}

// TestExecIDsStayInTheirWorkspace: another workspace's exec id is unknown.
func TestExecIDsStayInTheirWorkspace(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("a")
	e.create("b")
	id, wait := e.startExec("a", "echo x > out.txt; sleep 0.3; echo a-out")
	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/workspaces/b/execs/" + id},
		{"POST", "/v1/workspaces/b/execs/" + id + "/kill"},
	} {
		st, b := e.do(tc.method, tc.path, "", nil)
		if st != http.StatusNotFound || errCode(t, b) != "unknown_exec" {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, st, b)
		}
	}
	var list struct {
		Execs []json.RawMessage `json:"execs"`
	}
	e.must(http.StatusOK, "GET", "/v1/workspaces/b/execs", nil, &list)
	if len(list.Execs) != 0 {
		t.Fatalf("b lists %s", list.Execs)
	}
	if out := wait(); !strings.Contains(out, "a-out") {
		t.Fatalf("a's exec was disturbed: %s", out)
	}
	// Changes come from each workspace's own audit trail.
	var changes struct {
		Changed []string `json:"changed"`
	}
	e.must(http.StatusOK, "GET", "/v1/workspaces/a/execs/"+id+"/changes", nil, &changes)
	if strings.Join(changes.Changed, " ") != "out.txt" {
		t.Fatalf("a's changes %v", changes.Changed)
	}
	e.must(http.StatusOK, "GET", "/v1/workspaces/b/execs/"+id+"/changes", nil, &changes)
	if len(changes.Changed) != 0 {
		t.Fatalf("b shows a's changes %v", changes.Changed)
	}
}

// TestNoPublishingOnAHost: a host serves no public links yet, so no
// workspace can make one (let alone one of another workspace).
func TestNoPublishingOnAHost(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("a")
	e.write("a", "f", "x")
	st, b := e.do("POST", "/v1/workspaces/a/tools/publish", "", map[string]any{"path": "f"})
	if st != http.StatusServiceUnavailable || errCode(t, b) != "publishing_unavailable" {
		t.Fatalf("publish on a host: %d %s", st, b)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestTokenFileChangedOutside: the cached token file is read again once
// anything changes it, so a token removed from it outside the host (a
// rename, an edit in place, a deletion, a malformed file, the workspace
// removed and made again) stops working at the next request.
func TestTokenFileChangedOutside(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("a")
	file := filepath.Join(e.dir, "a", "tokens.json")
	for _, tc := range []struct {
		name   string
		change func(t *testing.T)
	}{
		{"renamed over", func(t *testing.T) {
			if err := os.WriteFile(file+".new", []byte("[]"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(file+".new", file); err != nil {
				t.Fatal(err)
			}
		}},
		{"edited in place", func(t *testing.T) {
			f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("[]"); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}},
		{"deleted", func(t *testing.T) {
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
		}},
		{"malformed", func(t *testing.T) {
			if err := os.WriteFile(file, []byte("{not json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"workspace made again", func(t *testing.T) {
			e.must(http.StatusOK, "DELETE", "/v1/workspaces/a", nil, nil)
			e.create("a")
			e.mint("a", 0) // a token file again, without the old token
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := e.mint("a", 0).Secret
			if st, b := e.do("GET", "/v1/workspaces/a/tools", tok, nil); st != http.StatusOK {
				t.Fatalf("fresh token: %d %s", st, b)
			}
			tc.change(t)
			if st, _ := e.do("GET", "/v1/workspaces/a/tools", tok, nil); st != http.StatusUnauthorized {
				t.Fatalf("a token removed outside the host: %d, want 401", st)
			}
			os.Remove(file) // the next case mints into a fresh file
		})
	}
}
