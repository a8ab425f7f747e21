// Package replica replicates workspace stores continuously to
// S3-compatible object storage with Litestream, restores them, to the
// latest commit or to a second in the past, and lets a host open a
// workspace it does not have from the replica.
//
// # Litestream as a child process
//
// Litestream's library embedded in a process that opens the same database
// with mattn/go-sqlite3 corrupted it in 5 of 5 runs: Litestream links its
// own SQLite (modernc.org/sqlite), and two SQLite copies in one process
// break each other's POSIX locks. So a Supervisor runs `litestream
// replicate` as a child process, on a config it writes (mode 0600 in a
// 0700 state directory; the keys travel in the child's environment, never
// in the file): one store (StartStore, for serve --store and sqlfs-mount)
// or a host's directory with `watch: true` (StartDir), which picks up
// workspaces created later. It restarts litestream with backoff when it
// dies, forwards its log to slog, and talks to it over its control socket.
// The child gets SIGTERM when the owner dies (Pdeathsig), SIGKILL
// included, so it never ships a store another process took over.
//
// # Restores read the LTX files themselves
//
// A restore is no litestream process: it lists the store's LTX files
// (PATH/LEVEL/MIN-MAX.ltx), plans as `litestream restore` v0.5.18 does
// (the newest snapshot before the target, then the files of levels 8 to 0
// that reach furthest), GETs them (16 ahead of the one decoded) and writes
// each page to its place in a new file, checking every file's CRC-64, and
// syncs it, before the store's check opens it. Pure Go (github.com/
// superfly/ltx), so no second SQLite shares the process; on a thread of
// its own, niced for a host. See ltx.go.
//
// # WAL checkpoints are Litestream's
//
// Litestream reads the WAL to ship it, so it must see every frame before
// the WAL starts over: it holds a read transaction on the store, which
// keeps any other checkpointer from resetting the WAL, and runs the
// checkpoints itself. An owner that replicates therefore opens its store
// with sqlstore.Options.ExternalWALCheckpoints (fs.Options has the same
// field): sqlstore's WAL keeper does not start, and Close does not
// truncate the WAL (a full disk still gets its emergency checkpoint).
// Litestream is told the thresholds sqlstore used: a PASSIVE checkpoint
// past 256 pages (8 MiB at sqlfs's 32 KiB pages) and a TRUNCATE past 2048
// (64 MiB), instead of its defaults sized for 4 KiB pages (its TRUNCATE
// default would let a sqlfs WAL reach 3.8 GiB), and a busy timeout of
// 100 ms instead of 1 s: its PASSIVE checkpoint takes the write lock
// first, reading and uploading nothing while it waits, and beside a
// stream of durable commits it often waited the whole second. Measured:
// see TestWALStaysBounded, TestReplicationLag and the README.
//
// # Nothing lost at hibernation or exit
//
// Supervisor.Sync returns once the object store holds everything the store
// had committed when it was called (litestream's POST /sync with wait,
// which reads the WAL and uploads, then compares the replica's
// transaction id with the local one). The host's Opener wraps each
// workspace so that Close (hibernation, removal, shutdown) first closes
// the store, with its final commit, then waits for that sync; an owner of
// one store does the same at exit (Supervisor.Close syncs every store
// still in sight before stopping litestream). Once synced, a closed
// workspace leaves litestream (POST /unregister) before its store is
// renamed parked.sqlfs (here at hibernation, by the fleet at handoff), out
// of the directory watch's pattern, so that ten thousand hibernated
// workspaces cost litestream nothing (it would hold a read transaction,
// descriptors and a monitor for each); the next request renames it back.
// A sync that failed (the object store down) leaves the store in sight,
// for litestream to ship when it can. Between syncs a host that dies loses at
// most what was committed in the last sync interval plus the upload time
// (the lag sqlfs_replica_lag_seconds shows).
//
// # Layout in the bucket, and split brain
//
// A single store replicates to the URL's path; a host's workspace ID to
// PATH/ID/workspace.sqlfs (Litestream's dir mode appends each store's path
// relative to the directory), which WorkspaceURL names. In a fleet the
// holder of lease generation G keeps the store in DIR/ID/gen-G/, so it
// replicates to PATH/ID/gen-G/workspace.sqlfs: a path no other holder
// writes. A holder paused past its lease (SIGSTOP, a frozen VM) whose
// litestream resumes and ships what it had, or flushes at close, writes
// only its own generation's path; Litestream's LTX files of two writers
// never meet under one path (their transaction ids would overlap and the
// replica restore a mix). The next holder (generation N) restores from
// the newest generation below N that holds anything (Opener), passing
// over the empty ones of holders that died before their first upload but
// never over an error. A host that served generation N-1 itself and takes
// N keeps replicating to its own path, so a workspace waking on the host
// that hibernated it uploads no new snapshot. A fenced holder closes its
// workspace without a final sync (CloseFenced). RestoreWorkspace (restore
// --workspace) takes the newest generation that holds the workspace at
// the time asked. Litestream's retention prunes only the path it
// replicates: a holder closing a workspace, still under its lease, prunes
// the older generations no second of the retention window needs (Prune):
// those below a newer generation whose oldest object is older than the
// window. Its own generation, and any above, are never touched.
//
// # Unknown ids and deletion
//
// A request for an id this host has no folder of costs no restore unless
// the replica lists the id (host.Known: a listing of PATH/ a second at
// most, lookups of ids it missed rate-limited, misses remembered), and
// Delete removes every object under PATH/ID/ (DELETE /v1/workspaces/ID).
package replica
