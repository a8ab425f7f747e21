package fleet_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sqlfs/sqlfs/fleet"
	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/s3test"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/api/apitest"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

const operator = "operator-token-0123456789"

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// cluster is hosts in this process sharing one lease bucket (s3test's fake
// on 127.0.0.1) and one replica. The replica is a test double of the replica
// package's contract: a workspace missing locally is restored from it on
// open, and a closed workspace is copied to it (the final sync) before
// its lease is released.
type cluster struct {
	t       *testing.T
	leases  string // lease URL
	replica string // directory standing in for the replica
	ttl     time.Duration
}

func newCluster(t *testing.T, ttl time.Duration) *cluster {
	return &cluster{
		t: t, ttl: ttl, replica: t.TempDir(),
		leases: s3test.StartFake(t, s3test.Options{}).URL("leases"),
	}
}

type member struct {
	t     *testing.T
	url   string
	dir   string
	fleet *fleet.Fleet
	host  *host.Host
	lease *switchLease
	// failNext fails the next open of a workspace (restoring.failNext).
	failNext atomic.Bool
	// failSync fails every final sync to the replica while set (the
	// object store unreachable).
	failSync atomic.Bool
	// prepared are the restores ahead of a lease the fleet asked of
	// this host's Opener.
	prepared prepared
	// gate holds a request in flight, once armed.
	gate gate
	srv  *http.Server
	stop sync.Once
}

// switchLease passes calls to the bucket until cut, then fails them as a
// partitioned host's would; onAcquire sees each successful acquisition.
type switchLease struct {
	fleet.Lease
	cut       atomic.Bool
	onAcquire func(fleet.Record)
}

var errPartitioned = errors.New("partitioned from the lease store")

func (s *switchLease) Acquire(ctx context.Context, id string, c fleet.Claim) (fleet.Record, error) {
	if s.cut.Load() {
		return fleet.Record{}, errPartitioned
	}
	r, err := s.Lease.Acquire(ctx, id, c)
	if err == nil && s.onAcquire != nil {
		s.onAcquire(r)
	}
	return r, err
}

func (s *switchLease) Renew(ctx context.Context, r fleet.Record) (fleet.Record, error) {
	if s.cut.Load() {
		return fleet.Record{}, errPartitioned
	}
	return s.Lease.Renew(ctx, r)
}

func (s *switchLease) Holder(ctx context.Context, id string) (fleet.Record, error) {
	if s.cut.Load() {
		return fleet.Record{}, errPartitioned
	}
	return s.Lease.Holder(ctx, id)
}

// restoring is the replica double's Opener wrapper.
type restoring struct {
	d       *host.Dir
	replica string
	// failNext, when set, fails the next open (a restore that failed).
	failNext *atomic.Bool
	failSync *atomic.Bool
	prepared *prepared
	// gate, when set, holds requests of the workspaces it opens.
	gate *gate
}

// prepared records the restores the fleet asked for ahead of a lease.
type prepared struct {
	mu           sync.Mutex
	asked, later []string // "ID@GEN"
}

func (p *prepared) add(later bool, id string, gen int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := fmt.Sprintf("%s@%d", id, gen)
	if later {
		p.later = append(p.later, e)
	} else {
		p.asked = append(p.asked, e)
	}
}

func (p *prepared) lists() (asked, later []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Sorted(slices.Values(p.asked)), slices.Sorted(slices.Values(p.later))
}

// Prepare and PrepareLater only record: this replica double restores at
// the open.
func (o restoring) Prepare(id string, gen int64, _ time.Time) { o.prepared.add(false, id, gen) }

func (o restoring) PrepareLater(id string, gen int64, _ time.Time) { o.prepared.add(true, id, gen) }

var errOpenFailed = errors.New("open failed (test)")

func (o restoring) OpenGeneration(ctx context.Context, id string, gen int64) (host.Workspace, error) {
	if o.failNext.CompareAndSwap(true, false) {
		return nil, errOpenFailed
	}
	store := o.d.GenerationStorePath(id, gen)
	if _, err := os.Stat(store); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(o.replica, id)); err == nil {
			if err := os.MkdirAll(filepath.Dir(store), 0o700); err != nil {
				return nil, err
			}
			if err := copyStore(filepath.Join(o.replica, id), store); err != nil {
				return nil, err
			}
		}
	}
	ws, err := o.d.OpenGeneration(ctx, id, gen)
	if err != nil {
		return nil, err
	}
	sy := &synced{Workspace: ws, from: store, to: filepath.Join(o.replica, id), fail: o.failSync}
	if o.gate != nil {
		return &gated{synced: sy, g: o.gate}, nil
	}
	return sy, nil
}

