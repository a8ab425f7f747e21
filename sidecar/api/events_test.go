package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

var errEnough = errors.New("enough lines")

// TestEventsResumed has writers change the workspace at random while a
// watcher reads the change stream, hanging up after a random number of
// lines and resuming after the last change it saw: it sees every change
// exactly once, in order.
func TestEventsResumed(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	e := serve(t, Options{}, false)
	ctx := t.Context()

	var wg sync.WaitGroup
	for w := range 4 {
		wseed := rng.Uint64()
		wg.Go(func() {
			r := rand.New(rand.NewPCG(wseed, 2))
			f := e.core.WithActor(fmt.Sprintf("writer:%d", w))
			dir := fmt.Sprintf("/w%d", w)
			if err := f.MkdirAll(dir, 0o755); err != nil {
				t.Error(err)
				return
			}
			for i := range 150 {
				name := fmt.Sprintf("%s/f%d", dir, r.IntN(10))
				switch r.IntN(5) {
				case 0:
					_ = f.Rename(name, fmt.Sprintf("%s/f%d", dir, r.IntN(10)))
				case 1:
					_ = f.Remove(name)
				case 2:
					_ = f.WriteFile("/secret", []byte("x"), 0o644) // refused: never a change
				default:
					if err := f.WriteFile(name, fmt.Appendf(nil, "%d", i), 0o644); err != nil {
						t.Error(err)
					}
				}
				if r.IntN(20) == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()

	var seen []int64
	cursor, last := int64(0), int64(-1)
	for reconnects := 0; last < 0 || cursor < last; reconnects++ {
		if last < 0 {
			select {
			case <-writersDone:
				if err := e.core.Flush(ctx); err != nil {
					t.Fatal(err)
				}
				var err error
				if last, err = e.core.Store().LastAuditSeq(ctx); err != nil {
					t.Fatal(err)
				}
			default:
			}
		}
		n, lines := 1+rng.IntN(40), 0
		err := e.c.Events(ctx, tools.WatchOptions{After: cursor}, func(l ChangeLine) error {
			switch l.Type {
			case "change":
				if l.Seq <= cursor {
					return fmt.Errorf("change %d after %d: repeated or out of order", l.Seq, cursor)
				}
				seen = append(seen, l.Seq)
			case "live", "heartbeat":
				if l.Seq < cursor {
					return fmt.Errorf("%s at %d after change %d", l.Type, l.Seq, cursor)
				}
			default:
				return fmt.Errorf("unexpected line %+v", l)
			}
			cursor = l.Seq
			if lines++; lines == n || l.Type == "live" && last >= 0 && cursor >= last {
				return errEnough
			}
			return nil
		})
		if !errors.Is(err, errEnough) {
			t.Fatalf("after %d reconnects: %v", reconnects, err)
		}
	}

	all, err := e.core.Store().Audit(ctx, sqlstore.AuditFilter{Limit: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, a := range all {
		if a.Result == "ok" {
			want = append(want, a.Seq)
		}
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("saw %d changes, the audit trail has %d successful ones:\nsaw  %v\nwant %v", len(seen), len(want), seen, want)
	}
	if len(want) < 400 {
		t.Fatalf("only %d changes: the writers did not run", len(want))
	}
}

// TestEventsFilter: path_prefix keeps a path and what is below it; hidden
// paths never appear, not even those changed before the policy hid them,
// nor the hidden side of a rename; refused attempts and bookkeeping
// (publish, checkpoint) are not changes.
func TestEventsFilter(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "ws.sqlfs")
	// Written before the policy hides "secret" and "*.key".
	before, err := sfs.Open(t.Context(), store, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/src/a", "/srcx", "/other", "/secret/k", "/src/b.key", "/src/moved"} {
		if err := before.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := before.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := before.Rename("/src/moved", "/secret/moved"); err != nil {
		t.Fatal(err)
	}
	if err := before.Rename("/secret/k", "/src/k"); err != nil {
		t.Fatal(err)
	}
	if _, err := before.Checkpoint(t.Context(), sfs.CheckpointOptions{Name: "c1"}); err != nil {
		t.Fatal(err)
	}
	if err := before.Close(); err != nil {
		t.Fatal(err)
	}
	core, err := sfs.Open(t.Context(), store, sfs.Options{Policy: sfs.Policy{Hidden: []string{"secret", "*.key"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	if err := core.WriteFile("/src/secret", []byte("x"), 0o644); err == nil {
		t.Fatal("writing a hidden name succeeded")
	}
	svc := tools.NewForCore(core, map[string]sidecar.Backend{"shell": testBackend{}}, tools.Options{})
	srv := httpServe(t, NewServer(Options{Tools: svc, Logger: quiet}))

	for _, c := range []struct {
		prefix string
		want   []string // op path [path2]
	}{
		{"", []string{"mkdir /src", "create /src/a", "write /src/a", "create /srcx", "write /srcx", "create /other", "write /other",
			"create /src/moved", "write /src/moved", "rename /src/moved", "rename  /src/k"}},
		{"src", []string{"mkdir /src", "create /src/a", "write /src/a", "create /src/moved", "write /src/moved", "rename /src/moved", "rename  /src/k"}},
		{"/workspace/src/a", []string{"create /src/a", "write /src/a"}},
		{"other", []string{"create /other", "write /other"}},
		{"secret", nil},
	} {
		got := changesUntilLive(t, srv, c.prefix)
		// Neither /secret's mkdir nor anything of *.key is there.
		want := strings.Join(c.want, "\n")
		if got != want {
			t.Errorf("path_prefix %q:\n got %s\nwant %s", c.prefix, got, want)
		}
		if strings.Contains(got, "secret") || strings.Contains(got, ".key") {
			t.Errorf("path_prefix %q: a hidden path leaked: %s", c.prefix, got)
		}
	}
}

// httpServe serves h on a loopback TCP port until the test ends and
// returns its base URL.
func httpServe(t *testing.T, h *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

// changesUntilLive reads the stream from the start until it is live and
// renders its changes, one "op path [path2]" a line; it also checks the
// raw lines for hidden names.
func changesUntilLive(t *testing.T, base, prefix string) string {
	t.Helper()
	c, err := Dial(t.Context(), base, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out []string
	err = c.Events(t.Context(), tools.WatchOptions{After: 0, PathPrefix: prefix}, func(l ChangeLine) error {
		if l.Type == "live" {
			return errEnough
		}
		s := l.Op + " " + l.Path
		if l.Path2 != "" {
			s += " " + l.Path2
		}
		out = append(out, s)
		return nil
	})
	if !errors.Is(err, errEnough) {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// TestEventsSlowClient: a watcher that stops reading never holds up the
// writers, and is cut off once a line waits past WriteTimeout.
func TestEventsSlowClient(t *testing.T) {
	e := serve(t, Options{WriteTimeout: 200 * time.Millisecond}, false)
	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if uc, ok := conn.(*net.UnixConn); ok {
		_ = uc.SetReadBuffer(4096)
	}
	fmt.Fprintf(conn, "GET /v1/events?after=0 HTTP/1.1\r\nHost: x\r\n\r\n")
	long := strings.Repeat("n", 200)
	start := time.Now()
	for i := range 3000 {
		if err := e.core.WriteFile(fmt.Sprintf("/%s%d", long, i%300), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if i%500 == 0 {
			if err := e.core.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.core.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("3000 writes with a stuck watcher: %v", time.Since(start))
	// The server cut the stuck stream: reading it now ends well before
	// the 6000 lines (create and write of each file) it would carry.
	_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	time.Sleep(time.Second) // past the write deadline
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("the stuck stream was not cut off: %v after %d bytes", err, len(b))
	}
	if n := strings.Count(string(b), `"type":"change"`); n >= 6000 {
		t.Fatalf("the stuck stream got all %d changes: nothing cut it off", n)
	}
	// They are all there for a watcher that keeps up.
	got := 0
	_, err = e.svc.Watch(t.Context(), tools.WatchOptions{After: 0}, func(ev []tools.ChangeEvent, _ int64) error {
		if len(ev) == 0 {
			return errEnough
		}
		got += len(ev)
		return nil
	})
	if !errors.Is(err, errEnough) || got != 6000 {
		t.Fatalf("a watcher saw %d changes (%v), want 6000", got, err)
	}
}

// TestWaitForChange: the tool answers at once when changes are waiting,
// waits for the next one otherwise, and times out with where to go on.
func TestWaitForChange(t *testing.T) {
	e := serve(t, Options{}, false)
	ctx := t.Context()
	call := func(args string) tools.WaitOutput {
		t.Helper()
		r, err := e.c.Call(ctx, "wait_for_change", []byte(args))
		if err != nil {
			t.Fatalf("wait_for_change %s: %v", args, err)
		}
		var out tools.WaitOutput
		if err := json.Unmarshal(r.Result, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	start := time.Now()
	out := call(`{"timeout_ms":300}`)
	if !out.TimedOut || len(out.Changes) != 0 || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("nothing changed: %+v after %v, want a timeout after 300 ms", out, time.Since(start))
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = e.core.WithActor("tester").WriteFile("/a", []byte("x"), 0o644)
	}()
	out = call(fmt.Sprintf(`{"after":%d,"timeout_ms":60000}`, out.Next))
	if out.TimedOut || len(out.Changes) == 0 || out.Changes[0].Path != "/a" || out.Changes[0].Actor != "tester" {
		t.Fatalf("after a write: %+v", out)
	}
	// The write's two changes (create, write) may land in two commits,
	// and the wait ends at the first.
	for seen := len(out.Changes); seen < 2; {
		more := call(fmt.Sprintf(`{"after":%d,"timeout_ms":60000}`, out.Next))
		if more.TimedOut || len(more.Changes) == 0 || more.Changes[0].Path != "/a" {
			t.Fatalf("the rest of the write: %+v", more)
		}
		seen += len(more.Changes)
		out.Next = more.Next
	}
	// Changes waiting are returned at once, limit at a time.
	for i := range 3 {
		_ = e.core.WriteFile(fmt.Sprintf("/b%d", i), nil, 0o644)
	}
	start = time.Now()
	page := call(fmt.Sprintf(`{"after":%d,"limit":2,"path_prefix":"b1"}`, out.Next))
	if len(page.Changes) != 1 || page.Changes[0].Path != "/b1" || time.Since(start) > testenv.Slack(10*time.Second) {
		t.Fatalf("path_prefix b1: %+v", page)
	}
	page = call(fmt.Sprintf(`{"after":%d,"limit":2}`, out.Next))
	if len(page.Changes) != 2 || page.Changes[0].Path != "/b0" || page.Changes[1].Path != "/b1" {
		t.Fatalf("limit 2: %+v", page)
	}
	page = call(fmt.Sprintf(`{"after":%d,"limit":2}`, page.Next))
	if len(page.Changes) != 1 || page.Changes[0].Path != "/b2" {
		t.Fatalf("the page after: %+v", page)
	}
	for _, bad := range []string{`{"timeout_ms":-1}`, `{"timeout_ms":120001}`, `{"limit":-1}`, `{"after":-5}`, `{"path_prefix":"/etc"}`} {
		if _, err := e.c.Call(ctx, "wait_for_change", []byte(bad)); err == nil {
			t.Errorf("wait_for_change %s: no error", bad)
		}
	}
}

// TestEventsWatchersShareCommits: the commits watchers force are one
// tick per workspace, shared by all of them: while a writer changes the
// workspace every millisecond, 50 watchers whose clients each take their
// own time commit no more often than one tick per 10 ms, as one does, and
// each sees every change.
func TestEventsWatchersShareCommits(t *testing.T) {
	e := serve(t, Options{}, false)
	for round, watchers := range []int{1, 50} {
		dir := fmt.Sprintf("/r%d", round)
		f := e.core.WithActor("writer")
		if err := f.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		last, err := e.core.Store().LastAuditSeq(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var live, done sync.WaitGroup
		live.Add(watchers)
		seen := make([]atomic.Int64, watchers) // the last change each saw
		for w := range watchers {
			done.Go(func() {
				once := sync.OnceFunc(live.Done)
				_, err := e.svc.Watch(ctx, tools.WatchOptions{After: last, PathPrefix: dir}, func(ev []tools.ChangeEvent, next int64) error {
					if len(ev) == 0 {
						once()
					}
					seen[w].Store(next)
					// Each watcher's client takes its own time, as over a
					// network, so their loops drift apart.
					time.Sleep(time.Duration(rand.IntN(20_000)) * time.Microsecond)
					return nil
				})
				once()
				if !errors.Is(err, context.Canceled) {
					t.Error(err)
				}
			})
		}
		live.Wait()
		before := testutil.ToFloat64(metrics.StoreCommits)
		start := time.Now()
		for i := 0; time.Since(start) < 500*time.Millisecond; i++ {
			if err := f.WriteFile(fmt.Sprintf("%s/%d", dir, i), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		wrote := time.Since(start)
		commits := testutil.ToFloat64(metrics.StoreCommits) - before
		if err := e.core.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		end, err := e.core.Store().LastAuditSeq(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			behind := 0
			for w := range watchers {
				if seen[w].Load() < end {
					behind++
				}
			}
			if behind == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d watchers did not reach change %d in a minute", behind, watchers, end)
			}
		}
		cancel()
		done.Wait()
		// A tick per 10 ms at most, whatever the count, and the writer's
		// own commit each second.
		bound := wrote.Seconds()*(100+1) + 3
		t.Logf("%d watchers: %v commits in %v of writing (bound %.0f)", watchers, commits, wrote, bound)
		if commits > bound {
			t.Errorf("%d watchers forced %v commits in %v, more than one per 10 ms (%.0f)", watchers, commits, wrote, bound)
		}
	}
}
