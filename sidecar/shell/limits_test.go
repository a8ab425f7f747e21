package shell

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// blockingReader never returns: a stdin that never ends.
type blockingReader struct{ done chan struct{} }

func (r blockingReader) Read([]byte) (int, error) {
	<-r.done
	return 0, io.EOF
}

func TestLimits(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	sh(t, b, "mkdir globs && cd globs && for i in $(seq 1 50); do : > f$i; done")
	never := blockingReader{done: make(chan struct{})}
	t.Cleanup(func() { close(never.done) })
	tests := []struct {
		name     string
		cmd      string
		limits   sidecar.Limits
		stdin    io.Reader
		limit    sidecar.Limit // "*" any
		code     int
		timedOut bool
		stderr   string
		orProcs  bool // the process limit may stop it instead
	}{
		{name: "timeout while true", cmd: "while true; do :; done",
			limits: sidecar.Limits{Timeout: 200 * time.Millisecond}, limit: "timeout", code: 124, timedOut: true, stderr: "timed out"},
		{name: "timeout arithmetic for", cmd: "for ((;;)); do :; done",
			limits: sidecar.Limits{Timeout: 200 * time.Millisecond}, limit: "timeout", code: 124, timedOut: true},
		{name: "timeout empty arithmetic for", cmd: "for ((i=0;;i++)) { :; }",
			limits: sidecar.Limits{Timeout: 200 * time.Millisecond}, limit: "timeout", code: 124, timedOut: true},
		{name: "timeout sleep", cmd: "sleep 60",
			limits: sidecar.Limits{Timeout: 200 * time.Millisecond}, limit: "timeout", code: 124, timedOut: true},
		{name: "timeout blocked stdin read", cmd: "cat", stdin: never,
			limits: sidecar.Limits{Timeout: 200 * time.Millisecond}, limit: "timeout", code: 124, timedOut: true},
		{name: "timeout blocked read builtin", cmd: "read x", stdin: never,
			limits: sidecar.Limits{Timeout: 200 * time.Millisecond}, limit: "timeout", code: 124, timedOut: true},
		{name: "timeout pipeline", cmd: "while :; do echo y; done | cat > /dev/null",
			limits: sidecar.Limits{Timeout: 200 * time.Millisecond}, limit: "timeout", code: 124, timedOut: true},
		{name: "max commands", cmd: "while true; do :; done",
			limits: sidecar.Limits{MaxCommands: 1000}, limit: "max_commands", code: 125, stderr: "command limit of 1000"},
		{name: "max commands through xargs", cmd: "seq 1 100000 | xargs -n1 true",
			limits: sidecar.Limits{MaxCommands: 500}, limit: "max_commands", code: 125},
		{name: "recursion depth", cmd: "f() { f; }; f",
			limits: sidecar.Limits{MaxCallDepth: 50}, limit: "max_call_depth", code: 125, stderr: "call depth limit of 50"},
		{name: "recursion through eval", cmd: "f() { eval f; }; f",
			limits: sidecar.Limits{MaxCallDepth: 50}, limit: "max_call_depth", code: 125},
		{name: "recursion through sh -c", cmd: `s='sh -c "$s"'; export s; sh -c "$s"`,
			limits: sidecar.Limits{MaxCallDepth: 30}, limit: "max_call_depth", code: 125},
		{name: "default depth does not crash", cmd: "f() { f; }; f", limit: "max_call_depth", code: 125},
		{name: "glob expansion", cmd: "echo globs/*",
			limits: sidecar.Limits{MaxGlobMatches: 10}, limit: "max_glob_matches", code: 125, stderr: "glob expansion limit"},
		{name: "write bytes", cmd: "while :; do echo 0123456789 >> big; done",
			limits: sidecar.Limits{MaxWriteBytes: 10000}, limit: "max_write_bytes", code: 125, stderr: "write limit"},
		{name: "memory: substitution", cmd: "x=$(yes | head -c 100000000); echo ${#x}",
			limits: sidecar.Limits{MaxMemoryBytes: 4 << 20}, limit: "max_memory_bytes", code: 125, stderr: "memory limit of 4194304 bytes exceeded"},
		{name: "memory: substitution split into fields", cmd: "a=($(seq 1 1000000)); echo ${#a[@]}",
			limits: sidecar.Limits{MaxMemoryBytes: 4 << 20}, limit: "max_memory_bytes", code: 125, stderr: "memory limit"},
		{name: "memory: variable growth", cmd: "x=x; while :; do x=$x$x; done",
			limits: sidecar.Limits{MaxMemoryBytes: 4 << 20}, limit: "max_memory_bytes", code: 125, stderr: "memory"},
		// Appending copies the array: a small budget keeps it quick.
		{name: "memory: array growth", cmd: "a=(); while :; do a+=(0123456789012345678901234567890123456789); done",
			limits: sidecar.Limits{MaxMemoryBytes: 64 << 10}, limit: "max_memory_bytes", code: 125, stderr: "memory limit"},
		{name: "memory: sort", cmd: "yes | sort",
			limits: sidecar.Limits{MaxMemoryBytes: 4 << 20}, limit: "max_memory_bytes", code: 125, stderr: "memory limit"},
		{name: "memory: awk string", cmd: `awk 'BEGIN { s = "x"; while (1) s = s s }'`,
			limits: sidecar.Limits{MaxMemoryBytes: 4 << 20}, limit: "max_memory_bytes", code: 125, stderr: "string too long"},
		// Commands or depth, whichever the scheduling reaches first.
		{name: "fork bomb", cmd: "f() { f | f; }; f",
			limits: sidecar.Limits{MaxCommands: 2000, Timeout: 5 * time.Second}, code: 125, limit: "*"},
		// Background jobs still running when the script ends are cancelled
		// with it, as a container exec kills its process group; when the
		// scheduling lets 1024 of them run at once first, the process
		// limit stops it instead (seen once in many runs, at load 2).
		{name: "background fork bomb", cmd: "f() { f | f & }; f; wait",
			limits: sidecar.Limits{MaxCommands: 2000, Timeout: 5 * time.Second}, orProcs: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			got := execReq(t, b, sidecar.Request{Command: tc.cmd, Limits: tc.limits, Stdin: tc.stdin})
			limitOK := got.LimitHit == tc.limit || tc.limit == "*" && got.LimitHit != ""
			if tc.orProcs && got.LimitHit == "max_procs" && got.ExitCode == 125 {
				limitOK, got.ExitCode = true, tc.code
			}
			if !limitOK || got.ExitCode != tc.code || got.TimedOut != tc.timedOut ||
				!strings.Contains(got.stderr, tc.stderr) {
				t.Errorf("%s\n got: %+v stderr %q\nwant: limit %q code %d timedOut %v stderr containing %q",
					tc.cmd, got.Result, got.stderr, tc.limit, tc.code, tc.timedOut, tc.stderr)
			}
			// A limit stops the command within seconds; one with a
			// timeout may reach that first, on a loaded machine.
			if d := time.Since(start); d > tc.limits.Timeout+testenv.Slack(5*time.Second) {
				t.Errorf("took %v to stop", d)
			}
		})
	}
	// The backend still works after every limit.
	if got := sh(t, b, "echo alive"); got.stdout != "alive\n" {
		t.Fatalf("backend broken after limits: %+v", got)
	}
	if n, err := strconv.Atoi(strings.TrimSpace(sh(t, b, "wc -c < big").stdout)); err != nil || n > 10000 {
		t.Errorf("big holds %d bytes (%v), past the write limit of 10000", n, err)
	}
}

