package host_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// execIn runs command in workspace id as the operator.
func (e *env) execIn(id string, in tools.ExecInput) (tools.ExecResult, string) {
	e.t.Helper()
	c, err := api.DialWorkspace(e.t.Context(), e.url, id, operator)
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	var out bytes.Buffer
	res, err := c.Exec(e.t.Context(), in, &out, &out)
	if err != nil {
		e.t.Fatalf("exec %q in %s: %v", in.Command, id, err)
	}
	return res, out.String()
}

// TestExecLimits sets a workspace's exec limits at creation and by PATCH:
// persisted beside its store, shown by GET, applied to the next exec, a
// bad value refused with nothing changed, and only by the operator.
func TestExecLimits(t *testing.T) {
	e := serve(t, host.Options{})
	e.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": "l", "limits": map[string]any{"max_output_bytes": 100}}, nil)
	e.create("other")
	big := tools.ExecInput{Command: "yes | head -c 5000"}
	if res, out := e.execIn("l", big); !res.Truncated || len(out) > 300 {
		t.Fatalf("output cap 100: truncated %v, %d bytes", res.Truncated, len(out))
	}
	if res, out := e.execIn("other", big); res.Truncated || len(out) != 5000 {
		t.Fatalf("another workspace took the cap: truncated %v, %d bytes", res.Truncated, len(out))
	}

	var in host.WorkspaceInfo
	e.must(http.StatusOK, "PATCH", "/v1/workspaces/l", map[string]any{"limits": map[string]any{"timeout_seconds": 0.5}}, &in)
	if in.Limits != (workspace.ExecLimits{TimeoutSeconds: 0.5}) {
		t.Fatalf("PATCH answered limits %+v", in.Limits)
	}
	// The next exec runs under them: the timeout bounds what a request
	// asks, and the output cap went back to the host's.
	start := time.Now()
	res, _ := e.execIn("l", tools.ExecInput{Command: "sleep 30", TimeoutSeconds: 60})
	if !res.TimedOut || time.Since(start) > testenv.Slack(10*time.Second) {
		t.Fatalf("sleep 30 under a 0.5 s timeout: %+v after %s", res, time.Since(start))
	}
	if res, out := e.execIn("l", big); res.Truncated || len(out) != 5000 {
		t.Fatalf("output cap after PATCH: truncated %v, %d bytes", res.Truncated, len(out))
	}

	// A refusal names the field and changes nothing, policy included.
	for _, body := range []string{
		`{"limits": {"timeout_seconds": -1}}`,
		`{"limits": {"timeout_seconds": 1e9}}`,
		`{"limits": {"max_output_bytes": -5}}`,
		`{"limits": {"max_memory_bytes": -1}, "policy": {"hidden": ["*.x"]}}`,
		`{"limits": {"js_memory_bytes": -1}}`,
		`{"limits": {"timeout": 5}}`,
		`{"limits": {"max_output_bytes": "big"}}`,
		`{"policy": {"hidden": ["[x"]}, "limits": {"max_output_bytes": 7}}`,
	} {
		resp, b := e.raw("PATCH", "/v1/workspaces/l", "", body)
		if resp.StatusCode != http.StatusBadRequest || errCode(t, b) != "invalid_argument" && errCode(t, b) != "invalid_json" {
			t.Errorf("PATCH %s: %d %s", body, resp.StatusCode, b)
		}
	}
	tok := e.mint("l", 0).Secret
	if st, b := e.do("PATCH", "/v1/workspaces/l", tok, map[string]any{"limits": map[string]any{"timeout_seconds": 100}}); st != http.StatusForbidden || errCode(t, b) != "permission_denied" {
		t.Errorf("PATCH with l's own token: %d %s", st, b)
	}
	e.must(http.StatusOK, "GET", "/v1/workspaces/l", nil, &in)
	if in.Limits != (workspace.ExecLimits{TimeoutSeconds: 0.5}) || len(in.Policy.Hidden) != 0 {
		t.Fatalf("after refused PATCHes: limits %+v, policy %+v", in.Limits, in.Policy)
	}

	// A fork takes its source's limits; a creation with bad ones leaves
	// nothing behind.
	e.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": "fork", "fork_of": "l"}, nil)
	e.must(http.StatusOK, "GET", "/v1/workspaces/fork", nil, &in)
	if in.Limits != (workspace.ExecLimits{TimeoutSeconds: 0.5}) {
		t.Fatalf("fork's limits %+v", in.Limits)
	}
	if st, b := e.do("POST", "/v1/workspaces", "", map[string]any{"id": "bad", "limits": map[string]any{"max_output_bytes": -1}}); st != http.StatusBadRequest {
		t.Fatalf("create with bad limits: %d %s", st, b)
	}
	if st, _ := e.do("GET", "/v1/workspaces/bad", "", nil); st != http.StatusNotFound {
		t.Fatalf("a refused creation left workspace bad: %d", st)
	}

	// Persisted: a hibernated workspace wakes with them.
	e.host.Reopen("l")
	e.waitState("l", "hibernated")
	if res, _ := e.execIn("l", tools.ExecInput{Command: "sleep 30"}); !res.TimedOut {
		t.Fatalf("after a wake: %+v", res)
	}
}
