package archive

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/archive/archivetest"
)

// osFS is an extraction target with no confinement of its own: plain
// system calls below base that follow symlinks in parents, like the
// store does. Only Extract's own resolution keeps members inside.
type osFS struct{ base string }

func (o osFS) p(n string) string                      { return filepath.Join(o.base, n) }
func (o osFS) Lstat(n string) (fs.FileInfo, error)    { return os.Lstat(o.p(n)) }
func (o osFS) Readlink(n string) (string, error)      { return os.Readlink(o.p(n)) }
func (o osFS) Mkdir(n string, p fs.FileMode) error    { return os.Mkdir(o.p(n), p) }
func (o osFS) Rename(a, b string) error               { return os.Rename(o.p(a), o.p(b)) }
func (o osFS) Remove(n string) error                  { return os.Remove(o.p(n)) }
func (o osFS) Symlink(t, n string) error              { return os.Symlink(t, o.p(n)) }
func (o osFS) Link(a, b string) error                 { return os.Link(o.p(a), o.p(b)) }
func (o osFS) Chmod(n string, m fs.FileMode) error    { return os.Chmod(o.p(n), m) }
func (o osFS) Chown(n string, u, g int) error         { return os.Lchown(o.p(n), u, g) }
func (o osFS) Chtimes(n string, a, m time.Time) error { return os.Chtimes(o.p(n), a, m) }
func (o osFS) Mknod(n string, m uint32, d uint64) error {
	return syscall.Mknod(o.p(n), m, int(d))
}
func (o osFS) Create(n string, p fs.FileMode) (io.WriteCloser, error) {
	return os.OpenFile(o.p(n), os.O_WRONLY|os.O_CREATE|os.O_EXCL, p)
}

type member = archivetest.Member

