package tools_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// TestUndo: undo puts back exactly what one exec changed, refuses when a
// later change touched the same paths, and leaves the rest alone.
func TestUndo(t *testing.T) {
	e := newCkEnv(t, &tools.DefaultCheckpointRetention, sfs.Policy{})
	ctx := t.Context()
	e.run("echo base > a && echo base > b && mkdir -p dir && echo base > dir/x")
	target := e.run("echo changed > a && rm b && echo new > c && mkdir -p made/deep && echo y > made/deep/y")
	e.run("echo other > z")
	res, err := e.svc.Undo(ctx, "test", target.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Checkpoint != target.Checkpoint || !slices.Contains(res.Restored, "a") || !slices.Contains(res.Restored, "made/deep/y") {
		t.Errorf("undo result %+v (exec checkpoint %s)", res, target.Checkpoint)
	}
	for name, want := range map[string]string{"/a": "base\n", "/b": "base\n", "/c": "<missing>", "/made/deep/y": "<missing>", "/z": "other\n", "/dir/x": "base\n"} {
		if got := e.read(name); got != want {
			t.Errorf("after undo %s = %q, want %q", name, got, want)
		}
	}
	if _, err := e.f.Stat("/made"); err == nil {
		t.Errorf("directory made by the undone exec is still there")
	}

	// Undoing one exec is no later change to another's paths: undo both
	// of two disjoint execs, the later first and then the earlier.
	x := e.run("echo x > x1")
	y := e.run("echo y > y1")
	for _, id := range []string{y.ID, x.ID} {
		if _, err := e.svc.Undo(ctx, "test", id); err != nil {
			t.Errorf("undo %s after another undo: %v", id, err)
		}
	}
	if x1, y1 := e.read("/x1"), e.read("/y1"); x1 != "<missing>" || y1 != "<missing>" {
		t.Errorf("after undoing both: x1=%q y1=%q", x1, y1)
	}

	// A later exec changed a path of the one to undo: refused, naming it,
	// nothing changed.
	first := e.run("echo 1 > p && mkdir q && echo 1 > q/in")
	e.run("echo 2 > p && echo 2 > q/later")
	_, err = e.svc.Undo(ctx, "test", first.ID)
	if codeOf(err) != tools.CodeConflict || !strings.Contains(err.Error(), "p (exec:") || !strings.Contains(err.Error(), "q/later (exec:") {
		t.Fatalf("undo over later changes: %v", err)
	}
	if p, later := e.read("/p"), e.read("/q/later"); p != "2\n" || later != "2\n" {
		t.Errorf("refused undo changed files: p=%q q/later=%q", p, later)
	}
	// A tool's write counts as much as an exec's.
	third := e.run("echo 3 > t")
	if _, err := e.svc.Write(ctx, tools.WriteInput{Path: "t", Content: "tool\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Undo(ctx, "test", third.ID); codeOf(err) != tools.CodeConflict || !strings.Contains(err.Error(), "t (tool:write)") {
		t.Errorf("undo over a tool's write: %v", err)
	}

	for _, tc := range []struct{ id, want string }{
		{"nosuchexec", string(tools.CodeNoCheckpoint)},
		{"", string(tools.CodeInvalid)},
		{"../../x\x00", string(tools.CodeNoCheckpoint)},
	} {
		if _, err := e.svc.Undo(ctx, "test", tc.id); string(codeOf(err)) != tc.want {
			t.Errorf("undo %q: %v, want code %s", tc.id, err, tc.want)
		}
	}
}

// TestUndoConflictCheckAtomic: a change by another actor landing right
// after undo's conflict check reads the audit (through Options.Audit, the
// read of later events) and before its restore is still seen as a
// conflict, and survives: the check ends in the restore's own step.
func TestUndoConflictCheckAtomic(t *testing.T) {
	f, err := sfs.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sh := shell.New(f, shell.Options{})
	t.Cleanup(func() { sh.Close() })
	var undoing atomic.Bool
	var writes atomic.Int64
	other := f.WithActor("other")
	audit := func(ctx context.Context, filter sqlstore.AuditFilter) ([]sqlstore.AuditEvent, error) {
		if err := f.Flush(ctx); err != nil {
			return nil, err
		}
		ev, err := f.Store().Audit(ctx, filter)
		if undoing.Load() && filter.AfterSeq > 0 {
			n := writes.Add(1)
			if werr := other.WriteFile("/p", []byte(fmt.Sprintf("other %d\n", n)), 0o644); werr != nil {
				t.Error(werr)
			}
		}
		return ev, err
	}
	svc := tools.NewForCore(f, map[string]sidecar.Backend{"shell": sh}, tools.Options{AutoCheckpoint: &tools.DefaultCheckpointRetention, Audit: audit})
	e := &ckEnv{t, f, svc}
	e.run("echo base > p")
	target := e.run("echo changed > p")
	undoing.Store(true)
	_, err = svc.Undo(t.Context(), "test", target.ID)
	undoing.Store(false)
	if writes.Load() == 0 {
		t.Fatal("undo read no later events through Options.Audit: nothing was written in between")
	}
	last := fmt.Sprintf("other %d\n", writes.Load())
	if codeOf(err) != tools.CodeConflict || !strings.Contains(err.Error(), "p (other)") {
		t.Errorf("undo with another's write after its audit reads: %v, want a conflict naming p (other)", err)
	}
	if got := e.read("/p"); got != last {
		t.Errorf("/p = %q after undo, want the other actor's last write %q", got, last)
	}
}
