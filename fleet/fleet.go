package fleet

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// DefaultTTL is a lease's life without renewal: a dead host's workspaces
// move after at most this long.
const DefaultTTL = 15 * time.Second

// markerName is the file in DIR/ID holding the generation of the lease
// under which this host last served the workspace, and the generation
// whose path its copy replicates to (see Opener).
const markerName = ".fleet-generation"

// Opener opens a workspace of DIR with its store in the folder of a lease
// generation, host.Dir.GenerationStorePath(id, gen), which the replica
// mirrors: a store missing there is restored from the newest generation
// below gen the replica holds. replica.Opener is one; a *host.Dir is one
// without a replica.
type Opener interface {
	OpenGeneration(ctx context.Context, id string, gen int64) (host.Workspace, error)
}

// fencedCloser is a workspace that closes without its final replication
// (replica.Opener's): its holder lost the lease.
type fencedCloser interface {
	CloseFenced(ctx context.Context) error
}

// replicaSyncer is a closed workspace whose final replication can be
// tried again after its Close failed to (replica.Opener's).
type replicaSyncer interface {
	SyncReplica(ctx context.Context) error
}

// preparer restores a workspace ahead of its lease (replica.Opener's
// Prepare): its holder, lease generation gen, was seen dead, and the
// copy is worth keeping until until. PrepareLater does it for a
// workspace nobody asked for yet, behind those asked for.
type preparer interface {
	Prepare(id string, gen int64, until time.Time)
	PrepareLater(id string, gen int64, until time.Time)
}

// Options configure a Fleet.
type Options struct {
	Lease Lease
	// Opener opens a workspace of DIR, restoring it from the replica when
	// its store is missing there, and its workspaces' Close returns once
	// the replica holds all they committed: replica.Opener.
	Opener Opener
	// Dir is DIR: each workspace's generation marker lives in DIR/ID, and
	// a stale local store is removed there so that Opener restores it.
	Dir string
	// Addr is this host's URL as the other hosts reach it
	// (http://HOST:PORT).
	Addr string
	// TTL is a lease's life without renewal (DefaultTTL when 0). A host
	// renews every TTL/3 and stops serving a workspace TTL/3 before its
	// lease would expire unrenewed, so the hosts' clocks must agree to well
	// within TTL/3.
	TTL time.Duration
	// Replica is where the workspaces' stores are replicated
	// (replica.Opener): deleting a workspace deletes it there, under the
	// workspace's lease. Nil: no replica.
	Replica host.Remote
	Logger  *slog.Logger
}

// Fleet is a host.Opener that serves a workspace only under its lease,
// and the handler that forwards the requests of workspaces other hosts
// hold (Handler).
type Fleet struct {
	o     Options
	claim Claim
	host  *host.Host

	// known are the workspaces with a lease record: an id without one and
	// without a local folder does not exist, and is never leased.
	known *host.Known

	mu   sync.Mutex
	held map[string]*grant
	// swept are the holders (by instance) seen dead whose other
	// workspaces this host prepares (sweep), and when.
	swept map[string]time.Time
}

// grant is a lease this host holds.
type grant struct {
	id   string
	stop context.CancelFunc // stops the renewals
	done chan struct{}      // closed when the renewals stopped
	mu   sync.Mutex
	rec  Record
	// path is the generation whose folder holds the store, and so its
	// replica: rec's, or an earlier one of this host's own when nobody
	// served the workspace in between.
	path   int64
	until  time.Time // serve only before this (monotonic)
	lost   bool
	closed bool // its workspace was opened and closed again
	// ws is what the host holds under this grant, once open: what a lost
	// lease evicts (the next instance of the workspace has a grant of its
	// own).
	ws host.Workspace
	// unreplicated is set while the workspace is closed with commits the
	// replica may lack (its final sync failed): the lease is kept and the
	// store left in the replicator's sight while drain tries again.
	unreplicated *drainer
}

// drainer retries the final replication of a closed workspace.
type drainer struct {
	stop context.CancelFunc
	done chan struct{}
	sync replicaSyncer
}

