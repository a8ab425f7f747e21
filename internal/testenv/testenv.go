// Package testenv lets tests say what they need from the machine: they skip
// where it is missing, and fail instead when CI says the machine has it. It
// imports nothing of sqlfs, so every package's tests can use it.
package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// PrivilegedEnv names the variable CI sets on machines that have root,
// /dev/fuse, runc and the Debian packages the tests use (Makefile DEB_PKGS):
// there a test that cannot get what it needs fails instead of skipping,
// since a skipped test is not a passing one.
const PrivilegedEnv = "SQLFS_TEST_PRIVILEGED"

// Require skips t when what it needs is missing (err != nil), or fails it
// when PrivilegedEnv is set.
func Require(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv(PrivilegedEnv) != "" {
		t.Fatalf("%s: %v (%s is set: this machine must have it)", what, err, PrivilegedEnv)
	}
	t.Skipf("%s: %v", what, err)
}

// LookPath returns the path of the program name, which Debian package pkg
// installs, or skips (fails, see Require) t without it.
func LookPath(t testing.TB, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	Require(t, fmt.Sprintf("this test needs %s (Debian package %s)", name, pkg), err)
	return path
}

// StartChild starts cmd so that it is killed with SIGKILL when the test
// binary dies, also when no cleanup can run (a test timeout's panic), and
// returns a channel closed once cmd has exited and been waited for.
// Pdeathsig follows the thread that started the child, which Go may end
// when a goroutine locked to it exits, so a goroutine holds that thread
// until the child exits.
func StartChild(cmd *exec.Cmd) (exited <-chan struct{}, err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started, done := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			cmd.Wait()
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}

// ToolsDir is where make tools installs the tools built from the Go module
// proxy (the Makefile's TOOLS; SQLFS_TOOLS overrides it), with links to the
// pinned versions in its bin/.
func ToolsDir() string {
	if d := os.Getenv("SQLFS_TOOLS"); d != "" {
		return d
	}
	return "/var/cache/sqlfs-tools"
}

// Tool returns the path of the program name that make tools installs (on
// PATH, else in ToolsDir()/bin), or skips (fails, see Require) t without it.
func Tool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		path, err = exec.LookPath(filepath.Join(ToolsDir(), "bin", name))
	}
	Require(t, fmt.Sprintf("this test needs %s (make tools installs it)", name), err)
	return path
}

// Tail returns the last n bytes of the file at path (a child's log), for
// failure messages.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(bytes.ToValidUTF8(b, []byte("?")))
}
