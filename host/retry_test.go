package host_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// gate is an Opener over a Dir whose workspaces hold each request, once
// armed, until the test lets it go: the test closes the workspace under a
// request in flight.
type gate struct {
	d       *host.Dir
	mu      sync.Mutex
	armed   bool
	arrived chan struct{} // a held request arrived
	release chan struct{} // let it go
}

func (g *gate) Open(ctx context.Context, id string) (host.Workspace, error) {
	ws, err := g.d.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	return &gated{Workspace: ws, g: g}, nil
}

type gated struct {
	host.Workspace
	g *gate
}

func (w *gated) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.g.mu.Lock()
	armed := w.g.armed
	w.g.armed = false
	w.g.mu.Unlock()
	if armed {
		close(w.g.arrived)
		<-w.g.release
	}
	w.Workspace.ServeHTTP(rw, r)
}

// TestClosedUnderRequest: a request in flight when its workspace closes
// under it (EvictInstance of a lost lease, a shutdown) is never answered
// 500 (seen failing: 500 "file system is closed", the store's EIO): it is
// served again on the workspace's new state, reopened, or refused with
// 503 and Retry-After when the host shuts down.
func TestClosedUnderRequest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		close   func(*host.Host) error
		status  int
		written bool
	}{
		{"evict", func(h *host.Host) error { return h.Evict(context.Background(), "w") }, http.StatusOK, true},
		{"shutdown", func(h *host.Host) error { return h.Close(context.Background()) }, http.StatusServiceUnavailable, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := host.OpenDir(filepath.Join(t.TempDir(), "ws"), workspace.Options{}, api.Options{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			g := &gate{d: d, arrived: make(chan struct{}), release: make(chan struct{})}
			h := host.New(host.Options{Opener: g, Logger: quiet})
			srv := httptest.NewServer(host.Handler(h, d, host.HandlerOptions{OperatorToken: operator, Logger: quiet}))
			t.Cleanup(func() {
				srv.Close()
				_ = h.Close(context.Background())
				d.Close()
			})
			e := &env{t: t, dir: d.Root(), url: srv.URL, host: h}
			e.create("w")
			g.mu.Lock()
			g.armed = true
			g.mu.Unlock()
			type answer struct {
				resp *http.Response
				body []byte
			}
			got := make(chan answer, 1)
			go func() {
				resp, b := e.raw("POST", "/v1/workspaces/w/tools/write", "", `{"path": "f.txt", "content": "in flight"}`)
				got <- answer{resp, b}
			}()
			select {
			case <-g.arrived:
			case <-time.After(testenv.Slack(10 * time.Second)):
				t.Fatal("the request never reached the workspace")
			}
			if err := tc.close(h); err != nil {
				t.Fatal(err)
			}
			close(g.release)
			a := <-got
			if a.resp.StatusCode != tc.status {
				t.Fatalf("a write whose workspace closed under it: %d %s; want %d", a.resp.StatusCode, a.body, tc.status)
			}
			if a.resp.StatusCode == http.StatusServiceUnavailable && a.resp.Header.Get("Retry-After") == "" {
				t.Errorf("503 without Retry-After: %s", a.body)
			}
			if tc.written {
				if got := e.read("w", "f.txt"); got != "in flight" {
					t.Fatalf("after the answer %d, f.txt reads %q", a.resp.StatusCode, got)
				}
			}
		})
	}
}

// TestHoldWriterPassesThrough: answers other than errors stream through
// the host as they are written (an exec's NDJSON), headers and all.
func TestHoldWriterPassesThrough(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("w")
	resp, b := e.raw("POST", "/v1/workspaces/w/tools/write", "", `{"path": "f.txt", "content": "x"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		t.Fatalf("write: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	resp, b = e.raw("POST", "/v1/workspaces/w/tools/read", "", `{"path": "absent"}`)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		t.Fatalf("read of a missing file: %d %v %s", resp.StatusCode, resp.Header, b)
	}
}
