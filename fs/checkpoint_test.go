package fs_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

func diffLines(t *testing.T, f *sfs.FS, from, to string) []string {
	t.Helper()
	d, err := f.Diff(t.Context(), from, to)
	must(t, err)
	var out []string
	for _, e := range d {
		out = append(out, e.String())
	}
	return out
}

// storeCount counts rows of the store's table through a connection of
// the test's own (WAL readers run beside the owner).
func storeCount(t *testing.T, store, table string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+store+"?mode=ro")
	must(t, err)
	defer db.Close()
	var n int
	must(t, db.QueryRow("SELECT count(*) FROM "+table).Scan(&n))
	return n
}

func TestCheckpointRestoreDiff(t *testing.T) {
	ctx := t.Context()
	f, store := open(t, sfs.Options{ChunkSize: 4096})
	must(t, f.MkdirAll("/src/sub", 0o755))
	must(t, f.WriteFile("/src/a.go", []byte("package a"), 0o644))
	must(t, f.WriteFile("/src/sub/b.go", []byte("package b"), 0o644))
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB, 256 chunks
	must(t, f.WriteFile("/big", big, 0o644))
	cp, err := f.Checkpoint(ctx, sfs.CheckpointOptions{Name: "before"})
	must(t, err)

	must(t, f.WriteFile("/src/a.go", []byte("package a // changed"), 0o644))
	must(t, f.Remove("/src/sub/b.go"))
	must(t, f.WriteFile("/src/new.go", []byte("package new"), 0o644))
	fl, err := f.OpenFile("/big", syscall.O_RDWR, 0)
	must(t, err)
	_, err = fl.WriteAt([]byte("X"), 500_000)
	must(t, err)
	must(t, fl.Close())
	check(t, f)
	// One byte changed in a 1 MiB file: one chunk kept for the checkpoint.
	a, err := f.Stat("/big")
	must(t, err)
	if n := storeCount(t, store, fmt.Sprintf("chunks_hist WHERE key >> 24 = %d", a.Ino)); n != 1 {
		t.Errorf("a one-byte write after a checkpoint kept %d chunks, want 1", n)
	}
	want := []string{"M\t/big", "M\t/src/a.go", "A\t/src/new.go", "D\t/src/sub/b.go"}
	for _, ref := range []string{"before", "1"} {
		if got := diffLines(t, f, ref, ""); !slices.Equal(got, want) {
			t.Fatalf("diff %s: %q, want %q", ref, got, want)
		}
	}
	cp2, err := f.Checkpoint(ctx, sfs.CheckpointOptions{})
	must(t, err)
	if got := diffLines(t, f, "before", "2"); !slices.Equal(got, want) {
		t.Fatalf("diff between checkpoints: %q, want %q", got, want)
	}
	back := []string{"M\t/big", "M\t/src/a.go", "D\t/src/new.go", "A\t/src/sub/b.go"}
	if got := diffLines(t, f, "2", "before"); !slices.Equal(got, back) {
		t.Fatalf("diff backwards: %q, want %q", got, back)
	}

	must(t, f.Restore(ctx, "before"))
	for p, data := range map[string][]byte{"/src/a.go": []byte("package a"), "/src/sub/b.go": []byte("package b"), "/big": big} {
		if got, err := f.ReadFile(p); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("after restore, %s: %.40q %v", p, got, err)
		}
	}
	if _, err := f.Stat("/src/new.go"); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("a file made after the checkpoint is still there after restore: %v", err)
	}
	if got := diffLines(t, f, "before", ""); len(got) != 0 {
		t.Fatalf("diff after restore: %q", got)
	}
	check(t, f)
	// And forward again.
	must(t, f.Restore(ctx, "2"))
	if got, _ := f.ReadFile("/src/new.go"); string(got) != "package new" {
		t.Fatalf("restore of the later checkpoint: %q", got)
	}
	check(t, f)

	cps, err := f.Checkpoints(ctx)
	must(t, err)
	if len(cps) != 2 || cps[0].ID != cp.ID || cps[0].Name != "before" || cps[1].ID != cp2.ID {
		t.Fatalf("checkpoints: %+v", cps)
	}
	must(t, f.DeleteCheckpoint(ctx, "before"))
	must(t, f.DeleteCheckpoint(ctx, "2"))
	_, err = f.Store().CollectGarbage(ctx)
	must(t, err)
	check(t, f)
	for _, table := range []string{"chunks_hist", "inodes_hist", "dentries_hist", "checkpoints"} {
		if n := storeCount(t, store, table); n != 0 {
			t.Errorf("%s holds %d rows after every checkpoint was deleted", table, n)
		}
	}
	g := reopen(t, f, store, sfs.Options{})
	check(t, g)
}

