package main

import (
	"context"

	"github.com/sqlfs/sqlfs/sidecar/container"
)

// The container backend re-executes this binary as "sqlfs-exec init" to set
// up each container process (libcontainer's two-step start); it is not for
// people to run.
func init() {
	register("init", "internal: container process setup (run by the container backend)",
		func(context.Context, []string) int {
			container.Init() // never returns
			return 255
		})
}
