package replica

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
)

// Defaults of Options.
const (
	// DefaultSyncInterval is how often at most Litestream ships new
	// commits: with its WAL read every 100 ms, a commit reaches the object
	// store within about this plus the upload. 200 ms, not 500: at 1,000
	// small writes a second (TestReplicationLag, alternating, loads 7-12)
	// it cut the lag's p50 from 0.46-0.55 s to 0.26-0.30 s and its p99 from
	// 2.3-2.9 s to 1.5-1.7 s, for no more uploads (one object per WAL read
	// either way; an idle store's tick asks the object store nothing).
	DefaultSyncInterval = 200 * time.Millisecond
	// DefaultRetention is how far back a restore reaches, to the second.
	DefaultRetention = 24 * time.Hour
)

// Options configure a Supervisor and Restore.
type Options struct {
	URL         URL
	Credentials Credentials
	// SyncInterval: default DefaultSyncInterval.
	SyncInterval time.Duration
	// Retention: default DefaultRetention.
	Retention time.Duration
	// StateDir holds Litestream's config and control socket (created mode
	// 0700; the socket's path must stay under 100 bytes). Required for a
	// Supervisor.
	StateDir string
	// Binary is the litestream executable; default "litestream" on PATH.
	Binary string
	Logger *slog.Logger
	// RestartBackoff is the first wait before starting a dead litestream
	// again, doubling to a minute. Default 1s.
	RestartBackoff time.Duration
	// nice, when positive, is the niceness restores run at (a host's,
	// beside its own work).
	nice int
	// txid, when set, is the transaction a restore stops at (the newest
	// a listing saw: a staged restore holds exactly that one).
	txid uint64
	// client, when set, is the S3 client a restore reads with (a host's
	// own); else one of URL and Credentials.
	client S3API
}

func (o *Options) defaults() {
	if o.SyncInterval <= 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.Binary == "" {
		o.Binary = "litestream"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RestartBackoff <= 0 {
		o.RestartBackoff = time.Second
	}
}

// ErrNoLitestream: the litestream binary is not installed.
var ErrNoLitestream = errors.New("litestream not found (make tools installs it)")

// Supervisor runs `litestream replicate` as a child process (Litestream
// embedded as a library corrupts go-sqlite3 stores: two SQLite copies in
// one process break each other's POSIX locks) and starts it again when it
// dies.
type Supervisor struct {
	o      Options
	bin    string
	config string
	ctl
	// stop ends the run loop; done is closed when it has.
	stop, done chan struct{}
	ready      chan struct{} // closed once the control socket first answered
	once       sync.Once
	closeErr   error
	lag        *lagSampler
	ages       *syncAges
}

// StartStore replicates the one store at path (it must exist: the owner
// opens it first) to o.URL.
func StartStore(ctx context.Context, path string, o Options) (*Supervisor, error) {
	p, err := realPath(path)
	if err != nil {
		return nil, err
	}
	return start(ctx, o, lsDB{Path: p})
}

// StartDir replicates every store named pattern at any depth under dir,
// those created later included, each to o.URL joined with its path
// relative to dir (a host's workspace ID to URL/ID/workspace.sqlfs).
func StartDir(ctx context.Context, dir, pattern string, o Options) (*Supervisor, error) {
	p, err := realPath(dir)
	if err != nil {
		return nil, err
	}
	return start(ctx, o, lsDB{Dir: p, Pattern: pattern, Recursive: true, Watch: true})
}

func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

func start(ctx context.Context, o Options, db lsDB) (*Supervisor, error) {
	o.defaults()
	if o.URL.u == nil {
		return nil, fmt.Errorf("%w: none given", ErrBadURL)
	}
	if o.StateDir == "" {
		return nil, errors.New("replica: no state directory")
	}
	bin, err := exec.LookPath(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoLitestream, err)
	}
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("replica state: %w", err)
	}
	if err := os.Chmod(o.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("replica state: %w", err)
	}
	s := &Supervisor{
		o: o, bin: bin,
		config: filepath.Join(o.StateDir, "litestream.yml"),
		ctl:    newCtl(o.StateDir),
		stop:   make(chan struct{}), done: make(chan struct{}), ready: make(chan struct{}),
		ages: newSyncAges(),
	}
	if db.Path != "" {
		s.expect(db.Path)
	}
	if len(s.socket) >= 100 {
		return nil, fmt.Errorf("replica state directory %s: its socket path would be %d bytes, over the 100 a Unix socket allows; choose a shorter one", o.StateDir, len(s.socket))
	}
	if err := s.writeConfig(db); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go s.run(exited)
	if err := s.waitReady(ctx, exited); err != nil {
		s.Close(context.Background())
		return nil, err
	}
	metrics.ReplicaStarted(time.Now())
	s.lag = newLagSampler(s)
	go s.lag.run(s.stop)
	o.Logger.Info("replicating", "replica", o.URL.Redacted(), "sync_interval", o.SyncInterval, "retention", o.Retention, "litestream", bin)
	return s, nil
}