// Unknown, malformed and duplicate references get their own errors and
// change nothing.
func TestCheckpointBadRefs(t *testing.T) {
	ctx := t.Context()
	f, _ := open(t, sfs.Options{})
	must(t, f.WriteFile("/x", []byte("x"), 0o644))
	_, err := f.Checkpoint(ctx, sfs.CheckpointOptions{Name: "n"})
	must(t, err)
	cases := []struct {
		ref  string
		want error
	}{
		{"999", sfs.ErrCheckpointNotFound},
		{"nosuch", sfs.ErrCheckpointNotFound},
		{"", sfs.ErrBadCheckpointRef},
		{"007", sfs.ErrBadCheckpointRef},
		{"-1", sfs.ErrCheckpointNotFound},
		{"a\nb", sfs.ErrBadCheckpointRef},
		{strings.Repeat("x", 300), sfs.ErrBadCheckpointRef},
		{"99999999999999999999999", sfs.ErrBadCheckpointRef},
	}
	for _, c := range cases {
		if _, err := f.ResolveCheckpoint(ctx, c.ref); !errors.Is(err, c.want) {
			t.Errorf("resolve %q: %v, want %v", c.ref, err, c.want)
		}
		if err := f.Restore(ctx, c.ref); !errors.Is(err, c.want) {
			t.Errorf("restore %q: %v, want %v", c.ref, err, c.want)
		}
		if err := f.DeleteCheckpoint(ctx, c.ref); !errors.Is(err, c.want) {
			t.Errorf("delete %q: %v, want %v", c.ref, err, c.want)
		}
		if _, err := f.Diff(ctx, c.ref, ""); !errors.Is(err, c.want) {
			t.Errorf("diff %q: %v, want %v", c.ref, err, c.want)
		}
	}
	for _, name := range []string{"n", "123", "a\tb"} {
		want := sfs.ErrBadCheckpointRef
		if name == "n" {
			want = sfs.ErrCheckpointExists
		}
		if _, err := f.Checkpoint(ctx, sfs.CheckpointOptions{Name: name}); !errors.Is(err, want) {
			t.Errorf("checkpoint named %q: %v, want %v", name, err, want)
		}
	}
	if cps, _ := f.Checkpoints(ctx); len(cps) != 1 {
		t.Fatalf("refused checkpoints were recorded: %+v", cps)
	}
	must(t, f.WriteFile("/y", []byte("y"), 0o644))
	check(t, f)
}

// A restore obeys the policy as the paths' own writes would, and the
// quota: refused whole, naming the paths, nothing changed.
func TestRestorePolicyAndQuota(t *testing.T) {
	ctx := t.Context()
	f, store := open(t, sfs.Options{})
	must(t, f.Mkdir("/ro", 0o755))
	must(t, f.WriteFile("/ro/conf", []byte("v1"), 0o644))
	must(t, f.WriteFile("/big", make([]byte, 100_000), 0o644))
	_, err := f.Checkpoint(ctx, sfs.CheckpointOptions{Name: "c"})
	must(t, err)
	must(t, f.WriteFile("/ro/conf", []byte("v2"), 0o644))
	must(t, f.Remove("/big"))
	must(t, f.WriteFile("/small", []byte("s"), 0o644))

	g := reopen(t, f, store, sfs.Options{Policy: sfs.Policy{ReadOnly: []string{"ro/**"}, QuotaBytes: 50_000}})
	err = g.Restore(ctx, "c")
	var refused *sfs.RestoreRefusedError
	if !errors.As(err, &refused) || !errors.Is(err, syscall.EROFS) || !slices.Equal(refused.Paths, []string{"/ro/conf"}) {
		t.Fatalf("restore over a read-only path: %v", err)
	}
	if b, _ := g.ReadFile("/ro/conf"); string(b) != "v2" {
		t.Fatalf("a refused restore changed /ro/conf: %q", b)
	}
	if err := g.RestorePaths(ctx, "c", []string{"/small", "/ro"}); !errors.As(err, &refused) || !slices.Equal(refused.Paths, []string{"/ro/conf"}) {
		t.Fatalf("RestorePaths over a read-only path: %v", err)
	}
	if _, err := g.Stat("/small"); err != nil {
		t.Fatalf("a refused RestorePaths changed the tree: %v", err)
	}
	h := reopen(t, g, store, sfs.Options{Policy: sfs.Policy{QuotaBytes: 50_000}})
	if err := h.Restore(ctx, "c"); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("restore past the quota: %v, want ENOSPC", err)
	}
	if _, err := h.Stat("/small"); err != nil {
		t.Fatalf("a refused restore changed the tree: %v", err)
	}
	must(t, h.WriteFile("/after", []byte("still writable"), 0o644))
	check(t, h)
	k := reopen(t, h, store, sfs.Options{})
	must(t, k.Restore(ctx, "c"))
	if b, _ := k.ReadFile("/ro/conf"); string(b) != "v1" {
		t.Fatalf("restore without the policy: %q", b)
	}
	check(t, k)
}

