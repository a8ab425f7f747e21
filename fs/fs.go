package fs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// Options tune an open filesystem.
type Options struct {
	ReadOnly bool
	// CommitInterval bounds how long a change waits for its commit, and so
	// how much un-fsynced work a crash can lose. Default 1s.
	CommitInterval time.Duration
	// DirtyLimit is how much file data may wait in RAM for the store
	// before writers wait for a commit. Default 256 MiB.
	DirtyLimit int64
	// Socket is the control socket advertised to a second opener.
	Socket string
	// ChunkSize applies when the store is created.
	ChunkSize int
	// AuditRetention bounds the audit trail; nil keeps the store's default.
	AuditRetention *sqlstore.AuditRetention
	// ExternalWALCheckpoints leaves SQLite's WAL checkpoints to Litestream
	// (sqlstore.Options.ExternalWALCheckpoints): set when replicating.
	ExternalWALCheckpoints bool
	Policy                 Policy
	// NoAudit turns off the audit trail (benchmarks of the bare data path).
	NoAudit bool
	// Uid and Gid own what callers of the Go API create (the FUSE adapter
	// passes each request's own). Sidecars set the agent's user here, so a
	// container running as that user can change what the shell made.
	Uid, Gid uint32
	Logger   *slog.Logger
}

func (o *Options) defaults() {
	if o.CommitInterval <= 0 {
		o.CommitInterval = time.Second
	}
	if o.DirtyLimit <= 0 {
		o.DirtyLimit = 256 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Caller is who a change is made by: the owner of new files and the actor
// the audit trail names.
type Caller struct {
	Uid, Gid uint32
	Actor    string
	// Kernel marks calls that arrive through the FUSE mount; the kernel
	// already knows of those changes, so they are not sent back to it.
	Kernel bool
}

// FS is a view of an open filesystem acting for one Caller. Views are cheap
// and share everything else.
type FS struct {
	c   *core
	who Caller
}

// WithActor returns a view whose changes are audited as done by actor.
func (f *FS) WithActor(actor string) *FS {
	who := f.who
	who.Actor = actor
	return &FS{c: f.c, who: who}
}

// As returns a view acting for who.
func (f *FS) As(who Caller) *FS { return &FS{c: f.c, who: who} }

// Store is the underlying store (for its audit queries and checks).
func (f *FS) Store() *sqlstore.Store { return f.c.store }

// core is the state shared by all views.
type core struct {
	store     *sqlstore.Store
	opts      Options
	rules     rules // opts.Policy's globs, compiled
	chunkSize int64
	log       *slog.Logger

	mu      sync.Mutex
	inodes  map[uint64]*inode
	nextIno uint64
	used    int64 // bytes of regular file data (sum of sizes)
	files   int64 // inodes, in RAM or not (the store's totals after each commit)
	handles int

	dirty      dirtySet
	dirtyBytes int64 // chunk bytes waiting in RAM
	clean      cleanCache
	room       *sync.Cond
	storeErr   error // last commit's error, reported until a commit succeeds
	unsynced   bool  // a commit since the last synced one was not synced
	committing bool  // a commit's batch is being written, c.mu let go meanwhile

	invalidate func([]Change)   // tells the kernel of changes made elsewhere
	flush      func(ino uint64) // has the kernel write back an inode's dirty pages

	syncReq chan syncRequest
	jobs    chan writerJob
	// lastCheckpoint is the newest checkpoint this core took (zero until
	// one), and sinceCheckpoint whether a commit has changed the tree
	// since: an automatic checkpoint with nothing changed is that one.
	lastCheckpoint  CheckpointInfo
	sinceCheckpoint bool
	// restores counts restores, to start the data generation of inodes
	// they rebuild past any an earlier inode of that number had.
	restores uint64
	// linked is what protects each file with several names whose
	// protection was asked for (linkProtOf), by inode.
	linked  map[uint64]linkProt
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	closed  bool
	changed chan struct{} // closed at the next audit event (Changed)
}

// locked runs fn with c.mu held and lets it go however fn ends: a panic
// in the core while it holds c.mu (a bug, a caller's callback) must not
// leave every later request waiting, once the caller's recover (the
// tools') has taken it. Every entry point holds c.mu so, or by defer.
func (c *core) locked(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fn()
}

// Open opens (creating if missing) the store at path. Its metadata is
// read into RAM as it is first needed.
func Open(ctx context.Context, path string, opts Options) (*FS, error) {
	st, err := sqlstore.Open(ctx, path, sqlstore.Options{
		Socket: opts.Socket, ChunkSize: opts.ChunkSize, AuditRetention: opts.AuditRetention,
		ExternalWALCheckpoints: opts.ExternalWALCheckpoints,
	})
	if err != nil {
		return nil, err
	}
	f, err := New(ctx, st, opts)
	if err != nil {
		st.Close()
		return nil, err
	}
	return f, nil
}

// New serves an already open store; Close closes it.
func New(ctx context.Context, st *sqlstore.Store, opts Options) (*FS, error) {
	opts.defaults()
	c := &core{
		store:     st,
		opts:      opts,
		rules:     compileRules(opts.Policy),
		chunkSize: int64(st.ChunkSize()),
		log:       opts.Logger,
		inodes:    make(map[uint64]*inode),
		dirty:     newDirtySet(),
		// What an earlier owner committed may not be synced yet: the
		// first Sync syncs whatever it finds.
		unsynced: true,
		syncReq:  make(chan syncRequest),
		jobs:     make(chan writerJob),
		kick:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	c.room = sync.NewCond(&c.mu)
	if err := c.load(ctx); err != nil {
		return nil, err
	}
	go c.run()
	return &FS{c: c, who: Caller{Uid: opts.Uid, Gid: opts.Gid}}, nil
}

// load reads what serving the store needs first: the root, the totals
// and the inodes left without a name. Everything else is read when first
// needed (lazy.go), so opening costs the same whatever the tree holds.
func (c *core) load(ctx context.Context) error {
	st, err := c.store.OpenState(ctx)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	root := c.adopt(st.Root)
	for _, x := range st.RootXattrs {
		root.addXattr(x)
	}
	root.parent = sqlstore.Root
	c.nextIno = st.MaxIno + 1
	c.files, c.used = st.Totals.Inodes, st.Totals.Bytes
	for _, r := range st.Unlinked {
		// Unlinked while open when the last owner stopped: not part of the
		// tree, and reclaimed by the first commit.
		c.files--
		if r.Mode&syscall.S_IFMT == syscall.S_IFREG {
			c.used -= r.Size
		}
		if !c.opts.ReadOnly {
			c.dirty.dead[r.Ino] = struct{}{}
		}
	}
	if n := len(st.Unlinked); n > 0 && !c.opts.ReadOnly {
		c.log.Info("reclaiming files unlinked while open", "count", n)
	}
	return nil
}

// Close commits everything durably and closes the store. Open handles are
// abandoned: unlinked files they kept alive are reclaimed at the next open.
func (f *FS) Close() error {
	c := f.c
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.signalChanged()
	c.mu.Unlock()
	close(c.stop)
	<-c.done
	c.mu.Lock()
	err := c.storeErr
	c.mu.Unlock()
	if cerr := c.store.Close(); err == nil {
		err = cerr
	}
	return err
}

// errClosed refuses a change after Close began: its final commit may
// already have taken its snapshot, so the change would never be stored.
var errClosed = fmt.Errorf("file system is closed: %w", syscall.EIO)

// Sync returns once everything done so far is durable.
func (f *FS) Sync(ctx context.Context) error { return f.commitNow(ctx, true) }

// Unflushed reports whether audit events of actor, other than those of
// the ops in except, may not have reached the store yet (they wait in RAM,
// or in a commit being written): a Flush first makes the store's audit
// trail show them.
func (f *FS) Unflushed(actor string, except map[string]bool) bool {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.committing {
		return true
	}
	for _, e := range c.dirty.audit {
		if e.Actor == actor && !except[e.Op] {
			return true
		}
	}
	return false
}

// Flush returns once everything done so far is committed, without waiting
// for the disk: enough for the audit trail to show it to store queries.
func (f *FS) Flush(ctx context.Context) error { return f.commitNow(ctx, false) }

type syncRequest struct {
	durable bool
	reply   chan error
}

func (f *FS) commitNow(ctx context.Context, durable bool) error {
	if f.c.opts.ReadOnly {
		return nil
	}
	req := syncRequest{durable: durable, reply: make(chan error, 1)}
	select {
	case f.c.syncReq <- req:
	case <-f.c.done:
		return fmt.Errorf("sync: %w", syscall.EIO)
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-req.reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SetInvalidator registers fn to hear of every change made by a caller
// other than the kernel, so a mount can drop what the kernel cached. fn is
// called outside every lock and must not block for long.
func (f *FS) SetInvalidator(fn func([]Change)) {
	f.c.mu.Lock()
	f.c.invalidate = fn
	f.c.mu.Unlock()
}

// Usage is how much the filesystem holds.
type Usage struct {
	Inodes int64
	Bytes  int64
	Open   int
}

// Usage reports the current counts.
func (f *FS) Usage() Usage {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	return Usage{Inodes: f.c.files, Bytes: f.c.used, Open: f.c.handles}
}

// ChunkSize is the store's data chunk size.
func (f *FS) ChunkSize() int64 { return f.c.chunkSize }

// errnoName is how the audit trail writes a result: "ok" or the errno's name.
func errnoName(err error) string {
	if err == nil {
		return "ok"
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return metrics.ErrnoName(int(e))
	}
	return "EIO"
}
