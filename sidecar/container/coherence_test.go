package container

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// mountedBackend is a container whose /workspace is a real sqlfs FUSE mount,
// with the kernel cache options the mount uses by default. The fs core API
// on the same store stands in for every frontend that does not go through
// the kernel (shell backend, agent tools), which all change the store
// through it.
func mountedBackend(t *testing.T, edit func(*Options)) (*Backend, *sfs.FS) {
	t.Helper()
	return mountedBackendWith(t, fuse.Options{}, edit)
}

// mountedBackendWith is mountedBackend with mount options; the mount
// names a request's actor by the backend's ActorForPID, as the workspace
// wires it.
func mountedBackendWith(t *testing.T, mopts fuse.Options, edit func(*Options)) (*Backend, *sfs.FS) {
	t.Helper()
	requireContainers(t)
	var backend atomic.Pointer[Backend]
	mopts.AllowOther = true
	mopts.ActorForPID = func(pid uint32) (string, bool) {
		if b := backend.Load(); b != nil {
			return b.ActorForPID(pid)
		}
		return "", false
	}
	// The new store's root is root's: New gives it to the container user.
	w := fusetest.Mount(t, sfs.Options{}, mopts)
	// Registered after the mount's cleanup, so it runs first: the container
	// must let go of the mount before it is unmounted.
	b, _ := newTestBackend(t, func(c *Options) {
		c.Workspace = w.Dir
		if edit != nil {
			edit(c)
		}
	})
	backend.Store(b)
	return b, w.FS
}

// sh runs cmd in the container and returns its stdout, failing the test
// on a non-zero exit.
func sh(t *testing.T, b *Backend, cmd string) string {
	t.Helper()
	got := execIn(t, b, sidecar.Request{Command: cmd})
	if got.err != nil || got.res.ExitCode != 0 {
		t.Fatalf("%q: exit %d, stderr %q, err %v", cmd, got.res.ExitCode, got.stderr, got.err)
	}
	return got.stdout
}

