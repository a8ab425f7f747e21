package replica

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// Opener is a host's Opener over its Dir with a replica: a workspace whose
// store is missing locally is restored from the replica on its first
// request, and a workspace's Close (hibernation, removal, shutdown)
// returns only once the replica holds everything it committed.
type Opener struct {
	Dir *host.Dir
	// Supervisor replicates Dir (StartDir); nil: restore only.
	Supervisor *Supervisor
	// Options name the host's replica: workspace ID is at
	// URL/ID/workspace.sqlfs, or URL/ID/gen-G/workspace.sqlfs under lease
	// generation G of a fleet.
	Options Options
	// SyncTimeout bounds the wait for the replica at Close. Default 1m.
	SyncTimeout time.Duration
	// S3 lists the replica; default NewS3Client(Options.URL,
	// Options.Credentials).
	S3 S3API
	// MaxRestores bounds the restores running at once; more wait their
	// turn. Default DefaultMaxRestores().
	MaxRestores int
	// RestoreNice is the niceness (nice(1)) of the restores' threads:
	// DefaultRestoreNice when 0, not niced when negative.
	RestoreNice int

	once   sync.Once
	bucket bucket
	known  *host.Known
	queue  *restoreQueue
	// seq numbers the restores' files: no restore or stage ever removes
	// or replaces another's, such as a copy an open took (takeStage)
	// while a new Prepare stages again.
	seq atomic.Uint64

	mu     sync.Mutex
	stages map[string]*stage // Prepare's restores, by workspace
}

// stage is a restore made ahead of a lease (Prepare): workspace id's
// replica restored into file while a holder seen dead still held its
// lease, to be taken up by the open that follows the lease's expiry if the
// replica has nothing newer by then.
type stage struct {
	turn   *turn              // its place among the restores
	cancel context.CancelFunc // ends the restore (its open gave up, or nobody took it)
	file   string
	done   chan struct{} // closed when the restore ended; then:
	from   int64         // the generation restored
	txid   uint64        // its newest transaction, which file holds
	err    error
}

// DefaultMaxRestores is Opener.MaxRestores' default: two per CPU. A
// restore is listings, downloads and decoding of the object store's LTX
// files, and the store's check. In process (TestFailover: 100 workspaces
// of 10 MiB, 2 CPUs, a local SeaweedFS, load 3-12), eight at once lost
// 24-43 of the 100 leases to late renewals, four at once none, and served
// all 100 sooner (0.38 s a restore against 1.4-3.7).
func DefaultMaxRestores() int { return 2 * runtime.NumCPU() }

// DefaultRestoreNice is Opener.RestoreNice's default: not niced. The
// restore runs in the host's own process, where a niced thread the
// kernel holds back keeps the Go scheduler's P it runs on from the
// host's other goroutines (lease renewals among them); the cap on
// restores (DefaultMaxRestores) is what leaves them the CPU.
const DefaultRestoreNice = 0

func (o *Opener) restoreNice() int {
	if o.RestoreNice == 0 {
		return DefaultRestoreNice
	}
	return max(o.RestoreNice, 0)
}

// WorkspaceURL is where a host's replica u keeps workspace id's store under
// lease generation gen (0: a host without a fleet).
func WorkspaceURL(u URL, id string, gen int64) URL {
	if gen == 0 {
		return u.Join(id, host.StoreName)
	}
	return u.Join(id, host.GenerationName(gen), host.StoreName)
}