// Litestream's configuration, written as JSON (which its YAML reader takes).
type (
	lsConfig struct {
		Socket   lsSocket   `json:"socket"`
		Logging  lsLogging  `json:"logging"`
		Snapshot lsSnapshot `json:"snapshot"`
		// L0 files are what restores to a second: kept the whole retention.
		L0Retention string `json:"l0-retention"`
		DBs         []lsDB `json:"dbs"`
	}
	lsSocket struct {
		Enabled     bool   `json:"enabled"`
		Path        string `json:"path"`
		Permissions uint32 `json:"permissions"`
	}
	lsLogging struct {
		Level  string `json:"level"`
		Type   string `json:"type"`
		Stderr bool   `json:"stderr"`
	}
	lsSnapshot struct {
		Interval  string `json:"interval"`
		Retention string `json:"retention"`
	}
	lsDB struct {
		Path      string `json:"path,omitempty"`
		Dir       string `json:"dir,omitempty"`
		Pattern   string `json:"pattern,omitempty"`
		Recursive bool   `json:"recursive,omitempty"`
		Watch     bool   `json:"watch,omitempty"`
		// Litestream owns WAL checkpoints (see the package doc).
		MonitorInterval    string    `json:"monitor-interval"`
		MinCheckpointPageN int       `json:"min-checkpoint-page-count"`
		TruncatePageN      int       `json:"truncate-page-n"`
		BusyTimeout        string    `json:"busy-timeout"`
		Replica            lsReplica `json:"replica"`
	}
	lsReplica struct {
		URL          string `json:"url"`
		SyncInterval string `json:"sync-interval"`
	}
)

// WAL checkpoint thresholds handed to Litestream, in 32 KiB pages (the
// page size of sqlfs stores): a PASSIVE copy past 8 MiB of WAL, and a
// TRUNCATE, which holds the writer off while it runs, past 64 MiB, the
// size at which sqlstore's own WAL keeper copies the WAL.
const (
	minCheckpointPages = 256
	truncatePages      = 2048
)

// busyTimeout is how long Litestream waits for the store's write lock
// before giving a checkpoint up until its next WAL read. Its PASSIVE
// checkpoint first takes the write lock (a barrier transaction), and
// while it waits nothing is read from the WAL or uploaded: under a steady
// stream of durable commits SQLite's polling busy handler often missed
// the gaps between them for its whole default second, a 1 s stall of the
// replica each time, and the WAL grew to the forced TRUNCATE. With 100 ms
// the checkpoint is retried at the next read, 100 ms later
// (TestReplicationLag, see the README's "Replication lag").
const busyTimeout = 100 * time.Millisecond

func (s *Supervisor) writeConfig(db lsDB) error {
	db.MonitorInterval = "100ms"
	db.MinCheckpointPageN = minCheckpointPages
	db.TruncatePageN = truncatePages
	db.BusyTimeout = busyTimeout.String()
	db.Replica = lsReplica{URL: s.o.URL.String(), SyncInterval: s.o.SyncInterval.String()}
	// A snapshot every half retention kept one and a half: the oldest
	// kept is at least a retention old, so every second of it restores.
	r := s.o.Retention
	level := "info"
	if s.o.Logger.Enabled(context.Background(), slog.LevelDebug) {
		level = "debug"
	}
	c := lsConfig{
		Socket:      lsSocket{Enabled: true, Path: s.socket, Permissions: 0o600},
		Logging:     lsLogging{Level: level, Type: "json", Stderr: true},
		Snapshot:    lsSnapshot{Interval: (r / 2).String(), Retention: (r + r/2).String()},
		L0Retention: r.String(),
		DBs:         []lsDB{db},
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := s.config + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("replica config: %w", err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("replica config: %w", err)
	}
	return os.Rename(tmp, s.config)
}

// run starts litestream and starts it again, with backoff, each time it
// dies, until stop. The first exit before the socket answered goes to
// exited instead.
func (s *Supervisor) run(exited chan<- error) {
	defer close(s.done)
	// Pdeathsig is sent when the thread that started the child ends: keep
	// this goroutine on its thread, so litestream stops with the owner
	// (SIGKILL included) and never ships a store someone else now owns.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	backoff := s.o.RestartBackoff
	for {
		started := time.Now()
		err := s.runOnce()
		select {
		case <-s.stop:
			return
		default:
		}
		select {
		case <-s.ready:
		default:
			exited <- err
			return
		}
		if time.Since(started) > time.Minute {
			backoff = s.o.RestartBackoff
		}
		s.o.Logger.Error("litestream exited; starting it again", "err", err, "after", backoff)
		metrics.ReplicaRestarts.Inc()
		select {
		case <-s.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Minute)
	}
}

// runOnce runs litestream until it exits or stop, when it is asked to end
// (SIGTERM: its own final sync) and killed after 30 s.
func (s *Supervisor) runOnce() error {
	cmd := exec.Command(s.bin, "replicate", "-no-expand-env", "-config", s.config)
	cmd.Env = append(os.Environ(), s.o.Credentials.env()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = nil
	tail := &tailBuffer{}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start litestream: %w", err)
	}
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		s.forwardLog(stderr, tail)
	}()
	waited := make(chan error, 1)
	go func() {
		<-logged
		waited <- cmd.Wait()
	}()
	select {
	case err = <-waited:
	case <-s.stop:
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err = <-waited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			err = <-waited
		}
	}
	if err != nil {
		if t := tail.String(); t != "" {
			err = fmt.Errorf("%w: %s", err, t)
		}
	}
	return err
}

