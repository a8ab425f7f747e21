package workspace_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// TestSetEgress: a workspace opened with LiveEgress and no rules refuses
// allow_network until SetEgress grants the origin, and follows each later
// SetEgress from the next connection; without LiveEgress, granting
// network to a workspace opened without any is refused.
func TestSetEgress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("pong")) }))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	allow, err := egress.NewPolicy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	deny, err := egress.ParsePolicy([]string{u.Host}, []string{u.Host})
	if err != nil {
		t.Fatal(err)
	}
	open := func(o workspace.Options) *workspace.Workspace {
		ws, err := workspace.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := ws.Close(context.Background()); err != nil {
				t.Error(err)
			}
		})
		return ws
	}
	ws := open(workspace.Options{LiveEgress: true})
	fetch := func() (string, error) {
		prog := `try { const r = await fetch('` + srv.URL + `'); console.log(await r.text()) } catch (e) { console.log(e.cause.message) }`
		var out, errb bytes.Buffer
		res, err := ws.Tools.Exec(t.Context(), tools.ExecInput{Command: prog, Backend: "js", AllowNetwork: true}, &out, &errb, nil)
		if err == nil && res.ExitCode != 0 {
			t.Fatalf("exec: %+v, stderr %s", res, errb.String())
		}
		return strings.TrimSpace(out.String()), err
	}
	if _, err := fetch(); err == nil || !strings.Contains(err.Error(), "allow_network is refused") {
		t.Fatalf("no rules yet: %v", err)
	}
	for _, step := range []struct {
		pol  *egress.Policy
		want string
	}{{allow, "pong"}, {deny, "denied by --egress-deny"}, {allow, "pong"}} {
		if err := ws.SetEgress(step.pol); err != nil {
			t.Fatal(err)
		}
		if got, err := fetch(); err != nil || !strings.Contains(got, step.want) {
			t.Fatalf("under %v (deny %v): %q %v, want %q", step.pol, step.pol.DenyRules(), got, err, step.want)
		}
	}
	if err := open(workspace.Options{}).SetEgress(allow); !errors.Is(err, workspace.ErrNoLiveEgress) {
		t.Fatalf("SetEgress without LiveEgress: %v", err)
	}
}
