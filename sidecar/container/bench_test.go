package container

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell"
)

// reportMedian adds the median of per-iteration times, which the mean
// (ns/op) hides when a few runs stall.
func reportMedian(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkExecTrue compares a warm exec of `true` in the running container
// with the shell backend on a store and with starting /bin/true on the host.
func BenchmarkExecTrue(b *testing.B) {
	b.Run("shell", func(b *testing.B) {
		fsys, err := sfs.Open(b.Context(), filepath.Join(b.TempDir(), "ws.sqlfs"), sfs.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = fsys.Close() })
		be := shell.New(fsys, shell.Options{})
		b.Cleanup(func() { _ = be.Close() })
		times := make([]time.Duration, 0, b.N)
		for range b.N {
			t0 := time.Now()
			res, err := be.Exec(b.Context(), sidecar.Request{Command: "true"})
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%+v %v", res, err)
			}
			times = append(times, time.Since(t0))
		}
		reportMedian(b, times)
	})
	b.Run("container-warm", func(b *testing.B) {
		be, _ := newTestBackend(b, nil)
		ctx := context.Background()
		if _, err := be.Exec(ctx, sidecar.Request{Command: "true"}); err != nil {
			b.Fatal(err)
		}
		times := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			t0 := time.Now()
			res, err := be.Exec(ctx, sidecar.Request{Command: "true"})
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%+v %v", res, err)
			}
			times = append(times, time.Since(t0))
		}
		reportMedian(b, times)
	})
	b.Run("host", func(b *testing.B) {
		times := make([]time.Duration, 0, b.N)
		for range b.N {
			t0 := time.Now()
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(t0))
		}
		reportMedian(b, times)
	})
}

// BenchmarkColdStart is the first exec of a new backend: container create
// and start, then `true` in it. Close is not timed. The debian case runs on
// the full rootfs when fullRootfsEnv names one.
func BenchmarkColdStart(b *testing.B) {
	for _, rootfs := range []struct{ name, dir string }{
		{"busybox", testRootfs},
		{"debian", os.Getenv(fullRootfsEnv)},
	} {
		b.Run(rootfs.name, func(b *testing.B) {
			requireContainers(b)
			if rootfs.dir == "" {
				b.Skipf("no full rootfs: set %s", fullRootfsEnv)
			}
			ws, state := b.TempDir(), b.TempDir()
			ctx := context.Background()
			times := make([]time.Duration, 0, b.N)
			for range b.N {
				t0 := time.Now()
				be, err := New(ctx, Options{Workspace: ws, Rootfs: rootfs.dir, StateDir: state, Logger: testLogger(b)})
				if err != nil {
					b.Fatal(err)
				}
				res, err := be.Exec(ctx, sidecar.Request{Command: "true"})
				d := time.Since(t0)
				b.StopTimer()
				if cerr := be.Close(); err == nil {
					err = cerr
				}
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%+v %v", res, err)
				}
				times = append(times, d)
				b.StartTimer()
			}
			reportMedian(b, times)
		})
	}
}

// packageTree is a tarball shaped like an npm install: nested package
// directories of small files (200 B to 8 KiB), 3000 files in all.
func packageTree(b *testing.B) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	rng := rand.New(rand.NewPCG(1, 2))
	content := bytes.Repeat([]byte("module.exports = function () { return 42 }\n"), 200)
	for pkg := range 300 {
		dir := fmt.Sprintf("node_modules/pkg%03d/lib/", pkg)
		for f := range 10 {
			size := 200 + rng.IntN(8<<10-200)
			hdr := &tar.Header{Name: fmt.Sprintf("%sfile%d.js", dir, f), Mode: 0o644, Size: int64(size), Typeflag: tar.TypeReg}
			if err := tw.WriteHeader(hdr); err != nil {
				b.Fatal(err)
			}
			if _, err := tw.Write(content[:size]); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkNpmShaped untars a package tree into /workspace and reads every
// file back, in the container, with /workspace a native directory or the
// sqlfs FUSE mount; compare the two medians.
func BenchmarkNpmShaped(b *testing.B) {
	tree := packageTree(b)
	for _, where := range []string{"native", "mount"} {
		b.Run(where, func(b *testing.B) {
			be, _ := newTestBackend(b, func(c *Options) {
				if where == "mount" {
					c.Workspace = fusetest.Mount(b, sfs.Options{}, fuse.Options{AllowOther: true}).Dir
				}
			})
			ctx := context.Background()
			run := func(cmd string, stdin []byte) string {
				var out, errb strings.Builder
				req := sidecar.Request{Command: cmd, Stdout: &out, Stderr: &errb}
				if stdin != nil {
					req.Stdin = bytes.NewReader(stdin)
				}
				res, err := be.Exec(ctx, req)
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%q: %+v %v %s", cmd, res, err, errb.String())
				}
				return out.String()
			}
			times := make([]time.Duration, 0, b.N)
			b.SetBytes(int64(len(tree)))
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				run(fmt.Sprintf("mkdir d%d && cd d%d && tar -xf - && find . -type f | xargs cat | wc -c", i, i), tree)
				times = append(times, time.Since(t0))
				b.StopTimer()
				run(fmt.Sprintf("rm -rf d%d", i), nil)
				b.StartTimer()
			}
			reportMedian(b, times)
		})
	}
}
