package tools

import (
	"archive/tar"
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar/archive/archivetest"
	"github.com/sqlfs/sqlfs/sqlstore"
)

type tarMember = archivetest.Member

func tarOf(t *testing.T, ms ...tarMember) []byte {
	t.Helper()
	b, err := archivetest.Tar(ms...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportClobberingArchive is the measured escape: a -> ., b ->
// a/../../.., then b/important.txt imported into uploads/user1 overwrote
// /important.txt, audited as /uploads/user1/b/important.txt.
func TestImportClobberingArchive(t *testing.T) {
	core := newCore(t, sfs.Options{})
	s := NewForCore(core, nil, Options{})
	if err := core.WriteFile("/important.txt", []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	ar := tarOf(t,
		tarMember{Type: tar.TypeSymlink, Name: "a", Link: "."},
		tarMember{Type: tar.TypeSymlink, Name: "b", Link: "a/../../.."},
		tarMember{Type: tar.TypeReg, Name: "b/important.txt", Data: "pwned"},
		tarMember{Type: tar.TypeDir, Name: "sub/"},
		tarMember{Type: tar.TypeSymlink, Name: "c", Link: "sub"},
		tarMember{Type: tar.TypeReg, Name: "c/f", Data: "inside"},
	)
	_, err := s.Import(t.Context(), "uploads/user1", bytes.NewReader(ar), ImportOptions{})
	var te *Error
	if !errors.As(err, &te) || te.Code != CodeEscape || !strings.Contains(err.Error(), "b/important.txt") {
		t.Fatalf("err = %v, want %s naming b/important.txt", err, CodeEscape)
	}
	if b, _ := core.ReadFile("/important.txt"); string(b) != "keep" {
		t.Fatalf("/important.txt = %q", b)
	}
	if b, err := core.ReadFile("/uploads/user1/sub/f"); string(b) != "inside" {
		t.Fatalf("member through an inside symlink: %q %v", b, err)
	}
	ev, err := s.Audit(t.Context(), sqlstore.AuditFilter{Actor: ImportActor})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range ev {
		paths = append(paths, e.Path, e.Path2)
	}
	all := strings.Join(paths, " ")
	if strings.Contains(all, "important") || strings.Contains(all, "/c/f") || !strings.Contains(all, "/uploads/user1/sub/f") {
		t.Errorf("audit paths are not the resolved ones: %s", all)
	}
}

// sparsePAX declares realSize bytes with "hello" at 1 MiB.
func sparsePAX(t *testing.T, name string, realSize int64) []byte {
	t.Helper()
	b, err := archivetest.SparsePAX(name, realSize, 1<<20, "hello")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportSparseAgainstQuota: a 10 KiB archive declaring 3 GiB wrote 3
// GiB past the quota; now its size is charged first and refused, and a
// sparse file that fits keeps its holes.
func TestImportSparseAgainstQuota(t *testing.T) {
	core := newCore(t, sfs.Options{Policy: sfs.Policy{QuotaBytes: 64 << 20}})
	s := NewForCore(core, nil, Options{})
	ar := sparsePAX(t, "huge", 3<<30)
	if len(ar) > 10<<10 {
		t.Fatalf("archive is %d bytes", len(ar))
	}
	_, err := s.Import(t.Context(), "in", bytes.NewReader(ar), ImportOptions{})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want ENOSPC", err)
	}
	if ents, _ := core.ReadDir("/in"); len(ents) != 0 {
		t.Errorf("refused member left %v", ents)
	}
	if u := core.Usage(); u.Bytes != 0 {
		t.Errorf("quota still charged %d bytes", u.Bytes)
	}

	st, err := s.Import(t.Context(), "in", bytes.NewReader(sparsePAX(t, "fits", 32<<20)), ImportOptions{})
	if err != nil || st.Files != 1 {
		t.Fatalf("import: %+v %v", st, err)
	}
	a, err := core.Stat("/in/fits")
	if err != nil || a.Size != 32<<20 {
		t.Fatalf("size: %+v %v", a, err)
	}
	if err := core.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	chunks := 0
	if err := core.Store().ReadChunks(t.Context(), a.Ino, 0, sqlstore.MaxChunks, func(int64, []byte) { chunks++ }); err != nil {
		t.Fatal(err)
	}
	if chunks > 1 {
		t.Errorf("%d chunks stored for one 5-byte extent: holes were written", chunks)
	}
	b, _ := core.ReadFile("/in/fits")
	if string(b[1<<20:1<<20+5]) != "hello" || bytes.Count(b, []byte{0}) != len(b)-5 {
		t.Error("sparse data misplaced")
	}
}

// TestImportTruncatedLeavesNoPartialFile: a truncated archive ended with
// "unexpected EOF (internal)" and a partial file.
func TestImportTruncatedLeavesNoPartialFile(t *testing.T) {
	core := newCore(t, sfs.Options{})
	s := NewForCore(core, nil, Options{})
	ar := tarOf(t, tarMember{Type: tar.TypeReg, Name: "big", Data: strings.Repeat("x", 1<<20)})
	_, err := s.Import(t.Context(), "in", bytes.NewReader(ar[:600<<10]), ImportOptions{})
	var te *Error
	if !errors.As(err, &te) || te.Code != CodeInvalid || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("err = %v, want %s saying truncated", err, CodeInvalid)
	}
	ents, err := core.ReadDir("/in")
	if err != nil || len(ents) != 0 {
		t.Errorf("left %v %v", ents, err)
	}
}

// TestImportStripsSetIDRefusesDevices: setuid bits and device nodes were
// stored as given.
func TestImportStripsSetIDRefusesDevices(t *testing.T) {
	core := newCore(t, sfs.Options{})
	s := NewForCore(core, nil, Options{})
	ar := tarOf(t,
		tarMember{Type: tar.TypeReg, Name: "suid", Mode: 0o4755, Data: "x"},
		tarMember{Type: tar.TypeChar, Name: "mem", Mode: 0o666},
		tarMember{Type: tar.TypeBlock, Name: "sda", Mode: 0o666},
	)
	_, err := s.Import(t.Context(), "in", bytes.NewReader(ar), ImportOptions{})
	if te := (*Error)(nil); !errors.As(err, &te) || te.Code != CodeInvalid || !strings.Contains(err.Error(), "2 members") {
		t.Fatalf("err = %v", err)
	}
	if a, err := core.Stat("/in/suid"); err != nil || a.Mode&0o7777 != 0o755 {
		t.Errorf("suid: %o %v", a.Mode, err)
	}
	for _, n := range []string{"/in/mem", "/in/sda"} {
		if _, err := core.Stat(n); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v", n, err)
		}
	}
	st, err := s.Import(t.Context(), "in2", bytes.NewReader(ar), ImportOptions{SkipSpecial: true})
	if err != nil || st.Skipped != 2 || st.Files != 1 {
		t.Errorf("--skip-special: %+v %v", st, err)
	}
}

// TestImportUnderDotfileRules: a member is written under a temporary name
// beginning with a dot, which a hidden or read-only '.*' glob covers, so
// every file of an import was refused ("create d/a.txt: no such file")
// under a policy that allows it. The members the rules leave alone are
// made (a 255-byte name too); those they cover are still refused.
func TestImportUnderDotfileRules(t *testing.T) {
	for _, policy := range []sfs.Policy{{Hidden: []string{".*"}}, {ReadOnly: []string{".*"}}} {
		core := newCore(t, sfs.Options{Policy: policy})
		s := NewForCore(core, nil, Options{})
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, m := range []struct{ name, body string }{{"a.txt", "a"}, {"sub/b.txt", "b"}, {".env", "secret"}, {strings.Repeat("n", 255), "long"}} {
			if err := tw.WriteHeader(&tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.body)), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			tw.Write([]byte(m.body))
		}
		if err := tw.WriteHeader(&tar.Header{Name: "l", Linkname: "a.txt", Typeflag: tar.TypeSymlink}); err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: "h", Linkname: "a.txt", Typeflag: tar.TypeLink}); err != nil {
			t.Fatal(err)
		}
		tw.Close()
		st, err := s.Import(t.Context(), "d", &buf, ImportOptions{})
		if err == nil || !strings.Contains(err.Error(), ".env") || strings.Contains(err.Error(), "a.txt") {
			t.Errorf("%+v: import: %v, want only .env refused", policy, err)
		}
		if st.Files != 3 || st.Symlinks != 1 || st.Links != 1 {
			t.Errorf("%+v: made %+v", policy, st)
		}
		for p, want := range map[string]string{"/d/a.txt": "a", "/d/sub/b.txt": "b", "/d/l": "a", "/d/h": "a", "/d/" + strings.Repeat("n", 255): "long"} {
			if b, err := core.ReadFile(p); err != nil || string(b) != want {
				t.Errorf("%+v: %s: %q %v", policy, p, b, err)
			}
		}
		ents, _ := core.ReadDir("/d")
		for _, e := range ents {
			if strings.HasPrefix(e.Name, ".") {
				t.Errorf("%+v: %s left in d", policy, e.Name)
			}
		}
	}
}
