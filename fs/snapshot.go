package fs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// writerJob is work that must run on the writer goroutine, since the
// store's commits come from one goroutine.
type writerJob struct {
	fn    func() error
	reply chan error
}

// onWriter runs fn on the writer goroutine and returns its error. Once
// handed over, fn runs to its end whatever ctx does, so its outcome is
// never lost.
func (c *core) onWriter(ctx context.Context, fn func() error) error {
	j := writerJob{fn: fn, reply: make(chan error, 1)}
	select {
	case c.jobs <- j:
	case <-c.done:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	err := <-j.reply
	if p, ok := err.(jobPanic); ok {
		// The caller's own panic, where its recover (the tools') can
		// take it.
		panic(p.value)
	}
	return err
}

// jobPanic carries a job's panic from the writer back to its caller.
type jobPanic struct{ value any }

func (p jobPanic) Error() string { return fmt.Sprint("panic: ", p.value) }

// runJob runs a job on the writer. A panic in it (a caller's check, run
// there with c.mu held, or a bug) goes back to the caller: on the writer
// it would end the process, and every workspace it serves, and the job's
// own deferred unlocks have let c.mu go by then.
func (c *core) runJob(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("a job on the writer panicked", "panic", p, "stack", string(debug.Stack()))
			err = jobPanic{p}
		}
	}()
	return fn()
}

// checkpointError reports whether err is about the checkpoint asked for
// (a name taken, an id unknown, a refusal) rather than the store failing.
func checkpointError(err error) bool {
	return errors.Is(err, ErrCheckpointExists) || errors.Is(err, ErrCheckpointNotFound) ||
		errors.Is(err, ErrBadCheckpointRef) || errors.Is(err, ErrRestoreRefused) || errors.Is(err, syscall.ENOSPC)
}

// commitWith snapshots the dirty set and has write commit it (with
// whatever it adds in the same transaction). Called with c.mu held; hold
// keeps it held across the write, else it is let go meanwhile. After, done
// runs (under c.mu) when the write succeeded.
func (c *core) commitWith(hold bool, durable bool, write func(b *sqlstore.Batch) error, done func()) error {
	b, captured := c.snapshot()
	b.Durable = durable
	err := func() (err error) {
		// Runs last, c.mu held again: what the batch captured is dirty
		// again, then the panic goes on to the caller, who lets c.mu go.
		defer func() {
			if p := recover(); p != nil {
				c.restore(b, captured)
				c.room.Broadcast()
				panic(p)
			}
		}()
		if !hold {
			c.committing = true
			c.mu.Unlock()
			defer func() {
				c.mu.Lock()
				c.committing = false
			}()
		}
		return write(b)
	}()
	metrics.StoreCommits.Inc()
	metrics.StoreCommitOps.Observe(float64(b.Ops()))
	switch {
	case err != nil:
		c.restore(b, captured)
		if !checkpointError(err) {
			c.storeErr = err
			c.log.Error("commit failed; changes stay in RAM and are retried", "err", err)
		}
	default:
		c.release(b, captured)
		c.storeErr = nil
		c.unsynced = !durable
		if done != nil {
			done()
		}
	}
	c.room.Broadcast()
	return err
}

// ckptPath is how the audit trail names a checkpoint.
func ckptPath(ci CheckpointInfo) string { return "checkpoint:" + strconv.FormatInt(ci.ID, 10) }

// auditCkpt records a checkpoint operation; the audit names a bad
// reference's error by the errno a path's would have.
func (f *FS) auditCkpt(op, p, p2 string, err error) {
	switch {
	case errors.Is(err, ErrCheckpointNotFound):
		err = syscall.ENOENT
	case errors.Is(err, ErrCheckpointExists):
		err = syscall.EEXIST
	case errors.Is(err, ErrBadCheckpointRef):
		err = syscall.EINVAL
	}
	c := f.c
	c.locked(func() { c.record(f.who, &mutation{op: op, path: p, path2: p2}, err) })
}

func (f *FS) writable() error {
	if f.c.opts.ReadOnly {
		return syscall.EROFS
	}
	return nil
}

