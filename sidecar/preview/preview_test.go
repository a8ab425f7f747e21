package preview_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/container"
	"github.com/sqlfs/sqlfs/sidecar/preview"
)

var (
	testRootfs string
	rootfsErr  error
)

// TestMain doubles as the container's init: libcontainer re-executes the
// test binary with the "init" argument.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "init" {
		container.Init()
	}
	dir, err := os.MkdirTemp("", "sqlfs-rootfs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if rootfsErr = container.BuildBusyboxRootfs(context.Background(), dir); rootfsErr == nil {
		testRootfs = dir
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// workspace is a container backend with the execs it runs and a preview
// registry over it, served by a public listener on 127.0.0.1.
type workspace struct {
	t       *testing.T
	b       *container.Backend
	dir     string
	reg     *preview.Registry
	public  *httptest.Server
	mu      sync.Mutex
	running map[string]bool
	audit   []string
}

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Require(t, "container tests need root", errors.New("not root"))
	}
	testenv.Require(t, "no test rootfs", rootfsErr)
	ws := &workspace{t: t, dir: t.TempDir(), running: map[string]bool{}}
	b, err := container.New(context.Background(), container.Options{
		Workspace: ws.dir, Rootfs: testRootfs, StateDir: t.TempDir(), User: "1000:1000",
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	ws.b = b
	ws.public = httptest.NewUnstartedServer(nil)
	ws.reg = preview.New(preview.Options{
		BaseURL: "http://" + ws.public.Listener.Addr().String(),
		Dial:    b.DialPort,
		Running: func(id string) bool { ws.mu.Lock(); defer ws.mu.Unlock(); return ws.running[id] },
		Record: func(actor, op, target string, err error) {
			ws.mu.Lock()
			defer ws.mu.Unlock()
			ws.audit = append(ws.audit, fmt.Sprintf("%s %s %s %v", actor, op, target, err))
		},
	})
	ws.public.Config.Handler = ws.reg
	ws.public.Start()
	t.Cleanup(ws.public.Close)
	t.Cleanup(ws.reg.Close)
	return ws
}

// serve runs command as exec id until the test ends or stop is called,
// and waits until port answers inside the container.
func (ws *workspace) serve(id, command string, port uint16) (stop func()) {
	ws.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	ws.mu.Lock()
	ws.running[id] = true
	ws.mu.Unlock()
	go func() {
		defer close(done)
		_, _ = ws.b.Exec(ctx, sidecar.Request{Command: command, Actor: "exec:" + id, Timeout: time.Hour, Stdout: io.Discard, Stderr: io.Discard})
		ws.mu.Lock()
		ws.running[id] = false
		ws.mu.Unlock()
	}()
	stop = func() { cancel(); <-done }
	ws.t.Cleanup(stop)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := ws.b.DialPort(context.Background(), port)
		if err == nil {
			c.Close()
			return stop
		}
		if time.Now().After(deadline) {
			ws.t.Fatalf("%s never listened on %d: %v", command, port, err)
		}
	}
}

