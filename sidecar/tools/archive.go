package tools

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"math"
	"path"

	"github.com/sqlfs/sqlfs/sidecar/archive"
)

// ImportStats counts what an import wrote.
type ImportStats = archive.Stats

// ImportOptions tune an import.
type ImportOptions struct {
	// SkipSpecial leaves device nodes out instead of failing on them.
	SkipSpecial bool `json:"skip_special,omitempty"`
}

// ImportActor and ExportActor name bulk copies in the audit trail.
const (
	ImportActor = "import"
	ExportActor = "export"
)

// Import unpacks a tar stream below dest (a tool path; "" is the root)
// with the rules of package archive: every member stays below dest,
// setuid/setgid bits are dropped, device nodes refused (or skipped), and
// modes, owners, times, symlinks, hard links, fifos and holes are kept.
// Existing files are replaced and existing directories merged into.
func (s *Service) Import(ctx context.Context, dest string, r io.Reader, opts ImportOptions) (ImportStats, error) {
	fsys := s.view(ImportActor)
	root, err := resolve(fsys, dest, true)
	if err != nil {
		return ImportStats{}, classify(err)
	}
	if err := fsys.MkdirAll(root, 0o755); err != nil {
		return ImportStats{}, classify(err)
	}
	xo := archive.Options{Owners: true}
	if opts.SkipSpecial {
		xo.Special = archive.SkipDevices
	}
	st, err := archive.Extract(ctx, r, extractTarget{fsys}, root, xo)
	if err == nil {
		return st, nil
	}
	// The message names the members; the code follows the first cause.
	code := classify(err).(*Error).Code
	switch {
	case errors.Is(err, archive.ErrUnsafePath):
		code = CodeEscape
	case errors.Is(err, archive.ErrTruncated), errors.Is(err, archive.ErrCorrupt),
		errors.Is(err, archive.ErrDevice), errors.Is(err, archive.ErrUnsupported):
		code = CodeInvalid
	}
	return st, toolErr(code, err, "%v", err)
}

// extractTarget is an FS as archive.Extract writes to it. Create may
// truncate where Extract wants a new file: Extract only creates fresh
// temporary names.
type extractTarget struct{ FS }

// CheckExport validates an export source before any byte is streamed.
func (s *Service) CheckExport(src string) error {
	fsys := s.view(ExportActor)
	name, err := resolve(fsys, src, true)
	if err != nil {
		return classify(err)
	}
	_, err = fsys.Stat(name)
	return classify(err)
}

// Export writes src (a tool path; "" is the root) as a PAX tar stream: a
// directory's contents with names relative to it, or a single file under
// its base name. Modes, owners, times, symlinks, hard links and special
// files are kept.
func (s *Service) Export(ctx context.Context, src string, w io.Writer) error {
	return classify(s.exportTar(ctx, src, w))
}

func (s *Service) exportTar(ctx context.Context, src string, w io.Writer) error {
	fsys := s.view(ExportActor)
	root, err := resolve(fsys, src, true)
	if err != nil {
		return err
	}
	fi, err := fsys.Stat(root)
	if err != nil {
		return err
	}
	aw := archive.NewWriter(w, archive.WriteOptions{})
	add := func(name, rel string, fi fs.FileInfo) error {
		err := aw.Add(rel, fi, func() (string, error) { return fsys.Readlink(name) },
			func() (io.ReadCloser, error) { return fsys.Open(name) })
		if errors.Is(err, archive.ErrUnsupported) {
			return nil // sockets cannot be archived
		}
		return err
	}
	if !fi.IsDir() {
		if err := add(root, path.Base(root), fi); err != nil {
			return err
		}
		return aw.Close()
	}
	if err := add(root, ".", fi); err != nil {
		return err
	}
	_, err = walk(ctx, fsys, root, math.MaxInt, func(name, rel string, _ fs.DirEntry) (bool, error) {
		info, err := fsys.Lstat(name)
		if err != nil {
			return false, err
		}
		return false, add(name, rel, info)
	})
	if err != nil {
		return err
	}
	return aw.Close()
}
