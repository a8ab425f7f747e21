package api

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// testBackend understands "echo TEXT", "sleep" (until cancelled),
// "say-then-sleep TEXT" and "flood" (writes until cancelled), enough to
// drive the exec surface.
type testBackend struct{}

func (testBackend) Name() string { return "shell" }
func (testBackend) Close() error { return nil }
func (testBackend) Exec(ctx context.Context, req sidecar.Request) (sidecar.Result, error) {
	start := time.Now()
	verb, arg, _ := strings.Cut(req.Command, " ")
	res := sidecar.Result{}
	switch verb {
	case "echo":
		fmt.Fprintln(req.Stdout, arg)
		fmt.Fprintln(req.Stderr, "to stderr")
		req.Stdout.Write([]byte{0xff, 0xfe}) // not UTF-8: travels base64
	case "sleep":
		<-ctx.Done()
		res.ExitCode = 130
	case "say-then-sleep":
		fmt.Fprintln(req.Stdout, arg)
		<-ctx.Done()
		res.ExitCode = 130
	case "flood":
		line := bytes.Repeat([]byte("y"), 64<<10)
		for ctx.Err() == nil {
			req.Stdout.Write(line)
		}
		res.ExitCode = 130
	default:
		res.ExitCode = 127
	}
	res.Duration = time.Since(start)
	return res, nil
}

var quiet = slog.New(slog.DiscardHandler)

type env struct {
	core *sfs.FS
	svc  *tools.Service
	srv  *Server
	sock string
	c    *Client
}

// serve starts a server for a fresh store on a real Unix socket (or TCP
// when tcp is set) and stops it at cleanup, also on failure.
func serve(t *testing.T, cfg Options, tcp bool) *env {
	t.Helper()
	return serveTools(t, cfg, tools.Options{}, tcp)
}

// serveTools is serve with the tools' options.
func serveTools(t *testing.T, cfg Options, to tools.Options, tcp bool) *env {
	t.Helper()
	dir := t.TempDir()
	core, err := sfs.Open(t.Context(), filepath.Join(dir, "ws.sqlfs"), sfs.Options{Policy: sfs.Policy{ReadOnly: []string{"ro/**"}, Hidden: []string{"secret"}}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{core: core, sock: SocketPath(filepath.Join(dir, "ws.sqlfs"))}
	e.svc = tools.NewForCore(core, map[string]sidecar.Backend{"shell": testBackend{}}, to)
	cfg.Tools = e.svc
	cfg.Logger = quiet
	e.srv = NewServer(cfg)
	addr := "unix:" + e.sock
	if tcp {
		addr = "127.0.0.1:0"
	}
	ln, err := Listen(addr, cfg.Token != "")
	if err != nil {
		t.Fatal(err)
	}
	if tcp {
		addr = ln.Addr().String()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if err := core.Close(); err != nil {
			t.Error(err)
		}
	})
	if e.c, err = Dial(t.Context(), addr, cfg.Token); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.c.Close() })
	return e
}

func codeOf(err error) tools.Code {
	var te *tools.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return ""
}

// unixClient is an HTTP client whose every connection goes to sock.
func unixClient(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
}

