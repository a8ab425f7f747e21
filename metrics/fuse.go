package metrics

import (
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// FUSE request metrics. Ops are the adapter's operation names (getattr, create, read, …); the
// adapter resolves each once with Fuse, and per request takes start := Start() and calls
// op.Observe(start, errno); per data request it calls FuseRead or FuseWrite.
//
// Cost per request, measured here: a clock read costs 40-90 ns on this VM, time.Now() two of
// them, so timing every request costs more than all the counting. Start times one request in
// timedOneIn (picked at random) and Observe counts every request: the duration histograms are a
// uniform sample, requests_total and errors_total are exact. Per-request series also use
// expHistogram rather than client_golang's Histogram: a client_golang counter plus histogram
// costs ~50 ns per request (75-240 ns with two threads) against ~20 ns (20-35 ns).

// timedOneIn is the sampling rate of request durations.
const timedOneIn = 8

// Duration buckets: 5 µs … ~2.6 s; a cached getattr takes microseconds, an fsync a disk flush.
const (
	durationBase    = 5000 // ns
	durationBuckets = 20
	// Size buckets: 512 B … 1 MiB; the kernel splits I/O into requests of at most max_read/max_write.
	sizeBase    = 512
	sizeBuckets = 12
)

var (
	fuseRequestsDesc = prometheus.NewDesc("sqlfs_fuse_requests_total",
		"FUSE requests handled, by operation.", []string{"op"}, nil)
	fuseDurationDesc = prometheus.NewDesc("sqlfs_fuse_request_duration_seconds",
		"Time spent in the filesystem handling a FUSE request, by operation; a uniform sample of the requests.", []string{"op"}, nil)
	fuseReadBytesDesc = prometheus.NewDesc("sqlfs_fuse_read_bytes_total",
		"Bytes returned by FUSE read requests.", nil, nil)
	fuseWriteBytesDesc = prometheus.NewDesc("sqlfs_fuse_write_bytes_total",
		"Bytes accepted by FUSE write requests.", nil, nil)
	fuseSizeDesc = prometheus.NewDesc("sqlfs_fuse_request_size_bytes",
		"Size of FUSE read and write requests, by operation (read, write).", []string{"op"}, nil)

	fuseErrors = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_fuse_errors_total",
		Help: "FUSE requests that returned an error, by operation and errno name.",
	}, []string{"op", "errno"})

	fuseReadSize  = newExpHistogram(sizeBase, sizeBuckets, 1)
	fuseWriteSize = newExpHistogram(sizeBase, sizeBuckets, 1)

	// FuseOpenHandles is the number of open file and directory handles.
	FuseOpenHandles = factory.NewGauge(prometheus.GaugeOpts{
		Name: "sqlfs_fuse_open_handles",
		Help: "Open FUSE file and directory handles.",
	})

	// FSInodes and FSBytes are the inodes and bytes in use in the workspace.
	FSInodes = factory.NewGauge(prometheus.GaugeOpts{
		Name: "sqlfs_fs_inodes",
		Help: "Inodes in use in the workspace.",
	})
	FSBytes = factory.NewGauge(prometheus.GaugeOpts{
		Name: "sqlfs_fs_used_bytes",
		Help: "Bytes of file data in use in the workspace.",
	})
)

func init() { Registry.MustRegister(fuseCollector{}) }

// FuseRead records a read request that returned n bytes (n < 0, an error, is ignored).
func FuseRead(n int) {
	if n >= 0 && enabled.Load() {
		fuseReadSize.observe(uint64(n))
	}
}

// FuseWrite records a write request that accepted n bytes (n < 0, an error, is ignored).
func FuseWrite(n int) {
	if n >= 0 && enabled.Load() {
		fuseWriteSize.observe(uint64(n))
	}
}

// FuseOp is the pre-resolved series of one FUSE operation.
type FuseOp struct {
	name     string
	requests atomic.Uint64
	duration *expHistogram
	// errs caches the error counter per errno; resolved on first use so that only errors that
	// occur become series. Errnos beyond the table take the slower labelled path.
	errs [maxErrno]atomic.Pointer[prometheus.Counter]
}

var (
	fuseOpsMu sync.Mutex
	fuseOps   []*FuseOp // in creation order, for Collect
)

