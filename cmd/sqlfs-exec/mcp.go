package main

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar/api"
)

func init() {
	register("mcp", "serve the agent tools as an MCP server over stdio", runMCP)
}

const mcpUsage = `usage: sqlfs-exec mcp --store STORE

Serves the agent tools of STORE as an MCP server on stdin/stdout, for MCP
clients that start their servers as commands. Calls go through the owner of
STORE when one runs (sqlfs-exec serve); otherwise this process opens the
store itself until the client disconnects. Logs go to stderr.

flags:
`

func runMCP(ctx context.Context, args []string) int {
	fs, ws := clientFlags("mcp", mcpUsage)
	ws.egressFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	// stdout carries the protocol: everything else goes to stderr.
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	slog.SetDefault(log)
	return ws.run(ctx, "mcp", func(conn api.Conn) int {
		srv := api.NewMCPServer(conn, metrics.Version, log)
		// The client closing stdin ends the session normally.
		if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
			return fail("mcp", err)
		}
		return 0
	})
}
