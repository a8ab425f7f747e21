package main

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar/archive/archivetest"
)

// newStore makes a store and fills it with fill's changes (the errors of
// each call, in order).
func newStore(t *testing.T, fill func(f *sfs.FS) []error) string {
	t.Helper()
	store := filepath.Join(t.TempDir(), "ws.sqlfs")
	f, err := sfs.Open(context.Background(), store, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range append(fill(f), f.Close()) {
		if err != nil {
			t.Fatal(err)
		}
	}
	return store
}

// privilegedStore holds what an agent running as root in the store could
// make: a setuid-root binary, a setgid file of another user, a device node.
func privilegedStore(t *testing.T) string {
	return newStore(t, func(f *sfs.FS) []error {
		return []error{
			f.WriteFile("/suid", []byte("#!/bin/sh\nid\n"), 0o755),
			f.Chmod("/suid", 0o4755),
			f.WriteFile("/sgid", []byte("x"), 0o755),
			f.Chown("/sgid", 1234, 1234),
			f.Chmod("/sgid", 0o2755),
			f.Mknod("/mem", syscall.S_IFCHR|0o666, unix.Mkdev(1, 1)),
			f.WriteFile("/plain", []byte("data"), 0o644),
		}
	})
}

// TestExportDropsPrivileges: an exported setuid-root binary ran as euid 0
// for an unprivileged host user, and device nodes were recreated.
func TestExportDropsPrivileges(t *testing.T) {
	if os.Geteuid() != 0 {
		fusetest.Require(t, "export with owners and device nodes needs root", errors.New("not root"))
	}
	store := privilegedStore(t)
	lstat := func(t *testing.T, name string) (fs.FileInfo, *syscall.Stat_t) {
		t.Helper()
		fi, err := os.Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		return fi, fi.Sys().(*syscall.Stat_t)
	}
	cases := []struct {
		name     string
		flags    []string
		code     int
		stderr   string
		setid    bool
		owners   bool
		hasDev   bool
		noExport bool
	}{
		{"default", nil, 1, "device node refused", false, false, false, false},
		{"skip special", []string{"--skip-special"}, 0, "skipped", false, false, false, false},
		{"same owner", []string{"--same-owner", "--skip-special"}, 0, "", false, true, false, false},
		{"preserve special", []string{"--preserve-special", "--same-owner"}, 0, "", true, true, true, false},
		{"both", []string{"--preserve-special", "--skip-special"}, 1, "exclude each other", false, false, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append(append([]string{"export", "--store", store}, c.flags...), ".", out)
			_, stderr, code := sqlfsExec(t, "", args...)
			if code != c.code || !strings.Contains(stderr, c.stderr) {
				t.Fatalf("exit %d, want %d; stderr %s", code, c.code, stderr)
			}
			if c.noExport {
				return
			}
			if b, err := os.ReadFile(filepath.Join(out, "plain")); string(b) != "data" {
				t.Fatalf("plain not exported: %v", err)
			}
			suid, _ := lstat(t, filepath.Join(out, "suid"))
			sgid, sgidSt := lstat(t, filepath.Join(out, "sgid"))
			if got := suid.Mode()&fs.ModeSetuid != 0; got != c.setid {
				t.Errorf("suid mode %v", suid.Mode())
			}
			if got := sgid.Mode()&fs.ModeSetgid != 0; got != c.setid {
				t.Errorf("sgid mode %v", sgid.Mode())
			}
			if got := sgidSt.Uid == 1234 && sgidSt.Gid == 1234; got != c.owners {
				t.Errorf("sgid owned by %d:%d, owners kept: %v", sgidSt.Uid, sgidSt.Gid, c.owners)
			}
			_, err := os.Lstat(filepath.Join(out, "mem"))
			if got := err == nil; got != c.hasDev {
				t.Errorf("device node exported: %v", got)
			}
		})
	}
	t.Run("preserve special as non-root", func(t *testing.T) {
		// The test binary's directory is private: run a copy nobody can reach.
		dir, err := os.MkdirTemp("", "sqlfs-nobody-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		bin, err := os.ReadFile(binary(t))
		if err == nil {
			err = errors.Join(os.Chmod(dir, 0o755), os.WriteFile(filepath.Join(dir, "sqlfs-exec"), bin, 0o755))
		}
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), filepath.Join(dir, "sqlfs-exec"), "export", "--store", store, "--preserve-special", ".", t.TempDir())
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "needs root") {
			t.Errorf("%v: %s", err, out)
		}
	})
}

