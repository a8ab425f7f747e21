package tools

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// NewForCore returns a Service over an open filesystem core: each tool acts
// through a view named after it for the audit trail, and exec results list
// their changes from that trail. opts.Audit is set unless given.
func NewForCore(f *sfs.FS, backends map[string]sidecar.Backend, opts Options) *Service {
	coreAudit := opts.Audit == nil
	if coreAudit {
		opts.Audit = func(ctx context.Context, filter sqlstore.AuditFilter) ([]sqlstore.AuditEvent, error) {
			// Audit events reach the store with the commit that carries
			// the change; commit first so the query sees them all.
			if err := f.Flush(ctx); err != nil {
				return nil, err
			}
			return f.Store().Audit(ctx, filter)
		}
	}
	s := New(func(actor string) FS { return coreFS{f.WithActor(actor)} }, backends, opts)
	s.core, s.coreAudit = f, coreAudit
	return s
}

// coreFS adapts *sfs.FS to FS.
type coreFS struct{ f *sfs.FS }

func (c coreFS) Stat(n string) (fs.FileInfo, error)   { return c.f.FileInfo(n, true) }
func (c coreFS) Lstat(n string) (fs.FileInfo, error)  { return c.f.FileInfo(n, false) }
func (c coreFS) Readlink(n string) (string, error)    { return c.f.Readlink(n) }
func (c coreFS) ReadFile(n string) ([]byte, error)    { return c.f.ReadFile(n) }
func (c coreFS) Open(n string) (io.ReadCloser, error) { return c.f.OpenFile(n, os.O_RDONLY, 0) }
func (c coreFS) Create(n string, p fs.FileMode) (io.WriteCloser, error) {
	return c.f.OpenFile(n, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, sfs.UnixPerm(p))
}

// WriteFile replaces n's content all or nothing as far as the quota goes.
// A file with content has the growth reserved first (a truncation up to
// the new size, which the quota charges), so content that does not fit
// leaves it as it was instead of emptied or cut. A new or empty file has
// nothing to lose: it is written at once (no truncate in its audit trail)
// and emptied again if the write fails.
func (c coreFS) WriteFile(n string, d []byte, p fs.FileMode) error {
	fl, err := c.f.OpenFile(n, os.O_WRONLY|os.O_CREATE, sfs.UnixPerm(p))
	if err != nil {
		return err
	}
	size := int64(len(d))
	a, err := fl.Stat()
	if err == nil && a.Size > 0 && size > a.Size {
		err = fl.Truncate(size)
	}
	if err == nil {
		_, err = fl.WriteAt(d, 0)
		if err != nil && a.Size == 0 {
			_ = fl.Truncate(0) // the write's own error is the one to report
		}
	}
	if err == nil && size < a.Size {
		err = fl.Truncate(size)
	}
	if cerr := fl.Close(); err == nil {
		err = cerr
	}
	return err
}
func (c coreFS) Mkdir(n string, p fs.FileMode) error    { return c.f.Mkdir(n, sfs.UnixPerm(p)) }
func (c coreFS) MkdirAll(n string, p fs.FileMode) error { return c.f.MkdirAll(n, sfs.UnixPerm(p)) }
func (c coreFS) Remove(n string) error                  { return c.f.Remove(n) }
func (c coreFS) RemoveAll(n string) error               { return c.f.RemoveAll(n) }
func (c coreFS) Symlink(t, n string) error              { return c.f.Symlink(t, n) }
func (c coreFS) Link(o, n string) error                 { return c.f.Link(o, n) }
func (c coreFS) Rename(o, n string) error               { return c.f.Rename(o, n) }
func (c coreFS) Chmod(n string, m fs.FileMode) error    { return c.f.Chmod(n, sfs.UnixPerm(m)) }
func (c coreFS) Chown(n string, u, g int) error         { return c.f.Chown(n, u, g) }
func (c coreFS) Chtimes(n string, a, m time.Time) error { return c.f.Chtimes(n, a, m) }
func (c coreFS) Mknod(n string, mode uint32, dev uint64) error {
	return c.f.Mknod(n, mode, dev)
}

func (c coreFS) ReadDir(n string) ([]fs.DirEntry, error) {
	ents, err := c.f.ReadDir(n)
	if err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, len(ents))
	for i, e := range ents {
		out[i] = dirEntry{c.f, path.Join(sfs.Clean(n), e.Name), e}
	}
	return out, nil
}

type dirEntry struct {
	f    *sfs.FS
	full string
	e    sfs.DirEntry
}

func (d dirEntry) Name() string               { return d.e.Name }
func (d dirEntry) IsDir() bool                { return d.e.Mode&syscall.S_IFMT == syscall.S_IFDIR }
func (d dirEntry) Type() fs.FileMode          { return (sfs.Attr{Mode: d.e.Mode &^ 0o7777}).FileMode().Type() }
func (d dirEntry) Info() (fs.FileInfo, error) { return d.f.FileInfo(d.full, false) }
