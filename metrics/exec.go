package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Exec metrics, by backend (shell, container, …). Outcomes and limits are small fixed sets chosen
// by the sidecar (e.g. outcome ok|error|timeout|killed, limit output|time|memory|pids).
var (
	execTotal = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_exec_total",
		Help: "Finished executions, by backend and outcome.",
	}, []string{"backend", "outcome"})
	execDuration = factory.NewHistogramVec(prometheus.HistogramOpts{
		Name: "sqlfs_exec_duration_seconds",
		Help: "Wall time of one execution, by backend.",
		// 50 µs … ~420 s: an in-process shell builtin up to a long container build.
		Buckets: prometheus.ExponentialBuckets(50e-6, 3, 15),
	}, []string{"backend"})
	execOutputBytes = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_exec_output_bytes_total",
		Help: "Bytes of stdout and stderr produced by executions, by backend.",
	}, []string{"backend"})
	execTruncations = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_exec_truncations_total",
		Help: "Executions whose output was truncated at the output limit, by backend.",
	}, []string{"backend"})
	execLimitHits = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_exec_limit_hits_total",
		Help: "Executions stopped or capped by a resource limit, by backend and limit.",
	}, []string{"backend", "limit"})
	execRunning = factory.NewGaugeVec(prometheus.GaugeOpts{
		Name: "sqlfs_exec_running",
		Help: "Executions in progress, by backend.",
	}, []string{"backend"})

	// ContainerStarts counts container starts by kind: warm (from a pool) or cold.
	ContainerStarts = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_container_starts_total",
		Help: "Containers started by the container backend, by kind (warm, cold).",
	}, []string{"kind"})

	// ShellWatchdogStops counts shell-backend execs the Go-heap watchdog stopped: growth the
	// memory accounting did not see (they also count in sqlfs_exec_limit_hits_total with
	// limit="max_memory_bytes").
	ShellWatchdogStops = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_shell_watchdog_stops_total",
		Help: "Shell-backend executions stopped by the Go-heap memory watchdog.",
	})

	// ShellStopSeconds is, for each shell-backend exec stopped before it ended (timeout, limit,
	// caller), the time from its deadline or stop to the end of the last goroutine it started:
	// how long a cancelled command keeps burning CPU in the owner.
	ShellStopSeconds = factory.NewHistogram(prometheus.HistogramOpts{
		Name: "sqlfs_shell_stop_seconds",
		Help: "Time from a shell-backend exec's deadline or stop until all of its goroutines ended.",
		// 1 ms … ~16 s.
		Buckets: prometheus.ExponentialBuckets(1e-3, 2, 15),
	})

	// AuditEvents counts audit records written.
	AuditEvents = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_audit_events_total",
		Help: "Audit events recorded.",
	})
	// PolicyRefusals counts operations refused by policy, by rule kind (readonly, hidden, quota).
	PolicyRefusals = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_policy_refusals_total",
		Help: "Operations refused by policy, by rule kind.",
	}, []string{"rule"})
)

// ExecMetrics are the series of one exec backend. Running is the in-progress gauge: Inc when an
// execution starts, Dec when it ends.
type ExecMetrics struct {
	backend     string
	duration    prometheus.Observer
	outputBytes prometheus.Counter
	truncations prometheus.Counter
	Running     prometheus.Gauge
}

var (
	execMu       sync.Mutex
	execBackends = map[string]*ExecMetrics{}
)

// Exec returns the series of backend, creating them on first use; keep the result.
func Exec(backend string) *ExecMetrics {
	execMu.Lock()
	defer execMu.Unlock()
	if m, ok := execBackends[backend]; ok {
		return m
	}
	m := &ExecMetrics{
		backend:     backend,
		duration:    execDuration.WithLabelValues(backend),
		outputBytes: execOutputBytes.WithLabelValues(backend),
		truncations: execTruncations.WithLabelValues(backend),
		Running:     execRunning.WithLabelValues(backend),
	}
	execBackends[backend] = m
	return m
}

// Done records a finished execution with its outcome and wall time. It costs one labelled lookup,
// negligible against any execution.
func (m *ExecMetrics) Done(outcome string, d time.Duration) {
	execTotal.WithLabelValues(m.backend, outcome).Inc()
	m.duration.Observe(d.Seconds())
}

// OutputBytes adds n bytes of output.
func (m *ExecMetrics) OutputBytes(n int) {
	if n > 0 {
		m.outputBytes.Add(float64(n))
	}
}

// Truncated records an execution whose output was cut at the limit.
func (m *ExecMetrics) Truncated() { m.truncations.Inc() }

// LimitHit records an execution stopped or capped by limit.
func (m *ExecMetrics) LimitHit(limit string) {
	execLimitHits.WithLabelValues(m.backend, limit).Inc()
}
