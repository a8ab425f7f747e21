//go:build integration

package integration

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/exectest"
	"github.com/sqlfs/sqlfs/internal/s3test"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar/api"
)

func TestMain(m *testing.M) {
	s3test.Isolate()
	os.Exit(exectest.Run(m))
}

// run runs sqlfs-exec with the S3 server's environment and returns its
// output, failing t unless it exits 0.
func run(t testing.TB, s3 *s3test.Server, args ...string) string {
	t.Helper()
	out, err := runErr(t, s3, args...)
	if err != nil {
		t.Fatalf("sqlfs-exec %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(t testing.TB, s3 *s3test.Server, args ...string) (string, error) {
	t.Helper()
	out, err := command(t, s3, args...).CombinedOutput()
	return string(out), err
}

// command is sqlfs-exec with args and the S3 server's environment, killed
// with the test.
func command(t testing.TB, s3 *s3test.Server, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), exectest.Binary(t), args...)
	cmd.Env = s3.Env(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// owner is a `sqlfs-exec serve --store` process replicating its store.
type owner struct {
	*exectest.Process
	metricsURL
	store string
}

// metricsURL is where a process serves /metrics, with the token it takes.
type metricsURL struct{ url, token string }

// startOwner serves store, replicated to url, with its metrics on a port
// of its own, and waits until its socket answers. It is stopped at
// cleanup (SIGTERM, SIGKILL after 60 s) if still running.
func startOwner(t testing.TB, s3 *s3test.Server, store, url string, extra ...string) *owner {
	t.Helper()
	addr := freeAddr(t)
	o := &owner{store: store, metricsURL: metricsURL{url: "http://" + addr + "/metrics"}}
	args := append([]string{"serve", "--store", store, "--replica", url, "--metrics-addr", addr}, extra...)
	cmd := exec.Command(exectest.Binary(t), args...)
	cmd.Env = s3.Env(os.Environ())
	o.Process = exectest.StartOwner(t, store, cmd)
	return o
}

func (o *owner) client(t testing.TB) *api.Client {
	t.Helper()
	c, err := api.Dial(t.Context(), api.SocketPath(o.store), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// scrape reads /metrics: every sample by its name with labels.
func (o metricsURL) scrape(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.url, nil)
	if err != nil {
		return nil, err
	}
	if o.token != "" {
		req.Header.Set("Authorization", "Bearer "+o.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

func (o metricsURL) metric(t testing.TB, name string) float64 {
	t.Helper()
	m, err := o.scrape(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	v, ok := m[name]
	if !ok {
		t.Fatalf("%s exports no %s", o.url, name)
	}
	return v
}

const (
	lagHistogram = "sqlfs_replica_lag_seconds"
	syncAge      = "sqlfs_replica_last_sync_age_seconds"
)

// histogram is a Prometheus histogram's cumulative bucket counts by upper
// bound.
type histogram map[float64]float64

func histogramOf(m map[string]float64, name string) histogram {
	h := histogram{}
	prefix := name + `_bucket{le="`
	for k, v := range m {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		le := strings.TrimSuffix(strings.TrimPrefix(k, prefix), `"}`)
		bound := math.Inf(1)
		if le != "+Inf" {
			var err error
			if bound, err = strconv.ParseFloat(le, 64); err != nil {
				continue
			}
		}
		h[bound] = v
	}
	return h
}

// since is h minus an earlier reading of the same histogram.
func (h histogram) since(before histogram) histogram {
	out := histogram{}
	for b, v := range h {
		out[b] = v - before[b]
	}
	return out
}

// quantile is the upper bound of the bucket holding quantile q (an upper
// bound of the true value, as the lag sampler's figures are), and the
// count.
func (h histogram) quantile(q float64) (float64, float64) {
	bounds := make([]float64, 0, len(h))
	for b := range h {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 {
		return math.NaN(), 0
	}
	total := h[bounds[len(bounds)-1]]
	for _, b := range bounds {
		if h[b] >= q*total {
			return b, total
		}
	}
	return math.Inf(1), total
}

// waitSynced waits until the process's replica holds everything committed
// at least up to since: its last full sync is newer than that.
func (o metricsURL) waitSynced(t testing.TB, since time.Time, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var last float64
	for deadline := start.Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		asked := time.Now()
		m, err := o.scrape(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		last = m[syncAge]
		if asked.Add(-time.Duration(last * float64(time.Second))).After(since) {
			return time.Since(start)
		}
	}
	t.Fatalf("the replica did not catch up with %v within %v (last sync %.1f s ago)", since.Format(time.StampMilli), timeout, last)
	return 0
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// loadAverage is the 1-minute load, for the reports.
func loadAverage() string { return fmt.Sprintf("%.2f", testenv.LoadAverage()) }