func TestOutputTruncation(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	got := execReq(t, b, sidecar.Request{
		Command: "for i in $(seq 1 1000); do echo 0123456789; done; echo after > done.txt; echo tail >&2",
		Limits:  sidecar.Limits{MaxOutputBytes: 1000},
	})
	if !got.Truncated || got.ExitCode != 0 || got.LimitHit != "" {
		t.Errorf("result %+v, want truncated and exit 0", got.Result)
	}
	if !strings.HasPrefix(got.stdout, strings.Repeat("0123456789\n", 90)) {
		t.Errorf("kept output does not start with the first 1000 bytes: %q", got.stdout[:50])
	}
	if !strings.Contains(got.stdout, "[sqlfs: output truncated at 1000 bytes]") {
		t.Errorf("no truncation marker in %q", got.stdout[len(got.stdout)-80:])
	}
	if n := len(got.stdout) + len(got.stderr); n > 1100 {
		t.Errorf("%d bytes of output passed a 1000 byte cap", n)
	}
	// The command kept running after truncation.
	if got := sh(t, b, "cat done.txt"); got.stdout != "after\n" {
		t.Errorf("command stopped at truncation: done.txt = %q", got.stdout)
	}
}

// The backend's budget is shared: execs each within their own limit stop
// when together they pass it, and what a finished exec held is released.
// So is a Memory given to several backends (a host's workspaces).
func TestBackendMemoryBudget(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "one backend", true: "two backends, one Memory"}[shared], func(t *testing.T) {
			var bs [2]*Backend
			if shared {
				m := NewMemory(20<<20, nil)
				bs[0], _ = newTestBackend(t, Options{Memory: m})
				bs[1], _ = newTestBackend(t, Options{Memory: m})
			} else {
				bs[0], _ = newTestBackend(t, Options{MaxMemoryBytes: 20 << 20})
				bs[1] = bs[0]
			}
			// Each holds 10 MB and more in sort for a second, within its own
			// limit and the budget, but not both at once.
			cmd := "{ yes " + strings.Repeat("y", 99) + " | head -c 10000000; sleep 1; } | sort | head -c 1 >/dev/null"
			var wg sync.WaitGroup
			results := make([]execOut, 2)
			for i := range results {
				wg.Go(func() {
					results[i] = execReq(t, bs[i], sidecar.Request{Command: cmd, Limits: sidecar.Limits{MaxMemoryBytes: 64 << 20}})
				})
			}
			wg.Wait()
			stopped := 0
			for _, r := range results {
				if r.LimitHit == "max_memory_bytes" {
					stopped++
					if !strings.Contains(r.stderr, "memory budget of 20971520 bytes") {
						t.Errorf("stderr %q does not name the backend budget", r.stderr)
					}
				}
			}
			if stopped == 0 {
				t.Errorf("two execs holding 10 MB each under a 20 MiB budget both finished: %+v", results)
			}
			if held := bs[0].mem.held.Load(); held != 0 {
				t.Errorf("%d bytes still charged after every exec ended", held)
			}
			if got := sh(t, bs[1], cmd); got.ExitCode != 0 {
				t.Errorf("one exec alone within the budget: %+v %q", got.Result, got.stderr)
			}
		})
	}
}

