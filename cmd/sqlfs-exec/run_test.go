package main

import (
	"encoding/json"
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

// TestRunAllowNetwork: --allow-network lets a js exec's fetch through to
// what --egress-allow allows, and so does the shell's git; without either,
// fetch is refused naming the missing flag.
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
		{"allowed", []string{"--egress-allow", "127.0.0.1", "--backend", "js", "--allow-network", "--", prog}, 0, "pong\n", ""},
		{"refused", []string{"--egress-allow", "127.0.0.1", "--backend", "js", "--", prog}, 1, "", "--allow-network"},
		{"operator allows nothing", []string{"--backend", "js", "--allow-network", "--", prog}, 1, "", "--egress-allow"},
		{"a glob reaches no loopback port", []string{"--egress-allow", "*", "--backend", "js", "--allow-network", "--", prog}, 1, "", "refused: 127.0.0.1 is a loopback"},
		{"shell, operator allows nothing", []string{"--backend", "shell", "--allow-network", "--", "true"}, 1, "", "--egress-allow"},
		{"shell's git refused without asking", []string{"--egress-allow", "127.0.0.1", "--backend", "shell", "--", "git ls-remote " + pong.URL + "/r.git"}, 128, "", "has no network access"},
		{"shell's git reaches an allowed host", []string{"--egress-allow", "127.0.0.1", "--backend", "shell", "--allow-network", "--", "git ls-remote " + pong.URL + "/r.git"}, 128, "", "r.git"}, // pong is no git server; the audit below shows git connected
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := sqlfsExec(t, "", append([]string{"run", "--store", store}, tc.args...)...)
			if code != tc.code || out != tc.out || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d stdout %q stderr %q; want exit %d stdout %q stderr containing %q", code, out, stderr, tc.code, tc.out, tc.err)
			}
		})
	}
	// Every connection tried is audited under its exec: the allowed one
	// and the refused one.
	audit, stderr, code := sqlfsExec(t, "", "log", "--store", store, "--op", "connect", "--json")
	if code != 0 {
		t.Fatalf("log: %d %s", code, stderr)
	}
	results := map[bool]int{}
	for _, line := range strings.Split(strings.TrimSpace(audit), "\n") {
		var ev struct{ Actor, Path, Result string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil || !strings.HasPrefix(ev.Actor, "exec:") || ev.Path != "/"+strings.TrimPrefix(pong.URL, "http://") {
			t.Errorf("connect event %q: %+v %v", line, ev, err)
		}
		results[ev.Result == "ok"]++
	}
	// Allowed: js's fetch and the shell's git; refused: the glob's fetch.
	if results[true] != 2 || results[false] != 1 {
		t.Errorf("connect events: %d allowed, %d refused; want 2 and 1:\n%s", results[true], results[false], audit)
	}
}

// TestNoNetworkOwner: an owner started without --egress-allow (or with
// --no-network, which overrides it) refuses an exec that asks for the
// network, whichever command asks, and a client cannot bring its own
// rules; the same exec without the request still runs.
func TestNoNetworkOwner(t *testing.T) {
	for _, flags := range [][]string{nil, {"--egress-allow", "127.0.0.1", "--no-network"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) { testNoNetworkOwner(t, flags) })
	}
}

func testNoNetworkOwner(t *testing.T, flags []string) {
	pong := pongServer(t)
	store := filepath.Join(t.TempDir(), "ws.db")
	startOwner(t, store, flags...)
	_, stderr, code := sqlfsExec(t, "", "run", "--store", store, "--egress-allow", "127.0.0.1", "--backend", "js", "--allow-network", "--", "1")
	if code == 0 || !strings.Contains(stderr, "the owner's own rules apply") {
		t.Errorf("a client's --egress-allow with an owner: exit %d stderr %q", code, stderr)
	}
	prog := "fetch('" + pong.URL + "').then((r) => r.text()).then(console.log)"
	_, stderr, code = sqlfsExec(t, "", "run", "--store", store, "--backend", "js", "--allow-network", "--", prog)
	if code == 0 || !strings.Contains(stderr, "--egress-allow") {
		t.Errorf("asking for the network: exit %d stderr %q; want a refusal naming --egress-allow", code, stderr)
	}
	_, stderr, code = sqlfsExec(t, "", "tool", "--store", store, "exec", `{"command":"`+prog+`","backend":"js","allow_network":true}`)
	if code == 0 || !strings.Contains(stderr, "--egress-allow") {
		t.Errorf("exec tool asking for the network: exit %d stderr %q; want a refusal naming --egress-allow", code, stderr)
	}
	out, stderr, code := sqlfsExec(t, "", "run", "--store", store, "--backend", "js", "--", "console.log(1+1)")
	if code != 0 || out != "2\n" {
		t.Errorf("a js exec without network: exit %d stdout %q stderr %q", code, out, stderr)
	}
}
