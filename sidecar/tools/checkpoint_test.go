package tools_test

import (
	"errors"
	"io"
	iofs "io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// ckEnv is a service over a real core and shell backend.
type ckEnv struct {
	t   *testing.T
	f   *sfs.FS
	svc *tools.Service
}

func newCkEnv(t *testing.T, keep *tools.CheckpointRetention, policy sfs.Policy) *ckEnv {
	t.Helper()
	f, err := sfs.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), sfs.Options{Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sh := shell.New(f, shell.Options{})
	t.Cleanup(func() { sh.Close() })
	return &ckEnv{t, f, tools.NewForCore(f, map[string]sidecar.Backend{"shell": sh}, tools.Options{AutoCheckpoint: keep})}
}

func (e *ckEnv) run(cmd string) tools.ExecResult {
	e.t.Helper()
	res, err := e.svc.Exec(e.t.Context(), tools.ExecInput{Command: cmd}, io.Discard, io.Discard, nil)
	if err != nil || res.ExitCode != 0 {
		e.t.Fatalf("%q: %v, exit %d", cmd, err, res.ExitCode)
	}
	return res
}

func (e *ckEnv) read(name string) string {
	e.t.Helper()
	b, err := e.f.ReadFile(name)
	if errors.Is(err, iofs.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func codeOf(err error) tools.Code {
	var te *tools.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return ""
}

// TestCheckpointRestoreDiff: create, list, diff and restore through the
// service, by id and by name, with the errors a caller can hit.
func TestCheckpointRestoreDiff(t *testing.T) {
	e := newCkEnv(t, nil, sfs.Policy{})
	ctx := t.Context()
	e.run("echo one > a && echo keep > k && mkdir d")
	c1, err := e.svc.CreateCheckpoint(ctx, "test", "first one/ü")
	if err != nil {
		t.Fatal(err)
	}
	if c1.ID == "" || c1.Name != "first one/ü" || c1.Auto {
		t.Fatalf("created %+v", c1)
	}
	e.run("echo two > a && echo new > d/n && rm k")
	diff, err := e.svc.DiffCheckpoints(ctx, "test", c1.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := tools.NameStatus(diff); got != "M\ta\nA\td/n\nD\tk\n" {
		t.Errorf("diff against live:\n%s", got)
	}
	c2, err := e.svc.CreateCheckpoint(ctx, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	if d2, err := e.svc.DiffCheckpoints(ctx, "test", c1.ID, c2.ID); err != nil || !slices.Equal(d2, diff) {
		t.Errorf("diff of two checkpoints = %v, %v; want %v", d2, err, diff)
	}
	if _, err := e.svc.RestoreCheckpoint(ctx, "test", c1.Name); err != nil {
		t.Fatal(err)
	}
	if a, k, n := e.read("/a"), e.read("/k"), e.read("/d/n"); a != "one\n" || k != "keep\n" || n != "<missing>" {
		t.Errorf("after restore a=%q k=%q d/n=%q", a, k, n)
	}
	list, err := e.svc.ListCheckpoints(ctx, "test")
	if err != nil || len(list) != 2 || list[0].ID != c1.ID || list[1].ID != c2.ID {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if _, err := e.svc.DeleteCheckpoint(ctx, "test", c1.ID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want tools.Code
	}{
		{"restore deleted", func() error { _, err := e.svc.RestoreCheckpoint(ctx, "test", c1.ID); return err }(), tools.CodeNoCheckpoint},
		{"restore unknown name", func() error { _, err := e.svc.RestoreCheckpoint(ctx, "test", "nope"); return err }(), tools.CodeNoCheckpoint},
		{"restore empty", func() error { _, err := e.svc.RestoreCheckpoint(ctx, "test", ""); return err }(), tools.CodeInvalid},
		{"diff unknown to", func() error { _, err := e.svc.DiffCheckpoints(ctx, "test", c2.ID, "999999"); return err }(), tools.CodeNoCheckpoint},
		{"diff malformed", func() error { _, err := e.svc.DiffCheckpoints(ctx, "test", "a\x00b", ""); return err }(), tools.CodeInvalid},
		{"name in use", func() error {
			_, err := e.svc.CreateCheckpoint(ctx, "test", "x")
			_, err = e.svc.CreateCheckpoint(ctx, "test", "x")
			return err
		}(), tools.CodeExists},
		{"all-digit name", func() error { _, err := e.svc.CreateCheckpoint(ctx, "test", "123"); return err }(), tools.CodeInvalid},
		{"control byte name", func() error { _, err := e.svc.CreateCheckpoint(ctx, "test", "a\nb"); return err }(), tools.CodeInvalid},
		{"delete unknown", func() error { _, err := e.svc.DeleteCheckpoint(ctx, "test", "-1"); return err }(), tools.CodeNoCheckpoint},
		{"relative fork", e.svc.Fork(ctx, "test", "", "rel.db"), tools.CodeInvalid},
	} {
		if got := codeOf(tc.err); got != tc.want {
			t.Errorf("%s: %v (code %q), want code %q", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestAutoCheckpointRetention: each exec takes a checkpoint linked to it,
// retention keeps only the newest automatic ones, and named ones stay.
func TestAutoCheckpointRetention(t *testing.T) {
	e := newCkEnv(t, &tools.CheckpointRetention{Keep: 2}, sfs.Policy{})
	ctx := t.Context()
	named, err := e.svc.CreateCheckpoint(ctx, "test", "mine")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 4 {
		res := e.run("echo " + strings.Repeat("x", i) + " > f")
		if res.Checkpoint == "" {
			t.Fatalf("exec %d result has no checkpoint", i)
		}
		ids = append(ids, res.ID)
	}
	list, err := e.svc.ListCheckpoints(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range list {
		if c.Auto {
			got = append(got, c.Exec)
		} else if c.ID != named.ID {
			t.Errorf("unexpected manual checkpoint %+v", c)
		}
	}
	if !slices.Equal(got, ids[2:]) || len(list) != 3 {
		t.Errorf("automatic checkpoints for execs %q (of %q), %d in all; want the last two and the named one", got, ids, len(list))
	}
	// The audit links the exec to its checkpoint, and that is no change.
	ev, err := e.svc.Audit(ctx, sqlstore.AuditFilter{Actor: tools.Actor(ids[3]), Op: "checkpoint"})
	if err != nil || len(ev) != 1 || !strings.HasPrefix(ev[0].Path2, "checkpoint:") {
		t.Errorf("audit of exec %s's checkpoint: %+v, %v", ids[3], ev, err)
	}
	if ch, _ := e.svc.Changes(ctx, ids[3]); !slices.Equal(ch, []string{"f"}) {
		t.Errorf("changes = %q, want only f", ch)
	}
	// Age: everything automatic is older than a nanosecond.
	e2 := newCkEnv(t, &tools.CheckpointRetention{MaxAge: time.Nanosecond}, sfs.Policy{})
	e2.run("echo a > a")
	e2.run("echo b > b")
	list, _ = e2.svc.ListCheckpoints(ctx, "test")
	if len(list) > 1 {
		t.Errorf("with max age 1ns, %d automatic checkpoints stay: %+v", len(list), list)
	}
}

// TestUndoWithoutAutoCheckpoints: an exec run without automatic
// checkpoints cannot be undone, and says why.
func TestUndoWithoutAutoCheckpoints(t *testing.T) {
	e := newCkEnv(t, nil, sfs.Policy{})
	res := e.run("echo x > f")
	if res.Checkpoint != "" {
		t.Errorf("checkpoint %q taken although automatic checkpoints are off", res.Checkpoint)
	}
	if _, err := e.svc.Undo(t.Context(), "test", res.ID); codeOf(err) != tools.CodeNoCheckpoint || !strings.Contains(err.Error(), "without automatic checkpoints") {
		t.Errorf("undo: %v", err)
	}
}

// TestRestoreWhileExecWrites: a restore racing an exec that keeps
// appending leaves the exec's later writes on the restored tree (or
// failing), never on the checkpoint, which reads the same afterwards.
func TestRestoreWhileExecWrites(t *testing.T) {
	e := newCkEnv(t, &tools.DefaultCheckpointRetention, sfs.Policy{})
	ctx := t.Context()
	e.run("echo base > f")
	c, err := e.svc.CreateCheckpoint(ctx, "test", "base")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan tools.ExecResult, 1)
	go func() {
		res, _ := e.svc.Exec(ctx, tools.ExecInput{Command: "i=0; while [ $i -lt 3000 ]; do echo $i >> f; echo $i > g$((i % 7)); i=$((i+1)); done"}, io.Discard, io.Discard, nil)
		done <- res
	}()
	restores := 0
	for running := true; running; {
		select {
		case res := <-done:
			if res.ExitCode != 0 {
				t.Errorf("writer exec: %+v", res)
			}
			running = false
		default:
			if _, err := e.svc.RestoreCheckpoint(ctx, "test", c.Name); err != nil {
				t.Fatalf("restore %d: %v", restores, err)
			}
			restores++
		}
	}
	if restores < 2 {
		t.Fatalf("only %d restores raced the exec: the test proves nothing", restores)
	}
	// The last restore's tree plus the writes after it: base, then a run
	// of consecutive numbers, nothing torn or interleaved.
	lines := strings.Split(strings.TrimSuffix(e.read("/f"), "\n"), "\n")
	if lines[0] != "base" {
		t.Errorf("f after %d restores starts with %q", restores, lines[0])
	}
	for i := 2; i < len(lines); i++ {
		a, errA := strconv.Atoi(lines[i-1])
		b, errB := strconv.Atoi(lines[i])
		if errA != nil || errB != nil || b != a+1 {
			t.Fatalf("f after %d restores: line %d %q follows %q", restores, i, lines[i], lines[i-1])
		}
	}
	if _, err := e.svc.RestoreCheckpoint(ctx, "test", c.ID); err != nil {
		t.Fatal(err)
	}
	if f, g := e.read("/f"), e.read("/g0"); f != "base\n" || g != "<missing>" {
		t.Errorf("checkpoint changed by the writes that raced %d restores: f=%q g0=%q", restores, f, g)
	}
	if d, err := e.svc.DiffCheckpoints(ctx, "test", c.ID, ""); err != nil || len(d) != 0 {
		t.Errorf("diff after restoring again: %v, %v", d, err)
	}
}

// TestRestorePolicyErrors: a restore that would rewrite a read-only path
// or pass the quota is refused with the tools' codes, naming the paths,
// and changes nothing.
func TestRestorePolicyErrors(t *testing.T) {
	store := filepath.Join(t.TempDir(), "ws.db")
	f, err := sfs.Open(t.Context(), store, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.MkdirAll("/ro", 0o755))
	must(f.WriteFile("/ro/x", []byte("old"), 0o644))
	if _, err := f.Checkpoint(t.Context(), sfs.CheckpointOptions{Name: "old"}); err != nil {
		t.Fatal(err)
	}
	must(f.WriteFile("/ro/x", []byte("new"), 0o644))
	must(f.Remove("/ro/x"))
	must(f.WriteFile("/fat", make([]byte, 150), 0o644))
	if _, err := f.Checkpoint(t.Context(), sfs.CheckpointOptions{Name: "fat"}); err != nil {
		t.Fatal(err)
	}
	must(f.Remove("/fat"))
	must(f.WriteFile("/big", make([]byte, 80), 0o644))
	must(f.Close())

	f, err = sfs.Open(t.Context(), store, sfs.Options{Policy: sfs.Policy{ReadOnly: []string{"ro/**"}, QuotaBytes: 100}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	svc := tools.NewForCore(f, nil, tools.Options{})
	_, err = svc.RestoreCheckpoint(t.Context(), "test", "old")
	if codeOf(err) != tools.CodeDenied || !strings.Contains(err.Error(), "ro/x") {
		t.Errorf("restore over a read-only path: %v (code %s)", err, codeOf(err))
	}
	// The quota counts the live tree: restoring 150 bytes passes 100.
	_, err = svc.RestoreCheckpoint(t.Context(), "test", "fat")
	if codeOf(err) != tools.CodeNoSpace {
		t.Errorf("restore past the quota: %v (code %s)", err, codeOf(err))
	}
	if b, err := f.ReadFile("/big"); err != nil || len(b) != 80 {
		t.Errorf("refused restore changed big: %d bytes, %v", len(b), err)
	}
}

// TestReadOnlyExecForcesNoCommit: an exec that changes nothing, after one
// that did not either, reuses the newest checkpoint and lists its changes
// without forcing a commit (what is left waiting is the checkpoint's audit
// event), while an exec that changes files still lists them all, and both
// can be undone.
func TestReadOnlyExecForcesNoCommit(t *testing.T) {
	f, err := sfs.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), sfs.Options{CommitInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sh := shell.New(f, shell.Options{})
	t.Cleanup(func() { sh.Close() })
	e := &ckEnv{t, f, tools.NewForCore(f, map[string]sidecar.Backend{"shell": sh}, tools.Options{AutoCheckpoint: &tools.DefaultCheckpointRetention})}
	if res := e.run("echo a > f"); !slices.Equal(res.Changed, []string{"f"}) {
		t.Fatalf("changed %q", res.Changed)
	}
	first := e.run("echo hi")
	before := testutil.ToFloat64(metrics.StoreCommits)
	second := e.run("echo hi")
	if n := testutil.ToFloat64(metrics.StoreCommits) - before; n != 0 {
		t.Errorf("an exec that changed nothing, after one that changed nothing, cost %v commits", n)
	}
	if second.Checkpoint != first.Checkpoint || len(second.Changed) != 0 {
		t.Errorf("second read-only exec: checkpoint %s (first %s), changed %q", second.Checkpoint, first.Checkpoint, second.Changed)
	}
	third := e.run("echo b > g; echo c > f")
	if !slices.Equal(third.Changed, []string{"f", "g"}) || third.Checkpoint != first.Checkpoint {
		t.Fatalf("a writing exec after them: changed %q, checkpoint %s", third.Changed, third.Checkpoint)
	}
	if res, err := e.svc.Undo(t.Context(), "test", second.ID); err != nil || len(res.Restored) != 0 {
		t.Errorf("undo of the read-only exec: %+v %v", res, err)
	}
	if res, err := e.svc.Undo(t.Context(), "test", third.ID); err != nil || len(res.Restored) != 2 {
		t.Fatalf("undo of the writing exec: %+v %v", res, err)
	}
	if got := e.read("/f") + e.read("/g"); got != "a\n<missing>" {
		t.Errorf("after undo: f, g = %q", got)
	}
}
