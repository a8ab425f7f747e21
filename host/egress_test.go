package host_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// origin is an HTTP server on loopback answering "pong", and its
// host:port.
func origin(t *testing.T) (srvURL, hostPort string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "pong") }))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return srv.URL, u.Host
}

// fetch runs a js exec with allow_network fetching u in workspace id and
// returns its output: "pong", or "refused: " and why.
func (e *env) fetch(id, u string) (string, error) {
	e.t.Helper()
	c, err := api.DialWorkspace(e.t.Context(), e.url, id, operator)
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	prog := `try { const r = await fetch('` + u + `'); console.log(await r.text()) } catch (e) { console.log('refused: ' + (e.cause ? e.cause.message : e.message)) }`
	var out, stderr bytes.Buffer
	res, err := c.Exec(e.t.Context(), tools.ExecInput{Command: prog, Backend: "js", AllowNetwork: true}, &out, &stderr)
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		e.t.Fatalf("fetch exec: %+v %s", res, stderr.String())
	}
	return strings.TrimSpace(out.String()), nil
}

// TestWorkspaceEgress: on a host, a workspace's own egress rules replace
// the host's allow rules under the host's deny rules, a PATCH changes them
// for the open workspace's next connection (no reopen), only the operator
// may, and they outlive a hibernation.
func TestWorkspaceEgress(t *testing.T) {
	ok, okHost := origin(t)
	banned, bannedHost := origin(t)
	hostPol, err := egress.ParsePolicy(nil, []string{bannedHost})
	if err != nil {
		t.Fatal(err)
	}
	// How a refusal names a rule.
	named := func(hostPort string) string {
		r, err := egress.ParseRule(hostPort)
		if err != nil {
			t.Fatal(err)
		}
		return "denied by --egress-deny " + r.String()
	}
	wo := workspace.Options{Egress: hostPol}
	wo.FS.Logger = quiet
	e, _ := serveDir(t, host.Options{IdleTimeout: time.Hour}, host.HandlerOptions{}, wo)
	allowAll := map[string]any{"egress": map[string]any{"allow": []string{"127.0.0.1"}}}
	e.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": "w", "policy": allowAll}, nil)
	expect := func(step, u, want string) {
		t.Helper()
		got, err := e.fetch("w", u)
		if err != nil || !strings.Contains(got, want) {
			t.Fatalf("%s: fetch %s: %q %v, want %q", step, u, got, err, want)
		}
	}
	expect("created allowing 127.0.0.1", ok, "pong")
	// The host's deny rule applies on top of the workspace's allow rules.
	expect("host deny", banned, "refused: ")
	expect("host deny", banned, named(bannedHost))

	// Denied while open: the next connection is refused, naming the rule,
	// though the last one to the origin may still be pooled.
	deny := map[string]any{"egress": map[string]any{"allow": []string{"127.0.0.1"}, "deny": []string{okHost}}}
	e.must(http.StatusOK, "PATCH", "/v1/workspaces/w", map[string]any{"policy": deny}, nil)
	expect("patched to deny", ok, named(okHost))
	// The audit names the refusing rule too, as op connect on HOST:PORT.
	var audit struct {
		Events []api.AuditEvent `json:"events"`
	}
	e.must(http.StatusOK, "GET", "/v1/workspaces/w/audit", nil, &audit)
	audited := false
	for _, ev := range audit.Events {
		audited = audited || ev.Op == "connect" && ev.Path == "/"+okHost && ev.Result == "EACCES" && ev.Path2 == named(okHost)
	}
	if !audited {
		t.Fatalf("no connect event naming %q in the audit: %+v", named(okHost), audit.Events)
	}
	if st := e.state("w"); st != "open" {
		t.Fatalf("an egress-only PATCH hibernated the workspace: %s", st)
	}
	e.must(http.StatusOK, "PATCH", "/v1/workspaces/w", map[string]any{"policy": allowAll}, nil)
	expect("patched back", ok, "pong")

	// Only the operator changes them, and a bad rule changes nothing.
	tok := e.mint("w", 0)
	if st, b := e.do("PATCH", "/v1/workspaces/w", tok.Secret, map[string]any{"policy": deny}); st != http.StatusForbidden {
		t.Fatalf("workspace token's PATCH: %d %s", st, b)
	}
	bad := map[string]any{"egress": map[string]any{"allow": []string{"127.0.0.1:http"}}}
	st, b := e.do("PATCH", "/v1/workspaces/w", "", map[string]any{"policy": bad})
	if st != http.StatusBadRequest || errCode(t, b) != "invalid_argument" || !strings.Contains(string(b), "127.0.0.1:http") {
		t.Fatalf("bad rule: %d %s", st, b)
	}
	expect("after refused PATCHes", ok, "pong")

	// Persisted: after a hibernation the rules are shown and enforced.
	e.must(http.StatusOK, "PATCH", "/v1/workspaces/w", map[string]any{"policy": deny}, nil)
	if err := e.host.Evict(t.Context(), "w"); err != nil {
		t.Fatal(err)
	}
	var in host.WorkspaceInfo
	e.must(http.StatusOK, "GET", "/v1/workspaces/w", nil, &in)
	if in.State != "hibernated" || in.Policy.Egress == nil || strings.Join(in.Policy.Egress.Allow, ",") != "127.0.0.1" || strings.Join(in.Policy.Egress.Deny, ",") != okHost {
		t.Fatalf("after hibernation: %+v egress %+v", in, in.Policy.Egress)
	}
	expect("woken", ok, named(okHost))

	// A workspace without a section has the host's rules (none allowed
	// here), and a PATCH grants network to it while it is open.
	e.create("n")
	if _, err := e.fetch("n", ok); err == nil || !strings.Contains(err.Error(), "allow_network is refused") {
		t.Fatalf("no rules: %v", err)
	}
	e.must(http.StatusOK, "PATCH", "/v1/workspaces/n", map[string]any{"policy": allowAll}, nil)
	if got, err := e.fetch("n", ok); err != nil || got != "pong" {
		t.Fatalf("granted while open: %q %v", got, err)
	}
}

// TestWorkspaceEgressPatchRacingOpen: a PATCH while the workspace wakes is
// never lost: the woken workspace follows the last PATCH's rules.
func TestWorkspaceEgressPatchRacingOpen(t *testing.T) {
	ok, okHost := origin(t)
	wo := workspace.Options{}
	wo.FS.Logger = quiet
	e, _ := serveDir(t, host.Options{IdleTimeout: time.Hour}, host.HandlerOptions{}, wo)
	allow := map[string]any{"egress": map[string]any{"allow": []string{"127.0.0.1"}}}
	deny := map[string]any{"egress": map[string]any{"allow": []string{"127.0.0.1"}, "deny": []string{okHost}}}
	e.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": "w", "policy": deny}, nil)
	for i := range 6 {
		last, want := allow, "pong"
		if i%2 == 1 {
			last, want = deny, "refused: "
		}
		if err := e.host.Evict(t.Context(), "w"); err != nil {
			t.Fatal(err)
		}
		woke := make(chan struct{})
		go func() {
			defer close(woke)
			e.do("GET", "/v1/workspaces/w/tools", "", nil) // wakes it
		}()
		e.must(http.StatusOK, "PATCH", "/v1/workspaces/w", map[string]any{"policy": last}, nil)
		<-woke
		if got, err := e.fetch("w", ok); err != nil || !strings.HasPrefix(got, want) {
			t.Fatalf("round %d: %q %v, want %q", i, got, err, want)
		}
	}
}
