package host

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/publish"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// A workspace of a Dir is the folder DIR/ID holding its store (StoreName)
// and what lives beside it (policy, tokens): removing the folder removes
// it all.
const (
	StoreName  = "workspace.sqlfs"
	policyName = "policy.json"
	limitsName = "limits.json"
	lockName   = ".host.lock"
	// mountsName is the folder (0700) of the workspaces' mounts on demand,
	// DIR/.mounts/ID while a workspace's container backend is open. Its
	// name is no id: never listed as a workspace.
	mountsName = ".mounts"
)

// idPattern is what a workspace id may be: lower-case, so no two ids name
// one folder on a case-insensitive disk, and without dots or slashes, so
// no id climbs out of DIR.
var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// ErrBadID is wrapped by the refusal of an id outside [a-z0-9][a-z0-9-]{0,62}.
var ErrBadID = errors.New("bad workspace id")

// CheckID refuses an id that is not [a-z0-9][a-z0-9-]{0,62}.
func CheckID(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("%w %q: want 1-63 of a-z, 0-9 and '-', starting with a letter or digit", ErrBadID, id)
	}
	return nil
}

// NewID returns a random id (16 base32 characters, 80 bits).
func NewID() string { return strings.ToLower(rand.Text()[:16]) }

// Dir is an Opener over the workspaces stored in one directory.
type Dir struct {
	root string
	lock *os.File
	// Workspace is how each store is opened; a workspace's own policy
	// (POST or PATCH) adds to Workspace.FS.Policy.
	workspace workspace.Options
	api       api.Options
	// tokenCache: the token files as last read.
	tokenCache tokenCache

	// egressMu orders the writes of policy files with the egress rules
	// given to the open workspaces (live), so that neither a PATCH racing
	// an open nor two PATCHes leave a workspace on rules older than its
	// file's.
	egressMu sync.Mutex
	live     map[string]map[*served]bool // by id, the instances open
}

// OpenDir takes the workspaces under root (created when missing, mode
// 0700) for this process: a second host on the same root is refused.
// Nothing is opened until asked. ws says how stores are opened; ao is the
// template of each workspace's API server (Tools set per workspace). With
// ws.Container set, a workspace is mounted at its container backend's
// first exec, under root's private .mounts folder, until it closes.
func OpenDir(root string, ws workspace.Options, ao api.Options) (*Dir, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("workspaces dir: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(root, lockName), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("workspaces dir: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("workspaces dir %s: another host serves it", root)
		}
		return nil, fmt.Errorf("workspaces dir %s: %w", root, err)
	}
	// Each store is owned through the host; none names a socket of its own.
	ws.FS.Socket = ""
	ao.Token = ""
	// One shell memory budget bounds every workspace's commands together,
	// and the usage gauges, one store's, are left alone.
	if ws.Shell.Memory == nil {
		ws.Shell.Memory = shell.NewMemory(ws.Shell.MaxMemoryBytes, ws.Shell.Logger)
	}
	ws.NoUsageGauges = true
	// A PATCH may grant network to a workspace opened without any.
	ws.LiveEgress = true
	d := &Dir{root: root, lock: lock, workspace: ws, api: ao, live: map[string]map[*served]bool{}}
	if ws.Container != nil {
		if err := d.cleanMounts(); err != nil {
			lock.Close()
			return nil, fmt.Errorf("workspaces dir: %w", err)
		}
	}
	ids, err := d.IDs("", 0)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("workspaces dir: %w", err)
	}
	metrics.AddHostTotal(len(ids))
	return d, nil
}

// cleanMounts makes the folder of the mounts on demand private, detaching
// and removing what a host that died left in it.
func (d *Dir) cleanMounts() error {
	p := filepath.Join(d.root, mountsName)
	if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := os.Chmod(p, 0o700); err != nil {
		return err
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return err
	}
	for _, e := range ents {
		mp := filepath.Join(p, e.Name())
		// EINVAL: not a mount (an empty mountpoint left behind).
		if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			return fmt.Errorf("detaching a dead host's mount %s: %w", mp, err)
		}
		if err := os.Remove(mp); err != nil {
			return err
		}
	}
	return nil
}