// Fuse returns the series of operation op, creating them on first use. Call it once per op at
// adapter init and keep the result: it takes a lock.
func Fuse(op string) *FuseOp {
	fuseOpsMu.Lock()
	defer fuseOpsMu.Unlock()
	for _, o := range fuseOps {
		if o.name == op {
			return o
		}
	}
	o := &FuseOp{name: op, duration: newExpHistogram(durationBase, durationBuckets, 1e9)}
	fuseOps = append(fuseOps, o)
	return o
}

// Start returns the start time of a request for Observe: time.Now() for one request in
// timedOneIn, the zero time for the others and whenever recording is off.
func Start() time.Time {
	if !enabled.Load() || rand.Uint32()%timedOneIn != 0 {
		return time.Time{}
	}
	return time.Now()
}

// Observe records one request that returned errno: 0 for success, otherwise the errno with either
// sign (cgofuse returns -ENOENT). Its duration is recorded when start is not zero.
func (o *FuseOp) Observe(start time.Time, errno int) {
	if !enabled.Load() {
		return
	}
	o.requests.Add(1)
	if !start.IsZero() {
		o.duration.observe(uint64(max(time.Since(start), 0)))
	}
	if errno != 0 {
		o.errorCounter(errno).Inc()
	}
}

func (o *FuseOp) errorCounter(errno int) prometheus.Counter {
	if errno < 0 {
		errno = -errno
	}
	if errno >= maxErrno {
		return fuseErrors.WithLabelValues(o.name, ErrnoName(errno))
	}
	if c := o.errs[errno].Load(); c != nil {
		return *c
	}
	// Racing first uses resolve the same child, so either store wins harmlessly.
	c := fuseErrors.WithLabelValues(o.name, ErrnoName(errno))
	o.errs[errno].Store(&c)
	return c
}

// fuseCollector exports the expHistograms of the FUSE ops and of read and write sizes.
type fuseCollector struct{}

func (fuseCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{fuseRequestsDesc, fuseDurationDesc, fuseReadBytesDesc, fuseWriteBytesDesc, fuseSizeDesc} {
		ch <- d
	}
}

func (fuseCollector) Collect(ch chan<- prometheus.Metric) {
	fuseOpsMu.Lock()
	ops := fuseOps[:len(fuseOps):len(fuseOps)]
	fuseOpsMu.Unlock()
	for _, o := range ops {
		ch <- prometheus.MustNewConstMetric(fuseRequestsDesc, prometheus.CounterValue, float64(o.requests.Load()), o.name)
		count, sum, buckets := o.duration.snapshot()
		ch <- prometheus.MustNewConstHistogram(fuseDurationDesc, count, sum, buckets, o.name)
	}
	for _, s := range []struct {
		op    string
		h     *expHistogram
		bytes *prometheus.Desc
	}{{"read", fuseReadSize, fuseReadBytesDesc}, {"write", fuseWriteSize, fuseWriteBytesDesc}} {
		count, sum, buckets := s.h.snapshot()
		ch <- prometheus.MustNewConstMetric(s.bytes, prometheus.CounterValue, sum)
		ch <- prometheus.MustNewConstHistogram(fuseSizeDesc, count, sum, buckets, s.op)
	}
}

// expHistogram is a lock-free histogram of non-negative integers with upper bounds base·2^i,
// i < n, plus +Inf.
type expHistogram struct {
	base    uint64
	perUnit float64 // observed units per exported unit, e.g. 1e9 ns per second
	counts  []atomic.Uint64
	sum     atomic.Uint64
}

func newExpHistogram(base uint64, n int, perUnit float64) *expHistogram {
	return &expHistogram{base: base, perUnit: perUnit, counts: make([]atomic.Uint64, n+1)}
}

func (h *expHistogram) observe(v uint64) {
	i := 0
	if v > h.base {
		// v in (base·2^(i-1), base·2^i] has bit length i for (v-1)/base.
		i = min(bits.Len64((v-1)/h.base), len(h.counts)-1)
	}
	h.counts[i].Add(1)
	h.sum.Add(v)
}

// snapshot returns count, sum in exported units and cumulative buckets. The count is the buckets' total, so
// the histogram is self-consistent even while observations race with it.
func (h *expHistogram) snapshot() (uint64, float64, map[float64]uint64) {
	buckets := make(map[float64]uint64, len(h.counts)-1)
	var cum uint64
	for i := range h.counts {
		cum += h.counts[i].Load()
		if i < len(h.counts)-1 {
			buckets[float64(h.base<<i)/h.perUnit] = cum
		}
	}
	return cum, float64(h.sum.Load()) / h.perUnit, buckets
}
