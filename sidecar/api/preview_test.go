package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sqlfs/sqlfs/sidecar/api/apitest"
	"github.com/sqlfs/sqlfs/sidecar/preview"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// TestExposeRoutes: POST /v1/execs/{id}/expose gives a running exec's port
// a URL that reaches it, GET /v1/previews lists it, DELETE ends it; an
// unknown exec and a bad port are refused with their codes. The expose
// tool, over MCP, does the same for the only running exec and asks for
// exec_id when two run. (What a preview reaches inside a real container is
// sidecar/preview's test.)
func TestExposeRoutes(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "dev server %s", r.URL.Path)
	}))
	t.Cleanup(origin.Close)
	var svc *tools.Service
	public := httptest.NewUnstartedServer(nil)
	reg := preview.New(preview.Options{
		BaseURL: "http://" + public.Listener.Addr().String(),
		// The origin stands in for the container: every port is it.
		Dial: func(ctx context.Context, _ uint16) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", origin.Listener.Addr().String())
		},
		Running: func(id string) bool { info, err := svc.ExecInfo(id); return err == nil && info.Running },
	})
	public.Config.Handler = reg
	public.Start()
	t.Cleanup(public.Close)
	e := serveTools(t, Options{}, tools.Options{Previews: reg}, false)
	svc = e.svc

	startExec := func() string {
		ids := make(chan string, 1)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = svc.Exec(ctx, tools.ExecInput{Command: "sleep"}, io.Discard, io.Discard, func(id string) { ids <- id })
		}()
		t.Cleanup(func() { cancel(); <-done })
		return <-ids
	}
	get := func(u string) (int, string) {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	id := startExec()

	cs := inMemory(t, Local{svc})
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "expose", Arguments: map[string]any{"port": 3000}})
	if err != nil || res.IsError {
		t.Fatalf("expose tool: %v %+v", err, res)
	}
	var tp preview.Preview
	if b, _ := json.Marshal(res.StructuredContent); json.Unmarshal(b, &tp) != nil || tp.Exec != id || tp.Port != 3000 || !strings.Contains(apitest.Text(res), tp.URL) {
		t.Fatalf("expose tool's result: %s %+v", apitest.Text(res), res.StructuredContent)
	}
	if code, body := get(tp.URL + "app"); code != 200 || body != "dev server /app" {
		t.Errorf("through the tool's preview: %d %q", code, body)
	}

	code, body := e.raw(t, "POST", "/v1/execs/"+id+"/expose", `{"port": 5173, "ttl_seconds": 60}`)
	if code != 200 {
		t.Fatalf("expose: %d %s", code, body)
	}
	var p preview.Preview
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatal(err)
	}
	if _, got := get(p.URL + "src/main.js"); got != "dev server /src/main.js" {
		t.Errorf("through the preview: %q", got)
	}
	if code, body := e.raw(t, "GET", "/v1/previews", ""); code != 200 || !strings.Contains(body, p.ID) || !strings.Contains(body, `"port":5173`) {
		t.Errorf("list: %d %s", code, body)
	}
	for _, tc := range []struct{ path, body, code string }{
		{"/v1/execs/nosuch/expose", `{"port": 80}`, `"code":"unknown_exec"`},
		{"/v1/execs/" + id + "/expose", `{"port": 0}`, `"code":"invalid_argument"`},
		{"/v1/execs/" + id + "/expose", `{"port": "x"}`, `"code":"invalid_json"`},
	} {
		if _, body := e.raw(t, "POST", tc.path, tc.body); !strings.Contains(body, tc.code) {
			t.Errorf("POST %s %s: %s, want %s", tc.path, tc.body, body, tc.code)
		}
	}
	if code, body := e.raw(t, "DELETE", "/v1/previews/"+p.ID, ""); code != http.StatusNoContent {
		t.Errorf("revoke: %d %s", code, body)
	}
	if code, _ := e.raw(t, "DELETE", "/v1/previews/"+p.ID, ""); code != http.StatusNotFound {
		t.Errorf("revoking again: %d, want 404", code)
	}
	if code, _ := get(p.URL); code != 404 {
		t.Errorf("after revoking: %d, want 404", code)
	}

	second := startExec()
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "expose", Arguments: map[string]any{"port": 3000}})
	if err != nil || !res.IsError || !strings.Contains(apitest.Text(res), "2 container execs are running") || !strings.Contains(apitest.Text(res), second) {
		t.Errorf("expose tool with two execs running: %v %s", err, apitest.Text(res))
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "expose", Arguments: map[string]any{"port": 3000, "exec_id": second}})
	if err != nil || res.IsError || !strings.Contains(apitest.Text(res), "of exec "+second) {
		t.Errorf("expose tool naming the exec: %v %s", err, apitest.Text(res))
	}
}