// Open opens workspace id, restoring its store first when it has none
// locally and the replica has one. An id this host has no folder of costs
// no restore unless the replica lists it (Exists).
func (o *Opener) Open(ctx context.Context, id string) (host.Workspace, error) {
	if err := host.CheckID(id); err != nil {
		return nil, fmt.Errorf("%w: %w", host.ErrNotFound, err)
	}
	if ok, err := o.Exists(ctx, id); err != nil || !ok {
		return nil, cmp.Or(err, fmt.Errorf("%w: %s", host.ErrNotFound, id))
	}
	store := o.Dir.StorePath(id)
	parked := filepath.Join(filepath.Dir(store), host.ParkedName)
	if o.Supervisor != nil && exists(parked) && missingOrEmpty(store) {
		// Hibernated: back in the replicator's sight, which picks it up.
		// An empty file in its place is none of its data (see
		// host.RemoveEmptyStore).
		if _, err := host.RemoveEmptyStore(store, id, o.Options.Logger); err != nil {
			return nil, fmt.Errorf("workspace %s: %w", id, err)
		}
		// With the WAL the hibernation kept, litestream resumes where it
		// was instead of uploading the whole store again.
		kept, err := host.WakeStore(parked, store)
		if err != nil {
			return nil, fmt.Errorf("workspace %s: waking its store: %w", id, err)
		}
		o.Options.Logger.Debug("woke a store", "id", id, "wal_kept", kept)
	}
	ws, err := o.OpenGeneration(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	ws.(*synced).parked = parked
	return ws, nil
}

// Exists says whether workspace id exists: this host has its folder, or
// the replica holds objects of it (host.Known bounds the listings and
// lookups this costs).
func (o *Opener) Exists(ctx context.Context, id string) (bool, error) {
	if fi, err := os.Lstat(filepath.Join(o.Dir.Root(), id)); err == nil && fi.IsDir() {
		return true, nil
	}
	o.init()
	return o.known.Exists(ctx, id)
}

// Delete deletes every object of workspace id from the replica (the host
// holds it closed, and in a fleet under its lease).
func (o *Opener) Delete(ctx context.Context, id string) error {
	o.init()
	n, err := o.bucket.deleteAll(ctx, id)
	if err != nil {
		return err
	}
	o.known.Add(id, false)
	o.Options.Logger.Info("deleted workspace from the replica", "id", id, "objects", n)
	return nil
}

// OpenGeneration opens workspace id under lease generation gen, its store
// at Dir.GenerationStorePath(id, gen), which replicates to WorkspaceURL(id,
// gen): a store missing there is restored first from the newest generation
// below gen the replica holds anything of (any generation when gen is 0).
// A generation the replica holds nothing of (its holder died before its
// first upload) is passed over; any other failure is an error, never a
// reason to restore an older generation.
// An empty file at the store's path is no store (host.RemoveEmptyStore):
// removed, and the workspace restored in its place, or refused with
// ErrEmptyStore when nothing holds it, never started empty.
func (o *Opener) OpenGeneration(ctx context.Context, id string, gen int64) (host.Workspace, error) {
	if err := host.CheckID(id); err != nil {
		return nil, fmt.Errorf("%w: %w", host.ErrNotFound, err)
	}
	store := o.Dir.GenerationStorePath(id, gen)
	// An empty store file is none of the workspace's data, but a store
	// stood there: never one to start anew over.
	leftover, err := host.RemoveEmptyStore(store, id, o.Options.Logger)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", id, err)
	}
	if _, err := os.Lstat(store); errors.Is(err, fs.ErrNotExist) {
		err := o.restore(ctx, id, gen, store)
		if errors.Is(err, ErrNoReplica) && gen > 0 {
			err = o.unreplicated(ctx, id, gen, store)
		}
		if errors.Is(err, ErrNoReplica) && gen == 0 {
			err = o.untraced(ctx, id, err)
		}
		if errors.Is(err, ErrNoReplica) && leftover {
			err = fmt.Errorf("%w %s, and the replica holds nothing of it: not started empty", ErrEmptyStore, store)
		}
		if err != nil && !errors.Is(err, ErrNoReplica) {
			return nil, fmt.Errorf("workspace %s: %w", id, err)
		}
	}
	ws, err := o.Dir.OpenGeneration(ctx, id, gen)
	if err != nil {
		// The caller moves the store away next (a fleet parks it).
		o.release(ctx, store)
		return nil, err
	}
	if o.Supervisor != nil {
		// In sight: old in the sync age until the replica holds it.
		o.Supervisor.expect(store)
	}
	return &synced{Workspace: ws, o: o, id: id, store: store, gen: gen}, nil
}

// ErrEmptyStore: an empty file (0 bytes) stood where a workspace's store
// was, and neither the replica nor a local copy holds the workspace.
var ErrEmptyStore = errors.New("an empty file stood in place of the store")

func exists(file string) bool {
	_, err := os.Lstat(file)
	return err == nil
}

