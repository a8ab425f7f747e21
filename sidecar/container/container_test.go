package container

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/manager"
	"github.com/opencontainers/runc/libcontainer"

	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar"
)

const testUID, testGID = 1000, 1000

// requireContainers skips unless containers can run here: root, cgroups,
// and a static busybox for the test rootfs.
func requireContainers(t testing.TB) {
	t.Helper()
	fusetest.Skip(t)
	if testRootfs == "" {
		fusetest.Require(t, "no test rootfs", rootfsErr)
	}
	_, err := os.Stat("/sys/fs/cgroup")
	fusetest.Require(t, "no cgroup filesystem", err)
}

// newTestBackend returns a backend over a fresh workspace owned by the test
// user; it is closed in Cleanup even when the test fails.
func newTestBackend(t testing.TB, edit func(*Options)) (*Backend, string) {
	t.Helper()
	requireContainers(t)
	ws := t.TempDir() // root's, 0700: New gives it to the user
	cfg := Options{
		Workspace: ws,
		Rootfs:    testRootfs,
		StateDir:  t.TempDir(),
		User:      fmt.Sprintf("%d:%d", testUID, testGID),
		Logger:    testLogger(t),
	}
	if edit != nil {
		edit(&cfg)
	}
	b, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b, ws
}

// testLogger logs as t.Log does: shown for failures and with -v. Benchmarks
// log warnings only, to keep their result lines readable.
func testLogger(t testing.TB) *slog.Logger {
	opts := &slog.HandlerOptions{}
	if _, ok := t.(*testing.B); ok {
		opts.Level = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(t.Output(), opts))
}

type run struct {
	res    sidecar.Result
	stdout string
	stderr string
	err    error
}

func execIn(t testing.TB, b *Backend, req sidecar.Request) run {
	t.Helper()
	var out, errb bytes.Buffer
	req.Stdout, req.Stderr = &out, &errb
	res, err := b.Exec(context.Background(), req)
	return run{res: res, stdout: out.String(), stderr: errb.String(), err: err}
}

func TestExec(t *testing.T) {
	b, ws := newTestBackend(t, nil)
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o777); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		req       sidecar.Request
		wantOut   string
		wantErr   string
		wantCode  int
		wantErrIs error
	}{
		{name: "stdout", req: sidecar.Request{Command: "echo hello"}, wantOut: "hello\n"},
		{name: "stderr and exit code", req: sidecar.Request{Command: "echo oops >&2; exit 3"}, wantErr: "oops\n", wantCode: 3},
		{name: "killed by signal", req: sidecar.Request{Command: "kill -9 $$"}, wantCode: 137},
		{name: "env", req: sidecar.Request{Command: `echo "$GREETING $HOME"`, Env: map[string]string{"GREETING": "hi there"}}, wantOut: "hi there /tmp\n"},
		{name: "env overrides base", req: sidecar.Request{Command: `echo "$HOME"`, Env: map[string]string{"HOME": "/workspace"}}, wantOut: "/workspace\n"},
		{name: "host env not leaked", req: sidecar.Request{Command: `echo "[$GOPATH]"`}, wantOut: "[]\n"},
		{name: "default cwd", req: sidecar.Request{Command: "pwd"}, wantOut: "/workspace\n"},
		{name: "relative cwd", req: sidecar.Request{Command: "pwd", Dir: "sub"}, wantOut: "/workspace/sub\n"},
		{name: "absolute cwd", req: sidecar.Request{Command: "pwd", Dir: "/workspace/sub"}, wantOut: "/workspace/sub\n"},
		{name: "cwd outside workspace", req: sidecar.Request{Command: "pwd", Dir: "/workspace/../etc"}, wantErrIs: ErrBadDir},
		{name: "missing cwd", req: sidecar.Request{Command: "pwd", Dir: "nope"}, wantErrIs: ErrNotStarted},
		{name: "stdin", req: sidecar.Request{Command: "tr a-z A-Z", Stdin: strings.NewReader("shout\n")}, wantOut: "SHOUT\n"},
		{name: "no stdin reads empty", req: sidecar.Request{Command: "wc -c"}, wantOut: "0\n"},
		{name: "uid", req: sidecar.Request{Command: "id -u; id -g"}, wantOut: "1000\n1000\n"},
		{name: "tmp is writable", req: sidecar.Request{Command: "echo x > /tmp/f && cat /tmp/f"}, wantOut: "x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := execIn(t, b, tt.req)
			if tt.wantErrIs != nil {
				if !errors.Is(got.err, tt.wantErrIs) {
					t.Fatalf("err = %v, want %v", got.err, tt.wantErrIs)
				}
				return
			}
			if got.err != nil {
				t.Fatal(got.err)
			}
			if got.stdout != tt.wantOut || got.stderr != tt.wantErr || got.res.ExitCode != tt.wantCode {
				t.Errorf("got stdout %q stderr %q code %d; want %q %q %d",
					got.stdout, got.stderr, got.res.ExitCode, tt.wantOut, tt.wantErr, tt.wantCode)
			}
		})
	}
}

