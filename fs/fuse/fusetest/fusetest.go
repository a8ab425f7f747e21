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