// raw sends a request over the socket without the client's help.
func (e *env) raw(t *testing.T, method, path, body string, hdr ...string) (int, string) {
	t.Helper()
	hc := unixClient(e.sock)
	req, err := http.NewRequestWithContext(t.Context(), method, "http://sqlfs"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestSocketMode(t *testing.T) {
	e := serve(t, Options{}, false)
	fi, err := os.Stat(e.sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want socket 0600", fi.Mode())
	}
	ln, err := Listen("unix:"+filepath.Join(t.TempDir(), "a.sock"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if !strings.HasSuffix(ln.Addr().String(), "/a.sock") {
		t.Errorf("listener address %s, want the socket's final name", ln.Addr())
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(e.sock), ".*tmp")); len(m) != 0 {
		t.Errorf("temporary socket names left: %v", m)
	}
}

func TestToolsOverSocket(t *testing.T) {
	e := serve(t, Options{}, false)
	ctx := t.Context()
	call := func(name, args string) (Result, error) { return e.c.Call(ctx, name, []byte(args)) }

	if _, err := call("write", `{"path":"src/a.txt","content":"one\ntwo\n"}`); err != nil {
		t.Fatal(err)
	}
	r, err := call("read", `{"path":"/workspace/src/a.txt"}`)
	if err != nil || r.Text != "     1\tone\n     2\ttwo\n" {
		t.Fatalf("read: %q %v", r.Text, err)
	}
	var ro tools.ReadOutput
	if err := json.Unmarshal(r.Result, &ro); err != nil || ro.EndLine != 2 {
		t.Fatalf("read result %s: %v", r.Result, err)
	}
	r, err = call("edit", `{"path":"src/a.txt","edits":[{"old_text":"two","new_text":"2"}]}`)
	if err != nil || !strings.Contains(r.Text, "+2\n") {
		t.Fatalf("edit: %q %v", r.Text, err)
	}
	for _, c := range []struct{ tool, args, want string }{
		{"ls", `{"path":"src"}`, "a.txt"},
		{"find", `{"pattern":"*.txt"}`, "src/a.txt\n"},
		{"grep", `{"pattern":"^2$"}`, "src/a.txt:2:2\n"},
		{"exec", `{"command":"echo hi"}`, "--- stdout ---\nhi\n"},
		{"delete", `{"path":"src","recursive":true}`, "deleted dir src\n"},
	} {
		r, err := call(c.tool, c.args)
		if err != nil || !strings.Contains(r.Text, c.want) {
			t.Errorf("%s: %q %v, want %q", c.tool, r.Text, err, c.want)
		}
	}
}

// TestBadInput sends each kind of bad request and checks the answer and
// that the workspace and its audit trail did not change.
func TestBadInput(t *testing.T) {
	e := serve(t, Options{MaxBody: 1024}, false)
	ctx := t.Context()
	if _, err := e.c.Call(ctx, "write", []byte(`{"path":"keep","content":"k"}`)); err != nil {
		t.Fatal(err)
	}
	if err := e.core.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := e.core.Store().Audit(ctx, sqlstore.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     tools.Code
	}{
		{"invalid json", "POST", "/v1/tools/write", `{"path":`, 400, codeBadJSON},
		{"not json", "POST", "/v1/tools/write", `hello`, 400, codeBadJSON},
		{"empty body", "POST", "/v1/tools/write", ``, 400, codeBadJSON},
		{"unknown field", "POST", "/v1/tools/write", `{"path":"x","content":"c","mode":"0777"}`, 400, codeBadJSON},
		{"wrong type", "POST", "/v1/tools/write", `{"path":5}`, 400, codeBadJSON},
		{"trailing data", "POST", "/v1/tools/write", `{"path":"x","content":"c"} {}`, 400, codeBadJSON},
		{"oversized", "POST", "/v1/tools/write", `{"path":"x","content":"` + strings.Repeat("x", 2000) + `"}`, 413, tools.CodeTooLarge},
		{"name too long", "POST", "/v1/tools/write", `{"path":"` + strings.Repeat("n", 256) + `","content":"c"}`, 400, tools.CodeNameTooLong},
		{"escaping path", "POST", "/v1/tools/write", `{"path":"../x","content":"c"}`, 403, tools.CodeEscape},
		{"host path", "POST", "/v1/tools/write", `{"path":"/etc/x","content":"c"}`, 403, tools.CodeEscape},
		{"read-only policy", "POST", "/v1/tools/write", `{"path":"ro/x","content":"c"}`, 403, tools.CodeDenied},
		{"unknown tool", "POST", "/v1/tools/format", `{}`, 404, codeUnknownTool},
		{"unknown backend", "POST", "/v1/exec", `{"command":"echo","backend":"vm"}`, 400, tools.CodeBackend},
		{"exec unknown field", "POST", "/v1/exec", `{"command":"echo","shell":"bash"}`, 400, codeBadJSON},
		{"exec escaping cwd", "POST", "/v1/exec", `{"command":"echo","cwd":"/tmp"}`, 403, tools.CodeEscape},
		{"unknown exec", "GET", "/v1/execs/nope", ``, 404, tools.CodeNoExec},
		{"unknown route", "GET", "/v2/x", ``, 404, codeNoRoute},
		{"wrong method", "GET", "/v1/exec", ``, 405, codeMethod},
		{"audit bad param", "GET", "/v1/audit?user=x", ``, 400, tools.CodeInvalid},
		{"import escaping", "POST", "/v1/import?dest=../x", ``, 403, tools.CodeEscape},
		{"import bad param", "POST", "/v1/import?to=x", ``, 400, tools.CodeInvalid},
		{"export missing", "GET", "/v1/export?src=nope", ``, 404, tools.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := e.raw(t, tc.method, tc.path, tc.body)
			var eb struct{ Error ErrorBody }
			if err := json.Unmarshal([]byte(body), &eb); err != nil {
				t.Fatalf("status %d, body not JSON: %q", st, body)
			}
			if st != tc.status || eb.Error.Code != tc.code || eb.Error.Message == "" {
				t.Errorf("got %d %+v, want %d %s", st, eb.Error, tc.status, tc.code)
			}
		})
	}
	ls, err := e.c.Call(ctx, "ls", []byte(`{}`))
	if err != nil || !strings.HasSuffix(ls.Text, " keep\n") || strings.Count(ls.Text, "\n") != 1 {
		t.Errorf("workspace changed: %q %v", ls.Text, err)
	}
	if err := e.core.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := e.core.Store().Audit(ctx, sqlstore.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range after[len(before):] {
		if ev.Result == "ok" {
			t.Errorf("bad input changed something: %+v", ev)
		}
	}
}

func TestTokenOverTCP(t *testing.T) {
	if _, err := Listen("127.0.0.1:0", false); !errors.Is(err, ErrTokenRequired) {
		t.Fatalf("TCP without token: %v", err)
	}
	e := serve(t, Options{Token: "s3cret"}, true)
	base := e.c.base
	for _, tc := range []struct {
		name, auth string
		status     int
	}{
		{"missing", "", 401},
		{"wrong", "Bearer nope", 401},
		{"not bearer", "Basic s3cret", 401},
		{"right", "Bearer s3cret", 200},
		{"scheme lower case", "bearer s3cret", 200},
		{"scheme upper case", "BEARER s3cret", 200},
		{"extra spaces", "  Bearer   s3cret ", 200},
		{"prefix of token", "Bearer s3cre", 401},
		{"no credentials", "Bearer", 401},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/v1/health", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s token: status %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
	}
	if _, err := Dial(t.Context(), strings.TrimPrefix(base, "http://"), ""); codeOf(errors.Unwrap(err)) != codeUnauthorized {
		t.Errorf("dial without token: %v", err)
	}
	if _, err := e.c.Call(t.Context(), "ls", []byte(`{}`)); err != nil {
		t.Errorf("with token: %v", err)
	}
}

func TestExecStream(t *testing.T) {
	e := serve(t, Options{}, false)
	ctx := t.Context()
	var out, errb bytes.Buffer
	res, err := e.c.Exec(ctx, tools.ExecInput{Command: "echo hello"}, &out, &errb)
	if err != nil || res.ExitCode != 0 || res.ID == "" {
		t.Fatalf("exec: %+v %v", res, err)
	}
	if out.String() != "hello\n\xff\xfe" || errb.String() != "to stderr\n" {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
	// The raw stream: start, chunks, exit, one JSON object per line.
	st, body := e.raw(t, "POST", "/v1/exec", `{"command":"echo x"}`)
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if st != 200 || len(lines) != 5 || !strings.HasPrefix(lines[0], `{"type":"start","id":"`) ||
		lines[1] != `{"type":"stdout","data":"x\n"}` || lines[3] != `{"type":"stdout","data_b64":"//4="}` ||
		!strings.Contains(lines[4], `"type":"exit"`) || !strings.Contains(lines[4], `"exit_code":0`) {
		t.Errorf("stream %d:\n%s", st, body)
	}
}

// TestExecStreamWrites: an exec that ends at once leaves in one write with
// the end of its response (no flush of its own), and one that runs on
// streams its output while it runs.
func TestExecStreamWrites(t *testing.T) {
	e := serve(t, Options{}, false)
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/exec", strings.NewReader(`{"command":"echo x"}`)))
	if lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n"); rec.Code != 200 || len(lines) != 5 || rec.Flushed {
		t.Errorf("echo: %d, flushed %v:\n%s", rec.Code, rec.Flushed, rec.Body)
	}

	e = serve(t, Options{}, false)
	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"command":"say-then-sleep hello"}`
	fmt.Fprintf(conn, "POST /v1/exec HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for _, want := range []string{`"type":"start"`, `{"type":"stdout","data":"hello\n"}`} {
		if !sc.Scan() || !strings.Contains(sc.Text(), want) {
			t.Fatalf("while the exec runs: %q %v, want %s", sc.Text(), sc.Err(), want)
		}
	}
	if l := e.svc.Execs(); len(l) != 1 || !l[0].Running {
		t.Errorf("the output came after the exec: %+v", l)
	}
	conn.Close()
	waitKilled(t, e)
}

func TestExecListKill(t *testing.T) {
	e := serve(t, Options{}, false)
	ctx := t.Context()
	done := make(chan tools.ExecResult, 1)
	go func() {
		res, _ := e.c.Exec(context.Background(), tools.ExecInput{Command: "sleep"}, nil, nil)
		done <- res
	}()
	var id string
	for deadline := time.Now().Add(5 * time.Second); id == "" && time.Now().Before(deadline); {
		l, err := e.c.Execs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(l) == 1 && l[0].Running {
			id = l[0].ID
		}
	}
	if id == "" {
		t.Fatal("running exec never listed")
	}
	info, err := e.c.Kill(ctx, id)
	if err != nil || info.ID != id {
		t.Fatalf("kill: %+v %v", info, err)
	}
	select {
	case res := <-done:
		if !res.Killed || res.ExitCode != 130 {
			t.Errorf("killed exec result %+v", res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("killed exec did not end")
	}
}

// waitKilled waits until the only exec has finished and reports it killed.
func waitKilled(t *testing.T, e *env) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		l := e.svc.Execs()
		if len(l) == 1 && !l[0].Running {
			if !l[0].Result.Killed {
				t.Errorf("exec ended but not killed: %+v", l[0].Result)
			}
			return
		}
	}
	t.Fatal("exec still running after its client left")
}

func TestVanishedClientCancels(t *testing.T) {
	e := serve(t, Options{}, false)
	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"command":"sleep"}`
	fmt.Fprintf(conn, "POST /v1/exec HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(line, "200") {
		t.Fatalf("status line %q %v", line, err)
	}
	conn.Close()
	waitKilled(t, e)
}

func TestSlowClientCancels(t *testing.T) {
	e := serve(t, Options{WriteTimeout: 100 * time.Millisecond}, false)
	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	body := `{"command":"flood"}`
	fmt.Fprintf(conn, "POST /v1/exec HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	// Never read: the socket buffers fill and the write deadline fires.
	waitKilled(t, e)
}

// testService opens a fresh store in dir, with the test backend as its
// shell, and closes it at cleanup.
func testService(t *testing.T, dir string) *tools.Service {
	t.Helper()
	core, err := sfs.Open(t.Context(), filepath.Join(dir, "ws.sqlfs"), sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	return tools.NewForCore(core, map[string]sidecar.Backend{"shell": testBackend{}}, tools.Options{})
}

func TestGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	svc := testService(t, dir)
	srv := NewServer(Options{Tools: svc, Grace: 50 * time.Millisecond, Logger: quiet})
	sock := filepath.Join(dir, "s.sock")
	ln, err := Listen(sock, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	c, err := Dial(t.Context(), sock, "")
	if err != nil {
		t.Fatal(err)
	}
	execDone := make(chan error, 1)
	go func() {
		_, err := c.Exec(context.Background(), tools.ExecInput{Command: "sleep"}, nil, nil)
		execDone <- err
	}()
	for len(svc.Execs()) == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown hung")
	}
	if l := svc.Execs(); len(l) != 1 || l[0].Running || !l[0].Result.Killed {
		t.Errorf("exec after shutdown: %+v", l)
	}
	<-execDone
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left after shutdown: %v", err)
	}
}

func TestImportExportAudit(t *testing.T) {
	e := serve(t, Options{}, false)
	ctx := t.Context()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mt := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, h := range []*tar.Header{
		{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o750, ModTime: mt},
		{Name: "d/f", Typeflag: tar.TypeReg, Mode: 0o640, Size: 5, ModTime: mt},
		{Name: "d/l", Typeflag: tar.TypeSymlink, Linkname: "f"},
		{Name: "d/h", Typeflag: tar.TypeLink, Linkname: "d/f"},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte("hello"))
		}
	}
	tw.Close()
	st, err := e.c.Import(ctx, "in", &buf, tools.ImportOptions{})
	if err != nil || st.Files != 1 || st.Dirs != 1 || st.Symlinks != 1 || st.Links != 1 || st.Bytes != 5 {
		t.Fatalf("import: %+v %v", st, err)
	}
	a, err := e.core.Stat("/in/d/f")
	if err != nil || a.Mode&0o777 != 0o640 || !a.Mtime.Equal(mt) || a.Nlink != 2 {
		t.Errorf("imported file %+v %v", a, err)
	}
	if a, _ := e.core.Stat("/in/d"); !a.Mtime.Equal(mt) || a.Mode&0o777 != 0o750 {
		t.Errorf("imported dir %+v", a)
	}
	var out bytes.Buffer
	if err := e.c.Export(ctx, "in", &out); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&out)
	var got []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		got = append(got, fmt.Sprintf("%s:%c:%s", h.Name, h.Typeflag, h.Linkname))
	}
	if want := "./:5: d/:5: d/f:0: d/h:1:d/f d/l:2:f"; strings.Join(got, " ") != want {
		t.Errorf("export entries %q, want %q", strings.Join(got, " "), want)
	}
	ev, err := e.c.Audit(ctx, sqlstore.AuditFilter{Actor: tools.ImportActor, PathPrefix: "in/d/f"})
	if err != nil || len(ev) == 0 || ev[0].Actor != "import" {
		t.Errorf("audit: %+v %v", ev, err)
	}
	// Refusals are audited too, under the tool's name.
	_, err = e.c.Call(ctx, "write", []byte(`{"path":"ro/x","content":"c"}`))
	if codeOf(err) != tools.CodeDenied {
		t.Fatalf("read-only write: %v", err)
	}
	ev, err = e.c.Audit(ctx, sqlstore.AuditFilter{Actor: "tool:write"})
	if err != nil || len(ev) == 0 || ev[len(ev)-1].Result == "ok" {
		t.Errorf("refusal not audited: %+v %v", ev, err)
	}
}

