package fs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sqlstore"
)

func open(t testing.TB, opts sfs.Options) (*sfs.FS, string) {
	t.Helper()
	store := filepath.Join(t.TempDir(), "ws.db")
	f, err := sfs.Open(t.Context(), store, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, store
}

func reopen(t *testing.T, f *sfs.FS, store string, opts sfs.Options) *sfs.FS {
	t.Helper()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := sfs.Open(t.Context(), store, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func check(t *testing.T, f *sfs.FS) {
	t.Helper()
	must(t, f.Sync(t.Context()))
	problems, err := f.Store().Check(t.Context())
	must(t, err)
	if len(problems) > 0 {
		t.Fatalf("store check:\n%s", sqlstore.FormatProblems(problems))
	}
}

func TestErrorsMatchOS(t *testing.T) {
	f, _ := open(t, sfs.Options{})
	must(t, f.WriteFile("/file", []byte("x"), 0o644))
	must(t, f.Mkdir("/dir", 0o755))
	must(t, f.WriteFile("/dir/x", nil, 0o644))
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"stat missing", errOf(f.Stat("/nope")), iofs.ErrNotExist},
		{"mkdir existing", f.Mkdir("/dir", 0o755), iofs.ErrExist},
		{"file as dir", errOf(f.Stat("/file/x")), syscall.ENOTDIR},
		{"rmdir non-empty", f.Rmdir("/dir"), syscall.ENOTEMPTY},
		{"unlink dir", f.Unlink("/dir"), syscall.EISDIR},
		{"rmdir file", f.Rmdir("/file"), syscall.ENOTDIR},
		{"readlink non-link", errOf(f.Readlink("/file")), syscall.EINVAL},
		{"name too long", f.WriteFile("/"+string(bytes.Repeat([]byte("a"), 256)), nil, 0o644), syscall.ENAMETOOLONG},
		{"remove root", f.Remove("/"), syscall.EBUSY},
		{"rename into self", f.Rename("/dir", "/dir/sub"), syscall.EINVAL},
		{"link dir", f.Link("/dir", "/d2"), syscall.EPERM},
		{"open dir for write", errOf(f.OpenFile("/dir", os.O_WRONLY, 0)), syscall.EISDIR},
		{"noreplace", f.Rename2("/file", "/dir/x", sfs.RenameNoReplace), iofs.ErrExist},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !errors.Is(c.err, c.want) {
				t.Fatalf("got %v, want %v", c.err, c.want)
			}
			var pe *iofs.PathError
			if !errors.As(c.err, &pe) {
				t.Fatalf("%v is not a *fs.PathError", c.err)
			}
		})
	}
}

func errOf[T any](_ T, err error) error { return err }

func TestSymlinkLoopsAndRelativeTargets(t *testing.T) {
	f, _ := open(t, sfs.Options{})
	must(t, f.MkdirAll("/a/b", 0o755))
	must(t, f.WriteFile("/a/b/file", []byte("data"), 0o644))
	must(t, f.Symlink("../a/b", "/a/up"))
	must(t, f.Symlink("/a/b/file", "/abs"))
	must(t, f.Symlink("loop2", "/loop1"))
	must(t, f.Symlink("loop1", "/loop2"))
	for _, p := range []string{"/a/up/file", "/abs"} {
		if b, err := f.ReadFile(p); err != nil || string(b) != "data" {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
	if _, err := f.Stat("/loop1"); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("loop: %v", err)
	}
	if a, err := f.Lstat("/loop1"); err != nil || a.Mode&syscall.S_IFMT != syscall.S_IFLNK {
		t.Errorf("lstat of a loop: %v", err)
	}
	// O_CREAT through a dangling symlink creates its target.
	must(t, f.Symlink("made", "/dangling"))
	fl, err := f.OpenFile("/dangling", os.O_WRONLY|os.O_CREATE, 0o644)
	must(t, err)
	fl.Close()
	if _, err := f.Stat("/made"); err != nil {
		t.Errorf("dangling symlink target not created: %v", err)
	}
}

// TestDataAcrossCommits drives the data path through many commits with
// writes, truncations and holes, against a plain byte slice as the model.
func TestDataAcrossCommits(t *testing.T) {
	f, store := open(t, sfs.Options{CommitInterval: time.Hour, ChunkSize: 4096})
	fl, err := f.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	var model []byte
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 2000 {
		switch op := rng.IntN(10); {
		case op < 6:
			off := rng.IntN(40_000)
			data := make([]byte, rng.IntN(9000))
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
			_, err := fl.WriteAt(data, int64(off))
			must(t, err)
			if end := off + len(data); end > len(model) {
				model = append(model, make([]byte, end-len(model))...)
			}
			copy(model[off:], data)
		case op < 8:
			size := rng.IntN(45_000)
			must(t, fl.Truncate(int64(size)))
			if size < len(model) {
				model = model[:size]
			} else {
				model = append(model, make([]byte, size-len(model))...)
			}
		default:
			must(t, f.Sync(t.Context()))
		}
		got := make([]byte, len(model)+10)
		n, err := fl.ReadAt(got, 0)
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:n], model) {
			t.Fatalf("step %d: content differs from the model (len %d vs %d)", i, n, len(model))
		}
	}
	fl.Close()
	check(t, f)
	g := reopen(t, f, store, sfs.Options{})
	got, err := g.ReadFile("/f")
	must(t, err)
	if !bytes.Equal(got, model) {
		t.Fatal("content differs after reopen")
	}
}