func (f *FS) checkpoint(ctx context.Context, opts CheckpointOptions) (CheckpointInfo, error) {
	c := f.c
	if err := f.writable(); err != nil {
		return CheckpointInfo{}, fmt.Errorf("checkpoint: %w", err)
	}
	if opts.Name != "" {
		if err := sqlstore.ValidCheckpointName(opts.Name); err != nil {
			return CheckpointInfo{}, fmt.Errorf("checkpoint: %w", err)
		}
	}
	// Nothing changed since the newest checkpoint: it is this one's tree
	// too, so an exec after one that changed nothing (most of them only
	// read) costs no commit and no trip to the writer. The audit event
	// below links the exec to it.
	c.mu.Lock()
	ci, reused := c.lastCheckpoint, !c.closed && opts.Auto && opts.Name == "" && c.lastCheckpoint.ID != 0 && !c.sinceCheckpoint && c.dirty.treeEmpty()
	c.mu.Unlock()
	if reused {
		f.auditCkpt("checkpoint", "/", ckptPath(ci), nil)
		return ci, nil
	}
	err := c.onWriter(ctx, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return errClosed
		}
		// An automatic checkpoint is not synced: WAL order puts it before
		// every later commit, so whatever of the exec's changes survive a
		// crash, the checkpoint before them does too.
		return c.commitWith(false, !opts.Auto, func(b *sqlstore.Batch) error {
			var err error
			ci, err = c.store.CommitCheckpoint(context.WithoutCancel(ctx), b, sqlstore.NewCheckpoint(opts))
			return err
		}, func() {
			// Changes made while the commit ran wait in the dirty set,
			// which the reuse above checks.
			c.lastCheckpoint, c.sinceCheckpoint = ci, false
		})
	})
	f.auditCkpt("checkpoint", "/", ckptPath(ci), err)
	if err != nil {
		return CheckpointInfo{}, fmt.Errorf("checkpoint: %w", err)
	}
	return ci, nil
}

func (f *FS) deleteCheckpoint(ctx context.Context, ref string) error {
	c := f.c
	if err := f.writable(); err != nil {
		return fmt.Errorf("delete checkpoint: %w", err)
	}
	// Retention's deletes of automatic checkpoints need no sync of their
	// own (one lost in a crash is deleted again); an asked-for delete does.
	durable := true
	if ci, err := c.store.ResolveCheckpoint(ctx, ref); err == nil && ci.Auto {
		durable = false
	}
	var ci CheckpointInfo
	err := c.onWriter(ctx, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return errClosed
		}
		return c.commitWith(false, durable, func(b *sqlstore.Batch) error {
			var err error
			ci, err = c.store.CommitDeleteCheckpoint(context.WithoutCancel(ctx), b, ref)
			return err
		}, func() {
			if ci.ID == c.lastCheckpoint.ID {
				c.lastCheckpoint = CheckpointInfo{}
			}
		})
	})
	f.auditCkpt("checkpoint-delete", "/", "checkpoint:"+ref, err)
	if err != nil {
		return fmt.Errorf("delete checkpoint: %w", err)
	}
	return nil
}

// genOf resolves ref to its generation; "" is the live tree.
func (f *FS) genOf(ctx context.Context, ref string) (int64, error) {
	if ref == "" {
		return sqlstore.Live, nil
	}
	ci, err := f.c.store.ResolveCheckpoint(ctx, ref)
	if err != nil {
		return 0, err
	}
	return ci.Gen, nil
}

