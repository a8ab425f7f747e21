package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/archive"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

func init() {
	register("import", "copy a host directory or tar stream into the workspace", runImport)
}

const importUsage = `usage: sqlfs-exec import --store STORE SRC [DEST]

Copies the host directory SRC (its contents), or a tar stream when SRC is
'-' (stdin), into the workspace directory DEST (default: the root), keeping
modes, owners, times, symlinks, hard links, fifos and sparse files' holes.
Goes straight into the store (through its owner when one runs), not
through a mount. Shows progress when stderr is a terminal.

Like GNU tar, every member stays below DEST: names with '..' and symlinks
that would carry a later member out are refused. Setuid and setgid bits
are dropped. Device nodes are refused (exit 1, the rest is imported)
unless --skip-special leaves them out. A file being written when the
stream ends is not left behind.

flags:
`

func runImport(ctx context.Context, args []string) int {
	fs, ws := clientFlags("import", importUsage)
	quiet := fs.Bool("q", false, "no progress display")
	skipSpecial := fs.Bool("skip-special", false, "leave device nodes out instead of failing")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return 2
	}
	src, dest := fs.Arg(0), fs.Arg(1)
	p := newProgress(!*quiet, "import")
	return ws.run(ctx, "import", func(conn api.Conn) int {
		var r io.Reader = os.Stdin
		stopTar := func() error { return nil }
		if src != "-" {
			if fi, err := os.Stat(src); err != nil {
				return fail("import", err)
			} else if !fi.IsDir() {
				return fail("import", fmt.Errorf("%s is not a directory (give a directory, or - for a tar stream on stdin)", src))
			}
			if p.on {
				p.total(src)
			}
			pr, pw := io.Pipe()
			werr := make(chan error, 1)
			go func() {
				err := tarDir(ctx, src, pw)
				pw.CloseWithError(err)
				werr <- err
			}()
			r = pr
			// An import that ends early must not leave tarDir blocked.
			stopTar = func() error {
				pr.CloseWithError(errImportEnded)
				if err := <-werr; err != nil && !errors.Is(err, errImportEnded) {
					return err
				}
				return nil
			}
		}
		p.start()
		st, err := conn.Import(ctx, dest, p.reader(r), tools.ImportOptions{SkipSpecial: *skipSpecial})
		p.stop()
		err = errors.Join(err, stopTar())
		if err != nil {
			return fail("import", err)
		}
		fmt.Fprintf(os.Stderr, "imported %d files (%s), %d directories, %d symlinks, %d hard links, %d special files\n",
			st.Files, size(st.Bytes), st.Dirs, st.Symlinks, st.Links, st.Special)
		if st.Skipped > 0 {
			fmt.Fprintf(os.Stderr, "sqlfs-exec import: warning: left out %d device nodes (--skip-special)\n", st.Skipped)
		}
		return 0
	})
}

// errImportEnded stops the tar writer when the import ends before the
// stream does (an error, or trailing data).
var errImportEnded = errors.New("import ended")

// tarDir writes the contents of the host directory dir as a tar stream
// with names relative to it (package archive's Writer: modes, owners,
// nanosecond times, symlinks, hard links and special files). Sockets are
// left out.
func tarDir(ctx context.Context, dir string, w io.Writer) error {
	aw := archive.NewWriter(w, archive.WriteOptions{})
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		err = aw.Add(filepath.ToSlash(rel), fi, func() (string, error) { return os.Readlink(p) },
			func() (io.ReadCloser, error) { return os.Open(p) })
		if errors.Is(err, archive.ErrUnsupported) {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	return aw.Close()
}

// progress shows bytes moved (and a bar when the total is known) on a
// terminal, redrawn a few times a second.
type progress struct {
	on    bool
	verb  string
	n     atomic.Int64
	all   int64
	t0    time.Time
	done  chan struct{}
	wg    sync.WaitGroup
	width int
}

func newProgress(want bool, verb string) *progress {
	_, err := unix.IoctlGetTermios(int(os.Stderr.Fd()), unix.TCGETS)
	return &progress{on: want && err == nil, verb: verb, done: make(chan struct{})}
}

// total sets the expected byte count from a quick walk of dir.
func (p *progress) total(dir string) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				p.all += fi.Size()
			}
		}
		return nil // a walk error shows up in the real copy
	})
}

type countingReader struct {
	r io.Reader
	p *progress
}

func (c countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.n.Add(int64(n))
	return n, err
}

func (p *progress) reader(r io.Reader) io.Reader { return countingReader{r, p} }

type countingWriter struct {
	w io.Writer
	p *progress
}

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.p.n.Add(int64(n))
	return n, err
}

func (p *progress) writer(w io.Writer) io.Writer { return countingWriter{w, p} }

func (p *progress) start() {
	p.t0 = time.Now()
	if !p.on {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				p.draw()
				fmt.Fprintln(os.Stderr)
				return
			case <-t.C:
				p.draw()
			}
		}
	}()
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
}

func (p *progress) draw() {
	n := p.n.Load()
	rate := float64(n) / max(time.Since(p.t0).Seconds(), 1e-3)
	line := fmt.Sprintf("%s: %s at %s/s", p.verb, size(n), size(int64(rate)))
	if p.all > 0 {
		// The stream carries headers too: cap the fraction at full.
		frac := min(float64(n)/float64(p.all), 1)
		const bar = 30
		fill := int(frac * bar)
		line = fmt.Sprintf("%s: [%s%s] %3.0f%% %s of %s at %s/s", p.verb, strings.Repeat("=", fill), strings.Repeat(" ", bar-fill),
			frac*100, size(n), size(p.all), size(int64(rate)))
	}
	// Pad over a longer previous line.
	pad := max(p.width-len(line), 0)
	p.width = len(line)
	fmt.Fprintf(os.Stderr, "\r%s%s", line, strings.Repeat(" ", pad))
}

func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
