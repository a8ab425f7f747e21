package harness

import (
	"math"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{2, 2, 9}, 2},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %v, want NaN", got)
	}
}

func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		name            string
		unit            string
		subject, native []float64
		want            float64
	}{
		// Durations: subject time over native time.
		{"slower", "s", []float64{2, 4, 3}, []float64{1, 1, 1}, 3},
		{"faster", "s", []float64{0.5}, []float64{2}, 0.25},
		// Rates: native rate over subject rate, which is still the time ratio.
		{"rate slower", "MiB/s", []float64{100}, []float64{400}, 4},
		{"rate faster", "IOPS", []float64{2000, 1000, 3000}, []float64{1000}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewResults(Sqlfs, Native)
			for _, v := range tc.subject {
				r.Add("x", tc.unit, 10, Sqlfs, v)
			}
			for _, v := range tc.native {
				r.Add("x", tc.unit, 10, Native, v)
			}
			if got := r.Metrics()[0].Ratio(Sqlfs, Native); got != tc.want {
				t.Errorf("ratio = %v, want %v", got, tc.want)
			}
			if got := r.JSON()[0].Ratio; got != tc.want {
				t.Errorf("JSON ratio = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWriteTable(t *testing.T) {
	r := NewResults(Sqlfs, Native, Tmpfs)
	r.Add("create", "s", 1000, Sqlfs, 0.020)
	r.Add("create", "s", 1000, Native, 0.010)
	r.Add("stat", "s", 1000, Sqlfs, 0.001)
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("table has %d lines, want 3:\n%s", len(lines), b.String())
	}
	for i, want := range [][]string{
		{"name", "ops", "unit", "sqlfs", "native", "tmpfs", "ratio"},
		// 20 ms for 1000 ops is 20 µs/op; the ratio is 2.
		{"create", "1000", "ms", "20.0", "10.0", "-", "20.0", "10.0", "2.00"},
		// A target without runs prints "-" and the ratio is NaN, not a crash.
		{"stat", "1.00", "-", "NaN"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
	if js := r.JSON(); js[1].Ratio != 0 || len(js[1].Medians) != 1 {
		t.Errorf("JSON row without native runs: %+v, want ratio 0 and one median", js[1])
	}
}

func TestProcMemory(t *testing.T) {
	rss, hwm, err := ProcMemory(1)
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || hwm < rss {
		t.Errorf("pid 1: rss %d, peak %d: want 0 < rss <= peak", rss, hwm)
	}
}

// The header names the CPUs and how they idle (what a FUSE round trip
// costs depends on it), and says so when sysfs tells nothing.
func TestWriteHeaderCPUs(t *testing.T) {
	o := &Options{WorkDir: "/tmp", Rounds: 3, Subject: Native}
	for _, c := range []struct {
		host map[string]string
		want string
	}{
		{map[string]string{"cpus": "2", "cpuidle": "driver haltpoll, governor haltpoll, guest_halt_poll_ns 0"},
			"2 CPUs, cpuidle: driver haltpoll, governor haltpoll, guest_halt_poll_ns 0\n"},
		{map[string]string{"cpus": "8"}, "8 CPUs, cpuidle: unknown\n"},
	} {
		var b strings.Builder
		o.WriteHeader(&b, c.host)
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("header for %v:\n%s\nwant a line %q", c.host, b.String(), c.want)
		}
	}
	if h := Host(t.TempDir()); h["cpus"] == "" || h["cpus"] == "0" {
		t.Errorf("Host: cpus %q", h["cpus"])
	}
}