func TestWorkspaceFilesOwnedByUser(t *testing.T) {
	b, ws := newTestBackend(t, nil)
	fi, err := os.Stat(ws)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != testUID || st.Gid != testGID || fi.Mode().Perm()&0o700 != 0o700 {
		t.Errorf("workspace root %d:%d %v: New must give it to the user", st.Uid, st.Gid, fi.Mode())
	}
	got := execIn(t, b, sidecar.Request{Command: "mkdir d && echo data > d/f"})
	if got.err != nil || got.res.ExitCode != 0 {
		t.Fatalf("exec: %v %+v %s", got.err, got.res, got.stderr)
	}
	for _, p := range []string{"d", "d/f"} {
		fi, err := os.Stat(filepath.Join(ws, p))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != testUID || st.Gid != testGID {
			t.Errorf("%s owned by %d:%d, want %d:%d", p, st.Uid, st.Gid, testUID, testGID)
		}
	}
	if data, err := os.ReadFile(filepath.Join(ws, "d/f")); err != nil || string(data) != "data\n" {
		t.Errorf("host sees %q, %v", data, err)
	}
}

func TestStreaming(t *testing.T) {
	b, _ := newTestBackend(t, nil)
	r, w := ioPipe()
	done := make(chan run, 1)
	go func() {
		res, err := b.Exec(context.Background(), sidecar.Request{Command: "echo first; read x; echo second", Stdin: strings.NewReader("go\n"), Stdout: w})
		w.Close()
		done <- run{res: res, err: err}
	}()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || line != "first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	if got := <-done; got.err != nil || got.res.ExitCode != 0 {
		t.Fatalf("%+v", got)
	}
}

func TestOutputLimit(t *testing.T) {
	b, _ := newTestBackend(t, nil)
	got := execIn(t, b, sidecar.Request{
		Command: "yes abcdefgh | head -c 100000; echo done >&2",
		Limits:  sidecar.Limits{MaxOutputBytes: 1000},
	})
	if got.err != nil || got.res.ExitCode != 0 {
		t.Fatalf("%v %+v", got.err, got.res)
	}
	marker := "\n[sqlfs: output truncated at 1000 bytes]\n"
	if !got.res.Truncated || got.res.LimitHit != "" {
		t.Errorf("result %+v, want truncated, no limit hit: the command ran to its end", got.res)
	}
	if len(got.stdout) != 1000+len(marker) || !strings.HasSuffix(got.stdout, marker) {
		t.Errorf("stdout has %d bytes, want 1000 and the marker", len(got.stdout))
	}
	if got.stderr != "" {
		t.Errorf("stderr %q: output past the limit must be dropped", got.stderr)
	}
}

// containerProcs lists the command lines of the processes in the container.
func containerProcs(t *testing.T, b *Backend) []string {
	t.Helper()
	got := execIn(t, b, sidecar.Request{Command: "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done"})
	if got.err != nil {
		t.Fatal(got.err)
	}
	return strings.Split(strings.TrimSpace(got.stdout), "\n")
}