// New returns a fleet member over o; Bind gives it its host.
func New(o Options) (*Fleet, error) {
	if o.Lease == nil || o.Opener == nil || o.Dir == "" {
		return nil, errors.New("fleet: Lease, Opener and Dir are required")
	}
	if err := checkAddr(o.Addr); err != nil {
		return nil, err
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.TTL < 30*time.Millisecond {
		return nil, fmt.Errorf("fleet: lease TTL %v is too short", o.TTL)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Fleet{
		o:     o,
		claim: Claim{Addr: o.Addr, Instance: strings.ToLower(rand.Text()[:16]), TTL: o.TTL},
		held:  map[string]*grant{},
		swept: map[string]time.Time{},
		known: &host.Known{List: o.Lease.List, Lookup: func(ctx context.Context, id string) (bool, error) {
			rec, err := o.Lease.Holder(ctx, id)
			return rec.Generation > 0, err
		}},
	}, nil
}

// Exists says whether workspace id exists: this host has its folder, or
// the fleet has leased it (a replica object without a lease record, such
// as a stale holder's late upload after a DELETE, is no evidence).
func (f *Fleet) Exists(ctx context.Context, id string) (bool, error) {
	if fi, err := os.Lstat(filepath.Join(f.o.Dir, id)); err == nil && fi.IsDir() {
		return true, nil
	}
	return f.known.Exists(ctx, id)
}

// Delete deletes workspace id from the fleet (the host holds it closed):
// under its lease, taken for the purpose, its replica, then its lease
// record, so that no host can serve it again.
func (f *Fleet) Delete(ctx context.Context, id string) error {
	f.mu.Lock()
	g := f.held[id]
	f.mu.Unlock()
	if g != nil && g.stopDrain() != nil {
		// Its unshipped commits go with it; the lease is taken again below.
		_ = f.giveUp(ctx, g, false)
	}
	rec, err := f.o.Lease.Acquire(ctx, id, f.claim)
	if err != nil {
		return fmt.Errorf("deleting workspace %s: %w", id, err)
	}
	if f.o.Replica != nil {
		if err := f.o.Replica.Delete(ctx, id); err != nil {
			return errors.Join(err, f.o.Lease.Release(context.WithoutCancel(ctx), rec))
		}
	}
	if err := f.o.Lease.Delete(ctx, rec); err != nil {
		return err
	}
	f.known.Add(id, false)
	f.o.Logger.Info("deleted workspace from the fleet", "id", id, "generation", rec.Generation)
	return nil
}

// checkAddr refuses an advertised address other hosts could not forward to.
func checkAddr(addr string) error {
	rest, ok := strings.CutPrefix(addr, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(addr, "https://")
	}
	if !ok || rest == "" || strings.ContainsAny(rest, "/?#") {
		return fmt.Errorf("fleet: advertised address %q: want http://HOST:PORT", addr)
	}
	return nil
}

// Bind gives f the host it opens workspaces for, which it closes at once
// when their lease is lost.
func (f *Fleet) Bind(h *host.Host) { f.host = h }

// Addr is this host's advertised URL.
func (f *Fleet) Addr() string { return f.claim.Addr }

// serveFor is how long after sending a successful acquisition or
// renewal this host may serve: the margin TTL/3 covers clock skew and the
// time to close the workspace.
func (f *Fleet) serveFor() time.Duration { return f.o.TTL - f.o.TTL/3 }

// Open takes workspace id's lease, makes sure the local copy is current
// (else removes it, so the inner Opener restores it from the replica) and
// opens it. While another live host holds the lease it fails with a
// *HeldError.
func (f *Fleet) Open(ctx context.Context, id string) (host.Workspace, error) {
	if err := host.CheckID(id); err != nil {
		return nil, err
	}
	if ok, err := f.Exists(ctx, id); err != nil || !ok {
		return nil, cmp.Or(err, fmt.Errorf("%w: %s", host.ErrNotFound, id))
	}
	if ws, ok, err := f.resume(ctx, id); ok {
		return ws, err
	}
	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, f.o.TTL)
	rec, err := f.o.Lease.Acquire(actx, id, f.claim)
	cancel()
	var held *HeldError
	if err != nil && !errors.As(err, &held) {
		// The lease store did not answer, or another host wrote first:
		// a retry may be served (503, not 500).
		return nil, fmt.Errorf("%w: %w", host.ErrUnavailable, err)
	}
	if err != nil {
		return nil, err
	}
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	g := &grant{id: id, stop: stop, done: make(chan struct{}), rec: rec, until: start.Add(f.serveFor())}
	f.mu.Lock()
	f.held[id] = g
	metrics.FleetLeasesHeld.Set(float64(len(f.held)))
	f.mu.Unlock()
	// Renewals run from now: a restore may outlast the TTL.
	go f.renew(rctx, g)
	fail := func(err error) (host.Workspace, error) {
		if perr := f.park(id, g.path); perr != nil {
			// Left in the replicator's sight: let the lease lapse.
			return nil, errors.Join(err, perr, f.giveUp(ctx, g, false))
		}
		return nil, errors.Join(err, f.giveUp(ctx, g, true))
	}
	local, path, err := f.unpark(id, rec)
	if err != nil {
		return fail(err)
	}
	g.path = path
	// Marked before the open too: generation rec is this host's whatever
	// the open does, so a copy a failed open parks again is still current
	// at the next generation. Marked only after, a failed open left the
	// generation before named, the copy looked another host's at the next
	// open, was set aside, and the workspace came back from the replica
	// without its unshipped writes, or empty. (Without a folder yet there
	// is no copy: the open restores one.)
	if err := f.mark(id, rec.Generation, path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	ws, err := f.o.Opener.OpenGeneration(ctx, id, path)
	if err != nil {
		return fail(err)
	}
	if err := f.mark(id, rec.Generation, path); err != nil {
		return fail(errors.Join(err, ws.Close(ctx)))
	}
	lw, ok := g.serve(ws, f)
	if !ok {
		return fail(errors.Join(fmt.Errorf("workspace %s: %w while opening it", id, ErrLost), ws.Close(ctx)))
	}
	metrics.FleetAcquisitions.WithLabelValues(local).Inc()
	f.o.Logger.Debug("leased workspace", "id", id, "generation", rec.Generation, "path_generation", path, "local", local)
	return lw, nil
}

// serve wraps ws, opened under g, for the host, unless g was lost.
func (g *grant) serve(ws host.Workspace, f *Fleet) (*leased, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lost {
		return nil, false
	}
	lw := &leased{Workspace: ws, f: f, g: g}
	g.ws, g.closed = lw, false
	return lw, true
}

// resume opens workspace id again under the lease its last close kept
// (its final sync failed, see drain): the store never left its folder,
// nor the lease this host. ok is false when there is none to resume.
func (f *Fleet) resume(ctx context.Context, id string) (_ host.Workspace, ok bool, _ error) {
	f.mu.Lock()
	g := f.held[id]
	f.mu.Unlock()
	if g == nil {
		return nil, false, nil
	}
	d := g.stopDrain()
	if d == nil {
		return nil, false, nil
	}
	ws, err := f.o.Opener.OpenGeneration(ctx, id, g.path)
	if err != nil {
		f.drain(g, d.sync) // still closed, its commits still to ship
		return nil, true, err
	}
	lw, ok := g.serve(ws, f)
	if !ok {
		// Lost meanwhile: its copy stays where it is, unparked (see drain).
		return nil, true, errors.Join(fmt.Errorf("workspace %s: %w while opening it", id, ErrLost), ws.Close(ctx))
	}
	metrics.FleetAcquisitions.WithLabelValues("current").Inc()
	f.o.Logger.Info("reopened a workspace whose last commits the replica still lacks, under the lease it kept", "id", id, "generation", g.rec.Generation)
	return lw, true, nil
}

// stopDrain stops g's drain, if any, and returns it when g is still held
// (a lost grant's copy is nobody's to serve now; a drain that succeeded
// gave the lease up).
func (g *grant) stopDrain() *drainer {
	g.mu.Lock()
	d := g.unreplicated
	g.mu.Unlock()
	if d == nil {
		return nil
	}
	d.stop()
	<-d.done
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.unreplicated != d || g.lost || g.closed {
		return nil
	}
	g.unreplicated = nil
	return d
}

// drainRetry is the first wait before a drain tries the replica again,
// doubling to drainRetryMax.
const (
	drainRetry    = time.Second
	drainRetryMax = 30 * time.Second
)

// drain keeps g's lease (its renewals go on) and its workspace's store in
// the replicator's sight after a close whose final replication failed
// (the object store unreachable), trying sy again until the replica has
// every commit: only then is the store parked and the lease released. A
// lease lapsing meanwhile would let another host restore the workspace
// without them. If the lease is lost all the same (the lease store
// unreachable as long), the local copy keeps them, in its folder, and
// the log says where.
func (f *Fleet) drain(g *grant, sy replicaSyncer) {
	ctx, stop := context.WithCancel(context.Background())
	d := &drainer{stop: stop, done: make(chan struct{}), sync: sy}
	g.mu.Lock()
	g.unreplicated = d
	g.mu.Unlock()
	metrics.FleetUnreplicated.Inc()
	store := host.GenerationStore(f.o.Dir, g.id, g.path)
	go func() {
		defer close(d.done)
		defer metrics.FleetUnreplicated.Dec()
		for wait := drainRetry; ; wait = min(2*wait, drainRetryMax) {
			select {
			case <-ctx.Done():
				return // resumed, or the workspace is deleted
			case <-g.done:
				f.o.Logger.Error("lost the lease of a closed workspace whose last commits the replica lacks: the local copy keeps them", "id", g.id, "store", store)
				return
			case <-time.After(wait):
			}
			err := sy.SyncReplica(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				f.o.Logger.Warn("the replica still lacks a closed workspace's last commits: keeping its lease, trying again", "id", g.id, "store", store, "after", min(2*wait, drainRetryMax), "err", err)
				continue
			}
			err = f.park(g.id, g.path)
			err = errors.Join(err, f.giveUp(ctx, g, err == nil))
			if err != nil {
				f.o.Logger.Error("the replica caught up with a closed workspace, but handing it off failed", "id", g.id, "err", err)
				return
			}
			f.o.Logger.Info("the replica caught up with a closed workspace: its lease is released", "id", g.id)
			return
		}
	}()
}

// A workspace this host does not hold has its local copy parked: its
// files renamed from gen-G/workspace.sqlfs to host.ParkedName, out of the
// replicator's sight. Litestream, meeting a store behind its replica
// (a copy another host has served since), would upload a snapshot of it
// as the newest state.
const (
	parkedName = host.ParkedName
	staleName  = host.StaleName
)

func exists(file string) bool {
	_, err := os.Lstat(file)
	return err == nil
}

// park puts workspace id's local copy, in generation gen's folder, out of
// the replicator's sight.
func (f *Fleet) park(id string, gen int64) error {
	return parkStore(f.o.Dir, id, gen, f.o.Logger)
}

// parkStore parks the store of workspace id in generation gen's folder.
// An empty store file there is no copy (host.RemoveEmptyStore): it is
// removed, never parked in place of the copy parked before.
func parkStore(dir, id string, gen int64, log *slog.Logger) error {
	from := host.GenerationStore(dir, id, gen)
	if removed, err := host.RemoveEmptyStore(from, id, log); err != nil {
		return fmt.Errorf("workspace %s: %w", id, err)
	} else if removed {
		return nil
	}
	if !exists(from) {
		return nil
	}
	if err := host.MoveStore(from, filepath.Join(dir, id, parkedName)); err != nil {
		return fmt.Errorf("workspace %s: parking the local copy: %w", id, err)
	}
	return nil
}

// liveStores are the generations whose folders in DIR/ID hold a store.
func liveStores(dir, id string) ([]int64, error) {
	ents, err := os.ReadDir(filepath.Join(dir, id))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var gens []int64
	if exists(host.GenerationStore(dir, id, 0)) {
		gens = append(gens, 0)
	}
	for _, e := range ents {
		if g, ok := host.ParseGeneration(e.Name()); ok && e.IsDir() && exists(host.GenerationStore(dir, id, g)) {
			gens = append(gens, g)
		}
	}
	return gens, nil
}

// parkLive parks every store of workspace id in sight of the replicator
// (a copy a host without a fleet made, a fork's, or one left by a crash),
// the one of the generation this host served last, if any, winning.
func parkLive(dir, id string, log *slog.Logger) error {
	gens, err := liveStores(dir, id)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", id, err)
	}
	_, path, _ := readMark(dir, id)
	if i := slices.Index(gens, path); i >= 0 {
		gens = append(slices.Delete(gens, i, i+1), path) // parked last
	}
	for _, g := range gens {
		if err := parkStore(dir, id, g, log); err != nil {
			return err
		}
	}
	return nil
}

// ParkAll parks every workspace's local copy under dir: a host starting
// holds no lease. Run it before replication starts.
func ParkAll(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		if e.IsDir() && host.CheckID(e.Name()) == nil {
			errs = append(errs, parkLive(dir, e.Name(), slog.Default()))
		}
	}
	return errors.Join(errs...)
}