func TestSlowBodyRefused(t *testing.T) {
	e := serve(t, Options{ReadTimeout: 100 * time.Millisecond}, false)
	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// Promise 100 bytes, send 10, stall.
	fmt.Fprintf(conn, "POST /v1/tools/write HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"path\":\"x")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "reading the request body") {
		t.Errorf("slow body: %d %s", resp.StatusCode, b)
	}
	if _, err := e.core.Lstat("/x"); err == nil {
		t.Error("slow body created a file")
	}
}

// An owner creates its socket only once its store is open (and mounted):
// a client started with it waits for the socket instead of failing, and
// gives up after DialWait on one that never comes.
func TestDialWaitsForAStartingOwner(t *testing.T) {
	dir := t.TempDir()
	svc := testService(t, dir)
	sock := filepath.Join(dir, "late.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	go func() {
		time.Sleep(300 * time.Millisecond)
		ln, err := Listen("unix:"+sock, false)
		if err != nil {
			done <- err
			return
		}
		done <- NewServer(Options{Tools: svc, Logger: quiet}).Serve(ctx, ln)
	}()
	c, err := Dial(t.Context(), "unix:"+sock, "")
	if err != nil {
		t.Fatalf("dial of a socket served 300 ms later: %v", err)
	}
	c.Close()

	start := time.Now()
	_, err = Dial(t.Context(), "unix:"+filepath.Join(dir, "never.sock"), "")
	if took := time.Since(start); err == nil || took < DialWait || took > DialWait+2*time.Second {
		t.Errorf("dial of a socket that never comes: %v after %v, want an error after %v", err, took, DialWait)
	}
}

// TestConnectionCap: past MaxConns the API closes a connection on accept
// instead of holding it, and a slot frees when a connection ends; headers
// past 64 KiB are refused.
func TestConnectionCap(t *testing.T) {
	e := serve(t, Options{MaxConns: 3}, false)
	// e.c holds one kept-alive connection; take the other two.
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("unix", e.sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	time.Sleep(50 * time.Millisecond) // accepted
	extra, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	extra.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := extra.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("a connection past the cap: read %v, want EOF", err)
	}
	held[0].Close()
	time.Sleep(50 * time.Millisecond)
	c, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 70<<10))
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("after a slot freed, a 70 KiB header: %v %v", resp, err)
	}
}
