package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metadata cache metrics, by cache: inode, dentry, negative (known-missing names), chunk.
var (
	CacheHits = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_meta_cache_hits_total",
		Help: "Lookups answered from the RAM cache, by cache.",
	}, []string{"cache"})
	CacheMisses = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_meta_cache_misses_total",
		Help: "Lookups that went to the store, by cache.",
	}, []string{"cache"})
	CacheEntries = factory.NewGaugeVec(prometheus.GaugeOpts{
		Name: "sqlfs_meta_cache_entries",
		Help: "Entries held in the RAM cache, by cache.",
	}, []string{"cache"})
)

// CacheSeries are the pre-resolved series of one cache.
type CacheSeries struct {
	Hits, Misses prometheus.Counter
	Entries      prometheus.Gauge
}

// Cache resolves the series of cache name (inode, dentry, negative, chunk) once; keep the result
// for per-lookup use. Resolving also exports the series at zero, so hit ratios exist from start.
func Cache(name string) CacheSeries {
	return CacheSeries{
		Hits:    CacheHits.WithLabelValues(name),
		Misses:  CacheMisses.WithLabelValues(name),
		Entries: CacheEntries.WithLabelValues(name),
	}
}

// Store (SQLite) metrics, updated by the writer goroutine and the checkpointer.
var (
	StoreCommits = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_store_commits_total",
		Help: "Transactions committed by the store writer.",
	})
	StoreCommitDuration = factory.NewHistogram(prometheus.HistogramOpts{
		Name: "sqlfs_store_commit_duration_seconds",
		Help: "Time to apply and commit one batch, including the WAL sync when one is done.",
		// 20 µs … ~5 s: an unsynced WAL append up to a large synced batch on a slow disk.
		Buckets: prometheus.ExponentialBuckets(20e-6, 2, 19),
	})
	StoreCommitOps = factory.NewHistogram(prometheus.HistogramOpts{
		Name: "sqlfs_store_commit_ops",
		Help: "Queued mutations applied per commit (group-commit batch size).",
		// 1 … 16384 in powers of two.
		Buckets: prometheus.ExponentialBuckets(1, 2, 15),
	})
	StoreSyncCommits = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_store_sync_commits_total",
		Help: "Commits forced durable by fsync, fdatasync or fsyncdir.",
	})
	StoreChecksumErrors = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_store_checksum_errors_total",
		Help: "Chunk reads whose data did not match the stored checksum; each failed with EIO.",
	})
	StoreBusyRetries = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_store_busy_retries_total",
		Help: "Commits retried after the store ran out of space or was busy.",
	})
	StoreWALBytes = factory.NewGauge(prometheus.GaugeOpts{
		Name: "sqlfs_store_wal_bytes",
		Help: "Size of the SQLite write-ahead log file.",
	})
	StoreFileBytes = factory.NewGauge(prometheus.GaugeOpts{
		Name: "sqlfs_store_file_bytes",
		Help: "Size of the SQLite database file.",
	})
	StoreCheckpointDuration = factory.NewHistogram(prometheus.HistogramOpts{
		Name: "sqlfs_store_checkpoint_duration_seconds",
		Help: "Time to run one WAL checkpoint.",
		// 100 µs … ~26 s.
		Buckets: prometheus.ExponentialBuckets(100e-6, 2, 19),
	})
	StoreChunksKept = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_store_checkpoint_chunks_kept_total",
		Help: "Chunk versions kept for checkpoints when the live tree overwrote or deleted them (shared until then: copy-on-write).",
	})
	StoreChunksFreed = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_store_checkpoint_chunks_freed_total",
		Help: "Chunks freed because no checkpoint held them any more.",
	})
)
