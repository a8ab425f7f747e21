package shell

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
)

// Every write error reaches the command that wrote: a message like bash's
// and a non-zero status, never a silently short file.
func TestWriteErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ws.db")
	setup, err := sfs.Open(context.Background(), db, sfs.Options{NoAudit: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := setup.Mkdir("/ro", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := setup.WriteFile("/ro/f", []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := setup.Close(); err != nil {
		t.Fatal(err)
	}
	fsys, err := sfs.Open(context.Background(), db, sfs.Options{NoAudit: true,
		Policy: sfs.Policy{QuotaBytes: 64 << 10, ReadOnly: []string{"/ro/**"}}})
	if err != nil {
		t.Fatal(err)
	}
	b := New(fsys, Options{TmpMaxBytes: 32 << 10})
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
		if err := fsys.Close(); err != nil {
			t.Error(err)
		}
	})
	tests := []struct{ name, cmd, stdout, stderr string }{
		{name: "yes past the quota", cmd: "yes > big; echo rc=$?",
			stdout: "rc=1\n", stderr: "yes: write error: No space left on device"},
		{name: "cat past the quota", cmd: "rm -f big; yes | head -c 100000 | cat > big; echo rc=$?",
			stdout: "rc=1\n", stderr: "No space left on device"},
		{name: "echo on a full /tmp", cmd: "rm -f big; yes | head -c 32768 > /tmp/full; echo more >> /tmp/c; echo rc=$?",
			stdout: "rc=1\n", stderr: "echo: write error: No space left on device"},
		{name: "printf on a full /tmp", cmd: "printf '%s\\n' more >> /tmp/c; echo rc=$?",
			stdout: "rc=1\n", stderr: "printf: write error: No space left on device"},
		// The interpreter's builtins ignore their write errors; the
		// backend reports them as bash does.
		{name: "pwd on a full /tmp", cmd: "pwd >> /tmp/c; echo rc=$?",
			stdout: "rc=1\n", stderr: "pwd: write error: No space left on device"},
		{name: "pwd -P on a full /tmp", cmd: "pwd -P >> /tmp/c; echo rc=$?",
			stdout: "rc=1\n", stderr: "pwd: write error: No space left on device"},
		{name: "cd - on a full /tmp", cmd: "cd /; cd - >> /tmp/c; echo rc=$? $PWD",
			stdout: "rc=1 /workspace\n", stderr: "cd: write error: No space left on device"},
		{name: "type on a full /tmp", cmd: "type ls >> /tmp/c; echo rc=$?",
			stdout: "rc=1\n", stderr: "type: write error: No space left on device"},
		{name: "command -v on a full /tmp, silent as bash's", cmd: "command -v ls >> /tmp/c; echo rc=$?",
			stdout: "rc=0\n"},
		{name: "pushd only reports", cmd: "pushd / >> /tmp/c; echo rc=$?; popd >/dev/null",
			stdout: "rc=0\n", stderr: "pushd: write error: No space left on device"},
		{name: "set +o on a full /tmp", cmd: "set +o >> /tmp/c; echo rc=$?",
			stdout: "rc=1\n", stderr: "set: write error: No space left on device"},
		{name: "shopt on a full /tmp", cmd: "shopt >> /tmp/c; echo rc=$?",
			stdout: "rc=1\n", stderr: "shopt: write error: No space left on device"},
		{name: "trap on a full /tmp", cmd: "trap : EXIT; trap >> /tmp/c; echo rc=$?",
			stdout: "rc=1\n", stderr: "trap: write error: No space left on device"},
		{name: "dirs in a redirected group", cmd: "{ dirs; echo rc=$? >&2; } >> /tmp/c",
			stderr: "dirs: write error: No space left on device\nrc=1"},
		// Declarations are not simple commands: they are checked by a
		// rewrite of the script.
		{name: "declare -p on a full /tmp", cmd: "x=1; declare -p x >> /tmp/c; echo rc=$?",
			stdout: "rc=1\n", stderr: "declare: write error: No space left on device"},
		{name: "declare -f on a full /tmp", cmd: "f() { :; }; declare -f f >> /tmp/c; echo rc=$?",
			stdout: "rc=1\n", stderr: "declare: write error: No space left on device"},
		{name: "declare -p in a function on a full /tmp", cmd: "g() { local v=1; typeset -p v >> /tmp/c; echo rc=$?; }; g",
			stdout: "rc=1\n", stderr: "typeset: write error: No space left on device"},
		{name: "declare keeps its own status", cmd: "declare -p nosuchvar >> /tmp/c; echo rc=$?",
			stdout: "rc=1\n"},
		{name: "an assignment is not checked", cmd: "declare y=2 >> /tmp/c; echo rc=$? $y",
			stdout: "rc=0 2\n"},
		{name: "set -e stops at a lost declare", cmd: "set -e; x=1; declare -p x >> /tmp/c; echo after",
			stderr: "declare: write error: No space left on device"},
		{name: "set -x does not trace the check", cmd: "set -x; x=1; declare -p x >> /tmp/c; set +x",
			stderr: "+ x=1\ndeclare: write error: No space left on device\n+ set +x\n"},
		{name: "pwd without an error", cmd: "rm /tmp/full; pwd >> /tmp/c; echo rc=$?; cat /tmp/c",
			stdout: "rc=0\n/workspace\n"},
		{name: "echo in a read-only directory", cmd: "echo x >> ro/f; echo rc=$?",
			stdout: "rc=1\n", stderr: "read-only file system"},
		{name: "set -e stops", cmd: "rm -f /tmp/full; yes > /tmp/y; echo after",
			stderr: "yes: write error: No space left on device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			cmd := tc.cmd
			if tc.name == "set -e stops" {
				cmd = "set -e; " + cmd
			}
			got := execReq(t, b, sidecar.Request{Command: cmd, Limits: sidecar.Limits{Timeout: 10 * time.Second}})
			if got.stdout != tc.stdout || !strings.Contains(got.stderr, tc.stderr) || got.TimedOut {
				t.Errorf("got %q, stderr %q, %+v; want %q and %q", got.stdout, got.stderr, got.Result, tc.stdout, tc.stderr)
			}
			settled(t, baseline)
		})
	}
}

// printf -v builds its value in memory: past 64 MiB it fails instead.
func TestPrintfVarCapped(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	got := sh(t, b, "printf -v x '%1000000s' {1..200}; echo \"rc=$? ${#x}\"; printf -v y '%1000s' {1..3}; echo ${#y}")
	if got.stdout != "rc=1 0\n3000\n" || !strings.Contains(got.stderr, "printf: -v x: value over the limit of 67108864 bytes") {
		t.Errorf("got %q, stderr %q", got.stdout, got.stderr)
	}
}
