package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/internal/exectest"
)

// startHost runs `sqlfs-exec serve --workspaces dir` on a loopback port
// with the operator token in tokenFile and waits until it answers. It is
// killed at cleanup; kill does it earlier with SIGKILL.
func startHost(t *testing.T, dir, tokenFile string, extra ...string) (url string, kill func()) {
	t.Helper()
	return startHostAt(t, freeAddr(t), dir, tokenFile, extra...)
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startHostAt is startHost on addr.
func startHostAt(t *testing.T, addr, dir, tokenFile string, extra ...string) (url string, kill func()) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"serve", "--workspaces", dir, "--listen", addr, "--token-file", tokenFile}, extra...)...)
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	url = "http://" + addr
	return url, exectest.StartHost(t, cmd, url, string(tok)).Kill
}

func hostCall(t *testing.T, url, token, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(token))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeWorkspaces drives a host over TCP: workspaces made through the
// API, the CLI's --host/--workspace with the operator's and a workspace's
// token, and a SIGKILL that loses nothing committed.
func TestServeWorkspaces(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "ws")
	opTok := filepath.Join(tmp, "operator.token")
	if _, stderr, code := sqlfsExec(t, "", "token", opTok); code != 0 {
		t.Fatal(stderr)
	}
	op, _ := os.ReadFile(opTok)
	url, kill := startHost(t, dir, opTok, "--idle-timeout", "100ms")
	for _, id := range []string{"w1", "w2"} {
		if st, b := hostCall(t, url, string(op), "POST", "/v1/workspaces", `{"id":"`+id+`"}`); st != http.StatusCreated {
			t.Fatalf("create %s: %d %s", id, st, b)
		}
	}
	out, stderr, code := sqlfsExec(t, "", "run", "--host", url, "--workspace", "w1", "--token-file", opTok, "--", "echo committed > f; cat f")
	if code != 0 || out != "committed\n" {
		t.Fatalf("run --host: %d %q %s", code, out, stderr)
	}

	st, b := hostCall(t, url, string(op), "POST", "/v1/workspaces/w1/tokens", `{"ttl_seconds": 3600}`)
	var minted struct {
		Token string `json:"token"`
	}
	if st != http.StatusCreated || json.Unmarshal([]byte(b), &minted) != nil || minted.Token == "" {
		t.Fatalf("mint: %d %s", st, b)
	}
	wsTok := filepath.Join(tmp, "w1.token")
	if err := os.WriteFile(wsTok, []byte(minted.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = sqlfsExec(t, `{"path":"f"}`, "tool", "--host", url, "--workspace", "w1", "--token-file", wsTok, "read")
	if code != 0 || out != "     1\tcommitted\n" {
		t.Fatalf("tool --host with w1's token: %d %q %s", code, out, stderr)
	}
	_, stderr, code = sqlfsExec(t, "", "run", "--host", url, "--workspace", "w2", "--token-file", wsTok, "--", "echo x")
	if code != 1 || !strings.Contains(stderr, "unauthorized") {
		t.Fatalf("w1's token on w2: %d %s", code, stderr)
	}

	// SIGKILL: w1 hibernated after its write (a final commit), so the write
	// is there after a restart, and every store passes check.
	kill()
	for _, id := range []string{"w1", "w2"} {
		if _, stderr, code := sqlfsExec(t, "", "check", "--store", filepath.Join(dir, id, "workspace.sqlfs")); code != 0 {
			t.Errorf("check %s after SIGKILL: %d %s", id, code, stderr)
		}
	}
	url, _ = startHost(t, dir, opTok)
	out, stderr, code = sqlfsExec(t, "", "run", "--host", url, "--workspace", "w1", "--token-file", wsTok, "--", "cat f")
	if code != 0 || out != "committed\n" {
		t.Fatalf("after restart: %d %q %s", code, out, stderr)
	}
}
