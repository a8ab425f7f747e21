package harness

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Metric is one row of a report: a measurement repeated on several targets.
type Metric struct {
	Name string `json:"name"`
	// Unit is "s" for durations (lower is better) or a rate such as "MiB/s" or "IOPS".
	Unit string `json:"unit"`
	// Ops is how many operations one run performs (files created, names stat'ed, …).
	Ops  int                `json:"ops,omitempty"`
	Runs map[Kind][]float64 `json:"runs"`
}

// IsRate reports whether higher values are better.
func (m *Metric) IsRate() bool { return m.Unit != "s" }

// Median of the runs on k, NaN without runs.
func (m *Metric) Median(k Kind) float64 { return Median(m.Runs[k]) }

// Ratio is subject time / baseline time: for rates, baseline rate / subject rate.
// Lower is better; 1.0 means as fast as the baseline.
func (m *Metric) Ratio(subject, baseline Kind) float64 {
	s, b := m.Median(subject), m.Median(baseline)
	if m.IsRate() {
		return b / s
	}
	return s / b
}

// Median of xs (the mean of the middle two for even counts), NaN when empty.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Results collects metrics in the order they were first recorded.
type Results struct {
	Subject  Kind   // the target being judged (sqlfs)
	Baseline Kind   // what ratios divide by (native)
	Kinds    []Kind // every target, in column order
	metrics  []*Metric
	// counters holds, per metric name, the subject's counter deltas of each run.
	counters map[string][]map[string]float64
}

// NewResults starts a report comparing subject with baseline, plus optional bounds.
func NewResults(subject, baseline Kind, bounds ...Kind) *Results {
	return &Results{Subject: subject, Baseline: baseline, Kinds: append([]Kind{subject, baseline}, bounds...),
		counters: map[string][]map[string]float64{}}
}

// Add records one run of metric name on target k.
func (r *Results) Add(name, unit string, ops int, k Kind, v float64) {
	i := slices.IndexFunc(r.metrics, func(m *Metric) bool { return m.Name == name })
	if i < 0 {
		r.metrics = append(r.metrics, &Metric{Name: name, Unit: unit, Ops: ops, Runs: map[Kind][]float64{}})
		i = len(r.metrics) - 1
	}
	r.metrics[i].Runs[k] = append(r.metrics[i].Runs[k], v)
}

// AddCounters records the subject's counter deltas (see Target.Counters) over one
// run of metric name.
func (r *Results) AddCounters(name string, delta map[string]float64) {
	r.counters[name] = append(r.counters[name], delta)
}

// CounterMedians is, per series, the median delta over the runs of metric name; a
// series missing from a run counts as 0 there.
func (r *Results) CounterMedians(name string) map[string]float64 {
	runs := r.counters[name]
	series := map[string]bool{}
	for _, run := range runs {
		for k := range run {
			series[k] = true
		}
	}
	out := map[string]float64{}
	for k := range series {
		vs := make([]float64, len(runs))
		for i, run := range runs {
			vs[i] = run[k]
		}
		out[k] = Median(vs)
	}
	return out
}

