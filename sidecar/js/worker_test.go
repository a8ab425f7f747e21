package js

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sidecar"
)

// ownerRSS is this process's resident size.
func ownerRSS(t testing.TB) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := strconv.ParseInt(strings.Fields(string(b))[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// peakRSS samples the owner's RSS until stop is called and returns the
// highest figure seen.
func peakRSS(t testing.TB) (stop func() int64) {
	done := make(chan struct{})
	var peak int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			peak = max(peak, ownerRSS(t))
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	})
	return func() int64 { close(done); wg.Wait(); return peak }
}

// TestHostileProgramsInWorkers runs the programs that used to end or
// bloat the owner (issue 23) against a live owner: each must leave the
// owner's RSS within 64 MiB of where it was, end no later than 100 ms
// past its deadline, and leave no process of its own behind.
func TestHostileProgramsInWorkers(t *testing.T) {
	w := NewWorkers(1, nil)
	var mu sync.Mutex
	var pid int
	w.onStart = func(p int) { mu.Lock(); pid = p; mu.Unlock() }
	b, _, _ := newTestBackend(t, Options{Runner: w, MaxHeapBytes: 128 << 20})
	const deadline = time.Second
	memory := func(out execOut) bool {
		return out.ExitCode == 134 && strings.Contains(out.stderr, "JavaScript heap out of memory") && strings.Count(strings.TrimSpace(out.stderr), "\n") == 0
	}
	for _, tc := range []struct {
		name, code string
		check      func(out execOut) bool
	}{
		{"Buffer.alloc 30e9", `Buffer.alloc(30e9)`, memory},
		{"ArrayBuffer 30e9", `new ArrayBuffer(30e9)`, memory},
		{"Float64Array 4e9", `new Float64Array(4e9)`, memory},
		{"sort of 2**32-1 holes", `const a = []; a.length = 2**32 - 1; a.sort()`, memory},
		{"recursion through forEach", `function r() { [1].forEach(r) } r()`, func(out execOut) bool {
			// goja may overflow its stack first (an uncaught RangeError) or
			// run into the deadline; either way it ends.
			return out.TimedOut && out.ExitCode == 124 || out.ExitCode == 1 || out.ExitCode == 134
		}},
		{"read of a 12 GB sparse file", `const fs = require('fs'); fs.writeFileSync('sparse', ''); fs.truncateSync('sparse', 12e9); fs.readFileSync('sparse')`,
			func(out execOut) bool {
				return out.ExitCode == 1 && strings.Contains(out.stderr, "File size (12000000000) is greater than 2 GiB")
			}},
		{"read of a 2 GB sparse file", `const fs = require('fs'); fs.writeFileSync('sparse2', ''); fs.truncateSync('sparse2', 2**31 - 1); fs.readFileSync('sparse2')`,
			func(out execOut) bool {
				// Without RLIMIT_DATA (race builds) the 2 GiB buffer is granted
				// and filled slower than the deadline.
				return memory(out) || raceEnabled && out.TimedOut
			}},
		{"busy loop", `for (;;) {}`, func(out execOut) bool { return out.TimedOut && out.ExitCode == 124 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.waitIdle() // the deadline is the program's, not a worker's start
			runtime.GC()
			before := ownerRSS(t)
			stop := peakRSS(t)
			start := time.Now()
			out := run(t, b, sidecar.Request{Command: tc.code, Limits: sidecar.Limits{Timeout: deadline}})
			took := time.Since(start)
			peak := stop()
			if !tc.check(out) {
				t.Errorf("exit %d, timed out %v, stdout %.200q, stderr %.400q", out.ExitCode, out.TimedOut, out.stdout, out.stderr)
			}
			if grew := peak - before; grew > 64<<20 {
				t.Errorf("owner RSS grew by %d MiB (%d → peak %d MiB)", grew>>20, before>>20, peak>>20)
			}
			// A race build's worker takes longer to tear down.
			if slack := 100 * time.Millisecond; took > deadline+slack && !(raceEnabled && took < deadline+5*slack) {
				t.Errorf("ended %v after its start, deadline %v", took, deadline)
			}
			mu.Lock()
			p := pid
			mu.Unlock()
			if p == 0 {
				t.Fatal("no worker ran the program")
			}
			// Killed before the result, it runs no code after it: its user
			// CPU time stands still until it is reaped (its teardown, off the
			// exec's path, can take a while on a loaded machine). The kernel
			// rescales the user/system split as the teardown's system time
			// grows, which can move a tick or two; a program still running
			// would gain a hundred a second.
			first := userTicks(p)
			for end := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				now := userTicks(p)
				if now < 0 {
					break
				}
				if now > first+2 {
					t.Errorf("worker %d ran %d ticks of user CPU after the exec", p, now-first)
					break
				}
				if time.Now().After(end) {
					t.Errorf("worker %d still there 10 s after the exec", p)
					break
				}
			}
			t.Logf("exit %d in %v, owner RSS %d → peak %d MiB", out.ExitCode, took.Round(time.Millisecond), before>>20, peak>>20)
		})
	}
	// The owner is alive and well.
	if out := run(t, b, sidecar.Request{Command: `console.log(6 * 7)`}); out.stdout != "42\n" || out.ExitCode != 0 {
		t.Errorf("after the hostile programs: exit %d, stdout %q, stderr %q", out.ExitCode, out.stdout, out.stderr)
	}
}

