package replica

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sqlfs/sqlfs/fleet"
	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// cuttable is a lease store a test can cut a host off from.
type cuttable struct {
	fleet.Lease
	cut atomic.Bool
}

var errCut = errors.New("cut off from the lease store")

func (c *cuttable) Renew(ctx context.Context, r fleet.Record) (fleet.Record, error) {
	if c.cut.Load() {
		return fleet.Record{}, errCut
	}
	return c.Lease.Renew(ctx, r)
}

func (c *cuttable) Acquire(ctx context.Context, id string, cl fleet.Claim) (fleet.Record, error) {
	if c.cut.Load() {
		return fleet.Record{}, errCut
	}
	return c.Lease.Acquire(ctx, id, cl)
}

// server is the S3 server of a test: the in-process fake, or weed in
// the integration suite.
type server struct {
	url  func(prefix string) string
	keys Credentials
}

func fakeServer(t *testing.T) server {
	s := newS3(t)
	return server{url: s.URL, keys: testKeys}
}

// base is the replica URL of prefix p.
func (s server) base(t *testing.T, p string) URL {
	t.Helper()
	u, err := ParseURL(s.url(p))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// member is a fleet host replicating to the shared replica.
type member struct {
	dir     *host.Dir
	sup     *Supervisor
	opener  *Opener
	lease   *cuttable
	fleet   *fleet.Fleet
	host    *host.Host
	handler http.Handler
}

func startMember(t *testing.T, srv server, base URL, ttl time.Duration) *member {
	t.Helper()
	return startMemberAt(t, srv, base, ttl, "http://127.0.0.1:1")
}

// startMemberAt is startMember advertising addr (nothing answers on
// ports 1 and 2 of the loopback: a forward to them fails to connect).
func startMemberAt(t *testing.T, srv server, base URL, ttl time.Duration, addr string) *member {
	t.Helper()
	ctx := context.Background()
	o := options(t, base)
	o.Credentials = srv.keys
	m := &member{dir: openDir(t)}
	var err error
	if m.sup, err = StartDir(ctx, m.dir.Root(), host.StoreName, o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.sup.Close(ctx) })
	l, err := fleet.OpenS3Lease(ctx, srv.url("leases"))
	if err != nil {
		t.Fatal(err)
	}
	m.lease = &cuttable{Lease: l}
	m.opener = &Opener{Dir: m.dir, Supervisor: m.sup, Options: o, SyncTimeout: 2 * time.Minute}
	m.fleet, err = fleet.New(fleet.Options{Lease: m.lease, Opener: m.opener, Replica: m.opener, Dir: m.dir.Root(), Addr: addr, TTL: ttl, Logger: o.Logger})
	if err != nil {
		t.Fatal(err)
	}
	m.host = host.New(host.Options{Opener: m.fleet, IdleTimeout: time.Hour, Logger: o.Logger})
	m.fleet.Bind(m.host)
	t.Cleanup(func() { m.host.Close(ctx) })
	m.handler = m.fleet.Handler(host.Handler(m.host, m.dir, host.HandlerOptions{Remote: m.fleet, Logger: o.Logger}), fleet.HandlerOptions{Dir: m.dir})
	return m
}

// do sends m a request, returning the status.
func (m *member) do(t *testing.T, method, path string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	m.handler.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Code
}

