package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/preview"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

func init() {
	register("expose", "give a port of a running container exec a public preview URL", runExpose)
}

const exposeUsage = `usage: sqlfs-exec expose --store STORE [--exec ID] [--ttl 1h] PORT

Prints a public URL that proxies HTTP and WebSocket to PORT inside the
workspace's container, where a server run by a container exec listens (a
dev server: sqlfs-exec run --backend container -- 'npm run dev'). The URL
holds a random token: whoever has it reaches the port, without a login.

It works only through an owner started with 'sqlfs-exec serve --mount DIR
--rootfs DIR --public-addr HOST:PORT', or a workspace of a host started with
'sqlfs-exec serve --workspaces DIR --rootfs DIR --public-addr HOST:PORT'
(the URL is then under /w/ID/x/), and only while the exec runs: the URL
stops working (404) when the exec ends, when --ttl passes (at most 24h),
when it is revoked (DELETE /v1/previews/ID of the owner's API), or when the
workspace closes (a host's workspace hibernates only once no exec runs). --exec names the
exec; without it, the only container exec running is used. Exposing and
ending are audited (op expose and unexpose on port:PORT).

`

func runExpose(ctx context.Context, args []string) int {
	fset, ws := clientFlags("expose", exposeUsage)
	ttl := fset.Duration("ttl", preview.DefaultTTL, "how long the URL works")
	execID := fset.String("exec", "", "`ID` of the container exec serving the port (default: the only one running)")
	if code, ok := parseFlags(fset, args); !ok {
		return code
	}
	if !ws.named() || fset.NArg() != 1 {
		fset.Usage()
		return 2
	}
	port, err := strconv.Atoi(fset.Arg(0))
	if err != nil {
		return fail("expose", fmt.Errorf("port %q: not a number", fset.Arg(0)))
	}
	in, _ := json.Marshal(tools.ExposeInput{ExecID: *execID, Port: port, TTLSeconds: ttl.Seconds()})
	return ws.run(ctx, "expose", func(conn api.Conn) int {
		res, err := conn.Call(ctx, "expose", in)
		if err != nil {
			return fail("expose", err)
		}
		var out tools.ExposeOutput
		if err := json.Unmarshal(res.Result, &out); err != nil {
			return fail("expose", err)
		}
		fmt.Println(out.URL)
		return 0
	})
}
