package tools_test

import (
	"io"
	"path/filepath"
	"slices"
	"testing"

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
}