func countMatching(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

func TestTimeoutKillsTree(t *testing.T) {
	b, _ := newTestBackend(t, nil)
	start := time.Now()
	// setsid escapes the process group: only the exec's cgroup still holds it.
	got := execIn(t, b, sidecar.Request{
		Command: "echo before; setsid sleep 1001 & sleep 1001 & sleep 1000",
		Timeout: 300 * time.Millisecond,
	})
	if got.err != nil {
		t.Fatal(got.err)
	}
	if !got.res.TimedOut || got.res.LimitHit != "timeout" || got.res.ExitCode != exitTimeout {
		t.Errorf("result %+v, want timed out with %d", got.res, exitTimeout)
	}
	if got.stdout != "before\n" {
		t.Errorf("stdout %q: output from before the timeout is lost", got.stdout)
	}
	if !strings.Contains(got.stderr, "timed out") {
		t.Errorf("stderr %q does not say the command timed out", got.stderr)
	}
	if d := time.Since(start); d > testenv.Slack(5*time.Second) {
		t.Errorf("timed-out exec took %v", d)
	}
	var procs []string
	for range 100 { // killed orphans are reaped by pid 1 shortly after
		procs = containerProcs(t, b)
		if countMatching(procs, "sleep 100") == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("processes of the timed-out exec survive: %q", procs)
}

func TestContextCancelKills(t *testing.T) {
	b, _ := newTestBackend(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := b.Exec(ctx, sidecar.Request{Command: "sleep 1000"})
	if !errors.Is(err, context.DeadlineExceeded) || res.ExitCode != exitCancelled {
		t.Errorf("got %+v, %v; want %d and the context's error", res, err, exitCancelled)
	}
}

func TestDaemonDoesNotHoldExec(t *testing.T) {
	b, _ := newTestBackend(t, nil)
	tests := []struct {
		name string
		cmd  string
	}{
		{"background job keeps stdout", "sleep 1000 & echo started"},
		{"double fork with setsid", "(setsid sleep 1000 &) ; echo started"},
		{"redirected daemon", "sleep 1000 >/dev/null 2>&1 & echo started"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			got := execIn(t, b, sidecar.Request{Command: tt.cmd, Timeout: 10 * time.Second})
			if got.err != nil || got.res.TimedOut || got.stdout != "started\n" {
				t.Fatalf("%+v stdout %q err %v", got.res, got.stdout, got.err)
			}
			if d := time.Since(start); d > testenv.Slack(2*time.Second) {
				t.Errorf("exec took %v: the daemon held it open", d)
			}
		})
	}
	// The daemons ended with their exec.
	if n := countMatching(containerProcs(t, b), "sleep 1000"); n != 0 {
		t.Errorf("%d daemons outlived their exec: %q", n, containerProcs(t, b))
	}
}

func TestIsolation(t *testing.T) {
	b, _ := newTestBackend(t, nil)
	tests := []struct {
		name, cmd, want string
	}{
		{"only loopback", "ls /sys/class/net", "lo\n"},
		{"rootfs read-only", "touch /x 2>/dev/null || echo denied", "denied\n"},
		{"etc read-only", "echo x >> /etc/passwd 2>/dev/null || echo denied", "denied\n"},
		{"pid 1 is the container's", "head -c 10 /proc/1/cmdline | tr '\\0' ' '", "/bin/sh -c"},
		{"host processes invisible", "ls -d /proc/[0-9]* | wc -l | awk '$1 < 10 {print \"few\"}'", "few\n"},
		{"init runs as root, commands do not", "awk '/^Uid/ {print $2}' /proc/1/status /proc/self/status", "0\n1000\n"},
		{"no capabilities", "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status | awk '{print $2}' | sort -u", "0000000000000000\n"},
		{"no_new_privs", "grep NoNewPrivs /proc/self/status | awk '{print $2}'", "1\n"},
		{"hostname", "hostname", "sqlfs\n"},
		{"cannot mount", "mount -t tmpfs t /tmp 2>/dev/null || echo denied", "denied\n"},
	}
	if seccompSupported() {
		tests = append(tests,
			struct{ name, cmd, want string }{"seccomp filter", "grep '^Seccomp:' /proc/self/status | awk '{print $2}'", "2\n"},
			struct{ name, cmd, want string }{"no user namespaces", "unshare -U true 2>/dev/null || echo denied", "denied\n"},
		)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := execIn(t, b, sidecar.Request{Command: tt.cmd})
			if got.err != nil || got.stdout != tt.want {
				t.Errorf("stdout %q stderr %q err %v; want %q", got.stdout, got.stderr, got.err, tt.want)
			}
		})
	}
}

func TestNetworkOption(t *testing.T) {
	b, _ := newTestBackend(t, func(c *Options) { c.Network = true })
	host, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, e := range host {
		want.WriteString(e.Name() + "\n")
	}
	got := execIn(t, b, sidecar.Request{Command: "ls -1 /sys/class/net"})
	if got.err != nil || got.stdout != want.String() {
		t.Errorf("with Network the container sees interfaces %q (%v), the host %q", got.stdout, got.err, want.String())
	}
}

