package api

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/api/apitest"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

func TestMCPInMemory(t *testing.T) {
	core, err := sfs.Open(t.Context(), filepath.Join(t.TempDir(), "ws.sqlfs"), sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	svc := tools.NewForCore(core, map[string]sidecar.Backend{"shell": testBackend{}}, tools.Options{})
	apitest.CheckMCP(t, inMemory(t, Local{svc}))
}

// inMemory serves conn's tools over an in-memory MCP transport and returns
// the client's session; both ends close at cleanup.
func inMemory(t *testing.T, conn Conn) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := NewMCPServer(conn, "test", quiet).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestMCPStreamableHTTP(t *testing.T) {
	e := serve(t, Options{}, false)
	hc := unixClient(e.sock)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: "http://localhost/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	apitest.CheckMCP(t, cs)
}

// TestMCPThroughOwner serves MCP from a process that does not own the
// store: every call goes to the owner over its socket.
func TestMCPThroughOwner(t *testing.T) {
	e := serve(t, Options{}, false)
	apitest.CheckMCP(t, inMemory(t, e.c))
}

// TestToolPanicIsAnError: a tool that panics answers an internal error to
// its caller. Over MCP each call runs in a goroutine of its own, so a
// panic there (diff_checkpoint's with an offset near MaxInt64) stopped
// the whole owner.
func TestToolPanicIsAnError(t *testing.T) {
	saved := toolset
	t.Cleanup(func() { toolset = saved })
	toolset = append(append([]tool(nil), saved...), def("boom", "Boom", "panics", true, false,
		func(*tools.Service, context.Context, tools.LsInput) (tools.LsOutput, error) { panic("boom") }))
	core, err := sfs.Open(t.Context(), filepath.Join(t.TempDir(), "ws.sqlfs"), sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	svc := tools.NewForCore(core, nil, tools.Options{})
	if _, err := (Local{svc}).Call(t.Context(), "boom", []byte("{}")); err == nil || !strings.Contains(err.Error(), "internal") {
		t.Errorf("Local.Call: %v, want an internal error", err)
	}
	res, err := inMemory(t, Local{svc}).CallTool(t.Context(), &mcp.CallToolParams{Name: "boom", Arguments: map[string]any{}})
	if err != nil || !res.IsError {
		t.Errorf("MCP call: %+v %v, want an error result", res, err)
	}
}

// TestMCPNameTooLong: over MCP, a name over NAME_MAX is an error result
// naming the limit, as over HTTP (400 name_too_long).
func TestMCPNameTooLong(t *testing.T) {
	e := serve(t, Options{}, false)
	res, err := inMemory(t, e.c).CallTool(t.Context(), &mcp.CallToolParams{Name: "write",
		Arguments: map[string]any{"path": strings.Repeat("n", 256), "content": "c"}})
	if err != nil || !res.IsError || len(res.Content) != 1 {
		t.Fatalf("MCP write: %+v %v, want an error result", res, err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "256 bytes, over the 255-byte limit") {
		t.Errorf("MCP write: %q, want the name's size and the limit", text)
	}
}