// diff is Diff restricted to the paths only (all when nil); hidden paths
// are left out unless all is set (the policy check of a restore needs them).
func (f *FS) diff(ctx context.Context, from, to string, only []string, all bool) ([]DiffEntry, error) {
	if from == "" {
		return nil, fmt.Errorf("diff: %w: no checkpoint to diff from", ErrBadCheckpointRef)
	}
	g1, err := f.genOf(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	g2, err := f.genOf(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	if g2 == sqlstore.Live {
		// The live tree is what returned before the call.
		if err := f.Flush(ctx); err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
	}
	changes, err := f.c.store.Diff(ctx, g1, g2)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	var roots []string
	for _, p := range only {
		roots = append(roots, Clean(p))
	}
	if only == nil {
		roots = nil
	}
	var out []DiffEntry
	for _, ch := range changes {
		if !all && f.c.rules.check(ch.Path, false) != nil || !under(ch.Path, roots) {
			continue
		}
		out = append(out, DiffEntry{Status: ch.Status, Path: ch.Path})
	}
	return out, nil
}

// under reports whether p is one of roots (clean paths) or below one; any
// p when roots is nil.
func under(p string, roots []string) bool {
	if roots == nil {
		return true
	}
	for _, r := range roots {
		if r == "/" || p == r || len(p) > len(r) && p[len(r)] == '/' && strings.HasPrefix(p, r) {
			return true
		}
	}
	return false
}

// checkedLocked commits what waits in RAM, so the store shows every change
// made so far, then runs ok (none: nothing to do). Called on the writer
// with c.mu held, which the caller keeps until its restore is done.
func (c *core) checkedLocked(ctx context.Context, ok func(context.Context) error) error {
	if ok == nil {
		return nil
	}
	if err := c.commitLocked(true, false); err != nil {
		return err
	}
	return ok(ctx)
}

func (f *FS) restore(ctx context.Context, ref string, paths []string, ok func(context.Context) error) error {
	c := f.c
	fail := func(err error) error {
		f.auditCkpt("restore", "/", "checkpoint:"+ref, err)
		return fmt.Errorf("restore %s: %w", ref, err)
	}
	if err := f.writable(); err != nil {
		return fail(err)
	}
	if paths != nil {
		return f.restorePaths(ctx, ref, paths, ok)
	}
	ci, err := f.prepareRestore(ctx, ref, nil)
	if err != nil {
		return fail(err)
	}
	var stale []Change
	err = c.onWriter(ctx, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return errClosed
		}
		if err := c.checkedLocked(ctx, ok); err != nil {
			return err
		}
		var res *sqlstore.RestoreResult
		return c.commitWith(true, true, func(b *sqlstore.Batch) error {
			var err error
			res, err = c.store.CommitRestore(context.WithoutCancel(ctx), b, strconv.FormatInt(ci.ID, 10), c.keepOpen, c.restoreQuota)
			return err
		}, func() { stale, c.sinceCheckpoint = c.applyRestore(res), true })
	})
	f.auditCkpt("restore", "/", ckptPath(ci), err)
	if err != nil {
		return fmt.Errorf("restore %s: %w", ref, err)
	}
	f.tellKernel(stale)
	return nil
}

// prepareRestore resolves ref and looks at what a restore of the paths
// only (all when nil) will change, to hold it to the policy and to have the
// kernel write back its dirty pages of those files first (after the
// restore they would land on the restored ones).
func (f *FS) prepareRestore(ctx context.Context, ref string, only []string) (CheckpointInfo, error) {
	ci, err := f.c.store.ResolveCheckpoint(ctx, ref)
	if err != nil {
		return CheckpointInfo{}, err
	}
	changes, err := f.diff(ctx, ref, "", only, true)
	if err != nil {
		return CheckpointInfo{}, err
	}
	if err := f.policyAllows(changes); err != nil {
		return CheckpointInfo{}, err
	}
	for _, ch := range changes {
		if ch.Status != 'A' {
			f.flushKernel(ch.Path, false)
		}
	}
	return ci, nil
}

// tellKernel passes a restore's changes to the mount.
func (f *FS) tellKernel(stale []Change) {
	c := f.c
	c.mu.Lock()
	inv := c.invalidate
	c.mu.Unlock()
	if inv != nil && !f.who.Kernel && len(stale) > 0 {
		inv(stale)
	}
}

