package metrics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// sample returns the value of the series name{labels} in Registry: the counter, gauge or
// untyped value, or for a histogram its sample count. A missing series reads as 0.
func sample(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	v, _ := histSample(t, name, labels...)
	return v
}

// histSample is sample that also returns a histogram's sum.
func histSample(t testing.TB, name string, labels ...string) (float64, float64) {
	t.Helper()
	if len(labels)%2 != 0 {
		t.Fatalf("labels must be name/value pairs: %q", labels)
	}
	mfs, err := Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), 0
			case m.Gauge != nil:
				return m.Gauge.GetValue(), 0
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), m.Histogram.GetSampleSum()
			}
		}
	}
	return 0, 0
}

func hasLabels(m *dto.Metric, labels []string) bool {
	want := map[string]string{}
	for i := 0; i < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	if len(m.GetLabel()) != len(want) {
		return false
	}
	for _, lp := range m.GetLabel() {
		if v, ok := want[lp.GetName()]; !ok || v != lp.GetValue() {
			return false
		}
	}
	return true
}

func TestFuseObserve(t *testing.T) {
	tests := []struct {
		name      string
		op        string
		errno     int
		wantErrno string // "" when no error series must move
	}{
		{"success", "getattr", 0, ""},
		{"negative errno as cgofuse returns it", "lookup", -2, "ENOENT"},
		{"positive errno", "mkdir", 17, "EEXIST"},
		{"alias shares the first name", "read", 95, "EOPNOTSUPP"},
		{"errno outside the table", "write", 4000, "errno_4000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := Fuse(tc.op)
			if Fuse(tc.op) != op {
				t.Fatal("Fuse returned a different *FuseOp for the same op")
			}
			reqs := sample(t, "sqlfs_fuse_requests_total", "op", tc.op)
			durCount, durSum := histSample(t, "sqlfs_fuse_request_duration_seconds", "op", tc.op)
			var errs float64
			if tc.wantErrno != "" {
				errs = sample(t, "sqlfs_fuse_errors_total", "op", tc.op, "errno", tc.wantErrno)
			}

			op.Observe(time.Now().Add(-time.Millisecond), tc.errno)

			if got := sample(t, "sqlfs_fuse_requests_total", "op", tc.op) - reqs; got != 1 {
				t.Errorf("requests moved by %v, want 1", got)
			}
			c, s := histSample(t, "sqlfs_fuse_request_duration_seconds", "op", tc.op)
			if c-durCount != 1 || s-durSum < 0.001 {
				t.Errorf("duration: count moved by %v (want 1), sum by %v (want >= 1ms)", c-durCount, s-durSum)
			}
			if tc.wantErrno != "" {
				if got := sample(t, "sqlfs_fuse_errors_total", "op", tc.op, "errno", tc.wantErrno) - errs; got != 1 {
					t.Errorf("errors{errno=%s} moved by %v, want 1", tc.wantErrno, got)
				}
			}
		})
	}
}

func TestFuseObserveUntimed(t *testing.T) {
	op := Fuse("readdir")
	reqs := sample(t, "sqlfs_fuse_requests_total", "op", "readdir")
	timed := sample(t, "sqlfs_fuse_request_duration_seconds", "op", "readdir")
	op.Observe(time.Time{}, 0)
	if got := sample(t, "sqlfs_fuse_requests_total", "op", "readdir") - reqs; got != 1 {
		t.Errorf("requests moved by %v, want 1", got)
	}
	if got := sample(t, "sqlfs_fuse_request_duration_seconds", "op", "readdir") - timed; got != 0 {
		t.Errorf("an untimed request moved the duration histogram by %v", got)
	}
}

func TestStartSamples(t *testing.T) {
	const n = 80000
	timed := 0
	for range n {
		if !Start().IsZero() {
			timed++
		}
	}
	// Binomial(n, 1/8): mean 10000, standard deviation ~94; ±1000 is over 10 deviations.
	if want := n / timedOneIn; timed < want-1000 || timed > want+1000 {
		t.Errorf("Start timed %d of %d requests, want about %d", timed, n, want)
	}
}

func TestFuseSuccessCreatesNoErrorSeries(t *testing.T) {
	Fuse("statfs").Observe(time.Now(), 0)
	mfs, err := Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "sqlfs_fuse_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "op" && lp.GetValue() == "statfs" {
					t.Fatalf("error series for a successful op: %v", m)
				}
			}
		}
	}
}