// synced copies a workspace to the replica double when it closed.
type synced struct {
	host.Workspace
	from, to string
	fail     *atomic.Bool
}

var errSyncFailed = errors.New("the replica is unreachable (test)")

func (s *synced) Close(ctx context.Context) error {
	return errors.Join(s.Workspace.Close(ctx), s.SyncReplica(ctx))
}

// SyncReplica is the final sync, tried again after a failed one.
func (s *synced) SyncReplica(context.Context) error {
	if s.fail.Load() {
		return errSyncFailed
	}
	return copyStore(s.from, s.to)
}

// CloseFenced skips the final sync, as replica's does: the lease is lost.
func (s *synced) CloseFenced(ctx context.Context) error { return s.Workspace.Close(ctx) }

func copyStore(from, to string) error {
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(from + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			os.Remove(to + suffix)
			continue
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(to+suffix, b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// start runs a host of c on a loopback port.
func (c *cluster) start() *member {
	t := c.t
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	d, err := host.OpenDir(dir, workspace.Options{}, api.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s3l, err := fleet.OpenS3Lease(t.Context(), c.leases)
	if err != nil {
		t.Fatal(err)
	}
	m := &member{t: t, url: "http://" + ln.Addr().String(), dir: dir, lease: &switchLease{Lease: s3l}}
	m.fleet, err = fleet.New(fleet.Options{
		Lease: m.lease, Opener: restoring{d: d, replica: c.replica, failNext: &m.failNext, failSync: &m.failSync, prepared: &m.prepared, gate: &m.gate},
		Dir: dir, Addr: m.url, TTL: c.ttl, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.host = host.New(host.Options{Opener: m.fleet, IdleTimeout: time.Hour, Logger: quiet})
	m.fleet.Bind(m.host)
	h := host.Handler(m.host, d, host.HandlerOptions{OperatorToken: operator, Logger: quiet})
	m.srv = &http.Server{Handler: m.fleet.Handler(h, fleet.HandlerOptions{OperatorToken: operator, Dir: d})}
	go m.srv.Serve(ln)
	t.Cleanup(func() {
		m.shutdown()
		d.Close()
	})
	return m
}

// shutdown stops m as SIGTERM does: no more requests, every workspace
// closed, replicated and its lease released.
func (m *member) shutdown() {
	m.stop.Do(func() {
		m.srv.Close()
		if err := m.host.Close(context.Background()); err != nil {
			m.t.Error(err)
		}
	})
}

func (m *member) do(method, path string, body any) (int, []byte) {
	m.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(m.t.Context(), method, m.url+path, r)
	if err != nil {
		m.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+operator)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (m *member) must(want int, method, path string, body any) []byte {
	m.t.Helper()
	st, b := m.do(method, path, body)
	if st != want {
		m.t.Fatalf("%s %s%s: %d %s, want %d", method, m.url, path, st, b, want)
	}
	return b
}

func (m *member) write(id, path, content string) {
	m.t.Helper()
	m.must(http.StatusOK, "POST", "/v1/workspaces/"+id+"/tools/write", map[string]any{"path": path, "content": content})
}

// create creates workspace id on m with one file.
func (m *member) create(id, path, content string) {
	m.t.Helper()
	m.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": id})
	m.write(id, path, content)
}

// read returns a file's content (the read tool's lines without their
// numbers).
func (m *member) read(id, path string) string {
	m.t.Helper()
	var out struct {
		Result tools.ReadOutput `json:"result"`
	}
	if err := json.Unmarshal(m.must(http.StatusOK, "POST", "/v1/workspaces/"+id+"/tools/read", map[string]any{"path": path}), &out); err != nil {
		m.t.Fatal(err)
	}
	var b strings.Builder
	for line := range strings.Lines(out.Result.Content) {
		_, text, _ := strings.Cut(line, "\t")
		b.WriteString(strings.TrimSuffix(text, "\n"))
	}
	return b.String()
}

func holder(t *testing.T, c *cluster, id string) fleet.Record {
	t.Helper()
	l, err := fleet.OpenS3Lease(t.Context(), c.leases)
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Holder(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestForwarding: requests for a workspace another host holds reach it,
// tools, streamed exec output and MCP alike, with three hosts.
func TestForwarding(t *testing.T) {
	c := newCluster(t, time.Minute)
	a, b, cc := c.start(), c.start(), c.start()
	a.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": "w"})
	if r := holder(t, c, "w"); r.Addr != a.url || !r.Live(time.Now()) {
		t.Fatalf("lease after create: %+v, want held by %s", r, a.url)
	}
	b.write("w", "from-b.txt", "b")
	if got := a.read("w", "from-b.txt"); got != "b" {
		t.Fatalf("a reads %q", got)
	}
	if got := cc.read("w", "from-b.txt"); got != "b" {
		t.Fatalf("c reads %q", got)
	}
	if !a.fleet.Serving("w") || b.fleet.Serving("w") || cc.fleet.Serving("w") {
		t.Fatal("w must be served by a alone")
	}
	if _, err := os.Stat(filepath.Join(b.dir, "w")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("b made a local copy of w: %v", err)
	}

	// An exec through b streams: its first line arrives while it runs.
	body, _ := json.Marshal(map[string]any{"command": "echo one; sleep 1; echo two"})
	req, _ := http.NewRequestWithContext(t.Context(), "POST", b.url+"/v1/workspaces/w/exec", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+operator)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var sawOne time.Duration
	var lines []string
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			lines = append(lines, line)
			if sawOne == 0 && strings.Contains(line, "one") {
				sawOne = time.Since(start)
			}
		}
		if err != nil {
			break
		}
	}
	total := time.Since(start)
	if sawOne == 0 || !strings.Contains(strings.Join(lines, ""), "two") || !strings.Contains(lines[len(lines)-1], `"exit"`) {
		t.Fatalf("exec stream through b: %q", lines)
	}
	if total-sawOne < 500*time.Millisecond {
		t.Fatalf("the first line came %v after the start, the end %v: the stream was buffered", sawOne, total)
	}

	// MCP through c, a session kept across requests.
	hc := &http.Client{Transport: apitest.Bearer{Token: operator}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: cc.url + "/v1/workspaces/w/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, f := range []string{"m1.txt", "m2.txt"} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"path": f, "content": "via mcp"}})
		if err != nil || res.IsError {
			t.Fatalf("mcp write through c: %+v %v", res, err)
		}
	}
	if got := a.read("w", "m2.txt"); got != "via mcp" {
		t.Fatalf("a reads %q", got)
	}

	// Without a credential nothing is forwarded that the holder would not
	// refuse itself.
	resp2, err := http.Post(b.url+"/v1/workspaces/w/tools/read", "application/json", strings.NewReader(`{"path":"from-b.txt"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token through b: %d", resp2.StatusCode)
	}
}

// TestHandoff: a host shutting down replicates its workspaces and
// releases their leases, so the next host asked serves them at once, not
// after the TTL.
func TestHandoff(t *testing.T) {
	c := newCluster(t, time.Minute)
	a, b := c.start(), c.start()
	for _, id := range []string{"w1", "w2"} {
		a.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": id})
		a.write(id, "f.txt", "written on a to "+id)
	}
	a.shutdown()
	if r := holder(t, c, "w1"); r.Live(time.Now()) || !r.Released {
		t.Fatalf("lease of w1 after a's shutdown: %+v", r)
	}
	start := time.Now()
	for _, id := range []string{"w1", "w2"} {
		if got := b.read(id, "f.txt"); got != "written on a to "+id {
			t.Fatalf("b reads %q from %s", got, id)
		}
	}
	if d := time.Since(start); d > c.ttl/2 {
		t.Fatalf("b took %v to serve the handed-off workspaces (TTL %v)", d, c.ttl)
	}
	if r := holder(t, c, "w1"); r.Addr != b.url || r.Generation != 2 {
		t.Fatalf("lease of w1: %+v, want generation 2 held by b", r)
	}
}

// TestStaleLocalCopy: a host that served a workspace, then saw another
// host serve it, must not serve its own old copy again.
func TestStaleLocalCopy(t *testing.T) {
	c := newCluster(t, time.Minute)
	a, b := c.start(), c.start()
	a.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": "w"})
	a.write("w", "f.txt", "old")
	// a closes w (final sync, lease released); b takes it.
	if err := a.host.Evict(t.Context(), "w"); err != nil {
		t.Fatal(err)
	}
	b.write("w", "f.txt", "new")
	if err := b.host.Evict(t.Context(), "w"); err != nil {
		t.Fatal(err)
	}
	// a still has its copy, "old", on disk.
	if got := a.read("w", "f.txt"); got != "new" {
		t.Fatalf("a serves %q: its stale copy", got)
	}
	if r := holder(t, c, "w"); r.Generation != 3 || r.Addr != a.url {
		t.Fatalf("lease %+v", r)
	}
}

// syncedPair is two hosts of a cluster with lease TTL ttl, a holding
// workspace w: f.txt ("before") in the replica (a closed w, its final
// sync, and took it again), f2.txt ("after the sync") not.
func syncedPair(t *testing.T, ttl time.Duration) (a, b *member) {
	t.Helper()
	c := newCluster(t, ttl)
	a, b = c.start(), c.start()
	a.create("w", "f.txt", "before")
	if err := a.host.Evict(t.Context(), "w"); err != nil {
		t.Fatal(err)
	}
	a.write("w", "f2.txt", "after the sync")
	return a, b
}

// TestFencing: a holder cut off from the lease store stops serving its
// workspace before the lease expires, so that when another host takes it
// no two hosts ever serve it at once; the cut-off host, healed, forwards.
func TestFencing(t *testing.T) {
	ttl := 1500 * time.Millisecond
	a, b := syncedPair(t, ttl)
	var overlap atomic.Bool
	b.lease.onAcquire = func(fleet.Record) {
		if a.fleet.Serving("w") {
			overlap.Store(true)
		}
	}
	cut := time.Now()
	a.lease.cut.Store(true)
	// a stops serving w within TTL*2/3 of its last renewal, before the
	// lease could expire, and closes it (given more time: a loaded
	// machine closes slowly).
	for a.fleet.Serving("w") {
		if time.Since(cut) > ttl {
			t.Fatalf("a still serves w %v after losing the lease store", time.Since(cut))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for a.host.Open() > 0 {
		if time.Since(cut) > 10*ttl {
			t.Fatalf("a has not closed w %v after losing the lease store", time.Since(cut))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// a cannot take any workspace meanwhile, and refuses rather than
	// guesses.
	if st, body := a.do("POST", "/v1/workspaces/w/tools/write", map[string]any{"path": "f.txt", "content": "from the cut-off host"}); st != http.StatusServiceUnavailable {
		t.Fatalf("write through the cut-off host: %d %s", st, body)
	}
	// b waits for the expiry, then serves w restored from the replica:
	// a's final sync was skipped, its lease being lost, so b has what the
	// last sync had.
	for {
		st, body := b.do("POST", "/v1/workspaces/w/tools/write", map[string]any{"path": "g.txt", "content": "from b"})
		if st == http.StatusOK {
			break
		}
		if st != http.StatusServiceUnavailable || time.Since(cut) > 10*ttl {
			t.Fatalf("b: %d %s after %v", st, body, time.Since(cut))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if overlap.Load() {
		t.Fatal("b acquired w while a still served it")
	}
	if took := time.Since(cut); took < ttl/2 {
		t.Fatalf("b served w %v after the cut, before a's lease could have expired", took)
	}
	if got := b.read("w", "f.txt"); got != "before" {
		t.Fatalf("b reads %q", got)
	}
	a.lease.cut.Store(false)
	if got := a.read("w", "g.txt"); got != "from b" {
		t.Fatalf("a, healed, reads %q", got)
	}
	if a.fleet.Serving("w") || !b.fleet.Serving("w") {
		t.Fatal("w must be served by b alone")
	}
}

// TestCreateExisting: an id the fleet has leased before is taken, on
// every host, also while nobody holds it.
func TestCreateExisting(t *testing.T) {
	c := newCluster(t, time.Minute)
	a, b := c.start(), c.start()
	a.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": "w"})
	a.write("w", "f.txt", "a's")
	b.must(http.StatusConflict, "POST", "/v1/workspaces", map[string]any{"id": "w"})
	if err := a.host.Evict(t.Context(), "w"); err != nil {
		t.Fatal(err)
	}
	b.must(http.StatusConflict, "POST", "/v1/workspaces", map[string]any{"id": "w"})
	if got := a.read("w", "f.txt"); got != "a's" {
		t.Fatalf("a reads %q", got)
	}
	b.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": "w2"})
}

// TestCopyKeptAfterAFailedOpen: a host whose lease on a workspace lapsed
// holds the only copy of its last writes (its final sync skipped, the
// replica behind). Its next open fails after taking the lease (a restore
// or store error); the one after must still find that copy its own. The
// generation the failed open took was this host's: before, its marker
// named the one before, the copy looked another host's, was set aside,
// and the workspace came back from the replica, here as an empty store.
func TestCopyKeptAfterAFailedOpen(t *testing.T) {
	ttl := 1500 * time.Millisecond
	c := newCluster(t, ttl)
	a := c.start()
	a.must(http.StatusCreated, "POST", "/v1/workspaces", map[string]any{"id": "w"})
	a.write("w", "f.txt", "acknowledged")
	cut := time.Now()
	a.lease.cut.Store(true)
	for a.host.Open() > 0 {
		if time.Since(cut) > 10*ttl {
			t.Fatalf("a has not closed w %v after losing the lease store", time.Since(cut))
		}
		time.Sleep(10 * time.Millisecond)
	}
	a.lease.cut.Store(false)
	before := holder(t, c, "w").Generation
	a.failNext.Store(true)
	// The request that failed to open w answers the failure, under one
	// acquisition. Before, the host's handler opened w again: two
	// generations a refused request (and this one served).
	if st, b := a.do("POST", "/v1/workspaces/w/tools/read", map[string]any{"path": "f.txt"}); st != http.StatusInternalServerError || !strings.Contains(string(b), errOpenFailed.Error()) {
		t.Errorf("the read whose open failed answers %d %s; want 500 and the open's error", st, b)
	}
	if got := holder(t, c, "w").Generation; got != before+1 {
		t.Errorf("one failed open took the lease from generation %d to %d; want one acquisition", before, got)
	}
	if got := a.read("w", "f.txt"); got != "acknowledged" {
		t.Fatalf("a reads %q after a failed open; want its own copy's", got)
	}
}

// TestFailedFinalSyncKeepsTheLease: a workspace whose final sync to the
// replica failed (the object store down) at hibernation keeps its lease,
// renewed, and its store in place in the replicator's sight: no other
// host restores it without its last acknowledged writes, requests reach
// it on its host, and once the replica is back the host ships them,
// parks the store and releases the lease. Before, the store was parked
// and the lease left to lapse: b then served w from the replica, empty.
func TestFailedFinalSyncKeepsTheLease(t *testing.T) {
	ttl := 1500 * time.Millisecond
	c := newCluster(t, ttl)
	a, b := c.start(), c.start()
	a.create("w", "f.txt", "acknowledged")
	a.failSync.Store(true)
	if err := a.host.Evict(t.Context(), "w"); err != nil {
		t.Fatal(err)
	}
	store := host.GenerationStore(a.dir, "w", 1)
	time.Sleep(2 * ttl)
	if r := holder(t, c, "w"); r.Addr != a.url || !r.Live(time.Now()) || r.Generation != 1 {
		t.Fatalf("lease of w %v after a failed final sync: %+v; want a's generation 1, live", 2*ttl, r)
	}
	if _, err := os.Stat(store); err != nil {
		t.Fatalf("the store of w left its place after a failed final sync: %v", err)
	}
	// Asked through b, a serves it: its own store, under the kept lease.
	if got := b.read("w", "f.txt"); got != "acknowledged" {
		t.Fatalf("b reads %q", got)
	}
	if a.host.Open() != 1 || b.host.Open() != 0 {
		t.Fatalf("open: a %d, b %d; want w on a", a.host.Open(), b.host.Open())
	}
	// Closed again, still failing; then the replica comes back.
	if err := a.host.Evict(t.Context(), "w"); err != nil {
		t.Fatal(err)
	}
	a.failSync.Store(false)
	deadline := time.Now().Add(testenv.Slack(10 * time.Second))
	for r := holder(t, c, "w"); !r.Released; r = holder(t, c, "w") {
		if time.Now().After(deadline) {
			t.Fatalf("lease of w once the replica is back: %+v; want released", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(a.dir, "w", host.ParkedName)); err != nil {
		t.Fatalf("w not parked after its sync: %v", err)
	}
	if got := b.read("w", "f.txt"); got != "acknowledged" {
		t.Fatalf("b reads %q from the replica", got)
	}
	if r := holder(t, c, "w"); r.Addr != b.url || r.Generation != 2 {
		t.Fatalf("lease of w: %+v, want generation 2 held by b", r)
	}
}

// TestDeadHolderSwept: host B, asked for a workspace whose holder A does
// not answer (its listener closed, its leases still live), has the
// workspace restored ahead of the lease first and every other workspace
// A holds behind it, once however many of A's are asked for; none of
// live host C's, and it takes no lease doing so: every record is still
// A's or C's, at the generation they took.
func TestDeadHolderSwept(t *testing.T) {
	c := newCluster(t, time.Minute)
	a, b, cc := c.start(), c.start(), c.start()
	for _, id := range []string{"a1", "a2", "a3"} {
		a.create(id, "f", "A's")
	}
	cc.create("c1", "f", "C's")
	before := map[string]fleet.Record{}
	for _, id := range []string{"a1", "a2", "a3", "c1"} {
		before[id] = holder(t, c, id)
	}
	a.srv.Close() // dead, as far as forwarding goes

	for _, id := range []string{"a1", "a2"} {
		if st, body := b.do("POST", "/v1/workspaces/"+id+"/tools/read", map[string]any{"path": "f"}); st != http.StatusServiceUnavailable {
			t.Fatalf("B asked for %s of unreachable A: %d %s; want 503", id, st, body)
		}
	}
	wantAsked, wantLater := []string{"a1@1", "a2@1"}, []string{"a1@1", "a2@1", "a3@1"}
	var asked, later []string
	for deadline := time.Now().Add(testenv.Slack(10 * time.Second)); ; time.Sleep(10 * time.Millisecond) {
		if asked, later = b.prepared.lists(); slices.Equal(later, wantLater) || time.Now().After(deadline) {
			break
		}
	}
	if !slices.Equal(asked, wantAsked) || !slices.Equal(later, wantLater) {
		t.Fatalf("B prepared %v, then %v in the background; want %v, then %v", asked, later, wantAsked, wantLater)
	}
	time.Sleep(testenv.Slack(100 * time.Millisecond)) // no second sweep
	if _, again := b.prepared.lists(); !slices.Equal(again, wantLater) {
		t.Errorf("B prepared %v in the background after the second request; want the one sweep's %v", again, wantLater)
	}
	for id, r := range before {
		if now := holder(t, c, id); now.Generation != r.Generation || now.Instance != r.Instance {
			t.Errorf("%s's lease after B's sweep is %+v; want %+v untouched", id, now, r)
		}
	}
	if b.fleet.Serving("a3") {
		t.Error("B serves a3, which it only prepared")
	}
}

// TestEmptyStoreLeftBehind: a holder that lost its lease parked its copy
// (closed without a final sync: the copy alone has its last acknowledged
// write), and an empty store file then appeared where the copy was (what
// SQLite makes when the replicator opens the store's name again after
// the store moved away). Taking the lease again, the host serves its
// copy, the write intact, and removes the empty file; so does a host
// starting (ParkAll). Before, parking the empty file replaced the copy:
// the write was gone and every open failed on the 0-byte store.
func TestEmptyStoreLeftBehind(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wal     bool // a WAL beside the empty file
		restart bool // ParkAll, as a host starting on the folder does
	}{
		{name: "reopen"},
		{name: "reopen with a WAL", wal: true},
		{name: "restart", restart: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ttl := 1500 * time.Millisecond
			c := newCluster(t, ttl)
			a := c.start()
			a.create("w", "f.txt", "acknowledged")
			cut := time.Now()
			a.lease.cut.Store(true)
			for a.host.Open() > 0 {
				if time.Since(cut) > testenv.Slack(10*ttl) {
					t.Fatalf("a has not closed w %v after losing the lease store", time.Since(cut))
				}
				time.Sleep(10 * time.Millisecond)
			}
			a.lease.cut.Store(false)
			empty := host.GenerationStore(a.dir, "w", 1)
			if err := os.WriteFile(empty, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.wal {
				if err := os.WriteFile(empty+"-wal", []byte("not this store's WAL"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.restart {
				if err := fleet.ParkAll(a.dir); err != nil {
					t.Fatal(err)
				}
			}
			if got := a.read("w", "f.txt"); got != "acknowledged" {
				t.Fatalf("a reads %q; want its own copy's", got)
			}
			if err := a.host.Evict(t.Context(), "w"); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(filepath.Join(a.dir, "w", host.ParkedName)); err != nil || fi.Size() == 0 {
				t.Fatalf("parked copy after the close: %v, %v", fi, err)
			}
			for _, p := range []string{empty, empty + "-wal"} {
				if fi, err := os.Stat(p); err == nil {
					t.Errorf("%s left in place (%d bytes)", p, fi.Size())
				}
			}
		})
	}
}
