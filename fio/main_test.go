package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/sqlfs/sqlfs/bench/harness"
	"github.com/sqlfs/sqlfs/bench/harness/harnesstest"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

func TestParseFio(t *testing.T) {
	const out = `{"jobs":[{"read":{"io_bytes":4096,"bw_bytes":2097152,"iops":512.5},` +
		`"write":{"io_bytes":0,"bw_bytes":0,"iops":0}}]}`
	for _, tc := range []struct {
		name    string
		in      string
		j       job
		want    float64
		wantErr bool
	}{
		{"read MiB/s", out, job{dir: "read", unit: "MiB/s"}, 2, false},
		{"read IOPS", out, job{dir: "read", unit: "IOPS"}, 512.5, false},
		{"after warnings", "fio: note: both iodepth and ...\n" + out, job{dir: "read", unit: "IOPS"}, 512.5, false},
		{"nothing written", out, job{dir: "write", unit: "MiB/s"}, 0, true},
		{"no jobs", `{"jobs":[]}`, job{dir: "read", unit: "IOPS"}, 0, true},
		{"not json", "fio: failed", job{dir: "read", unit: "IOPS"}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFio([]byte(tc.in), tc.j)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseFio = %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestSmoke runs every job at tiny sizes on sqlfs and native and checks that each
// one produced a rate on both and a ratio, and that nothing is left behind. (The bench
// smoke test covers the shared harness on tmpfs as well.)
func TestSmoke(t *testing.T) {
	work := harnesstest.WorkDir(t)
	testenv.LookPath(t, "fio", "fio")
	c := config{Size: "8m", RandSize: "1m", Runtime: 10}
	c.Subject, c.Rounds, c.WorkDir, c.BuildTags, c.JSON, c.Requests = harness.Sqlfs, 1, work, "fuse3", true, true
	var out bytes.Buffer
	if err := run(context.Background(), c, &out); err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.Bytes())
	}
	if len(rep.Jobs) != len(jobs) {
		t.Fatalf("%d results, want %d", len(rep.Jobs), len(jobs))
	}
	for i, r := range rep.Jobs {
		if r.Name != jobs[i].name || r.Unit != jobs[i].unit {
			t.Errorf("result %d is %q in %s, want %q in %s", i, r.Name, r.Unit, jobs[i].name, jobs[i].unit)
		}
		if r.Medians[harness.Sqlfs] <= 0 || r.Medians[harness.Native] <= 0 || r.Ratio <= 0 {
			t.Errorf("%q: medians %v, ratio %v", r.Name, r.Medians, r.Ratio)
		}
	}
	// The writes must have reached sqlfs as FUSE requests: the counters are scraped.
	if w := rep.Jobs[0].Counters[`sqlfs_fuse_requests_total{op="write"}`]; w < 8 {
		t.Errorf("seq write of 8 MiB counted %v FUSE write requests, want at least 8", w)
	}
	if left, _ := os.ReadDir(work); len(left) != 0 {
		t.Errorf("left behind in the work dir: %v", left)
	}
}
