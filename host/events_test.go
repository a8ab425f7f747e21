package host_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/api/apitest"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

var errEnough = errors.New("enough")

// changes reads workspace id's change stream after after (as token) until
// it is live, and returns its changes as "op path" and where it stopped.
func (e *env) changes(id, token string, after int64) ([]string, int64) {
	e.t.Helper()
	if token == "" {
		token = operator
	}
	c, err := api.DialWorkspace(e.t.Context(), e.url, id, token)
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	var out []string
	err = c.Events(e.t.Context(), tools.WatchOptions{After: after}, func(l api.ChangeLine) error {
		after = l.Seq
		if l.Type == "live" {
			return errEnough
		}
		out = append(out, l.Op+" "+l.Path)
		return nil
	})
	if !errors.Is(err, errEnough) {
		e.t.Fatalf("events of %s: %v", id, err)
	}
	return out, after
}

// TestEventsAcrossHibernation: a watcher resuming after the workspace
// hibernated and woke gets exactly what changed meanwhile; each
// workspace's stream has its own changes only; a hidden glob set by PATCH
// hides earlier changes too.
func TestEventsAcrossHibernation(t *testing.T) {
	e := serve(t, host.Options{IdleTimeout: 40 * time.Millisecond})
	e.create("a")
	e.create("b")
	e.write("a", "one.txt", "1")
	e.write("b", "b.txt", "b")
	got, cursor := e.changes("a", "", 0)
	if strings.Join(got, ",") != "create /one.txt,write /one.txt" {
		t.Fatalf("a's changes: %v", got)
	}
	e.waitState("a", "hibernated")
	e.write("a", "two.pem", "2")
	e.waitState("a", "hibernated")
	e.write("a", "three.txt", "3")
	got, _ = e.changes("a", e.mint("a", 0).Secret, cursor)
	if strings.Join(got, ",") != "create /two.pem,write /two.pem,create /three.txt,write /three.txt" {
		t.Fatalf("a's changes after %d, across two hibernations: %v", cursor, got)
	}
	e.must(http.StatusOK, "PATCH", "/v1/workspaces/a", map[string]any{"policy": map[string]any{"hidden": []string{"*.pem"}}}, nil)
	e.waitState("a", "hibernated")
	got, _ = e.changes("a", "", 0)
	if s := strings.Join(got, ","); strings.Contains(s, "pem") || !strings.Contains(s, "three.txt") {
		t.Fatalf("a's changes once *.pem is hidden: %v", got)
	}
}

// TestEventsScope: a workspace token reads its own workspace's changes
// and waits for them, never another's.
func TestEventsScope(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("a")
	e.create("b")
	e.write("b", "b-only.txt", "b")
	tokA := e.mint("a", 0).Secret
	for _, path := range []string{
		"/v1/workspaces/b/events?after=0",
		"/v1/workspaces/a/../b/events?after=0",
		"/v1/workspaces/B/events?after=0",
		"/v1/workspaces/b%2fevents?after=0",
	} {
		st, b := e.do("GET", path, tokA, nil)
		if st == http.StatusOK || strings.Contains(string(b), "b-only") {
			t.Errorf("a's token on GET %s: %d %s", path, st, b)
		}
	}
	st, b := e.do("POST", "/v1/workspaces/b/tools/wait_for_change", tokA, map[string]any{"after": 0})
	if st != http.StatusUnauthorized || strings.Contains(string(b), "b-only") {
		t.Errorf("a's token waiting on b: %d %s", st, b)
	}
	// Its own: answered at once with a's change only.
	e.write("a", "a.txt", "a")
	st, b = e.do("POST", "/v1/workspaces/a/tools/wait_for_change", tokA, map[string]any{"after": 0, "timeout_ms": 60000})
	if st != http.StatusOK || !strings.Contains(string(b), "/a.txt") || strings.Contains(string(b), "b-only") {
		t.Fatalf("a's token waiting on a: %d %s", st, b)
	}
	if got, _ := e.changes("a", tokA, 0); fmt.Sprint(got) != "[create /a.txt write /a.txt]" {
		t.Fatalf("a's stream: %v", got)
	}
}

// TestMemoryPressure: past MemoryHigh the host hibernates the least
// recently used half of its idle workspaces, long before their idle
// timeout; below it, none.
func TestMemoryPressure(t *testing.T) {
	var high atomic.Bool
	e := serve(t, host.WithRSS(host.Options{IdleTimeout: time.Hour, MemoryHigh: 100}, func() int64 {
		if high.CompareAndSwap(true, false) {
			return 200 // once past the bound, then below it
		}
		return 50
	}))
	for _, id := range []string{"w1", "w2", "w3", "w4"} {
		e.create(id)
		e.write(id, "f", id)
		time.Sleep(5 * time.Millisecond) // distinct last uses
	}
	time.Sleep(1500 * time.Millisecond) // a check below the bound changes nothing
	if got := e.host.Open(); got != 4 {
		t.Fatalf("%d workspaces open below the memory bound, want 4", got)
	}
	high.Store(true)
	e.waitState("w2", "hibernated")
	e.waitState("w1", "hibernated")
	time.Sleep(1500 * time.Millisecond)
	for _, id := range []string{"w3", "w4"} {
		if st, _ := e.host.State(id); st != "open" {
			t.Errorf("%s %s after one check past the bound: only the older half should hibernate", id, st)
		}
	}
	if got := e.read("w1", "f"); got != "w1" {
		t.Fatalf("w1 after hibernating for memory: %q", got)
	}
}