func TestCancelByCaller(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := b.Exec(ctx, sidecar.Request{Command: "while :; do :; done"})
	if err != nil || res.ExitCode != exitCancelled || res.TimedOut {
		t.Errorf("cancelled exec: %+v, %v", res, err)
	}
}

// TestStuckCommandDoesNotHang registers a command that ignores
// cancellation: Exec must still return after StopGrace.
func TestStuckCommandDoesNotHang(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	b, _ := newTestBackend(t, Options{StopGrace: 100 * time.Millisecond, Commands: map[string]builtin.Func{
		"sqlfs-test-stuck": func(context.Context, *builtin.Env, []string) int {
			<-release
			return 0
		},
		"sqlfs-test-panic": func(context.Context, *builtin.Env, []string) int {
			panic("boom")
		},
	}})
	start := time.Now()
	got := execReq(t, b, sidecar.Request{Command: "sqlfs-test-stuck", Timeout: 100 * time.Millisecond})
	if !got.TimedOut || time.Since(start) > testenv.Slack(3*time.Second) {
		t.Errorf("stuck command: %+v after %v", got.Result, time.Since(start))
	}
	got = sh(t, b, "sqlfs-test-panic; echo after $?")
	if got.stdout != "after 2\n" || !strings.Contains(got.stderr, "internal error: boom") {
		t.Errorf("panicking command: %+v", got)
	}
}

