package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Checkpoint operations as the sidecar runs them, by op: create (a caller's), auto (before an
// exec), restore, diff, delete, fork, undo; outcome ok or error.
var (
	checkpointOps = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_checkpoint_operations_total",
		Help: "Checkpoint operations (create, auto, restore, diff, delete, fork, undo), by op and outcome.",
	}, []string{"op", "outcome"})
	checkpointDuration = factory.NewHistogramVec(prometheus.HistogramOpts{
		Name: "sqlfs_checkpoint_operation_duration_seconds",
		Help: "Wall time of one checkpoint operation, by op.",
		// 10 µs … ~40 s: an in-RAM checkpoint marker up to the fork of a large store.
		Buckets: prometheus.ExponentialBuckets(10e-6, 3, 15),
	}, []string{"op"})
)

// CheckpointOp records one checkpoint operation, its wall time and whether it failed.
func CheckpointOp(op string, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	checkpointOps.WithLabelValues(op, outcome).Inc()
	checkpointDuration.WithLabelValues(op).Observe(d.Seconds())
}