func get(t *testing.T, url string, edit func(*http.Request)) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestPreview: a real HTTP server (busybox httpd) an exec runs inside the
// container is reached through its preview URL, and through nothing else:
// not another port of the container, not the host's loopback (where the
// owner's API listens), not another workspace's registry; the URL ends
// when revoked and when its exec ends, and both are audited.
func TestPreview(t *testing.T) {
	ws := newWorkspace(t)
	for _, site := range []string{"site", "other"} {
		if err := os.MkdirAll(filepath.Join(ws.dir, site, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"index.html", "sub/page.html"} {
			if err := os.WriteFile(filepath.Join(ws.dir, site, f), []byte("from "+site), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	stopDev := ws.serve("dev", "busybox httpd -f -p 127.0.0.1:8080 -h /workspace/site", 8080)
	ws.serve("other", "busybox httpd -f -p 127.0.0.1:8081 -h /workspace/other", 8081)

	p, err := ws.reg.Expose("api:test", "dev", 8080, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.URL, ws.public.URL+"/x/") || len(p.URL) < len(ws.public.URL)+40 {
		t.Fatalf("URL %q: want %s/x/ and an unguessable token", p.URL, ws.public.URL)
	}
	if code, body := get(t, p.URL+"sub/page.html", nil); code != 200 || body != "from site" {
		t.Fatalf("through the preview: %d %q", code, body)
	}
	if code, body := get(t, strings.TrimSuffix(p.URL, "/"), nil); code != 200 || body != "from site" {
		t.Errorf("the URL without its slash: %d %q, want a redirect to the index", code, body)
	}

	// The owner's API on the host's loopback: exposing its port reaches
	// the container's own loopback, where nothing listens.
	var hostHits sync.Map
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hostHits.Store(r.URL.Path, true)
		fmt.Fprint(w, "owner API")
	}))
	t.Cleanup(owner.Close)
	_, ownerPort, _ := net.SplitHostPort(strings.TrimPrefix(owner.URL, "http://"))
	var op int
	fmt.Sscan(ownerPort, &op)
	ownerPreview, err := ws.reg.Expose("api:test", "dev", op, time.Minute)
	if err != nil {
		t.Fatal(err)
	}

	other := newWorkspace(t)
	base := strings.TrimSuffix(p.URL, "/")
	token := base[strings.LastIndex(base, "/")+1:]
	for _, tc := range []struct {
		name string
		url  string
		edit func(*http.Request)
		code int
	}{
		{"the owner's API port", ownerPreview.URL + "v1/health", nil, 502},
		{"a guessed token", ws.public.URL + "/x/" + strings.Repeat("A", len(token)) + "/sub/page.html", nil, 404},
		{"no token", ws.public.URL + "/x/", nil, 404},
		{"another workspace's token", other.public.URL + "/x/" + token + "/sub/page.html", nil, 404},
		{"Host naming the other port", p.URL + "sub/page.html", func(r *http.Request) { r.Host = "127.0.0.1:8081" }, 200},
		{"absolute URL naming the other port", p.URL + "http://127.0.0.1:8081/sub/page.html", nil, 404},
		{"dot-dot out of the token", p.URL + "..%2f..%2fx/sub/page.html", nil, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, tc.url, tc.edit)
			if code != tc.code || strings.Contains(body, "from other") || strings.Contains(body, "owner API") {
				t.Errorf("%d %q, want %d and nothing from another port", code, body, tc.code)
			}
		})
	}
	if _, hit := hostHits.Load("/v1/health"); hit {
		t.Error("a preview reached a server on the host's loopback")
	}

	if err := ws.reg.Revoke("api:test", ownerPreview.ID); err != nil {
		t.Fatal(err)
	}
	if err := ws.reg.Revoke("api:test", ownerPreview.ID); !errors.Is(err, preview.ErrNoPreview) {
		t.Errorf("revoking twice: %v, want ErrNoPreview", err)
	}
	if code, _ := get(t, ownerPreview.URL, nil); code != 404 {
		t.Errorf("a revoked preview answers %d, want 404", code)
	}
	if got := ws.reg.List(); len(got) != 1 || got[0].ID != p.ID {
		t.Errorf("List = %+v, want only %s", got, p.ID)
	}

	stopDev()
	if code, _ := get(t, p.URL+"sub/page.html", nil); code != 404 {
		t.Errorf("after its exec ended the preview answers %d, want 404", code)
	}
	if _, err := ws.reg.Expose("api:test", "dev", 8080, 0); !errors.Is(err, preview.ErrExecEnded) {
		t.Errorf("exposing for an ended exec: %v, want ErrExecEnded", err)
	}
	for _, bad := range []int{0, 70000} {
		if _, err := ws.reg.Expose("api:test", "other", bad, 0); !errors.Is(err, preview.ErrBadPort) {
			t.Errorf("port %d: %v, want ErrBadPort", bad, err)
		}
	}

	ws.mu.Lock()
	defer ws.mu.Unlock()
	want := []string{
		"api:test expose port:8080 <nil>",
		fmt.Sprintf("api:test expose port:%d <nil>", op),
		fmt.Sprintf("api:test unexpose port:%d <nil>", op),
		"api:test unexpose port:8080 <nil>",
		"api:test expose port:8080 " + preview.ErrExecEnded.Error(),
		"api:test expose port:0 " + preview.ErrBadPort.Error(),
	}
	if got := strings.Join(ws.audit[:min(len(ws.audit), len(want))], "\n"); got != strings.Join(want, "\n") {
		t.Errorf("audit:\n%s\nwant:\n%s", strings.Join(ws.audit, "\n"), strings.Join(want, "\n"))
	}
}

// TestPreviewUpgrade: an upgraded connection (what a WebSocket is) is
// tunnelled to the container's server, and revoking the preview closes it.
func TestPreviewUpgrade(t *testing.T) {
	ws := newWorkspace(t)
	// Each connection reads the request's head, answers the upgrade, then
	// reads until the peer closes it. (Answering before the request is
	// read races the proxy's transport, which drops a connection that
	// speaks first: "Unsolicited response received on idle HTTP channel".)
	script := `cr=$(printf '\r'); while IFS= read -r line && [ "$line" != "$cr" ] && [ -n "$line" ]; do :; done
printf 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\nupgraded\n'; cat >/dev/null` + "\n"
	if err := os.WriteFile(filepath.Join(ws.dir, "up.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ws.serve("ws", "nc -ll -p 9000 -e /bin/sh /workspace/up.sh", 9000)
	p, err := ws.reg.Expose("api:test", "ws", 9000, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(ws.public.URL, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	path := strings.TrimPrefix(p.URL, ws.public.URL)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n", path, host)
	br := bufio.NewReader(c)
	status, _ := br.ReadString('\n')
	if !strings.Contains(status, "101") {
		t.Fatalf("status %q, want 101", status)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
	}
	if line, _ := br.ReadString('\n'); line != "upgraded\n" {
		t.Fatalf("after the upgrade: %q", line)
	}
	if err := ws.reg.Revoke("api:test", p.ID); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after revoking, the tunnel read %v, want EOF", err)
	}
}