// userTicks is a process's user CPU time in clock ticks, -1 once it is
// gone (or a zombie: it runs nothing more).
func userTicks(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if f[0] == "Z" || f[0] == "X" {
		return -1
	}
	n, _ := strconv.ParseInt(f[11], 10, 64)
	return n
}

// TestConfinedProcess runs this test binary confined as a worker is (the
// constructor's SQLFS_JS_CONFINE) and checks from inside that the host's
// files, the network and new processes are out of reach.
func TestConfinedProcess(t *testing.T) {
	if os.Getenv("SQLFS_JS_CONFINE") != "" {
		for name, try := range map[string]func() error{
			"read /etc/hostname": func() error { _, err := os.ReadFile("/etc/hostname"); return err },
			"list /":             func() error { _, err := os.ReadDir("/"); return err },
			"create /tmp/x":      func() error { return os.WriteFile(filepath.Join(os.TempDir(), "sqlfs-confined"), nil, 0o600) },
			"dial tcp":           func() error { c, err := net.Dial("tcp", "127.0.0.1:9"); closeIf(c); return err },
			"dial unix":          func() error { c, err := net.Dial("unix", "/run/sqlfs-none.sock"); closeIf(c); return err },
			"run /bin/true":      func() error { return exec.Command("/bin/true").Run() },
		} {
			if err := try(); err == nil || errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: %v, want it refused", name, err)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestConfinedProcess$")
	cmd.Env = append(os.Environ(), "SQLFS_JS_CONFINE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("confined: %v\n%s", err, out)
	}
}

func closeIf(c net.Conn) {
	if c != nil {
		c.Close()
	}
}

// TestWorkerConfinement: a program in a worker has no host file system and
// no network even through a bug in the engine would reach for them; what
// the worker process itself may do is checked from inside it.
func TestWorkerConfinement(t *testing.T) {
	w := NewWorkers(1, nil)
	wk, err := w.start()
	if err != nil {
		t.Fatal(err)
	}
	defer wk.kill()
	if wk.abi < 1 {
		t.Fatalf("worker confined with Landlock ABI %d", wk.abi)
	}
	pid := strconv.Itoa(wk.cmd.Process.Pid)
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2"} {
		if !strings.Contains(string(status), want) {
			t.Errorf("worker status lacks %q", want)
		}
	}
	self, _ := os.Readlink("/proc/self/ns/net")
	theirs, err := os.Readlink("/proc/" + pid + "/ns/net")
	if err != nil || self == theirs {
		t.Errorf("worker network namespace %q (%v), owner's %q", theirs, err, self)
	}
}