// A file open across a restore: one the checkpoint had reads the restored
// bytes; one made since lives on, unnamed, until closed.
func TestRestoreOpenHandles(t *testing.T) {
	ctx := t.Context()
	f, store := open(t, sfs.Options{})
	must(t, f.WriteFile("/old", []byte("checkpointed"), 0o644))
	_, err := f.Checkpoint(ctx, sfs.CheckpointOptions{})
	must(t, err)
	must(t, f.WriteFile("/old", []byte("rewritten!!!"), 0o644))
	must(t, f.WriteFile("/new", []byte("made later"), 0o644))
	oldH, err := f.OpenFile("/old", syscall.O_RDWR, 0)
	must(t, err)
	newH, err := f.OpenFile("/new", syscall.O_RDWR, 0)
	must(t, err)
	must(t, f.Restore(ctx, "1"))
	buf := make([]byte, 32)
	n, _ := oldH.ReadAt(buf, 0)
	if string(buf[:n]) != "checkpointed" {
		t.Errorf("handle on a restored file reads %q", buf[:n])
	}
	n, _ = newH.ReadAt(buf, 0)
	if string(buf[:n]) != "made later" {
		t.Errorf("handle on a file the checkpoint lacks reads %q", buf[:n])
	}
	if _, err := newH.WriteAt([]byte("MADE"), 0); err != nil {
		t.Errorf("write through the unnamed file's handle: %v", err)
	}
	if _, err := f.Stat("/new"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("/new after restore: %v", err)
	}
	check(t, f)
	must(t, newH.Close())
	must(t, oldH.Close())
	check(t, f)
	g := reopen(t, f, store, sfs.Options{})
	check(t, g)
}

// A store made before checkpoints opens, migrates and takes them.
func TestCheckpointsOnMigratedStore(t *testing.T) {
	f, store := open(t, sfs.Options{})
	must(t, f.WriteFile("/kept", []byte("old store"), 0o644))
	must(t, f.Close())
	db, err := sql.Open("sqlite3", store)
	must(t, err)
	must(t, downgradeToV3(db))
	_, err = db.Exec(`UPDATE meta SET v = '3' WHERE k = 'schema_version'`)
	must(t, err)
	must(t, db.Close())

	g, err := sfs.Open(t.Context(), store, sfs.Options{})
	must(t, err)
	t.Cleanup(func() { g.Close() })
	_, err = g.Checkpoint(t.Context(), sfs.CheckpointOptions{})
	must(t, err)
	must(t, g.WriteFile("/kept", []byte("changed"), 0o644))
	must(t, g.Restore(t.Context(), "1"))
	if b, _ := g.ReadFile("/kept"); string(b) != "old store" {
		t.Fatalf("restore on a migrated store: %q", b)
	}
	check(t, g)
}