// missingOrEmpty says whether file is missing or an empty file.
func missingOrEmpty(file string) bool {
	fi, err := os.Lstat(file)
	return errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode().IsRegular() && fi.Size() == 0
}

// ErrNotRestorable: the replica lists objects of a workspace this host
// has no store of, but nothing of it a restore can use.
var ErrNotRestorable = errors.New("the replica lists the workspace but holds nothing restorable of it")

// untraced settles the open of workspace id by a host without a fleet,
// or under a fleet's first lease generation, when its restore found
// nothing restorable (noReplica): a new workspace only when the replica
// lists nothing of it, else refused with ErrNotRestorable, naming what it
// lists, never started empty over it (no longer ErrNoReplica, which
// OpenGeneration starts anew on). An operator clears the way with DELETE
// of the workspace (every object under it), having restored what they
// want to keep (restore --workspace reads every generation).
func (o *Opener) untraced(ctx context.Context, id string, noReplica error) error {
	names, err := o.bucket.children(ctx, id+"/")
	if err != nil {
		return fmt.Errorf("nothing restorable, and listing what the replica holds of it: %w", err)
	}
	if len(names) == 0 {
		return noReplica
	}
	const shown = 10
	list := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		list += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return fmt.Errorf("%w: %s/ lists %s (%v); not started empty (sqlfs-exec restore --workspace keeps what it holds; DELETE of the workspace clears it)", ErrNotRestorable, o.Options.URL.Join(id).Redacted(), list, noReplica)
}

// ErrUnreplicated: a workspace that earlier lease generations served has
// nothing in the replica, and this host no copy of it: what it held, if
// anything, is only on the disk of a host that served it.
var ErrUnreplicated = errors.New("the replica holds nothing of a workspace other hosts served")

// unreplicated settles a fleet's open of workspace id under generation
// gen when the replica holds nothing of it: nothing may silently replace
// data with an empty store. A local copy another host's generation set
// aside (host.StaleName) is then the newest state anyone has: it is
// served, and replicates from now on. Without one, generation 1 is a new
// workspace only when the replica has no trace of it (untraced): objects
// there nothing could restore from (unreadable, or of generations at or
// above the lease's, whose lease records were lost) are someone's data,
// and an empty store replicating over them hides it, or, on a path that
// holds another holder's transactions, corrupts the replica: refused
// (ErrNotRestorable), naming them. A later generation had holders whose
// data never reached the replica: refused (ErrUnreplicated) until one of
// them, started again, serves it from its copy, or the workspace is
// deleted.
func (o *Opener) unreplicated(ctx context.Context, id string, gen int64, store string) error {
	stale := filepath.Join(o.Dir.Root(), id, host.StaleName)
	if _, err := host.RemoveEmptyStore(stale, id, o.Options.Logger); err != nil {
		return err
	}
	if _, err := os.Lstat(stale); err == nil {
		if err := os.MkdirAll(filepath.Dir(store), 0o700); err != nil {
			return err
		}
		if err := host.MoveStore(stale, store); err != nil {
			return fmt.Errorf("taking up the local copy: %w", err)
		}
		metrics.ReplicaRestores.WithLabelValues("local").Inc()
		o.Options.Logger.Warn("the replica holds nothing of a workspace another host served since: serving this host's older copy, the newest state anyone has", "id", id, "generation", gen, "store", store)
		return nil
	}
	if gen == 1 {
		return o.untraced(ctx, id, ErrNoReplica) // a new workspace, or refused
	}
	return fmt.Errorf("%w (generations 1 to %d): its data, if any, is on the disk of a host that served it, which serves it again once started; or DELETE the workspace", ErrUnreplicated, gen-1)
}

