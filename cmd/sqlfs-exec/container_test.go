package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar/container"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// TestServeContainerBackend runs the container backend the way the README
// does: a busybox rootfs from this binary, `serve --mount --rootfs`, and
// exec tool calls on both backends over the one workspace.
// busyboxRootfs makes the container tests' rootfs under dir, from this
// binary and busybox-static; it skips (fails when privileged) without them.
func busyboxRootfs(t *testing.T, dir string) string {
	t.Helper()
	fusetest.Skip(t)
	_, err := os.Stat(container.BusyboxPath)
	fusetest.Require(t, "the test rootfs needs busybox-static", err)
	rootfs := filepath.Join(dir, "rootfs")
	if _, stderr, code := sqlfsExec(t, "", "busybox-rootfs", rootfs); code != 0 {
		t.Fatalf("busybox-rootfs: %s", stderr)
	}
	return rootfs
}

func TestServeContainerBackend(t *testing.T) {
	dir := t.TempDir()
	rootfs := busyboxRootfs(t, dir)
	// The mount is open to the container's user (allow_other): serve
	// refuses it unless its directory is private.
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	mnt, state := filepath.Join(dir, "mnt"), filepath.Join(dir, "state")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "ws.sqlfs")
	stop := startOwner(t, store, "--mount", mnt, "--rootfs", rootfs, "--container-state", state)

	execTool := func(backend, command string) tools.ExecOutput {
		t.Helper()
		args, err := json.Marshal(map[string]string{"command": command, "backend": backend})
		if err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := sqlfsExec(t, "", "tool", "--store", store, "--json", "exec", string(args))
		var out tools.ExecOutput
		if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != 0 {
			t.Fatalf("exec %s %q: code %d, %v\n%s%s", backend, command, code, err, stdout, stderr)
		}
		return out
	}
	execTool("shell", "echo 'from the shell' > note.txt")
	got := execTool("container", "cat note.txt; id -u; echo 'from the container' > reply.txt")
	if got.ExitCode != 0 || got.Stdout != "from the shell\n1000\n" {
		t.Fatalf("container: %+v", got)
	}
	// The mount audits the container's writes under its exec (its cgroup
	// names it), so the result lists what it changed, as a shell exec's does.
	if !slices.Contains(got.Changed, "reply.txt") {
		t.Errorf("container exec's changes %q lack reply.txt", got.Changed)
	}
	stdout, stderr, code := sqlfsExec(t, "", "log", "--store", store, "--path", "/reply.txt")
	if code != 0 || !strings.Contains(stdout, "exec:"+got.ID) || strings.Contains(stdout, "fuse:pid=") {
		t.Errorf("audit of /reply.txt names no exec:%s only (code %d):\n%s%s", got.ID, code, stdout, stderr)
	}
	if got := execTool("shell", "cat reply.txt"); got.Stdout != "from the container\n" {
		t.Fatalf("shell reads %+v", got)
	}

	if code := stop(); code != 0 {
		t.Errorf("serve exited %d", code)
	}
	// A clean shutdown leaves no container state behind.
	if entries, err := os.ReadDir(state); err != nil || len(entries) != 0 {
		t.Errorf("state dir after shutdown: %v %v", entries, err)
	}
}

// TestRunContainerNetwork: `run --backend container` reaches what
// --egress-allow allows through the owner's proxy, only with
// --allow-network, and the connection is audited under the exec; a port
// no rule names is refused with the rule's reason.
func TestRunContainerNetwork(t *testing.T) {
	pong := pongServer(t)
	dir := t.TempDir()
	rootfs := busyboxRootfs(t, dir)
	store := filepath.Join(dir, "ws.sqlfs")
	hostPort := strings.TrimPrefix(pong.URL, "http://")
	args := []string{"run", "--store", store, "--backend", "container", "--rootfs", rootfs, "--container-state", filepath.Join(dir, "state"), "--egress-allow", hostPort}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"allowed", []string{"--allow-network", "--", "wget -q -O - " + pong.URL}, 0, "pong", ""},
		{"not asked for", []string{"--", "wget -q -O - " + pong.URL}, 1, "", "403 Forbidden"},
		{"another port", []string{"--allow-network", "--", "wget -q -O - http://127.0.0.1:1/"}, 1, "", "403 Forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := sqlfsExec(t, "", append(append([]string{}, args...), tc.args...)...)
			if code != tc.code || out != tc.out || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d stdout %q stderr %q; want exit %d stdout %q stderr containing %q", code, out, stderr, tc.code, tc.out, tc.err)
			}
		})
	}
	audit, stderr, code := sqlfsExec(t, "", "log", "--store", store, "--op", "connect", "--json")
	if code != 0 {
		t.Fatalf("log: %d %s", code, stderr)
	}
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(audit), "\n") {
		var ev struct{ Actor, Path, Result string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil || !strings.HasPrefix(ev.Actor, "exec:") {
			t.Errorf("connect event %q: %+v %v", line, ev, err)
		}
		events = append(events, ev.Path+" "+map[bool]string{true: "ok", false: "refused"}[ev.Result == "ok"])
	}
	// The exec that did not ask never reached the dialer.
	if want := "/" + hostPort + " ok\n/127.0.0.1:1 refused"; strings.Join(events, "\n") != want {
		t.Errorf("connect events:\n%s\nwant:\n%s", strings.Join(events, "\n"), want)
	}
}