// WriteCounters prints the subject's requests per operation of each row (per run for
// rows without an operation count), busiest request types first.
func (r *Results) WriteCounters(w io.Writer) error {
	if len(r.counters) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "name\t%s FUSE requests per op (per run without ops), then commits and the server's CPU\n", r.Subject)
	for _, m := range r.metrics {
		if len(r.counters[m.Name]) == 0 {
			continue
		}
		med := r.CounterMedians(m.Name)
		div := 1.0
		if m.Ops > 0 {
			div = float64(m.Ops)
		}
		type part struct {
			name string
			v    float64
		}
		var reqs, commits []part
		total := 0.0
		for k, v := range med {
			if k == serverCPU {
				continue
			}
			name, kind := seriesName(k)
			switch kind {
			case requestSeries:
				reqs = append(reqs, part{name, v / div})
				total += v / div
			case otherSeries:
				commits = append(commits, part{name, v})
			}
		}
		byValue := func(a, b part) int {
			if a.v != b.v {
				return cmp.Compare(b.v, a.v)
			}
			return strings.Compare(a.name, b.name)
		}
		slices.SortFunc(reqs, byValue)
		slices.SortFunc(commits, byValue)
		var b strings.Builder
		fmt.Fprintf(&b, "%s total", num(total))
		for _, p := range reqs {
			fmt.Fprintf(&b, ", %s %s", p.name, num(p.v))
		}
		for _, p := range commits {
			fmt.Fprintf(&b, "; %s %s", p.name, num(p.v))
		}
		if cpu := med[serverCPU]; cpu > 0 {
			fmt.Fprintf(&b, "; server CPU %s µs/op", num(cpu*1e6/div))
		}
		if busy := Median(handlerSeconds(r.counters[m.Name])); busy > 0 && total > 0 {
			fmt.Fprintf(&b, "; handlers %s µs/request", num(busy*1e6/(total*div)))
			if t := m.Median(r.Subject); !m.IsRate() && t > 0 {
				fmt.Fprintf(&b, " (%.0f%% of the time)", 100*busy/t)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\n", m.Name, b.String())
	}
	return tw.Flush()
}

// The kinds of series a counter key names.
const (
	requestSeries  = iota // requests of one op
	durationSeries        // sum or count of one op's sampled durations
	otherSeries           // commits
)

// seriesName shortens a series key: the op label of a request counter or of a
// duration series, or the metric name without its prefix and suffix.
func seriesName(key string) (name string, kind int) {
	for _, c := range []struct {
		prefix string
		kind   int
	}{
		{"sqlfs_fuse_requests_total", requestSeries},
		{durationSum, durationSeries},
		{durationCount, durationSeries},
	} {
		if rest, ok := strings.CutPrefix(key, c.prefix+"{op=\""); ok {
			return strings.TrimSuffix(rest, "\"}"), c.kind
		}
	}
	return strings.TrimSuffix(strings.TrimPrefix(key, "sqlfs_store_"), "_total"), otherSeries
}

// handlerSeconds is, per run, the time the mount's handlers spent on the run's
// requests: each op's requests times the mean of its sampled durations. Ops
// with no request timed in a run count nothing; a run without any timed
// request is left out. With requests served in parallel the sum can exceed
// the run's time.
func handlerSeconds(runs []map[string]float64) []float64 {
	var out []float64
	for _, run := range runs {
		busy, timed := 0.0, false
		for k, n := range run {
			op, kind := seriesName(k)
			if kind != requestSeries {
				continue
			}
			sum, count := run[durationSum+`{op="`+op+`"}`], run[durationCount+`{op="`+op+`"}`]
			if count > 0 {
				busy += n * sum / count
				timed = true
			}
		}
		if timed {
			out = append(out, busy)
		}
	}
	return out
}

// Metrics returns the recorded rows.
func (r *Results) Metrics() []*Metric { return r.metrics }

// WriteTable prints one row per metric: medians per target and the ratio. Durations
// are in milliseconds, with the cost per operation in microseconds when rows count
// operations.
func (r *Results) WriteTable(w io.Writer) error {
	perOp := slices.ContainsFunc(r.metrics, func(m *Metric) bool { return m.Ops > 0 })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "name\t")
	if perOp {
		fmt.Fprint(tw, "ops\t")
	}
	fmt.Fprint(tw, "unit\t")
	for _, k := range r.Kinds {
		fmt.Fprintf(tw, "%s\t", k)
	}
	if perOp {
		fmt.Fprintf(tw, "%s µs/op\t%s µs/op\t", r.Subject, r.Baseline)
	}
	fmt.Fprintf(tw, "ratio %s/%s\t\n", r.Subject, r.Baseline)
	for _, m := range r.metrics {
		unit := m.Unit
		if !m.IsRate() {
			unit = "ms"
		}
		fmt.Fprintf(tw, "%s\t", m.Name)
		if perOp {
			fmt.Fprintf(tw, "%d\t", m.Ops)
		}
		fmt.Fprintf(tw, "%s\t", unit)
		for _, k := range r.Kinds {
			v := m.Median(k)
			if !m.IsRate() {
				v *= 1e3
			}
			fmt.Fprintf(tw, "%s\t", num(v))
		}
		if perOp {
			for _, k := range []Kind{r.Subject, r.Baseline} {
				if m.IsRate() || m.Ops == 0 {
					fmt.Fprint(tw, "-\t")
					continue
				}
				fmt.Fprintf(tw, "%s\t", num(m.Median(k)*1e6/float64(m.Ops)))
			}
		}
		fmt.Fprintf(tw, "%.2f\t\n", m.Ratio(r.Subject, r.Baseline))
	}
	return tw.Flush()
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v != 0 && math.Abs(v) < 0.01:
		return fmt.Sprintf("%.2g", v) // per-op request counts of rare requests
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// JSONMetric is a Metric with its medians and ratio, for -json output.
type JSONMetric struct {
	Metric
	Medians map[Kind]float64 `json:"medians"`
	Ratio   float64          `json:"ratio"`
	// Counters are the subject's median counter deltas per run (FUSE requests by
	// op, commits), when its metrics were scraped.
	Counters map[string]float64 `json:"subject_counters,omitempty"`
}

// JSON returns the rows with medians and ratios filled in. Targets without runs are
// left out, so the result always encodes (encoding/json rejects NaN).
func (r *Results) JSON() []JSONMetric {
	out := make([]JSONMetric, 0, len(r.metrics))
	for _, m := range r.metrics {
		jm := JSONMetric{Metric: *m, Medians: map[Kind]float64{}}
		if len(r.counters[m.Name]) > 0 {
			jm.Counters = r.CounterMedians(m.Name)
		}
		for k := range m.Runs {
			jm.Medians[k] = m.Median(k)
		}
		if ratio := m.Ratio(r.Subject, r.Baseline); !math.IsNaN(ratio) && !math.IsInf(ratio, 0) {
			jm.Ratio = ratio
		}
		out = append(out, jm)
	}
	return out
}
