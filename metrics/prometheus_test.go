package metrics

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// These tests run a real Prometheus server (Debian package "prometheus") against sqlfs targets.
// They skip under -short and when a tool is missing.

const (
	scrapeInterval = 250 * time.Millisecond
	// waitTimeout bounds every wait for a process, a scrape or a counter to
	// reach its value, on a quiet machine (testenv.Slack stretches it).
	waitTimeout = 30 * time.Second
)

// prometheusServer is a running Prometheus scraping one target as job "sqlfs".
type prometheusServer struct{ base string }

// startPrometheus starts Prometheus on a free loopback port with a temp data dir, scraping
// target (HOST:PORT) every scrapeInterval, and stops it in t.Cleanup.
func startPrometheus(t *testing.T, target string) *prometheusServer {
	t.Helper()
	bin := testenv.LookPath(t, "prometheus", "prometheus")
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
scrape_configs:
  - job_name: sqlfs
    static_configs:
      - targets: [%[2]q]
`, scrapeInterval, target)
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := startProcess(t, "prometheus", bin,
		"--config.file="+configPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	p := &prometheusServer{base: "http://" + addr}
	waitFor(t, cmd, "prometheus ready", func() error {
		resp, err := http.Get(p.base + "/-/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /-/ready: %s", resp.Status)
		}
		return nil
	})
	waitFor(t, cmd, "first successful scrape of "+target, func() error {
		up, err := p.query(t.Context(), `up{job="sqlfs"}`)
		if err != nil {
			return err
		}
		if up != 1 {
			return fmt.Errorf("up = %v", up)
		}
		return nil
	})
	return p
}

// query runs an instant PromQL query whose result is one sample, or none (read as 0).
func (p *prometheusServer) query(ctx context.Context, q string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/api/v1/query?query="+url.QueryEscape(q), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("query %s: %w", q, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, fmt.Errorf("query %s: decode: %w", q, err)
	}
	if body.Status != "success" {
		return 0, fmt.Errorf("query %s: %s", q, body.Error)
	}
	switch len(body.Data.Result) {
	case 0:
		return 0, nil
	case 1:
		s, ok := body.Data.Result[0].Value[1].(string)
		if !ok {
			return 0, fmt.Errorf("query %s: value %v is not a string", q, body.Data.Result[0].Value)
		}
		return strconv.ParseFloat(s, 64)
	default:
		return 0, fmt.Errorf("query %s: %d series, want one (aggregate with sum)", q, len(body.Data.Result))
	}
}

// counterCheck is one PromQL expression and how much it must move between baseline and end.
type counterCheck struct {
	query string
	want  float64
	exact bool // otherwise at least want
}

// baselines reads every check's value before the workload.
func (p *prometheusServer) baselines(t *testing.T, checks []counterCheck) []float64 {
	t.Helper()
	base := make([]float64, len(checks))
	for i, c := range checks {
		v, err := p.query(t.Context(), c.query)
		if err != nil {
			t.Fatal(err)
		}
		base[i] = v
	}
	return base
}

// expectMoves waits until every check has moved by its amount, then fails the checks that
// overshot an exact amount or never got there.
func (p *prometheusServer) expectMoves(t *testing.T, checks []counterCheck, base []float64) {
	t.Helper()
	deadline := time.Now().Add(testenv.Slack(waitTimeout))
	for i, c := range checks {
		var moved float64
		for {
			v, err := p.query(t.Context(), c.query)
			if err != nil {
				t.Fatal(err)
			}
			moved = v - base[i]
			if moved >= c.want || time.Now().After(deadline) {
				break
			}
			time.Sleep(scrapeInterval / 2)
		}
		switch {
		case moved < c.want:
			t.Errorf("%s moved by %v, want %v", c.query, moved, c.want)
		case c.exact && moved != c.want:
			t.Errorf("%s moved by %v, want exactly %v", c.query, moved, c.want)
		default:
			t.Logf("%s moved by %v", c.query, moved)
		}
	}
}

// TestPrometheusScrapesServe has a real Prometheus scrape this process's Serve: the exposition
// (including the hand-built FUSE histograms) must ingest and round-trip exact values.
func TestPrometheusScrapesServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Prometheus server; skipped with -short")
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, addr) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	p := startPrometheus(t, addr)

	checks := []counterCheck{
		{`sum(sqlfs_fuse_requests_total{op="promtest_create"})`, 7, true},
		{`sum(sqlfs_fuse_request_duration_seconds_bucket{op="promtest_create",le="+Inf"})`, 7, true},
		{`sum(sqlfs_fuse_errors_total{op="promtest_create",errno="EEXIST"})`, 2, true},
		{`sum(sqlfs_fuse_write_bytes_total)`, 7 * 4096, true},
		{`sum(sqlfs_store_commit_ops_sum)`, 42, true},
	}
	base := p.baselines(t, checks)
	op := Fuse("promtest_create")
	for i := range 7 {
		errno := 0
		if i < 2 {
			errno = -int(syscall.EEXIST)
		}
		op.Observe(time.Now(), errno)
		FuseWrite(4096)
	}
	StoreCommitOps.Observe(42)
	p.expectMoves(t, checks, base)
}

// TestPrometheusScrapesMount builds and runs sqlfs-mount with --metrics-addr on a temp store,
// has a real Prometheus scrape it, does file operations through the mount and checks through
// Prometheus's HTTP API that the counters moved by the right amounts.
func TestPrometheusScrapesMount(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sqlfs-mount, mounts FUSE and starts Prometheus; skipped with -short")
	}
	_, err := os.Stat("/dev/fuse")
	testenv.Require(t, "this test mounts FUSE", err)
	testenv.LookPath(t, "prometheus", "prometheus")
	bin := buildMount(t)
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	// Registered before the process starts, so it runs after the process was stopped.
	t.Cleanup(func() { unmountIfMounted(t, mnt) })
	metricsAddr := freeAddr(t)
	mount := startProcess(t, "sqlfs-mount", bin, "--metrics-addr", metricsAddr, filepath.Join(dir, "work.db"), mnt)
	waitFor(t, mount, "mount at "+mnt, func() error {
		mounted, err := isMountpoint(mnt)
		if err != nil || mounted {
			return err
		}
		return errors.New("not mounted yet")
	})
	p := startPrometheus(t, metricsAddr)

	const (
		files    = 200
		fileSize = 64 << 10
		dirs     = 20
		missing  = 50
	)
	checks := []counterCheck{
		{`sum(sqlfs_fuse_requests_total{op="create"})`, files, true},
		// Durations are sampled (metrics.Start): some of the ~2000 requests must be timed.
		{`sum(sqlfs_fuse_request_duration_seconds_count)`, 1, false},
		{`sum(sqlfs_fuse_requests_total{op="mkdir"})`, dirs, true},
		{`sum(sqlfs_fuse_requests_total{op="write"})`, files, false},
		{`sum(sqlfs_fuse_request_size_bytes_count{op="write"})`, files, false},
		{`sum(sqlfs_fuse_write_bytes_total)`, files*fileSize + 1, true}, // + the appended byte
		{`sum(sqlfs_fuse_read_bytes_total)`, files * fileSize, false},
		{`sum(sqlfs_fuse_request_size_bytes_count{op="read"})`, files, false},
		{`sum(sqlfs_fuse_errors_total{errno="ENOENT"})`, missing, false},
		{`sum(sqlfs_store_commits_total)`, 1, false},
		{`sum(sqlfs_store_sync_commits_total)`, 1, false},
	}
	base := p.baselines(t, checks)

	payload := []byte(strings.Repeat("sqlfs-metrics!\n", fileSize/15+1)[:fileSize])
	for i := range dirs {
		if err := os.Mkdir(filepath.Join(mnt, fmt.Sprintf("d%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range files {
		name := filepath.Join(mnt, fmt.Sprintf("d%02d", i%dirs), fmt.Sprintf("f%03d", i))
		if err := os.WriteFile(name, payload, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// O_DIRECT, so reads reach the filesystem instead of the page cache the writes filled.
	buf, err := syscall.Mmap(-1, 0, fileSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(buf) })
	for i := range files {
		readDirect(t, filepath.Join(mnt, fmt.Sprintf("d%02d", i%dirs), fmt.Sprintf("f%03d", i)), buf, payload)
	}
	for i := range missing {
		if _, err := os.Stat(filepath.Join(mnt, fmt.Sprintf("missing-%03d", i))); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("stat of a missing name: %v, want ErrNotExist", err)
		}
	}
	// An fsync after a change must force a durable commit.
	f, err := os.OpenFile(filepath.Join(mnt, "d00", "f000"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{'\n'}); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	p.expectMoves(t, checks, base)

	// Usage gauges are absolute (root plus what was made here) and may be refreshed periodically.
	gauges := []counterCheck{
		{`sum(sqlfs_fs_inodes)`, 1 + dirs + files, false},
		{`sum(sqlfs_fs_used_bytes)`, files * fileSize, false},
	}
	p.expectMoves(t, gauges, make([]float64, len(gauges)))
}

// readDirect reads path with O_DIRECT into the page-aligned buf and checks it holds want.
func readDirect(t *testing.T, path string, buf, want []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := io.ReadFull(f, buf[:len(want)])
	if err != nil {
		t.Fatalf("read %s: %v after %d bytes", path, err, n)
	}
	if !bytes.Equal(buf[:n], want) {
		t.Fatalf("read %s: content differs from what was written", path)
	}
}

// buildMount builds ./cmd/sqlfs-mount, with libfuse3 if that builds, into a temp dir.
func buildMount(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	testenv.Require(t, "building sqlfs-mount needs the go tool in PATH", err)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "sqlfs-mount")); err != nil {
		t.Skipf("cmd/sqlfs-mount not present: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "sqlfs-mount")
	var outputs []string
	for _, tags := range [][]string{{"-tags", "fuse3"}, nil} {
		args := append(append([]string{"build"}, tags...), "-o", bin, "./cmd/sqlfs-mount")
		cmd := exec.CommandContext(t.Context(), goBin, args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Logf("built sqlfs-mount with go %s", strings.Join(args, " "))
			return bin
		}
		outputs = append(outputs, fmt.Sprintf("go %s: %v\n%s", strings.Join(args, " "), err, out))
	}
	t.Fatalf("cannot build sqlfs-mount:\n%s", strings.Join(outputs, "\n"))
	return ""
}

// startProcess starts a long-running process with its output in a log file. t's context ends it
// with SIGTERM (SIGKILL after 10 s), and t.Cleanup waits for it and prints the log on failure.
func startProcess(t *testing.T, name, bin string, args ...string) *exec.Cmd {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		// t.Context() is already cancelled here, so Wait follows the SIGTERM.
		err := cmd.Wait()
		logFile.Close()
		if t.Failed() || (err != nil && !errors.Is(err, context.Canceled) && !isSignalExit(err)) {
			log, _ := os.ReadFile(logPath)
			t.Logf("%s exited: %v; log:\n%s", name, err, log)
		}
	})
	return cmd
}

// isSignalExit reports whether err is the exit of a process killed by SIGTERM, which is how
// the tests stop processes that do not exit 0 on it.
func isSignalExit(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM
}

// waitFor polls ready until it succeeds, failing the test if cmd exits or waitTimeout passes.
func waitFor(t *testing.T, cmd *exec.Cmd, what string, ready func() error) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(testenv.Slack(waitTimeout))
	for {
		err := ready()
		if err == nil {
			t.Logf("%s after %v", what, time.Since(start).Round(time.Millisecond))
			return
		}
		if exited(cmd) {
			t.Fatalf("waiting for %s: %s exited: %v", what, filepath.Base(cmd.Path), err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exited reports whether cmd's process is gone (a zombie counts), without reaping it.
func exited(cmd *exec.Cmd) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z'
}

// isMountpoint reports whether path is a mount point per /proc/self/mountinfo.
func isMountpoint(path string) (bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	defer f.Close()
	return mountinfoHas(f, path)
}

func mountinfoHas(r io.Reader, path string) (bool, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// Field 5 is the mount point; it is octal-escaped only if it holds white space or a
		// backslash, which the tests' temp dirs never do.
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && fields[4] == path {
			return true, nil
		}
	}
	return false, sc.Err()
}

// unmountIfMounted detaches a mount left behind by a process that did not unmount on SIGTERM.
func unmountIfMounted(t *testing.T, mnt string) {
	mounted, err := isMountpoint(mnt)
	if err != nil {
		t.Errorf("check mount %s: %v", mnt, err)
		return
	}
	if !mounted {
		return
	}
	t.Errorf("%s still mounted after sqlfs-mount stopped; detaching it", mnt)
	if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
		t.Errorf("unmount %s: %v", mnt, err)
	}
}
