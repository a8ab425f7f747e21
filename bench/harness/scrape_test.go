package harness

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestScrapeAndCounters(t *testing.T) {
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	scrape := func(b string) map[string]float64 {
		body = b
		m, err := Scrape(context.Background(), addr, counterPrefixes...)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	before := scrape(`# HELP sqlfs_fuse_requests_total FUSE requests handled, by operation.
# TYPE sqlfs_fuse_requests_total counter
sqlfs_fuse_requests_total{op="create"} 5
sqlfs_fuse_requests_total{op="getattr"} 7
sqlfs_fs_inodes 3
sqlfs_store_commits_total 2
`)
	if len(before) != 3 || before[`sqlfs_fuse_requests_total{op="getattr"}`] != 7 {
		t.Fatalf("scraped %v", before)
	}
	after := scrape(`sqlfs_fuse_requests_total{op="create"} 25
sqlfs_fuse_requests_total{op="getattr"} 7
sqlfs_fuse_requests_total{op="write"} 30
sqlfs_store_commits_total 3
sqlfs_store_sync_commits_total 1e+00
`)
	d := Delta(before, after)
	want := map[string]float64{`sqlfs_fuse_requests_total{op="create"}`: 20, `sqlfs_fuse_requests_total{op="write"}`: 30,
		"sqlfs_store_commits_total": 1, "sqlfs_store_sync_commits_total": 1}
	if fmt.Sprint(d) != fmt.Sprint(want) {
		t.Errorf("delta %v, want %v", d, want)
	}

	r := NewResults(Sqlfs, Native)
	r.Add("create", "s", 10, Sqlfs, 1)
	r.AddCounters("create", d)
	// A series missing from a run counts as zero: median of {30, 0, 10} is 10.
	r.AddCounters("create", map[string]float64{`sqlfs_fuse_requests_total{op="create"}`: 20})
	r.AddCounters("create", map[string]float64{`sqlfs_fuse_requests_total{op="create"}`: 20, `sqlfs_fuse_requests_total{op="write"}`: 10})
	var b strings.Builder
	if err := r.WriteCounters(&b); err != nil {
		t.Fatal(err)
	}
	// Per op (10 ops): create 2, write 1, total 3; commits are per run.
	if line := strings.Split(b.String(), "\n")[1]; !strings.Contains(line, "3.00 total, create 2.00, write 1.00; commits 0.00; sync_commits 0.00") {
		t.Errorf("counter line %q", line)
	}
}

// The handlers' time of a phase: each op's requests times the mean of its
// sampled durations, per request and as a share of the phase's time; the
// duration series are not printed as counters of their own.
func TestWriteCountersHandlers(t *testing.T) {
	r := NewResults(Sqlfs, Native)
	r.Add("stat", "s", 1000, Sqlfs, 0.5)
	for _, mean := range []float64{10e-6, 20e-6, 90e-6} { // median run: 20 µs
		r.AddCounters("stat", map[string]float64{
			`sqlfs_fuse_requests_total{op="getattr"}`:                 1000,
			`sqlfs_fuse_requests_total{op="lookup"}`:                  1000,
			`sqlfs_fuse_request_duration_seconds_sum{op="getattr"}`:   125 * mean,
			`sqlfs_fuse_request_duration_seconds_count{op="getattr"}`: 125,
			`sqlfs_fuse_request_duration_seconds_sum{op="lookup"}`:    125 * mean,
			`sqlfs_fuse_request_duration_seconds_count{op="lookup"}`:  125,
			"sqlfs_store_commits_total":                               2,
		})
	}
	var b strings.Builder
	if err := r.WriteCounters(&b); err != nil {
		t.Fatal(err)
	}
	// 2000 requests of 20 µs: 40 ms of the phase's 500.
	want := "2.00 total, getattr 1.00, lookup 1.00; commits 2.00; handlers 20.0 µs/request (8% of the time)"
	if line := strings.Split(b.String(), "\n")[1]; !strings.HasSuffix(line, want) {
		t.Errorf("counter line %q, want it to end in %q", line, want)
	}
}
