// Package metrics holds every Prometheus collector of sqlfs and the /metrics handler.
//
// All collectors live in one process-wide Registry. Hot paths (one call per FUSE request) use
// pre-resolved series: resolve a label set once at init (Fuse, Cache, Exec) and keep the result.
// The package imports nothing from sqlfs so that every layer can import it.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Version is the sqlfs version reported by sqlfs_build_info; set it with
// -ldflags "-X github.com/sqlfs/sqlfs/metrics.Version=v1.2.3".
var Version = "dev"

// Registry holds every sqlfs collector plus the Go runtime and process collectors.
var Registry = newRegistry()

// factory registers each collector below in Registry as it is created.
var factory = promauto.With(Registry)

// enabled gates the helpers in this package (Observe, FuseRead, …) so a benchmark can measure the
// cost of metrics by switching them off; direct calls on exported collectors are not gated.
var enabled atomic.Bool

func init() { enabled.Store(true) }

// SetEnabled switches recording by this package's helpers on or off (on by default).
func SetEnabled(on bool) { enabled.Store(on) }

// Enabled reports whether the helpers record; callers may skip time.Now() when it is false.
func Enabled() bool { return enabled.Load() }

func newRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo{desc: prometheus.NewDesc("sqlfs_build_info",
			"Build information of the running sqlfs binary; the value is always 1.",
			[]string{"version", "goversion"}, nil)},
	)
	return r
}

// buildInfo reads Version at collect time, so a value set after init is still reported.
type buildInfo struct{ desc *prometheus.Desc }

func (b buildInfo) Describe(ch chan<- *prometheus.Desc) { ch <- b.desc }

func (b buildInfo) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(b.desc, prometheus.GaugeValue, 1, Version, runtime.Version())
}

// Handler serves Registry in the Prometheus exposition format. Every
// caller shares one handler, made at the first call: a host makes an API
// server each time it wakes a workspace, and a new handler each time
// (instrumenting itself with Registry again) cost 0.14 ms of that wake.
func Handler() http.Handler { return handler() }

var handler = sync.OnceValue(func() http.Handler {
	return promhttp.InstrumentMetricHandler(Registry, promhttp.HandlerFor(Registry, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(slog.Default().Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      Registry,
	}))
})

// Serve listens on addr (HOST:PORT) and serves /metrics and /healthz until ctx is done. It returns nil after a
// clean stop and an error if it cannot listen or serving fails. It blocks: run it in a goroutine.
func Serve(ctx context.Context, addr string) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler())
	// A liveness probe's answer: the process serves HTTP. Unlike the API's
	// /v1/health it takes no token, so probes carry no secret.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	stopped := make(chan struct{})
	serveDone := make(chan struct{})
	defer close(serveDone)
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
		case <-serveDone: // Serve failed on its own; nothing to shut down.
			return
		}
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			slog.Warn("metrics: shutdown", "addr", ln.Addr().String(), "err", err)
		}
	}()
	slog.Info("metrics: serving", "addr", ln.Addr().String(), "path", "/metrics")
	err = srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-stopped
		return nil
	}
	return fmt.Errorf("metrics: serve on %s: %w", addr, err)
}