// RestorePaths puts back exactly the paths given, as an undo of one exec
// needs: the others keep their later changes.
func TestRestorePaths(t *testing.T) {
	ctx := t.Context()
	f, _ := open(t, sfs.Options{Policy: sfs.Policy{ReadOnly: []string{"locked"}}})
	must(t, f.MkdirAll("/a/deep", 0o755))
	must(t, f.WriteFile("/a/deep/x", []byte("x1"), 0o600))
	must(t, f.Setxattr("/a/deep/x", "user.k", []byte("v"), 0))
	must(t, f.Link("/a/deep/x", "/a/x-link"))
	must(t, f.WriteFile("/b", []byte("b1"), 0o644))
	_, err := f.Checkpoint(ctx, sfs.CheckpointOptions{Name: "pre-exec"})
	must(t, err)
	// The exec: /a replaced, /b changed, /c made; a later one: /d.
	must(t, f.RemoveAll("/a"))
	must(t, f.WriteFile("/a", []byte("now a file"), 0o644))
	must(t, f.WriteFile("/b", []byte("b2"), 0o644))
	must(t, f.WriteFile("/c", []byte("c"), 0o644))
	must(t, f.WriteFile("/d", []byte("later"), 0o644))

	d, err := f.DiffPaths(ctx, "pre-exec", []string{"/a", "/c"})
	must(t, err)
	var got []string
	for _, e := range d {
		got = append(got, e.String())
	}
	want := []string{"M\t/a", "D\t/a/deep", "D\t/a/deep/x", "D\t/a/x-link", "A\t/c"}
	if !slices.Equal(got, want) {
		t.Fatalf("DiffPaths: %q, want %q", got, want)
	}
	must(t, f.RestorePaths(ctx, "pre-exec", []string{"/a", "/c", "/a/deep"}))
	if b, _ := f.ReadFile("/a/deep/x"); string(b) != "x1" {
		t.Fatalf("/a/deep/x after RestorePaths: %q", b)
	}
	if v, err := f.Getxattr("/a/deep/x", "user.k"); err != nil || string(v) != "v" {
		t.Fatalf("xattr after RestorePaths: %q %v", v, err)
	}
	x, err := f.Stat("/a/deep/x")
	must(t, err)
	l, err := f.Stat("/a/x-link")
	must(t, err)
	if x.Ino != l.Ino || x.Nlink != 2 || x.Mode&0o777 != 0o600 {
		t.Fatalf("hard link not restored: %+v %+v", x, l)
	}
	if _, err := f.Stat("/c"); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("/c after RestorePaths: %v", err)
	}
	for p, want := range map[string]string{"/b": "b2", "/d": "later"} {
		if b, _ := f.ReadFile(p); string(b) != want {
			t.Fatalf("%s, not restored, holds %q, want %q", p, b, want)
		}
	}
	check(t, f)

	// A read-only path that did not change does not stand in the way.
	must(t, f.RestorePaths(ctx, "pre-exec", []string{"/b", "/locked"}))
	if b, _ := f.ReadFile("/b"); string(b) != "b1" {
		t.Fatalf("/b: %q", b)
	}
	if err := f.RestorePaths(ctx, "nope", []string{"/b"}); !errors.Is(err, sfs.ErrCheckpointNotFound) {
		t.Fatalf("unknown checkpoint: %v", err)
	}
	check(t, f)
}

