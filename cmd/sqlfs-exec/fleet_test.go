package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/fleet"
	"github.com/sqlfs/sqlfs/internal/s3test"
)

func leaseOf(t *testing.T, url, id string) fleet.Record {
	t.Helper()
	l, err := fleet.OpenS3Lease(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Holder(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestServeFleet runs two serve --workspaces processes sharing a lease
// bucket: a request through the host not holding a workspace is
// forwarded; SIGTERM hands the workspace's lease back at once; after a
// SIGKILL the restarted host waits out its dead instance's lease, then
// serves its own copy with every acknowledged write, passing check.
func TestServeFleet(t *testing.T) {
	leases := s3test.StartFake(t, s3test.Options{}).URL("leases")
	tmp := t.TempDir()
	opTok := filepath.Join(tmp, "operator.token")
	if _, stderr, code := sqlfsExec(t, "", "token", opTok); code != 0 {
		t.Fatal(stderr)
	}
	b, _ := os.ReadFile(opTok)
	op := string(b)
	const ttl = 2 * time.Second
	start := func(name, addr string) (string, func()) {
		return startHostAt(t, addr, filepath.Join(tmp, name), opTok,
			"--fleet-lease", leases, "--advertise-addr", addr, "--lease-ttl", ttl.String())
	}
	addrA := freeAddr(t)
	urlA, killA := start("a", addrA)
	urlB, _ := start("b", freeAddr(t))
	must := func(url string, want int, method, path, body string) string {
		t.Helper()
		return hostMust(t, url, op, want, method, path, body)
	}
	must(urlA, http.StatusCreated, "POST", "/v1/workspaces", `{"id":"w"}`)
	must(urlB, http.StatusOK, "POST", "/v1/workspaces/w/tools/write", `{"path":"f.txt","content":"through b"}`)
	if out := must(urlA, http.StatusOK, "POST", "/v1/workspaces/w/tools/read", `{"path":"f.txt"}`); !strings.Contains(out, "through b") {
		t.Fatalf("a reads %s", out)
	}
	if r := leaseOf(t, leases, "w"); r.Addr != "http://"+addrA || !r.Live(time.Now()) {
		t.Fatalf("lease %+v", r)
	}
	if _, err := os.Stat(filepath.Join(tmp, "b", "w")); err == nil {
		t.Fatal("b made a copy of w")
	}

	// SIGTERM: the lease is released on the way out.
	hostSignal(t, urlA, op, syscall.SIGTERM)
	killA()
	if r := leaseOf(t, leases, "w"); !r.Released {
		t.Fatalf("lease after SIGTERM: %+v", r)
	}
	urlA, killA = start("a", addrA)
	must(urlA, http.StatusOK, "POST", "/v1/workspaces/w/tools/write", `{"path":"g.txt","content":"acknowledged"}`)
	// A checkpoint is a durable commit: the write is synced once it answers.
	must(urlA, http.StatusOK, "POST", "/v1/workspaces/w/checkpoints", `{}`)

	// SIGKILL: the lease stays with the dead instance until it expires.
	killA()
	dead := leaseOf(t, leases, "w")
	urlA, _ = start("a", addrA)
	st, out := hostCall(t, urlA, op, "POST", "/v1/workspaces/w/tools/read", `{"path":"g.txt"}`)
	if time.Now().Before(dead.Expires.Add(-ttl/4)) && st != http.StatusServiceUnavailable {
		t.Fatalf("read before the dead instance's lease expired: %d %s", st, out)
	}
	for st != http.StatusOK {
		if time.Now().After(dead.Expires.Add(10 * time.Second)) {
			t.Fatalf("still %d %s long after the lease expired", st, out)
		}
		time.Sleep(100 * time.Millisecond)
		st, out = hostCall(t, urlA, op, "POST", "/v1/workspaces/w/tools/read", `{"path":"g.txt"}`)
	}
	if !strings.Contains(out, "acknowledged") {
		t.Fatalf("after the SIGKILL: %s", out)
	}
	if r := leaseOf(t, leases, "w"); r.Generation != dead.Generation+1 {
		t.Fatalf("lease %+v after %+v", r, dead)
	}
	var metrics string
	_, metrics = hostCall(t, urlA, op, "GET", "/metrics", "")
	if !strings.Contains(metrics, `sqlfs_fleet_lease_acquisitions_total{local="current"} 1`) {
		t.Fatalf("metrics: %s", grepLines(metrics, "sqlfs_fleet"))
	}
	hostSignal(t, urlA, op, syscall.SIGTERM)
	if _, stderr, code := sqlfsExec(t, "", "check", "--store", filepath.Join(tmp, "a", "w", "parked.sqlfs")); code != 0 {
		t.Fatalf("check: %s", stderr)
	}
}

// hostSignal sends sig to the host serving url and waits until it stopped
// answering.
func hostSignal(t *testing.T, url, op string, sig syscall.Signal) {
	t.Helper()
	st, body := hostCall(t, url, op, "GET", "/v1/health", "")
	var h struct{ Pid int }
	if st != http.StatusOK || json.Unmarshal([]byte(body), &h) != nil {
		t.Fatalf("health: %d %s", st, body)
	}
	if err := syscall.Kill(h.Pid, sig); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(h.Pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("host %d still runs after %v", h.Pid, sig)
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}
