// Package fs is the sqlfs filesystem core: a RAM copy of the metadata over
// a sqlstore.Store, read on demand, POSIX semantics, open handles and the
// data path. The FUSE
// frontends (fs/fuse) and every sidecar backend use this Go API; none of
// them speaks SQL.
//
// # Locks
//
// core.mu guards all metadata, every inode's fields, the dirty set and the
// clean cache. inode.io serialises the data writers of one file, so the
// read-modify-write of a chunk never races another writer. File.mu guards
// a handle's offset. The order is File.mu, then inode.io, then core.mu;
// nothing takes inode.io while holding core.mu.
//
// A change (every call that goes through mutate) holds core.mu from its
// first lookup to its audit record, released by defer, so it is one step
// that no other change or commit snapshot sees half done, and a panic
// cannot leave the core locked. Every other entry point holds core.mu by
// defer too (core.locked), so a panic in the core with core.mu held, once
// a caller's recover (the tools') took it, leaves the workspace serving. A
// job on the writer (a restore, RestorePathsIf's check, a checkpoint)
// that panics has its panic carried back to its caller and raised there:
// on the writer it would end the process. core.mu is let go only for store I/O that
// is not part of a change: a writer reading the old bytes of a chunk it
// partly overwrites, a read fetching chunks, the read-ahead, and the
// writer goroutine's Commit; and by waitForRoom while a writer waits for
// the dirty data to drain. A truncation keeps core.mu throughout, reading
// the one tail chunk it may need under it, and so does reading metadata
// into RAM (below): a directory is loaded whole in one step. Store reads
// under core.mu use the read pool; nothing holds a pool connection while
// it waits for core.mu, so they cannot deadlock.
//
// # The lazy metadata cache
//
// Opening a store reads the root, the totals and the inodes left without
// a name, each by key or a small index (sqlstore.OpenState): the cost of
// opening, and of waking a hibernated workspace, does not grow with the
// tree. A directory's entries, with the inodes they name and their
// extended attributes, are read the first time anything needs them (a
// lookup, a listing, a change in it: loadDir) and then kept, so warm
// paths never touch the store. The invariants:
//
//   - What is in RAM is authoritative. What is not was never touched since
//     the store opened (a change reaches its inode through a loaded
//     directory), so the store's committed rows are its current state,
//     and a commit in flight never writes them.
//   - inode.children is nil until loaded. Every entry of a loaded directory
//     names an inode in RAM; a directory in RAM has every directory above
//     it in RAM and loaded, so ".." and paths never read the store.
//   - An entry read from the store whose inode is in RAM already (another
//     name of a hard link, or a directory a restore moved) keeps the RAM
//     inode. A name of an inode in RAM that lies in a directory not loaded
//     yet is found through the store's entries of that inode (dirAt,
//     namesInStore), which loads the directories above it first.
//   - The counters (Usage, Statfs, the quota) are the store's totals, kept
//     in the transaction of every change, read at open and after a restore,
//     and followed in RAM by each create and reclaim in between: no
//     operation counts by walking the tree.
//   - An inode read from the store starts its data generation past any an
//     earlier inode of its number had (restores << 40): only a restore
//     brings a number back, and it bumps the count first.
//   - A restore changes only what is in RAM (inodes, and the entries of
//     loaded directories, reading from the restored store the inodes those
//     now name); the rest is read from the restored store when needed.
//     Files unlinked but open at a checkpoint come back unnamed and are
//     reclaimed unless still open.
//
// # The chunk protocol
//
// A file's data is its chunks in the store overlaid by inode.chunks, the
// chunks written since the last commit ("dirty"). A read takes, per chunk:
// the RAM chunk if there is one; zeros if the chunk is at or past the
// truncation watermark; the clean cache if it holds the chunk at the
// inode's current generation; else the store.
//
//   - A write copies the chunk's old bytes (from the clean cache, else the
//     store) when it covers only part of it, writes into the RAM chunk and
//     bumps dataGen. The store read happens without core.mu; if the
//     generation moved meanwhile (only a truncation can move it, since the
//     writer holds inode.io), the write reads again. O_APPEND finds the end
//     of file after taking inode.io and checks it again under core.mu where
//     the bytes land.
//   - A commit snapshot marks every dirty chunk "captured" and hands its
//     buffer to the batch. A captured buffer is never written again: a
//     later write copies it into a new RAM chunk. After a successful commit
//     the RAM chunk is dropped only if it is still the captured one, and
//     dataGen is bumped, because a read-ahead may have cached (or be
//     fetching) the store bytes that chunk shadowed. A file of at most
//     1 MiB moves its committed chunks into the clean cache at the new
//     generation, so reading back what was just written skips SQLite.
//     After a failed commit captured chunks are dirty again and retried.
//   - Shrinking a file queues a Truncation{Ino, From}. The watermark
//     inode.truncFrom is the lowest From of the inode's truncations not yet
//     committed: chunks from it on that are not in RAM read as zeros. When
//     a commit lands, the watermark rises to the lowest still pending (a
//     committed one kept would hide chunks its commit wrote after it). The
//     kept part of the last chunk is rewritten into RAM, so growing later
//     reads zeros.
//   - dataGen counts writes, truncations and releases. Clean-cache entries
//     and fetches in flight carry the generation they were read at; one of
//     another generation is never served or stored. So the clean cache never
//     holds bytes older than what RAM or the store holds.
//   - The clean cache is a FIFO of store chunks bounded at 64 MiB of
//     buffer capacity.
//
// # What a commit guarantees
//
// The single writer goroutine turns the dirty set into one SQLite
// transaction per interval (Options.CommitInterval), per Sync or Flush, or
// when dirty data passes a quarter of Options.DirtyLimit. The snapshot is
// taken under core.mu, so a commit holds a consistent state of the whole
// tree: every change that returned before it, and no part of one that had
// not. Sync returns once everything done before the call is in a synced
// commit; Flush once it is committed, without waiting for the disk. A
// failed commit loses nothing: the changes stay in RAM, are retried with
// their current values, and the error is reported by Sync until a commit
// succeeds. Close makes a last synced commit; once Close has begun every
// change, a write through a handle still open included, fails with EIO
// rather than land after that commit's snapshot. Files unlinked while open
// are reclaimed at the next open, found through an index of the inodes
// with nlink 0.
//
// # The kernel's dirty pages
//
// A mount with the writeback cache holds written data in the kernel until
// it writes it back (at close, fsync, under memory pressure). SetFlusher
// registers the mount's way to have it written back now; the core calls it
// before a caller other than the kernel opens, stats or truncates a
// regular file (OpenFile, ReadFile, WriteFile, Stat, Truncate), outside
// every lock, so the WRITEs it waits for are served meanwhile. A directory
// listing with attributes (ReadDirAttrs) does not flush: its sizes may lag
// what the kernel still holds. A File is flushed when opened only: its
// later reads do not see what the kernel's writers wrote since.
//
// # Checkpoints
//
// A checkpoint is a generation of the store (sqlstore/snapshot.go): every
// row carries the generation it was written in, and a row a checkpoint
// still sees is moved to a history table when a later commit overwrites or
// deletes it. The invariants:
//
//   - A checkpoint is a commit boundary. Checkpoint hands the writer a
//     marker: it snapshots the dirty set under core.mu as any commit does,
//     and the same transaction records the checkpoint and starts the next
//     generation. Every change that returned before the call is in it, no
//     part of one that had not; writers wait at most for that snapshot.
//   - Nothing is copied at a checkpoint, data or metadata: its cost does not
//     grow with the tree. Chunks are shared copy-on-write by versioning: a
//     live chunk born at or before a checkpoint is that checkpoint's chunk
//     too, until a write replaces it, when the old row (one chunk) moves to
//     chunks_hist. The store grows by what changes after a checkpoint.
//   - A checkpoint never changes: history rows are only inserted, and only
//     deleted when no checkpoint's generation lies in their [born, died).
//     Deleting a checkpoint removes its marker; the janitor frees the rows
//     nobody sees any more, in bounded transactions. New inodes never take
//     a number a checkpoint holds.
//   - Restore makes the live tree a checkpoint's in one transaction (with
//     the dirty set before it), holding core.mu throughout, so no change
//     lands half before and half after. It reads only what changed since the
//     checkpoint (rows born after it, history rows it saw), and the RAM copy
//     is brought in line from that list alone, for what of it is in RAM. An inode that existed at the
//     checkpoint is restored in place (same number): a handle open on it
//     reads the restored file, like a file rewritten by another process. An
//     inode created since loses its names; one still open (a File, or
//     known to the kernel) lives on without names until its last close, as
//     if unlinked. The kernel writes back its dirty pages of the changed
//     files before the restore, and is told of every changed name and inode
//     before Restore returns (with the writeback cache the kernel keeps its
//     own size of a file held open, as for any change made outside it, until
//     the last holder lets go). The policy is applied to the diff first: a
//     read-only or hidden path that would change refuses the whole restore;
//     a quota the restored tree would exceed refuses it too (ENOSPC).
//     Restoring the newest checkpoint moves the rows it saw back out of
//     the history as they were, so nothing reads as changed since it: the
//     next restore or diff costs what changes after, not every restore's
//     rows again. An older one comes back as new rows (a later checkpoint
//     still sees what is replaced).
//   - Diff reads the rows born or dead between its two sides, the paths of
//     the inodes and entries they name on either side, and compares those
//     paths only; a renamed directory lists everything below it.
//   - A read of a checkpoint (diff, fork, RestorePaths) fails with
//     ErrCheckpointNotFound when the checkpoint is deleted meanwhile: its
//     own transaction finds the checkpoint still recorded, or the read
//     finds it again after, so it never reads rows the janitor was freeing.
//   - Fork copies the store's files with the kernel's file copy under a
//     read transaction, which pins one commit's database file and WAL
//     frames while the owner goes on (sqlstore/fork.go), then drops from
//     the copy what its generation does not see and every checkpoint.
//   - RestorePathsIf runs its check after committing what waits in RAM and
//     holds every change off until the paths are back: undo checks there
//     that nobody changed the exec's paths since its own read of the audit,
//     so no later write lands between its check and its restore.
//
// # Paths
//
// Resolve is the one path resolver, used by the core, the shell and the
// tools: ".." is the physical parent of where the walk has got to, every
// symlink before a "/" is followed (the last one on request), more than
// MaxSymlinks links is ELOOP, a non-directory before "/" is ENOTDIR and a
// component over MaxNameLen bytes is ENAMETOOLONG. A whole path has no
// length limit. Clean is lexical: it names paths in errors only.
//
// # Policy
//
// The policy applies to the file the resolver reaches, never to the name
// as written: the core's resolver carries the physical path of each node
// it reaches (no symlink, no dot), each Lookup refuses a name the hidden
// rules cover, present or not, and a change checks the entry it ends at
// against the read-only rules. So a symlink, a chain of them or ".." can
// lead nowhere the path itself could not, for every caller: the path API,
// the inode API (whose paths are physical already), and every sidecar
// over them. A refusal is a *refusal inside the core; at the API's edge
// it becomes its rule's errno, is counted once (Rule.count) and audited
// under the physical path, also for reads.
//
// A file with several names is as hidden, or read-only, as its most
// protected name. What protects it is read from the store's names of it
// once per inode, in one query for a listing's files (prefetchLinkProt),
// and kept: under the policy no change gives a name another protection
// or a protected file a new name (see otherNamesRefusal), so it cannot go
// stale until a restore, which forgets it.
package fs
