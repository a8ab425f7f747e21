package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/s3test"
	"github.com/sqlfs/sqlfs/internal/testenv"
)

// withLitestream puts make tools' litestream on the PATH the commands run
// with (TestMain keeps their S3 clients on loopback).
func withLitestream(t *testing.T) {
	t.Helper()
	lt := testenv.Tool(t, "litestream")
	t.Setenv("PATH", filepath.Dir(lt)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestRestoreRefusals(t *testing.T) {
	tmp := t.TempDir()
	loose := filepath.Join(tmp, "loose.env")
	if err := os.WriteFile(loose, []byte("AWS_ACCESS_KEY_ID=a\nAWS_SECRET_ACCESS_KEY=b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(tmp, "there.sqlfs")
	if err := os.WriteFile(existing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	url := "s3://b/p?endpoint=http://127.0.0.1:9&forcePathStyle=true"
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"--replica", "b/p", "out"}, 1, "bad replica URL"},
		{[]string{"--replica", url, "--timestamp", "yesterday", "out"}, 1, "want RFC 3339"},
		{[]string{"--replica", url, "--timestamp", "2999-01-01T00:00:00Z", "out"}, 1, "in the future"},
		{[]string{"--replica", url, "--replica-credentials", loose, "out"}, 1, "mode 0644"},
		{[]string{"--replica", url, "--workspace", "../x", "out"}, 1, "bad workspace id"},
		{[]string{"--replica", url, existing}, 1, "already exists"},
		{[]string{"--replica", url}, 2, "usage"},
	} {
		_, stderr, code := sqlfsExec(t, "", append([]string{"restore"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.err) {
			t.Errorf("restore %q: exit %d, %s; want %d saying %q", tc.args, code, stderr, tc.code, tc.err)
		}
	}
	if _, stderr, code := sqlfsExec(t, "", "replica", "status", "--store", filepath.Join(tmp, "none.sqlfs")); code != 1 || !strings.Contains(stderr, "is the owner running with --replica?") {
		t.Errorf("replica status without an owner: %d %s", code, stderr)
	}
	if _, stderr, code := sqlfsExec(t, "", "serve", "--store", filepath.Join(tmp, "s.sqlfs"), "--replica", "s3://b"); code != 1 || !strings.Contains(stderr, "no path after the bucket") {
		t.Errorf("serve with a bad --replica: %d %s", code, stderr)
	}
}

// TestServeReplicaRestore writes through an owner replicating to an
// in-process S3, stops it right after the write, and restores the store
// elsewhere with the write in it.
func TestServeReplicaRestore(t *testing.T) {
	withLitestream(t)
	s3 := s3test.StartFake(t, s3test.Options{})
	url := s3.URL("single")
	store := filepath.Join(t.TempDir(), "ws.sqlfs")
	stop := startOwner(t, store, "--replica", url, "--replica-sync-interval", "100ms")
	if _, stderr, code := sqlfsExec(t, "", "tool", "--store", store, "write", `{"path":"a.txt","content":"hello\n"}`); code != 0 {
		t.Fatal(stderr)
	}
	out, stderr, code := sqlfsExec(t, "", "replica", "status", "--store", store)
	if code != 0 || !strings.Contains(out, "ws.sqlfs") || !strings.Contains(out, "BEHIND") {
		t.Fatalf("replica status: %d %q %s", code, out, stderr)
	}
	if code := stop(); code != 0 {
		t.Fatalf("owner exited %d", code)
	}
	restored := filepath.Join(t.TempDir(), "r.sqlfs")
	if out, stderr, code := sqlfsExec(t, "", "restore", "--replica", url, restored); code != 0 || !strings.Contains(out, "restored and checked") {
		t.Fatalf("restore: %d %q %s", code, out, stderr)
	}
	if out, stderr, code := sqlfsExec(t, "", "run", "--store", restored, "--", "cat a.txt"); code != 0 || out != "hello\n" {
		t.Fatalf("restored store: %d %q %s", code, out, stderr)
	}
	if _, stderr, code := sqlfsExec(t, "", "restore", "--replica", s3.URL("elsewhere"), filepath.Join(t.TempDir(), "x.sqlfs")); code != 1 || !strings.Contains(stderr, "holds no store") {
		t.Fatalf("restore of an empty replica: %d %s", code, stderr)
	}
}

// TestHostReplicaSurvivesLostDisk: a host replicating its workspaces
// hibernates one after a write and is SIGKILLed; its disk is thrown away.
// The write restores from the replica, by the CLI and by a new host on an
// empty directory at the workspace's first request.
func TestHostReplicaSurvivesLostDisk(t *testing.T) {
	withLitestream(t)
	s3 := s3test.StartFake(t, s3test.Options{})
	url := s3.URL("fleet")
	tmp := t.TempDir()
	opTok := filepath.Join(tmp, "operator.token")
	if _, stderr, code := sqlfsExec(t, "", "token", opTok); code != 0 {
		t.Fatal(stderr)
	}
	op, _ := os.ReadFile(opTok)
	dir := filepath.Join(tmp, "ws")
	hostURL, kill := startHost(t, dir, opTok, "--idle-timeout", "200ms", "--replica", url)
	if st, b := hostCall(t, hostURL, string(op), "POST", "/v1/workspaces", `{"id":"w1"}`); st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, b)
	}
	if out, stderr, code := sqlfsExec(t, "", "run", "--host", hostURL, "--workspace", "w1", "--token-file", opTok, "--", "echo committed > f"); code != 0 {
		t.Fatalf("run: %d %q %s", code, out, stderr)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, b := hostCall(t, hostURL, string(op), "GET", "/v1/workspaces/w1", "")
		if strings.Contains(b, `"hibernated"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("w1 never hibernated: %s", b)
		}
	}
	kill()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(tmp, "w1.sqlfs")
	if out, stderr, code := sqlfsExec(t, "", "restore", "--replica", url, "--workspace", "w1", restored); code != 0 {
		t.Fatalf("restore --workspace: %d %q %s", code, out, stderr)
	}
	if out, stderr, code := sqlfsExec(t, "", "run", "--store", restored, "--", "cat f"); code != 0 || out != "committed\n" {
		t.Fatalf("restored w1: %d %q %s", code, out, stderr)
	}
	if _, stderr, code := sqlfsExec(t, "", "restore", "--replica", url, "--workspace", "w2", filepath.Join(tmp, "w2.sqlfs")); code != 1 || !strings.Contains(stderr, "no workspace w2") {
		t.Fatalf("restore of an unknown workspace: %d %s", code, stderr)
	}
	hostURL, _ = startHost(t, filepath.Join(tmp, "new"), opTok, "--replica", url)
	if out, stderr, code := sqlfsExec(t, "", "run", "--host", hostURL, "--workspace", "w1", "--token-file", opTok, "--", "cat f"); code != 0 || out != "committed\n" {
		t.Fatalf("w1 on a new host: %d %q %s", code, out, stderr)
	}
}

// TestWorkspaceOfStore: replica status --workspaces names a fleet's
// generation store by its workspace, not by its gen-G folder.
func TestWorkspaceOfStore(t *testing.T) {
	for _, tc := range []struct{ dir, path, want string }{
		{"/d", "/d/w1/workspace.sqlfs", "w1"},
		{"/d", "/d/w1/gen-3/workspace.sqlfs", "w1"},
		{"/d/", "/d/w2/gen-12/workspace.sqlfs", "w2"},
		{"/d", "/elsewhere/w1/workspace.sqlfs", "/elsewhere/w1/workspace.sqlfs"},
	} {
		if got := workspaceOfStore(tc.dir, tc.path); got != tc.want {
			t.Errorf("workspaceOfStore(%q, %q) = %q, want %q", tc.dir, tc.path, got, tc.want)
		}
	}
}
