package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"

	"github.com/sqlfs/sqlfs/internal/exectest"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// mountedUnder lists the mountpoints of this mount namespace under dir.
func mountedUnder(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var under []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			under = append(under, f[4])
		}
	}
	return under
}

// startContainerHost runs serve --workspaces tmp/ws --rootfs (a busybox
// one) with extra flags; at cleanup, before the kill, it shuts the host
// down cleanly, which must leave no mount under tmp.
func startContainerHost(t *testing.T, tmp string, extra ...string) (url, op, opTok, dir string) {
	t.Helper()
	rootfs := busyboxRootfs(t, tmp)
	dir = filepath.Join(tmp, "ws")
	opTok, op = operatorToken(t, tmp)
	url = "http://" + freeAddr(t)
	args := append([]string{"serve", "--workspaces", dir, "--listen", strings.TrimPrefix(url, "http://"), "--token-file", opTok,
		"--rootfs", rootfs, "--container-state", filepath.Join(tmp, "state")}, extra...)
	host := exectest.StartHost(t, exec.Command(binary(t), args...), url, op)
	t.Cleanup(func() {
		if code := host.Stop(t); code != 0 {
			t.Errorf("host exited %d:\n%s", code, host.Logs(30))
		}
		if m := mountedUnder(t, tmp); len(m) > 0 {
			t.Errorf("mounts left behind: %v", m)
			for _, p := range m { // never leave them to the next test
				_ = syscall.Unmount(p, syscall.MNT_DETACH)
			}
		}
	})
	return url, op, opTok, dir
}

