package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/internal/testenv"
)

// The stderr of `sqlfs-exec run` is the command's alone: no log line of
// sqlfs's (mounting, the container's set-up) and no FUSE library's, unless
// --verbose asks for sqlfs's progress.
func TestRunStderrIsTheCommands(t *testing.T) {
	const command = "echo out; echo err >&2"
	t.Run("shell", func(t *testing.T) {
		store := filepath.Join(t.TempDir(), "ws.sqlfs")
		stdout, stderr, code := sqlfsExec(t, "", "run", "--store", store, "--", command)
		if code != 0 || stdout != "out\n" || stderr != "err\n" {
			t.Fatalf("code %d, stdout %q, stderr %q; want 0, \"out\\n\", \"err\\n\"", code, stdout, stderr)
		}
	})
	t.Run("container", func(t *testing.T) {
		dir := t.TempDir()
		rootfs := busyboxRootfs(t, dir)
		store := filepath.Join(dir, "ws.sqlfs")
		args := []string{"run", "--store", store, "--backend", "container", "--rootfs", rootfs, "--container-state", filepath.Join(dir, "state")}
		stdout, stderr, code := sqlfsExec(t, "", append(args, "--", command)...)
		if code != 0 || stdout != "out\n" || stderr != "err\n" {
			t.Fatalf("code %d, stdout %q, stderr %q; want 0, \"out\\n\", \"err\\n\"", code, stdout, stderr)
		}
		_, stderr, _ = sqlfsExec(t, "", append(append(args, "--verbose"), "--", command)...)
		if stderr == "err\n" {
			t.Fatal("--verbose added no progress lines")
		}
	})
}

// A `run --backend container` that is SIGKILLed leaves its mount behind
// with no server (ENOTCONN); the next container run detaches it and removes
// its private directory, and leaves a live run's mount alone.
func TestRunSweepsMountsOfKilledRuns(t *testing.T) {
	dir := t.TempDir()
	rootfs := busyboxRootfs(t, dir)
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	runMounts := func() []string {
		t.Helper()
		mnts, err := filepath.Glob(filepath.Join(tmp, "sqlfs-run-*", "mnt"))
		if err != nil {
			t.Fatal(err)
		}
		var mounted []string
		for _, m := range mnts {
			if fuse.IsMounted(m) {
				mounted = append(mounted, m)
			}
		}
		return mounted
	}
	t.Cleanup(func() {
		for _, m := range runMounts() {
			_ = syscall.Unmount(m, syscall.MNT_DETACH)
		}
	})
	start := func(store, command string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command(binary(t), "run", "--store", store, "--backend", "container", "--rootfs", rootfs,
			"--container-state", filepath.Join(dir, "state-"+filepath.Base(store)), "--", command)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	waitMounts := func(n int) []string {
		t.Helper()
		deadline := time.Now().Add(testenv.Slack(30 * time.Second))
		for {
			if m := runMounts(); len(m) >= n {
				return m
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %d run mounts under %s after 30 s", n, tmp)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	live := start(filepath.Join(dir, "live.sqlfs"), "sleep 60")
	liveMnt := waitMounts(1)[0]
	killed := start(filepath.Join(dir, "killed.sqlfs"), "touch /workspace/started; sleep 60")
	stale := ""
	for _, m := range waitMounts(2) {
		if m != liveMnt {
			stale = m
		}
	}
	// Killed once its command runs: a run killed while it makes a request
	// on its own mount (the chown of the root at start) cannot exit until
	// that mount's connection is aborted (the kernel waits for an answer
	// from the server it is killing).
	for deadline := time.Now().Add(testenv.Slack(30 * time.Second)); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(stale, "started")); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the run to kill never ran its command: %v", err)
		}
	}
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = killed.Wait()
	// STATFS always reaches the server (a stat may be answered from cache).
	var st syscall.Statfs_t
	if err := syscall.Statfs(stale, &st); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("the killed run's mount: statfs %v, want ENOTCONN", err)
	}

	store := filepath.Join(dir, "next.sqlfs")
	if _, stderr, code := sqlfsExec(t, "", "run", "--store", store, "--backend", "container", "--rootfs", rootfs,
		"--container-state", filepath.Join(dir, "state-next"), "--", "true"); code != 0 {
		t.Fatalf("next run: code %d: %s", code, stderr)
	}
	if fuse.IsMounted(stale) {
		t.Error("the killed run's mount is still there after the next run")
	}
	if _, err := os.Stat(filepath.Dir(stale)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed run's directory: %v, want it removed", err)
	}
	if !fuse.IsMounted(liveMnt) {
		t.Error("the next run unmounted a live run's mount")
	}
	_ = live.Process.Kill()
}