func TestCgroupLimits(t *testing.T) {
	b, _ := newTestBackend(t, func(c *Options) {
		c.Pids = 20
		c.MemoryBytes = 256 << 20
		c.CPUs = 0.5
	})
	got := execIn(t, b, sidecar.Request{Command: "for i in $(seq 30); do sleep 2 & done; echo end"})
	if got.err != nil || got.res.ExitCode == 0 || !strings.Contains(got.stderr, "fork") {
		t.Errorf("30 processes under a limit of 20: %+v stdout %q stderr %q err %v", got.res, got.stdout, got.stderr, got.err)
	}
	st, err := b.ctr.c.State()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ ctrl, file, value string }{
		{"pids", "pids.max", "20"},
		{"memory", "memory.limit_in_bytes", "268435456"},
		{"cpu", "cpu.cfs_quota_us", "50000"},
	}
	if cgroups.IsCgroup2UnifiedMode() {
		want = []struct{ ctrl, file, value string }{
			{"", "pids.max", "20"},
			{"", "memory.max", "268435456"},
			{"", "cpu.max", "50000 100000"},
		}
	}
	for _, w := range want {
		v, err := cgroups.ReadFile(st.CgroupPaths[w.ctrl], w.file)
		if err != nil || strings.TrimSpace(v) != w.value {
			t.Errorf("%s = %q (%v), want %s", w.file, v, err, w.value)
		}
	}
}

// state reads what the host holds for the backend's running container.
type hostState struct {
	id, stateDir string
	initPid      int
	cgroups      []string
}

func runningState(t *testing.T, b *Backend) hostState {
	t.Helper()
	b.mu.Lock()
	r := b.ctr
	b.mu.Unlock()
	if r == nil {
		t.Fatal("no running container")
	}
	st, err := r.c.State()
	if err != nil {
		t.Fatal(err)
	}
	hs := hostState{id: r.c.ID(), stateDir: filepath.Join(b.cfg.StateDir, r.c.ID()), initPid: st.InitProcessPid}
	for _, p := range st.CgroupPaths {
		hs.cgroups = append(hs.cgroups, p)
	}
	return hs
}

func assertGone(t *testing.T, hs hostState) {
	t.Helper()
	if _, err := os.Stat(hs.stateDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state dir %s still there (%v)", hs.stateDir, err)
	}
	for _, cg := range hs.cgroups {
		if _, err := os.Stat(cg); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup %s still there (%v)", cg, err)
		}
	}
	if err := syscall.Kill(hs.initPid, 0); err == nil {
		t.Errorf("container init %d still alive", hs.initPid)
	}
}

func TestCloseCleansUp(t *testing.T) {
	b, _ := newTestBackend(t, nil)
	// A daemon keeps its exec cgroup busy: Close must remove it all the same.
	if got := execIn(t, b, sidecar.Request{Command: "setsid sleep 1000 >/dev/null 2>&1 &"}); got.err != nil {
		t.Fatal(got.err)
	}
	hs := runningState(t, b)
	if len(hs.cgroups) == 0 {
		t.Fatal("container has no cgroups")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, hs)
	if _, err := b.Exec(context.Background(), sidecar.Request{Command: "true"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Exec after Close: %v, want ErrClosed", err)
	}
}

// Close must not hang on an init that is never reaped (it did once, in
// stopLocked's wait): it gives up after initExitWait and removes the
// container all the same.
func TestCloseDoesNotWaitForEverOnInit(t *testing.T) {
	b, _ := newTestBackend(t, nil)
	if got := execIn(t, b, sidecar.Request{Command: "true"}); got.err != nil {
		t.Fatal(got.err)
	}
	hs := runningState(t, b)
	defer func(d time.Duration) { initExitWait = d }(initExitWait)
	initExitWait = 200 * time.Millisecond
	b.mu.Lock()
	reaped := b.ctr.exited
	stuck := *b.ctr // the same container, seen through a reaper that never reports
	stuck.exited = make(chan struct{})
	b.ctr = &stuck
	b.mu.Unlock()
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testenv.Slack(30 * time.Second)):
		t.Fatal("Close still waits for init")
	}
	<-reaped
	assertGone(t, hs)
}