// Root is the directory the workspaces are stored under.
func (d *Dir) Root() string { return d.root }

// Close lets another process take the directory.
func (d *Dir) Close() error { return d.lock.Close() }

// path is the folder of workspace id, which must exist as a real directory
// (not a symlink planted in DIR).
func (d *Dir) path(id string) (string, error) {
	if err := CheckID(id); err != nil {
		return "", err
	}
	p := filepath.Join(d.root, id)
	fi, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) || err == nil && !fi.IsDir() {
		return "", fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return "", err
	}
	return p, nil
}

// served is an open workspace with its API server and its public
// listener's handler (nil without one).
type served struct {
	ws     *workspace.Workspace
	api    *api.Server
	public http.Handler
	// forget drops it from its Dir's live instances.
	forget func()
}

func (s *served) Public() http.Handler { return s.public }

func (s *served) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.api.ServeHTTP(w, r) }
func (s *served) Close(ctx context.Context) error {
	s.forget()
	return s.ws.Close(ctx)
}

func (s *served) Tools() *tools.Service { return s.ws.Tools }

func (s *served) Busy() bool {
	for _, e := range s.ws.Tools.Execs() {
		if e.Running {
			return true
		}
	}
	return false
}

// Open opens the store of workspace id (creating it in a folder made by
// Create) with the workspace's own policy.
func (d *Dir) Open(ctx context.Context, id string) (Workspace, error) {
	return d.OpenGeneration(ctx, id, 0)
}

// A fleet serving a workspace under lease generation G > 0 keeps its store
// in DIR/ID/gen-G/ (GenerationStorePath), generation 0 being DIR/ID itself:
// the replica mirrors DIR's layout, so each holder replicates to a path of
// its own, and a holder that lost its lease cannot write where its
// successor does.
const generationPrefix = "gen-"

// GenerationStorePath is where workspace id's store lives under lease
// generation gen (0: StorePath).
func (d *Dir) GenerationStorePath(id string, gen int64) string {
	return GenerationStore(d.root, id, gen)
}

// GenerationStore is GenerationStorePath of the Dir at root.
func GenerationStore(root, id string, gen int64) string {
	if gen == 0 {
		return filepath.Join(root, id, StoreName)
	}
	return filepath.Join(root, id, GenerationName(gen), StoreName)
}

// GenerationName is the folder of generation gen > 0 in DIR/ID, and in
// the replica under PATH/ID.
func GenerationName(gen int64) string { return generationPrefix + strconv.FormatInt(gen, 10) }

// ParseGeneration is the generation a folder named name holds, or false
// when it is not a generation's folder.
func ParseGeneration(name string) (int64, bool) {
	n, ok := strings.CutPrefix(name, generationPrefix)
	if !ok || n == "" || n[0] == '0' {
		return 0, false
	}
	gen, err := strconv.ParseInt(n, 10, 64)
	return gen, err == nil && gen > 0
}

