//go:build (cgofuse || !linux) && !fuse3

package fuse

import (
	"os/exec"

	cgofuse "github.com/winfsp/cgofuse/fuse"
)

// st_ino is the store's inode number; hard_remove as with libfuse3 (see
// configureHost there). libfuse2 cannot tell the kernel of changes made outside it, so cached
// attributes and names must expire quickly for other frontends' changes to
// show; auto_cache drops a file's pages when its mtime or size changed.
var cacheOptions = []string{
	"use_ino", "readdir_ino", "big_writes", "hard_remove",
	"auto_cache", "attr_timeout=1", "entry_timeout=1", "negative_timeout=0",
}

const canNotify = false

// LibFUSE is the libfuse major version this build serves through.
const LibFUSE = 2

func configureHost(*cgofuse.FileSystemHost) {}

func lazyUnmount(dir string) error { return exec.Command("fusermount", "-u", "-z", dir).Run() }