// Prune deletes the replicas of workspace id's generations below path
// (the one its holder, this host, replicates to) that no restore within
// the retention can need: those older than a newer generation whose
// oldest object is past the retention (that one restores every second of
// the window). The current generation and those above it are never
// touched. It says how many generations it deleted.
func (o *Opener) Prune(ctx context.Context, id string, path int64) (int, error) {
	o.init()
	gens, err := o.bucket.generations(ctx, id)
	if err != nil {
		return 0, err
	}
	// Newest first: those above path lead. Nothing older, nothing to list
	// (a long-lived generation holds many objects).
	if i := slices.IndexFunc(gens, func(g int64) bool { return g <= path }); i < 0 || i == len(gens)-1 {
		return 0, nil
	}
	cutoff := time.Now().Add(-cmp.Or(o.Options.Retention, DefaultRetention))
	covered, pruned := false, 0
	for _, g := range gens { // newest first
		switch {
		case g > path:
		case covered && g < path:
			if _, err := o.bucket.deleteUnder(ctx, genPath(id, g)); err != nil {
				return pruned, err
			}
			pruned++
		default:
			t, err := o.bucket.oldest(ctx, genPath(id, g))
			if err != nil {
				return pruned, err
			}
			covered = !t.IsZero() && t.Before(cutoff)
		}
	}
	if pruned > 0 {
		o.Options.Logger.Info("pruned old generations from the replica", "id", id, "generation", path, "pruned", pruned)
	}
	return pruned, nil
}

func (o *Opener) init() {
	o.once.Do(func() {
		if o.S3 == nil {
			o.S3 = NewS3Client(o.Options.URL, o.Options.Credentials)
		}
		o.bucket = newBucket(o.S3, o.Options.URL)
		o.queue = newRestoreQueue(cmp.Or(o.MaxRestores, DefaultMaxRestores()))
		o.stages = map[string]*stage{}
		// Restores' files left by an earlier process; none of this one's
		// exists before init.
		if err := os.RemoveAll(o.restoreDir()); err != nil {
			cmp.Or(o.Options.Logger, slog.Default()).Warn("removing the files of earlier restores failed", "dir", o.restoreDir(), "err", err)
		}
		o.known = &host.Known{List: o.bucket.ids, Lookup: func(ctx context.Context, id string) (bool, error) {
			gens, err := o.bucket.generations(ctx, id)
			return len(gens) > 0, err
		}}
	})
}

// restore brings workspace id's store from the replica into place,
// making its folder when the host has none: the copy Prepare staged when
// it is still current, else a restore now. The host opens one id at a
// time, so no two restores of one id race.
func (o *Opener) restore(ctx context.Context, id string, gen int64, store string) error {
	o.init()
	below := gen
	if gen == 0 {
		below = math.MaxInt64
	}
	tmp, from, err := o.takeStage(ctx, id, below)
	if err != nil {
		return err
	}
	if tmp == "" {
		release, err := o.queue.wait(ctx, newTurn(true))
		if err != nil {
			return err
		}
		defer release()
		if tmp, err = o.tmpFile(id, "sqlfs"); err != nil {
			return err
		}
		ro := o.Options
		ro.nice = o.restoreNice()
		if from, err = restoreNewest(ctx, o.bucket, ro, id, below, tmp, time.Time{}); err != nil {
			return err
		}
	}
	defer os.Remove(tmp)
	if _, err := os.Lstat(filepath.Join(o.Dir.Root(), id)); errors.Is(err, fs.ErrNotExist) {
		if err := o.Dir.Create(id, nil); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(store), 0o700); err != nil {
		return err
	}
	// On disk before it has its name, and the name after: a crash must
	// not leave the name on an empty or partial file (ext4 allocates a
	// new file's blocks late).
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("restore into place: %w", err)
	}
	// A WAL at the store's name is another store's (one moved or lost
	// without it): SQLite would replay its frames over the restored
	// pages, a corrupt store. Gone before the name is taken, and its
	// shared-memory index with it.
	for _, side := range []string{"-wal", "-shm"} {
		if err := os.Remove(store + side); err == nil {
			o.Options.Logger.Warn("removed a leftover file at a restored store's name", "id", id, "file", store+side)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("restore into place: %w", err)
		}
	}
	if err := os.Link(tmp, store); err != nil {
		return fmt.Errorf("restore into place: %w", err)
	}
	if err := syncFile(filepath.Dir(store)); err != nil {
		return fmt.Errorf("restore into place: %w", err)
	}
	o.Options.Logger.Info("restored workspace from the replica", "id", id, "generation", gen, "from_generation", from, "replica", o.Options.URL.Redacted())
	return nil
}

