package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/s3test"
	"github.com/sqlfs/sqlfs/internal/testenv"
)

// holdTurn runs `sleep 600` in workspace id through url until the
// returned release is called, and returns once it holds the host's only
// turn (--max-requests 1): an exec answers its headers once it runs.
func holdTurn(t *testing.T, url, op, id string) (release func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var resp *http.Response
	for deadline := time.Now().Add(testenv.Slack(20 * time.Second)); ; time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/workspaces/"+id+"/exec", strings.NewReader(`{"command":"sleep 600"}`))
		req.Header.Set("Authorization", "Bearer "+op)
		var err error
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			break
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("the sleep in %s: %d %s", id, resp.StatusCode, b)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body) // the exec runs while its stream is read
		if ctx.Err() == nil {
			t.Errorf("the sleep in %s ended: %s", id, b)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
			untilLs(t, url, op, id, false) // the exec ends a moment after its client
		})
	}
}

// untilLs waits until an ls of workspace id through url is refused with
// 429 (refused) or not.
func untilLs(t *testing.T, url, op, id string, refused bool) {
	t.Helper()
	deadline := time.Now().Add(testenv.Slack(20 * time.Second))
	for {
		st, b := hostCall(t, url, op, "POST", "/v1/workspaces/"+id+"/tools/ls", `{"path":"."}`)
		if (st == http.StatusTooManyRequests) == refused {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ls of %s: %d %s, waiting for 429: %v", id, st, b, refused)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeFleetTurns: in a fleet the host holding a workspace admits
// the requests forwarded to it as its own (--max-requests), the host
// forwarding one holds no turn meanwhile, and a host that would take a
// workspace's lease and open it for a request takes its turn first: with
// none free it refuses the request before it takes the lease.
func TestServeFleetTurns(t *testing.T) {
	leases := s3test.StartFake(t, s3test.Options{}).URL("leases")
	tmp := t.TempDir()
	opTok, op := operatorToken(t, tmp)
	start := func(name, idle string) string {
		addr := freeAddr(t)
		url, _ := startHostAt(t, addr, filepath.Join(tmp, name), opTok,
			"--fleet-lease", leases, "--advertise-addr", addr, "--lease-ttl", "10s",
			"--max-requests", "1", "--max-queued", "0", "--max-request-hold", "10m", "--idle-timeout", idle)
		return url
	}
	urlA := start("a", "300ms")
	urlB := start("b", "1h")
	must := func(url string, want int, method, path, body string) string {
		t.Helper()
		return hostMust(t, url, op, want, method, path, body)
	}
	must(urlA, http.StatusCreated, "POST", "/v1/workspaces", `{"id":"wa"}`)
	must(urlA, http.StatusCreated, "POST", "/v1/workspaces", `{"id":"wc"}`)
	must(urlB, http.StatusCreated, "POST", "/v1/workspaces", `{"id":"wb"}`)
	for deadline := time.Now().Add(testenv.Slack(20 * time.Second)); !leaseOf(t, leases, "wc").Released; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("wc never hibernated on a: %+v", leaseOf(t, leases, "wc"))
		}
	}

	// a's only turn held by its own wa: a forwards wb's requests to b
	// all the same, and refuses wc's (which it would open) before it
	// takes wc's lease.
	releaseA := holdTurn(t, urlA, op, "wa")
	defer releaseA()
	must(urlA, http.StatusOK, "POST", "/v1/workspaces/wb/tools/ls", `{"path":"."}`)
	before := leaseOf(t, leases, "wc")
	if out := must(urlA, http.StatusTooManyRequests, "POST", "/v1/workspaces/wc/tools/ls", `{"path":"."}`); !strings.Contains(out, "at_capacity") {
		t.Fatalf("wc through a: %s", out)
	}
	if after := leaseOf(t, leases, "wc"); after.Generation != before.Generation || !after.Released {
		t.Fatalf("a took wc's lease for a request it refused: %+v, was %+v", after, before)
	}

	// b's only turn held: b refuses what a forwards to it as its own.
	releaseB := holdTurn(t, urlB, op, "wb")
	defer releaseB()
	st, out := hostCall(t, urlA, op, "POST", "/v1/workspaces/wb/tools/ls", `{"path":"."}`)
	if st != http.StatusTooManyRequests || !strings.Contains(out, "--max-queued") {
		t.Fatalf("wb through a while b's turn is held: %d %s, want b's 429", st, out)
	}
	releaseB()
	must(urlA, http.StatusOK, "POST", "/v1/workspaces/wb/tools/ls", `{"path":"."}`)
	releaseA()
	must(urlA, http.StatusOK, "POST", "/v1/workspaces/wc/tools/ls", `{"path":"."}`)
}

// TestServeMaxRequestHold: --max-request-hold is a positive duration,
// refused otherwise as the other bounds are, and --help tells it.
func TestServeMaxRequestHold(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	for _, v := range []string{"0", "-1s"} {
		_, stderr, code := sqlfsExec(t, "", "serve", "--workspaces", dir, "--max-request-hold", v)
		if code == 0 || !strings.Contains(stderr, "--max-request-hold positive") {
			t.Fatalf("--max-request-hold %s: exit %d, %s", v, code, stderr)
		}
	}
	_, stderr, _ := sqlfsExec(t, "", "serve", "--help")
	if !strings.Contains(stderr, "-max-request-hold duration") || !strings.Contains(stderr, "its turn passes to the next (default 1s)") {
		t.Fatalf("--help: %s", grepLines(stderr, "hold"))
	}
}
