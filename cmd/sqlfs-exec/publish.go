package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/publish"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

func init() {
	register("publish", "make a signed, expiring public link to a workspace file or directory", runPublish)
}

const publishUsage = `usage: sqlfs-exec publish --store STORE [--ttl 1h] PATH
       sqlfs-exec publish --store STORE --revoke-all

Prints a public link to PATH (a file, or a directory served as .tar.gz)
that works until the TTL passes, through the public listener of
'sqlfs-exec serve --public-addr'. --revoke-all rotates the store's signing
key (STORE.publish-key), which ends every link made so far.

`

// servePublic serves ws's published links and previews on addr
// until ctx ends and records the base URL beside the store for
// `sqlfs-exec publish`.
func servePublic(ctx context.Context, store string, ws *workspace.Workspace, addr, base string, o publish.ServerOptions, log *slog.Logger) error {
	links, err := publish.Open(store, base)
	if err != nil {
		return err
	}
	if err := os.WriteFile(publish.BaseURLPath(store), []byte(base), 0o600); err != nil {
		return fmt.Errorf("public listener: %w", err)
	}
	stop := func() { os.Remove(publish.BaseURLPath(store)) }
	if err := listenPublic(ctx, ws.PublicHandler(links, log), addr, o, stop, log); err != nil {
		stop()
		return err
	}
	log.Info("serving published links", "addr", addr, "base", base)
	return nil
}

// listenPublic serves h on the public listener at addr until ctx ends,
// then calls stop.
func listenPublic(ctx context.Context, h http.Handler, addr string, o publish.ServerOptions, stop func(), log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("public listener: %w", err)
	}
	srv, ln := publish.NewServer(h, ln, o, log)
	go func() {
		<-ctx.Done()
		stop()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("public listener stopped", "addr", addr, "err", err)
		}
	}()
	return nil
}

func runPublish(ctx context.Context, args []string) int {
	fset, ws := clientFlags("publish", publishUsage)
	ttl := fset.Duration("ttl", publish.DefaultTTL, "how long the link works")
	revoke := fset.Bool("revoke-all", false, "rotate the signing key, ending every link made so far")
	base := fset.String("base-url", "", "base `URL` of the public listener, when the serving process is not running here")
	if code, ok := parseFlags(fset, args); !ok {
		return code
	}
	if !ws.named() || (*revoke && ws.store == "") || (*revoke != (fset.NArg() == 0)) || fset.NArg() > 1 {
		fset.Usage()
		return 2
	}
	if *revoke {
		if err := publish.RotateKey(ws.store); err != nil {
			return fail("publish", err)
		}
		fmt.Println("signing key rotated: every published link is revoked")
		return 0
	}
	ws.local.publicURL = *base
	return ws.printURL(ctx, "publish", tools.PublishInput{Path: fset.Arg(0), TTLSeconds: ttl.Seconds()})
}

// publicBase is the base URL of links served on addr.
func publicBase(addr, url string) string {
	if url != "" || addr == "" {
		return url
	}
	return "http://" + addr
}
