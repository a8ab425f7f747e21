package shell

import (
	"archive/tar"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
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

// TestTarGitArchive: a `git archive` tarball starts with a PAX global
// header; tar -x refused it as an unsupported member (exit 2) and tar -t
// listed it. GNU tar does neither.
func TestTarGitArchive(t *testing.T) {
	b, fsys := newTestBackend(t, Options{})
	ar, err := archivetest.GitArchive("f")
	if err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/g.tar", ar, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := sh(t, b, "tar -tf g.tar"); out.ExitCode != 0 || out.stdout != "f\n" {
		t.Errorf("tar -t: exit %d, %q %q", out.ExitCode, out.stdout, out.stderr)
	}
	if out := sh(t, b, "mkdir x && tar -xf g.tar -C x && ls x"); out.ExitCode != 0 || out.stdout != "f\n" {
		t.Errorf("tar -x: exit %d, %q %q", out.ExitCode, out.stdout, out.stderr)
	}
}

// TestTarOverQuotaSaysSo: a member past the quota failed with "short
// write": the store's writes stop short at the quota like write(2), and
// only the next write reports ENOSPC. The message now names the cause,
// and nothing of the member is left.
func TestTarOverQuotaSaysSo(t *testing.T) {
	fsys, err := sfs.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), sfs.Options{NoAudit: true, Policy: sfs.Policy{QuotaBytes: 6 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	b := New(fsys, Options{})
	t.Cleanup(func() {
		if err := errors.Join(b.Close(), fsys.Close()); err != nil {
			t.Error(err)
		}
	})
	big, err := archivetest.Tar(archivetest.Member{Type: tar.TypeReg, Name: "big", Data: strings.Repeat("x", 4<<20)})
	if err != nil {
		t.Fatal(err)
	}
	sparse, err := archivetest.SparsePAX("sparse", 3<<30, 1<<20, "hello")
	if err != nil {
		t.Fatal(err)
	}
	for name, ar := range map[string][]byte{"big": big, "sparse": sparse} {
		if err := fsys.WriteFile("/"+name+".tar", ar, 0o644); err != nil {
			t.Fatal(err)
		}
		out := sh(t, b, "tar -xf "+name+".tar")
		if out.ExitCode != 2 || !strings.Contains(out.stderr, "no space left on device") {
			t.Errorf("%s: exit %d, stderr %q", name, out.ExitCode, out.stderr)
		}
		if ents, err := fsys.ReadDir("/"); err != nil || len(ents) != 1 {
			t.Errorf("%s: the workspace holds %v, %v; want the archive alone", name, ents, err)
		}
		if err := fsys.Remove("/" + name + ".tar"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTarListCutArchive: tar -t (and -O) read with archive/tar alone, so
// an archive cut between two members listed what was there with exit 0;
// GNU tar, and this tar's -x, say "Unexpected EOF in archive" (exit 2).
func TestTarListCutArchive(t *testing.T) {
	b, fsys := newTestBackend(t, Options{})
	ar, err := archivetest.Tar(archivetest.Member{Type: tar.TypeReg, Name: "a", Data: "hi"}, archivetest.Member{Type: tar.TypeReg, Name: "b", Data: "there"})
	if err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/cut.tar", ar[:1024], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"tar -tf cut.tar", "tar -xOf cut.tar", "tar -xf cut.tar"} {
		out := sh(t, b, cmd)
		if out.ExitCode != 2 || !strings.Contains(out.stderr, "Unexpected EOF in archive") {
			t.Errorf("%s: exit %d, stderr %q", cmd, out.ExitCode, out.stderr)
		}
	}
}
