//go:build !fuse3

package fuse

import (
	"os/exec"

	cgofuse "github.com/winfsp/cgofuse/fuse"
)

// libfuse2 cannot tell the kernel of changes made outside it, so cached
// attributes and names must expire quickly for other frontends' changes to
// show; auto_cache drops a file's pages when its mtime or size changed.
var cacheOptions = []string{"big_writes", "auto_cache", "attr_timeout=1", "entry_timeout=1", "negative_timeout=0"}

const canNotify = false

func configureHost(*cgofuse.FileSystemHost) {}

func lazyUnmount(dir string) error { return exec.Command("fusermount", "-u", "-z", dir).Run() }
