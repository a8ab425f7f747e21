package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar/container"
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
		fusetest.Skip(t)
		_, err := os.Stat(container.BusyboxPath)
		fusetest.Require(t, "the test rootfs needs busybox-static", err)
		dir := t.TempDir()
		rootfs := filepath.Join(dir, "rootfs")
		if _, stderr, code := sqlfsExec(t, "", "busybox-rootfs", rootfs); code != 0 {
			t.Fatalf("busybox-rootfs: %s", stderr)
		}
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
