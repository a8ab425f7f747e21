package workspace_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/sidecar/httpcred"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// TestJSFetchGetsOperatorCredentials: a JavaScript exec's fetch to a host
// the operator holds a token for arrives with that token, as the shell's
// git does, while the program itself sees it nowhere (not in its
// environment, the request it built, or the response).
func TestJSFetchGetsOperatorCredentials(t *testing.T) {
	const token = "sqlfs-test-token-4a1f"
	var mu sync.Mutex
	var gotAuth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte("pong"))
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := egress.NewPolicy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	host, err := egress.ParseRule(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), workspace.Options{
		Egress:      pol,
		Credentials: []httpcred.Rule{{Host: host, User: "x-access-token", Token: token}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ws.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	prog := `const r = await fetch('` + srv.URL + `/x', { headers: { authorization: 'Bearer mine' } });
console.log(r.status, await r.text(), JSON.stringify(process.env), JSON.stringify([...r.headers]));`
	var out, errb bytes.Buffer
	res, err := ws.Tools.Exec(t.Context(), tools.ExecInput{Command: prog, Backend: "js", AllowNetwork: true}, &out, &errb, nil)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %v, %+v, stderr %s", err, res, errb.String())
	}
	if !strings.HasPrefix(out.String(), "200 pong ") {
		t.Errorf("stdout %q, want 200 pong", out.String())
	}
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.SetBasicAuth("x-access-token", token)
	mu.Lock()
	defer mu.Unlock()
	if len(gotAuth) != 1 || gotAuth[0] != req.Header.Get("Authorization") {
		t.Errorf("server saw Authorization %q, want the operator's credentials in place of the program's", gotAuth)
	}
	if strings.Contains(out.String()+errb.String(), token) {
		t.Errorf("the program saw the token: %s %s", out.String(), errb.String())
	}
}
