package shell

import (
	"archive/tar"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/sidecar/archive/archivetest"
)

// TestTarRefusesEscapes: the shell's tar follows the same rules as import:
// a symlink from the archive never carries a later member out of -C, and
// setuid bits are dropped.
func TestTarRefusesEscapes(t *testing.T) {
	b, fsys := newTestBackend(t, Options{})
	type m = archivetest.Member
	ar, err := archivetest.Tar(
		m{Type: tar.TypeSymlink, Name: "a", Link: "."},
		m{Type: tar.TypeSymlink, Name: "b", Link: "a/../../.."},
		m{Type: tar.TypeReg, Name: "b/important.txt", Data: "pwned"},
		m{Type: tar.TypeReg, Name: "../up.txt", Data: "pwned"},
		m{Type: tar.TypeReg, Name: "suid", Mode: 0o4755, Data: "x"},
		m{Type: tar.TypeChar, Name: "mem", Major: 1, Minor: 1},
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/h.tar", ar, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/important.txt", []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := sh(t, b, "mkdir -p uploads/user1 && tar -xf h.tar -C uploads/user1")
	if out.ExitCode != 2 {
		t.Errorf("exit %d, want 2", out.ExitCode)
	}
	for _, want := range []string{"b/important.txt: ", "../up.txt: ", "mem: ", "Exiting with failure status"} {
		if !strings.Contains(out.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out.stderr)
		}
	}
	if b, _ := fsys.ReadFile("/important.txt"); string(b) != "keep" {
		t.Errorf("/important.txt = %q", b)
	}
	if a, err := fsys.Stat("/uploads/user1/suid"); err != nil || a.Mode&0o7777 != 0o755 {
		t.Errorf("suid mode %o %v", a.Mode, err)
	}
	if out := sh(t, b, "ls -A / uploads"); strings.Contains(out.stdout, "up.txt") {
		t.Errorf("a member landed above -C:\n%s", out.stdout)
	}
}