// write writes path in workspace id on m and commits it.
func (m *member) write(t *testing.T, id, path, content string) {
	t.Helper()
	ws, release, err := m.host.Acquire(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ts := toolsOf(t, ws)
	if _, err := ts.Write(context.Background(), tools.WriteInput{Path: path, Content: content}); err != nil {
		t.Fatal(err)
	}
	// A query of the audit trail commits first.
	if _, err := ts.Audit(context.Background(), sqlstore.AuditFilter{Limit: 1}); err != nil {
		t.Fatal(err)
	}
}

// read checks path in workspace id on m holds content.
func (m *member) read(t *testing.T, id, path, content string) {
	t.Helper()
	ws, release, err := m.host.Acquire(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	got, err := toolsOf(t, ws).Read(context.Background(), tools.ReadInput{Path: path})
	if err != nil || !strings.Contains(got.Content, content) {
		t.Fatalf("%s reads %q, %v; want %q", path, got.Content, err, content)
	}
}

// synced waits until the replica holds all workspace id's store on m
// committed.
func (m *member) synced(t *testing.T, id string) {
	t.Helper()
	stores, _ := filepath.Glob(filepath.Join(m.dir.Root(), id, "*", host.StoreName))
	stores = append(stores, m.dir.StorePath(id))
	for _, s := range stores {
		if _, err := os.Stat(s); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := m.sup.Sync(ctx, s); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no store of %s in %v", id, stores)
}

// twoMembers starts two fleet hosts sharing a fake S3 server's replica
// (base) and leases.
func twoMembers(t *testing.T, ttl time.Duration) (a, b *member, base URL) {
	srv := fakeServer(t)
	base = srv.base(t, "fleet")
	return startMember(t, srv, base, ttl), startMember(t, srv, base, ttl), base
}

// acquireOnceFree opens workspace id on m once no other host holds its
// lease (within a minute), and returns the open's error.
func (m *member) acquireOnceFree(t *testing.T, id string) error {
	t.Helper()
	var held *fleet.HeldError
	for deadline := time.Now().Add(testenv.Slack(time.Minute)); ; time.Sleep(100 * time.Millisecond) {
		_, release, err := m.host.Acquire(context.Background(), id)
		if err == nil {
			release()
			return nil
		}
		if !errors.As(err, &held) || time.Now().After(deadline) {
			return err
		}
	}
}

// pauseLitestream stops m's litestream (SIGSTOP) until the returned
// resume, or the test's end.
func (m *member) pauseLitestream(t *testing.T) (resume func()) {
	t.Helper()
	pid, err := m.sup.pid(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	resume = func() { once.Do(func() { syscall.Kill(pid, syscall.SIGCONT) }) }
	t.Cleanup(resume)
	return resume
}

// TestStaleHolderCannotChangeTheReplica is a split brain: host A's
// litestream is paused with a commit not shipped, A loses its lease, B
// takes the workspace over from the replica and writes, then A's
// litestream resumes and ships what it had (its final sync, its close
// flush). A restore must still return exactly B's tree, and pass check.
func TestStaleHolderCannotChangeTheReplica(t *testing.T) {
	ctx := context.Background()
	a, b, base := twoMembers(t, 3*time.Second)
	if err := a.dir.Create("ws", nil); err != nil {
		t.Fatal(err)
	}
	a.write(t, "ws", "one.txt", "from A, shipped\n")
	a.synced(t, "ws")

	resume := a.pauseLitestream(t)
	// More commits than B makes: shipped into B's path they would be
	// its newest transactions.
	for _, name := range []string{"stale1.txt", "stale2.txt", "stale3.txt", "stale4.txt", "stale5.txt"} {
		a.write(t, "ws", name, "from A, never shipped before B took over\n")
	}
	a.lease.cut.Store(true)

	// A fences itself; once its lease expired B takes the workspace.
	if err := b.acquireOnceFree(t, "ws"); err != nil {
		t.Fatalf("B acquiring the workspace: %v", err)
	}
	if a.fleet.Serving("ws") {
		t.Fatal("A still serves the workspace B holds")
	}
	b.read(t, "ws", "one.txt", "from A, shipped\n")
	b.write(t, "ws", "two.txt", "from B\n")
	b.synced(t, "ws")
	// A resumes: whatever it ships now must not reach what restores return.
	resume()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if st, _ := a.host.State("ws"); st == "hibernated" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("A never closed the workspace it lost")
		}
	}
	// What A's litestream still had in flight, its close flush included.
	time.Sleep(2 * time.Second)

	out := filepath.Join(t.TempDir(), "restored.sqlfs")
	if err := RestoreWorkspace(ctx, options(t, base), "ws", out, time.Time{}); err != nil {
		t.Fatalf("restore after the stale holder resumed: %v", err)
	}
	g := openFS(t, out)
	got := map[string]string{}
	for p := range tree(t, g) {
		b, err := g.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got[p] = string(b)
	}
	want := map[string]string{"/one.txt": "from A, shipped\n", "/two.txt": "from B\n"}
	if !maps.Equal(got, want) {
		t.Fatalf("the stale holder changed the replica:\n got %q\nwant %q", got, want)
	}
}

// TestCloseAfterParking shuts a fleet host down the way serve does: the
// host closes every workspace, then the supervisor's final sync of what
// litestream still replicates. Parked stores are out of its sight, synced
// at their own close (hibernated, handed off) or let go unsynced on
// purpose (their lease lost): the shutdown succeeds (serve exits 0), and
// the replica holds every write of the workspaces handed off.
func TestCloseAfterParking(t *testing.T) {
	for _, tc := range []struct {
		name     string
		leaseCut bool // every lease is lost before the shutdown
	}{
		{"handoff", false},
		{"leases lost", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			srv := fakeServer(t)
			base := srv.base(t, "fleet")
			m := startMember(t, srv, base, 3*time.Second)
			ids := []string{"ws-1", "ws-2", "ws-3"}
			for _, id := range ids {
				if err := m.dir.Create(id, nil); err != nil {
					t.Fatal(err)
				}
				m.write(t, id, "notes.txt", "first write of "+id+"\n")
				m.synced(t, id) // litestream replicates it
				m.write(t, id, "notes.txt", "last write of "+id+"\n")
			}
			if tc.leaseCut {
				m.lease.cut.Store(true)
				for _, id := range ids {
					waitState(t, m.host, id, "hibernated")
				}
			} else if err := m.host.Evict(ctx, ids[0]); err != nil {
				// One hibernates before the shutdown.
				t.Fatal(err)
			}
			if err := m.host.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if err := m.sup.Close(ctx); err != nil {
				t.Fatalf("shutdown after parking: %v", err)
			}
			if tc.leaseCut {
				return
			}
			for _, id := range ids {
				out := filepath.Join(t.TempDir(), id+".sqlfs")
				if err := RestoreWorkspace(ctx, options(t, base), id, out, time.Time{}); err != nil {
					t.Fatal(err)
				}
				if b, err := openFS(t, out).ReadFile("notes.txt"); err != nil || string(b) != "last write of "+id+"\n" {
					t.Errorf("the replica of %s has %q, %v; want its last write", id, b, err)
				}
			}
		})
	}
}

// waitState waits until h says workspace id is in state.
func waitState(t *testing.T, h *host.Host, id, state string) {
	t.Helper()
	for deadline := time.Now().Add(testenv.Slack(30 * time.Second)); ; time.Sleep(20 * time.Millisecond) {
		if st, _ := h.State(id); st == state {
			return
		}
		if time.Now().After(deadline) {
			st, _ := h.State(id)
			t.Fatalf("workspace %s is %s; want %s", id, st, state)
		}
	}
}

// TestStaleCopyOverAnEmptyReplica: host A serves a workspace whose
// writes never reach the replica (its litestream stopped from the start)
// and loses its lease. B, with no copy and nothing in the replica, must
// refuse it rather than serve it empty (the empty store would become the
// newest state); A, taking it again after B's generation, finds its own
// copy stale but the replica empty, and serves its copy. Before, A
// served the workspace empty (B answered no such workspace).
func TestStaleCopyOverAnEmptyReplica(t *testing.T) {
	ctx := context.Background()
	a, b, _ := twoMembers(t, 3*time.Second)
	resume := a.pauseLitestream(t)
	if err := a.dir.Create("ws", nil); err != nil {
		t.Fatal(err)
	}
	a.write(t, "ws", "only-on-a.txt", "acknowledged by A\n")
	a.lease.cut.Store(true)
	waitState(t, a.host, "ws", "hibernated")
	a.lease.cut.Store(false)

	if err := b.acquireOnceFree(t, "ws"); !errors.Is(err, ErrUnreplicated) {
		t.Fatalf("B acquiring the workspace once A's lease expired: %v; want %v", err, ErrUnreplicated)
	}
	resume()
	if err := a.acquireOnceFree(t, "ws"); err != nil {
		t.Fatalf("A acquiring the workspace again: %v", err)
	}
	a.read(t, "ws", "only-on-a.txt", "acknowledged by A\n")
	a.synced(t, "ws")
	if err := a.host.Evict(ctx, "ws"); err != nil {
		t.Fatal(err)
	}
	b.read(t, "ws", "only-on-a.txt", "acknowledged by A\n")
}

// TestRestoreAheadOfTheLease: host B, asked for a workspace whose holder
// A it cannot reach (the members' advertised address refuses), restores
// it while A's lease runs out, and serves that copy once it takes the
// lease. If A was not dead and shipped more since (behind), B must not
// serve the staged copy: it restores again and has A's last write.
func TestRestoreAheadOfTheLease(t *testing.T) {
	for _, tc := range []struct {
		name    string
		more    bool // A writes after B's staged restore
		outcome string
	}{
		{"current", false, "used"},
		{"behind", true, "behind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeServer(t)
			base := srv.base(t, "fleet")
			a := startMemberAt(t, srv, base, 3*time.Second, "http://127.0.0.1:1")
			b := startMemberAt(t, srv, base, 3*time.Second, "http://127.0.0.1:2")
			if err := a.dir.Create("ws", nil); err != nil {
				t.Fatal(err)
			}
			a.write(t, "ws", "one.txt", "first write\n")
			a.synced(t, "ws")
			if !tc.more {
				// Dead as far as the replica goes: A's own commits at
				// its fenced close never ship.
				a.pauseLitestream(t)
			}
			before := testutil.ToFloat64(metrics.ReplicaStaged.WithLabelValues(tc.outcome))

			if st := b.do(t, http.MethodPost, "/v1/workspaces/ws/tools/read"); st != http.StatusServiceUnavailable {
				t.Fatalf("B asked for A's workspace answers %d; want 503 (A unreachable)", st)
			}
			staged := filepath.Join(b.dir.Root(), ".restore", "ws.*.staged.sqlfs")
			for deadline := time.Now().Add(testenv.Slack(time.Minute)); ; time.Sleep(20 * time.Millisecond) {
				if m, _ := filepath.Glob(staged); len(m) > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("B made no staged restore of the workspace whose holder it could not reach")
				}
			}
			if tc.more {
				a.write(t, "ws", "two.txt", "written after B's staged restore\n")
				a.synced(t, "ws")
			}
			a.lease.cut.Store(true)
			if err := b.acquireOnceFree(t, "ws"); err != nil {
				t.Fatalf("B acquiring the workspace: %v", err)
			}
			b.read(t, "ws", "one.txt", "first write\n")
			if tc.more {
				b.read(t, "ws", "two.txt", "written after B's staged restore\n")
			}
			if got := testutil.ToFloat64(metrics.ReplicaStaged.WithLabelValues(tc.outcome)) - before; got != 1 {
				t.Errorf("staged restores %s: %v; want 1", tc.outcome, got)
			}
			if m, _ := filepath.Glob(staged); len(m) > 0 {
				t.Errorf("the staged copy is left behind: %v", m)
			}
		})
	}
}