// OpenGeneration opens workspace id with its store at
// GenerationStorePath(id, gen), making the generation's folder when
// missing.
func (d *Dir) OpenGeneration(ctx context.Context, id string, gen int64) (Workspace, error) {
	p, err := d.path(id)
	if err != nil {
		return nil, err
	}
	if gen < 0 {
		return nil, fmt.Errorf("workspace %s: generation %d", id, gen)
	}
	store := d.GenerationStorePath(id, gen)
	if gen > 0 {
		if err := os.Mkdir(filepath.Dir(store), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("workspace %s: %w", id, err)
		}
	}
	if fi, err := os.Lstat(store); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s: %s is not a regular file", ErrNotFound, id, store)
	}
	wo := d.workspace
	if wo.Container != nil {
		wo.Mount, wo.MountOnDemand = filepath.Join(d.root, mountsName, id), true
	}
	pol := wo.FS.Policy
	ownFile, err := d.ownPolicy(p)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", id, err)
	}
	own, err := workspace.LoadPolicy("", ownFile.ReadOnly, ownFile.Hidden, ownFile.QuotaBytes)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", id, err)
	}
	wo.Egress = d.egressOf(ownFile.Egress)
	wo.FS.Policy.ReadOnly = slices.Concat(pol.ReadOnly, own.ReadOnly)
	wo.FS.Policy.Hidden = slices.Concat(pol.Hidden, own.Hidden)
	if own.QuotaBytes > 0 {
		wo.FS.Policy.QuotaBytes = own.QuotaBytes
	}
	lim, err := d.limits(p)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", id, err)
	}
	lim.Apply(&wo)
	if wo.PublicURL != "" {
		wo.PublicURL = publicBase(wo.PublicURL, id)
	}
	ws, err := workspace.Open(ctx, store, wo)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", id, err)
	}
	ao := d.api
	ao.Tools = ws.Tools
	s := &served{ws: ws, api: api.NewServer(ao)}
	s.forget = func() {
		d.egressMu.Lock()
		d.dropLocked(id, s)
		d.egressMu.Unlock()
	}
	if wo.PublicURL != "" {
		links, err := publish.Open(store, wo.PublicURL)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("workspace %s: %w", id, err), ws.Close(ctx))
		}
		s.public = ws.PublicHandler(links, d.api.Logger)
	}
	// The rules are read again once the instance is known to SetPolicy:
	// a PATCH that wrote the file after the read above, and looked for
	// open instances before this one, is not lost.
	d.egressMu.Lock()
	defer d.egressMu.Unlock()
	if d.live[id] == nil {
		d.live[id] = map[*served]bool{}
	}
	d.live[id][s] = true
	cur, err := d.ownPolicy(p)
	if err == nil {
		err = s.ws.SetEgress(d.egressOf(cur.Egress))
	}
	if err != nil {
		d.dropLocked(id, s)
		return nil, errors.Join(fmt.Errorf("workspace %s: %w", id, err), ws.Close(ctx))
	}
	return s, nil
}

// dropLocked forgets s, an instance of workspace id (egressMu held).
func (d *Dir) dropLocked(id string, s *served) {
	delete(d.live[id], s)
	if len(d.live[id]) == 0 {
		delete(d.live, id)
	}
}

// egressOf is the network rules of a workspace whose own egress section
// is own: its allow rules replace the host's (--egress-allow), the host's
// deny rules (--egress-deny) stay before its own; without a section, the
// host's rules. own was checked by checkPolicy.
func (d *Dir) egressOf(own *workspace.EgressRules) *egress.Policy {
	hostPol := d.workspace.Egress
	if own == nil {
		return hostPol
	}
	allow, deny, err := own.Parse("workspace policy")
	if err != nil {
		// checkPolicy refused such rules before they were written; a
		// file edited by hand since allows nothing.
		return egress.FromRules(nil, hostPol.DenyRules())
	}
	return egress.FromRules(allow, slices.Concat(hostPol.DenyRules(), deny))
}

// ParkedName is the store of a workspace in DIR/ID while the replicator
// must not see it: a hibernated workspace's (replica.Opener), one a fleet
// host does not hold (fleet).
const ParkedName = "parked.sqlfs"

// StaleName is a fleet host's local copy of a workspace another host
// served since, set aside in DIR/ID: the replica's state is newer, unless
// the replica holds nothing of it.
const StaleName = "stale.sqlfs"

