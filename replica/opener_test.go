package replica

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// openDir is a host's Dir under a fresh root, its stores opened as a
// replicating host opens them.
func openDir(t *testing.T) *host.Dir {
	t.Helper()
	d, err := host.OpenDir(filepath.Join(t.TempDir(), "ws"), workspace.Options{FS: sfs.Options{ExternalWALCheckpoints: true}}, api.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func toolsOf(t *testing.T, ws host.Workspace) *tools.Service {
	t.Helper()
	ts, ok := ws.(interface{ Tools() *tools.Service })
	if !ok || ts.Tools() == nil {
		t.Fatalf("%T has no tools", ws)
	}
	return ts.Tools()
}

// TestHibernatedWorkspaceIsInTheReplica writes to a workspace and closes
// it at once, as a host hibernating it does: its last write is in the
// replica when Close returns, and litestream lets the store go, so the
// host's death right then loses nothing. A second host without the
// workspace then restores it on first open.
func TestHibernatedWorkspaceIsInTheReplica(t *testing.T) {
	ctx := context.Background()
	op, o := startOpener(t)
	d, sup := op.Dir, op.Supervisor
	if err := d.Create("ws-1", nil); err != nil {
		t.Fatal(err)
	}
	// Twice: a first open (litestream finds the new store) and a wake.
	for i, content := range []string{"first\n", "the last write\n"} {
		ws, err := op.Open(ctx, "ws-1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := toolsOf(t, ws).Write(ctx, tools.WriteInput{Path: "notes.txt", Content: content}); err != nil {
			t.Fatal(err)
		}
		if err := ws.Close(ctx); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
		// Hibernated, it is out of litestream's hands: no read
		// transaction, descriptors or monitor kept for it.
		sts, err := sup.Status(ctx)
		if err != nil || len(sts) != 0 {
			t.Fatalf("litestream still replicates %v (%v) after the hibernation", sts, err)
		}
	}
	// The host dies right after the hibernation: its litestream too.
	pid, err := sup.pid(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Straight from the object store, without the host's help.
	out := filepath.Join(t.TempDir(), "check.sqlfs")
	ro := o
	ro.URL = WorkspaceURL(o.URL, "ws-1", 0)
	if err := Restore(ctx, ro, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if b, err := openFS(t, out).ReadFile("notes.txt"); err != nil || string(b) != "the last write\n" {
		t.Fatalf("the replica has %q, %v; want the last write", b, err)
	}

	// Another host, with nothing local: the first open restores.
	d2 := openDir(t)
	op2 := &Opener{Dir: d2, Options: o}
	ws, err := op2.Open(ctx, "ws-1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := toolsOf(t, ws).Read(ctx, tools.ReadInput{Path: "notes.txt"})
	if err != nil || !strings.Contains(got.Content, "the last write") {
		t.Fatalf("restored workspace reads %q, %v", got.Content, err)
	}
	if err := ws.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(d2.Root(), ".restore")); len(ents) > 0 {
		t.Fatalf("restore left %v behind", ents)
	}
	// An id the replica does not have stays unknown, and a bad one is refused.
	for _, id := range []string{"nope", "../ws-1", "UPPER"} {
		if _, err := op2.Open(ctx, id); !errors.Is(err, host.ErrNotFound) {
			t.Errorf("open %q: %v, want ErrNotFound", id, err)
		}
	}
}