// TestBrokenPipeStopsWriter: a command writing into a pipe whose reader
// has exited stops, as SIGPIPE would stop a process.
func TestBrokenPipeStopsWriter(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	start := time.Now()
	got := execReq(t, b, sidecar.Request{Command: "yes | head -n 2; yes 1 | cat | head -n 1; " +
		"while :; do echo loop; done | head -n 1; for ((;;)) { printf 'x\\n'; } | head -n 1; " +
		"while :; do pwd; done | head -n 1; while :; do dirs; done | head -n 1; echo after",
		Timeout: 20 * time.Second})
	if got.stdout != "y\ny\n1\nloop\nx\n/workspace\n/workspace\nafter\n" || got.ExitCode != 0 || got.TimedOut {
		t.Errorf("got %+v %q", got.Result, got.stdout)
	}
	if d := time.Since(start); d > testenv.Slack(10*time.Second) {
		t.Errorf("writers took %v to notice the closed pipe", d)
	}
}

// TestConcurrentExec runs commands of one backend at once: each has its own
// interpreter and budget over the shared workspace and /tmp.
func TestConcurrentExec(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	const n = 8
	errs := make(chan string, n)
	for i := range n {
		go func() {
			cmd := fmt.Sprintf("mkdir -p d%d && cd d%d && for j in 1 2 3; do echo $j > f$j; done && cat f* | wc -l && echo x >> /tmp/shared", i, i)
			got := execReq(t, b, sidecar.Request{Command: cmd, Limits: sidecar.Limits{MaxCommands: 100}})
			if got.stdout != "3\n" || got.ExitCode != 0 {
				errs <- fmt.Sprintf("exec %d: %+v %q %q", i, got.Result, got.stdout, got.stderr)
				return
			}
			errs <- ""
		}()
	}
	for range n {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	if got := sh(t, b, "wc -l < /tmp/shared"); got.stdout != "8\n" {
		t.Errorf("/tmp/shared has %q lines, want 8", got.stdout)
	}
}

// `< file` feeds the interpreter through a pipe. Once the reader stops (a
// cancelled `while read` loop), the copier must end with the exec, not
// stay blocked on the full pipe until a collection finalizes it.
func TestRedirectedInputCopierStops(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	sh(t, b, "seq 1 300000 > big")
	// No collection: it would close the lost pipe and end the copier.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	baseline := runtime.NumGoroutine()
	got := execReq(t, b, sidecar.Request{Command: "while read -r l; do :; done < big",
		Limits: sidecar.Limits{Timeout: 100 * time.Millisecond}})
	if !got.TimedOut {
		t.Fatalf("the loop was not stopped: %+v", got.Result)
	}
	settled(t, baseline)
}

// TestRequestCannotRaiseLimits: the backend's limits (the operator's
// --exec-memory) are a ceiling: a request may lower them, and one asking
// for more gets the backend's.
func TestRequestCannotRaiseLimits(t *testing.T) {
	b, _ := newTestBackend(t, Options{Limits: sidecar.Limits{MaxMemoryBytes: 1 << 20, MaxOutputBytes: 1000}})
	cmd := `x=$(yes | head -c 4000000); echo ${#x}; yes | head -c 5000`
	for _, tc := range []struct {
		name   string
		limits sidecar.Limits
		mem    string
	}{
		{"asks for more", sidecar.Limits{MaxMemoryBytes: 1 << 30, MaxOutputBytes: 1 << 20}, "memory limit of 1048576 bytes exceeded"},
		{"asks for nothing", sidecar.Limits{}, "memory limit of 1048576 bytes exceeded"},
		{"asks for less", sidecar.Limits{MaxMemoryBytes: 64 << 10, MaxOutputBytes: 100}, "memory limit of 65536 bytes exceeded"},
	} {
		r := execReq(t, b, sidecar.Request{Command: cmd, Limits: tc.limits})
		if r.LimitHit != "max_memory_bytes" || !strings.Contains(r.stderr, tc.mem) {
			t.Errorf("%s: limit %q stderr %q; want %q", tc.name, r.LimitHit, r.stderr, tc.mem)
		}
	}
	r := execReq(t, b, sidecar.Request{Command: "yes | head -c 5000", Limits: sidecar.Limits{MaxOutputBytes: 1 << 20}})
	if !r.Truncated || !strings.Contains(r.stdout+r.stderr, "truncated at 1000 bytes") {
		t.Errorf("output asking for more than the backend's 1000 bytes: %d bytes, truncated %v", len(r.stdout), r.Truncated)
	}
}
