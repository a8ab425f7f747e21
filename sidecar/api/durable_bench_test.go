package api

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// BenchmarkToolWrite is the cost of acknowledging a write tool call only
// once its commit is durable, beside a native file's write+fsync on the
// same disk: one writer at a time, and 100 at once (whose durable commits
// the core groups). "acked" is the write tool as served; "unsynced" runs
// the same tool without waiting for the commit (what it did before).
//
//	go test ./sidecar/api -run '^$' -bench ToolWrite -benchtime 200x
func BenchmarkToolWrite(b *testing.B) {
	write, _ := findTool("write")
	for _, writers := range []int{1, 100} {
		b.Run(fmt.Sprintf("writers=%d/native", writers), func(b *testing.B) {
			dir := b.TempDir()
			parallel(b, writers, func(i int64) error {
				f, err := os.Create(filepath.Join(dir, fmt.Sprintf("f%d", i%1000)))
				if err != nil {
					return err
				}
				_, err = f.WriteString("content\n")
				return errors.Join(err, f.Sync(), f.Close())
			})
		})
		for _, mode := range []string{"acked", "unsynced"} {
			b.Run(fmt.Sprintf("writers=%d/%s", writers, mode), func(b *testing.B) {
				core, err := sfs.Open(b.Context(), filepath.Join(b.TempDir(), "ws.sqlfs"), sfs.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { core.Close() })
				svc := tools.NewForCore(core, map[string]sidecar.Backend{}, tools.Options{})
				parallel(b, writers, func(i int64) error {
					args := fmt.Appendf(nil, `{"path":"f%d","content":"content\n"}`, i%1000)
					var err error
					if mode == "acked" {
						_, err = write.call(b.Context(), svc, args)
					} else {
						_, err = write.run(b.Context(), svc, args)
					}
					return err
				})
			})
		}
	}
}

// parallel runs fn b.N times over n goroutines; ns/op is the latency one
// call sees, with n of them in flight.
func parallel(b *testing.B, n int, fn func(i int64) error) {
	b.Helper()
	var next atomic.Int64
	errs := make(chan error, n)
	b.ResetTimer()
	for range n {
		go func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					errs <- nil
					return
				}
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// Per call as one caller sees it: total time spread over n in flight.
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())*float64(n)/float64(b.N), "ns/call")
}
