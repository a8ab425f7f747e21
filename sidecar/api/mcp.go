package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const instructions = "These tools work on one workspace: a POSIX file tree mounted at /workspace. " +
	"Use ls, find, grep and read to explore, edit for targeted changes, write for new files, delete to remove, " +
	"and exec to run shell commands (backend shell for file work, container for real programs). " +
	"checkpoint saves the whole workspace instantly and restore goes back to it; undo takes back one exec (every exec takes a checkpoint first). " +
	"Every change is audited; some paths may be read-only or hidden by policy."

// NewMCPServer returns an MCP server offering every tool of conn: a Local
// service, or an owner reached through a Client. Tool failures come back as
// tool results with IsError set and a message the model can act on, never
// as protocol errors.
func NewMCPServer(conn Conn, version string, logger *slog.Logger) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sqlfs", Title: "sqlfs workspace", Version: version},
		&mcp.ServerOptions{Instructions: instructions, Logger: logger})
	closedWorld := false
	for _, t := range toolset {
		destructive := t.destructive
		srv.AddTool(&mcp.Tool{
			Name:        t.name,
			Title:       t.title,
			Description: t.desc,
			InputSchema: t.schema,
			Annotations: &mcp.ToolAnnotations{
				Title:           t.title,
				ReadOnlyHint:    t.readOnly,
				DestructiveHint: &destructive,
				OpenWorldHint:   &closedWorld,
			},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := []byte(req.Params.Arguments)
			if len(args) == 0 {
				args = []byte("{}")
			}
			r, err := conn.Call(ctx, t.name, args)
			if err != nil {
				res := &mcp.CallToolResult{}
				res.SetError(err)
				return res, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, StructuredContent: r.Result}, nil
		})
	}
	return srv
}

// mcpHandler serves srv over streamable HTTP.
func mcpHandler(srv *mcp.Server, maxBody int64, logger *slog.Logger) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Logger: logger, MaxRequestBodyBytes: maxBody})
}