// TestHostContainerMountOnDemand runs container execs on a host: a
// workspace is mounted under DIR/.mounts at its first container exec (not
// before), unmounted when it hibernates and when it is deleted, and wakes
// with its container's files; no mount is left behind, also at the host's
// shutdown. It logs the first container exec of a hibernated workspace
// against a warm one.
func TestHostContainerMountOnDemand(t *testing.T) {
	tmp := t.TempDir()
	url, op, opTok, dir := startContainerHost(t, tmp, "--idle-timeout", "300ms")
	call := func(want int, method, path, body string) string {
		t.Helper()
		st, b := hostCall(t, url, op, method, path, body)
		if st != want {
			t.Fatalf("%s %s: %d %s", method, path, st, b)
		}
		return b
	}
	run := func(id, backend, command string) (tools.ExecOutput, time.Duration) {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"command": command, "backend": backend})
		start := time.Now()
		b := call(http.StatusOK, "POST", "/v1/workspaces/"+id+"/tools/exec", string(args))
		took := time.Since(start)
		var res struct {
			Result tools.ExecOutput `json:"result"`
		}
		err := json.Unmarshal([]byte(b), &res)
		out := res.Result
		if err != nil || out.ExitCode != 0 || out.Stderr != "" {
			t.Fatalf("%s exec %q in %s: %v %s", backend, command, id, err, b)
		}
		return out, took
	}
	mp := filepath.Join(dir, ".mounts", "c1")
	// waitMounts waits for the mounts under dir to be want, and the
	// mountpoints in DIR/.mounts to be theirs.
	waitMounts := func(want []string) {
		t.Helper()
		deadline := time.Now().Add(testenv.Slack(10 * time.Second))
		points := func() []string {
			ents, _ := os.ReadDir(filepath.Join(dir, ".mounts"))
			var p []string
			for _, e := range ents {
				p = append(p, filepath.Join(dir, ".mounts", e.Name()))
			}
			return p
		}
		for got := mountedUnder(t, dir); !slices.Equal(got, want) || !slices.Equal(points(), want); got = mountedUnder(t, dir) {
			if time.Now().After(deadline) {
				t.Fatalf("mounts under %s: %v, want %v", dir, got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	call(http.StatusCreated, "POST", "/v1/workspaces", `{"id": "c1"}`)
	call(http.StatusCreated, "POST", "/v1/workspaces", `{"id": "c2"}`)
	run("c1", "shell", "echo from-shell > s.txt")
	waitMounts(nil) // the shell needs no mount
	// No --public-addr: no previews, and expose says why.
	if _, stderr, code := sqlfsExec(t, "", "expose", "--host", url, "--workspace", "c1", "--token-file", opTok, "8080"); code != 1 || !strings.Contains(stderr, "no public listener") {
		t.Errorf("expose without --public-addr: exit %d, %q", code, stderr)
	}

	out, _ := run("c1", "container", "cat /workspace/s.txt && echo from-container > /workspace/c.txt")
	if out.Stdout != "from-shell\n" {
		t.Fatalf("the container read %q: %+v", out.Stdout, out)
	}
	waitMounts([]string{mp})
	if out, _ := run("c1", "shell", "cat c.txt"); out.Stdout != "from-container\n" {
		t.Fatalf("the shell read %q", out.Stdout)
	}

	// Hibernation unmounts and removes the mountpoint; the next
	// container exec wakes and mounts it again. Cold and warm, timed.
	var cold, warm []time.Duration
	for range 3 {
		waitMounts(nil)
		out, took := run("c1", "container", "cat /workspace/c.txt")
		if out.Stdout != "from-container\n" {
			t.Fatalf("after a wake the container read %q", out.Stdout)
		}
		cold = append(cold, took)
		_, took = run("c1", "container", "true")
		warm = append(warm, took)
	}
	slices.Sort(cold)
	slices.Sort(warm)
	t.Logf("container exec round trip, median of 3: hibernated workspace %s, warm %s (load %.1f)", cold[1], warm[1], testenv.LoadAverage())

	// DELETE of a mounted workspace unmounts it (c2 hibernates meanwhile).
	run("c2", "container", "true")
	run("c1", "container", "true")
	call(http.StatusOK, "DELETE", "/v1/workspaces/c1?force=true", "")
	waitMounts(nil)
}

// TestHostMaxContainers: with --max-containers 1, a container exec while
// another workspace's runs is refused at once with 429, Retry-After and a
// clear message (the CLI prints it), counted in the metrics; the shell
// still runs, and the slot frees with the first exec's end.
func TestHostMaxContainers(t *testing.T) {
	url, op, opTok, _ := startContainerHost(t, t.TempDir(), "--max-containers", "1")
	for _, id := range []string{"a", "b"} {
		if st, b := hostCall(t, url, op, "POST", "/v1/workspaces", `{"id": "`+id+`"}`); st != http.StatusCreated {
			t.Fatalf("create %s: %d %s", id, st, b)
		}
	}
	long := make(chan string, 1)
	go func() {
		_, b := exectest.Call(t, url, op, "POST", "/v1/workspaces/a/tools/exec", `{"command": "touch /workspace/started; sleep 3", "backend": "container"}`)
		long <- b
	}()
	deadline := time.Now().Add(testenv.Slack(20 * time.Second))
	for {
		if st, b := hostCall(t, url, op, "POST", "/v1/workspaces/a/tools/read", `{"path": "started"}`); st == http.StatusOK {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("a's container exec never started: %d %s", st, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "POST", url+"/v1/workspaces/b/tools/exec", strings.NewReader(`{"command": "true", "backend": "container"}`))
	req.Header.Set("Authorization", "Bearer "+op)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("second container exec: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	_, stderr, code := sqlfsExec(t, "", "run", "--host", url, "--workspace", "b", "--token-file", opTok, "--backend", "container", "--", "true")
	if code == 0 || !strings.Contains(stderr, "--max-containers") {
		t.Fatalf("run past the bound: exit %d, %s", code, stderr)
	}
	if st, b := hostCall(t, url, op, "POST", "/v1/workspaces/b/tools/exec", `{"command": "true"}`); st != http.StatusOK {
		t.Fatalf("shell exec past the container bound: %d %s", st, b)
	}
	if _, m := hostCall(t, url, op, "GET", "/metrics", ""); !strings.Contains(m, "sqlfs_host_container_refusals_total 2") {
		t.Fatalf("refusals not counted:\n%s", m)
	}
	<-long
	if st, b := hostCall(t, url, op, "POST", "/v1/workspaces/b/tools/exec", `{"command": "true", "backend": "container"}`); st != http.StatusOK {
		t.Fatalf("container exec once the slot is free: %d %s", st, b)
	}
}

// TestHostContainerLimits sets one workspace's container limits at
// creation and by PATCH, and reads them from the cgroup its container
// runs in; another workspace keeps the host's flags, and bad values are
// refused with 400 naming the field, nothing changed.
func TestHostContainerLimits(t *testing.T) {
	tmp := t.TempDir()
	url, op, _, _ := startContainerHost(t, tmp, "--pids", "300", "--memory", "268435456")
	call := func(want int, method, path, body string) string {
		t.Helper()
		st, b := hostCall(t, url, op, method, path, body)
		if st != want {
			t.Fatalf("%s %s %s: %d %s", method, path, body, st, b)
		}
		return b
	}
	// cgroup reads, from the host, the pids and memory limits of the
	// cgroup id's container runs in (/sqlfs/CONTAINER, which an exec names
	// in its /proc/self/cgroup: no cgroup namespace), while it runs.
	cgroup := func(id string) string {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"backend": "container", "command": "cat /proc/self/cgroup"})
		var res struct {
			Result tools.ExecOutput `json:"result"`
		}
		if err := json.Unmarshal([]byte(call(http.StatusOK, "POST", "/v1/workspaces/"+id+"/tools/exec", string(args))), &res); err != nil || res.Result.ExitCode != 0 {
			t.Fatalf("reading %s's cgroup: %v %+v", id, err, res.Result)
		}
		// file is the container's limit name of controller ctrl ("" on
		// cgroup v2).
		file := func(ctrl, name string) string {
			for line := range strings.SplitSeq(res.Result.Stdout, "\n") {
				f := strings.SplitN(line, ":", 3)
				if len(f) != 3 || f[1] != ctrl {
					continue
				}
				parts := strings.Split(f[2], "/")
				if len(parts) < 3 || parts[1] != "sqlfs" {
					t.Fatalf("%s's exec in cgroup %q, not under /sqlfs", id, line)
				}
				return filepath.Join("/sys/fs/cgroup", ctrl, parts[1], parts[2], name)
			}
			t.Fatalf("%s's exec has no %q cgroup: %s", id, ctrl, res.Result.Stdout)
			return ""
		}
		files := []string{file("", "pids.max"), file("", "memory.max")}
		if !cgroups.IsCgroup2UnifiedMode() {
			files = []string{file("pids", "pids.max"), file("memory", "memory.limit_in_bytes")}
		}
		var got []string
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, strings.TrimSpace(string(b)))
		}
		return strings.Join(got, " ")
	}
	call(http.StatusCreated, "POST", "/v1/workspaces", `{"id": "small", "limits": {"container_pids": 50, "container_memory_bytes": 134217728}}`)
	call(http.StatusCreated, "POST", "/v1/workspaces", `{"id": "dflt"}`)
	if got := cgroup("small"); got != "50 134217728" {
		t.Errorf("small's container: pids.max memory.max %q, want 50 134217728", got)
	}
	if got := cgroup("dflt"); got != "300 268435456" {
		t.Errorf("dflt's container: pids.max memory.max %q, want the host's 300 268435456", got)
	}

	// PATCH replaces the limits; the next container takes them (the
	// workspace reopens once no exec runs), memory back to the host's.
	call(http.StatusOK, "PATCH", "/v1/workspaces/small", `{"limits": {"container_pids": 60}}`)
	if got := cgroup("small"); got != "60 268435456" {
		t.Errorf("small's container after PATCH: %q, want 60 268435456", got)
	}

	for _, c := range []struct{ body, field string }{
		{`{"container_pids": -1}`, "container_pids"},
		{`{"container_pids": 100000000}`, "container_pids"},
		{`{"container_memory_bytes": 4096}`, "container_memory_bytes"},
		{`{"container_memory_bytes": 2000000000000000}`, "container_memory_bytes"},
		{`{"container_cpus": 0.001}`, "container_cpus"},
		{`{"container_cpus": 5000}`, "container_cpus"},
		{`{"container_cpus": -2}`, "container_cpus"},
	} {
		for _, req := range []struct{ method, path, body string }{
			{"PATCH", "/v1/workspaces/small", `{"limits": ` + c.body + `}`},
			{"POST", "/v1/workspaces", `{"id": "bad", "limits": ` + c.body + `}`},
		} {
			if st, b := hostCall(t, url, op, req.method, req.path, req.body); st != http.StatusBadRequest || !strings.Contains(b, c.field) {
				t.Errorf("%s %s: %d %s, want 400 naming %s", req.method, req.body, st, b, c.field)
			}
		}
	}
	if st, b := hostCall(t, url, op, "GET", "/v1/workspaces/bad", ""); st != http.StatusNotFound {
		t.Errorf("a refused creation left workspace bad: %d %s", st, b)
	}
	if b := call(http.StatusOK, "GET", "/v1/workspaces/small", ""); !strings.Contains(b, `"container_pids":60`) {
		t.Errorf("after refused PATCHes: %s", b)
	}
	if got := cgroup("small"); got != "60 268435456" {
		t.Errorf("small's container after refused PATCHes: %q", got)
	}
}
