package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sqlfs/sqlfs/internal/exectest"
	"github.com/sqlfs/sqlfs/sidecar/api/apitest"
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

// operatorToken makes a token file in dir with `sqlfs-exec token`.
func operatorToken(t *testing.T, dir string) (file, token string) {
	t.Helper()
	file = filepath.Join(dir, "operator.token")
	if _, stderr, code := sqlfsExec(t, "", "token", file); code != 0 {
		t.Fatal(stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return file, strings.TrimSpace(string(b))
}

func hostCall(t *testing.T, url, token, method, path, body string) (int, string) {
	t.Helper()
	return exectest.Call(t, url, token, method, path, body)
}

// hostMust is hostCall that must answer want; it returns the body.
func hostMust(t *testing.T, url, token string, want int, method, path, body string) string {
	t.Helper()
	st, out := hostCall(t, url, token, method, path, body)
	if st != want {
		t.Fatalf("%s %s%s: %d %s, want %d", method, url, path, st, out, want)
	}
	return out
}

// TestServeWorkspaces drives a host over TCP: workspaces made through the
// API, the CLI's --host/--workspace with the operator's and a workspace's
// token, and a SIGKILL that loses nothing committed.
func TestServeWorkspaces(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "ws")
	opTok, op := operatorToken(t, tmp)
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
	// No --rootfs: expose says the container backend is missing.
	if _, stderr, code := sqlfsExec(t, "", "expose", "--host", url, "--workspace", "w1", "--token-file", wsTok, "8080"); code != 1 || !strings.Contains(stderr, "the container backend is not configured") {
		t.Errorf("expose without --rootfs: exit %d, %q", code, stderr)
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

// TestHostAckedToolWritesSurviveSIGKILL: every tool write, edit and
// delete a host acknowledged, over HTTP and MCP, is there after a SIGKILL,
// however long the commit interval: an acknowledgement waits for the
// durable commit (issue 21's crash test lost 3 of 1,150).
func TestHostAckedToolWritesSurviveSIGKILL(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "ws")
	opTok, op := operatorToken(t, tmp)
	// No commit would come from the interval or idleness before the kill.
	url, kill := startHost(t, dir, opTok, "--commit-interval", "1h", "--idle-timeout", "1h")
	if st, b := hostCall(t, url, op, "POST", "/v1/workspaces", `{"id":"w"}`); st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, b)
	}
	tool := func(name, args string) error {
		st, b := hostCall(t, url, op, "POST", "/v1/workspaces/w/tools/"+name, args)
		if st != http.StatusOK {
			return fmt.Errorf("%s %s: %d %s", name, args, st, b)
		}
		return nil
	}
	const writers, rounds = 6, 8
	// want[path] is what an acknowledged change left there ("" deleted).
	var mu sync.Mutex
	want := map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, writers+2)
	goErr := func(fn func() error) { wg.Go(func() { errs <- fn() }) }
	for w := range writers {
		goErr(func() error {
			for r := range rounds {
				p := fmt.Sprintf("h%d-%d.txt", w, r)
				if err := tool("write", `{"path":"`+p+`","content":"one\n"}`); err != nil {
					return err
				}
				if err := tool("edit", `{"path":"`+p+`","edits":[{"old_text":"one","new_text":"two"}]}`); err != nil {
					return err
				}
				gone := fmt.Sprintf("h%d-%d.gone", w, r)
				if err := tool("write", `{"path":"`+gone+`","content":"x"}`); err != nil {
					return err
				}
				if err := tool("delete", `{"path":"`+gone+`"}`); err != nil {
					return err
				}
				mu.Lock()
				want[p], want[gone] = "two\n", ""
				mu.Unlock()
			}
			return nil
		})
	}
	for w := range 2 {
		goErr(func() error {
			hc := &http.Client{Transport: apitest.Bearer{Token: op}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(),
				&mcp.StreamableClientTransport{Endpoint: url + "/v1/workspaces/w/mcp", HTTPClient: hc}, nil)
			if err != nil {
				return err
			}
			defer cs.Close()
			for r := range rounds {
				p := fmt.Sprintf("m%d-%d.txt", w, r)
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"path": p, "content": "mcp\n"}})
				if err != nil || res.IsError {
					return fmt.Errorf("mcp write %s: %v %v", p, err, res)
				}
				mu.Lock()
				want[p] = "mcp\n"
				mu.Unlock()
			}
			return nil
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	kill()
	store := filepath.Join(dir, "w", "workspace.sqlfs")
	if _, stderr, code := sqlfsExec(t, "", "check", "--store", store); code != 0 {
		t.Fatalf("check after SIGKILL: %d %s", code, stderr)
	}
	out, stderr, code := sqlfsExec(t, "", "run", "--store", store, "--", `for f in *; do if [ -f "$f" ]; then printf '%s=' "$f"; cat "$f"; fi; done`)
	if code != 0 {
		t.Fatalf("listing after SIGKILL: %d %s", code, stderr)
	}
	got := map[string]string{}
	for line := range strings.Lines(out) {
		name, content, _ := strings.Cut(line, "=")
		got[name] = content
	}
	lost := 0
	for p, content := range want {
		if got[p] != content {
			lost++
			t.Errorf("%s after SIGKILL: %q, acknowledged %q", p, got[p], content)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged changes lost", lost, len(want))
	}
}

// TestServeWorkspacesPublic: serve --workspaces --public-addr serves each
// workspace's published links under /w/ID/ on the public port, with no
// token, and a link of one workspace finds nothing under another's.
func TestServeWorkspacesPublic(t *testing.T) {
	tmp := t.TempDir()
	opTok, op := operatorToken(t, tmp)
	pub := freeAddr(t)
	url, _ := startHost(t, filepath.Join(tmp, "ws"), opTok, "--public-addr", pub)
	for _, id := range []string{"w1", "w2"} {
		if st, b := hostCall(t, url, op, "POST", "/v1/workspaces", `{"id":"`+id+`"}`); st != http.StatusCreated {
			t.Fatalf("create %s: %d %s", id, st, b)
		}
		if st, b := hostCall(t, url, op, "POST", "/v1/workspaces/"+id+"/tools/write", `{"path":"f.txt","content":"of `+id+`"}`); st != http.StatusOK {
			t.Fatalf("write %s: %d %s", id, st, b)
		}
	}
	st, b := hostCall(t, url, op, "POST", "/v1/workspaces/w1/tools/publish", `{"path":"f.txt"}`)
	var out struct {
		Result struct {
			URL string `json:"url"`
		} `json:"result"`
	}
	if st != http.StatusOK || json.Unmarshal([]byte(b), &out) != nil || !strings.HasPrefix(out.Result.URL, "http://"+pub+"/w/w1/p/") {
		t.Fatalf("publish: %d %s", st, b)
	}
	for _, c := range []struct {
		url  string
		want int
	}{
		{out.Result.URL, http.StatusOK},
		{strings.Replace(out.Result.URL, "/w/w1/", "/w/w2/", 1), http.StatusNotFound},
		{strings.Replace(out.Result.URL, "/w/w1/", "/", 1), http.StatusNotFound},
	} {
		// No token: the public port asks none.
		st, body := hostCall(t, c.url, "", "GET", "", "")
		if st != c.want || c.want == http.StatusOK && body != "of w1" {
			t.Errorf("%s: %d %q, want %d", c.url, st, body, c.want)
		}
	}
}