// MoveStore moves the closed store from to to, in place of any older
// copy there.
//
// A store is two files, its database and its WAL (-wal; -shm is only an
// index of the WAL, which SQLite rebuilds), and no rename moves two files
// at once. A WAL that holds committed transactions, moved apart from its
// database by a crash between two renames, is lost to the next open of
// that database, or replayed into another database that takes its name
// later (SQLite cannot tell whose WAL it finds): committed work lost, or a
// store corrupted. So the invariant kept at every step, and so at any
// crash: a WAL with content lies only beside the database it belongs to.
// The steps:
//
//  1. from's WAL is folded into its database (a TRUNCATE checkpoint; the
//     store is closed: a reader that keeps frames from being copied
//     refuses the move), so that from's database file alone holds the
//     whole store;
//  2. to's WAL and index are removed: they belong to the copy being
//     replaced (a crash here leaves that copy without them; it was being
//     discarded), and left in place they would be replayed into the
//     database moved there next;
//  3. from's WAL and index are removed: the WAL holds nothing the
//     database lacks (empty, or, a reader holding it, every frame
//     copied), but left with its frames at a name without its database
//     it would be replayed into the next database made there;
//  4. the database file is renamed, atomically, and both folders synced.
func MoveStore(from, to string) error {
	// A WAL kept for a database parked at to (ParkStore) is not the one
	// moved there now.
	if err := removeKeptWAL(to); err != nil {
		return err
	}
	return moveStore(from, to, "TRUNCATE", nil)
}

// moveStore is MoveStore folding with a checkpoint of mode, and calling
// folded, if set, once from's database file holds the whole store.
func moveStore(from, to, mode string, folded func() error) error {
	if _, err := os.Lstat(from); err != nil {
		return fmt.Errorf("moving store %s: %w", from, err)
	}
	if err := foldWAL(from, mode); err != nil {
		return err
	}
	if folded != nil {
		if err := folded(); err != nil {
			return err
		}
	}
	if err := crashPoint("folded"); err != nil {
		return err
	}
	if err := removeSidecars(to); err != nil {
		return err
	}
	if err := crashPoint("cleared"); err != nil {
		return err
	}
	if err := removeSidecars(from); err != nil {
		return err
	}
	if err := crashPoint("emptied"); err != nil {
		return err
	}
	if err := os.Rename(from, to); err != nil {
		return err
	}
	if err := crashPoint("moved"); err != nil {
		return err
	}
	for _, d := range []string{filepath.Dir(from), filepath.Dir(to)} {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// foldWAL copies the committed transactions of the closed store's WAL
// into its database file (a checkpoint of mode: TRUNCATE empties the
// WAL, FULL leaves its frames as they are), so that the database file
// holds the whole store. A reader still holding the store (the
// replicator, not yet letting go) keeps the WAL from being emptied; once
// every frame is copied the WAL holds nothing its database lacks, which
// is enough. One that kept frames from being copied is an error.
func foldWAL(store, mode string) error {
	wal := store + "-wal"
	if fi, err := os.Lstat(wal); errors.Is(err, os.ErrNotExist) || err == nil && fi.Size() == 0 {
		return nil
	} else if err != nil {
		return err
	}
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: store}).EscapedPath()+"?_busy_timeout=1000")
	if err != nil {
		return fmt.Errorf("folding the WAL of %s: %w", store, err)
	}
	var busy, frames, copied int
	err = db.QueryRow("PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &frames, &copied)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("folding the WAL of %s: %w", store, err)
	}
	if busy != 0 && copied < frames {
		return fmt.Errorf("folding the WAL of %s: %w: another connection holds the store (%d of %d frames copied)", store, ErrStoreOpen, copied, frames)
	}
	return nil
}

// ErrStoreOpen: a store to move or remove is open elsewhere.
var ErrStoreOpen = errors.New("the store is open")

