package fleet_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// gate holds the next request of a workspace its member opens, once
// armed, until released: the test loses the lease under it.
type gate struct {
	mu      sync.Mutex
	armed   bool
	arrived chan struct{}
	release chan struct{}
}

// arm makes the next request wait; it returns when that request arrived
// and the function that lets it go.
func (g *gate) arm() (arrived <-chan struct{}, release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.arrived, g.release = true, make(chan struct{}), make(chan struct{})
	rel := g.release
	return g.arrived, sync.OnceFunc(func() { close(rel) })
}

type gated struct {
	*synced
	g *gate
}

func (w *gated) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.g.mu.Lock()
	armed, arrived, release := w.g.armed, w.g.arrived, w.g.release
	w.g.armed = false
	w.g.mu.Unlock()
	if armed {
		close(arrived)
		<-release
	}
	w.synced.ServeHTTP(rw, r)
}

// TestLeaseLostUnderRequest: a write in flight when its host loses the
// workspace's lease (renewals cut off: the host fences and closes the
// workspace under it) is neither answered 500 (seen failing: 500
// "input/output error", the closed store's EIO) nor acknowledged and
// lost: it is served again on the workspace's new state, forwarded to
// the host that took the lease meanwhile, or under a new lease of its
// own host when nobody took it.
func TestLeaseLostUnderRequest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		taken bool // b takes the lease before the request goes on
	}{
		{"forwarded to the new holder", true},
		{"reopened under a new lease", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ttl := 1500 * time.Millisecond
			a, b := syncedPair(t, ttl)
			arrived, release := a.gate.arm()
			defer release()
			type answer struct {
				st   int
				body []byte
			}
			got := make(chan answer, 1)
			go func() {
				st, body := a.do("POST", "/v1/workspaces/w/tools/write", map[string]any{"path": "f.txt", "content": "in flight"})
				got <- answer{st, body}
			}()
			select {
			case <-arrived:
			case <-time.After(testenv.Slack(10 * time.Second)):
				t.Fatal("the write never reached the workspace")
			}
			a.lease.cut.Store(true)
			deadline := time.Now().Add(testenv.Slack(10 * ttl))
			for a.fleet.Serving("w") || a.host.Open() > 0 {
				if time.Now().After(deadline) {
					t.Fatal("a still holds w after losing the lease store")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if tc.taken {
				for {
					st, body := b.do("POST", "/v1/workspaces/w/tools/read", map[string]any{"path": "f.txt"})
					if st == http.StatusOK {
						break
					}
					if st != http.StatusServiceUnavailable || time.Now().After(deadline) {
						t.Fatalf("b: %d %s", st, body)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			a.lease.cut.Store(false)
			release()
			ans := <-got
			if ans.st != http.StatusOK {
				t.Fatalf("a write whose lease was lost under it: %d %s; want 200", ans.st, ans.body)
			}
			served, other := a, b
			if tc.taken {
				served, other = b, a
			}
			if !served.fleet.Serving("w") || other.fleet.Serving("w") {
				t.Fatalf("w served by a %v, b %v", a.fleet.Serving("w"), b.fleet.Serving("w"))
			}
			if got := served.read("w", "f.txt"); got != "in flight" {
				t.Fatalf("the acknowledged write reads %q where w is served", got)
			}
		})
	}
}