// policyAllows refuses changes to paths the policy keeps from changing.
func (f *FS) policyAllows(changes []DiffEntry) error {
	var paths []string
	var first *refusal
	for _, ch := range changes {
		if r := f.c.rules.check(ch.Path, true); r != nil {
			first = cmp.Or(first, r)
			paths = append(paths, ch.Path)
		}
	}
	if first != nil {
		first.rule.count()
		return &RestoreRefusedError{Paths: paths}
	}
	return nil
}

// keepOpen picks, of the inodes a restore removes, those still open: they
// live on without names. Called with c.mu held.
func (c *core) keepOpen(gone []uint64) []uint64 {
	var keep []uint64
	for _, ino := range gone {
		if n := c.inodes[ino]; n != nil && n.open > 0 {
			keep = append(keep, ino)
		}
	}
	return keep
}

// restoreQuota refuses a restore that would take the live tree's data past
// the quota (one that shrinks it always goes ahead). Called with c.mu held.
func (c *core) restoreQuota(res *sqlstore.RestoreResult) error {
	q := c.opts.Policy.QuotaBytes
	if q <= 0 {
		return nil
	}
	// The store's totals include the batch committed with the restore:
	// they are what RAM will hold.
	if used := res.Totals.Bytes; used > q && used > c.used {
		RuleQuota.count()
		return fmt.Errorf("the restored tree holds %d bytes, over the quota of %d: %w", res.Totals.Bytes, q, syscall.ENOSPC)
	}
	return nil
}

