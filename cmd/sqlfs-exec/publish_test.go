package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestPublish runs the owner with a public listener: a js exec and the
// publish command make links, the listener serves them, --revoke-all ends
// them, and without a listener publish says why it cannot.
func TestPublish(t *testing.T) {
	store := filepath.Join(t.TempDir(), "ws.db")
	if _, stderr, code := sqlfsExec(t, "", "publish", "--store", store, "x"); code == 0 || !strings.Contains(stderr, "public listener") {
		t.Errorf("publish with no listener: exit %d, %q", code, stderr)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	startOwner(t, store, "--public-addr", addr)

	jsURL, stderr, code := sqlfsExec(t, "", "run", "--store", store, "--backend", "js", "--",
		`require('fs').writeFileSync('report.txt', 'numbers\n'); require('sqlfs:publish').publish('report.txt').then(console.log)`)
	if code != 0 || !strings.HasPrefix(jsURL, "http://"+addr+"/p/report.txt?") {
		t.Fatalf("js publish: exit %d, %q, %q", code, jsURL, stderr)
	}
	// The publication is audited under the exec that wrote the file.
	actors := map[string]string{}
	for _, ev := range auditLog(t, store, "--path", "/report.txt") {
		actors[ev.Op] = ev.Actor
	}
	if a := actors["publish"]; !strings.HasPrefix(a, "exec:") || a != actors["create"] {
		t.Errorf("publish audited as %q, the exec that wrote the file as %q", a, actors["create"])
	}
	cliURL, stderr, code := sqlfsExec(t, "", "publish", "--store", store, "--ttl", "5m", "report.txt")
	if code != 0 {
		t.Fatalf("publish: exit %d, %q", code, stderr)
	}
	for _, u := range []string{jsURL, cliURL} {
		if status, body := fetch(t, strings.TrimSpace(u)); status != 200 || body != "numbers\n" {
			t.Errorf("GET %s: %d %q", u, status, body)
		}
	}
	if _, _, code := sqlfsExec(t, "", "publish", "--store", store, "--revoke-all"); code != 0 {
		t.Fatalf("revoke-all: exit %d", code)
	}
	if status, _ := fetch(t, strings.TrimSpace(cliURL)); status != http.StatusNotFound {
		t.Errorf("after --revoke-all: %d", status)
	}
}

// auditEvent is a line of `sqlfs-exec log --json`.
type auditEvent struct{ Actor, Op, Path, Result string }

// auditLog is the audit trail of store filtered by log's flags.
func auditLog(t *testing.T, store string, filter ...string) []auditEvent {
	t.Helper()
	out, stderr, code := sqlfsExec(t, "", append([]string{"log", "--store", store, "--json"}, filter...)...)
	if code != 0 {
		t.Fatalf("log: exit %d, %q", code, stderr)
	}
	var evs []auditEvent
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev auditEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func fetch(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
