package tools_test

import (
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// TestExecReportsItsOwnChanges is a regression test: every exec of the
// shell backend was audited under one shared actor, so an exec's result
// listed no changed paths.
func TestExecReportsItsOwnChanges(t *testing.T) {
	f, err := sfs.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sh := shell.New(f, shell.Options{})
	defer sh.Close()
	svc := tools.NewForCore(f, map[string]sidecar.Backend{"shell": sh}, tools.Options{})
	run := func(cmd string) tools.ExecResult {
		t.Helper()
		res, err := svc.Exec(t.Context(), tools.ExecInput{Command: cmd}, io.Discard, io.Discard, nil)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%q: %v, exit %d", cmd, err, res.ExitCode)
		}
		return res
	}
	first := run("mkdir -p a && echo hi > a/f && mv a/f a/g")
	second := run("echo more > b")
	for _, want := range []string{"a", "a/f", "a/g"} {
		if !slices.Contains(first.Changed, want) {
			t.Errorf("first exec's changes %q lack %q", first.Changed, want)
		}
	}
	if !slices.Equal(second.Changed, []string{"b"}) {
		t.Errorf("second exec's changes = %q, want only b", second.Changed)
	}
	// tar -x writes each file under a temporary name first: not a change
	// the agent made.
	run("tar -cf t.tar b && rm b")
	if untar := run("tar -xf t.tar"); !slices.Equal(untar.Changed, []string{"b"}) {
		t.Errorf("tar -x changes = %q, want only b", untar.Changed)
	}
	// A file the agent leaves under such a name is a change all the same:
	// the name must not hide it.
	if hidden := run("echo x > .sqlfs-tar-AAAAAAAAAAAA && mkdir -p d && echo y > d/.sqlfs-tar-b"); !slices.Equal(hidden.Changed, []string{".sqlfs-tar-AAAAAAAAAAAA", "d", "d/.sqlfs-tar-b"}) {
		t.Errorf("changes = %q, want the temporary-looking names too", hidden.Changed)
	}
}

// TestChangesPagesPastRefusals is a regression test: the audit query for
// an exec's changes moved its cursor only past successful events, so a
// full page of refused ones was fetched again forever. And a connection
// (egress) was listed as a changed path.
func TestChangesPagesPastRefusals(t *testing.T) {
	f, err := sfs.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), sfs.Options{Policy: sfs.Policy{ReadOnly: []string{"ro"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	svc := tools.NewForCore(f, nil, tools.Options{})
	exec := f.WithActor(tools.Actor("refused"))
	for range 10_001 { // one page is 10,000 events
		if err := exec.WriteFile("/ro", []byte("x"), 0o644); err == nil {
			t.Fatal("write to a read-only path succeeded")
		}
	}
	if err := exec.WriteFile("/ok", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Neither is what the exec's network connections and checkpoint
	// record: they change no path.
	exec.Record("connect", "example.com:443", nil)
	if _, err := exec.Checkpoint(t.Context(), sfs.CheckpointOptions{Auto: true, ExecID: "refused"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() {
		ch, err := svc.Changes(t.Context(), "refused")
		if err != nil {
			t.Error(err)
		}
		done <- ch
	}()
	select {
	case ch := <-done:
		if !slices.Equal(ch, []string{"ok"}) {
			t.Errorf("changes = %q, want only ok", ch)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Changes did not return: it keeps fetching the same page")
	}
}
