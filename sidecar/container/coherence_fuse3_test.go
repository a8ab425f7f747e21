//go:build fuse3

package container

// staleCache is zero: the fuse3 mount invalidates the kernel's caches when
// the fs core changes the store, so other frontends' changes show at once.
const staleCache = 0