// syncFile flushes the file or directory at path to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// restoreDir holds the restores' files, beside DIR's workspaces (one
// filesystem, so the move into place is a link), under a name no
// workspace can have.
func (o *Opener) restoreDir() string { return filepath.Join(o.Dir.Root(), ".restore") }

// tmpFile is a new name for a restore of workspace id in restoreDir:
// ID.N.SUFFIX, N never used before by this Opener (init emptied the
// directory).
func (o *Opener) tmpFile(id, suffix string) (string, error) {
	if err := os.MkdirAll(o.restoreDir(), 0o700); err != nil {
		return "", err
	}
	return filepath.Join(o.restoreDir(), id+"."+strconv.FormatUint(o.seq.Add(1), 10)+"."+suffix), nil
}

// Prepare restores workspace id, whose lease generation gen is held by a
// host seen dead (forwarding to it failed), into a staging copy while
// the lease runs out, so that the restore overlaps the lease's TTL
// instead of following it. It returns at once; the restore takes its
// turn among the others (MaxRestores). The open after this host takes
// the lease uses the copy only if the replica's newest generation below
// the one taken is still the one staged and holds no transaction past
// the staged copy's (the holder was not dead, or shipped more before it
// died); else it restores again. A copy not taken up by until is
// deleted. A request waits for this restore: it goes before every
// restore PrepareLater queued.
func (o *Opener) Prepare(id string, gen int64, until time.Time) { o.prepare(id, gen, until, true) }

// PrepareLater is Prepare for a workspace nobody asked for yet, of a
// holder seen dead while another of its workspaces was asked for: its
// restore waits behind every restore a request waits for, until one
// comes to wait for it too (Prepare, or the open after the lease).
func (o *Opener) PrepareLater(id string, gen int64, until time.Time) {
	o.prepare(id, gen, until, false)
}

func (o *Opener) prepare(id string, gen int64, until time.Time, asked bool) {
	if host.CheckID(id) != nil {
		return
	}
	o.init()
	o.mu.Lock()
	defer o.mu.Unlock()
	if s := o.stages[id]; s != nil {
		// One at a time: the open checks it is current.
		if asked {
			o.queue.promote(s.turn)
		}
		return
	}
	// Until bounds only a stage nobody took: one an open took (takeStage)
	// is the open's, which waits for it, however long its turn takes.
	ctx, cancel := context.WithCancel(context.Background())
	s := &stage{turn: newTurn(asked), done: make(chan struct{}), cancel: cancel}
	o.stages[id] = s
	go func() {
		s.from, s.txid, s.file, s.err = o.stageRestore(ctx, id, gen+1, s.turn)
		close(s.done)
		if s.err != nil && ctx.Err() == nil {
			o.Options.Logger.Warn("restoring a workspace ahead of its lease failed; its open restores it", "id", id, "generation", gen, "err", s.err)
		}
	}()
	time.AfterFunc(time.Until(until), func() {
		o.mu.Lock()
		unused := o.stages[id] == s
		if unused {
			delete(o.stages, id)
		}
		o.mu.Unlock()
		if !unused {
			return
		}
		cancel()
		<-s.done
		metrics.ReplicaStaged.WithLabelValues("unused").Inc()
		os.Remove(s.file)
	})
}

// stageRestore is Prepare's restore of workspace id's newest generation
// below below, exactly to its newest transaction, into a staging file.
func (o *Opener) stageRestore(ctx context.Context, id string, below int64, t *turn) (gen int64, txid uint64, file string, err error) {
	release, err := o.queue.wait(ctx, t)
	if err != nil {
		return 0, 0, "", err
	}
	defer release()
	if gen, txid, err = o.newestGeneration(ctx, id, below); err != nil {
		return 0, 0, "", err
	}
	if file, err = o.tmpFile(id, "staged.sqlfs"); err != nil {
		return 0, 0, "", err
	}
	ro := o.Options
	ro.nice = o.restoreNice()
	ro.URL = WorkspaceURL(o.Options.URL, id, gen)
	ro.txid = txid
	ro.client = o.S3
	return gen, txid, file, Restore(ctx, ro, file, time.Time{})
}

