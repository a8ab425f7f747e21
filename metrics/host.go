package metrics

import (
	"errors"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// hostOpen and hostTotal are the host's open and stored workspaces;
// hostQueued its requests waiting for a turn (--max-requests).
var hostOpen, hostTotal, hostQueued atomic.Int64

// SetHostQueued records how many requests wait for a turn.
func SetHostQueued(n int) { hostQueued.Store(int64(n)) }

// SetHostOpen records how many workspaces the host has open.
func SetHostOpen(n int) { hostOpen.Store(int64(n)) }

// AddHostTotal records workspaces created (n > 0) or removed (n < 0).
func AddHostTotal(n int) { hostTotal.Add(int64(n)) }

func hostGauge(state string, v func() float64) prometheus.GaugeFunc {
	return factory.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "sqlfs_host_workspaces",
		Help:        "Workspaces of the host, by state (open, hibernated); their sum is all it stores.",
		ConstLabels: prometheus.Labels{"state": state},
	}, v)
}

// Host metrics (sqlfs-exec serve --workspaces): no workspace label, so the
// series stay bounded however many workspaces a host serves.
var (
	_         = hostGauge("open", func() float64 { return float64(hostOpen.Load()) })
	_         = hostGauge("hibernated", func() float64 { return float64(max(hostTotal.Load()-hostOpen.Load(), 0)) })
	HostWakes = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_host_wakes_total",
		Help: "Workspaces opened for a request (first use or after hibernating).",
	})
	HostWakeErrors = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_host_wake_errors_total",
		Help: "Workspaces that failed to open for a request.",
	})
	HostWakeDuration = factory.NewHistogram(prometheus.HistogramOpts{
		Name: "sqlfs_host_wake_duration_seconds",
		Help: "Time to open a workspace for a request.",
		// 100 µs … ~3 s.
		Buckets: prometheus.ExponentialBuckets(1e-4, 2, 15),
	})
	HostHibernations = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_host_hibernations_total",
		Help: "Workspaces closed by the host, by reason (idle, lru, memory, policy, delete, shutdown, evict: its fleet lease was lost).",
	}, []string{"reason"})
	HostRequestRetries = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_host_request_retries_total",
		Help: "Requests whose workspace closed under them unanswered (a fleet lease lost, a shutdown), by outcome: retried (served again on the workspace's new state) or refused (503 with Retry-After: the body too large to keep, or the retries spent).",
	}, []string{"outcome"})
	HostBusyRefusals = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_host_busy_refusals_total",
		Help: "Requests refused because every open workspace was in use at --max-open.",
	})
	_ = factory.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sqlfs_host_requests_queued",
		Help: "Workspace requests waiting for a turn (--max-requests).",
	}, func() float64 { return float64(hostQueued.Load()) })
	HostOverloadRefusals = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_host_overload_refusals_total",
		Help: "Workspace requests refused with 429 because the request queue (--max-queued) or the workspace's share of it (--max-queued-per-workspace) was full.",
	})
	HostContainerRefusals = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_host_container_refusals_total",
		Help: "Container execs refused because --max-containers were running.",
	})
	HostUnknownLookups = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_host_unknown_lookups_total",
		Help: "Requests for a workspace this host has no folder of, by how its existence was settled: listed (a listing of the object store), looked_up (one id asked), cached (known missing), limited (past the lookup rate: answered not found).",
	}, []string{"how"})
)

// HostWorkspaceRequests counts requests by workspace. It has one series
// per workspace, so a host registers it only when its operator asks
// (serve --metrics-workspace-label): EnableHostWorkspaceLabel.
var HostWorkspaceRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "sqlfs_host_workspace_requests_total",
	Help: "Requests served by each workspace of the host (only with --metrics-workspace-label).",
}, []string{"workspace"})

// EnableHostWorkspaceLabel registers HostWorkspaceRequests; calling it
// again does nothing.
func EnableHostWorkspaceLabel() {
	if err := Registry.Register(HostWorkspaceRequests); err != nil {
		var dup prometheus.AlreadyRegisteredError
		if !errors.As(err, &dup) {
			panic(err) // a programming error: the name clashes with another collector
		}
	}
}
