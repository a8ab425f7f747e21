package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// replicaLastSync is the time since which some store in the replicator's
// sight has had commits the replica does not hold: the oldest store's
// last full sync, or when a store the replica never held came in sight,
// or when replication started (Unix nanoseconds; 0: this process does
// not replicate).
var replicaLastSync atomic.Int64

// ReplicaStarted records that replication started: the age grows from now
// until the first sync.
func ReplicaStarted(at time.Time) { replicaLastSync.CompareAndSwap(0, at.UnixNano()) }

// ReplicaSynced records the time since which the replica has lacked
// something committed (it may go back: a store that came in sight).
func ReplicaSynced(at time.Time) { replicaLastSync.Store(at.UnixNano()) }

// lagBuckets bound the replication lag: dense from 50 ms to 2 s, where the
// sync interval (200 ms) and the upload put it, with 1 s (the lag target)
// a bound so that "p99 <= 1 s" reads off the histogram; up to 160 s, where
// an outage of the object store shows.
var lagBuckets = []float64{0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 2, 3, 5, 10, 20, 40, 80, 160}

// Replica metrics (--replica): like the host's, without a workspace label.
var (
	ReplicaLag = factory.NewHistogram(prometheus.HistogramOpts{
		Name:    "sqlfs_replica_lag_seconds",
		Help:    "Time from a commit to the object store holding it, sampled each half sync interval (250 ms at least) per replicating store: an upper bound.",
		Buckets: lagBuckets,
	})
	_ = factory.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sqlfs_replica_last_sync_age_seconds",
		Help: "Seconds since the replica last held everything committed, of the store furthest behind (a store never shipped counts from when it came in sight; 0 without --replica).",
	}, func() float64 {
		t := replicaLastSync.Load()
		if t == 0 {
			return 0
		}
		return time.Since(time.Unix(0, t)).Seconds()
	})
	ReplicaSyncErrors = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_replica_sync_errors_total",
		Help: "Syncs to the replica that failed (object store down, litestream not answering).",
	})
	ReplicaRestarts = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_replica_litestream_restarts_total",
		Help: "Times the litestream child process died and was started again.",
	})
	ReplicaRestores = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_replica_restores_total",
		Help: "Restores from the replica, by outcome (ok, empty, error; local: the replica held nothing of a workspace another host served, and the local copy set aside was served instead).",
	}, []string{"outcome"})
	ReplicaStaged = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_replica_staged_restores_total",
		Help: "Restores made ahead of a lease whose holder was seen dead, by what became of them (used; behind: the replica had moved on, restored again; failed; unused: no open took it up).",
	}, []string{"outcome"})
	ReplicaRestoresWaiting = factory.NewGauge(prometheus.GaugeOpts{
		Name: "sqlfs_replica_restores_waiting",
		Help: "Restores waiting for their turn (serve --max-restores run at once).",
	})
	ReplicaRestoreDuration = factory.NewHistogram(prometheus.HistogramOpts{
		Name: "sqlfs_replica_restore_duration_seconds",
		Help: "Time to restore a store from the replica, check included.",
		// 10 ms … ~160 s.
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 15),
	})
)