// newestGeneration is the newest generation of workspace id below below
// whose replica holds any transaction, and its newest.
func (o *Opener) newestGeneration(ctx context.Context, id string, below int64) (gen int64, txid uint64, err error) {
	gens, err := o.bucket.generations(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	for _, g := range gens {
		if g >= below {
			continue
		}
		if txid, err = o.bucket.newestTXID(ctx, id, g); err != nil || txid > 0 {
			return g, txid, err
		}
	}
	return 0, 0, fmt.Errorf("%s: %w", WorkspaceURL(o.Options.URL, id, 0).Redacted(), ErrNoReplica)
}

// takeStage takes workspace id's staged copy, waiting for its restore to
// end, and returns its file (the caller's to remove) and generation when
// it is current: the replica's newest generation below below is the one
// staged, at the staged transaction. Otherwise file is "" and the caller
// restores.
func (o *Opener) takeStage(ctx context.Context, id string, below int64) (file string, from int64, err error) {
	o.mu.Lock()
	s := o.stages[id]
	delete(o.stages, id)
	o.mu.Unlock()
	if s == nil {
		return "", 0, nil
	}
	defer s.cancel()
	o.queue.promote(s.turn)
	select {
	case <-s.done:
	case <-ctx.Done():
		go func() {
			<-s.done
			os.Remove(s.file)
		}()
		return "", 0, fmt.Errorf("waiting for the restore made ahead of the lease: %w", ctx.Err())
	}
	if s.err != nil {
		metrics.ReplicaStaged.WithLabelValues("failed").Inc()
		o.Options.Logger.Info("the restore made ahead of the lease failed: restoring again", "id", id, "err", s.err)
		os.Remove(s.file)
		return "", 0, nil
	}
	gen, txid, err := o.newestGeneration(ctx, id, below)
	if err != nil || gen != s.from || txid != s.txid {
		metrics.ReplicaStaged.WithLabelValues("behind").Inc()
		o.Options.Logger.Info("the replica moved on since the restore made ahead of the lease: restoring again", "id", id,
			"staged_generation", s.from, "staged_txid", formatTXID(s.txid), "generation", gen, "txid", formatTXID(txid), "err", err)
		os.Remove(s.file)
		return "", 0, nil
	}
	metrics.ReplicaStaged.WithLabelValues("used").Inc()
	return s.file, s.from, nil
}

// RestoreWorkspace restores workspace id of the host replica o.URL, as it
// was at the second at (zero: the latest), to the new file out: from the
// newest lease generation that holds it then.
func RestoreWorkspace(ctx context.Context, o Options, id string, out string, at time.Time) error {
	if err := host.CheckID(id); err != nil {
		return err
	}
	if o.URL.u == nil {
		return fmt.Errorf("%w: none given", ErrBadURL)
	}
	_, err := restoreNewest(ctx, newBucket(NewS3Client(o.URL, o.Credentials), o.URL), o, id, math.MaxInt64, out, at)
	return err
}

// restoreNewest restores workspace id from the newest generation below
// below that holds it at at (zero: the latest) into out, and says which.
// Only an empty generation, or one begun after at, is passed over.
func restoreNewest(ctx context.Context, b bucket, o Options, id string, below int64, out string, at time.Time) (int64, error) {
	gens, err := b.generations(ctx, id)
	if err != nil {
		return 0, err
	}
	last := fmt.Errorf("%s: %w", WorkspaceURL(o.URL, id, 0).Redacted(), ErrNoReplica)
	for _, g := range gens {
		if g >= below {
			continue
		}
		ro := o
		ro.URL = WorkspaceURL(o.URL, id, g)
		ro.client = b.client
		err := Restore(ctx, ro, out, at)
		if err == nil {
			return g, nil
		}
		if !errors.Is(err, ErrNoReplica) && !errors.Is(err, ErrTooEarly) {
			return 0, err
		}
		if !errors.Is(last, ErrTooEarly) {
			last = err
		}
	}
	return 0, last
}

// synced is an open workspace whose Close waits for the replica.
type synced struct {
	host.Workspace
	o     *Opener
	id    string
	store string
	gen   int64 // the lease generation whose path it replicates to
	// parked, when set, is where the store rests while hibernated: out of
	// the replicator's sight, so that a hibernated workspace costs
	// litestream nothing (a fleet parks its own).
	parked string
}

// Tools is the workspace's tool service (the host forks through it).
func (s *synced) Tools() *tools.Service {
	if t, ok := s.Workspace.(interface{ Tools() *tools.Service }); ok {
		return t.Tools()
	}
	return nil
}

func (s *synced) Close(ctx context.Context) error {
	if s.parked != "" && s.o.Supervisor != nil {
		s.attach(ctx)
	}
	err := s.Workspace.Close(ctx)
	// The close's own context bounds waiting for execs, which may have
	// used it up: the replica gets a time of its own.
	return errors.Join(err, s.SyncReplica(context.WithoutCancel(ctx)))
}

// attachTimeout bounds attach's wait for litestream.
const attachTimeout = 10 * time.Second

// attach waits for litestream to hold the store (its directory watch
// takes up a woken store 250 ms after the rename at the earliest) before
// the workspace closes: the store's close, were it the last connection,
// would fold the WAL and cut it to nothing, and litestream, finding no
// WAL to resume from, would upload the whole store again. A wait that
// fails is the final sync's to report.
func (s *synced) attach(ctx context.Context) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), attachTimeout)
	defer cancel()
	if err := s.o.Supervisor.Sync(actx, s.store); err != nil {
		s.o.Options.Logger.Debug("litestream did not take up a woken store before its close", "store", s.store, "err", err)
	}
}

