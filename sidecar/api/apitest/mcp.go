// Package apitest holds checks shared by the tests of every server of the
// sqlfs API.
package apitest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Text is a tool result's text content.
func Text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// CheckMCP drives every tool through an MCP client session: the
// conformance checks every MCP endpoint of sqlfs passes (the single-store
// server's /mcp, a host's /v1/workspaces/ID/mcp). The session's workspace
// must be empty and its backend must run echo.
func CheckMCP(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := t.Context()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" || tl.InputSchema == nil {
			t.Errorf("tool %s lacks description or schema", tl.Name)
		}
		if tl.Name == "exec" {
			b, _ := json.Marshal(tl.InputSchema)
			if !strings.Contains(string(b), "container") || !strings.Contains(string(b), "shell") {
				t.Errorf("exec schema does not explain backends: %s", b)
			}
		}
	}
	slices.Sort(names)
	if strings.Join(names, " ") != "checkpoint delete diff_checkpoint edit exec expose find grep ls publish read restore undo wait_for_change write" {
		t.Errorf("tools %v", names)
	}
	for _, tc := range []struct {
		tool    string
		args    map[string]any
		isError bool
		want    string
	}{
		{"write", map[string]any{"path": "m/a.txt", "content": "x\ny\n"}, false, "created m/a.txt (4 bytes)"},
		{"read", map[string]any{"path": "m/a.txt"}, false, "     1\tx\n     2\ty\n"},
		{"edit", map[string]any{"path": "m/a.txt", "edits": []map[string]any{{"old_text": "y", "new_text": "z"}}}, false, "+z"},
		{"grep", map[string]any{"pattern": "z"}, false, "m/a.txt:2:z"},
		{"find", map[string]any{"pattern": "*.txt"}, false, "m/a.txt"},
		{"ls", map[string]any{"path": "m"}, false, "a.txt"},
		{"exec", map[string]any{"command": "echo mcp"}, false, "mcp"},
		{"wait_for_change", map[string]any{"after": 0, "path_prefix": "m", "timeout_ms": 60000}, false, " create m/a.txt (tool:write)\n"},
		{"wait_for_change", map[string]any{"path_prefix": "m", "timeout_ms": 1}, false, "no change before the timeout"},
		{"wait_for_change", map[string]any{"timeout_ms": -1}, true, "timeout_ms -1"},
		// Failures are tool errors with a readable message, not protocol errors.
		{"read", map[string]any{"path": "../../etc/passwd"}, true, "climbs above the workspace root"},
		{"read", map[string]any{"path": "nope"}, true, "no such file"},
		{"edit", map[string]any{"path": "m/a.txt", "edits": []map[string]any{{"old_text": "q", "new_text": "r"}}}, true, "old_text not found"},
		{"exec", map[string]any{"command": "echo", "backend": "vm"}, true, `unknown backend "vm"`},
		{"delete", map[string]any{"path": "m"}, true, "recursive=true"},
		{"write", map[string]any{"path": "x", "content": "c", "bogus": 1}, true, "bogus"},
		{"read", map[string]any{}, true, "path"},
		// An agent saves and rolls back its own work.
		{"checkpoint", map[string]any{"name": "before b"}, false, "created checkpoint"},
		{"write", map[string]any{"path": "m/b.txt", "content": "b"}, false, "created m/b.txt"},
		{"diff_checkpoint", map[string]any{"from": "before b"}, false, "A\tm/b.txt\n"},
		{"restore", map[string]any{"checkpoint": "before b"}, false, "restored the whole workspace to checkpoint"},
		{"diff_checkpoint", map[string]any{"from": "before b"}, false, "no changes"},
		{"read", map[string]any{"path": "m/b.txt"}, true, "no such file"},
		{"restore", map[string]any{"checkpoint": "nope"}, true, `no checkpoint "nope"`},
		{"restore", map[string]any{"checkpoint": "a\x00b"}, true, "malformed checkpoint id or name"},
		{"restore", map[string]any{"checkpoint": 7}, true, "checkpoint"},
		{"diff_checkpoint", map[string]any{"from": "99999999999999999999999"}, true, "malformed checkpoint id or name"},
		{"diff_checkpoint", map[string]any{"from": "before b", "to": "nope"}, true, `no checkpoint "nope"`},
		{"checkpoint", map[string]any{"name": "before b"}, true, "exists already"},
		{"checkpoint", map[string]any{"name": "12"}, true, "all digits"},
		{"diff_checkpoint", map[string]any{}, true, "from"},
		{"undo", map[string]any{"exec_id": "nosuchexec"}, true, "no checkpoint to undo it from"},
		{"delete", map[string]any{"path": "m", "recursive": true}, false, "deleted dir m"},
		// The conformance workspace has no container: expose says what it needs.
		{"expose", map[string]any{"port": 8080}, true, "previews are not available: the container backend is not configured"},
		{"expose", map[string]any{}, true, "port"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Errorf("%s %v: protocol error %v", tc.tool, tc.args, err)
			continue
		}
		if res.IsError != tc.isError || !strings.Contains(Text(res), tc.want) {
			t.Errorf("%s %v: IsError=%v %q; want %v containing %q", tc.tool, tc.args, res.IsError, Text(res), tc.isError, tc.want)
		}
		if !tc.isError && res.StructuredContent == nil {
			t.Errorf("%s: no structured content", tc.tool)
		}
	}
}

// Bearer is a RoundTripper adding "Authorization: Bearer Token" to every
// request: an MCP client's HTTP transport to a server with a token.
type Bearer struct{ Token string }

func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	return http.DefaultTransport.RoundTrip(r)
}