// unpark brings back the parked copy of id when this host served the
// generation just before rec (nobody else held it since), or nobody ever
// held it, and otherwise sets it aside as stale.sqlfs (the last one only):
// another host served the workspace later, so the Opener restores it
// from the replica. It says which it found (current, stale or missing)
// and the generation whose folder the store goes to: the one the copy
// replicated to before when current (its replica continues), rec's own
// otherwise, which no other host ever replicates to. The folders of other
// generations, with Litestream's state of their replicas, are removed.
func (f *Fleet) unpark(id string, rec Record) (string, int64, error) {
	dir := filepath.Join(f.o.Dir, id)
	if err := parkLive(f.o.Dir, id, f.o.Logger); err != nil {
		return "", 0, err
	}
	state, path := "missing", rec.Generation
	if _, err := host.RemoveEmptyStore(filepath.Join(dir, parkedName), id, f.o.Logger); err != nil {
		return "", 0, fmt.Errorf("workspace %s: %w", id, err)
	}
	if exists(filepath.Join(dir, parkedName)) {
		mine, was, err := readMark(f.o.Dir, id)
		if err != nil {
			return "", 0, err
		}
		state = "stale"
		if rec.Generation == 1 || mine == rec.Generation-1 {
			state = "current"
			if rec.Generation > 1 {
				path = was
			}
		}
	}
	if err := removeGenerations(dir, path); err != nil {
		return "", 0, fmt.Errorf("workspace %s: %w", id, err)
	}
	switch state {
	case "current":
		to := host.GenerationStore(f.o.Dir, id, path)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return "", 0, fmt.Errorf("workspace %s: %w", id, err)
		}
		if err := host.MoveStore(filepath.Join(dir, parkedName), to); err != nil {
			return "", 0, fmt.Errorf("workspace %s: %w", id, err)
		}
	case "stale":
		f.o.Logger.Info("local copy is stale: restoring the workspace from the replica", "id", id, "lease_generation", rec.Generation)
		if err := host.MoveStore(filepath.Join(dir, parkedName), filepath.Join(dir, staleName)); err != nil {
			return "", 0, fmt.Errorf("workspace %s: setting the stale local copy aside: %w", id, err)
		}
	}
	return state, path, nil
}