// removeSidecars removes store's WAL and its index, if any.
func removeSidecars(store string) error {
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(store + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := crashPoint("removed " + suffix); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// crashPoint, when a test sets it, may end a move or removal after step
// (an error: as if the host died there).
var crashPoint = func(step string) error { return nil }

// RemoveEmptyStore removes the store at path, with its WAL and shared
// memory, when it is an empty file (0 bytes), and says whether it did.
// Such a file is never a sqlfs store (sqlstore builds a new store under
// another name and refuses to open an empty one) but what SQLite leaves
// when a process, the replicator's Litestream, opens a store's name
// again after the store moved away: no data of the workspace, and moved
// in place of its real copy (parked) or taken for it, the copy is lost.
// The WAL and index go first, the empty file last: a crash between
// leaves the empty file, found again next time, never a WAL without its
// database (which the next store moved to that name would take for its
// own). A removal is logged on log, naming workspace id.
func RemoveEmptyStore(path, id string, log *slog.Logger) (bool, error) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 0 {
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		return false, err
	}
	if err := removeSidecars(path); err != nil {
		return false, fmt.Errorf("removing an empty store file: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("removing an empty store file: %w", err)
	}
	if err := crashPoint("removed store"); err != nil {
		return false, err
	}
	log.Warn("removed an empty store file, none of the workspace's data (left by the replicator reopening a store moved away)", "id", id, "store", path)
	return true, nil
}

// StorePath is where workspace id's store lives (id must pass CheckID).
func (d *Dir) StorePath(id string) string { return filepath.Join(d.root, id, StoreName) }

// policyFile is the workspace's own policy, "" when it has none.
func (d *Dir) policyFile(p string) string {
	f := filepath.Join(p, policyName)
	if _, err := os.Lstat(f); err != nil {
		return ""
	}
	return f
}

// Create makes the folder of a new workspace with its policy (nil: none);
// its store is created when it is first opened.
func (d *Dir) Create(id string, pol *workspace.PolicyFile) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if pol != nil {
		if _, err := checkPolicy(*pol); err != nil {
			return err
		}
	}
	p := filepath.Join(d.root, id)
	if err := os.Mkdir(p, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%w: workspace %s", os.ErrExist, id)
		}
		return err
	}
	if pol != nil {
		if err := d.SetPolicy(id, *pol); err != nil {
			return errors.Join(err, os.RemoveAll(p))
		}
	}
	metrics.AddHostTotal(1)
	return nil
}

// checkPolicy validates a workspace policy as the core and the egress
// dialer will take it.
func checkPolicy(pf workspace.PolicyFile) (workspace.PolicyFile, error) {
	pol, err := workspace.LoadPolicy("", pf.ReadOnly, pf.Hidden, pf.QuotaBytes)
	if err != nil {
		return pf, fmt.Errorf("%w: %w", errBadPolicy, err)
	}
	if _, _, err := pf.Egress.Parse("policy"); err != nil {
		return pf, fmt.Errorf("%w: %w", errBadPolicy, err)
	}
	return workspace.PolicyFile{ReadOnly: pol.ReadOnly, Hidden: pol.Hidden, QuotaBytes: pol.QuotaBytes, Egress: pf.Egress}, nil
}

// ownPolicy reads the policy file in the workspace folder p (none: the
// zero policy).
func (d *Dir) ownPolicy(p string) (workspace.PolicyFile, error) {
	f := d.policyFile(p)
	if f == "" {
		return workspace.PolicyFile{}, nil
	}
	return workspace.ReadPolicyFile(f)
}

var errBadPolicy = errors.New("bad policy")

// Policy is the workspace's own policy.
func (d *Dir) Policy(id string) (workspace.PolicyFile, error) {
	p, err := d.path(id)
	if err != nil {
		return workspace.PolicyFile{}, err
	}
	own, err := d.ownPolicy(p)
	if err != nil {
		return workspace.PolicyFile{}, err
	}
	pol, err := workspace.LoadPolicy("", own.ReadOnly, own.Hidden, own.QuotaBytes)
	return workspace.PolicyFile{ReadOnly: pol.ReadOnly, Hidden: pol.Hidden, QuotaBytes: pol.QuotaBytes, Egress: own.Egress}, err
}

// SetPolicy replaces the workspace's own policy. Its egress rules apply
// to the open workspace's next connection at once; the rest from the next
// open (Host.Reopen).
func (d *Dir) SetPolicy(id string, pf workspace.PolicyFile) error {
	pf, err := checkPolicy(pf)
	if err != nil {
		return err
	}
	d.egressMu.Lock()
	defer d.egressMu.Unlock()
	if err := d.writeJSON(id, policyName, pf); err != nil {
		return err
	}
	var errs []error
	for s := range d.live[id] {
		errs = append(errs, s.ws.SetEgress(d.egressOf(pf.Egress)))
	}
	return errors.Join(errs...)
}

