package fs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// Errors of the checkpoint API, checked with errors.Is.
var (
	// ErrCheckpointNotFound: no checkpoint has the id or name given.
	ErrCheckpointNotFound = sqlstore.ErrCheckpointNotFound
	// ErrCheckpointExists: a checkpoint already has the name given.
	ErrCheckpointExists = sqlstore.ErrCheckpointExists
	// ErrBadCheckpointRef: the reference is neither an id nor a valid
	// name (empty, too long, control characters, or a name made of digits,
	// which would read as an id).
	ErrBadCheckpointRef = sqlstore.ErrBadCheckpointRef
	// ErrRestoreRefused: a restore would change paths the policy keeps
	// from changing (read-only or hidden); nothing was changed. The error
	// is a *RestoreRefusedError naming them.
	ErrRestoreRefused = errors.New("restore refused by policy")
)

// CheckpointOptions describe a new checkpoint.
type CheckpointOptions struct {
	// Name is optional and unique among the store's checkpoints; a name
	// can be given wherever an id is taken. It must not be all digits.
	Name string
	// Auto marks a checkpoint taken by the system (before an exec), which
	// retention rules may delete; named or manual ones stay until deleted.
	Auto bool
	// ExecID is the exec this checkpoint was taken before, if any.
	ExecID string
}

// CheckpointInfo describes a checkpoint.
type CheckpointInfo = sqlstore.CheckpointInfo

// DiffEntry is one line of a diff, as git's --name-status: Status is 'A'
// (the path exists only on the newer side), 'D' (only on the older side)
// or 'M' (both, but the file's type, data, mode, owner, symlink target or
// extended attributes differ). Directories appear when they are added or
// deleted or their own mode or owner change, not because what they hold
// changed.
type DiffEntry struct {
	Status byte
	Path   string
}

func (d DiffEntry) String() string { return string(d.Status) + "\t" + d.Path }

// RestoreRefusedError names the paths a restore would have changed against
// the policy. errors.Is(err, ErrRestoreRefused) holds, and so does
// errors.Is(err, syscall.EROFS).
type RestoreRefusedError struct {
	Paths []string
}

func (e *RestoreRefusedError) Error() string {
	return fmt.Sprintf("%v: it would change %s", ErrRestoreRefused, strings.Join(e.Paths, ", "))
}

func (e *RestoreRefusedError) Is(target error) bool {
	return target == ErrRestoreRefused || target == syscall.EROFS
}

// Checkpoint records the whole live tree as an immutable checkpoint: every
// change that returned before the call, and no part of one still running.
// It is a marker in the writer's next commit, so it pauses changes only as
// long as a commit does, and costs the same whatever the tree's size: no
// data or metadata is copied (see "Checkpoints" in the package doc).
func (f *FS) Checkpoint(ctx context.Context, opts CheckpointOptions) (CheckpointInfo, error) {
	return f.checkpoint(ctx, opts)
}

// Checkpoints lists the store's checkpoints, oldest first. The listing is
// audited (checkpoint-list), as every checkpoint operation is.
func (f *FS) Checkpoints(ctx context.Context) ([]CheckpointInfo, error) {
	cps, err := f.c.store.Checkpoints(ctx)
	f.auditCkpt("checkpoint-list", "/", "", err)
	return cps, err
}

// ResolveCheckpoint finds a checkpoint by id (its decimal number) or name.
func (f *FS) ResolveCheckpoint(ctx context.Context, ref string) (CheckpointInfo, error) {
	return f.c.store.ResolveCheckpoint(ctx, ref)
}

// Restore replaces the live tree with checkpoint ref's, in one commit: a
// crash leaves the old tree or the restored one. Changes made before the
// call are replaced; a change running meanwhile lands before (and is
// replaced) or after (on the restored tree). A mount is told of every
// path that changed before Restore returns. An inode that existed at the
// checkpoint is restored in place, so a handle open on it reads the
// restored file; an inode created since loses its names and lives on
// while open, as if unlinked. The policy applies as to the paths' own
// writes: a restore that would change a read-only or hidden path fails
// with a *RestoreRefusedError, and one that would take the live tree past
// the quota with ENOSPC, changing nothing.
func (f *FS) Restore(ctx context.Context, ref string) error {
	return f.restore(ctx, ref, nil, nil)
}

// RestorePaths puts back exactly the given paths (and what is below them)
// as they were at checkpoint ref, in one step (one commit holds all of
// it), leaving every other path as it is: what is at a path now goes, as
// an unlink would take it (a handle open on it keeps it), and the
// checkpoint's files come back as new inodes with its data, attributes
// and the hard links among them; missing parent directories are made with
// the checkpoint's attributes. A path the checkpoint lacks is removed.
// Paths are taken as named: no symlink is followed on the way. A
// directory now where the checkpoint had a non-directory above a path
// fails with ENOTDIR. "/" restores the whole tree (Restore). Policy, quota
// and kernel notification as Restore. The data put back waits in RAM for
// the next commit, as written data does.
func (f *FS) RestorePaths(ctx context.Context, ref string, paths []string) error {
	return f.RestorePathsIf(ctx, ref, paths, nil)
}

// RestorePathsIf is RestorePaths with a last check: ok runs once every
// change made before it is committed (so the store's audit trail shows
// them all), with every other change held off until the paths are back,
// so that nothing ok did not see lands in between. An error from ok
// refuses the restore, changing nothing, and is returned as it is. ok may
// read the store (Store) but must not call f: the core waits for it.
func (f *FS) RestorePathsIf(ctx context.Context, ref string, paths []string, ok func(context.Context) error) error {
	if len(paths) == 0 {
		return nil
	}
	return f.restore(ctx, ref, paths, ok)
}

// Diff lists what changed from checkpoint from to checkpoint to, or to the
// live tree when to is "", sorted by path, in time that grows with what
// changed rather than with the tree. It is audited (checkpoint-diff, Path2
// "checkpoint:FROM..TO", TO empty for the live tree).
func (f *FS) Diff(ctx context.Context, from, to string) ([]DiffEntry, error) {
	d, err := f.diff(ctx, from, to, nil, false)
	f.auditCkpt("checkpoint-diff", "/", "checkpoint:"+from+".."+to, err)
	return d, err
}

// DiffPaths is Diff from checkpoint ref to the live tree restricted to the
// given paths and what is below them: what RestorePaths would change.
// Each path's diff is audited as Diff's.
func (f *FS) DiffPaths(ctx context.Context, ref string, paths []string) ([]DiffEntry, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	d, err := f.diff(ctx, ref, "", paths, false)
	for _, p := range paths {
		f.auditCkpt("checkpoint-diff", Clean(p), "checkpoint:"+ref+"..", err)
	}
	return d, err
}

// DeleteCheckpoint removes checkpoint ref. The rows and chunks only it
// held are freed afterwards by the writer, in bounded transactions.
func (f *FS) DeleteCheckpoint(ctx context.Context, ref string) error {
	return f.deleteCheckpoint(ctx, ref)
}

// Fork writes a new, independent store at dst holding checkpoint ref's
// tree, or the live tree when ref is "" (everything that returned before
// the call). It runs beside the owner without stopping it; dst must not
// exist, and is created under a temporary name and linked into place only
// once complete. The fork keeps no checkpoints.
func (f *FS) Fork(ctx context.Context, ref, dst string) error {
	return f.fork(ctx, ref, dst)
}

// checkpointTimeout bounds how long a checkpoint waits for the writer.
const checkpointTimeout = time.Minute
