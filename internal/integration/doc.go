// Package integration runs sqlfs against real servers on 127.0.0.1:
// SeaweedFS for S3 (internal/s3test) and Litestream under the replica
// package, through the sqlfs-exec binary, as an operator would. The
// figures it logs (lag, restore times) are measurements under whatever
// load the machine has, stated with it; what it asserts is what must hold
// at any load: nothing acknowledged and replicated is lost, replication
// catches up by itself. Its tests carry the build tag integration (make
// test-integration).
package integration