// TestWorkspaceLabel: with WorkspaceLabel each workspace's requests are
// counted under its id, and a deleted workspace's series goes; without
// it no series names a workspace.
func TestWorkspaceLabel(t *testing.T) {
	off := serve(t, host.Options{})
	off.create("unlabelled")
	off.write("unlabelled", "f", "x")
	on := serveWith(t, host.Options{}, host.HandlerOptions{WorkspaceLabel: true})
	on.create("labelled")
	on.write("labelled", "f", "x")
	on.write("labelled", "g", "x")
	metricsText := func() string {
		_, b := on.do("GET", "/metrics", "", nil)
		return string(b)
	}
	m := metricsText()
	if !strings.Contains(m, `sqlfs_host_workspace_requests_total{workspace="labelled"} 2`) {
		t.Errorf("labelled workspace's two writes not counted: %s", grepLines(m, "workspace_requests"))
	}
	if strings.Contains(m, `workspace="unlabelled"`) {
		t.Errorf("a workspace served without the label has a series")
	}
	on.must(http.StatusOK, "DELETE", "/v1/workspaces/labelled", nil, nil)
	if m := metricsText(); strings.Contains(m, `workspace="labelled"`) {
		t.Errorf("a deleted workspace keeps its series: %s", grepLines(m, "workspace_requests"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestEventsStreamHibernates: a change stream does not keep its workspace
// open: with only a watcher on it, the workspace hibernates when idle,
// and the same stream, never reconnected, goes on with the changes made
// after each wake, each once; removing the workspace ends it with
// unknown_workspace.
func TestEventsStreamHibernates(t *testing.T) {
	e := serve(t, host.Options{IdleTimeout: 40 * time.Millisecond})
	e.create("a")
	c, err := api.DialWorkspace(e.t.Context(), e.url, "a", e.mint("a", 0).Secret)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lines := make(chan api.ChangeLine, 100)
	ended := make(chan error, 1)
	go func() {
		ended <- c.Events(t.Context(), tools.WatchOptions{After: 0}, func(l api.ChangeLine) error {
			lines <- l
			return nil
		})
	}()
	next := func() api.ChangeLine {
		t.Helper()
		select {
		case l := <-lines:
			return l
		case err := <-ended:
			t.Fatalf("stream ended: %v", err)
		case <-time.After(20 * time.Second):
			t.Fatal("no line in 20 s")
		}
		return api.ChangeLine{}
	}
	if l := next(); l.Type != "live" {
		t.Fatalf("first line %+v, want live", l)
	}
	for round := range 3 {
		e.waitState("a", "hibernated") // the open stream does not hold it
		name := fmt.Sprintf("f%d.txt", round)
		e.write("a", name, "x")
		var got []string
		for len(got) < 2 {
			l := next()
			if l.Type == "change" {
				got = append(got, l.Op+" "+l.Path)
			}
		}
		if fmt.Sprint(got) != fmt.Sprintf("[create /%s write /%s]", name, name) {
			t.Fatalf("round %d: %v", round, got)
		}
	}
	e.waitState("a", "hibernated")
	e.must(http.StatusOK, "DELETE", "/v1/workspaces/a", nil, nil)
	for {
		select {
		case err := <-ended:
			var te *tools.Error
			if !errors.As(err, &te) || te.Code != "unknown_workspace" {
				t.Fatalf("stream of a removed workspace ended with %v, want unknown_workspace", err)
			}
			return
		case l := <-lines:
			// Each re-attach after a wake says where it is.
			if l.Type != "heartbeat" {
				t.Fatalf("after removal: %+v", l)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the stream of a removed workspace did not end")
		}
	}
}

// TestMCPStreamHibernates: an MCP session's open GET stream (the SSE
// stream the SDK's client opens after initialize) does not keep its
// workspace open, as a change stream does not: the workspace hibernates
// when idle, the stream ends with it (MCP sessions do not survive a
// hibernation), and the client's reconnect with the old session gets 404
// without waking the workspace again. A new session works.
func TestMCPStreamHibernates(t *testing.T) {
	// Long enough that no hibernation falls between a session's
	// initialize and its next request.
	e := serve(t, host.Options{IdleTimeout: testenv.Slack(200 * time.Millisecond)})
	e.create("a")
	hc := &http.Client{Transport: apitest.Bearer{Token: e.mint("a", 0).Secret}}
	connect := func() *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: e.url + "/v1/workspaces/a/mcp", HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	cs := connect()
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"path": "m.txt", "content": "x"}}); err != nil || res.IsError {
		t.Fatalf("mcp write: %+v %v", res, err)
	}
	e.waitState("a", "hibernated")
	// The client's reconnects of its stream find no session and wake
	// nothing: the workspace stays hibernated.
	deadline := time.Now().Add(testenv.Slack(200 * time.Millisecond))
	for time.Now().Before(deadline) {
		if st := e.state("a"); st != "hibernated" {
			t.Fatalf("a stale MCP stream woke the workspace: %s", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A new session wakes it and is served.
	cs2 := connect()
	res, err := cs2.CallTool(t.Context(), &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": "m.txt"}})
	if err != nil || res.IsError {
		t.Fatalf("mcp read in a new session: %+v %v", res, err)
	}
	e.waitState("a", "hibernated")
}