func TestFuseReadWrite(t *testing.T) {
	tests := []struct {
		op      string
		record  func(int)
		counter string
	}{
		{"read", FuseRead, "sqlfs_fuse_read_bytes_total"},
		{"write", FuseWrite, "sqlfs_fuse_write_bytes_total"},
	}
	for _, tc := range tests {
		t.Run(tc.op, func(t *testing.T) {
			bytesBefore := sample(t, tc.counter)
			cnt, sum := histSample(t, "sqlfs_fuse_request_size_bytes", "op", tc.op)
			tc.record(4096)
			tc.record(131072)
			tc.record(-1) // an error result is not a size
			if got := sample(t, tc.counter) - bytesBefore; got != 4096+131072 {
				t.Errorf("%s moved by %v, want %v", tc.counter, got, 4096+131072)
			}
			c, s := histSample(t, "sqlfs_fuse_request_size_bytes", "op", tc.op)
			if c-cnt != 2 || s-sum != 4096+131072 {
				t.Errorf("size histogram moved by count %v sum %v, want 2 and %v", c-cnt, s-sum, 4096+131072)
			}
		})
	}
}

func TestSetEnabled(t *testing.T) {
	op := Fuse("rename")
	reqs := sample(t, "sqlfs_fuse_requests_total", "op", "rename")
	readBytes := sample(t, "sqlfs_fuse_read_bytes_total")
	SetEnabled(false)
	t.Cleanup(func() { SetEnabled(true) })
	if Enabled() {
		t.Fatal("Enabled() after SetEnabled(false)")
	}
	if !Start().IsZero() {
		t.Error("Start() read the clock while disabled")
	}
	op.Observe(time.Now(), -2)
	FuseRead(100)
	if got := sample(t, "sqlfs_fuse_requests_total", "op", "rename"); got != reqs {
		t.Errorf("requests moved while disabled: %v -> %v", reqs, got)
	}
	if got := sample(t, "sqlfs_fuse_read_bytes_total"); got != readBytes {
		t.Errorf("read bytes moved while disabled: %v -> %v", readBytes, got)
	}
	SetEnabled(true)
	op.Observe(time.Now(), 0)
	if got := sample(t, "sqlfs_fuse_requests_total", "op", "rename") - reqs; got != 1 {
		t.Errorf("requests moved by %v after re-enabling, want 1", got)
	}
}

func TestCache(t *testing.T) {
	c := Cache("dentry")
	hits, misses := sample(t, "sqlfs_meta_cache_hits_total", "cache", "dentry"), sample(t, "sqlfs_meta_cache_misses_total", "cache", "dentry")
	c.Hits.Add(3)
	c.Misses.Inc()
	c.Entries.Set(42)
	if got := sample(t, "sqlfs_meta_cache_hits_total", "cache", "dentry") - hits; got != 3 {
		t.Errorf("hits moved by %v, want 3", got)
	}
	if got := sample(t, "sqlfs_meta_cache_misses_total", "cache", "dentry") - misses; got != 1 {
		t.Errorf("misses moved by %v, want 1", got)
	}
	if got := sample(t, "sqlfs_meta_cache_entries", "cache", "dentry"); got != 42 {
		t.Errorf("entries = %v, want 42", got)
	}
}

