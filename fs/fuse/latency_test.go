package fuse_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
)

// holdsCPULatency says whether this process holds /dev/cpu_dma_latency open.
func holdsCPULatency(t *testing.T) bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == "/dev/cpu_dma_latency" {
			return true
		}
	}
	return false
}

// TestLowLatencyOnlyWhileBusy: the low-latency mode holds its CPU latency
// request while requests come and gives it up once they stop, so an idle
// mount never keeps the CPUs polling.
func TestLowLatencyOnlyWhileBusy(t *testing.T) {
	if fuse.LibFUSE != 0 {
		t.Skip("the low-latency mode is the Linux frontend's")
	}
	w := fusetest.Mount(t, sfs.Options{}, fuse.Options{LowLatency: true})
	if holdsCPULatency(t) {
		t.Fatal("held before any request")
	}
	held := false
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && !held; {
		for range 50 {
			os.Lstat(w.Path(time.Now().Format(time.RFC3339Nano))) // a new missing name: one LOOKUP
		}
		held = holdsCPULatency(t)
	}
	if !held {
		t.Fatal("not held while the mount answered requests")
	}
	deadline := time.Now().Add(2 * time.Second)
	for holdsCPULatency(t) {
		if time.Now().After(deadline) {
			t.Fatal("still held 2 s after the last request")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