// TestFirstGenerationOverObjects: a fleet host taking a workspace's first
// lease generation, with no local copy, whose restore finds nothing
// restorable while the replica holds objects of the workspace (an
// unreadable one at the path a host without a fleet replicates to;
// generations at or above the lease's, whose lease records were lost),
// refuses the open and names what it found, instead of starting the
// workspace empty over them (and replicating an empty store to a path
// that may hold another holder's transactions). A workspace the replica
// has no trace of starts new.
func TestFirstGenerationOverObjects(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string // objects under the fleet's replica
		want []string // in the error; none: opens new
	}{
		{name: "no trace", keys: []string{"other/gen-1/workspace.sqlfs/0000/0000000000000001-0000000000000001.ltx"}},
		{name: "an unreadable object at generation 0", keys: []string{"ws/workspace.sqlfs/0000/junk"}, want: []string{"workspace.sqlfs"}},
		{name: "generations at and above the lease's", keys: []string{
			"ws/gen-1/workspace.sqlfs/0000/0000000000000001-0000000000000001.ltx",
			"ws/gen-3/workspace.sqlfs/0000/0000000000000001-0000000000000001.ltx"}, want: []string{"gen-1", "gen-3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeServer(t)
			base := srv.base(t, "fleet")
			putObjects(t, base, srv.keys, tc.keys)
			m := startMember(t, srv, base, 3*time.Second)
			if err := m.dir.Create("ws", nil); err != nil {
				t.Fatal(err)
			}
			err := m.acquireOnceFree(t, "ws")
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("open of a workspace the replica has no trace of: %v", err)
				}
				return
			}
			wantNotRestorable(t, err, tc.want, m.dir.GenerationStorePath("ws", 1))
		})
	}
}