// shSees runs cmd in the container until it prints want, for at most
// staleCache: a change made through the fs core must show in the container
// at once, or within the mount's cache timeout where it cannot invalidate.
func shSees(t *testing.T, b *Backend, cmd, want string) {
	t.Helper()
	changed := time.Now()
	for {
		got := sh(t, b, cmd)
		if got == want {
			if d := time.Since(changed); d > testenv.Slack(20*time.Millisecond) {
				t.Logf("%q was stale for %v", cmd, d.Round(time.Millisecond))
			}
			return
		}
		if time.Since(changed) > staleCache {
			t.Fatalf("%q prints %q %v after the change, want %q (allowed staleness: %v)", cmd, got, time.Since(changed).Round(time.Millisecond), want, staleCache)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCoherenceWithMount runs write-through and with the writeback cache.
func TestCoherenceWithMount(t *testing.T) {
	for _, writeback := range []bool{false, true} {
		t.Run(fmt.Sprintf("writeback=%v", writeback), func(t *testing.T) {
			b, fsys := mountedBackendWith(t, fuse.Options{WritebackCache: writeback}, nil)
			coherenceCases(t, b, fsys)
		})
	}
}

func coherenceCases(t *testing.T, b *Backend, fsys *sfs.FS) {

	t.Run("core writes, container reads at once", func(t *testing.T) {
		if err := fsys.WriteFile("/a.txt", []byte("first version, long\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := sh(t, b, "cat a.txt"); got != "first version, long\n" {
			t.Fatalf("container reads %q", got)
		}
		// Shorter content and new attributes while the kernel has it cached.
		if err := fsys.WriteFile("/a.txt", []byte("second\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := fsys.Chmod("/a.txt", 0o600); err != nil {
			t.Fatal(err)
		}
		shSees(t, b, "stat -c '%a %s' a.txt; cat a.txt >/dev/null 2>&1 || echo denied", "600 7\ndenied\n")
	})

	t.Run("container writes, core reads at once", func(t *testing.T) {
		sh(t, b, "printf 'from the container' > b.txt")
		data, err := fsys.ReadFile("/b.txt")
		if err != nil || string(data) != "from the container" {
			t.Fatalf("core reads %q, %v", data, err)
		}
		attr, err := fsys.Stat("/b.txt")
		if err != nil || attr.Uid != testUID {
			t.Errorf("owner %d (%v), want %d", attr.Uid, err, testUID)
		}
	})

	t.Run("container writes with the file still open, core reads at once", func(t *testing.T) {
		done := make(chan run, 1)
		go func() {
			done <- execIn(t, b, sidecar.Request{Command: "exec 3>held.txt; printf 'still open' >&3; echo written; sleep 3"})
		}()
		deadline := time.Now().Add(2 * time.Second)
		for {
			data, err := fsys.ReadFile("/held.txt")
			if err == nil && string(data) == "still open" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("core reads %q, %v while the container holds the file open", data, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		select {
		case r := <-done:
			t.Fatalf("the exec ended before the core read (%+v): the fd was not held open", r)
		default:
		}
		<-done
	})

	t.Run("core appends and truncates, container sees size and data", func(t *testing.T) {
		sh(t, b, "printf 'one\n' > grown.txt; cat grown.txt >/dev/null")
		f, err := fsys.OpenFile("/grown.txt", os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("two\n")); err != nil {
			t.Fatal(err)
		}
		f.Close()
		shSees(t, b, "stat -c %s grown.txt; cat grown.txt", "8\none\ntwo\n")
		if err := fsys.Truncate("/grown.txt", 2); err != nil {
			t.Fatal(err)
		}
		shSees(t, b, "stat -c %s grown.txt; cat grown.txt", "2\non")
	})

	t.Run("container writes are audited under its exec", func(t *testing.T) {
		got := execIn(t, b, sidecar.Request{Command: "printf x > audited.txt; printf y >> audited.txt", Actor: "exec:audited"})
		if got.err != nil || got.res.ExitCode != 0 {
			t.Fatalf("exec: %+v", got)
		}
		if err := fsys.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		events, err := fsys.Store().Audit(t.Context(), sqlstore.AuditFilter{PathPrefix: "/audited.txt"})
		if err != nil {
			t.Fatal(err)
		}
		ops := map[string]bool{}
		for _, e := range events {
			if e.Path != "/audited.txt" {
				continue
			}
			ops[e.Op] = true
			if e.Actor != "exec:audited" {
				t.Errorf("%s of %s audited under %q", e.Op, e.Path, e.Actor)
			}
		}
		if !ops["create"] || !ops["write"] {
			t.Errorf("audited ops %v, want create and write", ops)
		}
	})

	t.Run("core deletes, container gets ENOENT", func(t *testing.T) {
		if err := fsys.WriteFile("/gone.txt", []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		sh(t, b, "stat gone.txt >/dev/null") // the kernel now caches it
		if err := fsys.Remove("/gone.txt"); err != nil {
			t.Fatal(err)
		}
		shSees(t, b, "stat gone.txt >/dev/null 2>&1 && echo still there || echo ENOENT", "ENOENT\n")
	})

	t.Run("container deletes, core gets ENOENT at once", func(t *testing.T) {
		sh(t, b, "echo x > del.txt")
		if _, err := fsys.Stat("/del.txt"); err != nil {
			t.Fatal(err)
		}
		sh(t, b, "rm del.txt")
		if _, err := fsys.Stat("/del.txt"); !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("core after delete: %v", err)
		}
	})

	t.Run("core renames a directory, container lists it", func(t *testing.T) {
		if err := fsys.MkdirAll("/old/sub", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fsys.WriteFile("/old/sub/f", []byte("f"), 0o644); err != nil {
			t.Fatal(err)
		}
		sh(t, b, "ls -R old >/dev/null")
		if err := fsys.Rename("/old", "/new"); err != nil {
			t.Fatal(err)
		}
		shSees(t, b, "ls new/sub; ls old 2>/dev/null || echo no old", "f\nno old\n")
	})

	t.Run("container renames a directory, core lists it", func(t *testing.T) {
		sh(t, b, "mkdir -p c1/d && echo y > c1/d/g && mv c1 c2")
		ents, err := fsys.ReadDir("/c2/d")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name)
		}
		if !slices.Equal(names, []string{"g"}) {
			t.Errorf("core lists %v", names)
		}
		if _, err := fsys.Stat("/c1"); !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("old name: %v", err)
		}
	})

	t.Run("many small files both ways", func(t *testing.T) {
		sh(t, b, "mkdir many && for i in $(seq 200); do echo $i > many/$i; done")
		for i := 1; i <= 200; i += 37 {
			data, err := fsys.ReadFile(fmt.Sprintf("/many/%d", i))
			if err != nil || strings.TrimSpace(string(data)) != fmt.Sprint(i) {
				t.Fatalf("many/%d: %q %v", i, data, err)
			}
		}
		if err := fsys.RemoveAll("/many"); err != nil {
			t.Fatal(err)
		}
		shSees(t, b, "ls many 2>/dev/null | wc -l | tr -d ' '", "0\n")
	})
}

// fullRootfsEnv names the full Debian rootfs (mkrootfs.sh) for the tests
// that need real userland tools; `make demo-pdf` sets it.
const fullRootfsEnv = "SQLFS_ROOTFS"

// TestPandocDemo is the reference product's demo: a Markdown report written
// into the store without the kernel, turned into a PDF by pandoc in the
// container, and the PDF read back from the store.
func TestPandocDemo(t *testing.T) {
	rootfs := os.Getenv(fullRootfsEnv)
	if rootfs == "" {
		t.Skipf("full rootfs absent: build it with `make rootfs` (sidecar/container/mkrootfs.sh) and set %s=DIR", fullRootfsEnv)
	}
	b, fsys := mountedBackend(t, func(c *Options) { c.Rootfs = rootfs })
	report := "# Quarterly report\n\nRevenue grew by *12%*.\n\n- one\n- two\n"
	if err := fsys.WriteFile("/report.md", []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	got := execIn(t, b, sidecar.Request{Command: "pandoc report.md -t ms -o report.pdf", Timeout: 2 * time.Minute})
	if got.err != nil || got.res.ExitCode != 0 {
		t.Fatalf("pandoc: %+v %v\n%s", got.res, got.err, got.stderr)
	}
	pdf, err := fsys.ReadFile("/report.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(pdf), "%PDF-") || len(pdf) < 1000 {
		t.Errorf("store holds %d bytes starting %q, want a PDF", len(pdf), pdf[:min(len(pdf), 8)])
	}
}