// removeGenerations removes the generation folders in dir but keep's.
func removeGenerations(dir string, keep int64) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if g, ok := host.ParseGeneration(e.Name()); ok && g != keep {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// readMark reads the generation this host last served workspace id under
// and the one whose folder held its store (0, 0 when none; a marker of
// one number, from before generations had folders, has its store at 0).
func readMark(dir, id string) (served, path int64, err error) {
	b, err := os.ReadFile(filepath.Join(dir, id, markerName))
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("workspace %s: %w", id, err)
	}
	f := strings.Fields(string(b))
	if len(f) > 0 {
		served, _ = strconv.ParseInt(f[0], 10, 64)
	}
	if len(f) > 1 {
		path, _ = strconv.ParseInt(f[1], 10, 64)
	}
	return served, path, nil
}

// mark records that this host serves id under generation gen, its store in
// generation path's folder.
func (f *Fleet) mark(id string, gen, path int64) error {
	file := filepath.Join(f.o.Dir, id, markerName)
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%d %d\n", gen, path)), 0o600); err != nil {
		return fmt.Errorf("workspace %s: %w", id, err)
	}
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("workspace %s: %w", id, err)
	}
	return nil
}

// renew keeps g's lease until ctx ends, and fences the workspace when
// the lease is lost or would lapse.
func (f *Fleet) renew(ctx context.Context, g *grant) {
	defer close(g.done)
	every := f.o.TTL / 3
	retry := min(every/4, time.Second)
	due := time.Now().Add(every)
	for {
		g.mu.Lock()
		rec, until := g.rec, g.until
		g.mu.Unlock()
		wake := due
		if until.Before(wake) {
			wake = until
		}
		t := time.NewTimer(time.Until(wake))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if !time.Now().Before(until) {
			f.fence(g, "expired", nil)
			return
		}
		start := time.Now()
		n, err := f.renewOnce(ctx, g.id, rec, until)
		switch {
		case err == nil:
			g.mu.Lock()
			g.rec, g.until = n, start.Add(f.serveFor())
			g.mu.Unlock()
			due = start.Add(every)
		case ctx.Err() != nil:
			return
		case errors.Is(err, ErrLost):
			f.fence(g, "taken", err)
			return
		default:
			metrics.FleetRenewFailures.Inc()
			f.o.Logger.Warn("renewing a workspace lease failed; retrying", "id", g.id, "serving_for", time.Until(until).Round(time.Millisecond), "err", err)
			due = time.Now().Add(retry)
		}
	}
}

