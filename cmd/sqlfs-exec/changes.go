package main

import (
	"context"
	"fmt"

	"github.com/sqlfs/sqlfs/sidecar/api"
)

func init() {
	register("changes", "list the workspace paths an exec changed", runChanges)
}

const changesUsage = `usage: sqlfs-exec changes --store STORE EXEC_ID

Prints the workspace paths the exec EXEC_ID changed, one per line, from the
audit trail (the same list as in the exec's result).

flags:
`

func runChanges(ctx context.Context, args []string) int {
	fs, ws := clientFlags("changes", changesUsage)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	return ws.run(ctx, "changes", func(conn api.Conn) int {
		paths, err := conn.Changes(ctx, fs.Arg(0))
		if err != nil {
			return fail("changes", err)
		}
		for _, p := range paths {
			fmt.Println(p)
		}
		return 0
	})
}
