package replica

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// TestRestoreOverALeftoverWAL: a restore links the restored store into
// place where a WAL of another store stood at its name (a store moved or
// lost without its WAL, a crash between the two): SQLite would replay
// those frames over the restored pages. The restore removes it first
// (seen failing: the workspace read the other store's data, or failed to
// open).
func TestRestoreOverALeftoverWAL(t *testing.T) {
	ctx := context.Background()
	op, o := startOpener(t)
	const id = "ws-1"
	if err := op.Dir.Create(id, nil); err != nil {
		t.Fatal(err)
	}
	ws, err := op.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toolsOf(t, ws).Write(ctx, tools.WriteInput{Path: "notes.txt", Content: "the replica's\n"}); err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// A WAL with frames, of another store, copied while that store is open.
	other := filepath.Join(t.TempDir(), "other.sqlfs")
	f := openFS(t, other)
	for i := range 20 {
		if err := f.WriteFile("/notes.txt", []byte(strings.Repeat("another store's ", 100+i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	wal, err := os.ReadFile(other + "-wal")
	if err != nil || len(wal) <= 32 {
		t.Fatalf("the other store's WAL: %d bytes, %v", len(wal), err)
	}

	d2 := openDir(t)
	if err := d2.Create(id, nil); err != nil {
		t.Fatal(err)
	}
	store := d2.StorePath(id)
	if err := os.WriteFile(store+"-wal", wal, 0o600); err != nil {
		t.Fatal(err)
	}
	op2 := &Opener{Dir: d2, Options: o}
	ws, err = op2.Open(ctx, id)
	if err != nil {
		t.Fatalf("open over a leftover WAL: %v", err)
	}
	got, err := toolsOf(t, ws).Read(ctx, tools.ReadInput{Path: "notes.txt"})
	if err != nil || !strings.Contains(got.Content, "the replica's") {
		t.Fatalf("restored over a leftover WAL, notes.txt reads %.80q, %v; want the replica's", got.Content, err)
	}
	if err := ws.Close(ctx); err != nil {
		t.Fatal(err)
	}
	check, err := sfs.Open(ctx, store, sfs.Options{ExternalWALCheckpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	if b, err := check.ReadFile("/notes.txt"); err != nil || string(b) != "the replica's\n" {
		t.Fatalf("reopened: %.80q, %v", b, err)
	}
}
