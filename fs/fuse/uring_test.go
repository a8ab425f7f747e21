//go:build linux && !cgofuse

package fuse_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
)

// uringOps makes requests of every common kind on the mount at dir.
// It returns the requests served through the ring.
func uringOps(t *testing.T, w *fusetest.Workspace) (served int64) {
	t.Helper()
	dir := w.Dir
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(dir, "missing"), &st); !errors.Is(err, unix.ENOENT) {
		t.Fatalf("lstat of a missing name: %v", err)
	}
	f := filepath.Join(dir, "f")
	data := make([]byte, 3<<20) // larger than a request's payload
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Lstat(f, &st); err != nil || st.Size != int64(len(data)) {
		t.Fatalf("stat after write: %v, size %d", err, st.Size)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f, filepath.Join(dir, "d", "g")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(filepath.Join(dir, "d", "g"), "user.k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := unix.Getxattr(filepath.Join(dir, "d", "g"), "user.k", buf); err != nil || string(buf[:n]) != "v" {
		t.Fatalf("getxattr: %q, %v", buf[:n], err)
	}
	// Read back from the store, not the page cache: a mount afresh.
	served += w.Mount.RingRequests()
	w.Close()
	w.Remount()
	back, err := os.ReadFile(filepath.Join(dir, "d", "g"))
	if err != nil || string(back) != string(data) {
		t.Fatalf("read back %d bytes (want %d): %v", len(back), len(data), err)
	}
	names, err := os.ReadDir(filepath.Join(dir, "d"))
	if err != nil || len(names) != 1 || names[0].Name() != "g" {
		t.Fatalf("listing: %v, %v", names, err)
	}
	if err := os.Remove(filepath.Join(dir, "d", "g")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	return served + w.Mount.RingRequests()
}

// TestIOUring serves a mount over FUSE over io_uring where the kernel
// offers it, and on /dev/fuse where it does not (enable_uring=N), both
// correctly, and unmounting ends the ring's threads (Done waits for them).
func TestIOUring(t *testing.T) {
	for _, tc := range []struct {
		name    string
		enabled bool
	}{
		{"enabled", true},
		{"parameter off", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fusetest.SetURing(t, tc.enabled)
			w := fusetest.Mount(t, sfs.Options{}, fuse.Options{IOUring: true})
			served := uringOps(t, w)
			t.Logf("%d requests served through the ring", served)
			if tc.enabled && served < 10 {
				t.Errorf("%d requests served through the ring, want them all", served)
			}
			if !tc.enabled && served != 0 {
				t.Errorf("%d requests served through a ring the kernel did not offer", served)
			}
			m := w.Mount
			w.Close()
			select {
			case <-m.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the serving loop and the ring threads did not end after unmount")
			}
		})
	}
}
