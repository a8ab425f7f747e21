// Package exectest runs the sqlfs-exec binary in tests, the way an
// operator runs it: built once per test binary, started as a child process
// that dies with the test binary, its output kept for the failure
// messages, and stopped at cleanup, also when the test fails. The tests of
// cmd/sqlfs-exec and the integration suite share it.
package exectest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar/api"
)

// BinaryEnv names the variable that may point at a sqlfs-exec built
// elsewhere (another branch's), used instead of building one.
const BinaryEnv = "SQLFS_EXEC"

// StartTimeout bounds the wait for a started owner or host to answer:
// well under a second on a quiet machine, much more on a loaded one.
const StartTimeout = 60 * time.Second

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Run runs m's tests and removes the binary Binary built. Call it from
// TestMain: os.Exit(exectest.Run(m)).
func Run(m *testing.M) int {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	return code
}

// Binary returns the path of sqlfs-exec: $SQLFS_EXEC if set, else built
// once per test binary from this module's cmd/sqlfs-exec with the build
// tags the test binary was built with (not -race: it only slows the child).
func Binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv(BinaryEnv); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sqlfs-exec-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "sqlfs-exec")
		cmd := exec.Command("go", "build", "-tags", buildTags(), "-o", binPath, "./cmd/sqlfs-exec")
		cmd.Dir = moduleRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%w: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building sqlfs-exec: %v", buildErr)
	}
	return binPath
}

// buildTags are the -tags of the running test binary.
func buildTags() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-tags" {
				return s.Value
			}
		}
	}
	return ""
}

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Process is a child process of a test.
type Process struct {
	Cmd *exec.Cmd
	// Log is the file that holds its stdout and stderr.
	Log    string
	exited <-chan struct{}

	stopOnce sync.Once
	code     int
}

// Start starts cmd with its stdout and stderr kept in a file of t's (Log,
// Logs), killed with SIGKILL if the test binary dies (testenv.StartChild).
// At the end of t it is stopped (Stop) if still running, and the end of
// its output logged if t failed.
func Start(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	log, err := os.CreateTemp(t.TempDir(), filepath.Base(cmd.Path)+"-*.log")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close() // the child has its own descriptor
	p := &Process{Cmd: cmd, Log: log.Name()}
	cmd.Stdout, cmd.Stderr = log, log
	exited, err := testenv.StartChild(cmd)
	if err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	p.exited = exited
	t.Cleanup(func() {
		if p.Running() {
			p.Stop(t)
		}
		if t.Failed() {
			t.Logf("%s %s logged:\n%s", filepath.Base(cmd.Path), strings.Join(cmd.Args[1:], " "), p.Logs(8000))
		}
	})
	return p
}

// StartOwner starts cmd, the owner of store (`sqlfs-exec serve --store
// store ...`, or a wrapper that execs it), and waits until store's socket
// answers.
func StartOwner(t testing.TB, store string, cmd *exec.Cmd) *Process {
	t.Helper()
	p := Start(t, cmd)
	sock := api.SocketPath(store)
	p.waitFor(t, "serve "+sock, func() bool {
		c, err := api.Dial(t.Context(), sock, "")
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return p
}

// StartHost starts cmd, a host (`sqlfs-exec serve --workspaces ...`) that
// listens at url, and waits until its /v1/health answers token. Unlike
// Start's, it is killed at the end of t (SIGKILL), as the host tests did
// before they shared this: a clean shutdown is what a test asks for.
func StartHost(t testing.TB, cmd *exec.Cmd, url, token string) *Process {
	t.Helper()
	p := Start(t, cmd)
	t.Cleanup(p.Kill)
	p.waitFor(t, "answer at "+url, func() bool {
		st, _ := Call(t, url, token, http.MethodGet, "/v1/health", "")
		return st == http.StatusOK
	})
	return p
}

// Call sends an HTTP request with token as its bearer and returns the
// status and body: status 0 and the error's text when no answer came (a
// host down is an answer the tests look for).
func Call(t testing.TB, url, token, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(token))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitFor polls ready until it holds, failing t if p exits first or
// StartTimeout passes.
func (p *Process) waitFor(t testing.TB, what string, ready func() bool) {
	t.Helper()
	for deadline := time.Now().Add(StartTimeout); !ready(); time.Sleep(20 * time.Millisecond) {
		if !p.Running() {
			t.Fatalf("%s exited before it would %s; it logged:\n%s", filepath.Base(p.Cmd.Path), what, p.Logs(8000))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not %s within %v; it logged:\n%s", filepath.Base(p.Cmd.Path), what, StartTimeout, p.Logs(8000))
		}
	}
}

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Exited is closed once the process has exited and been waited for.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Stop ends the process with SIGTERM, a clean shutdown, and returns its
// exit code (-1 when a signal ended it). A process still running 60 s
// later is killed and fails t. Stop may be called again, and after Kill.
func (p *Process) Stop(t testing.TB) int {
	t.Helper()
	p.stopOnce.Do(func() {
		p.Cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(60 * time.Second):
			p.Kill()
			t.Errorf("%s ignored SIGTERM for 60 s", filepath.Base(p.Cmd.Path))
		}
		p.code = p.Cmd.ProcessState.ExitCode()
	})
	return p.code
}

// Kill ends the process and its children (litestream) with SIGKILL, as a
// host dying would, and waits for it.
func (p *Process) Kill() {
	if !p.Running() {
		return
	}
	children := childPids(p.Cmd.Process.Pid)
	p.Cmd.Process.Kill() // it may have exited since Running
	for _, pid := range children {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	<-p.exited
}

// childPids lists the direct children of pid.
func childPids(pid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// Logs returns the last n bytes of the process's output so far.
func (p *Process) Logs(n int) string { return testenv.Tail(p.Log, n) }
