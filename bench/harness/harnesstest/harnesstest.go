// Package harnesstest sets up the smoke tests of the benchmark runners.
package harnesstest

import (
	"testing"

	"github.com/sqlfs/sqlfs/bench/harness"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// WorkDir skips the test unless it can mount and drop caches, and returns an empty
// work directory whose leftover mounts are detached even when the test fails, before
// the directory is removed.
func WorkDir(t testing.TB) string {
	t.Helper()
	testenv.Require(t, "the smoke test mounts and drops caches", harness.CanMount())
	work := t.TempDir()
	t.Cleanup(func() {
		if err := harness.UnmountUnder(work); err != nil {
			t.Error(err)
		}
	})
	return work
}
