package host_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/api/apitest"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
	"github.com/sqlfs/sqlfs/sqlstore"
)

const operator = "operator-token-0123456789"

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type env struct {
	t    *testing.T
	dir  string
	url  string
	host *host.Host
}

// serve starts a host over a new directory on a loopback TCP listener with
// the operator token; everything stops at cleanup.
func serve(t *testing.T, o host.Options) *env {
	t.Helper()
	return serveWith(t, o, host.HandlerOptions{})
}

// serveWith is serve with handler options ho (token and logger set here).
func serveWith(t *testing.T, o host.Options, ho host.HandlerOptions) *env {
	t.Helper()
	e, _ := serveDir(t, o, ho, workspace.Options{})
	return e
}

// serveDir is serveWith opening stores with wo, and returns its Dir too.
func serveDir(t *testing.T, o host.Options, ho host.HandlerOptions, wo workspace.Options) (*env, *host.Dir) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	d, err := host.OpenDir(dir, wo, api.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	o.Opener, o.Logger = d, quiet
	h := host.New(o)
	ho.OperatorToken, ho.Logger = operator, quiet
	srv := httptest.NewServer(host.Handler(h, d, ho))
	t.Cleanup(func() {
		srv.Close()
		if err := h.Close(context.Background()); err != nil {
			t.Error(err)
		}
		d.Close()
	})
	return &env{t: t, dir: dir, url: srv.URL, host: h}, d
}

// do sends a request with token (operator when "") and a JSON body
// (none when nil), returning the status and the body.
func (e *env) do(method, path, token string, body any) (int, []byte) {
	e.t.Helper()
	raw := ""
	if body != nil {
		b, _ := json.Marshal(body)
		raw = string(b)
	}
	resp, b := e.raw(method, path, token, raw)
	return resp.StatusCode, b
}

