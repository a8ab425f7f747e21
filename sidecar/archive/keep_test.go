package archive

import (
	"archive/tar"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/sqlfs/sqlfs/sidecar/archive/archivetest"
)

// TestFailedMemberKeepsExistingFile: a member that cannot be made (a hard
// link to a missing target, a symlink whose target is too long, a
// directory over a file with KeepOld) removed the file of that name first,
// so bad input lost data. A hard link to itself leaves the file as it was.
func TestFailedMemberKeepsExistingFile(t *testing.T) {
	cases := []struct {
		name    string
		m       member
		opts    Options
		wantErr bool
	}{
		{"hard link to missing target", member{Type: tar.TypeLink, Name: "keep", Link: "missing"}, Options{}, true},
		{"hard link to itself", member{Type: tar.TypeLink, Name: "keep", Link: "keep"}, Options{}, false},
		{"symlink target too long", member{Type: tar.TypeSymlink, Name: "keep", Link: strings.Repeat("x", 5000)}, Options{}, true},
		{"directory over a file, keep old", member{Type: tar.TypeDir, Name: "keep/"}, Options{KeepOld: true}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			targets(t, func(t *testing.T, fsys FS, top string) {
				keep := filepath.Join(top, dest, "keep")
				if err := os.WriteFile(keep, []byte("precious"), 0o644); err != nil {
					t.Fatal(err)
				}
				_, err := extract(t, fsys, makeTar(t, c.m), c.opts)
				var me *MemberError
				if errors.As(err, &me) != c.wantErr || !c.wantErr && err != nil {
					t.Errorf("err = %v, want a member error: %v", err, c.wantErr)
				}
				if c.m.Type == tar.TypeLink && c.wantErr && (!strings.Contains(err.Error(), `hard link to "missing"`) || strings.Contains(err.Error(), tempInfix)) {
					t.Errorf("err = %v, want it to name the missing target", err)
				}
				if b, err := os.ReadFile(keep); err != nil || string(b) != "precious" {
					t.Errorf("existing file: %q, %v; want it untouched", b, err)
				}
				if ents, _ := os.ReadDir(filepath.Join(top, dest)); len(ents) != 1 {
					t.Errorf("destination holds %v, want only keep", ents)
				}
			})
		})
	}
}

// TestStreamMustEnd: a stream cut at a member boundary, or an empty one,
// was taken as a whole archive (a producer that died halfway imported
// fewer files with success). GNU tar refuses both; it accepts a lone zero
// block at the end.
func TestStreamMustEnd(t *testing.T) {
	ar := makeTar(t, member{Type: tar.TypeReg, Name: "a", Data: "hi"}, member{Type: tar.TypeReg, Name: "b", Data: "there"})
	cases := []struct {
		name  string
		input []byte
		want  error
		files int
	}{
		{"empty", nil, ErrCorrupt, 0},
		{"cut after a member", ar[:1024], ErrTruncated, 1},
		{"cut after the last member", ar[:2048], ErrTruncated, 2},
		{"one zero block", ar[:2048+512], nil, 2},
		{"whole", ar, nil, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			mustMkdir(t, top+dest)
			st, err := extract(t, osFS{top}, c.input, Options{})
			if c.want == nil && err != nil || !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
			if st.Files != c.files {
				t.Errorf("%d files, want %d", st.Files, c.files)
			}
		})
	}
}

// TestGlobalHeaderIsNotAMember: `git archive` starts with a PAX global
// header, which was refused as an unsupported member (exit 1 for every
// git tarball). GNU tar reads it as metadata, not a member.
func TestGlobalHeaderIsNotAMember(t *testing.T) {
	ar, err := archivetest.GitArchive("f")
	if err != nil {
		t.Fatal(err)
	}
	listed := 0
	top := t.TempDir()
	mustMkdir(t, top+dest)
	st, err := extract(t, osFS{top}, ar, Options{OnMember: func(*tar.Header) { listed++ }})
	if err != nil || st.Files != 1 || listed != 1 {
		t.Errorf("err %v, stats %+v, %d members listed; want f alone", err, st, listed)
	}
}

// dotHiddenFS refuses every name whose base starts with a dot, as the
// store does under a hidden '.*' rule.
type dotHiddenFS struct{ osFS }

