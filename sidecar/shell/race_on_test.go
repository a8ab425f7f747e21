//go:build race

package shell

// slowdown scales the time bounds of tests: the race detector makes the
// interpreter several times slower.
const slowdown = 5
