// Package fleet lets several hosts (serve --workspaces) share one bucket,
// each workspace served by exactly one host at a time.
//
// # Leases
//
// A workspace is served only under its lease, one record per workspace
// in a Lease store changed by compare-and-swap alone: S3 conditional
// writes (S3Lease, the protocol of Litestream's S3 leaser), so two hosts
// racing for a workspace cannot both win, and no consensus of our own
// is involved. A record names its holder's advertised address and a
// generation, +1 at each acquisition: the fencing token.
//
// A host takes a workspace's lease when it opens it (Fleet is the host's
// Opener) and releases it when the workspace closes (hibernation,
// removal, shutdown), after the replica holds everything the workspace
// committed: a clean shutdown hands every workspace off at once. A close
// whose final replication failed (the object store unreachable) keeps
// the lease, renewed, and the store in its folder in the replicator's
// sight, trying again until the replica has it all; reopened meanwhile,
// the workspace is served from that store (sqlfs_fleet_unreplicated_workspaces
// counts them). While
// open, the lease is renewed every TTL/3. A host that has not renewed it
// within TTL*2/3 of sending its last successful renewal, or whose renewal
// finds the record changed, stops serving the workspace at once: requests
// are refused, running execs cancelled and the store closed
// (host.EvictInstance: that instance only, never a later open of the
// same id under a new lease). Another host can take the lease only once it expired,
// TTL after the holder's last write, so the TTL/3 margin must cover the
// hosts' clock skew and the close; with NTP it does. A process paused
// past its lease (SIGSTOP, a long GC pause, a frozen VM) finds its time
// up when it resumes: the monotonic clock ran on, and every request
// checks it before the workspace serves it.
//
// # Routing
//
// A request for /v1/workspaces/ID/... that this host does not serve looks
// up the lease: held live by another host, it is forwarded by reverse
// proxy to the holder's advertised address, streamed unbuffered both ways
// (NDJSON exec output, MCP's event streams), so clients need no
// redirects; free or expired, this host takes it, provided the request
// bears a credential it accepts (the operator's token, or a workspace
// token it stores). A forwarded request is never forwarded again: a
// holder that does not serve it answers 503 with Retry-After until the
// lease settles. A forward that cannot connect to the holder (dead, it
// seems) of a request that could take the lease has the Opener restore
// the workspace ahead of the lease's expiry (replica.Opener.Prepare),
// so that the restore overlaps the TTL; the open after the expiry uses
// that copy only if the replica has nothing newer. Every other workspace
// that holder still holds live is prepared too, behind the ones asked for
// (a sweep of the lease records, once per dead instance per TTL, writing
// none), so that their clients, who come next, find them restored.
//
// # Local copies and failover
//
// A host keeps the local copy of a workspace it does not hold parked
// (renamed to parked.sqlfs), out of the replicator's sight: Litestream
// meeting a store behind its replica would snapshot it as the newest
// state. Taking generation N, a host reuses its parked copy only when it
// served generation N-1 itself (the generation it last took, written
// before it opens the store, and the generation whose folder held the
// store, are in DIR/ID/.fleet-generation):
// nobody served the workspace since, and the copy goes back to its folder,
// its replica continuing. Otherwise the copy is set aside as stale.sqlfs,
// and the Opener (replica.Opener) restores the workspace into DIR/ID/gen-N/,
// from the newest generation below N the replica holds; when the replica
// holds nothing of it, the set-aside copy is the newest state anyone has
// and is served, and a host without one refuses rather than serve an
// empty store (replica.ErrUnreplicated); under the first generation, a
// replica that lists objects of the workspace nothing restores
// (unreadable, or of generations at or above the lease's) refuses it
// too (replica.ErrNotRestorable). Each holder thus
// replicates to a path of its own (see package replica: a stale holder's
// late uploads cannot reach what restores return), and one that lost its
// lease closes the workspace without a final sync. So a holder that dies
// leaves its workspaces' leases to expire, and the next host asked for
// each restores it from the replica and serves it.
//
// # Unknown ids and deletion
//
// A workspace exists when this host has its folder or the fleet has a
// lease record of it (a replica object alone is no evidence: a stale
// holder's late upload after a delete must not bring it back). Fleet.Exists
// settles that for an unknown id at a bounded cost (host.Known over the
// lease prefix), before any lease is written: random ids cost neither a
// restore nor a lease object. Fleet.Delete takes the workspace's lease,
// deletes its replica, then its lease record.
package fleet