func TestExec(t *testing.T) {
	m := Exec("shell")
	if Exec("shell") != m {
		t.Fatal("Exec returned a different *ExecMetrics for the same backend")
	}
	okBefore := sample(t, "sqlfs_exec_total", "backend", "shell", "outcome", "ok")
	durCount, durSum := histSample(t, "sqlfs_exec_duration_seconds", "backend", "shell")
	outBefore := sample(t, "sqlfs_exec_output_bytes_total", "backend", "shell")
	truncBefore := sample(t, "sqlfs_exec_truncations_total", "backend", "shell")
	limitBefore := sample(t, "sqlfs_exec_limit_hits_total", "backend", "shell", "limit", "time")

	m.Running.Inc()
	if got := sample(t, "sqlfs_exec_running", "backend", "shell"); got != 1 {
		t.Errorf("running = %v during an execution, want 1", got)
	}
	m.OutputBytes(1000)
	m.OutputBytes(0)
	m.Truncated()
	m.LimitHit("time")
	m.Done("ok", 250*time.Millisecond)
	m.Running.Dec()

	durCountAfter, durSumAfter := histSample(t, "sqlfs_exec_duration_seconds", "backend", "shell")
	checks := []struct {
		name      string
		got, want float64
	}{
		{"exec_total{ok}", sample(t, "sqlfs_exec_total", "backend", "shell", "outcome", "ok") - okBefore, 1},
		{"output bytes", sample(t, "sqlfs_exec_output_bytes_total", "backend", "shell") - outBefore, 1000},
		{"truncations", sample(t, "sqlfs_exec_truncations_total", "backend", "shell") - truncBefore, 1},
		{"limit hits{time}", sample(t, "sqlfs_exec_limit_hits_total", "backend", "shell", "limit", "time") - limitBefore, 1},
		{"running after", sample(t, "sqlfs_exec_running", "backend", "shell"), 0},
		{"duration count", durCountAfter - durCount, 1},
		{"duration sum", durSumAfter - durSum, 0.25},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s moved by %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestBuildInfoReadsVersionAtCollect(t *testing.T) {
	old := Version
	Version = "v9.9.9-test"
	t.Cleanup(func() { Version = old })
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `sqlfs_build_info{goversion="go`) ||
		!strings.Contains(rec.Body.String(), `version="v9.9.9-test"} 1`) {
		t.Errorf("build info missing or stale in:\n%s", grepLines(rec.Body.String(), "sqlfs_build_info"))
	}
}

func grepLines(s, substr string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

func TestErrnoName(t *testing.T) {
	tests := []struct {
		errno int
		want  string
	}{
		{2, "ENOENT"}, {-2, "ENOENT"}, {39, "ENOTEMPTY"}, {122, "EDQUOT"}, {11, "EAGAIN"},
		{0, "errno_0"}, {159, "errno_159"}, {-1000, "errno_1000"},
	}
	for _, tc := range tests {
		if got := ErrnoName(tc.errno); got != tc.want {
			t.Errorf("ErrnoName(%d) = %q, want %q", tc.errno, got, tc.want)
		}
	}
}

func TestExpHistogramBuckets(t *testing.T) {
	tests := []struct {
		v      uint64
		bucket float64 // smallest upper bound holding v; 0 for +Inf
	}{
		{0, 512}, {1, 512}, {512, 512}, {513, 1024}, {1024, 1024}, {1025, 2048},
		{4096, 4096}, {1 << 20, 1 << 20}, {1<<20 + 1, 0}, {1 << 40, 0},
	}
	for _, tc := range tests {
		h := newExpHistogram(sizeBase, sizeBuckets, 1)
		h.observe(tc.v)
		count, sum, buckets := h.snapshot()
		if count != 1 || sum != float64(tc.v) {
			t.Errorf("observe(%d): count %d sum %v, want 1 and %d", tc.v, count, sum, tc.v)
		}
		if len(buckets) != sizeBuckets {
			t.Fatalf("%d buckets, want %d", len(buckets), sizeBuckets)
		}
		for le, n := range buckets {
			want := uint64(0)
			if tc.bucket != 0 && le >= tc.bucket {
				want = 1
			}
			if n != want {
				t.Errorf("observe(%d): bucket le=%v holds %d, want %d", tc.v, le, n, want)
			}
		}
	}
}

func TestDurationBucketBounds(t *testing.T) {
	_, _, buckets := newExpHistogram(durationBase, durationBuckets, 1e9).snapshot()
	for _, le := range []float64{5e-6, 1e-5, 2e-5, 0.00256, 2.62144} {
		if _, ok := buckets[le]; !ok {
			t.Errorf("no bucket le=%v", le)
		}
	}
}

// touchAll gives every vector a child, so the exposition holds every metric family.
func touchAll() {
	Fuse("getattr").Observe(time.Now(), -2)
	FuseRead(1)
	FuseWrite(1)
	c := Cache("inode")
	c.Hits.Inc()
	c.Misses.Inc()
	e := Exec("container")
	e.Done("error", time.Second)
	e.OutputBytes(1)
	e.Truncated()
	e.LimitHit("memory")
	ContainerStarts.WithLabelValues("cold").Inc()
	PolicyRefusals.WithLabelValues("readonly").Inc()
	StoreCommitOps.Observe(3)
	StoreCommitDuration.Observe(0.001)
	StoreCheckpointDuration.Observe(0.01)
}

func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool", "prometheus")
	touchAll()
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, family := range []string{
		"sqlfs_build_info", "sqlfs_fuse_requests_total", "sqlfs_fuse_errors_total",
		"sqlfs_fuse_request_duration_seconds", "sqlfs_fuse_read_bytes_total", "sqlfs_fuse_write_bytes_total",
		"sqlfs_fuse_request_size_bytes", "sqlfs_fuse_open_handles", "sqlfs_fs_inodes", "sqlfs_fs_used_bytes",
		"sqlfs_meta_cache_hits_total", "sqlfs_meta_cache_misses_total", "sqlfs_meta_cache_entries",
		"sqlfs_store_commits_total", "sqlfs_store_commit_duration_seconds", "sqlfs_store_commit_ops",
		"sqlfs_store_sync_commits_total", "sqlfs_store_busy_retries_total", "sqlfs_store_wal_bytes",
		"sqlfs_store_file_bytes", "sqlfs_store_checkpoint_duration_seconds", "sqlfs_exec_total",
		"sqlfs_exec_duration_seconds", "sqlfs_exec_output_bytes_total", "sqlfs_exec_truncations_total",
		"sqlfs_exec_limit_hits_total", "sqlfs_exec_running", "sqlfs_container_starts_total",
		"sqlfs_audit_events_total", "sqlfs_policy_refusals_total",
		"go_goroutines", "process_cpu_seconds_total",
	} {
		if !strings.Contains(body, "\n# TYPE "+family+" ") {
			t.Errorf("family %s missing from /metrics", family)
		}
	}
	cmd := exec.CommandContext(t.Context(), promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out.String())
	}
	if s := strings.TrimSpace(out.String()); s != "" {
		t.Errorf("promtool check metrics reported:\n%s", s)
	}
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestServe(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, addr) }()
	returned := false
	t.Cleanup(func() {
		cancel()
		if !returned {
			<-done
		}
	})

	var body []byte
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /metrics: %s", resp.Status)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics server never answered: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !bytes.Contains(body, []byte("sqlfs_build_info")) {
		t.Error("served /metrics lacks sqlfs_build_info")
	}
	// /healthz is what a liveness probe asks (Kubernetes, deploy/sqlfs).
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	health, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(health) != "ok\n" {
		t.Errorf("GET /healthz: %s %q, want 200 \"ok\\n\"", resp.Status, health)
	}

	// A second server on the same address must fail to listen rather than block.
	if err := Serve(t.Context(), addr); err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("Serve on a busy address: %v, want a listen error", err)
	}

	cancel()
	select {
	case err := <-done:
		returned = true
		if err != nil {
			t.Errorf("Serve after cancel: %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context was cancelled")
	}
	if _, err := http.Get("http://" + addr + "/metrics"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("GET after Serve returned: %v, want ECONNREFUSED", err)
	}
}

