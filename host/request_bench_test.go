package host_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// BenchmarkRequest is the CPU one request of the active load (issue 21:
// exec echo with its NDJSON stream, the write and read tools) costs the
// host, over loopback TCP with a bearer token, next to the single-store
// server in the same run: each iteration sends the request to one, then
// the other (alternating which goes first). cpu-ns/op is the host's
// (the process's CPU over its requests, every thread's, the in-process
// client's share included), single-cpu-ns/op the single-store server's,
// x-single their ratio; ns/op is both requests' time.
func BenchmarkRequest(b *testing.B) {
	const tok = "bench-token-0123456789abcdef"
	ctx := context.Background()
	tmp := b.TempDir()
	wo := workspace.Options{}
	wo.FS.Logger, wo.Shell.Logger = quiet, quiet

	d, err := host.OpenDir(filepath.Join(tmp, "ws"), wo, api.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if err := d.Create("w", nil); err != nil {
		b.Fatal(err)
	}
	h := host.New(host.Options{Opener: d, Logger: quiet})
	defer h.Close(ctx)
	hs := httptest.NewServer(host.Handler(h, d, host.HandlerOptions{OperatorToken: tok, Logger: quiet}))
	defer hs.Close()

	ws, err := workspace.Open(ctx, filepath.Join(tmp, "single.sqlfs"), wo)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close(ctx)
	ss := httptest.NewServer(api.NewServer(api.Options{Tools: ws.Tools, Token: tok, Logger: quiet}))
	defer ss.Close()

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	do := func(b *testing.B, url, body, want string) {
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(got, []byte(want)) {
			b.Fatalf("POST %s: %d %s %v, want %s", url, resp.StatusCode, got, err, want)
		}
	}
	sides := []string{hs.URL + "/v1/workspaces/w", ss.URL + "/v1"}
	for _, base := range sides {
		do(b, base+"/tools/write", `{"path":"f.txt","content":"hello"}`, `"path"`)
	}
	for _, k := range []struct{ name, path, body, want string }{
		{"exec-echo", "/exec", `{"command":"echo hi"}`, `"exit_code":0`},
		{"write", "/tools/write", `{"path":"f.txt","content":"hello"}`, `"path"`},
		{"read", "/tools/read", `{"path":"f.txt"}`, `hello`},
	} {
		b.Run(k.name, func(b *testing.B) {
			for _, base := range sides { // warm both: connections, statements
				do(b, base+k.path, k.body, k.want)
			}
			var cpu [2]time.Duration
			for i := 0; b.Loop(); i++ {
				for j := range 2 {
					side := (i + j) % 2
					c0 := cpuTime(b)
					do(b, sides[side]+k.path, k.body, k.want)
					cpu[side] += cpuTime(b) - c0
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(cpu[0].Nanoseconds())/n, "cpu-ns/op")
			b.ReportMetric(float64(cpu[1].Nanoseconds())/n, "single-cpu-ns/op")
			b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "x-single")
		})
	}
}