// forwardLog sends litestream's JSON log lines to the logger at their
// level, keeping the last lines for an error.
func (s *Supervisor) forwardLog(r io.Reader, tail *tailBuffer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var rec map[string]any
		if json.Unmarshal(line, &rec) != nil {
			tail.add(string(line))
			s.o.Logger.Info("litestream", "line", string(line))
			continue
		}
		msg, _ := rec["msg"].(string)
		lvl := slog.LevelInfo
		if l, ok := rec["level"].(string); ok {
			_ = lvl.UnmarshalText([]byte(l))
		}
		if lvl >= slog.LevelWarn {
			tail.add(msg)
		}
		attrs := []any{}
		for k, v := range rec {
			if k != "msg" && k != "level" && k != "time" {
				attrs = append(attrs, k, v)
			}
		}
		s.o.Logger.Log(context.Background(), lvl, "litestream: "+msg, attrs...)
	}
}

// tailBuffer keeps the last few lines of a child's errors.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (t *tailBuffer) add(l string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, l)
	if len(t.lines) > 5 {
		t.lines = t.lines[1:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "; ")
}

// waitReady waits for the control socket to answer.
func (s *Supervisor) waitReady(ctx context.Context, exited <-chan error) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		var info struct {
			PID int `json:"pid"`
		}
		if err := s.call(ctx, http.MethodGet, "/info", nil, &info); err == nil {
			close(s.ready)
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("litestream exited at start: %w", err)
		case <-ctx.Done():
			return fmt.Errorf("litestream did not answer on %s: %w", s.socket, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// errNotFound: litestream does not (yet) replicate that store.
var errNotFound = errors.New("litestream does not replicate this store")

// errGone: the store left litestream's sight (parked, removed) before its
// sync: its owner's close synced it, or let it go unsynced on purpose (a
// lease lost), and reported that.
var errGone = errors.New("the store is gone from the replicated directory")

// ctl is a client of litestream's control socket.
type ctl struct {
	socket string
	client *http.Client
}

func newCtl(stateDir string) ctl {
	sock := filepath.Join(stateDir, "litestream.sock")
	return ctl{socket: sock, client: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}}
}

// call does one request to litestream's control socket.
func (s ctl) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://litestream"+path, body)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		err := fmt.Errorf("litestream %s: %s: %s", path, resp.Status, e.Error)
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusConflict {
			err = fmt.Errorf("%w: %w", errNotFound, err)
		}
		return err
	}
	return json.Unmarshal(b, out)
}

// syncResponse is litestream's answer to POST /sync.
type syncResponse struct {
	TXID           uint64 `json:"txid"`
	ReplicatedTXID uint64 `json:"replicated_txid"`
}