// BenchmarkFuseRequest is what the adapter pays per request: Start, then Observe.
func BenchmarkFuseRequest(b *testing.B) {
	op := Fuse("bench_getattr")
	for b.Loop() {
		op.Observe(Start(), 0)
	}
}

func BenchmarkFuseRequestParallel(b *testing.B) {
	op := Fuse("bench_getattr")
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			op.Observe(Start(), 0)
		}
	})
}

// BenchmarkFuseObserve times every request, as a caller passing time.Now() does.
func BenchmarkFuseObserve(b *testing.B) {
	op := Fuse("bench_getattr")
	start := time.Now()
	for b.Loop() {
		op.Observe(start, 0)
	}
}

func BenchmarkFuseObserveError(b *testing.B) {
	op := Fuse("bench_lookup")
	start := time.Now()
	for b.Loop() {
		op.Observe(start, -2)
	}
}

func BenchmarkFuseObserveDisabled(b *testing.B) {
	op := Fuse("bench_getattr")
	SetEnabled(false)
	b.Cleanup(func() { SetEnabled(true) })
	start := time.Now()
	for b.Loop() {
		op.Observe(start, 0)
	}
}

func BenchmarkFuseWrite(b *testing.B) {
	for b.Loop() {
		FuseWrite(131072)
	}
}
