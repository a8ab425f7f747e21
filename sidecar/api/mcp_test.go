package api

import (
	"path/filepath"
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
