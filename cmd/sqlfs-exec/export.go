package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

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
otherwise below. Modes are masked by the umask, as tar and cp do for an
ordinary user, so no exported file or directory (DEST itself included) is
more open to other users than the umask allows. A tar stream on stdout
follows the same rules for setuid/setgid bits and device nodes (a root
extracting it would restore them); it keeps modes and numeric owners as
stored, for the extracting tar to apply or not.

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
	opts := archive.Options{Owners: *sameOwner, Umask: umask(), Warn: func(err error) {
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
		// The stream goes through the host rules on its way out, whether
		// it lands in a directory here or in a tar run by the caller.
		consume := func(r io.Reader) error { return untarDir(ctx, r, dest, opts) }
		if dest == "-" {
			consume = func(r io.Reader) error { return archive.Sanitize(ctx, r, os.Stdout, opts.Special, opts.Warn) }
		}
		pr, pw := io.Pipe()
		cerr := make(chan error, 1)
		go func() {
			err := consume(pr)
			pr.CloseWithError(err) // stops the export if the consumer fails
			cerr <- err
		}()
		err := conn.Export(ctx, src, p.writer(pw))
		pw.CloseWithError(err)
		if xerr := <-cerr; xerr != nil && !errors.Is(xerr, err) {
			err = errors.Join(err, xerr)
		}
		if err != nil {
			return fail("export", err)
		}
		return 0
	})
}

// umask is the process's file mode creation mask (read by setting it,
// then setting it back, before any other goroutine creates files).
func umask() fs.FileMode {
	m := unix.Umask(0)
	unix.Umask(m)
	return fs.FileMode(m) & fs.ModePerm
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