// SyncReplica returns once the replica holds everything the closed
// workspace committed (within SyncTimeout), then takes its store out of
// litestream's sight: Close's final replication, which a fleet tries
// again while it failed. A sync that failed leaves the store in sight,
// for litestream to ship when it can.
func (s *synced) SyncReplica(ctx context.Context) error {
	if s.o.Supervisor == nil {
		return nil
	}
	wait := s.o.SyncTimeout
	if wait <= 0 {
		wait = time.Minute
	}
	sctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := s.o.Supervisor.Sync(sctx, s.store); err != nil {
		return err
	}
	// Synced, the store leaves litestream's sight next (parked here, or by
	// the fleet): litestream lets go of it while it is still in place.
	// Meeting it renamed, litestream fails to close it ("disk I/O error")
	// and lists it still, for a while, to a final sync that then fails.
	rerr := s.o.Supervisor.Release(sctx, s.store)
	if rerr != nil {
		s.o.Options.Logger.Warn("litestream did not release a closed store; it will when the store leaves its sight", "store", s.store, "err", rerr)
	}
	if s.gen > 0 {
		// Still under the lease (a fleet releases it after this close),
		// with the replica of its own generation complete.
		if _, perr := s.o.Prune(sctx, s.id, s.gen); perr != nil {
			s.o.Options.Logger.Warn("pruning old generations failed; the next close tries again", "store", s.store, "err", perr)
		}
	}
	if s.parked == "" {
		return nil
	}
	if rerr != nil {
		// Litestream may still write to the store's WAL: none kept.
		return host.MoveStore(s.store, s.parked)
	}
	_, err := host.ParkStore(s.store, s.parked)
	return err
}

// CloseFenced closes the workspace without waiting for the replica: its
// holder lost the lease, and what it ships now lands in its own
// generation's path, which the next holder's restores no longer read.
// Litestream lets go of the store all the same before the fleet parks it.
func (s *synced) CloseFenced(ctx context.Context) error {
	err := s.Workspace.Close(ctx)
	s.o.release(ctx, s.store)
	return err
}

// releaseTimeout bounds release's wait for litestream.
const releaseTimeout = 10 * time.Second

// release has litestream let go of store, unsynced, before it moves out
// of its sight: litestream reopening a store's name after the store moved
// away has SQLite make an empty file there (see host.RemoveEmptyStore),
// which it would then replicate. A store litestream does not hold is
// nothing to release.
func (o *Opener) release(ctx context.Context, store string) {
	if o.Supervisor == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := o.Supervisor.Release(rctx, store); err != nil {
		o.Options.Logger.Debug("litestream did not release a store leaving its sight", "store", store, "err", err)
	}
}