// renewHedges bounds the renewal attempts of one lease in flight at once.
const renewHedges = 3

// renewOnce renews rec before until. An attempt that has not answered
// within TTL/12 gets another one alongside (up to renewHedges), none
// cancelled while another may still land: one PUT stalled on an object
// store busy with the replicas' uploads (or on a dead connection, or in
// the SDK's backoff after a 503) used to take all the time left, TTL/3,
// and the host fenced a workspace it could have kept. A hedge that meets
// the record its sibling just wrote takes it over (S3Lease.replace), so
// ErrLost counts only when no attempt succeeded.
func (f *Fleet) renewOnce(ctx context.Context, id string, rec Record, until time.Time) (Record, error) {
	cctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	type result struct {
		rec Record
		err error
	}
	results := make(chan result, renewHedges)
	sent, pending := 0, 0
	send := func() {
		sent++
		pending++
		go func() {
			r, err := f.o.Lease.Renew(cctx, rec)
			results <- result{r, err}
		}()
	}
	send()
	hedge := time.NewTicker(max(f.o.TTL/12, time.Millisecond))
	defer hedge.Stop()
	var errs []error
	for {
		select {
		case res := <-results:
			pending--
			if res.err == nil {
				if sent > 1 {
					metrics.FleetRenewHedges.Add(float64(sent - 1))
					f.o.Logger.Info("renewed a workspace lease with a second attempt alongside a slow one", "id", id, "attempts", sent)
				}
				return res.rec, nil
			}
			errs = append(errs, res.err)
			if pending > 0 {
				continue
			}
			if i := slices.IndexFunc(errs, func(err error) bool { return errors.Is(err, ErrLost) }); i >= 0 {
				return Record{}, errs[i]
			}
			return Record{}, errors.Join(errs...)
		case <-hedge.C:
			if sent < renewHedges {
				send()
			}
		}
	}
}

