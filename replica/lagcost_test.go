package replica

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/host"
)

// cpuOf is the user and system CPU time process pid has used.
func cpuOf(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command's closing parenthesis: utime is the 14th
	// field of the line, stime the 15th, in clock ticks (100 a second).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestLagSamplerCost measures the CPU the lag sampler costs, litestream's
// and the host's, with SQLFS_SAMPLER_STORES stores (default 2,000) of
// which SQLFS_SAMPLER_OPEN (default 20) are open and idle, the others
// hibernated (parked: out of litestream's sight), alternating windows of
// SQLFS_SAMPLER_WINDOW (default 10s) with and without sampling.
func TestLagSamplerCost(t *testing.T) {
	if os.Getenv("SQLFS_SAMPLER_STORES") == "" && os.Getenv("SQLFS_TEST_LONG") == "" {
		t.Skip("a measurement: SQLFS_SAMPLER_STORES=N or SQLFS_TEST_LONG=1")
	}
	env := func(k string, def int) int {
		if n, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return n
		}
		return def
	}
	total, open := env("SQLFS_SAMPLER_STORES", 2000), env("SQLFS_SAMPLER_OPEN", 20)
	window := time.Duration(env("SQLFS_SAMPLER_WINDOW", 10)) * time.Second
	ctx := context.Background()
	s3 := newS3(t)
	o := options(t, s3.url(t, "host"))
	o.SyncInterval = DefaultSyncInterval
	root := t.TempDir()
	var fss []*sfs.FS
	for i := range total {
		dir := filepath.Join(root, fmt.Sprintf("w%04d", i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		name := host.ParkedName
		if i < open {
			name = host.StoreName
		}
		f, err := sfs.Open(ctx, filepath.Join(dir, name), sfs.Options{ExternalWALCheckpoints: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.WriteFile("/notes.txt", []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if i < open {
			fss = append(fss, f)
		} else if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, f := range fss {
			f.Close()
		}
	}()
	sup, err := StartDir(ctx, root, host.StoreName, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Close(ctx) })
	for i := range open {
		if err := sup.Sync(ctx, filepath.Join(root, fmt.Sprintf("w%04d", i), host.StoreName)); err != nil {
			t.Fatal(err)
		}
	}
	pid, err := sup.pid(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // litestream's first uploads settle
	for round := range 4 {
		paused := round%2 == 1
		sup.lag.paused.Store(paused)
		l0, s0, w0 := cpuOf(t, pid), selfCPU(), time.Now()
		time.Sleep(window)
		l1, s1, w := cpuOf(t, pid), selfCPU(), time.Since(w0)
		load, _ := os.ReadFile("/proc/loadavg")
		t.Logf("%d stores, %d open, sampling %v: litestream %.1f%% of a CPU, this process %.1f%% (over %v; load %s)",
			total, open, !paused, 100*float64(l1-l0)/float64(w), 100*float64(s1-s0)/float64(w), w.Round(time.Millisecond), strings.Fields(string(load))[0])
	}
}