// TestImportRefusals runs the archives import must refuse through the
// command: non-zero exit, a message naming the member, the rest imported.
func TestImportRefusals(t *testing.T) {
	store := filepath.Join(t.TempDir(), "ws.sqlfs")
	type m = archivetest.Member
	cases := []struct {
		name    string
		members []m
		cut     int
		flags   []string
		code    int
		stderr  string
	}{
		{"clobber", []m{{Type: tar.TypeSymlink, Name: "a", Link: "."}, {Type: tar.TypeSymlink, Name: "b", Link: "a/../../.."},
			{Type: tar.TypeReg, Name: "b/important.txt", Data: "pwned"}}, 0, nil, 1, "b/important.txt: "},
		{"device", []m{{Type: tar.TypeChar, Name: "mem", Major: 1, Minor: 1}, {Type: tar.TypeReg, Name: "ok", Data: "x"}}, 0, nil, 1, "mem: device node refused"},
		{"device skipped", []m{{Type: tar.TypeChar, Name: "mem", Major: 1, Minor: 1}, {Type: tar.TypeReg, Name: "ok", Data: "x"}}, 0,
			[]string{"--skip-special"}, 0, "left out 1 device nodes"},
		{"truncated", []m{{Type: tar.TypeReg, Name: "big", Data: strings.Repeat("x", 100_000)}}, 50_000, nil, 1, "truncated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ar, err := archivetest.Tar(c.members...)
			if err != nil {
				t.Fatal(err)
			}
			if c.cut > 0 {
				ar = ar[:c.cut]
			}
			args := append(append([]string{"import", "--store", store}, c.flags...), "-", "uploads/"+c.name)
			_, stderr, code := sqlfsExec(t, string(ar), args...)
			if code != c.code || !strings.Contains(stderr, c.stderr) {
				t.Errorf("exit %d, want %d; stderr %s", code, c.code, stderr)
			}
		})
	}
	out, _, code := sqlfsExec(t, "", "run", "--store", store, "--", "ls -A / uploads/*; cat important.txt")
	if code == 0 || strings.Contains(out, "pwned") || strings.Contains(out, "big") {
		t.Errorf("workspace after refusals (exit %d):\n%s", code, out)
	}
}

// TestExportAppliesUmask: modes an agent chose (a world-writable script,
// a world-writable directory, the exported root's mode on DEST itself)
// were written to the host as they were, so any local user could change
// an exported file before its owner ran it. Export masks them with the
// umask, as tar and cp do for an ordinary user.
func TestExportAppliesUmask(t *testing.T) {
	store := newStore(t, func(f *sfs.FS) []error {
		return []error{
			f.WriteFile("/run.sh", []byte("#!/bin/sh\n"), 0o755),
			f.Chmod("/run.sh", 0o777),
			f.Mkdir("/drop", 0o777),
			f.Chmod("/drop", 0o1777),
			f.Chmod("/", 0o777),
		}
	})
	old := unix.Umask(0o027) // inherited by the command
	t.Cleanup(func() { unix.Umask(old) })
	out := filepath.Join(t.TempDir(), "out")
	if _, stderr, code := sqlfsExec(t, "", "export", "--store", store, out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for name, want := range map[string]fs.FileMode{"": fs.ModeDir | 0o750, "run.sh": 0o750, "drop": fs.ModeDir | fs.ModeSticky | 0o750} {
		fi, err := os.Lstat(filepath.Join(out, name))
		if err != nil || fi.Mode() != want {
			t.Errorf("%q: mode %v, %v; want %v", name, fi.Mode(), err, want)
		}
	}
}

// TestExportStreamDropsPrivileges: `export -` carried setuid bits and
// device nodes as stored, which a root extracting the stream restores.
func TestExportStreamDropsPrivileges(t *testing.T) {
	store := privilegedStore(t)
	for _, c := range []struct {
		name   string
		flags  []string
		code   int
		stderr string
		setid  bool
		hasDev bool
	}{
		{"default", nil, 1, "device node refused", false, false},
		{"skip special", []string{"--skip-special"}, 0, "skipped", false, false},
		{"preserve special", []string{"--preserve-special"}, 0, "", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{"export", "-q", "--store", store}, c.flags...), ".", "-")
			stdout, stderr, code := sqlfsExec(t, "", args...)
			if code != c.code || !strings.Contains(stderr, c.stderr) {
				t.Fatalf("exit %d, want %d; stderr %s", code, c.code, stderr)
			}
			modes := map[string]int64{}
			tr := tar.NewReader(strings.NewReader(stdout))
			for {
				h, err := tr.Next()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						t.Fatalf("reading the stream: %v", err)
					}
					break
				}
				modes[strings.TrimPrefix(h.Name, "./")] = h.Mode
			}
			if _, ok := modes["plain"]; !ok {
				t.Fatalf("plain missing from the stream: %v", modes)
			}
			if got := modes["suid"]&syscall.S_ISUID != 0 && modes["sgid"]&syscall.S_ISGID != 0; got != c.setid {
				t.Errorf("setuid/setgid kept: %v (modes %o %o)", got, modes["suid"], modes["sgid"])
			}
			if _, got := modes["mem"]; got != c.hasDev {
				t.Errorf("device node in the stream: %v", got)
			}
		})
	}
}
