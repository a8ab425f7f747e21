package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// TestExpose runs the owner as the help says (serve --mount --rootfs
// --public-addr), a dev server in a container exec (busybox httpd), and
// `sqlfs-exec expose PORT`: the URL it prints serves the workspace's page
// until the exec ends, and the preview is audited under the expose tool.
// Before any container exec runs, expose says so.
func TestExpose(t *testing.T) {
	dir := t.TempDir()
	rootfs := busyboxRootfs(t, dir)
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	public := ln.Addr().String()
	ln.Close()
	store := filepath.Join(dir, "ws.sqlfs")
	startOwner(t, store, "--mount", mnt, "--rootfs", rootfs, "--container-state", filepath.Join(dir, "state"), "--public-addr", public)

	if _, stderr, code := sqlfsExec(t, "", "expose", "--store", store, "8080"); code != 1 || !strings.Contains(stderr, "no container exec is running") {
		t.Errorf("expose with no exec: exit %d, %q", code, stderr)
	}
	if _, stderr, code := sqlfsExec(t, "", "run", "--store", store, "--", "mkdir site && echo 'hello from the workspace' > site/index.html"); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	stopServer := startContainerServer(t, httpd, "--store", store)

	// The exec is listed as soon as the owner starts it; httpd listens a
	// little later.
	var url string
	deadline := time.Now().Add(testenv.Slack(30 * time.Second))
	for {
		stdout, stderr, code := sqlfsExec(t, "", "expose", "--store", store, "--ttl", "10m", "8080")
		if code == 0 {
			url = strings.TrimSpace(stdout)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("expose: exit %d, %q", code, stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.HasPrefix(url, "http://"+public+"/x/") || !strings.HasSuffix(url, "/") {
		t.Fatalf("expose printed %q", url)
	}
	for {
		status, body := fetch(t, url)
		if status == 200 && body == "hello from the workspace\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d %q", url, status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, stderr, code := sqlfsExec(t, "", "expose", "--store", store, "--exec", "nosuch", "8080"); code != 1 || !strings.Contains(stderr, "the exec has ended") {
		t.Errorf("expose --exec nosuch: exit %d, %q", code, stderr)
	}

	stopServer()
	for {
		status, _ := fetch(t, url)
		if status == 404 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s after the exec ended: %d, want 404", url, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	evs := auditLog(t, store, "--path", "port:8080")
	ops := map[string]string{}
	for _, ev := range evs {
		if ev.Result == "ok" {
			ops[ev.Op] = ev.Actor
		}
	}
	if ops["expose"] != "tool:expose" || ops["unexpose"] != "tool:expose" {
		t.Errorf("audit of port:8080: %+v", evs)
	}
}
