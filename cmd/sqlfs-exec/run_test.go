package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// pongServer answers every request with "pong".
func pongServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "pong") }))
	t.Cleanup(srv.Close)
	return srv
}

// TestRunAllowNetwork: --allow-network lets a js exec's fetch through;
// without it fetch is refused naming the flag, and other backends reject
// the flag.
func TestRunAllowNetwork(t *testing.T) {
	pong := pongServer(t)
	store := filepath.Join(t.TempDir(), "ws.db")
	prog := "fetch('" + pong.URL + "').then((r) => r.text()).then(console.log, (e) => { console.error(e.cause.message); process.exit(1) })"
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"allowed", []string{"--backend", "js", "--allow-network", "--", prog}, 0, "pong\n", ""},
		{"refused", []string{"--backend", "js", "--", prog}, 1, "", "--allow-network"},
		{"not js", []string{"--backend", "shell", "--allow-network", "--", "true"}, 1, "", "allow_network applies to the js backend only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := sqlfsExec(t, "", append([]string{"run", "--store", store}, tc.args...)...)
			if code != tc.code || out != tc.out || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d stdout %q stderr %q; want exit %d stdout %q stderr containing %q", code, out, stderr, tc.code, tc.out, tc.err)
			}
		})
	}
}
