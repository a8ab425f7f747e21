package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPStdio runs `sqlfs-exec mcp` as an MCP client would, without and
// with an owner, through the SDK's command transport.
func TestMCPStdio(t *testing.T) {
	store := filepath.Join(t.TempDir(), "ws.sqlfs")
	session := func(t *testing.T, extra ...string) *mcp.ClientSession {
		t.Helper()
		cmd := exec.Command(binary(t), append([]string{"mcp", "--store", store}, extra...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctxTimeout(t), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Closing stdin ends the server; the transport kills it if not.
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	call := func(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctxTimeout(t), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: protocol error %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res.IsError
	}
	pong := pongServer(t)
	for _, owner := range []bool{false, true} {
		name := map[bool]string{false: "no owner", true: "owner"}[owner]
		t.Run(name, func(t *testing.T) {
			if owner {
				startOwner(t, store, "--egress-allow", "127.0.0.1")
			}
			// Without an owner, the one starting mcp is the operator.
			cs := session(t, map[bool][]string{false: {"--egress-allow", "127.0.0.1"}}[owner]...)
			lt, err := cs.ListTools(ctxTimeout(t), nil)
			if err != nil || len(lt.Tools) != 15 {
				t.Fatalf("tools: %v %v", lt, err)
			}
			file := strings.ReplaceAll(name, " ", "_") + ".txt"
			if text, isErr := call(t, cs, "write", map[string]any{"path": file, "content": "x\n"}); isErr {
				t.Fatalf("write: %s", text)
			}
			if text, isErr := call(t, cs, "read", map[string]any{"path": file}); isErr || text != "     1\tx\n" {
				t.Errorf("read: %q %v", text, isErr)
			}
			if text, isErr := call(t, cs, "read", map[string]any{"path": "/etc/passwd"}); !isErr || !strings.Contains(text, "outside /workspace") {
				t.Errorf("host path: %q %v", text, isErr)
			}
			if text, isErr := call(t, cs, "exec", map[string]any{"command": "cat " + file + " | wc -l"}); isErr || !strings.Contains(text, "1") {
				t.Errorf("exec: %q %v", text, isErr)
			}
			fetchPong := "console.log(await (await fetch('" + pong.URL + "')).text())"
			if text, isErr := call(t, cs, "exec", map[string]any{"backend": "js", "allow_network": true, "command": fetchPong}); isErr || !strings.Contains(text, "pong") {
				t.Errorf("exec js with allow_network: %q %v", text, isErr)
			}
			if text, _ := call(t, cs, "exec", map[string]any{"backend": "js", "command": fetchPong}); !strings.Contains(text, "network access is disabled for this exec; allow it with allow_network") {
				t.Errorf("exec js without allow_network: %q", text)
			}
		})
	}
}