func TestConcurrentUse(t *testing.T) {
	f, _ := open(t, sfs.Options{CommitInterval: 5 * time.Millisecond})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := fmt.Sprintf("/w%d", w)
			if err := f.MkdirAll(dir, 0o755); err != nil {
				t.Error(err)
				return
			}
			for i := range 200 {
				p := fmt.Sprintf("%s/f%d", dir, i%20)
				data := bytes.Repeat([]byte{byte(i)}, i*37)
				switch i % 4 {
				case 0, 1:
					if err := f.WriteFile(p, data, 0o644); err != nil {
						t.Error(err)
					}
				case 2:
					f.Rename(p, p+".r")
				case 3:
					f.Remove(p + ".r")
					f.ReadDir(dir)
				}
			}
		}()
	}
	wg.Wait()
	check(t, f)
}

func TestUnlinkedOpenFileIsReclaimed(t *testing.T) {
	f, store := open(t, sfs.Options{})
	fl, err := f.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	_, err = fl.Write(bytes.Repeat([]byte("x"), 300_000))
	must(t, err)
	must(t, f.Remove("/f"))
	must(t, f.Sync(t.Context()))
	// Closing the store with the handle open leaves an orphan in the store…
	g := reopen(t, f, store, sfs.Options{})
	// …which the next open reclaimed, with its chunks.
	check(t, g)
	if u := g.Usage(); u.Inodes != 1 || u.Bytes != 0 {
		t.Fatalf("after reclaim: %+v", u)
	}
}

func TestPolicy(t *testing.T) {
	f, _ := open(t, sfs.Options{Policy: sfs.Policy{
		ReadOnly: []string{"config/**", "*.lock"}, Hidden: []string{"secrets"}, QuotaBytes: 10_000,
	}})
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"write under read-only glob", f.WriteFile("/config/app.yml", nil, 0o644), syscall.EROFS},
		{"read-only by extension", f.WriteFile("/x.lock", nil, 0o644), syscall.EROFS},
		{"hidden mkdir", f.Mkdir("/secrets", 0o755), syscall.ENOENT},
		{"hidden stat", errOf(f.Stat("/secrets/key")), syscall.ENOENT},
		{"quota", f.WriteFile("/big", make([]byte, 20_000), 0o644), syscall.ENOSPC},
		{"under quota", f.WriteFile("/small", make([]byte, 5_000), 0o644), nil},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) && !(c.want == nil && c.err == nil) {
			t.Errorf("%s: got %v, want %v", c.name, c.err, c.want)
		}
	}
	ev, err := auditAfterSync(t, f, sqlstore.AuditFilter{Op: "create"})
	must(t, err)
	refused := 0
	for _, e := range ev {
		if e.Result == "EROFS" {
			refused++
		}
	}
	if refused != 2 {
		t.Fatalf("audit has %d EROFS refusals, want 2: %+v", refused, ev)
	}
}