// writeJSON replaces the file name in workspace id's folder with v.
func (d *Dir) writeJSON(id, name string, v any) error {
	p, err := d.path(id)
	if err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(p, name), b)
}

// errBadLimits is wrapped by the refusal of bad exec limits.
var errBadLimits = errors.New("bad exec limits")

// CheckLimits refuses exec limits a workspace cannot take.
func CheckLimits(l workspace.ExecLimits) error {
	if err := l.Validate(); err != nil {
		return fmt.Errorf("%w: %w", errBadLimits, err)
	}
	return nil
}

// Limits is the workspace's own exec limits (zero: the host's).
func (d *Dir) Limits(id string) (workspace.ExecLimits, error) {
	p, err := d.path(id)
	if err != nil {
		return workspace.ExecLimits{}, err
	}
	return d.limits(p)
}

// limits reads the exec limits in the workspace folder p.
func (d *Dir) limits(p string) (workspace.ExecLimits, error) {
	var l workspace.ExecLimits
	b, err := os.ReadFile(filepath.Join(p, limitsName))
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, fmt.Errorf("exec limits: %w", err)
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("exec limits %s: %w", filepath.Join(p, limitsName), err)
	}
	return l, nil
}

// SetLimits replaces the workspace's own exec limits; they apply from the
// next open (Host.Reopen).
func (d *Dir) SetLimits(id string, l workspace.ExecLimits) error {
	if err := CheckLimits(l); err != nil {
		return err
	}
	return d.writeJSON(id, limitsName, l)
}

// writeFileAtomic replaces file with data (mode 0600), never leaving it
// half written.
func writeFileAtomic(file string, data []byte) error {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Remove deletes workspace id with everything beside its store. The host
// must hold it closed (Host.Remove).
func (d *Dir) Remove(id string) error {
	p, err := d.path(id)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	d.forgetTokens(p)
	metrics.AddHostTotal(-1)
	return nil
}

// Info describes a workspace in GET /v1/workspaces.
type Info struct {
	ID    string `json:"id"`
	State string `json:"state"` // open or hibernated
	// Bytes is what its files take on disk (store, WAL, and the rest).
	Bytes int64 `json:"bytes"`
	// LastUsed is the last request's time while open, else when its store
	// last changed on disk.
	LastUsed time.Time `json:"last_used"`
}

// IDs lists the workspace ids in DIR in order, those after after first, at
// most limit (0: all).
func (d *Dir) IDs(after string, limit int) ([]string, error) {
	ents, err := os.ReadDir(d.root)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range ents {
		// ReadDir's type comes from lstat: a symlink is never a workspace.
		if !e.IsDir() || CheckID(e.Name()) != nil || e.Name() <= after {
			continue
		}
		ids = append(ids, e.Name())
		if limit > 0 && len(ids) == limit {
			break
		}
	}
	return ids, nil
}

// Stat is what the disk says of workspace id (Info without its state).
func (d *Dir) Stat(id string) (Info, error) {
	p, err := d.path(id)
	if err != nil {
		return Info{}, err
	}
	in := Info{ID: id}
	ents, err := os.ReadDir(p)
	if err != nil {
		return in, err
	}
	for _, e := range ents {
		if _, ok := ParseGeneration(e.Name()); ok && e.IsDir() {
			g, err := os.ReadDir(filepath.Join(p, e.Name()))
			if err != nil {
				return in, err
			}
			for _, e := range g {
				addFile(&in, e)
			}
			continue
		}
		addFile(&in, e)
	}
	return in, nil
}

// addFile counts the file of e in in.
func addFile(in *Info, e os.DirEntry) {
	fi, err := e.Info()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	in.Bytes += fi.Size()
	if (strings.HasPrefix(e.Name(), StoreName) || strings.HasPrefix(e.Name(), ParkedName)) && fi.ModTime().After(in.LastUsed) {
		in.LastUsed = fi.ModTime()
	}
}