func hiddenErr(op, n string) error {
	return &fs.PathError{Op: op, Path: n, Err: syscall.ENOENT}
}
func dot(n string) bool { return strings.HasPrefix(filepath.Base(n), ".") }
func (d dotHiddenFS) Lstat(n string) (fs.FileInfo, error) {
	if dot(n) {
		return nil, hiddenErr("lstat", n)
	}
	return d.osFS.Lstat(n)
}
func (d dotHiddenFS) Create(n string, p fs.FileMode) (io.WriteCloser, error) {
	if dot(n) {
		return nil, hiddenErr("create", n)
	}
	return d.osFS.Create(n, p)
}
func (d dotHiddenFS) Symlink(t, n string) error {
	if dot(n) {
		return hiddenErr("symlink", n)
	}
	return d.osFS.Symlink(t, n)
}
func (d dotHiddenFS) Link(a, b string) error {
	if dot(a) || dot(b) {
		return hiddenErr("link", b)
	}
	return d.osFS.Link(a, b)
}
func (d dotHiddenFS) Rename(a, b string) error {
	if dot(a) || dot(b) {
		return hiddenErr("rename", b)
	}
	return d.osFS.Rename(a, b)
}

// TestTempNameUnderDotRules: members are written under a temporary name
// a rule on dotfiles does not cover unless it covers the member: under a
// hidden '.*' every member was refused (its temporary name began with a
// dot); now only .env is, and a 255-byte name still fits.
func TestTempNameUnderDotRules(t *testing.T) {
	top := t.TempDir()
	mustMkdir(t, filepath.Join(top, dest))
	long := strings.Repeat("n", 255)
	_, err := extract(t, dotHiddenFS{osFS{top}}, makeTar(t,
		member{Type: tar.TypeReg, Name: "a.txt", Data: "a", Mode: 0o644}, member{Type: tar.TypeReg, Name: ".env", Data: "s", Mode: 0o644}, member{Type: tar.TypeReg, Name: long, Data: "l", Mode: 0o644},
		member{Name: "l", Type: tar.TypeSymlink, Link: "a.txt"}, member{Name: "h", Type: tar.TypeLink, Link: "a.txt"}), Options{})
	if err == nil || !strings.Contains(err.Error(), ".env") || strings.Contains(err.Error(), "a.txt:") {
		t.Errorf("err = %v, want only .env refused", err)
	}
	for _, n := range []string{"a.txt", long, "l", "h"} {
		if _, err := os.Lstat(filepath.Join(top, dest, n)); err != nil {
			t.Errorf("%s: %v", n[:min(len(n), 10)], err)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(top, dest)); len(ents) != 4 {
		t.Errorf("destination holds %d entries, want 4", len(ents))
	}
}

// TestTempNameKeepsRunes: the temporary name of a member with a long base
// name is cut to fit NAME_MAX at a character boundary: a byte count cut
// "é" in two, so the name a rule or a listing saw was not valid UTF-8.
func TestTempNameKeepsRunes(t *testing.T) {
	const random = "abcdefghijkl"
	for _, tc := range []struct{ name, base string }{
		{"ascii", strings.Repeat("n", 255)},
		{"two-byte", strings.Repeat("é", 127)},
		{"two-byte offset", "x" + strings.Repeat("é", 127)},
		{"three-byte", strings.Repeat("€", 85)},
		{"four-byte", strings.Repeat("𝄞", 63)},
		{"four-byte offset", "xy" + strings.Repeat("𝄞", 63)},
		{"short", "é.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := path.Base(tempName("d/"+tc.base, random))
			kept, ok := strings.CutSuffix(tmp, tempInfix+random)
			switch {
			case !ok || len(tmp) > 255:
				t.Errorf("temporary name %q (%d bytes): not base+marker within 255 bytes", tmp, len(tmp))
			case !utf8.ValidString(tmp):
				t.Errorf("temporary name %q is not valid UTF-8", tmp)
			case !strings.HasPrefix(tc.base, kept) || len(kept) < 255-len(tempInfix+random)-(utf8.UTFMax-1) && kept != tc.base:
				t.Errorf("kept %q of %q", kept, tc.base)
			}
		})
	}
}
