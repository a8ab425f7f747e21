package shell

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar"
)

// Every exec stopped before it ended has its stop time recorded once
// (sqlfs_shell_stop_seconds), also when its interpreter returns at once
// after the stop; an exec that ends by itself has none.
func TestStopTimeRecorded(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	tests := []struct {
		name, cmd string
		limits    sidecar.Limits
		stopped   bool
	}{
		{name: "ends by itself", cmd: "echo hi", stopped: false},
		{name: "timeout", cmd: "while :; do :; done", limits: sidecar.Limits{Timeout: 200 * time.Millisecond}, stopped: true},
		{name: "limit, then a quick return", cmd: "jq -n '[] | .[60000000] = 1'", limits: sidecar.Limits{MaxMemoryBytes: 1 << 20}, stopped: true},
		{name: "command limit", cmd: "while :; do true; done", limits: sidecar.Limits{MaxCommands: 1000}, stopped: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			count, sum := stopSeconds()
			got := execReq(t, b, sidecar.Request{Command: tc.cmd, Limits: tc.limits})
			if (got.LimitHit != "") != tc.stopped {
				t.Fatalf("limit %q, want stopped %v", got.LimitHit, tc.stopped)
			}
			want := count
			if tc.stopped {
				want++
			}
			// The watcher reports after Exec returns; give it time, then
			// check it recorded exactly what it should.
			deadline := time.Now().Add(5 * time.Second)
			for n, _ := stopSeconds(); n < want && time.Now().Before(deadline); n, _ = stopSeconds() {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)
			n, s := stopSeconds()
			if n != want {
				t.Fatalf("sqlfs_shell_stop_seconds_count went from %d to %d, want %d", count, n, want)
			}
			if took := time.Duration((s - sum) * float64(time.Second)); took < 0 || took > 5*time.Second {
				t.Errorf("recorded stop time %v", took)
			}
		})
	}
}

func stopSeconds() (uint64, float64) {
	var m dto.Metric
	if err := metrics.ShellStopSeconds.Write(&m); err != nil {
		panic(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

// TestStopProfilesOnce: the watcher of a stopped exec takes one goroutine
// profile when nothing of the exec outlives its interpreter, however long
// the interpreter takes to unwind: it profiled every millisecond until
// then, 20-30 ms of the owner's CPU per stop with a few hundred other
// goroutines.
func TestStopProfilesOnce(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	// The owner's other goroutines (connections, the mount's servers):
	// each profile walks them all.
	stop := make(chan struct{})
	for range 300 {
		go func() { <-stop }()
	}
	t.Cleanup(func() { close(stop) })
	for _, tc := range []struct {
		name, cmd   string
		maxProfiles int64
	}{
		{"loop", "while :; do :; done", 1},
		{"pipeline", "while :; do echo x; done | while read l; do :; done", 1},
		{"sleeping", "sleep 10", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			count, _ := stopSeconds()
			p0, ns0 := stopProfiles.Load(), stopProfileNanos.Load()
			execReq(t, b, sidecar.Request{Command: tc.cmd, Limits: sidecar.Limits{Timeout: 100 * time.Millisecond}})
			deadline := time.Now().Add(5 * time.Second)
			for n, _ := stopSeconds(); n <= count && time.Now().Before(deadline); n, _ = stopSeconds() {
				time.Sleep(time.Millisecond)
			}
			if n, _ := stopSeconds(); n != count+1 {
				t.Fatalf("stop not recorded: count %d -> %d", count, n)
			}
			p, took := stopProfiles.Load()-p0, time.Duration(stopProfileNanos.Load()-ns0)
			t.Logf("%d profiles, %v", p, took)
			if p < 1 || p > tc.maxProfiles {
				t.Errorf("%d goroutine profiles (%v) for one stop, want 1 to %d", p, took, tc.maxProfiles)
			}
		})
	}
}
