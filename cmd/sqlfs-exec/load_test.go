package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// TestPublicPortLoad floods the public link port of an owner whose file
// limit is 2048 (the bug took 19,976 idle connections against 20,000) with
// thousands of idle kept-alive connections from many loopback addresses,
// slowloris headers and requests of many ranges, and checks that the
// owner's API keeps answering health checks and execs within a bound
// throughout, and the public port serves again once the flood ends.
func TestPublicPortLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and floods sqlfs-exec serve")
	}
	const (
		files      = 2048
		idleConns  = 3000 // from 60 addresses, 50 each
		slowConns  = 300
		rangeReqs  = 40
		probeBound = 3 * time.Second
		flood      = 8 * time.Second
	)
	store := filepath.Join(t.TempDir(), "ws.db")
	addr := freeTCPAddr(t)
	cmd := exec.Command("sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, files), binary(t), "serve", "--store", store,
		"--public-addr", addr, "--public-max-conns", "512", "--public-header-timeout", "2s")
	startOwnerCmd(t, store, cmd)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sock := api.SocketPath(store)
	probe := func() error {
		pctx, cancel := context.WithTimeout(ctx, probeBound)
		defer cancel()
		c, err := api.Dial(pctx, sock, "")
		if err != nil {
			return fmt.Errorf("health: %w", err)
		}
		defer c.Close()
		var out strings.Builder
		res, err := c.Exec(pctx, tools.ExecInput{Command: "echo ok > probe.txt && cat probe.txt"}, &out, io.Discard)
		if err != nil || res.ExitCode != 0 || out.String() != "ok\n" {
			return fmt.Errorf("exec: %v, exit %d, %q", err, res.ExitCode, out.String())
		}
		return nil
	}
	if err := probe(); err != nil {
		t.Fatal(err)
	}
	link, stderr, code := sqlfsExec(t, "", "publish", "--store", store, "probe.txt")
	if code != 0 {
		t.Fatalf("publish: %d %s", code, stderr)
	}
	link = strings.TrimSpace(link)
	path := strings.TrimPrefix(link, "http://"+addr)

	var wg sync.WaitGroup
	var held, refused atomic.Int64
	var mu sync.Mutex
	var conns []net.Conn
	keep := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	dial := func(src string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: probeBound}
		return d.DialContext(ctx, "tcp", addr)
	}
	// Idle kept-alive connections, one GET each, as in the report.
	for a := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := fmt.Sprintf("127.0.1.%d", a+1)
			for range idleConns / 60 {
				c, err := dial(src)
				if err != nil {
					refused.Add(1)
					continue
				}
				keep(c)
				c.SetDeadline(time.Now().Add(probeBound))
				if _, err := io.WriteString(c, "GET /p/nothing HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
					refused.Add(1)
					continue
				}
				if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
					refused.Add(1)
				} else {
					resp.Body.Close()
					held.Add(1)
				}
				c.SetDeadline(time.Time{})
			}
		}()
	}
	// Slowloris: headers a byte at a time, never finished.
	for i := range slowConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial(fmt.Sprintf("127.0.2.%d", i%200+1))
			if err != nil {
				return
			}
			keep(c)
			io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n")
			for deadline := time.Now().Add(flood); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(200 * time.Millisecond) {
				if _, err := io.WriteString(c, "X"); err != nil {
					return
				}
			}
		}()
	}
	// Many ranges: up to what fits in the header limit, and far past it.
	var ranged atomic.Int64
	for i := range rangeReqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 1000
			if i%2 == 0 {
				n = 70_000
			}
			rng := "bytes=" + strings.Repeat("0-0,", n-1) + "0-0"
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
			req.Header.Set("Range", rng)
			tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(fmt.Sprintf("127.0.3.%d", i+1)) }}
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusPartialContent || len(b) > 100 {
				ranged.Add(1)
			}
		}()
	}
	// The API answers throughout.
	var worst time.Duration
	probes := 0
	for start := time.Now(); time.Since(start) < flood; probes++ {
		t0 := time.Now()
		if err := probe(); err != nil {
			t.Fatalf("the owner's API failed under load after %v (%d idle connections held, %d refused): %v", time.Since(start).Round(time.Millisecond), held.Load(), refused.Load(), err)
		}
		worst = max(worst, time.Since(t0))
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	t.Logf("%d probes, slowest %v; %d idle connections held, %d refused; flood over after %v", probes, worst, held.Load(), refused.Load(), time.Since(began).Round(time.Millisecond))
	if ranged.Load() != 0 {
		t.Errorf("%d many-range requests got parts or a large body", ranged.Load())
	}
	if held.Load() > 512 {
		t.Errorf("%d idle connections held, past --public-max-conns 512", held.Load())
	}
	// The flood over, the port serves again.
	mu.Lock()
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	mu.Unlock()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(link)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && string(b) == "ok\n" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the public port did not serve after the flood: %v", err)
		}
	}
}

// freeTCPAddr is a loopback address with a port free a moment ago.
func freeTCPAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
