//go:build !fuse3

package container

import "time"

// staleCache is how long the container may still see names and attributes
// from before a change made through the fs core. libfuse2 cannot invalidate
// the kernel's caches, so the mount's attr_timeout and entry_timeout (1 s)
// bound it; the fuse3 build invalidates at once.
const staleCache = 1500 * time.Millisecond
