package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/sqlfs/sqlfs/sidecar/container"
)

func init() {
	register("busybox-rootfs", "build a minimal container rootfs from the host's static busybox", runBusyboxRootfs)
}

func runBusyboxRootfs(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("busybox-rootfs", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: sqlfs-exec busybox-rootfs DIR\n\n"+
			"Builds in seconds a root filesystem for --rootfs from %s (Debian's\n"+
			"busybox-static). For a full Debian userland use `make rootfs`.\n", container.BusyboxPath)
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	if err := container.BuildBusyboxRootfs(ctx, fs.Arg(0)); err != nil {
		fmt.Fprintf(os.Stderr, "sqlfs-exec busybox-rootfs: %v\n", err)
		return 1
	}
	return 0
}
