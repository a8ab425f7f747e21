//go:build linux && !fuse3

package fuse

// fuse3Build tells the shared benchmarks which libfuse this test binary uses.
const fuse3Build = false
