package host_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// serveAdmitting is serve with admission a.
func serveAdmitting(t *testing.T, a *host.Admission, ids ...string) *env {
	t.Helper()
	e := serveWith(t, host.Options{}, host.HandlerOptions{Admission: a})
	for _, id := range ids {
		e.create(id)
	}
	return e
}

// hold runs a sleep exec in workspace id and returns once it holds a
// turn (the only one: MaxRequests 1); wait waits for its end.
func (e *env) hold(a *host.Admission, id string, d time.Duration) (wait func()) {
	e.t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		st, b := e.do("POST", "/v1/workspaces/"+id+"/exec", "", tools.ExecInput{Command: sleep(d)})
		if st != http.StatusOK {
			e.t.Errorf("exec sleep in %s: %d %s", id, st, b)
		}
	}()
	waitUntil(e.t, func() bool { return a.InUse() == 1 }, "the sleep in "+id+" holding the turn")
	return func() { <-done }
}

func sleep(d time.Duration) string {
	return "sleep " + strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// queue sends a request of workspace id in the background (an ls, or an
// exec of command), returns once a.Queued() has grown by one, and
// reports its status on the channel.
func (e *env) queue(a *host.Admission, id, command string) <-chan int {
	e.t.Helper()
	before := a.Queued()
	ch := make(chan int, 1)
	go func() {
		if command != "" {
			st, _ := e.do("POST", "/v1/workspaces/"+id+"/exec", "", tools.ExecInput{Command: command})
			ch <- st
			return
		}
		st, _ := e.do("POST", "/v1/workspaces/"+id+"/tools/ls", "", map[string]any{"path": "."})
		ch <- st
	}()
	waitUntil(e.t, func() bool { return a.Queued() == before+1 }, "a request of "+id+" queued")
	return ch
}

func waitUntil(t *testing.T, ok func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(testenv.Slack(10 * time.Second))
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestAdmissionRefusals fills the host-wide queue and one workspace's
// share of it: the next request is refused at once with 429, code
// at_capacity, a Retry-After and a message naming the flag, and the
// requests that waited are served once the turn is free.
func TestAdmissionRefusals(t *testing.T) {
	for _, tc := range []struct {
		name          string
		queued, perWS int
		fill          []string // workspaces whose requests queue
		refused, flag string
		stillQueues   string // a workspace whose request still waits, "" for none
	}{
		{name: "host-wide", queued: 2, perWS: 8, fill: []string{"b", "c"}, refused: "d", flag: "--max-queued"},
		{name: "per workspace", queued: 8, perWS: 2, fill: []string{"b", "b"}, refused: "b", flag: "--max-queued-per-workspace", stillQueues: "c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := host.NewAdmission(host.AdmissionOptions{MaxRequests: 1, MaxQueued: tc.queued, MaxQueuedPerWorkspace: tc.perWS, MaxHold: time.Minute})
			e := serveAdmitting(t, a, "a", "b", "c", "d")
			wait := e.hold(a, "a", testenv.Slack(2*time.Second))
			var waiting []<-chan int
			for _, id := range tc.fill {
				waiting = append(waiting, e.queue(a, id, ""))
			}
			start := time.Now()
			resp, b := e.raw("POST", "/v1/workspaces/"+tc.refused+"/tools/ls", "", `{"path":"."}`)
			if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), `"at_capacity"`) || !strings.Contains(string(b), tc.flag) {
				t.Fatalf("past the bound: %d %s, want 429 at_capacity naming %s", resp.StatusCode, b, tc.flag)
			}
			if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 1 {
				t.Fatalf("Retry-After %q, want whole seconds, 1 or more", resp.Header.Get("Retry-After"))
			}
			if took := time.Since(start); took > testenv.Slack(time.Second) {
				t.Fatalf("the refusal took %v: it must not wait for a turn", took)
			}
			if tc.stillQueues != "" {
				waiting = append(waiting, e.queue(a, tc.stillQueues, ""))
			}
			wait()
			for i, ch := range waiting {
				if st := <-ch; st != http.StatusOK {
					t.Fatalf("queued request %d answered %d after the turn was free", i, st)
				}
			}
			if a.Queued() != 0 {
				t.Fatalf("%d still queued", a.Queued())
			}
		})
	}
}

// TestAdmissionRoundRobin: with one turn, a workspace with three requests
// waiting and another with one arriving after them, the other's is
// served second, not last. Each request sleeps a while, so that the
// order they are answered in is the order they were served in.
func TestAdmissionRoundRobin(t *testing.T) {
	a := host.NewAdmission(host.AdmissionOptions{MaxRequests: 1, MaxQueued: 16, MaxQueuedPerWorkspace: 16, MaxHold: time.Minute})
	e := serveAdmitting(t, a, "hold", "flood", "other")
	wait := e.hold(a, "hold", testenv.Slack(time.Second))
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	for _, id := range []string{"flood", "flood", "flood", "other"} {
		ch := e.queue(a, id, sleep(testenv.Slack(200*time.Millisecond)))
		wg.Go(func() {
			if st := <-ch; st != http.StatusOK {
				t.Errorf("%s: %d", id, st)
			}
			mu.Lock()
			order = append(order, id)
			mu.Unlock()
		})
	}
	wait()
	wg.Wait()
	if got := strings.Join(order, " "); got != "flood other flood flood" {
		t.Fatalf("served in the order %q, want flood other flood flood", got)
	}
}

// TestAdmissionHoldAndCancel: a request running past MaxHold gives its
// turn on, and one that gives up waiting leaves the queue without taking
// a turn away from the others.
func TestAdmissionHoldAndCancel(t *testing.T) {
	a := host.NewAdmission(host.AdmissionOptions{MaxRequests: 1, MaxQueued: 16, MaxQueuedPerWorkspace: 16, MaxHold: 200 * time.Millisecond})
	e := serveAdmitting(t, a, "long", "quick")
	long := testenv.Slack(5 * time.Second)
	start := time.Now()
	wait := e.hold(a, "long", long)
	if st, b := e.do("POST", "/v1/workspaces/quick/tools/ls", "", map[string]any{"path": "."}); st != http.StatusOK {
		t.Fatalf("ls beside a long exec: %d %s", st, b)
	}
	if took := time.Since(start); took >= long {
		t.Fatalf("ls waited %v, for the long exec to end", took)
	}
	wait()

	// A client gone while it waits: hold the turn again, queue a request
	// and cancel it.
	a2 := host.NewAdmission(host.AdmissionOptions{MaxRequests: 1, MaxQueued: 16, MaxQueuedPerWorkspace: 16, MaxHold: time.Minute})
	e2 := serveAdmitting(t, a2, "long", "quick")
	wait = e2.hold(a2, "long", testenv.Slack(time.Second))
	ctx, cancel := context.WithCancel(t.Context())
	gone := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", e2.url+"/v1/workspaces/quick/tools/ls", strings.NewReader(`{"path":"."}`))
		req.Header.Set("Authorization", "Bearer "+operator)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		gone <- err
	}()
	waitUntil(t, func() bool { return a2.Queued() == 1 }, "the request queued")
	cancel()
	if err := <-gone; err == nil {
		t.Fatal("the cancelled request was answered")
	}
	waitUntil(t, func() bool { return a2.Queued() == 0 }, "the cancelled request left the queue")
	wait()
	// The turn is back: two requests one after the other are served.
	for range 2 {
		if st, b := e2.do("POST", "/v1/workspaces/quick/tools/ls", "", map[string]any{"path": "."}); st != http.StatusOK {
			t.Fatalf("after a cancelled wait: %d %s", st, b)
		}
	}
}
