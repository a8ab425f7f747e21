package host_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// BenchmarkWake10k times the first request to a hibernated workspace of
// 10,000 files, until its answer: the wake through Dir.Open and a read.
// Beside it, the same file's open and read in a native tree of the same
// shape on the same disk (native-ns/op), and the ratio (x-native).
func BenchmarkWake10k(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "ws")
	d, err := host.OpenDir(dir, workspace.Options{}, api.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if err := d.Create("w", nil); err != nil {
		b.Fatal(err)
	}
	f, err := sfs.Open(context.Background(), filepath.Join(dir, "w", "workspace.sqlfs"), sfs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	native := filepath.Join(b.TempDir(), "native")
	for i := range 10_000 {
		if i%100 == 0 {
			if err := f.Mkdir(fmt.Sprintf("/d%d", i/100), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(native, fmt.Sprintf("d%d", i/100)), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.WriteFile(fmt.Sprintf("/d%d/f%d", i/100, i), []byte("hello"), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(native, fmt.Sprintf("d%d/f%d", i/100, i)), []byte("hello"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	h := host.New(host.Options{Opener: d, Logger: quiet})
	defer h.Close(context.Background())
	hd := host.Handler(h, d, host.HandlerOptions{Logger: quiet})
	var nativeTime, cpu time.Duration
	b.ResetTimer()
	for range b.N {
		req := httptest.NewRequest("POST", "/v1/workspaces/w/tools/read", strings.NewReader(`{"path":"d1/f100"}`))
		rec := httptest.NewRecorder()
		c0 := cpuTime(b)
		hd.ServeHTTP(rec, req)
		cpu += cpuTime(b) - c0
		if rec.Code != http.StatusOK {
			b.Fatalf("read: %d %s", rec.Code, rec.Body)
		}
		b.StopTimer()
		h.Reopen("w") // hibernate: the next request wakes it
		if h.Open() != 0 {
			b.Fatal("still open")
		}
		t0 := time.Now()
		if _, err := os.ReadFile(filepath.Join(native, "d1/f100")); err != nil {
			b.Fatal(err)
		}
		nativeTime += time.Since(t0)
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(nativeTime.Nanoseconds()) / float64(b.N)
	b.ReportMetric(n, "native-ns/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "x-native")
	// The process's CPU time per wake, every thread's: on a loaded
	// machine it varies much less than the time until the answer.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