// applyRestore brings the RAM copy in line with what a restore changed in
// the store and returns what the kernel must forget. Only what is in RAM is
// changed: the rest is read from the store, now the restored tree, when
// first needed. Called with c.mu held.
func (c *core) applyRestore(res *sqlstore.RestoreResult) []Change {
	// An inode read from the store from now on starts at a generation no
	// chunk cached for an earlier inode of the same number (or a read-ahead
	// still running for it) can have (adopt).
	c.restores++
	c.forgetLinkProt()
	// The restore committed the dirty set in its transaction: the store's
	// totals are the tree's.
	c.used, c.files = res.Totals.Bytes, res.Totals.Inodes
	var stale []Change
	touched := map[uint64]bool{}
	for _, r := range res.Inodes {
		c.nextIno = max(c.nextIno, r.Ino+1)
		n := c.inodes[r.Ino]
		if n == nil {
			continue
		}
		m := inodeFromRow(r)
		if n.mode != m.mode {
			// Written only when it changed: a handle reads its type bits
			// without the lock (an inode's type never changes).
			n.mode = m.mode
		}
		n.uid, n.gid, n.nlink, n.size = m.uid, m.gid, m.nlink, m.size
		n.atime, n.mtime, n.ctime, n.rdev, n.target = m.atime, m.mtime, m.ctime, m.rdev, m.target
		n.dataGen++
		touched[r.Ino] = true
	}
	for _, r := range res.Inodes {
		// A file the checkpoint saw unlinked but open is back with no name:
		// reclaimed now unless still open here, as at open.
		if n := c.inodes[r.Ino]; r.Nlink == 0 && r.Ino != rootIno && (n == nil || n.open == 0) {
			if n != nil {
				c.maybeDestroy(n)
				continue
			}
			c.files--
			if r.Mode&syscall.S_IFMT == syscall.S_IFREG {
				c.used -= r.Size
			}
			c.dirty.dead[r.Ino] = struct{}{}
		}
	}
	for _, ino := range res.ChunkInodes {
		if n := c.inodes[ino]; n != nil {
			n.dataGen++
			touched[ino] = true
		}
	}
	for _, ino := range res.XattrInodes {
		if n := c.inodes[ino]; n != nil {
			n.xattrs = nil
			touched[ino] = true
		}
	}
	for _, x := range res.Xattrs {
		if n := c.inodes[x.Ino]; n != nil {
			n.addXattr(x)
		}
	}
	kept := make(map[uint64]bool, len(res.ProtectedGone))
	for _, ino := range res.ProtectedGone {
		kept[ino] = true
	}
	for _, ino := range res.GoneInodes {
		n := c.inodes[ino]
		if n == nil {
			continue
		}
		n.dataGen++
		if kept[ino] {
			n.nlink = 0
			stale = append(stale, Change{Name: true, Ino: ino})
			continue
		}
		delete(c.inodes, ino)
	}
	// Names: those that went, then those now live (a directory's parent
	// link follows its one name), in the directories whose entries are in
	// RAM: the others are read from the store when needed.
	for _, d := range res.GoneDentries {
		p := c.inodes[d.Parent]
		if p == nil || p.children == nil {
			continue
		}
		old, ok := p.children[d.Name]
		if !ok {
			continue
		}
		p.removeChild(d.Name)
		stale = append(stale, Change{Path: path.Join(c.pathOf(p), d.Name), Name: true, Ino: old})
	}
	var elsewhere []sqlstore.Dentry
	for _, d := range res.Dentries {
		p := c.inodes[d.Parent]
		if p == nil || p.children == nil {
			elsewhere = append(elsewhere, d)
			continue
		}
		n, err := c.readInode(d.Ino)
		if n == nil {
			c.log.Error("restore: entry names an inode not in the store", "parent", d.Parent, "name", d.Name, "ino", d.Ino, "err", err)
			continue
		}
		p.addChild(d.Name, d.Ino)
		if n.isDir() {
			n.parent = p.ino
		}
	}
	// An inode in RAM named in a directory whose entries are not must be
	// found under that name: the directory is read, from the restored
	// store now that the directories in RAM are restored (it then holds
	// the entry).
	for _, d := range elsewhere {
		n := c.inodes[d.Ino]
		if n == nil {
			continue
		}
		p, err := c.dirAt(d.Parent)
		if err != nil {
			c.log.Error("restore: entry in a directory not found", "parent", d.Parent, "name", d.Name, "ino", d.Ino, "err", err)
			continue
		}
		if n.isDir() {
			n.parent = p.ino
		}
	}
	for _, d := range res.Dentries {
		if p := c.inodes[d.Parent]; p != nil && p.children != nil {
			stale = append(stale, Change{Path: path.Join(c.pathOf(p), d.Name), Name: true})
		}
	}
	for ino, d := range res.Names {
		if n := c.inodes[ino]; n != nil {
			n.hintParent, n.hintName = d.Parent, d.Name
		}
	}
	for ino := range touched {
		if n := c.inodes[ino]; n != nil && n.nlink > 0 {
			if p := c.pathOf(n); p != "" {
				stale = append(stale, Change{Path: p})
			}
		}
	}
	slices.SortStableFunc(stale, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return stale
}

func (f *FS) fork(ctx context.Context, ref, dst string) error {
	g, err := f.genOf(ctx, ref)
	if err == nil && g == sqlstore.Live && !f.c.opts.ReadOnly {
		// The live tree is what returned before the call.
		err = f.Flush(ctx)
	}
	if err == nil {
		err = f.c.store.Fork(ctx, g, dst)
	}
	f.auditCkpt("fork", "/", dst, err)
	if err != nil {
		return fmt.Errorf("fork to %s: %w", dst, err)
	}
	return nil
}

// restoreSet is one path of a RestorePaths as the checkpoint had it.
type restoreSet struct {
	root  string
	above []sqlstore.TreeEntry // the directories above root
	tree  []sqlstore.TreeEntry // root and below; nil: root did not exist
	data  map[uint64]map[int64][]byte
}

// restorePaths puts back the given paths as checkpoint ref had them: what
// is there now goes (as an unlink would take it), and the checkpoint's
// files come back as new inodes with its data, attributes and hard links
// among them, in one step under core.mu, so one commit holds all of it.
func (f *FS) restorePaths(ctx context.Context, ref string, paths []string, ok func(context.Context) error) error {
	c := f.c
	var roots []string
	for _, p := range paths {
		roots = append(roots, Clean(p))
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	roots = slices.DeleteFunc(roots, func(p string) bool {
		return slices.ContainsFunc(roots, func(r string) bool { return r != p && under(p, []string{r}) })
	})
	if slices.Contains(roots, "/") {
		return f.restore(ctx, ref, nil, ok)
	}
	fail := func(err error) error {
		for _, r := range roots {
			f.auditCkpt("restore", r, "checkpoint:"+ref, err)
		}
		return fmt.Errorf("restore %s of %s: %w", ref, strings.Join(roots, ", "), err)
	}
	ci, err := f.prepareRestore(ctx, ref, roots)
	if err != nil {
		return fail(err)
	}
	// The checkpoint's side is read without the lock: it never changes.
	trees, err := c.store.TreesAt(ctx, ci.Gen, roots)
	if err != nil {
		return fail(err)
	}
	sets := make([]restoreSet, len(roots))
	for i, r := range roots {
		sets[i] = restoreSet{root: r, above: trees[i].Above, tree: trees[i].Entries, data: trees[i].Data}
	}
	var stale []Change
	apply := func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return errClosed
		}
		if err := c.checkedLocked(ctx, ok); err != nil {
			return err
		}
		if err := c.restorableLocked(sets); err != nil {
			return err
		}
		for _, set := range sets {
			stale = append(stale, c.restoreSetLocked(f.who, set)...)
		}
		return nil
	}
	if ok != nil {
		err = c.onWriter(ctx, apply) // its commit must come from the writer
	} else {
		err = apply()
	}
	for _, r := range roots {
		f.auditCkpt("restore", r, ckptPath(ci), err)
	}
	if err != nil {
		return fmt.Errorf("restore %s of %s: %w", ref, strings.Join(roots, ", "), err)
	}
	f.tellKernel(stale)
	return nil
}

