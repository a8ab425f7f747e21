package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/archive"
)

func init() {
	register("export", "copy a workspace directory to a host directory or tar stream", runExport)
}

const exportUsage = `usage: sqlfs-exec export --store STORE [SRC] DEST

Copies the workspace path SRC (default: the root; a directory's contents)
into the host directory DEST (created when missing), or as a tar stream to
stdout when DEST is '-', keeping modes, times, symlinks, hard links and
fifos. Reads straight from the store (through its owner when one runs).

Files an agent made must not gain privileges on the host: setuid and
setgid bits are dropped, device nodes refused (exit 1, the rest is
exported) and files owned by the user running the export, unless asked
otherwise below. A tar stream on stdout carries everything as stored.

flags:
`

func runExport(ctx context.Context, args []string) int {
	fs, ws := clientFlags("export", exportUsage)
	quiet := fs.Bool("q", false, "no progress display")
	sameOwner := fs.Bool("same-owner", false, "keep the workspace's owners (needs root to give files away)")
	preserve := fs.Bool("preserve-special", false, "keep setuid/setgid bits and device nodes (root only)")
	skipSpecial := fs.Bool("skip-special", false, "leave device nodes out instead of failing")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	opts := archive.Options{Owners: *sameOwner, Warn: func(err error) {
		fmt.Fprintf(os.Stderr, "sqlfs-exec export: warning: %v\n", err)
	}}
	switch {
	case *preserve && *skipSpecial:
		return fail("export", errors.New("--preserve-special and --skip-special exclude each other"))
	case *preserve && os.Geteuid() != 0:
		return fail("export", errors.New("--preserve-special needs root: setuid files and device nodes on the host are a root's decision"))
	case *preserve:
		opts.Special = archive.KeepDevices
	case *skipSpecial:
		opts.Special = archive.SkipDevices
	}
	var src, dest string
	switch fs.NArg() {
	case 1:
		dest = fs.Arg(0)
	case 2:
		src, dest = fs.Arg(0), fs.Arg(1)
	default:
		fs.Usage()
		return 2
	}
	p := newProgress(!*quiet, "export")
	return ws.run(ctx, "export", func(conn api.Conn) int {
		p.start()
		defer p.stop()
		if dest == "-" {
			if err := conn.Export(ctx, src, p.writer(os.Stdout)); err != nil {
				return fail("export", err)
			}
			return 0
		}
		pr, pw := io.Pipe()
		uerr := make(chan error, 1)
		go func() {
			err := untarDir(ctx, pr, dest, opts)
			pr.CloseWithError(err) // stops the export if extraction fails
			uerr <- err
		}()
		err := conn.Export(ctx, src, p.writer(pw))
		pw.CloseWithError(err)
		if xerr := <-uerr; xerr != nil && !errors.Is(xerr, err) {
			err = errors.Join(err, xerr)
		}
		if err != nil {
			return fail("export", err)
		}
		return 0
	})
}

// untarDir unpacks a tar stream into the host directory dir with the rules
// of package archive, through an os.Root so no member lands outside it.
func untarDir(ctx context.Context, r io.Reader, dir string, opts archive.Options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	_, err = archive.Extract(ctx, r, archive.HostFS(root), "/", opts)
	return err
}
