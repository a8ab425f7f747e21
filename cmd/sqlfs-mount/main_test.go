package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
)

// runMount runs sqlfs-mount to completion and returns its exit code and output.
func runMount(t *testing.T, args ...string) (int, string) {
	t.Helper()
	bin, err := buildMount()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

func TestBadInvocations(t *testing.T) {
	fusetest.Skip(t)
	base := t.TempDir()
	store := filepath.Join(base, "ws.db")
	nonEmpty := filepath.Join(base, "full")
	os.Mkdir(nonEmpty, 0o755)
	os.WriteFile(filepath.Join(nonEmpty, "x"), nil, 0o644)
	aFile := filepath.Join(base, "file")
	os.WriteFile(aFile, []byte("not sqlite"), 0o644)
	foreign := filepath.Join(base, "foreign.db")
	if out, err := exec.Command("sqlite3", foreign, "CREATE TABLE t(x); INSERT INTO t VALUES (1);").CombinedOutput(); err != nil {
		fusetest.Require(t, "this test writes the store with the sqlite3 shell (Debian package sqlite3)", fmt.Errorf("%w: %s", err, out))
	}
	empty := filepath.Join(base, "mnt")
	os.Mkdir(empty, 0o755)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no args", nil, 2, "usage: sqlfs-mount"},
		{"help", []string{"--help"}, 0, "-read-only"},
		{"missing mountpoint", []string{store, filepath.Join(base, "nope")}, 1, "no such file or directory"},
		{"mountpoint is a file", []string{store, aFile}, 1, "is not a directory"},
		{"non-empty mountpoint", []string{store, nonEmpty}, 1, "is not empty"},
		{"store is not SQLite", []string{aFile, empty}, 1, "not a sqlfs store"},
		{"store of another application", []string{foreign, empty}, 1, "not a sqlfs store"},
		{"store is a directory", []string{base, empty}, 1, "is a directory"},
		{"bad policy glob", []string{"--hidden-glob", "[", store, empty}, 2, "bad policy glob"},
		{"xattr both ways", []string{"--xattr", "--no-xattr", store, empty}, 2, "contradict"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := runMount(t, c.args...)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, want %d; output lacks %q:\n%s", code, c.code, c.want, out)
			}
		})
	}
	if b, _ := os.ReadFile(aFile); string(b) != "not sqlite" {
		t.Fatalf("refused store was modified: %q", b)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	fusetest.Skip(t)
	base := t.TempDir()
	store, dir := filepath.Join(base, "ws.db"), filepath.Join(base, "mnt")
	os.Mkdir(dir, 0o755)
	p := startMount(t, store, dir)
	stopMount(t, p)
	if out, err := exec.Command("sqlite3", store, "UPDATE meta SET v='999' WHERE k='schema_version'").CombinedOutput(); err != nil {
		fusetest.Require(t, "this test writes the store with the sqlite3 shell (Debian package sqlite3)", fmt.Errorf("%w: %s", err, out))
	}
	code, out := runMount(t, store, dir)
	if code != 1 || !strings.Contains(out, "newer than this program") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func stopMount(t *testing.T, p *mountProc) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	errc := make(chan error, 1)
	go func() { errc <- p.cmd.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("sqlfs-mount exited with %v:\n%s", err, p.log.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("sqlfs-mount did not stop on SIGTERM:\n%s", p.log.String())
	}
}

func TestSecondOwnerAndMountInUse(t *testing.T) {
	fusetest.Skip(t)
	base := t.TempDir()
	store, dir, dir2 := filepath.Join(base, "ws.db"), filepath.Join(base, "mnt"), filepath.Join(base, "mnt2")
	os.Mkdir(dir, 0o755)
	os.Mkdir(dir2, 0o755)
	p := startMount(t, store, dir)
	code, out := runMount(t, store, dir2)
	if pid := strconv.Itoa(p.cmd.Process.Pid); code != 1 || !strings.Contains(out, "owned by process "+pid) {
		t.Fatalf("second owner: exit %d, want the owner's pid %s:\n%s", code, pid, out)
	}
	code, out = runMount(t, filepath.Join(base, "other.db"), dir)
	if code != 1 || !strings.Contains(out, "already a mount") {
		t.Fatalf("mountpoint in use: exit %d:\n%s", code, out)
	}
	stopMount(t, p)
}

func TestStopsCleanly(t *testing.T) {
	fusetest.Skip(t)
	for _, how := range []string{"SIGTERM", "fusermount"} {
		t.Run(how, func(t *testing.T) {
			base := t.TempDir()
			store, dir := filepath.Join(base, "ws.db"), filepath.Join(base, "mnt")
			os.Mkdir(dir, 0o755)
			p := startMount(t, store, dir, "--commit-interval", "1h")
			// With an hour between commits only the shutdown flush can
			// save this file.
			if err := os.WriteFile(filepath.Join(dir, "f"), []byte("flushed"), 0o644); err != nil {
				t.Fatal(err)
			}
			if how == "SIGTERM" {
				stopMount(t, p)
			} else {
				tool := "fusermount3"
				if _, err := exec.LookPath(tool); err != nil {
					tool = "fusermount"
				}
				if out, err := exec.Command(tool, "-u", dir).CombinedOutput(); err != nil {
					t.Fatalf("%s -u: %v %s", tool, err, out)
				}
				if err := p.cmd.Wait(); err != nil {
					t.Fatalf("exit after external unmount: %v\n%s", err, p.log.String())
				}
			}
			if !strings.Contains(p.log.String(), "store closed cleanly") {
				t.Fatalf("log:\n%s", p.log.String())
			}
			p2 := startMount(t, store, dir)
			if b, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(b) != "flushed" {
				t.Fatalf("after restart: %q %v", b, err)
			}
			stopMount(t, p2)
		})
	}
}

// TestXattrFlag: by default the mount serves no extended attributes (the
// kernel answers EOPNOTSUPP itself once told), --xattr serves them, and
// what --xattr wrote is kept in the store for the next mount that serves
// them.
func TestXattrFlag(t *testing.T) {
	fusetest.Skip(t)
	base := t.TempDir()
	store, dir := filepath.Join(base, "ws.db"), filepath.Join(base, "mnt")
	os.Mkdir(dir, 0o755)
	f := filepath.Join(dir, "f")
	for _, c := range []struct {
		flags []string
		set   bool  // set user.k before reading it back
		want  error // of setting and getting user.k
	}{
		{nil, true, syscall.EOPNOTSUPP},
		{[]string{"--no-xattr"}, true, syscall.EOPNOTSUPP},
		{[]string{"--xattr"}, true, nil},
		{nil, false, syscall.EOPNOTSUPP},
		{[]string{"--xattr"}, false, nil},
	} {
		p := startMount(t, store, dir, c.flags...)
		if c.set {
			if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Setxattr(f, "user.k", []byte("v"), 0); err != c.want {
				t.Errorf("%v: setxattr: %v, want %v", c.flags, err, c.want)
			}
		}
		buf := make([]byte, 16)
		n, err := syscall.Getxattr(f, "user.k", buf)
		if err != c.want || err == nil && string(buf[:n]) != "v" {
			t.Errorf("%v: getxattr: %q %v, want %q %v", c.flags, buf[:max(n, 0)], err, "v", c.want)
		}
		stopMount(t, p)
	}
}