// restorableLocked refuses sets that cannot be put back whole: a live
// non-directory where the checkpoint had a directory above a path, or
// data past the quota. It reads from the store every directory the
// restore will change, so that restoreSetLocked finds them in RAM.
// Called with c.mu held.
func (c *core) restorableLocked(sets []restoreSet) error {
	var added, freed int64
	for _, set := range sets {
		parent, name, err := c.physicalParent(set.root)
		if err != nil {
			return err
		}
		if parent != nil {
			n := c.inodes[parent.children[name]]
			if n != nil && n.isRegular() && n.nlink == 1 {
				freed += n.size
			}
			if err := c.loadTree(n); err != nil {
				return err
			}
		}
		if set.tree == nil {
			continue
		}
		dir := c.inodes[sqlstore.Root]
		for _, a := range set.above {
			if err := c.loadDir(dir); err != nil {
				return err
			}
			n := c.inodes[dir.children[path.Base(a.Path)]]
			if n == nil {
				break // made by the restore
			}
			if !n.isDir() {
				return fmt.Errorf("%s is not a directory now: %w", a.Path, syscall.ENOTDIR)
			}
			dir = n
		}
		if err := c.loadDir(dir); err != nil {
			return err
		}
		seen := map[uint64]bool{}
		for _, e := range set.tree {
			if e.Inode.Mode&syscall.S_IFMT == syscall.S_IFREG && !seen[e.Inode.Ino] {
				seen[e.Inode.Ino] = true
				added += e.Inode.Size
			}
		}
	}
	if q := c.opts.Policy.QuotaBytes; q > 0 && added > freed && c.used+added-freed > q {
		RuleQuota.count()
		return fmt.Errorf("restoring %d bytes would pass the quota of %d: %w", added-freed, q, syscall.ENOSPC)
	}
	return nil
}

