package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/sqlfs/sqlfs/sqlstore"
)

func newStore(t *testing.T) (*sqlstore.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ws.db")
	st, err := sqlstore.Open(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	notSQLite := filepath.Join(dir, "text")
	os.WriteFile(notSQLite, []byte("hello, this is not a database at all, just text"), 0o644)
	foreign := filepath.Join(dir, "foreign.db")
	db, err := sql.Open("sqlite3", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t(x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	cases := []struct {
		name, path string
		want       error
	}{
		{"text file", notSQLite, sqlstore.ErrNotStore},
		{"another application's database", foreign, sqlstore.ErrNotStore},
		{"a directory", dir, sqlstore.ErrNotStore},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := sqlstore.Open(t.Context(), c.path, sqlstore.Options{})
			if err == nil {
				st.Close()
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

func TestOwnerLockNamesOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ws.db")
	st, err := sqlstore.Open(t.Context(), path, sqlstore.Options{Socket: "/run/x.sock"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sqlstore.Open(t.Context(), path, sqlstore.Options{})
	var owned *sqlstore.OwnedError
	if !errors.As(err, &owned) || owned.Pid != os.Getpid() || owned.Socket != "/run/x.sock" {
		t.Fatalf("second open: %v", err)
	}
	st.Close()
	// Released: the next opener takes it over.
	st2, err := sqlstore.Open(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	st2.Close()
}

func TestChunksAndCheck(t *testing.T) {
	st, path := newStore(t)
	ctx := context.Background()
	b := &sqlstore.Batch{
		Inodes:   []sqlstore.Inode{{Ino: 2, Mode: 0o100644, Nlink: 1, Size: 300}},
		Dentries: []sqlstore.Dentry{{Parent: sqlstore.Root, Name: "f", Ino: 2}},
		Chunks: []sqlstore.Chunk{
			{Ino: 2, Idx: 0, Data: []byte("zero")},
		},
		Durable: true,
	}
	if err := st.Commit(ctx, b); err != nil {
		t.Fatal(err)
	}
	if d, err := st.ReadChunk(ctx, 2, 0); err != nil || string(d) != "zero" {
		t.Fatalf("ReadChunk: %q %v", d, err)
	}
	if d, err := st.ReadChunk(ctx, 2, 1); err != nil || d != nil {
		t.Fatalf("hole: %q %v", d, err)
	}
	if ps, err := st.Check(ctx); err != nil || len(ps) > 0 {
		t.Fatalf("check of a good store: %v %v", ps, err)
	}
	// Break it behind the store's back: Check must say how.
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"INSERT INTO dentries(parent, name, ino) VALUES (1, 'ghost', 99)",
		"INSERT INTO chunks(key, data) VALUES ((77 << 24) | 3, x'00')",
		"UPDATE inodes SET nlink = 5 WHERE ino = 2",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := st.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	text := sqlstore.FormatProblems(ps)
	for _, kind := range []string{"dangling-dentry", "orphan-chunk", "nlink"} {
		if !strings.Contains(text, kind+":") {
			t.Errorf("check missed %s:\n%s", kind, text)
		}
	}
}

// commitFile stores a one-chunk file /fN with content data.
func commitFile(t *testing.T, st *sqlstore.Store, ino uint64, data string) {
	t.Helper()
	err := st.Commit(t.Context(), &sqlstore.Batch{
		Inodes:   []sqlstore.Inode{{Ino: ino, Mode: 0o100644, Nlink: 1, Size: int64(len(data))}},
		Dentries: []sqlstore.Dentry{{Parent: sqlstore.Root, Name: fmt.Sprintf("f%d", ino), Ino: ino}},
		Chunks:   []sqlstore.Chunk{{Ino: ino, Idx: 0, Data: []byte(data)}},
	})
	if err != nil {
		t.Fatal(err)
	}
}