func TestCloseOnContextEnd(t *testing.T) {
	requireContainers(t)
	ctx, cancel := context.WithCancel(context.Background())
	b, _ := newTestBackend(t, nil)
	// Rebuild with a cancellable context over the same config.
	b2, err := New(ctx, b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b2.Close() })
	if got := execIn(t, b2, sidecar.Request{Command: "true"}); got.err != nil {
		t.Fatal(got.err)
	}
	hs := runningState(t, b2)
	cancel()
	<-b2.closing
	assertGone(t, hs)
}

func TestIdleStop(t *testing.T) {
	b, _ := newTestBackend(t, func(c *Options) { c.IdleTimeout = 100 * time.Millisecond })
	if got := execIn(t, b, sidecar.Request{Command: "echo 1 > /workspace/n"}); got.err != nil {
		t.Fatal(got.err)
	}
	hs := runningState(t, b)
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.mu.Lock()
		stopped := b.ctr == nil
		b.mu.Unlock()
		if stopped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("idle container not stopped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	assertGone(t, hs)
	// The next exec starts a fresh container over the same workspace.
	got := execIn(t, b, sidecar.Request{Command: "cat /workspace/n"})
	if got.err != nil || got.stdout != "1\n" {
		t.Fatalf("after idle stop: %q %v", got.stdout, got.err)
	}
	if runningState(t, b).id == hs.id {
		t.Error("container id reused")
	}
}

func TestConcurrentExecsShareContainer(t *testing.T) {
	b, _ := newTestBackend(t, nil)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			got := execIn(t, b, sidecar.Request{Command: fmt.Sprintf("echo %d > /workspace/f%d; cat /proc/1/cmdline >/dev/null; echo ok", i, i)})
			if got.err != nil || got.stdout != "ok\n" {
				errs <- fmt.Errorf("exec %d: %q %v", i, got.stdout, got.err)
				return
			}
			errs <- nil
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	entries, err := os.ReadDir(b.cfg.StateDir)
	if err != nil || len(entries) != 1 {
		t.Errorf("state dir holds %d containers (%v), want 1", len(entries), err)
	}
}

// crashHelperEnv makes the test binary a sidecar that starts a container,
// prints its host state as JSON and waits to be killed.
const crashHelperEnv = "SQLFS_CONTAINER_CRASH_HELPER"

type crashReport struct {
	ID      string
	InitPid int
	Cgroups []string
}

func crashHelper() int {
	var cfg Options
	if err := json.Unmarshal([]byte(os.Getenv(crashHelperEnv)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, err := New(context.Background(), cfg)
	if err == nil {
		_, err = b.Exec(context.Background(), sidecar.Request{Command: "setsid sleep 1000 >/dev/null 2>&1 &"})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st, err := b.ctr.c.State()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	rep := crashReport{ID: b.ctr.c.ID(), InitPid: st.InitProcessPid}
	for _, p := range st.CgroupPaths {
		rep.Cgroups = append(rep.Cgroups, p)
	}
	_ = json.NewEncoder(os.Stdout).Encode(rep)
	select {} // until SIGKILL
}

func TestCrashedOwnerCleanedAtNextStart(t *testing.T) {
	requireContainers(t)
	ws := t.TempDir()
	cfg := Options{Workspace: ws, Rootfs: testRootfs, StateDir: t.TempDir(), User: "1000:1000"}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+string(js))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var rep crashReport
	if err := json.NewDecoder(out).Decode(&rep); err != nil {
		t.Fatalf("helper report: %v", err)
	}
	hs := hostState{id: rep.ID, stateDir: filepath.Join(cfg.StateDir, rep.ID), initPid: rep.InitPid, cgroups: rep.Cgroups}
	// Cleanup must not depend on this test passing.
	t.Cleanup(func() {
		if c, err := libcontainer.Load(cfg.StateDir, rep.ID); err == nil {
			_ = destroy(c)
		}
	})

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// The parent-death signal takes the container down with its owner.
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(hs.initPid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("container init %d outlived its owner", hs.initPid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := os.Stat(hs.stateDir); err != nil {
		t.Fatalf("crash left no state dir to clean (%v): the test proves nothing", err)
	}

	b, _ := newTestBackend(t, func(c *Options) { c.StateDir = cfg.StateDir })
	assertGone(t, hs)
	if got := execIn(t, b, sidecar.Request{Command: "echo alive"}); got.err != nil || got.stdout != "alive\n" {
		t.Errorf("after cleanup: %q %v", got.stdout, got.err)
	}
}

func TestStaleStateWithoutContainer(t *testing.T) {
	requireContainers(t)
	stateDir := t.TempDir()
	// A pid that cannot be alive: beyond pid_max.
	stale := filepath.Join(stateDir, idPrefix+"99999999-1-1")
	mine := filepath.Join(stateDir, idPrefix+mustOwner(t)+"-999")
	other := filepath.Join(stateDir, "not-ours")
	for _, d := range []string{stale, mine, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	newTestBackend(t, func(c *Options) { c.StateDir = stateDir })
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale dir of a dead owner kept: %v", err)
	}
	for _, d := range []string{mine, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: only dead owners' containers may go", d)
		}
	}
}

func mustOwner(t *testing.T) string {
	o, err := ownerTag(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestContainerDir(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{"", "/workspace", false},
		{".", "/workspace", false},
		{"a/b", "/workspace/a/b", false},
		{"/workspace/a/../b", "/workspace/b", false},
		{"/workspacex", "", true},
		{"..", "", true},
		{"/tmp", "", true},
	}
	for _, tt := range tests {
		got, err := containerDir(tt.in)
		if tt.bad != (err != nil) || got != tt.want {
			t.Errorf("containerDir(%q) = %q, %v", tt.in, got, err)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []Options{
		{},
		{Workspace: dir, Rootfs: filepath.Join(dir, "missing")},
		{Workspace: dir, Rootfs: dir}, // no /bin/sh
		{Workspace: dir, Rootfs: testRootfs, User: "agent"},
	}
	for _, cfg := range tests {
		if _, err := New(context.Background(), cfg); !errors.Is(err, ErrBadConfig) {
			t.Errorf("New(%+v) = %v, want ErrBadConfig", cfg, err)
		}
	}
}

func ioPipe() (*os.File, *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	return r, w
}

func TestEnsureWritable(t *testing.T) {
	if os.Geteuid() != 0 {
		fusetest.Require(t, "this test chowns files", errors.New("not root"))
	}
	tests := []struct {
		name     string
		uid, gid int
		mode     os.FileMode
		wantUID  uint32
		wantMode os.FileMode
	}{
		{"root's 0755 is given away", 0, 0, 0o755, testUID, 0o755},
		{"root's 0700 is given away", 0, 0, 0o700, testUID, 0o700},
		{"world-writable stays root's", 0, 0, 0o777, 0, 0o777},
		{"group-writable for the user's group stays", 0, testGID, 0o775, 0, 0o775},
		{"user's read-only root gets write", testUID, testGID, 0o555, testUID, 0o755},
		{"user's 0755 is left alone", testUID, testGID, 0o755, testUID, 0o755},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Chown(dir, tt.uid, tt.gid); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := ensureWritable(dirRoot(dir), dir, testUID, testGID, slog.Default()); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != tt.wantUID || fi.Mode().Perm() != tt.wantMode {
				t.Errorf("got uid %d mode %v, want %d %v", uid, fi.Mode().Perm(), tt.wantUID, tt.wantMode)
			}
		})
	}
}

func TestOwnerAlive(t *testing.T) {
	if !ownerAlive(mustOwner(t)) {
		t.Error("this process is not alive")
	}
	cmd := exec.Command("/bin/true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Wait() })
	tag, err := ownerTag(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// Not yet waited for, the child stays a zombie: its /proc entry is there.
	for deadline := time.Now().Add(5 * time.Second); ; {
		if _, state, err := procStat(cmd.Process.Pid); err != nil || state == "Z" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("child did not exit")
		}
		time.Sleep(time.Millisecond)
	}
	if ownerAlive(tag) {
		t.Error("a zombie counts as alive")
	}
	self := strings.SplitN(mustOwner(t), "-", 2)
	for _, tag := range []string{self[0] + "-1", "notapid-1", "99999999-1"} {
		if ownerAlive(tag) {
			t.Errorf("%q counts as alive", tag)
		}
	}
}

// makeCgroups creates empty cgroups for container id in every hierarchy,
// as a container leaves them, and removes them in Cleanup.
func makeCgroups(t *testing.T, id string) []string {
	t.Helper()
	cm, err := manager.New(&cgroups.Cgroup{Path: cgroupParent + "/" + id, Resources: &cgroups.Resources{}})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, d := range cm.GetPaths() {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	t.Cleanup(func() { _ = cm.Destroy() })
	return dirs
}

func TestStaleCgroupsWithoutState(t *testing.T) {
	requireContainers(t)
	dead := makeCgroups(t, idPrefix+"99999999-1-7")
	live := makeCgroups(t, idPrefix+mustOwner(t)+"-999")
	newTestBackend(t, nil) // a fresh StateDir: only the cgroups tell
	for _, d := range dead {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("dead owner's cgroup %s kept (%v)", d, err)
		}
	}
	for _, d := range live {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("live owner's cgroup %s removed (%v)", d, err)
		}
	}
}

// TestKillWhenFreezeIsSlow: a freeze that has not taken when the kill
// stops waiting for it is undone all the same; left to take later, it held
// the killed processes frozen, unable to die, and the exec waited for them
// for ever (seen on a loaded machine).
func TestKillWhenFreezeIsSlow(t *testing.T) {
	b, _ := newTestBackend(t, nil)
	defer func(n int) { freezeTries = n }(freezeTries)
	freezeTries = 0 // the freeze never seen to take
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.Exec(ctx, sidecar.Request{Command: "sleep 1000"})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v, want the context's error", err)
		}
	case <-time.After(30 * time.Second):
		// Thaw what was left frozen, so the cleanup can stop the container.
		states, _ := filepath.Glob("/sys/fs/cgroup/freezer" + cgroupParent + "/" + b.owner + "*/*/freezer.state")
		for _, f := range states {
			_ = os.WriteFile(f, []byte("THAWED"), 0)
		}
		t.Fatal("the killed exec did not end")
	}
}

// TestInitRunsItsScriptWhenStarted: a started container's init already
// runs the init script. libcontainer's Run returns once the init was told
// to exec it, not once it has: an exec right after a cold start could find
// the init half-way through execve (its old thread group leader a zombie
// with no namespaces) and runc failed with "failed to open
// /proc/PID/ns/ipc" (the first exec of a waking workspace, 1 in 10 at
// load 10).
func TestInitRunsItsScriptWhenStarted(t *testing.T) {
	b, _ := newTestBackend(t, nil)
	sh, err := filepath.EvalSymlinks(filepath.Join(testRootfs, "bin", "sh"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		r, _, err := b.acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		// The path inside the container: the rootfs's, as init sees it.
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", r.initPID))
		if err != nil || filepath.Base(exe) != filepath.Base(sh) {
			t.Fatalf("start %d: init %d runs %q, not yet the rootfs's sh (%s): %v", i, r.initPID, exe, sh, err)
		}
		b.release(r)
		b.mu.Lock()
		b.stopLocked()
		b.mu.Unlock()
	}
}

// fakeRoot is a Root that records what New does through it.
type fakeRoot struct {
	uid, gid uint32
	perm     fs.FileMode
	chowned  bool
}

func (r *fakeRoot) Owner() (uint32, uint32, fs.FileMode, error) { return r.uid, r.gid, r.perm, nil }
func (r *fakeRoot) Chown(uid, gid int) error {
	r.uid, r.gid, r.chowned = uint32(uid), uint32(gid), true
	return nil
}
func (r *fakeRoot) Chmod(perm fs.FileMode) error { r.perm = perm; return nil }

// TestRootInsteadOfTheMount: with Options.Root, New gives the workspace
// root to the user through it and never calls into Workspace (a mount the
// caller serves: sqlfs-exec run, killed during its chown of its own mount,
// hung unkillable). Workspace here does not exist, so any call into it
// fails New.
func TestRootInsteadOfTheMount(t *testing.T) {
	requireContainers(t)
	ws := filepath.Join(t.TempDir(), "mnt")
	root := &fakeRoot{perm: 0o755}
	b, err := New(t.Context(), Options{Workspace: ws, Root: root, Rootfs: testRootfs, StateDir: t.TempDir(),
		User: fmt.Sprintf("%d:%d", testUID, testGID), Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("New called into the workspace: %v", err)
	}
	defer b.Close()
	if !root.chowned || root.uid != uint32(testUID) || root.gid != uint32(testGID) {
		t.Fatalf("root not given to the user through Root: %+v", root)
	}
	if b.cfg.Workspace != ws {
		t.Errorf("Workspace %q, want %q as given", b.cfg.Workspace, ws)
	}
	if _, err := New(t.Context(), Options{Workspace: "mnt", Root: root, Rootfs: testRootfs}); !errors.Is(err, ErrBadConfig) {
		t.Errorf("relative Workspace with Root: %v, want ErrBadConfig", err)
	}
}
