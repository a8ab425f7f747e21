package host_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// holdTurn runs an exec of sleep in workspace id until the returned
// release is called, and returns once it holds a's only turn.
func (e *env) holdTurn(a *host.Admission, id string) (release func()) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/workspaces/"+id+"/exec", strings.NewReader(`{"command":"sleep 600"}`))
		req.Header.Set("Authorization", "Bearer "+operator)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if ctx.Err() == nil {
			e.t.Errorf("the sleep in %s ended: %d %s", id, resp.StatusCode, b)
		}
	}()
	waitUntil(e.t, func() bool { return a.InUse() == 1 }, "the sleep in "+id+" holding the turn")
	return func() {
		cancel() // the exec ends with its request
		<-done
	}
}

// TestAdmissionCoversHeavyRoutes: the routes besides a workspace's own
// that open, copy, close or remove stores take a turn as the workspace's
// own do: the operator's create, fork, PATCH (which reopens) and DELETE,
// and the public listener's published links (which wake a workspace and
// read it). With the only turn held, one request of each kind waits; with
// the queue full, the next is refused at once (429, Retry-After, and the
// API's at_capacity); the one that waited is served once the turn is free.
func TestAdmissionCoversHeavyRoutes(t *testing.T) {
	a := host.NewAdmission(host.AdmissionOptions{MaxRequests: 1, MaxQueued: 1, MaxQueuedPerWorkspace: 1, MaxHold: time.Hour})
	e, _ := servePublicWith(t, host.Options{}, host.HandlerOptions{Admission: a})
	for _, id := range []string{"hold", "src", "pat", "del1", "del2"} {
		e.create(id)
	}
	e.write("src", "f.txt", "of src")
	link := e.publish("src", "f.txt")
	// A public request carries no token.
	publicGet := func() (*http.Response, string) {
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	api := func(method, path, body string) func() (*http.Response, string) {
		return func() (*http.Response, string) {
			resp, b := e.raw(method, path, "", body)
			return resp, string(b)
		}
	}
	for _, c := range []struct {
		name          string
		first, second func() (*http.Response, string)
		ok            int
		public        bool
	}{
		{name: "create", first: api("POST", "/v1/workspaces", `{"id":"new1"}`), second: api("POST", "/v1/workspaces", `{"id":"new2"}`), ok: http.StatusCreated},
		{name: "fork", first: api("POST", "/v1/workspaces", `{"id":"fork1","fork_of":"src"}`), second: api("POST", "/v1/workspaces", `{"id":"fork2","fork_of":"src"}`), ok: http.StatusCreated},
		{name: "patch", first: api("PATCH", "/v1/workspaces/pat", `{"limits":{"timeout_seconds":60}}`), second: api("PATCH", "/v1/workspaces/pat", `{"limits":{"timeout_seconds":61}}`), ok: http.StatusOK},
		{name: "delete", first: api("DELETE", "/v1/workspaces/del1", ""), second: api("DELETE", "/v1/workspaces/del2", ""), ok: http.StatusOK},
		{name: "public link", first: publicGet, second: publicGet, ok: http.StatusOK, public: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.t = t
			release := e.holdTurn(a, "hold")
			defer release()
			answered := make(chan int, 1)
			go func() {
				resp, _ := c.first()
				answered <- resp.StatusCode
			}()
			deadline := time.Now().Add(testenv.Slack(10 * time.Second))
			for a.Queued() != 1 {
				select {
				case st := <-answered:
					t.Fatalf("answered %d while the host's only turn was held: it took none", st)
				default:
				}
				if time.Now().After(deadline) {
					t.Fatal("timed out waiting for the request to queue")
				}
				time.Sleep(2 * time.Millisecond)
			}
			resp, b := c.second()
			if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("past the queue: %d %q (Retry-After %q), want 429 with Retry-After", resp.StatusCode, b, resp.Header.Get("Retry-After"))
			}
			if !c.public && !strings.Contains(b, `"`+string(tools.CodeAtCapacity)+`"`) {
				t.Fatalf("past the queue: %s, want %s", b, tools.CodeAtCapacity)
			}
			release()
			if st := <-answered; st != c.ok {
				t.Fatalf("the request that waited: %d, want %d", st, c.ok)
			}
		})
	}
	e.t = t
	if got := e.read("fork1", "f.txt"); got != "of src" {
		t.Fatalf("fork1 reads %q", got)
	}
}
