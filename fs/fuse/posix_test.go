package fuse_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hanwen/go-fuse/v2/posixtest"

	"github.com/sqlfs/sqlfs/fs/fuse"
)

// posixKnownGaps are posixtest cases a frontend does not pass, and why.
func posixKnownGaps() map[string]string {
	gaps := map[string]string{
		// flock and fcntl locks are the kernel's own, kept per mount
		// (the filesystem is not asked), and do not exclude each other
		// there as the suite expects.
		"FcntlFlockLocksFile": "locks are left to the kernel",
	}
	if fuse.LibFUSE != 0 {
		for name, why := range map[string]string{
			"Fallocate":         "the libfuse frontend has no fallocate",
			"FallocateKeepSize": "the libfuse frontend has no fallocate",
			"OpenSymlinkRace":   "libfuse's path API resolves a name that moved to ESTALE",
			"SetattrSymlink":    "libfuse's path API follows symlinks in utimens",
		} {
			gaps[name] = why
		}
	}
	return gaps
}

// go-fuse's POSIX suite through the mount, each case on a fresh workspace.
func TestPosixSuite(t *testing.T) {
	names := make([]string, 0, len(posixtest.All))
	for name := range posixtest.All {
		names = append(names, name)
	}
	slices.Sort(names)
	gaps := posixKnownGaps()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if why, ok := gaps[name]; ok {
				t.Skip(why)
			}
			w := mount(t)
			dir := filepath.Join(w.Dir, "t")
			must(t, os.Mkdir(dir, 0o755))
			posixtest.All[name](t, dir)
		})
	}
}
