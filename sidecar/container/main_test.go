package container

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// testRootfs is a busybox rootfs built once for the package's tests; when
// it could not be built, rootfsErr says why and container tests skip.
var (
	testRootfs string
	rootfsErr  error
)

// TestMain doubles as the container's init (libcontainer re-executes the
// test binary with the "init" argument) and as the crash test's helper.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "init" {
		Init()
	}
	if os.Getenv(crashHelperEnv) != "" {
		os.Exit(crashHelper())
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sqlfs-rootfs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if rootfsErr = BuildBusyboxRootfs(context.Background(), dir); rootfsErr == nil {
		testRootfs = dir
	}
	return m.Run()
}
