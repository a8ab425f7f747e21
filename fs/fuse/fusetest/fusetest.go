// Package fusetest mounts throwaway sqlfs workspaces for tests and unmounts
// them in t.Cleanup, also when the test fails.
package fusetest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/internal/testenv"
)

// PrivilegedEnv names the variable CI sets on machines that have what the
// tests need; see testenv.
const PrivilegedEnv = testenv.PrivilegedEnv

// Require skips t when what it needs is missing (err != nil), or fails it
// when PrivilegedEnv is set.
func Require(t testing.TB, what string, err error) {
	t.Helper()
	testenv.Require(t, what, err)
}

// Skip skips t unless this process can mount FUSE filesystems (or fails it,
// see Require).
func Skip(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Require(t, "FUSE tests need root", errors.New("not root"))
	}
	_, err := os.Stat("/dev/fuse")
	Require(t, "FUSE tests need /dev/fuse", err)
}

// IOUringEnv, when set, has every workspace mounted with
// fuse.Options.IOUring (the whole suite over the ring: set
// /sys/module/fuse/parameters/enable_uring to Y first, or SetURing).
const IOUringEnv = "SQLFS_TEST_IO_URING"

// SetURing sets the fuse module's enable_uring parameter to on for the
// test and restores it in t.Cleanup. It fails t where the parameter cannot
// be written (no root, a kernel without FUSE over io_uring) under
// PrivilegedEnv, and skips it otherwise.
func SetURing(t testing.TB, on bool) {
	t.Helper()
	old, err := os.ReadFile(fuse.URingEnabledParameter)
	Require(t, "FUSE over io_uring (CONFIG_FUSE_IO_URING)", err)
	v := "N"
	if on {
		v = "Y"
	}
	err = os.WriteFile(fuse.URingEnabledParameter, []byte(v), 0)
	Require(t, "writing "+fuse.URingEnabledParameter, err)
	t.Cleanup(func() {
		if err := os.WriteFile(fuse.URingEnabledParameter, old, 0); err != nil {
			t.Errorf("restore %s: %v", fuse.URingEnabledParameter, err)
		}
	})
}

// Workspace is a mounted store.
type Workspace struct {
	Store string // the SQLite file
	Dir   string // the mountpoint
	FS    *sfs.FS
	Mount *fuse.Mount
	t     testing.TB
	open  sfs.Options
	mopts fuse.Options
}

// Mount creates a store in a temp dir and mounts it.
func Mount(t testing.TB, opts sfs.Options, mopts fuse.Options) *Workspace {
	t.Helper()
	Skip(t)
	base := t.TempDir()
	w := &Workspace{Store: filepath.Join(base, "ws.db"), Dir: filepath.Join(base, "mnt"), t: t, open: opts, mopts: mopts}
	if err := os.Mkdir(w.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w.Remount()
	t.Cleanup(w.Close)
	return w
}

// Remount opens the store and mounts it again after Close.
func (w *Workspace) Remount() {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fsys, err := sfs.Open(ctx, w.Store, w.open)
	if err != nil {
		w.t.Fatalf("open store: %v", err)
	}
	mopts := w.mopts
	mopts.SameProcessClients = true // the test opens files on the mount
	if os.Getenv(IOUringEnv) != "" {
		mopts.IOUring = true
	}
	m, err := fuse.Start(ctx, fsys, w.Dir, mopts)
	if err != nil {
		fsys.Close()
		w.t.Fatalf("mount: %v", err)
	}
	w.FS, w.Mount = fsys, m
}

// RemountWith unmounts, and mounts the store again opened with opts (a
// policy that applies only to what a test made before it, say).
func (w *Workspace) RemountWith(opts sfs.Options) {
	w.t.Helper()
	w.Close()
	w.open = opts
	w.Remount()
}

// Close unmounts and closes the store; safe to call twice.
func (w *Workspace) Close() {
	if w.Mount == nil {
		return
	}
	if os.Getenv(IOUringEnv) != "" && w.Mount.RingRequests() == 0 {
		// The suite was asked to run over the ring: a mount that served
		// nothing there did not test it (the parameter off, the ring
		// refused), unless a test turned the parameter off itself.
		if on, _ := os.ReadFile(fuse.URingEnabledParameter); string(on) == "Y\n" {
			w.t.Errorf("%s is set but the mount served no request through io_uring", IOUringEnv)
		}
	}
	if err := w.Mount.Unmount(); err != nil {
		w.t.Errorf("unmount: %v", err)
		// Never leave a dead mount behind for the next test.
		_ = exec.Command("fusermount", "-u", "-z", w.Dir).Run()
		_ = exec.Command("fusermount3", "-u", "-z", w.Dir).Run()
	}
	if err := w.FS.Close(); err != nil {
		w.t.Errorf("close store: %v", err)
	}
	w.Mount, w.FS = nil, nil
}

// Path joins names below the mountpoint.
func (w *Workspace) Path(names ...string) string {
	return filepath.Join(append([]string{w.Dir}, names...)...)
}
