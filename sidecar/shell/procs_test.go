package shell

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar"
)

// A fork bomb ends within 2 s under MaxProcs (stretched by the machine's
// load), whatever spawns the processes: background jobs, pipelines,
// subshells. Each bomb sleeps far longer than its exec's timeout
// afterwards, so one that escaped the limit ends as a timeout, not 0.
func TestForkBomb(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	bombs := []string{
		":(){ :|:& };:; sleep 300",
		"f() { f & f & }; f; sleep 300",
		"f() { (f &); (f &); }; f; sleep 300",
		"f() { f | f & }; f; wait; sleep 300",
		"f() { { f; f; } & }; f; sleep 300",
		"f() { eval 'f & f &'; }; f; sleep 300",
		"s='sh -c \"$s\" & sh -c \"$s\" & wait'; export s; sh -c \"$s\"; sleep 300",
	}
	for _, bomb := range bombs {
		t.Run(bomb, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			bound := testenv.Slack(2 * time.Second * slowdown)
			start := time.Now()
			got := execReq(t, b, sidecar.Request{Command: bomb, Limits: sidecar.Limits{Timeout: 2 * bound}})
			if elapsed := time.Since(start); elapsed > bound {
				t.Errorf("ran %v", elapsed)
			}
			if got.ExitCode != exitLimit || got.LimitHit != "max_procs" ||
				!strings.Contains(got.stderr, "process limit of 1024") {
				t.Errorf("got %+v, stderr %q; want 125, max_procs and a message", got.Result, got.stderr)
			}
			settled(t, baseline)
		})
	}
}

// Many short-lived subshells in sequence are no bomb: only concurrent ones
// count.
func TestManySequentialSubshells(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	got := execReq(t, b, sidecar.Request{
		Command: "for i in $(seq 1 3000); do echo $i | cat > /dev/null; (true); true & done; wait; echo done",
		Limits:  sidecar.Limits{MaxProcs: 64}})
	if got.stdout != "done\n" || got.ExitCode != 0 {
		t.Errorf("got %q %+v, stderr %q", got.stdout, got.Result, got.stderr)
	}
}