func makeTar(t *testing.T, ms ...member) []byte {
	t.Helper()
	b, err := archivetest.Tar(ms...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// targets runs f against both an unconfined FS and HostFS; top is the
// directory that holds the destination "dest", to look for escapes.
func targets(t *testing.T, f func(t *testing.T, fsys FS, top string)) {
	t.Run("unconfined", func(t *testing.T) {
		top := t.TempDir()
		mustMkdir(t, filepath.Join(top, "uploads", "user1"))
		f(t, osFS{top}, top)
	})
	t.Run("host", func(t *testing.T) {
		top := t.TempDir()
		mustMkdir(t, filepath.Join(top, "uploads", "user1"))
		root, err := os.OpenRoot(filepath.Join(top, "uploads", "user1"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { root.Close() })
		// HostFS is rooted at the destination: present it below the
		// same name so one test body serves both.
		f(t, prefixFS{HostFS(root), "/uploads/user1"}, top)
	})
}

// prefixFS strips a prefix from every name before passing it on.
type prefixFS struct {
	FS
	prefix string
}

func (p prefixFS) s(n string) string {
	r := strings.TrimPrefix(n, p.prefix)
	if r == "" {
		return "/"
	}
	return r
}
func (p prefixFS) Lstat(n string) (fs.FileInfo, error)    { return p.FS.Lstat(p.s(n)) }
func (p prefixFS) Readlink(n string) (string, error)      { return p.FS.Readlink(p.s(n)) }
func (p prefixFS) Mkdir(n string, m fs.FileMode) error    { return p.FS.Mkdir(p.s(n), m) }
func (p prefixFS) Rename(a, b string) error               { return p.FS.Rename(p.s(a), p.s(b)) }
func (p prefixFS) Remove(n string) error                  { return p.FS.Remove(p.s(n)) }
func (p prefixFS) Symlink(t, n string) error              { return p.FS.Symlink(t, p.s(n)) }
func (p prefixFS) Link(a, b string) error                 { return p.FS.Link(p.s(a), p.s(b)) }
func (p prefixFS) Chmod(n string, m fs.FileMode) error    { return p.FS.Chmod(p.s(n), m) }
func (p prefixFS) Chown(n string, u, g int) error         { return p.FS.Chown(p.s(n), u, g) }
func (p prefixFS) Chtimes(n string, a, m time.Time) error { return p.FS.Chtimes(p.s(n), a, m) }
func (p prefixFS) Mknod(n string, m uint32, d uint64) error {
	return p.FS.Mknod(p.s(n), m, d)
}
func (p prefixFS) Create(n string, m fs.FileMode) (io.WriteCloser, error) {
	return p.FS.Create(p.s(n), m)
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

const dest = "/uploads/user1"

func extract(t *testing.T, fsys FS, archive []byte, opts Options) (Stats, error) {
	t.Helper()
	return Extract(context.Background(), bytes.NewReader(archive), fsys, dest, opts)
}

// TestRefusesEscapes holds the archives GNU tar refuses (or confines):
// none may create or change anything outside the destination.
func TestRefusesEscapes(t *testing.T) {
	cases := []struct {
		name    string
		members []member
		want    error    // for the hostile member
		inside  []string // must exist below dest afterwards
	}{
		{"symlink chain climbs out", []member{
			{Type: tar.TypeSymlink, Name: "a", Link: "."},
			{Type: tar.TypeSymlink, Name: "b", Link: "a/../../.."},
			{Type: tar.TypeReg, Name: "b/important.txt", Data: "pwned"},
		}, ErrUnsafePath, []string{"a", "b"}},
		{"dotdot member", []member{
			{Type: tar.TypeReg, Name: "../../important.txt", Data: "pwned"},
		}, ErrUnsafePath, nil},
		{"dotdot inside name", []member{
			{Type: tar.TypeReg, Name: "x/../../../important.txt", Data: "pwned"},
		}, ErrUnsafePath, nil},
		{"absolute symlink followed", []member{
			{Type: tar.TypeSymlink, Name: "etc", Link: "/"},
			{Type: tar.TypeReg, Name: "etc/important.txt", Data: "pwned"},
		}, ErrUnsafePath, []string{"etc"}},
		{"relative symlink out", []member{
			{Type: tar.TypeSymlink, Name: "up", Link: "../.."},
			{Type: tar.TypeReg, Name: "up/important.txt", Data: "pwned"},
		}, ErrUnsafePath, []string{"up"}},
		{"hard link out by dotdot", []member{
			{Type: tar.TypeLink, Name: "l", Link: "../../secret"},
		}, ErrUnsafePath, nil},
		{"hard link out through symlink", []member{
			{Type: tar.TypeSymlink, Name: "s", Link: "../.."},
			{Type: tar.TypeLink, Name: "l", Link: "s/secret"},
		}, ErrUnsafePath, []string{"s"}},
		{"hard link absolute stays inside", []member{
			{Type: tar.TypeLink, Name: "l", Link: "/secret"},
		}, fs.ErrNotExist, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			targets(t, func(t *testing.T, fsys FS, top string) {
				secret := filepath.Join(top, "secret")
				if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
					t.Fatal(err)
				}
				var warned []error
				_, err := extract(t, fsys, makeTar(t, c.members...), Options{Warn: func(err error) { warned = append(warned, err) }})
				if !errors.Is(err, c.want) {
					t.Fatalf("err = %v, want %v", err, c.want)
				}
				var me *MemberError
				if !errors.As(err, &me) || len(warned) != 1 {
					t.Fatalf("want one member error, got %v (warned %v)", err, warned)
				}
				if _, err := os.Lstat(filepath.Join(top, "important.txt")); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("a file appeared outside the destination: %v", err)
				}
				if b, _ := os.ReadFile(secret); string(b) != "secret" {
					t.Errorf("secret changed: %q", b)
				}
				if fi, _ := os.Stat(secret); fi.Sys().(*syscall.Stat_t).Nlink != 1 {
					t.Errorf("secret got a hard link")
				}
				for _, n := range c.inside {
					if _, err := os.Lstat(filepath.Join(top, dest, n)); err != nil {
						t.Errorf("%s not extracted: %v", n, err)
					}
				}
			})
		})
	}
}

func TestConfinedMembers(t *testing.T) {
	targets(t, func(t *testing.T, fsys FS, top string) {
		outside := filepath.Join(top, "outside")
		mustMkdir(t, outside)
		ar := makeTar(t,
			member{Type: tar.TypeReg, Name: "/abs.txt", Data: "abs"}, // leading slash dropped
			member{Type: tar.TypeDir, Name: "sub/"},
			member{Type: tar.TypeSymlink, Name: "a", Link: "sub"}, // stays inside: followed
			member{Type: tar.TypeReg, Name: "a/f", Data: "via a"},
			// A symlink replaced by a directory, as GNU tar does.
			member{Type: tar.TypeSymlink, Name: "d", Link: "../../outside"},
			member{Type: tar.TypeDir, Name: "d/"},
			member{Type: tar.TypeReg, Name: "d/g", Data: "in d"},
			member{Type: tar.TypeLink, Name: "h", Link: "/sub/f"},
		)
		st, err := extract(t, fsys, ar, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"abs.txt": "abs", "sub/f": "via a", "d/g": "in d", "h": "via a"} {
			b, err := os.ReadFile(filepath.Join(top, dest, name))
			if err != nil || string(b) != want {
				t.Errorf("%s = %q, %v; want %q", name, b, err, want)
			}
		}
		if fi, err := os.Lstat(filepath.Join(top, dest, "d")); err != nil || !fi.IsDir() {
			t.Errorf("d is not a directory: %v", err)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Errorf("outside got %v", ents)
		}
		if st.Files != 3 || st.Links != 1 || st.Symlinks != 2 || st.Dirs != 2 {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestSpecialBitsAndDevices(t *testing.T) {
	ar := makeTar(t,
		member{Type: tar.TypeReg, Name: "suid", Mode: 0o4755, Data: "#!/bin/sh\n"},
		member{Type: tar.TypeReg, Name: "sgid", Mode: 0o2755, Data: "x"},
		member{Type: tar.TypeDir, Name: "sticky/", Mode: 0o1777},
		member{Type: tar.TypeChar, Name: "null", Mode: 0o666, Major: 1, Minor: 3},
		member{Type: tar.TypeBlock, Name: "sda", Mode: 0o666, Major: 8, Minor: 0},
		member{Type: tar.TypeFifo, Name: "fifo", Mode: 0o644},
		member{Type: tar.TypeReg, Name: "after", Data: "still here"},
	)
	cases := []struct {
		special  Special
		wantErr  error
		devices  bool
		setid    bool
		warnings int
	}{
		{RefuseDevices, ErrDevice, false, false, 2},
		{SkipDevices, nil, false, false, 2},
		{KeepDevices, nil, true, true, 0},
	}
	for _, c := range cases {
		t.Run(strconv.Itoa(int(c.special)), func(t *testing.T) {
			if c.devices && os.Geteuid() != 0 {
				t.Skip("mknod of device nodes needs root")
			}
			targets(t, func(t *testing.T, fsys FS, top string) {
				warnings := 0
				_, err := extract(t, fsys, ar, Options{Special: c.special, Warn: func(error) { warnings++ }})
				if c.wantErr == nil && err != nil || !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				if warnings != c.warnings {
					t.Errorf("%d warnings, want %d", warnings, c.warnings)
				}
				in := func(n string) string { return filepath.Join(top, dest, n) }
				for n, bit := range map[string]fs.FileMode{"suid": fs.ModeSetuid, "sgid": fs.ModeSetgid} {
					fi, err := os.Lstat(in(n))
					if err != nil {
						t.Fatal(err)
					}
					if got := fi.Mode()&bit != 0; got != c.setid {
						t.Errorf("%s mode %v: bit kept %v, want %v", n, fi.Mode(), got, c.setid)
					}
					if fi.Mode().Perm() != 0o755 {
						t.Errorf("%s perm %v", n, fi.Mode().Perm())
					}
				}
				if fi, err := os.Lstat(in("sticky")); err != nil || fi.Mode()&fs.ModeSticky == 0 {
					t.Errorf("sticky dir lost its bit: %v", err)
				}
				for _, n := range []string{"null", "sda"} {
					_, err := os.Lstat(in(n))
					if exists := err == nil; exists != c.devices {
						t.Errorf("%s exists %v, want %v", n, exists, c.devices)
					}
				}
				if fi, err := os.Lstat(in("fifo")); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
					t.Errorf("fifo not made: %v", err)
				}
				if b, _ := os.ReadFile(in("after")); string(b) != "still here" {
					t.Errorf("member after a refused one: %q", b)
				}
			})
		})
	}
}

func TestUnsupportedMemberIsError(t *testing.T) {
	targets(t, func(t *testing.T, fsys FS, top string) {
		ar := makeTar(t, member{Type: 'Z', Name: "odd"}, member{Type: tar.TypeReg, Name: "ok", Data: "x"},
			member{Type: tar.TypeCont, Name: "contiguous", Data: "c"})
		_, err := extract(t, fsys, ar, Options{})
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("err = %v, want ErrUnsupported", err)
		}
		for _, n := range []string{"ok", "contiguous"} {
			if _, err := os.Stat(filepath.Join(top, dest, n)); err != nil {
				t.Error(err)
			}
		}
	})
}

// TestTruncatedLeavesNoPartialFile cuts an archive inside a member's data,
// at a block boundary and off one.
func TestTruncatedLeavesNoPartialFile(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB
	ar := makeTar(t, member{Type: tar.TypeReg, Name: "first", Data: "whole"}, member{Type: tar.TypeReg, Name: "big", Data: big})
	for _, cut := range []int{len(ar) / 2, len(ar)/2 + 100, 1024 + 512 + 10} {
		t.Run(strconv.Itoa(cut), func(t *testing.T) {
			targets(t, func(t *testing.T, fsys FS, top string) {
				_, err := extract(t, fsys, ar[:cut], Options{})
				if !errors.Is(err, ErrTruncated) {
					t.Fatalf("err = %v, want ErrTruncated", err)
				}
				ents, _ := os.ReadDir(filepath.Join(top, dest))
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				if strings.Join(names, ",") != "first" {
					t.Errorf("destination holds %v, want only the complete member", names)
				}
			})
		})
	}
}

// memFS is an in-memory target whose files hold holes and whose total
// file size is capped, like the store's quota: it counts apparent size.
type memFS struct {
	osFS
	quota int64
	used  *int64
	holes *int64 // bytes seeked over
}

type memFile struct {
	*os.File
	fsys *memFS
	size int64
}

func (m *memFS) Create(n string, p fs.FileMode) (io.WriteCloser, error) {
	f, err := os.OpenFile(m.p(n), os.O_RDWR|os.O_CREATE|os.O_EXCL, p)
	if err != nil {
		return nil, err
	}
	return &memFile{File: f, fsys: m}, nil
}

func (f *memFile) Truncate(size int64) error {
	if *f.fsys.used+size-f.size > f.fsys.quota {
		return syscall.ENOSPC
	}
	*f.fsys.used += size - f.size
	f.size = size
	return f.File.Truncate(size)
}

func (f *memFile) Seek(off int64, whence int) (int64, error) {
	*f.fsys.holes += off
	return f.File.Seek(off, whence)
}

func (f *memFile) Write(b []byte) (int, error) {
	pos, _ := f.File.Seek(0, io.SeekCurrent)
	if end := pos + int64(len(b)); end > f.size {
		if err := f.Truncate(end); err != nil {
			return 0, err
		}
	}
	return f.File.Write(b)
}

func TestSparseMembers(t *testing.T) {
	const gib = int64(1) << 30
	cases := []struct {
		name     string
		archive  func(t *testing.T) []byte
		quota    int64
		wantErr  error
		wantSize int64
	}{
		{"pax within quota", func(t *testing.T) []byte { return sparsePAX(t, 4<<20) }, 8 << 20, nil, 4 << 20},
		{"pax over quota", func(t *testing.T) []byte { return sparsePAX(t, 3*gib) }, 8 << 20, syscall.ENOSPC, -1},
		{"gnu old within quota", func(*testing.T) []byte { return archivetest.GNUOldSparse("s", 4<<20, 1<<20, "hello") }, 8 << 20, nil, 4 << 20},
		{"gnu old over quota", func(*testing.T) []byte { return archivetest.GNUOldSparse("s", 3*gib, 1<<20, "hello") }, 8 << 20, syscall.ENOSPC, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			mustMkdir(t, filepath.Join(top, dest))
			var used, holes int64
			m := &memFS{osFS: osFS{top}, quota: c.quota, used: &used, holes: &holes}
			ar := c.archive(t)
			if len(ar) > 10<<10 {
				t.Fatalf("archive is %d bytes", len(ar))
			}
			st, err := extract(t, m, ar, Options{})
			if c.wantErr == nil && err != nil || !errors.Is(err, c.wantErr) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			fi, statErr := os.Stat(filepath.Join(top, dest, "s"))
			if c.wantSize < 0 {
				if statErr == nil {
					t.Fatalf("refused member left a file of %d bytes", fi.Size())
				}
				if ents, _ := os.ReadDir(filepath.Join(top, dest)); len(ents) != 0 {
					t.Errorf("left %v", ents)
				}
				return
			}
			if statErr != nil || fi.Size() != c.wantSize {
				t.Fatalf("size %v, %v; want %d", fi, statErr, c.wantSize)
			}
			b, _ := os.ReadFile(filepath.Join(top, dest, "s"))
			if string(b[1<<20:1<<20+5]) != "hello" || !allZero(b[:1<<20]) || !allZero(b[1<<20+5:]) {
				t.Error("sparse data misplaced")
			}
			if holes < c.wantSize-64<<10 {
				t.Errorf("only %d bytes seeked over; holes were written", holes)
			}
			if st.Files != 1 || used != c.wantSize {
				t.Errorf("stats %+v, quota used %d", st, used)
			}
		})
	}
}

func sparsePAX(t *testing.T, realSize int64) []byte {
	t.Helper()
	b, err := archivetest.SparsePAX("s", realSize, 1<<20, "hello")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRandomArchivesStayInside extracts random archives of symlinks,
// directories, files and hard links with climbing names and targets into
// an unconfined target: whatever they hold, nothing outside the
// destination may be created or changed.
func TestRandomArchivesStayInside(t *testing.T) {
	names := []string{"a", "b", "c", "a/b", "b/c", "a/b/c", "c/../a", "/a", "./b", "a/../../x", "../x"}
	targets := []string{".", "..", "../..", "a", "a/..", "b/../..", "/", "/etc", "c/d", "a/b/../../.."}
	types := []byte{tar.TypeDir, tar.TypeReg, tar.TypeSymlink, tar.TypeSymlink, tar.TypeLink}
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("seed %d", seed)
	for i := range 300 {
		top := t.TempDir()
		mustMkdir(t, filepath.Join(top, dest))
		if err := os.WriteFile(filepath.Join(top, "secret"), []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
		var ms []member
		for range 1 + rng.IntN(8) {
			m := member{Type: types[rng.IntN(len(types))], Name: names[rng.IntN(len(names))]}
			switch m.Type {
			case tar.TypeReg:
				m.Name += "/f"[:rng.IntN(2)*2]
				m.Data = "pwned"
			case tar.TypeSymlink:
				m.Link = targets[rng.IntN(len(targets))]
			case tar.TypeLink:
				m.Link = append(names, "../secret", "/secret")[rng.IntN(len(names)+2)]
			}
			ms = append(ms, m)
		}
		_, err := extract(t, osFS{top}, makeTar(t, ms...), Options{})
		var xe *ExtractError
		if err != nil && !errors.As(err, &xe) {
			t.Fatalf("case %d %+v: %v", i, ms, err)
		}
		ents, _ := os.ReadDir(top)
		if len(ents) != 2 {
			t.Fatalf("case %d %+v: top holds %v", i, ms, ents)
		}
		if ents, _ := os.ReadDir(filepath.Join(top, "uploads")); len(ents) != 1 {
			t.Fatalf("case %d %+v: uploads holds %v", i, ms, ents)
		}
		fi, err := os.Stat(filepath.Join(top, "secret"))
		if b, _ := os.ReadFile(filepath.Join(top, "secret")); err != nil || string(b) != "secret" || fi.Sys().(*syscall.Stat_t).Nlink != 1 {
			t.Fatalf("case %d %+v: secret changed", i, ms)
		}
	}
}
