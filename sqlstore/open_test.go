package sqlstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// helperOpenEnv makes the test binary a second process that opens the store
// named by the variable and prints what Open said.
const helperOpenEnv = "SQLSTORE_TEST_OPEN"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperOpenEnv); path != "" {
		st, err := sqlstore.Open(context.Background(), path, sqlstore.Options{})
		var owned *sqlstore.OwnedError
		switch {
		case errors.As(err, &owned):
			fmt.Println("owned")
		case err != nil:
			fmt.Println("error:", err)
		default:
			st.Close()
			fmt.Println("opened")
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// openInChild opens path from another process, where the in-process
// registry cannot help and only the file lock counts.
func openInChild(t *testing.T, path string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperOpenEnv+"="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// aliases makes a symlink, a hard link and a relative name for path.
func aliases(t *testing.T, path string) map[string]string {
	t.Helper()
	dir := filepath.Dir(path)
	sym, hard := filepath.Join(dir, "sym.db"), filepath.Join(dir, "hard.db")
	if err := os.Symlink(path, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, hard); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return map[string]string{"same path": path, "symlink": sym, "hard link": hard, "relative path": filepath.Base(path)}
}

func TestOwnerLockWhateverTheName(t *testing.T) {
	_, path := newStore(t)
	for name, alias := range aliases(t, path) {
		t.Run(name, func(t *testing.T) {
			st, err := sqlstore.Open(t.Context(), alias, sqlstore.Options{})
			if err == nil {
				st.Close()
			}
			var owned *sqlstore.OwnedError
			if !errors.As(err, &owned) {
				t.Fatalf("second open in this process: %v, want *OwnedError", err)
			}
			if got := openInChild(t, alias); got != "owned" {
				t.Fatalf("second open by another process: %s, want owned", got)
			}
		})
	}
}

func TestOwnerLockReleasedOnClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ws.db")
	st, err := sqlstore.Open(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if got := openInChild(t, path); got != "opened" {
		t.Fatalf("open after close: %s", got)
	}
}

func TestOpenRefusesExistingNonStore(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]byte{
		"empty file":  nil,
		"text file":   []byte("hello, this is not a database at all, just text"),
		"short bytes": []byte("SQLite"),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			st, err := sqlstore.Open(t.Context(), path, sqlstore.Options{})
			if err == nil {
				st.Close()
			}
			if !errors.Is(err, sqlstore.ErrNotStore) {
				t.Fatalf("got %v, want ErrNotStore", err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, content) {
				t.Fatalf("refused file changed: %q, was %q", got, content)
			}
			for _, suffix := range []string{"-wal", "-shm"} {
				if _, err := os.Stat(path + suffix); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("refused open left %s behind: %v", suffix, err)
				}
			}
		})
	}
}

func TestCreateLeavesOnlyTheStore(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlstore.Open(t.Context(), filepath.Join(dir, "ws.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	// No temporary file of the create; the WAL, emptied, and the
	// wal-index stay for the next open (TestReopenReusesWALFiles).
	if strings.Join(names, " ") != "ws.db ws.db-shm ws.db-wal ws.db.lock" {
		t.Fatalf("files after create and close: %v", names)
	}
}

// asNobody runs cat on file as uid 65534 and returns its error output.
func asNobody(t *testing.T, file string) (string, error) {
	t.Helper()
	cmd := exec.Command("cat", file)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stderr.String(), err
}

// openDir makes dir and its parent searchable by everyone, so only the
// files' own modes keep other users out.
func openDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestStoreFilesPrivate(t *testing.T) {
	if os.Geteuid() != 0 {
		fusetest.Require(t, "reading as uid 65534 needs root", errors.New("not root"))
	}
	dir := openDir(t)
	// The control: a world-readable file in the same place is readable.
	control := filepath.Join(dir, "control")
	if err := os.WriteFile(control, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := asNobody(t, control); err != nil {
		t.Fatalf("uid 65534 cannot read a 0644 file, the test proves nothing: %v %s", err, msg)
	}
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	path := filepath.Join(dir, "ws.db")
	st, err := sqlstore.Open(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	commitFile(t, st, 2, "secret")
	for _, name := range []string{path, path + "-wal", path + "-shm", path + ".lock"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", name, fi.Mode().Perm())
		}
		if msg, err := asNobody(t, name); err == nil || !strings.Contains(msg, "Permission denied") {
			t.Errorf("uid 65534 reading %s: %v %q, want EACCES", name, err, msg)
		}
	}
}

func TestOpenTightensLooseModes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ws.db")
	st, err := sqlstore.Open(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	st, err = sqlstore.Open(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after open: %v, want 0600", fi.Mode().Perm())
	}
	if !strings.Contains(logged.String(), "tightened") || !strings.Contains(logged.String(), path) {
		t.Errorf("no log line about the tightened mode:\n%s", logged.String())
	}
}

// A store's close leaves its WAL, emptied, and its wal-index in place, and
// the next open reuses both instead of creating them (creating files was
// a good part of a host's wake); the store file alone still holds every
// commit.
func TestReopenReusesWALFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ws.db")
	inodes := func() (ids [2]uint64) {
		t.Helper()
		for i, suffix := range []string{"-wal", "-shm"} {
			var st syscall.Stat_t
			if err := syscall.Stat(path+suffix, &st); err != nil {
				t.Fatalf("after close: %v", err)
			}
			if suffix == "-wal" && st.Size != 0 {
				t.Errorf("WAL of %d bytes after close, want it emptied", st.Size)
			}
			ids[i] = st.Ino
		}
		return ids
	}
	var first [2]uint64
	for round := range 3 {
		st, err := sqlstore.Open(t.Context(), path, sqlstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		commitFile(t, st, uint64(2+round), fmt.Sprintf("round %d", round))
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		ids := inodes()
		if round == 0 {
			first = ids
		} else if ids != first {
			t.Errorf("round %d: WAL and wal-index are inodes %v, were %v: made anew", round, ids, first)
		}
	}
	alone := filepath.Join(t.TempDir(), "copy.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := sqlstore.Open(t.Context(), alone, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for round := range 3 {
		if d, err := st.ReadChunk(t.Context(), uint64(2+round), 0); err != nil || string(d) != fmt.Sprintf("round %d", round) {
			t.Errorf("the store file alone, inode %d: %q %v", 2+round, d, err)
		}
	}
}