// fence stops serving g's workspace at once: another host may hold it.
func (f *Fleet) fence(g *grant, cause string, err error) {
	g.mu.Lock()
	if g.lost || g.closed {
		g.mu.Unlock()
		return
	}
	g.lost = true
	g.mu.Unlock()
	f.forget(g)
	metrics.FleetLosses.WithLabelValues(cause).Inc()
	f.o.Logger.Error("lost the lease of a workspace: closing it", "id", g.id, "cause", cause, "err", err)
	go f.evict(g)
}

// evict closes g's workspace on the host, apart from the renewals: that
// instance alone, as the host may have closed it since and opened the
// next under a lease of its own.
func (f *Fleet) evict(g *grant) {
	g.mu.Lock()
	ws := g.ws
	g.mu.Unlock()
	if f.host == nil || ws == nil {
		return // not open yet: the open finds the lease lost
	}
	if err := f.host.EvictInstance(context.Background(), g.id, ws); err != nil {
		f.o.Logger.Error("closing a workspace whose lease was lost", "id", g.id, "err", err)
	}
}

func (f *Fleet) forget(g *grant) {
	f.mu.Lock()
	if f.held[g.id] == g {
		delete(f.held, g.id)
	}
	metrics.FleetLeasesHeld.Set(float64(len(f.held)))
	f.mu.Unlock()
}