// Restores while writers run: every write lands before a restore (and is
// replaced) or after it (on the restored tree), never half; the store
// stays consistent, and a checkpoint never changes.
func TestRestoreWhileWriting(t *testing.T) {
	ctx := t.Context()
	f, _ := open(t, sfs.Options{CommitInterval: time.Millisecond})
	must(t, f.Mkdir("/w", 0o755))
	must(t, f.WriteFile("/w/base", []byte("base"), 0o644))
	_, err := f.Checkpoint(ctx, sfs.CheckpointOptions{Name: "c"})
	must(t, err)
	before, err := f.Diff(ctx, "c", "")
	must(t, err)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := fmt.Sprintf("/w/g%d-%d", g, i%5)
				if err := f.WriteFile(p, bytes.Repeat([]byte{byte('a' + g)}, 1000+i%3000), 0o644); err != nil && !errors.Is(err, syscall.ENOENT) {
					t.Errorf("write %s: %v", p, err)
					return
				}
				if b, err := f.ReadFile(p); err == nil && len(b) > 0 && !bytes.Equal(b, bytes.Repeat(b[:1], len(b))) {
					t.Errorf("%s holds a mix: %.20q", p, b)
					return
				}
			}
		})
	}
	for range 10 {
		must(t, f.Restore(ctx, "c"))
		time.Sleep(2 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	check(t, f)
	must(t, f.Restore(ctx, "c"))
	after, err := f.Diff(ctx, "c", "")
	must(t, err)
	if len(before) != 0 || len(after) != 0 {
		t.Fatalf("the checkpoint changed: diff before %v, after a last restore %v", before, after)
	}
}

// A checkpoint's id is never given to another, also across a reopen: a
// stale "restore 1" must fail, not restore whatever took the number.
func TestCheckpointIDsNotReused(t *testing.T) {
	ctx := t.Context()
	f, store := open(t, sfs.Options{})
	must(t, f.WriteFile("/x", []byte("1"), 0o644))
	first, err := f.Checkpoint(ctx, sfs.CheckpointOptions{})
	must(t, err)
	must(t, f.DeleteCheckpoint(ctx, fmt.Sprint(first.ID)))
	must(t, f.WriteFile("/x", []byte("2"), 0o644))
	second, err := f.Checkpoint(ctx, sfs.CheckpointOptions{})
	must(t, err)
	if second.ID == first.ID {
		t.Fatalf("checkpoint id %d given again after its delete", first.ID)
	}
	must(t, f.DeleteCheckpoint(ctx, fmt.Sprint(second.ID)))
	f = reopen(t, f, store, sfs.Options{})
	third, err := f.Checkpoint(ctx, sfs.CheckpointOptions{})
	must(t, err)
	if third.ID <= second.ID {
		t.Fatalf("after a reopen the new checkpoint took id %d, not past %d", third.ID, second.ID)
	}
	if _, err := f.ResolveCheckpoint(ctx, fmt.Sprint(first.ID)); !errors.Is(err, sfs.ErrCheckpointNotFound) {
		t.Errorf("deleted checkpoint %d resolves: %v", first.ID, err)
	}
}

// An automatic checkpoint with nothing changed since the newest one is
// that one (no commit); a change in between, even one still in RAM, makes
// a new one, and so does a restore.
func TestAutoCheckpointReuse(t *testing.T) {
	ctx := t.Context()
	f, _ := open(t, sfs.Options{})
	auto := func(exec string) sfs.CheckpointInfo {
		t.Helper()
		ci, err := f.Checkpoint(ctx, sfs.CheckpointOptions{Auto: true, ExecID: exec})
		must(t, err)
		return ci
	}
	must(t, f.WriteFile("/x", []byte("1"), 0o644))
	a := auto("a")
	if b := auto("b"); b.ID != a.ID {
		t.Errorf("nothing changed, yet a new checkpoint %d after %d", b.ID, a.ID)
	}
	must(t, f.WriteFile("/x", []byte("2"), 0o644)) // dirty, not committed
	c := auto("c")
	if c.ID == a.ID {
		t.Fatalf("a change in RAM did not make a new checkpoint")
	}
	must(t, f.Flush(ctx))
	if d := auto("d"); d.ID != c.ID {
		t.Errorf("a commit of nothing new made checkpoint %d after %d", d.ID, c.ID)
	}
	must(t, f.WriteFile("/x", []byte("3"), 0o644))
	must(t, f.Flush(ctx)) // committed, not dirty
	e := auto("e")
	if e.ID == c.ID {
		t.Fatalf("a committed change did not make a new checkpoint")
	}
	must(t, f.Restore(ctx, fmt.Sprint(a.ID)))
	g := auto("g")
	if g.ID == e.ID {
		t.Fatalf("after a restore the automatic checkpoint is the one before it")
	}
	if got, _ := f.ReadFile("/x"); string(got) != "1" {
		t.Fatalf("restored /x = %q", got)
	}
	must(t, f.DeleteCheckpoint(ctx, fmt.Sprint(g.ID)))
	if h := auto("h"); h.ID == g.ID {
		t.Fatalf("deleted checkpoint %d given again", g.ID)
	}
	// A named checkpoint is always its own.
	n1, err := f.Checkpoint(ctx, sfs.CheckpointOptions{Name: "n1"})
	must(t, err)
	n2, err := f.Checkpoint(ctx, sfs.CheckpointOptions{Name: "n2"})
	must(t, err)
	if n1.ID == n2.ID {
		t.Fatalf("two named checkpoints share id %d", n1.ID)
	}
	check(t, f)
}

// A restore of the newest checkpoint leaves nothing that reads as changed
// since it: the next restore or diff reads only what changes after, not
// every earlier restore's rows again. An older checkpoint still restores
// to its own tree.
func TestRestoreNewestLeavesNoChanges(t *testing.T) {
	ctx := t.Context()
	f, store := open(t, sfs.Options{})
	for i := range 5 {
		must(t, f.WriteFile(fmt.Sprintf("/f%d", i), []byte("old"), 0o644))
	}
	old, err := f.Checkpoint(ctx, sfs.CheckpointOptions{})
	must(t, err)
	must(t, f.WriteFile("/f0", []byte("between"), 0o644))
	newest, err := f.Checkpoint(ctx, sfs.CheckpointOptions{})
	must(t, err)
	changed := func() int {
		t.Helper()
		must(t, f.Flush(ctx))
		n := 0
		for _, table := range []string{"inodes", "dentries", "chunks", "xattrs"} {
			n += storeCount(t, store, fmt.Sprintf("%s WHERE born > %d", table, newest.Gen))
			n += storeCount(t, store, fmt.Sprintf("%s_hist WHERE born <= %d AND died > %d", table, newest.Gen, newest.Gen))
		}
		return n
	}
	for round := range 3 {
		must(t, f.WriteFile(fmt.Sprintf("/f%d", round+1), []byte("new"), 0o644))
		must(t, f.WriteFile(fmt.Sprintf("/n%d", round), []byte("new"), 0o644))
		if changed() == 0 {
			t.Fatalf("round %d: the changes do not read as changed", round)
		}
		must(t, f.Restore(ctx, fmt.Sprint(newest.ID)))
		if n := changed(); n != 0 {
			t.Fatalf("round %d: %d rows read as changed since the checkpoint just restored", round, n)
		}
		if got := diffLines(t, f, fmt.Sprint(newest.ID), ""); len(got) != 0 {
			t.Fatalf("round %d: diff after restore: %q", round, got)
		}
		check(t, f)
	}
	for i, want := range []string{"between", "old", "old", "old", "old"} {
		if got, err := f.ReadFile(fmt.Sprintf("/f%d", i)); err != nil || string(got) != want {
			t.Fatalf("/f%d = %q %v, want %q", i, got, err, want)
		}
	}
	must(t, f.Restore(ctx, fmt.Sprint(old.ID)))
	if got, _ := f.ReadFile("/f0"); string(got) != "old" {
		t.Fatalf("the older checkpoint restores /f0 = %q", got)
	}
	must(t, f.Restore(ctx, fmt.Sprint(newest.ID)))
	if got, _ := f.ReadFile("/f0"); string(got) != "between" {
		t.Fatalf("the newest checkpoint, restored after the older one: /f0 = %q", got)
	}
	check(t, f)
}

// Listing and diffing checkpoints are audited under their caller, as
// every checkpoint operation is, refusals included.
func TestCheckpointListAndDiffAudited(t *testing.T) {
	ctx := t.Context()
	f, _ := open(t, sfs.Options{})
	must(t, f.WriteFile("/x", []byte("1"), 0o644))
	ci, err := f.Checkpoint(ctx, sfs.CheckpointOptions{})
	must(t, err)
	v := f.WithActor("reader")
	_, err = v.Checkpoints(ctx)
	must(t, err)
	id := fmt.Sprint(ci.ID)
	_, err = v.Diff(ctx, id, "")
	must(t, err)
	_, err = v.DiffPaths(ctx, id, []string{"/x"})
	must(t, err)
	if _, err := v.Diff(ctx, "nosuch", ""); !errors.Is(err, sfs.ErrCheckpointNotFound) {
		t.Fatalf("diff of an unknown checkpoint: %v", err)
	}
	must(t, f.Flush(ctx))
	ev, err := f.Store().Audit(ctx, sqlstore.AuditFilter{Actor: "reader"})
	must(t, err)
	var got []string
	for _, e := range ev {
		got = append(got, strings.Join([]string{e.Op, e.Path, e.Path2, e.Result}, " "))
	}
	want := []string{
		"checkpoint-list /  ok",
		"checkpoint-diff / checkpoint:" + id + ".. ok",
		"checkpoint-diff /x checkpoint:" + id + ".. ok",
		"checkpoint-diff / checkpoint:nosuch.. ENOENT",
	}
	if !slices.Equal(got, want) {
		t.Errorf("audit of list and diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCheckpointFullDisk: on a full disk a checkpoint fails with a clear
// error and records nothing, what was committed stays, and the store passes
// Check; deleting the checkpoint that holds old data frees the room, and
// checkpoints work again.
func TestCheckpointFullDisk(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Require(t, "this test mounts a tmpfs (needs root)", fmt.Errorf("%w: %s", err, out))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	store := filepath.Join(dir, "ws.db")
	f, err := sfs.Open(ctx, store, sfs.Options{DirtyLimit: 1 << 20, CommitInterval: 10 * time.Millisecond})
	must(t, err)
	defer f.Close()
	must(t, f.WriteFile("/keep", []byte("precious"), 0o644))
	old := bytes.Repeat([]byte{'o'}, 1<<20)
	must(t, f.WriteFile("/big", old, 0o644))
	_, err = f.Checkpoint(ctx, sfs.CheckpointOptions{Name: "old"})
	must(t, err)
	must(t, f.WriteFile("/big", bytes.Repeat([]byte{'n'}, 1<<20), 0o644)) // the old data stays for "old"
	must(t, f.Sync(ctx))
	var werr error
	for i := 0; i < 100 && werr == nil; i++ {
		if werr = f.WriteFile(fmt.Sprintf("/fill%d", i), make([]byte, 256<<10), 0o644); werr == nil {
			werr = f.Sync(ctx)
		}
	}
	if !errors.Is(werr, syscall.ENOSPC) && !errors.Is(werr, sqlstore.ErrStoreFull) {
		t.Fatalf("filling the disk: %v, want ENOSPC or ErrStoreFull", werr)
	}
	if _, err := f.Checkpoint(ctx, sfs.CheckpointOptions{Name: "full"}); !errors.Is(err, sqlstore.ErrStoreFull) {
		t.Fatalf("checkpoint on a full disk: %v, want ErrStoreFull", err)
	}
	if cps, err := f.Checkpoints(ctx); err != nil || len(cps) != 1 || cps[0].Name != "old" {
		t.Fatalf("checkpoints after a failed one: %v %v", cps, err)
	}
	problems, err := f.Store().Check(ctx)
	if err != nil || len(problems) > 0 {
		t.Fatalf("check on the full disk: %v\n%s", err, sqlstore.FormatProblems(problems))
	}
	// The room comes back from the fill files and the old checkpoint's data.
	for i := range 100 {
		f.Remove(fmt.Sprintf("/fill%d", i))
	}
	must(t, f.DeleteCheckpoint(ctx, "old"))
	_, err = f.Store().CollectGarbage(ctx)
	must(t, err)
	ci, err := f.Checkpoint(ctx, sfs.CheckpointOptions{Name: "after"})
	must(t, err)
	must(t, f.WriteFile("/keep", []byte("changed"), 0o644))
	must(t, f.Restore(ctx, fmt.Sprint(ci.ID)))
	if got, err := f.ReadFile("/keep"); err != nil || string(got) != "precious" {
		t.Fatalf("/keep after the disk was full: %q %v", got, err)
	}
	check(t, f)
	g := reopen(t, f, store, sfs.Options{})
	check(t, g)
	if got, err := g.ReadFile("/big"); err != nil || !bytes.Equal(got, bytes.Repeat([]byte{'n'}, 1<<20)) {
		t.Fatalf("/big after reopen: %d bytes %v", len(got), err)
	}
}

// TestDeleteWhileReading deletes (and collects) a checkpoint while a
// restore of some of its paths, a fork and a diff of it run: each either
// fails with ErrCheckpointNotFound or gives the checkpoint's tree whole.
func TestDeleteWhileReading(t *testing.T) {
	ctx := t.Context()
	f, _ := open(t, sfs.Options{ChunkSize: 4096})
	must(t, f.Mkdir("/d", 0o755))
	dir := t.TempDir()
	content := func(round, i int) []byte { return bytes.Repeat([]byte{byte('a' + round%26)}, 3000+i*4096) }
	outcomes := map[string]int{}
	for round := range 12 {
		for i := range 8 {
			must(t, f.WriteFile(fmt.Sprintf("/d/f%d", i), content(round, i), 0o644))
		}
		ci, err := f.Checkpoint(ctx, sfs.CheckpointOptions{})
		must(t, err)
		ref := fmt.Sprint(ci.ID)
		for i := range 8 {
			must(t, f.WriteFile(fmt.Sprintf("/d/f%d", i), []byte("changed"), 0o644))
		}
		must(t, f.Flush(ctx))
		fork := filepath.Join(dir, fmt.Sprintf("fork%d.db", round))
		var restoreErr, forkErr, diffErr error
		var diff []sfs.DiffEntry
		var wg sync.WaitGroup
		wg.Go(func() { restoreErr = f.RestorePaths(ctx, ref, []string{"/d"}) })
		wg.Go(func() { forkErr = f.Fork(ctx, ref, fork) })
		wg.Go(func() { diff, diffErr = f.Diff(ctx, ref, "") })
		wg.Go(func() {
			time.Sleep(time.Duration(round%5) * time.Millisecond)
			must(t, f.DeleteCheckpoint(ctx, ref))
			_, err := f.Store().CollectGarbage(ctx)
			must(t, err)
		})
		wg.Wait()
		for name, err := range map[string]error{"restore": restoreErr, "fork": forkErr, "diff": diffErr} {
			if err != nil && !errors.Is(err, sfs.ErrCheckpointNotFound) {
				t.Fatalf("round %d: %s: %v, want success or ErrCheckpointNotFound", round, name, err)
			}
			outcomes[fmt.Sprintf("%s ok=%v", name, err == nil)]++
		}
		if restoreErr == nil {
			for i := range 8 {
				if got, err := f.ReadFile(fmt.Sprintf("/d/f%d", i)); err != nil || !bytes.Equal(got, content(round, i)) {
					t.Fatalf("round %d: restored /d/f%d: %d bytes %v", round, i, len(got), err)
				}
			}
		}
		if forkErr == nil {
			g, err := sfs.Open(ctx, fork, sfs.Options{})
			must(t, err)
			for i := range 8 {
				if got, err := g.ReadFile(fmt.Sprintf("/d/f%d", i)); err != nil || !bytes.Equal(got, content(round, i)) {
					t.Fatalf("round %d: the fork's /d/f%d: %d bytes %v", round, i, len(got), err)
				}
			}
			check(t, g)
			must(t, g.Close())
		}
		if diffErr == nil && len(diff) != 8 && restoreErr != nil {
			t.Fatalf("round %d: diff of 8 changed files: %v", round, diff)
		}
		check(t, f)
	}
	t.Logf("outcomes: %v", outcomes)
}

// TestChunksKeptMetric: the chunks a checkpoint shares with the live tree
// are counted when the live tree overwrites them (copy-on-write keeps the
// old version), once per checkpoint, and not while no checkpoint holds
// them.
func TestChunksKeptMetric(t *testing.T) {
	ctx := t.Context()
	f, _ := open(t, sfs.Options{ChunkSize: 4096})
	kept := func() float64 { return testutil.ToFloat64(metrics.StoreChunksKept) }
	must(t, f.WriteFile("/data", bytes.Repeat([]byte("a"), 3*4096), 0o644))
	must(t, f.Flush(ctx))
	before := kept()
	must(t, f.WriteFile("/data", bytes.Repeat([]byte("b"), 3*4096), 0o644))
	must(t, f.Flush(ctx))
	if got := kept() - before; got != 0 {
		t.Fatalf("without a checkpoint an overwrite kept %v chunks, want 0", got)
	}
	_, err := f.Checkpoint(ctx, sfs.CheckpointOptions{})
	must(t, err)
	before = kept()
	must(t, f.WriteFile("/data", bytes.Repeat([]byte("c"), 3*4096), 0o644))
	must(t, f.Flush(ctx))
	if got := kept() - before; got != 3 {
		t.Fatalf("an overwrite of 3 chunks a checkpoint shares kept %v, want 3", got)
	}
	before = kept()
	must(t, f.WriteFile("/data", bytes.Repeat([]byte("d"), 3*4096), 0o644))
	must(t, f.Flush(ctx))
	if got := kept() - before; got != 0 {
		t.Fatalf("a second overwrite after the checkpoint kept %v chunks, want 0 (already its own)", got)
	}
}
