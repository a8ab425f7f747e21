package host

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
)

var errCrash = errors.New("the host died here")

// crashAt makes MoveStore and RemoveEmptyStore stop after the steps whose
// names start with prefix, as if the host died there, for the rest of t.
func crashAt(t *testing.T, prefix string) {
	t.Helper()
	crashPoint = func(step string) error {
		if strings.HasPrefix(step, prefix) {
			return errCrash
		}
		return nil
	}
	t.Cleanup(func() { crashPoint = func(string) error { return nil } })
}

func noCrash() { crashPoint = func(string) error { return nil } }

// crashImage puts at store the files of a closed store whose WAL holds a
// committed notes.txt that its database file does not: what a SIGKILL
// leaves, or a close while the replicator's read transaction kept
// SQLite's own checkpoint off, before Litestream let go.
func crashImage(t *testing.T, store, content string) {
	t.Helper()
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), StoreName)
	f, err := sfs.Open(ctx, src, sfs.Options{ExternalWALCheckpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("/notes.txt", []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, sfx := range []string{"", "-wal"} {
		copyFile(t, src+sfx, store+sfx)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(store + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the crash image has no WAL to lose (%v)", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// notes opens the store as a host does and reads notes.txt.
func notes(t *testing.T, store string) string {
	t.Helper()
	f, err := sfs.Open(context.Background(), store, sfs.Options{ExternalWALCheckpoints: true})
	if err != nil {
		t.Fatalf("opening %s: %v", store, err)
	}
	defer f.Close()
	b, err := f.ReadFile("/notes.txt")
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return string(b)
}

// TestMoveStoreCrash cuts a store's move at each step, as a host dying
// there does, with the committed transactions in its WAL, then takes the
// path the next start takes: every commit is in the store it opens, and
// no WAL is left beside a database it does not belong to.
func TestMoveStoreCrash(t *testing.T) {
	const want = "committed before the move\n"
	steps := []string{"folded", "cleared", "emptied", "moved"}
	for _, step := range steps {
		t.Run("park cut after "+step, func(t *testing.T) {
			dir := t.TempDir()
			store, parked := filepath.Join(dir, StoreName), filepath.Join(dir, ParkedName)
			crashImage(t, store, want)
			crashAt(t, step)
			err := MoveStore(store, parked) // hibernation
			noCrash()
			if err != nil && !errors.Is(err, errCrash) {
				t.Fatal(err)
			}
			// The next request wakes it: a parked store without one in
			// place goes back (replica.Opener.Open).
			if _, err := os.Lstat(parked); err == nil {
				if _, err := os.Lstat(store); err == nil {
					t.Fatalf("both %s and %s exist", StoreName, ParkedName)
				}
				if err := MoveStore(parked, store); err != nil {
					t.Fatal(err)
				}
			}
			if got := notes(t, store); got != want {
				t.Fatalf("after a crash in the park and the wake, notes.txt holds %q, want %q", got, want)
			}
		})
		t.Run("wake cut after "+step, func(t *testing.T) {
			dir := t.TempDir()
			store, parked := filepath.Join(dir, StoreName), filepath.Join(dir, ParkedName)
			crashImage(t, parked, want)
			crashAt(t, step)
			err := MoveStore(parked, store)
			noCrash()
			if err != nil && !errors.Is(err, errCrash) {
				t.Fatal(err)
			}
			if _, err := os.Lstat(store); err != nil {
				// Not moved yet: the next wake moves it.
				if err := MoveStore(parked, store); err != nil {
					t.Fatal(err)
				}
			}
			// A store in place is opened as it is.
			if got := notes(t, store); got != want {
				t.Fatalf("after a crash in the wake, notes.txt holds %q, want %q", got, want)
			}
		})
	}
	t.Run("a reader holding the store", func(t *testing.T) {
		// The replicator not letting go yet: its read transaction keeps
		// the WAL from being emptied, not its frames from being copied.
		dir := t.TempDir()
		store, parked := filepath.Join(dir, StoreName), filepath.Join(dir, ParkedName)
		crashImage(t, store, want)
		release := holdRead(t, store)
		if err := MoveStore(store, parked); err != nil {
			t.Fatal(err)
		}
		release()
		if got := notes(t, parked); got != want {
			t.Fatalf("moved while read, notes.txt holds %q, want %q", got, want)
		}
	})
	t.Run("an older copy's WAL at the target", func(t *testing.T) {
		dir := t.TempDir()
		from, to := filepath.Join(dir, ParkedName), filepath.Join(dir, StaleName)
		crashImage(t, from, want)
		crashImage(t, to, "an older copy\n")
		if err := MoveStore(from, to); err != nil {
			t.Fatal(err)
		}
		if got := notes(t, to); got != want {
			t.Fatalf("moved over an older copy, notes.txt holds %q, want %q", got, want)
		}
	})
}

// TestRemoveEmptyStoreCrash cuts the removal of an empty store file and
// its WAL at each step: what is left is still an empty store file, seen
// and removed next time, or nothing; never a WAL without its database,
// which the next store moved to that name would take for its own.
func TestRemoveEmptyStoreCrash(t *testing.T) {
	for _, step := range []string{"removed -wal", "removed -shm", "removed store"} {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			store := filepath.Join(dir, StoreName)
			for sfx, data := range map[string]string{"": "", "-wal": "frames", "-shm": "index"} {
				if err := os.WriteFile(store+sfx, []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			crashAt(t, step)
			_, err := RemoveEmptyStore(store, "ws", discard())
			noCrash()
			if err != nil && !errors.Is(err, errCrash) {
				t.Fatal(err)
			}
			if _, err := os.Lstat(store); errors.Is(err, os.ErrNotExist) {
				for _, sfx := range []string{"-wal", "-shm"} {
					if _, err := os.Lstat(store + sfx); err == nil {
						t.Fatalf("the store file is gone but its %s stayed", sfx)
					}
				}
			}
			if _, err := RemoveEmptyStore(store, "ws", discard()); err != nil {
				t.Fatal(err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) > 0 {
				t.Fatalf("left %v", ents)
			}
		})
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestMoveStoreCrashWhileRead cuts a move at each step while a reader
// (the replicator not letting go yet) keeps the folded WAL from being
// emptied: at no step is that WAL, still holding its frames, left at a
// name without its database, where the next database made or moved
// there would take it for its own.
func TestMoveStoreCrashWhileRead(t *testing.T) {
	const want = "committed before the move\n"
	for _, step := range []string{"folded", "cleared", "emptied", "moved"} {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			store, parked := filepath.Join(dir, StoreName), filepath.Join(dir, ParkedName)
			crashImage(t, store, want)
			defer holdRead(t, store)()
			crashAt(t, step)
			err := MoveStore(store, parked)
			noCrash()
			if err != nil && !errors.Is(err, errCrash) {
				t.Fatal(err)
			}
			for _, p := range []string{store, parked} {
				if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
					if fi, err := os.Lstat(p + "-wal"); err == nil && fi.Size() > 0 {
						t.Fatalf("cut after %s: %s-wal holds %d bytes, without its database", step, filepath.Base(p), fi.Size())
					}
				}
			}
		})
	}
}

// holdRead holds a read transaction of the store until the returned
// release is called, as the replicator does until it lets go.
func holdRead(t *testing.T, store string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+store)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM inodes").Scan(&n); err != nil {
		tx.Rollback()
		db.Close()
		t.Fatal(err)
	}
	return func() {
		tx.Rollback()
		db.Close()
	}
}