// Serving says whether this host serves workspace id now: it holds its
// lease and has time left on it.
func (f *Fleet) Serving(id string) bool {
	f.mu.Lock()
	g := f.held[id]
	f.mu.Unlock()
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.lost && time.Now().Before(g.until)
}

// giveUp stops renewing g and releases its lease unless it was lost or
// release is false (the lease then lapses after its TTL).
func (f *Fleet) giveUp(ctx context.Context, g *grant, release bool) error {
	g.stop()
	<-g.done
	g.mu.Lock()
	lost := g.lost
	g.closed = true
	rec := g.rec
	g.mu.Unlock()
	f.forget(g)
	if lost || !release {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.o.TTL)
	defer cancel()
	if err := f.o.Lease.Release(rctx, rec); err != nil {
		metrics.FleetReleases.WithLabelValues("failed").Inc()
		return fmt.Errorf("releasing the lease of %s: %w", g.id, err)
	}
	metrics.FleetReleases.WithLabelValues("ok").Inc()
	return nil
}

// leased is a workspace served under its lease.
type leased struct {
	host.Workspace
	f *Fleet
	g *grant
}

// Tools is the workspace's tool service, for a fork of it.
func (w *leased) Tools() *tools.Service {
	if t, ok := w.Workspace.(interface{ Tools() *tools.Service }); ok {
		return t.Tools()
	}
	return nil
}

// Retired says the workspace serves no more requests: its lease was
// lost. The host serves a request it refused again (host.Retrying),
// through the fleet's routing: forwarded to the new holder, or here
// under a new lease.
func (w *leased) Retired() bool { return !w.f.Serving(w.g.id) }

// ServeHTTP serves only while the lease has time left: a request that
// reached a workspace just before its lease was lost is refused.
func (w *leased) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if !w.f.Serving(w.g.id) {
		writeError(rw, http.StatusServiceUnavailable, codeUnavailable, "workspace "+w.g.id+": this host lost its lease; retry")
		return
	}
	w.Workspace.ServeHTTP(rw, r)
}

// Close closes the workspace (the Opener's workspace replicates it a
// last time), parks it and releases its lease, renewing it meanwhile. A
// workspace whose lease was lost is closed and parked, and its lease
// left to lapse. One whose final replication failed keeps its lease and
// its store in the replicator's sight until the replica has it all
// (drain); reopened meanwhile, it is served from that store.
func (w *leased) Close(ctx context.Context) error {
	w.g.mu.Lock()
	lost := w.g.lost
	w.g.mu.Unlock()
	var err error
	if fc, ok := w.Workspace.(fencedCloser); ok && lost {
		err = fc.CloseFenced(ctx)
	} else {
		err = w.Workspace.Close(ctx)
	}
	w.g.mu.Lock()
	lost = w.g.lost
	w.g.mu.Unlock()
	if sy, ok := w.Workspace.(replicaSyncer); ok && err != nil && !lost {
		metrics.FleetReleases.WithLabelValues("kept").Inc()
		w.f.drain(w.g, sy)
		return fmt.Errorf("%w; workspace %s keeps its lease, and its store %s stays in the replicator's sight, until the replica has its last commits (trying again)",
			err, w.g.id, host.GenerationStore(w.f.o.Dir, w.g.id, w.g.path))
	}
	if perr := w.f.park(w.g.id, w.g.path); perr != nil {
		err = errors.Join(err, perr)
	}
	w.g.mu.Lock()
	lost = w.g.lost
	w.g.mu.Unlock()
	if err != nil && !lost {
		metrics.FleetReleases.WithLabelValues("kept").Inc()
		err = fmt.Errorf("%w; the lease of %s lapses in %v instead of moving now", err, w.g.id, w.f.o.TTL)
	}
	return errors.Join(err, w.f.giveUp(ctx, w.g, err == nil))
}
