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
		// The suite expects a classic (process-owned) fcntl lock taken through
		// a second descriptor of the same process to conflict with the first.
		// POSIX makes both the one owner's lock, and ext4 and tmpfs grant it
		// (TestLocksWithinProcess runs this case on a native directory and
		// on the mount); go-fuse's own loopback passes only because it
		// re-takes every lock as an OFD lock on a host descriptor of its own.
		// The frontends leave locks to the kernel (lock_test.go).
		"FcntlFlockLocksFile": "asks for OFD semantics from classic POSIX locks",
	}
	if fuse.LibFUSE != 0 {
		for name, why := range map[string]string{
			// hard_remove: libfuse answers GETATTR of a node that lost its
			// last name ESTALE before it asks the file system, and fstat(2)
			// sends no file handle to find it by.
			"FstatDeleted": "libfuse's path API cannot fstat an unlinked file",
			"NlinkZero":    "libfuse's path API cannot fstat an unlinked file",
			// Between the kernel's LOOKUP and its OPEN the suite renames
			// another file over the name; libfuse then has no path for the
			// node the kernel opens and answers ESTALE without asking the
			// file system (the kernel's one retry loses the same race).
			"OpenSymlinkRace": "libfuse's path API resolves a name that moved to ESTALE",
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
