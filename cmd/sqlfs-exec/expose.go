package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/preview"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

func init() {
	register("expose", "give a port of a running container exec a public preview URL", runExpose)
}

const exposeUsage = `usage: sqlfs-exec expose --store STORE [--exec ID] [--ttl 1h] PORT
       sqlfs-exec expose --store STORE --list
       sqlfs-exec expose --store STORE --revoke ID

Prints a public URL that proxies HTTP and WebSocket to PORT inside the
workspace's container, where a server run by a container exec listens (a
dev server: sqlfs-exec run --backend container -- 'npm run dev'). The URL
holds a random token: whoever has it reaches the port, without a login.

It works only through an owner started with 'sqlfs-exec serve --mount DIR
--rootfs DIR --public-addr HOST:PORT', or a workspace of a host started with
'sqlfs-exec serve --workspaces DIR --rootfs DIR --public-addr HOST:PORT'
(the URL is then under /w/ID/x/), and only while the exec runs: the URL
stops working (404) when the exec ends, when --ttl passes (at most 24h),
when it is revoked (--revoke), or when the workspace closes (a host's
workspace hibernates only once no exec runs). --exec names the exec;
without it, the only container exec running is used. Exposing and ending
are audited (op expose and unexpose on port:PORT).

--list prints the workspace's live previews, one a line: ID, port, exec,
expiry (RFC 3339) and URL, tab-separated, the soonest to expire first.
--revoke ID ends preview ID (the first column of --list, not the URL's
token), closing its connections.

`

func runExpose(ctx context.Context, args []string) int {
	fset, ws := clientFlags("expose", exposeUsage)
	ttl := fset.Duration("ttl", preview.DefaultTTL, "how long the URL works")
	execID := fset.String("exec", "", "`ID` of the container exec serving the port (default: the only one running)")
	list := fset.Bool("list", false, "list the live previews instead of exposing a port")
	revoke := fset.String("revoke", "", "end the preview `ID` (as --list shows it) instead of exposing a port")
	if code, ok := parseFlags(fset, args); !ok {
		return code
	}
	wantArgs := 1 // PORT
	if *list || *revoke != "" {
		wantArgs = 0
	}
	if !ws.named() || (*list && *revoke != "") || fset.NArg() != wantArgs {
		fset.Usage()
		return 2
	}
	switch {
	case *list:
		return ws.run(ctx, "expose", func(conn api.Conn) int {
			ps, err := conn.Previews(ctx)
			if err != nil {
				return fail("expose", err)
			}
			for _, p := range ps {
				fmt.Printf("%s\t%d\t%s\t%s\t%s\n", p.ID, p.Port, p.Exec, p.Expires.UTC().Format(time.RFC3339), p.URL)
			}
			return 0
		})
	case *revoke != "":
		return ws.run(ctx, "expose", func(conn api.Conn) int {
			if err := conn.RevokePreview(ctx, *revoke); err != nil {
				return fail("expose", err)
			}
			return 0
		})
	}
	port, err := strconv.Atoi(fset.Arg(0))
	if err != nil {
		return fail("expose", fmt.Errorf("port %q: not a number", fset.Arg(0)))
	}
	return ws.printURL(ctx, "expose", tools.ExposeInput{ExecID: *execID, Port: port, TTLSeconds: ttl.Seconds()})
}