// restoreSetLocked replaces what is at set.root with the checkpoint's
// tree. Called with c.mu held, after restorableLocked.
func (c *core) restoreSetLocked(who Caller, set restoreSet) []Change {
	c.forgetLinkProt()
	t := now()
	var stale []Change
	// restorableLocked read every directory this changes: no store read
	// fails here.
	if parent, name, _ := c.physicalParent(set.root); parent != nil {
		if ino, ok := parent.children[name]; ok {
			c.removeTree(parent, name, t)
			stale = append(stale, Change{Path: set.root, Name: true, Ino: ino})
		}
	}
	if set.tree == nil {
		return stale
	}
	dir := c.inodes[sqlstore.Root]
	for _, a := range set.above {
		name := path.Base(a.Path)
		if ino, ok := dir.children[name]; ok {
			dir = c.inodes[ino]
			continue
		}
		if dir = c.restoreInode(who, dir, name, a, nil); dir == nil {
			return stale
		}
		stale = append(stale, Change{Path: a.Path, Name: true})
	}
	made := map[string]*inode{path.Dir(set.root): dir}
	byIno := map[uint64]*inode{}
	for _, e := range set.tree {
		parent, name := made[path.Dir(e.Path)], path.Base(e.Path)
		if parent == nil {
			continue // below a directory that could not be made
		}
		if n := byIno[e.Inode.Ino]; n != nil {
			// Another name of a hard-linked file.
			parent.addChild(name, n.ino)
			n.nlink++
			c.touchInode(n)
			c.touchInode(parent)
			c.touchDentry(parent.ino, name)
			continue
		}
		if n := c.restoreInode(who, parent, name, e, set.data[e.Inode.Ino]); n != nil {
			byIno[e.Inode.Ino] = n
			made[e.Path] = n
		}
	}
	return append(stale, Change{Path: set.root, Name: true})
}

// restoreInode makes a new inode named name in parent with a checkpoint
// entry's attributes, extended attributes and data. Called with c.mu held.
func (c *core) restoreInode(who Caller, parent *inode, name string, e sqlstore.TreeEntry, data map[int64][]byte) *inode {
	r := e.Inode
	n, err := c.newInode(who, parent, name, r.Mode, r.Rdev, r.Target)
	if err != nil {
		// restoreSetLocked removed the name and checked the parents.
		c.log.Error("restore: cannot make a path", "name", name, "err", err)
		return nil
	}
	n.uid, n.gid, n.atime, n.mtime, n.ctime = r.Uid, r.Gid, r.Atime, r.Mtime, r.Ctime
	for _, x := range e.Xattrs {
		if n.xattrs == nil {
			n.xattrs = make(map[string][]byte)
		}
		n.xattrs[x.Name] = x.Value
		c.dirty.xattrs[sqlstore.XattrKey{Ino: n.ino, Name: x.Name}] = struct{}{}
	}
	if n.isRegular() {
		n.size = r.Size
		c.used += r.Size
		for idx, d := range data {
			n.chunks = ensureChunks(n.chunks)
			n.chunks[idx] = &chunk{data: d}
			c.dirtyBytes += int64(cap(d))
		}
		if len(data) > 0 {
			c.dirty.chunked[n.ino] = struct{}{}
		}
	}
	return n
}

// physicalParent finds the directory holding p's last name without
// following any symlink (a restore puts back the path named, not what a
// link now leads to), its entries loaded; nil when there is none.
func (c *core) physicalParent(p string) (*inode, string, error) {
	dir := c.inodes[sqlstore.Root]
	names := strings.Split(strings.Trim(p, "/"), "/")
	for _, name := range names[:len(names)-1] {
		if err := c.loadDir(dir); err != nil {
			return nil, "", err
		}
		n := c.inodes[dir.children[name]]
		if n == nil || !n.isDir() {
			return nil, "", nil
		}
		dir = n
	}
	return dir, names[len(names)-1], c.loadDir(dir)
}

// loadTree reads the entries of directory n and of every one below it
// (nothing for another kind of file, or nil). Called with c.mu held.
func (c *core) loadTree(n *inode) error {
	if n == nil || !n.isDir() {
		return nil
	}
	if err := c.loadDir(n); err != nil {
		return err
	}
	for _, ino := range n.children {
		if err := c.loadTree(c.inodes[ino]); err != nil {
			return err
		}
	}
	return nil
}

// removeTree removes name from parent and, for a directory, everything
// below it first (loaded by loadTree). Called with c.mu held.
func (c *core) removeTree(parent *inode, name string, t int64) {
	n := c.inodes[parent.children[name]]
	if n != nil && n.isDir() {
		for _, child := range slices.Sorted(maps.Keys(n.children)) {
			c.removeTree(n, child, t)
		}
	}
	c.dropName(parent, name, t)
}
