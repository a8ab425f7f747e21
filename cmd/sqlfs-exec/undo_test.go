package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// lastAutoExec is the exec id of the newest automatic checkpoint that
// `checkpoint list` shows.
func lastAutoExec(t *testing.T, store string) string {
	t.Helper()
	out, stderr, code := sqlfsExec(t, "", "checkpoint", "list", "--store", store)
	if code != 0 {
		t.Fatalf("checkpoint list: %d %s", code, stderr)
	}
	m := regexp.MustCompile(`auto exec=(\w+)\n`).FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		t.Fatalf("no automatic checkpoint listed:\n%s", out)
	}
	return m[len(m)-1][1]
}

// TestUndoCLI undoes an exec through the CLI with and without an owner,
// and is refused when a later exec changed the same path.
func TestUndoCLI(t *testing.T) {
	store := filepath.Join(t.TempDir(), "ws.sqlfs")
	check := func(t *testing.T, label string) {
		sqlfsExec(t, "", "run", "--store", store, "--", "mkdir -p "+label+" && echo keep > "+label+"/k")
		sqlfsExec(t, "", "run", "--store", store, "--", "echo oops > "+label+"/k && echo junk > "+label+"/j")
		exec := lastAutoExec(t, store)
		out, stderr, code := sqlfsExec(t, "", "undo", "--store", store, exec)
		if code != 0 || out != label+"/j\n"+label+"/k\n" {
			t.Fatalf("undo %s: exit %d, out %q, stderr %s", exec, code, out, stderr)
		}
		if got, _, _ := sqlfsExec(t, "", "run", "--store", store, "--", "cat "+label+"/k; ls "+label); got != "keep\nk\n" {
			t.Errorf("after undo: %q", got)
		}
		sqlfsExec(t, "", "run", "--store", store, "--", "echo one > "+label+"/c")
		first := lastAutoExec(t, store)
		sqlfsExec(t, "", "run", "--store", store, "--", "echo two > "+label+"/c")
		_, stderr, code = sqlfsExec(t, "", "undo", "--store", store, first)
		if code != 1 || !strings.Contains(stderr, "(conflict)") || !strings.Contains(stderr, label+"/c (exec:") {
			t.Errorf("undo over a later change: exit %d, %s", code, stderr)
		}
		if got, _, _ := sqlfsExec(t, "", "run", "--store", store, "--", "cat "+label+"/c"); got != "two\n" {
			t.Errorf("refused undo changed c: %q", got)
		}
	}
	t.Run("no owner", func(t *testing.T) { check(t, "local") })
	t.Run("owner", func(t *testing.T) {
		startOwner(t, store)
		check(t, "remote")
	})
}
