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
