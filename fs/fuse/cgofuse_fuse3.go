//go:build (cgofuse || !linux) && fuse3

package fuse

import (
	"os/exec"

	cgofuse "github.com/winfsp/cgofuse/fuse"
)

// With libfuse3 (through the cgofuse fork in third_party/cgofuse) the core
// tells the kernel of every change made outside it, so the kernel may cache
// names, attributes and data for long.
var cacheOptions = []string{"kernel_cache", "attr_timeout=60", "entry_timeout=60", "negative_timeout=60"}

const canNotify = true

// LibFUSE is the libfuse major version this build serves through.
const LibFUSE = 3

// configureHost sets what libfuse3 takes only from init, not as -o options:
// st_ino from the store, no FLUSH on close (written data is visible at
// once; Flush has nothing to do), and pages kept when mtime changes (the
// kernel hears of changes made elsewhere through Notify), and hard_remove:
// an unlinked file that is still open lives on through the core's open
// handles, under no name (see the package doc for what libfuse then cannot
// serve).
func configureHost(h *cgofuse.FileSystemHost) {
	h.SetUseIno(true)
	h.SetNoFlush(true)
	h.SetNoAutoInvalData(true)
	h.SetHardRemove(true)
}

func lazyUnmount(dir string) error { return exec.Command("fusermount3", "-u", "-z", dir).Run() }
