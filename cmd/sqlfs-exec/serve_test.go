package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/exectest"
	"github.com/sqlfs/sqlfs/internal/s3test"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// TestMain keeps the S3 clients of the commands the tests run on
// loopback, and removes the binary they built.
func TestMain(m *testing.M) {
	s3test.Isolate()
	os.Exit(exectest.Run(m))
}

// binary is sqlfs-exec, built once per test run.
func binary(t testing.TB) string { return exectest.Binary(t) }

// sqlfsExec runs the binary and returns stdout, stderr and the exit code.
func sqlfsExec(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), binary(t), args...)
	// Also when the test binary dies without running cleanups (timeout).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// startOwner runs `sqlfs-exec serve` on store and waits for its socket. It
// is stopped with SIGTERM at cleanup (killed if that hangs), also on
// failure; stop does the same earlier and returns the exit code.
func startOwner(t *testing.T, store string, extra ...string) (stop func() int) {
	t.Helper()
	return startOwnerCmd(t, store, exec.Command(binary(t), append([]string{"serve", "--store", store}, extra...)...))
}

// startOwnerCmd is startOwner with the command that runs the owner of
// store (e.g. under a shell that lowers its file limit first).
func startOwnerCmd(t *testing.T, store string, cmd *exec.Cmd) (stop func() int) {
	t.Helper()
	p := exectest.StartOwner(t, store, cmd)
	return func() int { return p.Stop(t) }
}

// TestOwnerAndClients runs the same commands with and without an owner
// and expects the same answers; with an owner they go through its socket.
func TestOwnerAndClients(t *testing.T) {
	store := filepath.Join(t.TempDir(), "ws.sqlfs")
	check := func(t *testing.T, label string) {
		t.Helper()
		if _, stderr, code := sqlfsExec(t, "", "tool", "--store", store, "write", `{"path":"`+label+`/a.txt","content":"hello\n"}`); code != 0 {
			t.Fatalf("write: %d %s", code, stderr)
		}
		out, stderr, code := sqlfsExec(t, `{"path":"`+label+`/a.txt"}`, "tool", "--store", store, "read")
		if code != 0 || out != "     1\thello\n" {
			t.Fatalf("read: %d %q %s", code, out, stderr)
		}
		_, stderr, code = sqlfsExec(t, "", "tool", "--store", store, "read", `{"path":"../x"}`)
		if code != 1 || !strings.Contains(stderr, "(path_escapes_workspace)") {
			t.Errorf("escaping read: %d %s", code, stderr)
		}
		out, _, code = sqlfsExec(t, "", "tool", "--store", store, "--json", "ls", `{"path":"`+label+`"}`)
		if code != 0 || !strings.Contains(out, `"name": "a.txt"`) {
			t.Errorf("ls --json: %d %s", code, out)
		}
		out, stderr, code = sqlfsExec(t, "", "log", "--store", store, "--actor", "tool:write", "--path", label)
		if code != 0 || !strings.Contains(out, "tool:write") || !strings.Contains(out, "/"+label+"/a.txt") {
			t.Errorf("log: %d %q %s", code, out, stderr)
		}
		_, stderr, code = sqlfsExec(t, "", "changes", "--store", store, "nosuchexec")
		if code != 0 {
			t.Errorf("changes of an unknown exec: %d %s", code, stderr)
		}
	}
	t.Run("no owner", func(t *testing.T) { check(t, "local") })
	t.Run("owner", func(t *testing.T) {
		stop := startOwner(t, store)
		check(t, "remote")
		// The owner's own audit shows the client's calls came through it.
		out, _, _ := sqlfsExec(t, "", "log", "--store", store, "--path", "remote", "--json")
		if !strings.Contains(out, `"actor":"tool:write"`) {
			t.Errorf("remote log: %s", out)
		}
		if code := stop(); code != 0 {
			t.Errorf("owner exit code %d after SIGTERM", code)
		}
		if _, err := os.Stat(api.SocketPath(store)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket left after shutdown: %v", err)
		}
	})
	t.Run("after owner", func(t *testing.T) {
		out, stderr, code := sqlfsExec(t, "", "tool", "--store", store, "find", `{"pattern":"*.txt"}`)
		if code != 0 || out != "local/a.txt\nremote/a.txt\n" {
			t.Errorf("find after the owner left: %d %q %s", code, out, stderr)
		}
	})
}

func TestServeFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no store", []string{"serve"}, 2, "usage"},
		{"tcp without token", []string{"serve", "--store", filepath.Join(dir, "a"), "--listen", "127.0.0.1:0"}, 1, "bearer token"},
		{"bad policy glob", []string{"serve", "--store", filepath.Join(dir, "b"), "--read-only-glob", "[x"}, 1, "glob"},
		{"missing policy file", []string{"serve", "--store", filepath.Join(dir, "c"), "--policy", filepath.Join(dir, "nope.json")}, 1, "policy file"},
		{"negative exec memory", []string{"serve", "--store", filepath.Join(dir, "e"), "--exec-memory", "-1"}, 1, "must be positive"},
		{"tool without store", []string{"tool", "ls"}, 1, "--store is required"},
		{"store and workspaces", []string{"serve", "--store", filepath.Join(dir, "f"), "--workspaces", dir}, 2, "usage"},
		{"workspaces with mount", []string{"serve", "--workspaces", filepath.Join(dir, "h"), "--mount", dir}, 1, "not available with --workspaces"},
		{"public with fleet", []string{"serve", "--workspaces", filepath.Join(dir, "i"), "--public-addr", "127.0.0.1:0", "--fleet-lease", "s3://bucket/leases"}, 1, "--public-addr is not available with --fleet-lease yet: "},
		{"unknown tool", []string{"tool", "--store", filepath.Join(dir, "d"), "format", "{}"}, 1, "unknown_tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := sqlfsExec(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d containing %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

func TestPolicyFile(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(pol, []byte(`{"read_only":["etc/**"],"hidden":["secret"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := workspace.LoadPolicy(pol, []string{"ro"}, nil, 5)
	if err != nil || strings.Join(p.ReadOnly, ",") != "ro,etc/**" || p.Hidden[0] != "secret" || p.QuotaBytes != 5 {
		t.Errorf("policy %+v %v", p, err)
	}
	if err := os.WriteFile(pol, []byte(`{"readonly":["x"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := workspace.LoadPolicy(pol, nil, nil, 0); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("unknown policy field: %v", err)
	}
	store := filepath.Join(dir, "ws.sqlfs")
	startOwner(t, store, "--read-only-glob", "ro/**", "--hidden-glob", "secret")
	_, stderr, code := sqlfsExec(t, "", "tool", "--store", store, "write", `{"path":"ro/x","content":"c"}`)
	if code != 1 || !strings.Contains(stderr, "permission_denied") {
		t.Errorf("write under a read-only glob: %d %s", code, stderr)
	}
	out, _, _ := sqlfsExec(t, "", "log", "--store", store, "--refused")
	if !strings.Contains(out, "tool:write") || !strings.Contains(out, "EROFS") {
		t.Errorf("refusal not in the log: %q", out)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"10m", now.Add(-10 * time.Minute), false},
		{"2025-12-31T00:00:00Z", time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC), false},
		{"1700000000", time.Unix(1700000000, 0), false},
		{"yesterday", time.Time{}, true},
	} {
		got, err := parseSince(tc.in, now)
		if (err != nil) != tc.err || !got.Equal(tc.want) {
			t.Errorf("parseSince(%q) = %v, %v", tc.in, got, err)
		}
	}
}

// ctxTimeout is a context for one subprocess conversation.
func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
