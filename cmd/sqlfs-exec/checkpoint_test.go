package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCheckpointCLI runs the checkpoint and fork commands with and without
// an owner; with one they go through its socket.
func TestCheckpointCLI(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "ws.sqlfs")
	ok := func(t *testing.T, args ...string) string {
		t.Helper()
		out, stderr, code := sqlfsExec(t, "", args...)
		if code != 0 {
			t.Fatalf("%q: exit %d, stderr %s", args, code, stderr)
		}
		return out
	}
	check := func(t *testing.T, label string) {
		ok(t, "run", "--store", store, "--", "mkdir -p "+label+" && echo base > "+label+"/a")
		name := label + ` base/"x" ü`
		id := ok(t, "checkpoint", "create", "--store", store, "--name", name)
		if !regexp.MustCompile(`^\d+\n$`).MatchString(id) {
			t.Fatalf("checkpoint create printed %q, want one id line", id)
		}
		id = strings.TrimSpace(id)
		ok(t, "run", "--store", store, "--", "echo changed > "+label+"/a && echo new > "+label+"/b")
		want := "M\t" + label + "/a\nA\t" + label + "/b\n"
		if got := ok(t, "checkpoint", "diff", "--store", store, name); got != want {
			t.Errorf("diff against live = %q, want %q", got, want)
		}
		second := strings.TrimSpace(ok(t, "checkpoint", "create", "--store", store))
		if got := ok(t, "checkpoint", "diff", "--store", store, id, second); got != want {
			t.Errorf("diff of two checkpoints = %q, want %q", got, want)
		}
		if list := ok(t, "checkpoint", "list", "--store", store); !strings.Contains(list, id+"\t") || !strings.Contains(list, name) || !strings.Contains(list, "auto exec=") {
			t.Errorf("list lacks %s %q or the automatic ones:\n%s", id, name, list)
		}
		fork := filepath.Join(dir, label+"-fork.sqlfs")
		ok(t, "fork", "--store", store, "--checkpoint", name, fork)
		if got := ok(t, "run", "--store", fork, "--", "cat "+label+"/a; ls "+label); got != "base\na\n" {
			t.Errorf("fork of the checkpoint holds %q", got)
		}
		ok(t, "checkpoint", "restore", "--store", store, id)
		if got := ok(t, "run", "--store", store, "--", "cat "+label+"/a; ls "+label); got != "base\na\n" {
			t.Errorf("after restore: %q", got)
		}
		ok(t, "checkpoint", "delete", "--store", store, name)
		for _, tc := range []struct {
			args []string
			code int
			want string
		}{
			{[]string{"checkpoint", "restore", "--store", store, name}, 1, "(unknown_checkpoint)"},
			{[]string{"checkpoint", "diff", "--store", store, "12345678"}, 1, "(unknown_checkpoint)"},
			{[]string{"checkpoint", "create", "--store", store, "--name", "007"}, 1, "(invalid_argument)"},
			{[]string{"checkpoint", "create", "--store", store, "--name", second}, 1, "(invalid_argument)"},
			{[]string{"fork", "--store", store, fork}, 1, "sqlfs-exec fork:"},
			{[]string{"checkpoint", "frobnicate", "--store", store}, 2, `unknown action "frobnicate"`},
			{[]string{"checkpoint", "restore", "--store", store}, 2, "usage"},
			{[]string{"checkpoint", "list", "--store", store, "extra"}, 2, "usage"},
			{[]string{"checkpoint", "list", "--store", store, "--name", "x"}, 2, "usage"},
			{[]string{"checkpoint"}, 2, "usage"},
			{[]string{"undo", "--store", store, "nosuchexec"}, 1, "(unknown_checkpoint)"},
			{[]string{"checkpoint", "list"}, 1, "--store is required"},
		} {
			_, stderr, code := sqlfsExec(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("%q: exit %d, stderr %q; want %d containing %q", tc.args, code, stderr, tc.code, tc.want)
			}
		}
	}
	t.Run("no owner", func(t *testing.T) { check(t, "local") })
	t.Run("owner", func(t *testing.T) {
		stop := startOwner(t, store)
		check(t, "remote")
		if code := stop(); code != 0 {
			t.Errorf("owner exit code %d", code)
		}
	})
	for _, args := range [][]string{{"checkpoint", "--help"}, {"checkpoint", "create", "--help"}, {"fork", "--help"}, {"undo", "--help"}} {
		if _, stderr, code := sqlfsExec(t, "", args...); code != 0 || !strings.Contains(stderr, "usage: sqlfs-exec "+args[0]) {
			t.Errorf("%q: exit %d, %s", args, code, stderr)
		}
	}
}
