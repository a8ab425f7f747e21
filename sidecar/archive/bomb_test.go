package archive

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/archive/archivetest"
)

// repeated is a tar stream of n copies of one header-only member: a few
// kilobytes of gzip can carry millions of them.
func repeated(n int, typ byte, name string) []byte {
	blk := archivetest.RawHeader(name, typ, 0, nil)
	return append(bytes.Repeat(blk, n), make([]byte, 1024)...)
}

// countingFS counts the directory attribute updates Extract makes.
type countingFS struct {
	osFS
	chmods map[string]int
}

func (c countingFS) Chmod(n string, m fs.FileMode) error {
	c.chmods[n]++
	return c.osFS.Chmod(n, m)
}

func (c countingFS) Chtimes(n string, a, m time.Time) error { return c.osFS.Chtimes(n, a, m) }

// TestRepeatedMembersHoldNoState: each directory member was remembered
// until the end (for its mode and times), so an archive repeating one
// directory name millions of times grew memory without bound.
func TestRepeatedMembersHoldNoState(t *testing.T) {
	const n = 20000
	top := t.TempDir()
	mustMkdir(t, top+dest)
	fsys := countingFS{osFS{top}, map[string]int{}}
	st, err := Extract(context.Background(), bytes.NewReader(repeated(n, tar.TypeDir, "a/")), fsys, dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Dirs != n {
		t.Errorf("Dirs = %d, want %d", st.Dirs, n)
	}
	if got := fsys.chmods[dest+"/a"]; got != 1 {
		t.Errorf("a's mode was set %d times, want once (one remembered entry)", got)
	}
}

// TestManyFailedMembersBounded: every failed member was kept for the
// returned error, so an archive of millions of refused members grew
// memory without bound. The error keeps the first ones and the count.
func TestManyFailedMembersBounded(t *testing.T) {
	const n = 20000
	top := t.TempDir()
	mustMkdir(t, top+dest)
	warned := 0
	_, err := Extract(context.Background(), bytes.NewReader(repeated(n, tar.TypeReg, "../x")), osFS{top}, dest,
		Options{Warn: func(error) { warned++ }})
	var xe *ExtractError
	if !errors.As(err, &xe) || !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("err = %v, want an ExtractError of ErrUnsafePath", err)
	}
	if warned != n {
		t.Errorf("warned %d times, want %d", warned, n)
	}
	if len(xe.Members) > maxMemberErrors {
		t.Errorf("error keeps %d members, want at most %d", len(xe.Members), maxMemberErrors)
	}
	if xe.Failed != n || !strings.HasPrefix(err.Error(), "20000 members not extracted") {
		t.Errorf("Failed = %d, message %q; want %d", xe.Failed, err.Error()[:40], n)
	}
}

// lstatCounter counts the lookups Extract makes.
type lstatCounter struct {
	osFS
	n *int
}

func (l lstatCounter) Lstat(n string) (fs.FileInfo, error) {
	*l.n++
	return l.osFS.Lstat(n)
}

// TestSymlinkWalkBounded: a symlink whose 4 KB target climbs down and up
// ("d/../d/../…") back to itself made every later member through it walk
// 40 × 800 elements, one lookup each: 380 ms per 512-byte member, a CPU
// amplification of minutes per megabyte of archive. A name's resolution
// now stops after maxResolveSteps elements.
func TestSymlinkWalkBounded(t *testing.T) {
	const members = 20
	ms := []member{
		{Type: tar.TypeDir, Name: "d/"},
		{Type: tar.TypeSymlink, Name: "s", Link: strings.Repeat("d/../", 810) + "s"},
	}
	for range members {
		ms = append(ms, member{Type: tar.TypeReg, Name: "s/x"})
	}
	top := t.TempDir()
	mustMkdir(t, top+dest)
	lstats := 0
	_, err := Extract(context.Background(), bytes.NewReader(makeTar(t, ms...)), lstatCounter{osFS{top}, &lstats}, dest, Options{})
	if !errors.Is(err, syscall.ELOOP) {
		t.Errorf("err = %v, want ELOOP", err)
	}
	if per := lstats / members; per > maxResolveSteps {
		t.Errorf("%d lookups per member, want at most %d", per, maxResolveSteps)
	}
}
