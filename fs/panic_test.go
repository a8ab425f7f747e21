package fs_test

import (
	"context"
	"database/sql"
	"log/slog"
	"strconv"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// panicked runs fn and returns what it panicked with, nil if nothing.
func panicked(fn func()) (p any) {
	defer func() { p = recover() }()
	fn()
	return nil
}

// serves fails the test unless f still takes changes, reads and syncs
// after a panic: one left holding the core's lock hangs them all.
func serves(t *testing.T, f *sfs.FS) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		err := f.WriteFile("/after", []byte("after"), 0o644)
		if err == nil {
			_, err = f.ReadFile("/after")
		}
		if err == nil {
			err = f.Sync(context.Background())
		}
		done <- err
	}()
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(testenv.Slack(10 * time.Second)):
		t.Fatal("the workspace hangs after the panic")
	}
}

// A panic in the check RestorePathsIf runs (the undo tool's, on the
// writer with the core's lock held) is the caller's panic, where the
// tools' recover takes it: on the writer it ended the process.
func TestPanicInRestoreCheck(t *testing.T) {
	f, _ := open(t, sfs.Options{})
	must(t, f.WriteFile("/a", []byte("one"), 0o644))
	ci, err := f.Checkpoint(t.Context(), sfs.CheckpointOptions{})
	must(t, err)
	must(t, f.WriteFile("/a", []byte("two"), 0o644))
	p := panicked(func() {
		_ = f.RestorePathsIf(t.Context(), strconv.FormatInt(ci.ID, 10), []string{"/a"}, func(context.Context) error {
			panic("check panicked")
		})
	})
	if p != "check panicked" {
		t.Fatalf("the caller got %v, want the check's panic", p)
	}
	serves(t, f)
	if b, err := f.ReadFile("/a"); err != nil || string(b) != "two" {
		t.Errorf("/a after the refused restore: %q %v", b, err)
	}
	must(t, f.RestorePaths(t.Context(), strconv.FormatInt(ci.ID, 10), []string{"/a"}))
	if b, err := f.ReadFile("/a"); err != nil || string(b) != "one" {
		t.Errorf("/a restored: %q %v", b, err)
	}
}

// panicHandler is a logger that panics: a panic inside the core while it
// holds its lock, where a store read failed.
type panicHandler struct{ slog.Handler }

func (panicHandler) Handle(context.Context, slog.Record) error { panic("logger panicked") }

// A panic in the core with its lock held, here in a write by inode that
// reads a hard-linked file's names from a failing store, lets the lock
// go: the workspace serves on once the caller recovered.
func TestPanicWithLockHeld(t *testing.T) {
	f, store := open(t, sfs.Options{})
	must(t, f.Mkdir("/ro", 0o755))
	must(t, f.WriteFile("/ro/f", []byte("ro"), 0o644))
	must(t, f.Link("/ro/f", "/h"))
	f = reopen(t, f, store, sfs.Options{
		Policy: sfs.Policy{ReadOnly: []string{"ro/**"}},
		Logger: slog.New(panicHandler{slog.Default().Handler()}),
	})
	x := f.Inodes()
	h, err := x.Lookup(sqlstore.Root, "h")
	must(t, err)
	db, err := sql.Open("sqlite3", store)
	must(t, err)
	defer db.Close()
	_, err = db.Exec(`ALTER TABLE dentries RENAME TO dentries_away`)
	must(t, err)
	p := panicked(func() { _, _ = x.WriteAt(h.Ino, []byte("w"), 0, true) })
	_, err = db.Exec(`ALTER TABLE dentries_away RENAME TO dentries`)
	must(t, err)
	if p != "logger panicked" {
		t.Fatalf("the caller got %v, want the logger's panic", p)
	}
	serves(t, f)
}