func auditAfterSync(t *testing.T, f *sfs.FS, flt sqlstore.AuditFilter) ([]sqlstore.AuditEvent, error) {
	must(t, f.Sync(t.Context()))
	return f.Store().Audit(t.Context(), flt)
}

func TestAuditNamesActor(t *testing.T) {
	f, _ := open(t, sfs.Options{})
	a := f.WithActor("exec:42")
	must(t, a.WriteFile("/made", []byte("x"), 0o644))
	must(t, a.Rename("/made", "/moved"))
	must(t, f.WithActor("tool:delete").Remove("/moved"))
	ev, err := auditAfterSync(t, f, sqlstore.AuditFilter{Actor: "exec:42"})
	must(t, err)
	var ops []string
	for _, e := range ev {
		ops = append(ops, e.Op+" "+e.Path+" "+e.Path2+" "+e.Result)
	}
	want := []string{"create /made  ok", "write /made  ok", "rename /made /moved ok"}
	if fmt.Sprint(ops) != fmt.Sprint(want) {
		t.Fatalf("audit = %q, want %q", ops, want)
	}
}

// TestFullDisk puts the store on a tiny tmpfs: writes past the space get
// ENOSPC instead of crashing, and what was committed before stays intact.
func TestFullDisk(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Require(t, "this test mounts a tmpfs (needs root)", fmt.Errorf("%w: %s", err, out))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	store := filepath.Join(dir, "ws.db")
	f, err := sfs.Open(t.Context(), store, sfs.Options{DirtyLimit: 1 << 20, CommitInterval: 10 * time.Millisecond})
	must(t, err)
	must(t, f.WriteFile("/keep", []byte("precious"), 0o644))
	must(t, f.Sync(t.Context()))
	var werr error
	for i := 0; i < 100 && werr == nil; i++ {
		werr = f.WriteFile(fmt.Sprintf("/fill%d", i), make([]byte, 256<<10), 0o644)
		if werr == nil {
			werr = f.Sync(t.Context())
		}
	}
	if werr == nil {
		t.Fatal("filled 25 MiB into a 4 MiB tmpfs without an error")
	}
	if !errors.Is(werr, syscall.ENOSPC) && !errors.Is(werr, sqlstore.ErrStoreFull) {
		t.Fatalf("error on full disk: %v", werr)
	}
	// Free space by deleting; the store recovers.
	for i := range 100 {
		f.Remove(fmt.Sprintf("/fill%d", i))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	must(t, f.Sync(ctx))
	f.Close()
	g, err := sfs.Open(t.Context(), store, sfs.Options{})
	must(t, err)
	defer g.Close()
	if b, err := g.ReadFile("/keep"); err != nil || string(b) != "precious" {
		t.Fatalf("after full disk: %q %v", b, err)
	}
	check(t, g)
}

func TestSecondOwnerRefused(t *testing.T) {
	_, store := open(t, sfs.Options{})
	_, err := sfs.Open(t.Context(), store, sfs.Options{})
	var owned *sqlstore.OwnedError
	if !errors.As(err, &owned) || owned.Pid != os.Getpid() {
		t.Fatalf("second open: %v", err)
	}
}

func TestCorruptStoreRefused(t *testing.T) {
	f, store := open(t, sfs.Options{})
	for i := range 200 {
		must(t, f.WriteFile(fmt.Sprintf("/f%d", i), []byte("data"), 0o644))
	}
	must(t, f.Close())
	// Scribble over every page but the first two (header and schema).
	b, err := os.ReadFile(store)
	must(t, err)
	for off := 8192; off+300 < len(b); off += 4096 {
		copy(b[off+100:], bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 50))
	}
	must(t, os.WriteFile(store, b, 0o644))
	g, err := sfs.Open(t.Context(), store, sfs.Options{})
	if err == nil {
		g.Close()
	}
	if !errors.Is(err, sqlstore.ErrStoreCorrupt) {
		t.Fatalf("open of a corrupt store: %v, want ErrStoreCorrupt", err)
	}
}
