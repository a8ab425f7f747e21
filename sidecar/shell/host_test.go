package shell

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/sidecar"
)

// TestHostInvisible checks every place where mvdan/sh reaches the host by
// default (DESIGN.md) is routed to the shell's own filesystem or refused.
func TestHostInvisible(t *testing.T) {
	t.Setenv("SQLFS_HOST_SECRET", "leaked")
	hostTmp := filepath.Join(os.TempDir(), "sqlfs-shell-test-"+strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.WriteFile(hostTmp, []byte("host file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(hostTmp) })
	b, _ := newTestBackend(t, Options{})
	setup := sh(t, b, "mkdir -p a/b && echo data > a/b/f && ln -s a/b link && printf '#!/bin/sh\\necho script $1\\n' > s.sh && chmod +x s.sh && printf '#!/usr/bin/python3\\n' > p.py && chmod +x p.py")
	if setup.ExitCode != 0 {
		t.Fatalf("setup: %+v", setup)
	}
	tests := []struct {
		name, cmd      string
		stdout, stderr string // stderr: substring
		code           int
	}{
		// Files: only /workspace, /tmp and /dev/null exist.
		{name: "host file invisible", cmd: "cat " + hostTmp, stderr: "No such file or directory", code: 1},
		{name: "host etc invisible", cmd: "cat /etc/passwd", stderr: "No such file or directory", code: 1},
		{name: "redirect to host refused", cmd: "echo x > /etc/sqlfs-test", stderr: "no such file", code: 1},
		{name: "create at root refused", cmd: "echo x > /sqlfs-test", stderr: "permission denied", code: 1},
		{name: "root lists mounts", cmd: "ls /", stdout: "dev\ntmp\nworkspace\n"},
		{name: "glob outside mounts", cmd: "echo /etc/*", stdout: "/etc/*\n"},
		{name: "cd outside refused", cmd: "cd /usr", stderr: "/usr", code: 1},
		{name: "test -e host path", cmd: "[ -e /bin/sh ] && echo yes || echo no", stdout: "no\n"},
		{name: "dev null", cmd: "echo hi > /dev/null; cat /dev/null; echo $?", stdout: "0\n"},
		// interp.Dir: the working directory is the shell's, not the host's.
		{name: "initial dir", cmd: "pwd; echo $PWD", stdout: "/workspace\n/workspace\n"},
		// Env(nil): the host environment never leaks.
		{name: "env not inherited", cmd: `echo "[$SQLFS_HOST_SECRET]"; env | grep -c SQLFS_HOST_SECRET`, stdout: "[]\n0\n", code: 1},
		{name: "unset home stays empty", cmd: `env -u HOME sh -c 'echo "[$HOME]"'`, stdout: "[]\n"},
		{name: "home is workspace", cmd: "echo $HOME; cd; pwd", stdout: "/workspace\n/workspace\n"},
		// ~user: no host user database.
		{name: "tilde user", cmd: "echo ~root ~nobody", stdout: "/workspace /workspace\n"},
		// type / command -v: no host PATH lookup.
		{name: "command -v builtin cmd", cmd: "command -v ls grep", stdout: "/usr/bin/ls\n/usr/bin/grep\n"},
		{name: "command -v host-only binary", cmd: "command -v dpkg apt-get; echo $?", stdout: "1\n"},
		{name: "type host-only binary", cmd: "type dpkg", stderr: "dpkg: not found", code: 1},
		{name: "type kinds", cmd: "f() { :; }; type -t f echo if ls", stdout: "function\nbuiltin\nkeyword\nfile\n"},
		{name: "command -v function", cmd: "f() { :; }; command -v f cd", stdout: "f\ncd\n"},
		{name: "which", cmd: "which sh find; which dpkg; echo $?", stdout: "/usr/bin/sh\n/usr/bin/find\n1\n"},
		// pwd -P resolves the store's symlinks, not the host's.
		{name: "pwd -P", cmd: "cd link && pwd && pwd -P", stdout: "/workspace/link\n/workspace/a/b\n"},
		// [[ -O ]] type-asserts Sys(): it must not panic.
		{name: "test -O", cmd: "[[ -O a/b/f ]]; echo $?", stdout: map[bool]string{true: "0\n", false: "1\n"}[os.Getuid() == 0]},
		// Process substitution: FIFOs in a private host dir, readable
		// through redirections and by commands.
		{name: "process substitution arg", cmd: "cat <(echo one) <(echo two)", stdout: "one\ntwo\n"},
		{name: "process substitution redirect", cmd: "while read l; do echo got $l; done < <(printf 'a\\nb\\n')", stdout: "got a\ngot b\n"},
		{name: "fifo prefix in /tmp is scratch", cmd: "echo x > /tmp/sh-interp-1; cat /tmp/sh-interp-1", stdout: "x\n"},
		// External commands: never host binaries.
		{name: "unknown command", cmd: "dpkg --version", stderr: "container backend", code: 127},
		{name: "host binary by path", cmd: "/usr/bin/dpkg", stderr: "No such file", code: 127},
		{name: "builtin by path", cmd: "/bin/echo hi; /usr/bin/env printf ok", stdout: "hi\nok"},
		{name: "shell script", cmd: "./s.sh arg", stdout: "script arg\n"},
		{name: "non-shell script", cmd: "./p.py", stderr: "container backend", code: 126},
		{name: "exec builtin", cmd: "exec ls a", stdout: "b\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sh(t, b, tc.cmd)
			if got.ExitCode != tc.code || got.stdout != tc.stdout || !strings.Contains(got.stderr, tc.stderr) {
				t.Errorf("%s\n got: code %d stdout %q stderr %q\nwant: code %d stdout %q stderr containing %q",
					tc.cmd, got.ExitCode, got.stdout, got.stderr, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(os.TempDir(), "sh-interp-1")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a /tmp write reached the host's /tmp: %v", err)
	}
	if _, err := os.Stat("/etc/sqlfs-test"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a redirection reached the host's /etc: %v", err)
	}
}

func TestSourceIgnoresHostPath(t *testing.T) {
	hostBin := t.TempDir()
	if err := os.WriteFile(filepath.Join(hostBin, "lib.sh"), []byte("echo host\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := newTestBackend(t, Options{})
	got := execReq(t, b, sidecar.Request{
		Command: "echo 'echo workspace $1' > lib.sh; source lib.sh arg; . lib.sh",
		Env:     map[string]string{"PATH": hostBin},
	})
	if got.stdout != "workspace arg\nworkspace\n" {
		t.Errorf("source with a host PATH: %+v %q %q", got.Result, got.stdout, got.stderr)
	}
}

func TestTmpIsPerBackendScratch(t *testing.T) {
	b, fsys := newTestBackend(t, Options{})
	if got := sh(t, b, "echo scratch > /tmp/x && mkdir /tmp/d && mv /tmp/x /tmp/d/"); got.ExitCode != 0 {
		t.Fatalf("write /tmp: %+v", got)
	}
	if got := sh(t, b, "cat /tmp/d/x"); got.stdout != "scratch\n" {
		t.Errorf("/tmp did not persist between commands of one backend: %+v", got)
	}
	if _, err := fsys.Stat("/tmp"); err == nil {
		t.Errorf("/tmp reached the workspace store")
	}
	if _, err := os.Stat(filepath.Join(os.TempDir(), "d", "x")); err == nil {
		t.Errorf("/tmp reached the host")
	}
	other, _ := newTestBackend(t, Options{})
	if got := sh(t, other, "cat /tmp/d/x"); got.ExitCode == 0 {
		t.Errorf("another backend sees this backend's /tmp")
	}
	// /tmp is capped like a tmpfs.
	small, _ := newTestBackend(t, Options{TmpMaxBytes: 1000})
	if got := sh(t, small, "yes | head -c 5000 > /tmp/big; wc -c < /tmp/big; echo ok > /tmp/small; rm /tmp/big; yes | head -c 900 > /tmp/fits; wc -c < /tmp/fits"); got.stdout != "1000\n900\n" || !strings.Contains(got.stderr, "No space left") {
		t.Errorf("/tmp cap: %+v %q %q", got.Result, got.stdout, got.stderr)
	}
	// Moving across mounts copies.
	if got := sh(t, b, "mv /tmp/d/x moved && cat moved && ls /tmp/d"); got.stdout != "scratch\n" || got.ExitCode != 0 {
		t.Errorf("mv /tmp → /workspace: %+v", got)
	}
}

func TestWorkingDirectory(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	sh(t, b, "mkdir -p sub/dir")
	for _, dir := range []string{"sub/dir", "/workspace/sub/dir"} {
		got := execReq(t, b, sidecar.Request{Command: "pwd", Dir: dir})
		if got.stdout != "/workspace/sub/dir\n" {
			t.Errorf("Dir %q: pwd = %q", dir, got.stdout)
		}
	}
	var out strings.Builder
	if _, err := b.Exec(t.Context(), sidecar.Request{Command: "pwd", Dir: "missing", Stdout: &out}); err == nil {
		t.Errorf("a missing working directory was accepted")
	}
}

func TestFuncDefinedPinsInterpreterLayout(t *testing.T) {
	// funcDefined reads the interpreter's functions by reflection; if a
	// new mvdan/sh version moves them, this fails instead of type
	// silently reporting functions as missing.
	b, _ := newTestBackend(t, Options{})
	if got := sh(t, b, "myfn() { :; }; type -t myfn"); got.stdout != "function\n" {
		t.Fatalf("type -t of a function = %q", got.stdout)
	}
}