// raw sends a request with token (operator when "") and body as it is.
func (e *env) raw(method, path, token, body string) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if token == "" {
		token = operator
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// must sends a request that must answer want, decoding the answer into out.
func (e *env) must(want int, method, path string, body, out any) {
	e.t.Helper()
	st, b := e.do(method, path, "", body)
	if st != want {
		e.t.Fatalf("%s %s: %d %s, want %d", method, path, st, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

func (e *env) create(id string) {
	e.t.Helper()
	e.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": id}, nil)
}

func (e *env) write(id, path, content string) {
	e.t.Helper()
	e.must(http.StatusOK, "POST", "/v1/workspaces/"+id+"/tools/write", map[string]any{"path": path, "content": content}, nil)
}

// read returns a file's bytes (cat through an exec).
func (e *env) read(id, path string) string {
	e.t.Helper()
	c, err := api.DialWorkspace(e.t.Context(), e.url, id, operator)
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	var out, stderr bytes.Buffer
	res, err := c.Exec(e.t.Context(), tools.ExecInput{Command: "cat " + path}, &out, &stderr)
	if err != nil || res.ExitCode != 0 {
		e.t.Fatalf("cat %s in %s: %v %+v %s", path, id, err, res, stderr.String())
	}
	return out.String()
}

func (e *env) state(id string) string {
	e.t.Helper()
	var in host.Info
	e.must(http.StatusOK, "GET", "/v1/workspaces/"+id, nil, &in)
	return in.State
}

// waitState waits up to 10 s for workspace id to be in state.
func (e *env) waitState(id, state string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.state(id) != state {
		if time.Now().After(deadline) {
			e.t.Fatalf("workspace %s still not %s", id, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func errCode(t *testing.T, b []byte) string {
	t.Helper()
	var e struct {
		Error api.ErrorBody `json:"error"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("not an error body: %s", b)
	}
	return string(e.Error.Code)
}

func TestLifecycle(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("alpha")
	var gen host.Info
	e.must(http.StatusCreated, "POST", "/v1/workspaces", nil, &gen)
	if host.CheckID(gen.ID) != nil || gen.State != "open" {
		t.Fatalf("generated workspace %+v", gen)
	}
	e.write("alpha", "dir/a.txt", "hello\n")
	if got := e.read("alpha", "dir/a.txt"); got != "hello\n" {
		t.Fatalf("read %q", got)
	}
	if st, b := e.do("POST", "/v1/workspaces", "", map[string]any{"id": "alpha"}); st != http.StatusConflict {
		t.Fatalf("second create: %d %s", st, b)
	}

	// Exec streams NDJSON through the host as from a single-store server.
	c, err := api.DialWorkspace(t.Context(), e.url, "alpha", operator)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out bytes.Buffer
	res, err := c.Exec(t.Context(), tools.ExecInput{Command: "cat dir/a.txt; echo more >&2; exit 3"}, &out, &out)
	if err != nil || res.ExitCode != 3 || out.String() != "hello\nmore\n" {
		t.Fatalf("exec: %+v %q %v", res, out.String(), err)
	}
	execs, err := c.Execs(t.Context())
	if err != nil || len(execs) != 2 || execs[1].ID != res.ID { // the read's cat, then this one
		t.Fatalf("execs %+v %v", execs, err)
	}
	ev, err := c.Audit(t.Context(), sqlstore.AuditFilter{})
	if err != nil || len(ev) == 0 {
		t.Fatalf("audit %v %v", ev, err)
	}

	// Paged listing in id order.
	for _, id := range []string{"b1", "b2", "b3"} {
		e.create(id)
	}
	var all []string
	next := ""
	for {
		var page host.ListResponse
		e.must(http.StatusOK, "GET", "/v1/workspaces?limit=2&after="+next, nil, &page)
		for _, w := range page.Workspaces {
			all = append(all, w.ID)
			if w.Bytes == 0 {
				t.Errorf("%s: no size", w.ID)
			}
		}
		if page.Next == "" {
			break
		}
		next = page.Next
	}
	// The generated id is random, so it may sort anywhere among the others.
	want := []string{"alpha", "b1", "b2", "b3", gen.ID}
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Fatalf("listed %v, want %v", all, want)
	}

	e.must(http.StatusOK, "DELETE", "/v1/workspaces/alpha", nil, nil)
	if _, err := os.Stat(filepath.Join(e.dir, "alpha")); !os.IsNotExist(err) {
		t.Fatalf("folder left after delete: %v", err)
	}
	for _, p := range []string{"/v1/workspaces/alpha", "/v1/workspaces/alpha/tools"} {
		if st, b := e.do("GET", p, "", nil); st != http.StatusNotFound || errCode(t, b) != "unknown_workspace" {
			t.Errorf("GET %s after delete: %d %s", p, st, b)
		}
	}
}

func TestCreateRefusals(t *testing.T) {
	e := serve(t, host.Options{})
	for _, tc := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"id": "UPPER"}`, 400, "invalid_workspace_id"},
		{`{"id": "-dash"}`, 400, "invalid_workspace_id"},
		{`{"id": "a.b"}`, 400, "invalid_workspace_id"},
		{`{"id": ".."}`, 400, "invalid_workspace_id"},
		{`{"id": "` + strings.Repeat("a", 64) + `"}`, 400, "invalid_workspace_id"},
		{`{"id": "ok", "bogus": 1}`, 400, "invalid_json"},
		{`{"id": "ok", "policy": {"read_only": ["[bad"]}}`, 400, "invalid_argument"},
		{`{"id": "ok", "policy": {"quota_bytes": -1}}`, 400, "invalid_argument"},
		{`{"id": "ok", "policy": {"egress": {"allow": ["*"], "deny": ["a:b"]}}}`, 400, "invalid_argument"},
		{`{"id": "ok", "fork_of": "other"}`, 404, "unknown_workspace"},
		{`{"id": "ok", "fork_of": "../x"}`, 400, "invalid_workspace_id"},
		{`{"id": "ok", "checkpoint": "c1"}`, 400, "invalid_argument"},
		{`[1]`, 400, "invalid_json"},
	} {
		resp, b := e.raw("POST", "/v1/workspaces", "", tc.body)
		if resp.StatusCode != tc.status || errCode(t, b) != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.body, resp.StatusCode, b, tc.status, tc.code)
		}
	}
	// Nothing was made by a refusal.
	var page host.ListResponse
	e.must(http.StatusOK, "GET", "/v1/workspaces", nil, &page)
	if len(page.Workspaces) != 0 {
		t.Fatalf("refused creates left %+v", page.Workspaces)
	}
}

// TestHibernateWake hibernates a workspace many times: its files and audit
// trail are intact after each wake, and the wake is transparent.
func TestHibernateWake(t *testing.T) {
	e := serve(t, host.Options{IdleTimeout: 40 * time.Millisecond})
	e.create("w")
	var want strings.Builder
	for i := range 5 {
		line := strings.Repeat("x", i+1) + "\n"
		want.WriteString(line)
		e.must(http.StatusOK, "POST", "/v1/workspaces/w/exec", map[string]any{"command": "printf '" + strings.TrimSuffix(line, "\n") + "\\n' >> log.txt"}, nil)
		e.waitState("w", "hibernated")
		if got := e.read("w", "log.txt"); got != want.String() {
			t.Fatalf("cycle %d: log.txt %q, want %q", i, got, want.String())
		}
	}
	var audit struct {
		Events []api.AuditEvent `json:"events"`
	}
	e.must(http.StatusOK, "GET", "/v1/workspaces/w/audit?path_prefix=log.txt", nil, &audit)
	if len(audit.Events) < 5 {
		t.Fatalf("audit after 5 hibernations: %+v", audit.Events)
	}
}

// startExec starts a long exec in workspace id and returns once it runs,
// with a func that waits for the stream to end.
func (e *env) startExec(id, command string) (execID string, wait func() string) {
	e.t.Helper()
	b, _ := json.Marshal(map[string]any{"command": command})
	req, _ := http.NewRequestWithContext(e.t.Context(), "POST", e.url+"/v1/workspaces/"+id+"/exec", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+operator)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("exec: %d %s", resp.StatusCode, b)
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadBytes('\n')
	if err != nil {
		e.t.Fatal(err)
	}
	var ev api.Event
	if err := json.Unmarshal(line, &ev); err != nil || ev.Type != "start" {
		e.t.Fatalf("first event %s", line)
	}
	return ev.ID, func() string {
		defer resp.Body.Close()
		rest, _ := io.ReadAll(br)
		return string(rest)
	}
}

func TestExecHoldsOpen(t *testing.T) {
	e := serve(t, host.Options{IdleTimeout: 30 * time.Millisecond})
	e.create("w")
	_, wait := e.startExec("w", "sleep 0.5; echo done")
	time.Sleep(200 * time.Millisecond) // several idle timeouts
	if st := e.state("w"); st != "open" {
		t.Fatalf("workspace %s while an exec runs", st)
	}
	if out := wait(); !strings.Contains(out, `"exit"`) || !strings.Contains(out, "done") {
		t.Fatalf("exec stream %s", out)
	}
	e.waitState("w", "hibernated")
}

func TestMaxOpen(t *testing.T) {
	e := serve(t, host.Options{MaxOpen: 2, IdleTimeout: time.Hour})
	for _, id := range []string{"a", "b", "c"} {
		e.create(id)
		e.write(id, "f", id)
	}
	// c's open hibernated a, the least recently used.
	if a, b, c := e.state("a"), e.state("b"), e.state("c"); a != "hibernated" || b != "open" || c != "open" {
		t.Fatalf("states a=%s b=%s c=%s", a, b, c)
	}
	if got := e.read("a", "f"); got != "a" {
		t.Fatalf("a after eviction: %q", got)
	}
	if e.state("b") != "hibernated" {
		t.Fatal("waking a did not hibernate b, the least recently used")
	}
	// With both open workspaces running an exec, a third is refused with
	// a retry hint, and served once one is free.
	_, waitA := e.startExec("a", "sleep 0.5")
	_, waitC := e.startExec("c", "sleep 0.5")
	resp, b := e.raw("GET", "/v1/workspaces/b/tools", "", "")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || errCode(t, b) != "too_many_open_workspaces" {
		t.Fatalf("third workspace at max-open: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	waitA()
	waitC()
	if got := e.read("b", "f"); got != "b" {
		t.Fatalf("b: %q", got)
	}
}

func TestDeleteWhileExec(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("w")
	_, wait := e.startExec("w", "sleep 30")
	if st, b := e.do("DELETE", "/v1/workspaces/w", "", nil); st != http.StatusConflict || errCode(t, b) != "workspace_busy" {
		t.Fatalf("delete while exec runs: %d %s", st, b)
	}
	if e.state("w") != "open" {
		t.Fatal("refused delete closed the workspace")
	}
	start := time.Now()
	e.must(http.StatusOK, "DELETE", "/v1/workspaces/w?force=true", nil, nil)
	if out := wait(); strings.Contains(out, `"exit_code":0`) {
		t.Fatalf("forced delete let the exec finish: %s", out)
	}
	if d := time.Since(start); d > testenv.Slack(10*time.Second) {
		t.Fatalf("forced delete took %v", d)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "w")); !os.IsNotExist(err) {
		t.Fatalf("folder left: %v", err)
	}
}

// TestPolicy sets a workspace's policy at creation and changes it: the
// core enforces it as on a single-store server.
func TestPolicy(t *testing.T) {
	e := serve(t, host.Options{})
	e.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": "p", "policy": map[string]any{"read_only": []string{"ro/**"}}}, nil)
	st, b := e.do("POST", "/v1/workspaces/p/tools/write", "", map[string]any{"path": "ro/x", "content": "x"})
	if st != http.StatusForbidden {
		t.Fatalf("write under a read-only glob: %d %s", st, b)
	}
	e.write("p", "secret.pem", "key")
	e.must(http.StatusOK, "PATCH", "/v1/workspaces/p", map[string]any{"policy": map[string]any{"hidden": []string{"*.pem"}}}, nil)
	// The new policy applies once the workspace reopens, as soon as it is idle.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _ := e.do("POST", "/v1/workspaces/p/tools/read", "", map[string]any{"path": "secret.pem"})
		if st == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("hidden glob never applied")
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.write("p", "ro/x", "now writable") // the read-only glob was replaced
	var in host.WorkspaceInfo
	e.must(http.StatusOK, "GET", "/v1/workspaces/p", nil, &in)
	if strings.Join(in.Policy.Hidden, ",") != "*.pem" || len(in.Policy.ReadOnly) != 0 {
		t.Fatalf("policy %+v", in.Policy)
	}
	if st, b := e.do("PATCH", "/v1/workspaces/p", "", map[string]any{"policy": map[string]any{"hidden": []string{"[x"}}}); st != http.StatusBadRequest {
		t.Fatalf("bad glob: %d %s", st, b)
	}
}

// TestMCP serves MCP at /v1/workspaces/ID/mcp, and a session of one
// workspace is unknown to another.
func TestMCP(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("a")
	e.create("b")
	e.write("b", "only-b.txt", "b")
	hc := &http.Client{Transport: apitest.Bearer{Token: operator}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: e.url + "/v1/workspaces/a/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"path": "m.txt", "content": "via mcp"}})
	if err != nil || res.IsError {
		t.Fatalf("mcp write: %+v %v", res, err)
	}
	if got := e.read("a", "m.txt"); got != "via mcp" {
		t.Fatalf("read %q", got)
	}
	// The conformance checks of the single-store server's /mcp pass here.
	e.create("conform")
	cc, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: e.url + "/v1/workspaces/conform/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	apitest.CheckMCP(t, cc)
	// a's session id sent to b's endpoint finds no session there.
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read","arguments":{"path":"only-b.txt"}}}`
	req, _ := http.NewRequest("POST", e.url+"/v1/workspaces/b/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+operator)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || strings.Contains(string(b), `"b"`) {
		t.Fatalf("a's MCP session on b: %d %s", resp.StatusCode, b)
	}
}

// A workspace forked from another's live state or one of its checkpoints
// holds that tree, and the two are independent afterwards.
func TestForkOf(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("src")
	e.write("src", "a.txt", "one")
	var cp struct {
		ID string `json:"id"`
	}
	e.must(http.StatusOK, "POST", "/v1/workspaces/src/checkpoints", map[string]any{"name": "c1"}, &cp)
	e.write("src", "a.txt", "two")

	e.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": "live", "fork_of": "src"}, nil)
	e.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": "old", "fork_of": "src", "checkpoint": "c1"}, nil)
	if got := e.read("live", "a.txt"); got != "two" {
		t.Errorf("fork of the live state reads %q, want two", got)
	}
	if got := e.read("old", "a.txt"); got != "one" {
		t.Errorf("fork of checkpoint c1 reads %q, want one", got)
	}
	e.write("live", "a.txt", "three")
	if got := e.read("src", "a.txt"); got != "two" {
		t.Errorf("a write to the fork reached its source: %q", got)
	}
	resp, b := e.raw("POST", "/v1/workspaces", "", `{"id": "bad", "fork_of": "src", "checkpoint": "nosuch"}`)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("fork of an unknown checkpoint: %d %s", resp.StatusCode, b)
	}
	if resp, _ := e.raw("GET", "/v1/workspaces/bad", "", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a refused fork left workspace bad behind: %d", resp.StatusCode)
	}
	resp, b = e.raw("POST", "/v1/workspaces", "", `{"id": "live", "fork_of": "src"}`)
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("fork onto an existing id: %d %s", resp.StatusCode, b)
	}
}

// TestEvict: an evicted workspace closes at once, its running exec
// cancelled, and opens again at its next use.
func TestEvict(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("w")
	e.write("w", "f.txt", "kept")
	_, wait := e.startExec("w", "sleep 30; echo finished")
	start := time.Now()
	if err := e.host.Evict(t.Context(), "w"); err != nil {
		t.Fatal(err)
	}
	if st := e.state("w"); st != "hibernated" {
		t.Fatalf("state after Evict: %s", st)
	}
	if out := wait(); strings.Contains(out, "finished") {
		t.Fatalf("the exec ran on after Evict: %s", out)
	}
	if d := time.Since(start); d > testenv.Slack(10*time.Second) {
		t.Fatalf("Evict took %v", d)
	}
	if got := e.read("w", "f.txt"); got != "kept" {
		t.Fatalf("read after Evict: %q", got)
	}
	if err := e.host.Evict(t.Context(), "absent"); err != nil {
		t.Fatalf("Evict of a workspace not open: %v", err)
	}
}
