package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/exectest"
	"github.com/sqlfs/sqlfs/internal/testenv"
)

// hostWorkspaceToken mints a token of workspace id on the host at url and
// writes it to a file in dir.
func hostWorkspaceToken(t *testing.T, url, op, dir, id string) string {
	t.Helper()
	st, b := hostCall(t, url, op, "POST", "/v1/workspaces/"+id+"/tokens", `{"ttl_seconds": 3600}`)
	var minted struct {
		Token string `json:"token"`
	}
	if st != http.StatusCreated || json.Unmarshal([]byte(b), &minted) != nil || minted.Token == "" {
		t.Fatalf("mint a token of %s: %d %s", id, st, b)
	}
	file := filepath.Join(dir, id+".token")
	if err := os.WriteFile(file, []byte(minted.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// httpd serves /workspace/site on 127.0.0.1:8080 in a container.
const httpd = "busybox httpd -f -p 127.0.0.1:8080 -h /workspace/site"

// startContainerServer runs command (a server) in a container exec
// (sqlfs-exec run as a child process) of the workspace that target names
// (--store STORE, or --host URL --workspace ID ...); stop ends it
// (SIGTERM, the exec with it), also at cleanup.
func startContainerServer(t *testing.T, command string, target ...string) (stop func()) {
	t.Helper()
	args := append(append([]string{"run"}, target...), "--backend", "container", "--timeout", "5m", "--", command)
	server := exec.Command(binary(t), args...)
	var stderr bytes.Buffer // read once the child has exited
	server.Stderr = &stderr
	exited, err := testenv.StartChild(server)
	if err != nil {
		t.Fatal(err)
	}
	stop = func() {
		_ = server.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(testenv.Slack(30 * time.Second)):
			_ = server.Process.Kill()
			<-exited
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("the exec %q printed:\n%s", command, stderr.String())
		}
	})
	return stop
}

// waitFor retries fn until it says done, failing with what it last said
// past a deadline.
func waitFor(t *testing.T, what string, fn func() (done bool, last string)) {
	t.Helper()
	deadline := time.Now().Add(testenv.Slack(30 * time.Second))
	for {
		done, last := fn()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s", what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runningExec waits for a running exec of workspace id on the host at url
// whose command holds sub, and returns its id.
func runningExec(t *testing.T, url, op, id, sub string) string {
	t.Helper()
	var found string
	waitFor(t, "an exec running "+sub+" in "+id, func() (bool, string) {
		var out struct {
			Execs []struct {
				ID      string `json:"id"`
				Command string `json:"command"`
				Running bool   `json:"running"`
			} `json:"execs"`
		}
		_, b := hostCall(t, url, op, "GET", "/v1/workspaces/"+id+"/execs", "")
		_ = json.Unmarshal([]byte(b), &out)
		for _, e := range out.Execs {
			if e.Running && strings.Contains(e.Command, sub) {
				found = e.ID
			}
		}
		return found != "", b
	})
	return found
}

// TestHostExpose: on a host (serve --workspaces --rootfs --public-addr),
// `sqlfs-exec expose --host --workspace ID PORT` gives a port of ID's
// container exec a URL under /w/ID/x/ that serves ID's server and no
// other's: two workspaces each run httpd on the same port, and neither
// one's token (API or preview) reaches the other's container. The preview
// ends with its exec, stays gone once the workspace hibernated and woke,
// and a forced DELETE of a workspace ends its previews; an upgraded
// connection through a preview closes when its exec is killed. --list and
// --revoke see and end a workspace's own previews only. Bad input is
// refused with a clear message.
func TestHostExpose(t *testing.T) {
	tmp := t.TempDir()
	public := freeAddr(t)
	url, op, opTok, _ := startContainerHost(t, tmp, "--public-addr", public, "--idle-timeout", "500ms")
	state := func(id string) string {
		t.Helper()
		var info struct {
			State string `json:"state"`
		}
		st, b := hostCall(t, url, op, "GET", "/v1/workspaces/"+id, "")
		if st != http.StatusOK || json.Unmarshal([]byte(b), &info) != nil {
			t.Fatalf("GET workspace %s: %d %s", id, st, b)
		}
		return info.State
	}
	toks := map[string]string{}
	for _, id := range []string{"a", "b"} {
		if st, b := hostCall(t, url, op, "POST", "/v1/workspaces", `{"id": "`+id+`"}`); st != http.StatusCreated {
			t.Fatalf("create %s: %d %s", id, st, b)
		}
		toks[id] = hostWorkspaceToken(t, url, op, tmp, id)
		if _, stderr, code := sqlfsExec(t, "", "run", "--host", url, "--workspace", id, "--token-file", toks[id], "--", "mkdir site && echo 'page of "+id+"' > site/index.html"); code != 0 {
			t.Fatalf("run in %s: %s", id, stderr)
		}
	}
	expose := func(id, tokenFile string, args ...string) (string, string, int) {
		t.Helper()
		return sqlfsExec(t, "", append([]string{"expose", "--host", url, "--workspace", id, "--token-file", tokenFile}, args...)...)
	}

	// Bad input, before any container runs.
	for _, c := range []struct {
		id   string
		args []string
		want string
	}{
		{"a", []string{"8080"}, "no container exec is running"},
		{"a", []string{"70000"}, "port 70000: port must be 1-65535"},
		{"a", []string{"0"}, "port 0: port must be 1-65535"},
		{"a", []string{"http"}, `port "http": not a number`},
		{"nosuch", []string{"8080"}, "nosuch"},
	} {
		tok := opTok
		if c.id == "a" {
			tok = toks["a"]
		}
		if _, stderr, code := expose(c.id, tok, c.args...); code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("expose %s %v: exit %d, %q, want %q", c.id, c.args, code, stderr, c.want)
		}
	}

	// A running exec of another backend has no port a preview reaches.
	shellDone := make(chan struct{})
	go func() {
		defer close(shellDone)
		exectest.Call(t, url, op, "POST", "/v1/workspaces/a/tools/exec", `{"command": "sleep 60"}`)
	}()
	shellExec := runningExec(t, url, op, "a", "sleep 60")
	if _, stderr, code := expose("a", toks["a"], "--exec", shellExec, "8080"); code != 1 || !strings.Contains(stderr, "runs on the shell backend") {
		t.Errorf("expose --exec of a shell exec: exit %d, %q", code, stderr)
	}
	if st, b := hostCall(t, url, op, "POST", "/v1/workspaces/a/execs/"+shellExec+"/kill", ""); st != http.StatusOK {
		t.Fatalf("kill the shell exec: %d %s", st, b)
	}
	<-shellDone

	stopA := startContainerServer(t, httpd, "--host", url, "--workspace", "a", "--token-file", toks["a"])
	startContainerServer(t, httpd, "--host", url, "--workspace", "b", "--token-file", toks["b"])
	urls := map[string]string{}
	for _, id := range []string{"a", "b"} {
		waitFor(t, "expose in "+id, func() (bool, string) {
			stdout, stderr, code := expose(id, toks[id], "--ttl", "10m", "8080")
			urls[id] = strings.TrimSpace(stdout)
			return code == 0, stderr
		})
		if prefix := "http://" + public + "/w/" + id + "/x/"; !strings.HasPrefix(urls[id], prefix) || !strings.HasSuffix(urls[id], "/") {
			t.Fatalf("expose in %s printed %q, want it under %s", id, urls[id], prefix)
		}
		waitFor(t, "GET the preview of "+id, func() (bool, string) {
			status, body := fetch(t, urls[id])
			return status == 200 && body == "page of "+id+"\n", body
		})
	}

	// --list shows a workspace's own previews; --revoke ends one of them
	// and nothing of another workspace's.
	list := func(id string) [][]string {
		t.Helper()
		stdout, stderr, code := expose(id, toks[id], "--list")
		if code != 0 {
			t.Fatalf("expose --list in %s: exit %d, %q", id, code, stderr)
		}
		var rows [][]string
		for line := range strings.Lines(stdout) {
			rows = append(rows, strings.Split(strings.TrimSuffix(line, "\n"), "\t"))
		}
		return rows
	}
	second, stderr, code := expose("a", toks["a"], "--ttl", "1m", "8080")
	second = strings.TrimSpace(second)
	if code != 0 {
		t.Fatalf("a second expose in a: %s", stderr)
	}
	rows := list("a")
	if len(rows) != 2 || len(rows[0]) != 5 || rows[0][1] != "8080" || rows[0][4] != second || rows[1][4] != urls["a"] {
		t.Fatalf("expose --list in a: %q, want the 1m preview %s then %s", rows, second, urls["a"])
	}
	if _, err := time.Parse(time.RFC3339, rows[0][3]); err != nil {
		t.Errorf("expiry column: %v", err)
	}
	if rows := list("b"); len(rows) != 1 || rows[0][4] != urls["b"] {
		t.Errorf("expose --list in b: %q, want only %s", rows, urls["b"])
	}
	if _, stderr, code := expose("b", toks["b"], "--revoke", rows[0][0]); code != 1 || !strings.Contains(stderr, "no such preview") {
		t.Errorf("b revoking a's preview: exit %d, %q", code, stderr)
	}
	if _, stderr, code := expose("a", opTok, "--revoke", rows[0][0]); code != 0 {
		t.Fatalf("expose --revoke in a: exit %d, %q", code, stderr)
	}
	if status, body := fetch(t, second); status != http.StatusNotFound {
		t.Errorf("revoked preview: %d %q, want 404", status, body)
	}
	if status, body := fetch(t, urls["a"]); status != http.StatusOK || body != "page of a\n" {
		t.Errorf("a's other preview after the revoke: %d %q", status, body)
	}
	if rows := list("a"); len(rows) != 1 || rows[0][4] != urls["a"] {
		t.Errorf("expose --list after the revoke: %q", rows)
	}
	for _, args := range [][]string{{"--list", "8080"}, {"--list", "--revoke", "x"}, {"--revoke", "x", "8080"}, {}} {
		if _, _, code := expose("a", toks["a"], args...); code != 2 {
			t.Errorf("expose %v: exit %d, want 2 (usage)", args, code)
		}
	}

	// An upgraded connection (what a WebSocket is) is tunnelled to a's
	// container, and closed when the exec serving it is killed.
	script := `cr=$(printf '\r'); while IFS= read -r line && [ "$line" != "$cr" ] && [ -n "$line" ]; do :; done
printf 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\nupgraded\n'; cat >/dev/null`
	if st, b := hostCall(t, url, op, "POST", "/v1/workspaces/a/tools/write", `{"path": "up.sh", "content": `+strconv.Quote(script+"\n")+`}`); st != http.StatusOK {
		t.Fatalf("write up.sh: %d %s", st, b)
	}
	startContainerServer(t, "busybox nc -ll -p 9000 -e /bin/sh /workspace/up.sh", "--host", url, "--workspace", "a", "--token-file", toks["a"])
	ncExec := runningExec(t, url, op, "a", "nc -ll")
	if _, stderr, code := expose("a", toks["a"], "9000"); code != 1 || !strings.Contains(stderr, "2 container execs are running") {
		t.Errorf("expose with two container execs in a: exit %d, %q", code, stderr)
	}
	var tunnel *bufio.Reader
	waitFor(t, "an upgrade through a's preview of port 9000", func() (bool, string) {
		stdout, stderr, code := expose("a", toks["a"], "--exec", ncExec, "9000")
		if code != 0 {
			return false, stderr
		}
		path := strings.TrimPrefix(strings.TrimSpace(stdout), "http://"+public)
		c, err := net.Dial("tcp", public)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n", path, public)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			c.Close()
			return false, fmt.Sprintf("%v %v", resp, err)
		}
		if line, err := br.ReadString('\n'); line != "upgraded\n" {
			t.Fatalf("after the upgrade: %q %v", line, err)
		}
		tunnel = br
		return true, ""
	})
	if st, b := hostCall(t, url, op, "POST", "/v1/workspaces/a/execs/"+ncExec+"/kill", ""); st != http.StatusOK {
		t.Fatalf("kill the nc exec: %d %s", st, b)
	}
	done := make(chan error, 1)
	go func() {
		_, err := tunnel.ReadByte()
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, io.EOF) {
			t.Errorf("the tunnel after its exec was killed: %v, want EOF", err)
		}
	case <-time.After(testenv.Slack(30 * time.Second)):
		t.Errorf("the tunnel stayed open after its exec was killed")
	}

	// A's preview token under b's prefix, and b's under a's, reach
	// nothing, though both run a server on that port.
	tokA := strings.TrimSuffix(strings.TrimPrefix(urls["a"], "http://"+public+"/w/a/x/"), "/")
	for _, u := range []string{
		"http://" + public + "/w/b/x/" + tokA + "/",
		"http://" + public + "/x/" + tokA + "/",
		"http://" + public + "/w/a%2f..%2fb/x/" + tokA + "/",
		strings.Replace(urls["b"], "/w/b/", "/w/a/", 1),
	} {
		if status, body := fetch(t, u); status != http.StatusNotFound {
			t.Errorf("GET %s: %d %q, want 404", u, status, body)
		}
	}
	// A's workspace token cannot expose b's ports, nor reach b's exec
	// through a's routes.
	if _, stderr, code := expose("b", toks["a"], "8080"); code == 0 || !strings.Contains(stderr, "unauthorized") {
		t.Errorf("expose in b with a's token: exit %d, %q", code, stderr)
	}
	var execsB struct {
		Execs []struct {
			ID      string `json:"id"`
			Running bool   `json:"running"`
		} `json:"execs"`
	}
	if st, b := hostCall(t, url, op, "GET", "/v1/workspaces/b/execs", ""); st != http.StatusOK || json.Unmarshal([]byte(b), &execsB) != nil || len(execsB.Execs) == 0 {
		t.Fatalf("b's execs: %d %s", st, b)
	}
	tokenA, _ := os.ReadFile(toks["a"])
	for _, e := range execsB.Execs {
		if st, b := hostCall(t, url, string(tokenA), "POST", "/v1/workspaces/a/execs/"+e.ID+"/expose", `{"port": 8080}`); st == http.StatusOK {
			t.Errorf("a exposed b's exec %s: %d %s", e.ID, st, b)
		}
		if _, stderr, code := expose("a", toks["a"], "--exec", e.ID, "8080"); code == 0 || !strings.Contains(stderr, "the exec has ended") {
			t.Errorf("expose --exec %s (b's) in a: exit %d, %q", e.ID, code, stderr)
		}
	}

	// The exec's end ends a's preview; a hibernates, and after a wake the
	// URL stays a 404.
	stopA()
	waitFor(t, "a's preview after its exec ended", func() (bool, string) {
		status, body := fetch(t, urls["a"])
		return status == http.StatusNotFound, body
	})
	waitFor(t, "a hibernating", func() (bool, string) {
		s := state("a")
		return s == "hibernated", s
	})
	if _, stderr, code := sqlfsExec(t, "", "run", "--host", url, "--workspace", "a", "--token-file", toks["a"], "--backend", "container", "--", "true"); code != 0 {
		t.Fatalf("container exec after the wake: %s", stderr)
	}
	if status, body := fetch(t, urls["a"]); status != http.StatusNotFound {
		t.Errorf("a's preview after hibernation and wake: %d %q, want 404", status, body)
	}

	// A forced DELETE closes b while its server runs: its preview ends.
	if st, b := hostCall(t, url, op, "DELETE", "/v1/workspaces/b?force=true", ""); st != http.StatusOK {
		t.Fatalf("DELETE b: %d %s", st, b)
	}
	if status, body := fetch(t, urls["b"]); status != http.StatusNotFound {
		t.Errorf("b's preview after DELETE: %d %q, want 404", status, body)
	}
}
