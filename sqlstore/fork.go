package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mattn/go-sqlite3"
)

// Fork writes a new store at dst with the tree of generation gen (a
// checkpoint's, or Live: the last commit), independent of this one: no
// checkpoints, no history. It copies the store's pages with SQLite's
// online backup in one step, which reads one consistent state while the
// owner keeps committing, then drops in the copy what gen does not see.
// The copy is built under a temporary name and linked to dst only once
// complete; an existing dst is refused with fs.ErrExist.
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
	if err := s.backupTo(ctx, tmp); err != nil {
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

// backupTo copies the whole store into the empty file at path.
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
