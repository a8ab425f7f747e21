package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/api"
)

func init() {
	register("export", "copy a workspace directory to a host directory or tar stream", runExport)
}

const exportUsage = `usage: sqlfs-exec export --store STORE [SRC] DEST

Copies the workspace path SRC (default: the root; a directory's contents)
into the host directory DEST (created when missing), or as a tar stream to
stdout when DEST is '-', keeping modes, owners, times, symlinks and hard
links. Reads straight from the store (through its owner when one runs).

flags:
`

func runExport(ctx context.Context, args []string) int {
	fs, ws := clientFlags("export", exportUsage)
	quiet := fs.Bool("q", false, "no progress display")
	if code, ok := parseFlags(fs, args); !ok {
		return code
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
			err := untarDir(ctx, pr, dest)
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

type hostDir struct {
	name         string
	mode         fs.FileMode
	atime, mtime time.Time
}

// untarDir unpacks a tar stream into the host directory dir through an
// os.Root, so no entry can land outside it. Directories get their modes and
// times after their contents; owners are kept when running as root.
func untarDir(ctx context.Context, r io.Reader, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	asRoot := os.Geteuid() == 0
	var dirs []hostDir
	tr := tar.NewReader(r)
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "/"))
		if name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("archive entry %q leaves the destination", h.Name)
		}
		mode := h.FileInfo().Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		switch h.Typeflag {
		case tar.TypeDir:
			if name != "." {
				if err := root.MkdirAll(name, 0o700); err != nil {
					return err
				}
			}
			dirs = append(dirs, hostDir{name, mode, h.AccessTime, h.ModTime})
		case tar.TypeReg:
			if err := makeRoomHost(root, name); err != nil {
				return err
			}
			f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm())
			if err != nil {
				return err
			}
			_, err = io.CopyBuffer(f, tr, buf)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := makeRoomHost(root, name); err != nil {
				return err
			}
			if err := root.Symlink(h.Linkname, name); err != nil {
				return err
			}
		case tar.TypeLink:
			if err := makeRoomHost(root, name); err != nil {
				return err
			}
			if err := root.Link(path.Clean(h.Linkname), name); err != nil {
				return err
			}
			continue
		default:
			// Device nodes and fifos need mknod, which os.Root lacks;
			// they are rare in workspaces and skipped.
			fmt.Fprintf(os.Stderr, "sqlfs-exec export: skipping special file %s\n", name)
			continue
		}
		if asRoot {
			if err := root.Lchown(name, h.Uid, h.Gid); err != nil {
				return err
			}
		}
		if h.Typeflag == tar.TypeReg {
			if err := root.Chmod(name, mode); err != nil {
				return err
			}
			if err := root.Chtimes(name, h.AccessTime, h.ModTime); err != nil {
				return err
			}
		}
	}
	for _, d := range slices.Backward(dirs) {
		if err := root.Chmod(d.name, d.mode); err != nil {
			return err
		}
		if err := root.Chtimes(d.name, d.atime, d.mtime); err != nil {
			return err
		}
	}
	return nil
}

// makeRoomHost removes a non-directory at name and makes its parent, so an entry
// can be created there.
func makeRoomHost(root *os.Root, name string) error {
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s: a directory is in the way", name)
	}
	return root.Remove(name)
}
