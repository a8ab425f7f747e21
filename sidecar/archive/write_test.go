package archive

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWriterRecordsAsIs: the stream records what the tree holds (setuid
// bits, hard links, fifos); deciding what to restore is the reader's job.
func TestWriterRecordsAsIs(t *testing.T) {
	dir := t.TempDir()
	for _, err := range []error{
		os.WriteFile(filepath.Join(dir, "suid"), []byte("x"), 0o755),
		os.Chmod(filepath.Join(dir, "suid"), fs.ModeSetuid|0o755),
		os.Link(filepath.Join(dir, "suid"), filepath.Join(dir, "hard")),
		os.Symlink("suid", filepath.Join(dir, "sym")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	var buf bytes.Buffer
	w := NewWriter(&buf, WriteOptions{})
	for _, name := range []string{"suid", "hard", "sym", "sock"} {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		err = w.Add(name, fi, func() (string, error) { return os.Readlink(p) }, func() (io.ReadCloser, error) { return os.Open(p) })
		if name == "sock" {
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("socket: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&buf)
	want := []struct {
		name string
		typ  byte
		mode int64
		link string
	}{{"suid", tar.TypeReg, 0o4755, ""}, {"hard", tar.TypeLink, 0o4755, "suid"}, {"sym", tar.TypeSymlink, 0o777, "suid"}}
	for _, w := range want {
		h, err := tr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != w.name || h.Typeflag != w.typ || h.Mode != w.mode || h.Linkname != w.link || h.Uid != os.Getuid() ||
			h.ModTime.Before(time.Now().Add(-time.Hour)) {
			t.Errorf("%+v, want %+v", h, w)
		}
	}
	if _, err := tr.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("more members: %v", err)
	}
}