// Sync returns once the replica holds everything committed to the store
// at path before the call (its WAL read and shipped), waiting for
// litestream to pick up a store it has not seen yet or to come back after
// dying, until ctx ends.
func (s *Supervisor) Sync(ctx context.Context, path string) error {
	p, err := realPath(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replica sync of %s: %w", path, errGone)
	}
	if err != nil {
		return err
	}
	for {
		asked := time.Now()
		var r syncResponse
		err := s.call(ctx, http.MethodPost, "/sync", map[string]any{"path": p, "wait": true}, &r)
		if err == nil && r.ReplicatedTXID >= r.TXID {
			s.ages.held(p, asked)
			return nil
		}
		if err == nil {
			err = fmt.Errorf("replica at transaction %d of %d", r.ReplicatedTXID, r.TXID)
		}
		if _, serr := os.Lstat(p); errors.Is(serr, fs.ErrNotExist) {
			return fmt.Errorf("replica sync of %s: %w (last: %w)", p, errGone, err)
		}
		select {
		case <-ctx.Done():
			metrics.ReplicaSyncErrors.Inc()
			return fmt.Errorf("replica sync of %s: %w (last: %w)", p, ctx.Err(), err)
		case <-s.done:
			return fmt.Errorf("replica sync of %s: replication stopped (last: %w)", p, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Release stops replicating the store at path, once synced (Sync): its
// owner closed it, and a store litestream keeps holds a read transaction,
// file descriptors and a monitor of its own. The store must leave the
// replicated directory's pattern next (a rename), or the directory watch
// takes it up again at its next write.
func (s *Supervisor) Release(ctx context.Context, path string) error {
	p, err := realPath(path)
	if err != nil {
		return err
	}
	// Out of the sync age whether or not litestream answers: its owner
	// moves the store out of litestream's sight next either way, and a
	// store litestream still lists is in sight by the samples.
	defer s.ages.forget(p)
	var r struct {
		Status string `json:"status"`
	}
	return s.call(ctx, http.MethodPost, "/unregister", map[string]any{"path": p}, &r)
}

// Status is how far a store's replica is behind.
type Status struct {
	Path string `json:"path"`
	// LocalTXID is the last transaction Litestream read from the store's
	// WAL, ReplicaTXID the last the object store holds.
	LocalTXID   uint64 `json:"local_txid"`
	ReplicaTXID uint64 `json:"replica_txid"`
	// LastSync is the last time the object store took an upload.
	LastSync time.Time `json:"last_sync,omitzero"`
	// Behind is how many transactions are not shipped yet.
	Behind uint64 `json:"behind"`
}

// Status reports every store litestream replicates.
func (s *Supervisor) Status(ctx context.Context) ([]Status, error) { return s.status(ctx) }

// StatusAt asks the litestream an owner supervises with state in stateDir
// (StoreStateDir, DirStateDir) how far behind each store is.
func StatusAt(ctx context.Context, stateDir string) ([]Status, error) {
	c := newCtl(stateDir)
	sts, err := c.status(ctx)
	if err != nil && !errors.Is(err, errNotFound) {
		return nil, fmt.Errorf("%w: no replication answers at %s (is the owner running with --replica?): %w", ErrNotReplicating, c.socket, err)
	}
	return sts, err
}

// ErrNotReplicating: no owner replicates there.
var ErrNotReplicating = errors.New("not replicating")

// listed is a store in litestream's GET /list.
type listed struct {
	Path       string     `json:"path"`
	LastSyncAt *time.Time `json:"last_sync_at"`
}

func (s ctl) list(ctx context.Context) ([]listed, error) {
	var list struct {
		Databases []listed `json:"databases"`
	}
	err := s.call(ctx, http.MethodGet, "/list", nil, &list)
	return list.Databases, err
}

func (s ctl) status(ctx context.Context) ([]Status, error) {
	dbs, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	var out []Status
	for _, d := range dbs {
		st := Status{Path: d.Path}
		if d.LastSyncAt != nil {
			st.LastSync = *d.LastSyncAt
		}
		var r syncResponse
		if err := s.call(ctx, http.MethodPost, "/sync", map[string]any{"path": d.Path}, &r); err != nil {
			return nil, err
		}
		st.LocalTXID, st.ReplicaTXID = r.TXID, r.ReplicatedTXID
		if r.TXID > r.ReplicatedTXID {
			st.Behind = r.TXID - r.ReplicatedTXID
		}
		out = append(out, st)
	}
	return out, nil
}

// Close ships what every store in sight has committed (until ctx ends),
// then stops litestream. A store that left its sight meanwhile (parked
// after its own final sync, or fenced) is not litestream's to ship.
func (s *Supervisor) Close(ctx context.Context) error {
	s.once.Do(func() {
		var errs []error
		select {
		case <-s.ready:
			dbs, err := s.list(ctx)
			if err != nil {
				errs = append(errs, fmt.Errorf("final replica sync: %w", err))
			}
			for _, d := range dbs {
				if err := s.Sync(ctx, d.Path); err != nil && !errors.Is(err, errGone) {
					errs = append(errs, err)
				}
			}
		default:
		}
		close(s.stop)
		<-s.done
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// pid is litestream's process id, for tests that kill it.
func (s *Supervisor) pid(ctx context.Context) (int, error) {
	var info struct {
		PID int `json:"pid"`
	}
	err := s.call(ctx, http.MethodGet, "/info", nil, &info)
	return info.PID, err
}
