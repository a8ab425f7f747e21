package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"

	"github.com/mattn/go-sqlite3"
	"golang.org/x/sys/unix"
)

// Fork writes a new store at dst with the tree of generation gen (a
// checkpoint's, or Live: the last commit), independent of this one: no
// checkpoints, no history. It copies the store's files as one commit's
// state while the owner keeps committing (copyFiles), then drops in the
// copy what gen does not see. The copy is built under a temporary name and
// linked to dst only once complete and synced; an existing dst is refused
// with fs.ErrExist.
func (s *Store) Fork(ctx context.Context, gen int64, dst string) error {
	abs, err := filepath.Abs(dst)
	if err != nil {
		return fmt.Errorf("fork %q: %w", dst, err)
	}
	if _, err := os.Lstat(abs); err == nil {
		return fmt.Errorf("fork %s: %w", abs, fs.ErrExist)
	}
	tmp, err := createTemp(abs)
	if err != nil {
		return fmt.Errorf("fork: %w", err)
	}
	defer removeStoreFiles(tmp)
	if err := s.copyFiles(ctx, tmp); err != nil {
		return s.classify(fmt.Errorf("fork %s: %w", abs, err))
	}
	if err := trimFork(ctx, tmp, gen); err != nil {
		return s.classify(fmt.Errorf("fork %s: %w", abs, err))
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("fork %s: %w", abs, err)
	}
	if err := os.Link(tmp, abs); err != nil {
		return fmt.Errorf("fork %s: %w", abs, err)
	}
	return syncFile(filepath.Dir(abs))
}

// copyFiles copies the store into the empty file at path (and its WAL to
// path's), as the state of one commit, the last one or a later, with the
// kernel's file copy (copy_file_range: no pass through user space, and a
// reflink where the filesystem shares blocks). A read transaction held
// throughout pins that state's files: while it lasts, SQLite neither starts
// the WAL over (a reader of its frames holds them) nor copies into the
// database a frame newer than the reader's snapshot (nor any frame at all
// for a reader of the database file alone). So the WAL's first frames, up
// to the wal-index's count read after the transaction began, are final;
// the database file changes only where a checkpoint copies one of those
// frames in, which the copied WAL holds and which SQLite reads in its
// place when the fork is opened. When the whole WAL was already in the
// database, the database file alone is the state. Where the wal-index
// cannot be read, SQLite's online backup copies page by page instead.
func (s *Store) copyFiles(ctx context.Context, path string) error {
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM meta`).Scan(&n); err != nil {
		return err // the read transaction starts at its first read
	}
	h, err := s.walIndex()
	if err != nil {
		slog.Debug("fork: wal-index unreadable; copying with the online backup", "err", err)
		return s.backupTo(ctx, path)
	}
	// The store file is read through the descriptor the owner lock keeps
	// open with the store: closing any descriptor of it would drop every
	// POSIX lock SQLite's connections in this process hold on it.
	if err := copyFile(s.lock.f, path, -1); err != nil {
		return err
	}
	if h.frames <= h.backfilled {
		return nil
	}
	// SQLite takes no lock on the WAL file (only on the store file and
	// the wal-index), so a descriptor of its own may close.
	wal, err := os.Open(s.path + "-wal")
	if err != nil {
		return err
	}
	defer wal.Close()
	return copyFile(wal, path+"-wal", walHeaderSize+h.frames*h.frameSize)
}

// walHeaderSize is the WAL file's header, before its first frame.
const walHeaderSize = 32

// copyFile copies the first n bytes (all, up to its end, when n < 0) of in
// into dst, created or emptied. It reads in at explicit offsets, whatever
// in's own offset, so the caller's descriptor can serve every fork.
func copyFile(in *os.File, dst string, n int64) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	copied, err := copyAt(out, in, n)
	if err == nil && n >= 0 && copied != n {
		err = fmt.Errorf("%s: %d bytes, want %d: %w", in.Name(), copied, n, io.ErrUnexpectedEOF)
	}
	return errors.Join(err, out.Close())
}

// copyAt appends to out the first n bytes (all when n < 0) of in, read
// from offset 0, with the kernel's copy_file_range (no pass through user
// space, and a reflink where the filesystem shares blocks), or with
// pread and write where the kernel or filesystem cannot.
func copyAt(out, in *os.File, n int64) (int64, error) {
	var off int64
	for n < 0 || off < n {
		chunk := 1 << 30
		if n >= 0 {
			chunk = int(min(n-off, int64(chunk)))
		}
		k, err := unix.CopyFileRange(int(in.Fd()), &off, int(out.Fd()), nil, chunk, 0)
		switch {
		case err == nil && k == 0:
			return off, nil // in's end
		case err == nil:
			continue // copy_file_range advanced off
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EXDEV), errors.Is(err, unix.EINVAL),
			errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EPERM):
			rest := int64(math.MaxInt64) - off
			if n >= 0 {
				rest = n - off
			}
			k, err := io.Copy(out, io.NewSectionReader(in, off, rest))
			return off + k, err
		default:
			return off, fmt.Errorf("copy %s: %w", in.Name(), err)
		}
	}
	return off, nil
}

// backupTo copies the whole store into the empty file at path with
// SQLite's online backup.
func (s *Store) backupTo(ctx context.Context, path string) error {
	dst, err := sql.Open("sqlite3", dsn(path, ""))
	if err != nil {
		return err
	}
	defer dst.Close()
	dc, err := dst.Conn(ctx)
	if err != nil {
		return err
	}
	defer dc.Close()
	sc, err := s.r.Conn(ctx)
	if err != nil {
		return err
	}
	defer sc.Close()
	return dc.Raw(func(d any) error {
		return sc.Raw(func(src any) error {
			b, err := d.(*sqlite3.SQLiteConn).Backup("main", src.(*sqlite3.SQLiteConn), "main")
			if err != nil {
				return err
			}
			// One step: one read transaction over the whole copy, so it is
			// a single commit's state however the owner writes meanwhile.
			_, err = b.Step(-1)
			return errors.Join(err, b.Finish())
		})
	})
}

// trimFork makes the copy at path hold only generation gen's tree.
func trimFork(ctx context.Context, path string, gen int64) error {
	db, err := sql.Open("sqlite3", dsn(path, "_txlock=immediate"))
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The copy is one state of the store: if the checkpoint is in it, so
	// are all its rows.
	if err := genExists(ctx, tx, gen); err != nil {
		return err
	}
	for _, v := range versionedTables {
		if gen != Live {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf(`DELETE FROM %s WHERE born > 0 AND born > ?`, v.name), gen); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %[1]s(%[2]s, born) SELECT %[2]s, born FROM %[1]s_hist WHERE born <= ?1 AND died > ?1`,
				v.name, v.all()), gen); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`DELETE FROM %s_hist`, v.name)); err != nil {
			return err
		}
	}
	if gen != Live {
		// A fork copies the whole store: counting its inodes costs less.
		if _, err := tx.ExecContext(ctx, qRecountTotals); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoints; DELETE FROM meta WHERE k = 'gc_pending'`); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// Fold the WAL into the file, which is then the whole store.
	_, err = db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	return err
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
