//go:build linux && !cgofuse

package fuse

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/internal/testenv"
)

// startInternal mounts a fresh store at dir/mnt, unmounting in Cleanup.
func startInternal(t *testing.T, dir string) *Mount {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Require(t, "FUSE tests need root", os.ErrPermission)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fsys, err := sfs.Open(ctx, filepath.Join(dir, "ws.db"), sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := Start(ctx, fsys, mnt, Options{SameProcessClients: true})
	if err != nil {
		fsys.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
		fsys.Close()
	})
	return m
}

// An abort that comes late (the serving loop was slow to end after its
// unmount) must not reach the next mount, which the kernel gives the freed
// connection number: CI saw a cgofuse test's mount end with "reading device:
// Software caused connection abort" from an earlier mount's abort.
func TestLateAbortSparesTheNextMount(t *testing.T) {
	first := startInternal(t, t.TempDir())
	major, minor, _ := mountDevice(first.Mountpoint())
	if first.abort == nil {
		t.Fatal("no aborter for a go-fuse mount")
	}
	late := first.abort
	if err := first.Unmount(); err != nil {
		t.Fatal(err)
	}
	second := startInternal(t, t.TempDir())
	if ma, mi, _ := mountDevice(second.Mountpoint()); ma != major || mi != minor {
		t.Logf("the kernel did not reuse device %d:%d (got %d:%d): the test proves less", major, minor, ma, mi)
	}
	late()
	if err := os.WriteFile(filepath.Join(second.Mountpoint(), "f"), []byte("x"), 0o644); err != nil {
		t.Fatalf("the second mount was aborted by the first's late abort: %v", err)
	}
	select {
	case <-second.Done():
		t.Fatalf("the second mount ended: %v", second.Err())
	default:
	}
}

// Unmount tells a mount namespace that still has a live process (it
// aborts, with a warning) from one whose processes have all exited (the
// kernel lets go by itself: Unmount waits for that instead, quietly; CI's
// `sqlfs-exec run` of a container warned on stderr at load 15).
func TestHeldElsewhere(t *testing.T) {
	m := startInternal(t, t.TempDir())
	major, minor, _ := mountDevice(m.Mountpoint())
	if heldElsewhere(major, minor) {
		t.Fatal("held elsewhere before anyone else has it")
	}
	holder := exec.Command("unshare", "--mount", "--propagation", "private", "sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	deadline := time.Now().Add(testenv.Slack(5 * time.Second))
	for !heldElsewhere(major, minor) {
		if time.Now().After(deadline) {
			t.Fatal("a running process in another mount namespace holds the mount, yet it is not seen")
		}
		time.Sleep(20 * time.Millisecond)
	}
	holder.Process.Kill()
	holder.Wait()
	if heldElsewhere(major, minor) {
		t.Fatal("still held by a live process after the holder exited")
	}
}
