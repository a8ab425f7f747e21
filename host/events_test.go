package host_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

var errEnough = errors.New("enough")

// changes reads workspace id's change stream after after (as token) until
// it is live, and returns its changes as "op path" and where it stopped.
func (e *env) changes(id, token string, after int64) ([]string, int64) {
	e.t.Helper()
	if token == "" {
		token = operator
	}
	c, err := api.DialWorkspace(e.t.Context(), e.url, id, token)
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	var out []string
	err = c.Events(e.t.Context(), tools.WatchOptions{After: after}, func(l api.ChangeLine) error {
		after = l.Seq
		if l.Type == "live" {
			return errEnough
		}
		out = append(out, l.Op+" "+l.Path)
		return nil
	})
	if !errors.Is(err, errEnough) {
		e.t.Fatalf("events of %s: %v", id, err)
	}
	return out, after
}

// TestEventsAcrossHibernation: a watcher resuming after the workspace
// hibernated and woke gets exactly what changed meanwhile; each
// workspace's stream has its own changes only; a hidden glob set by PATCH
// hides earlier changes too.
func TestEventsAcrossHibernation(t *testing.T) {
	e := serve(t, host.Options{IdleTimeout: 40 * time.Millisecond})
	e.create("a")
	e.create("b")
	e.write("a", "one.txt", "1")
	e.write("b", "b.txt", "b")
	got, cursor := e.changes("a", "", 0)
	if strings.Join(got, ",") != "create /one.txt,write /one.txt" {
		t.Fatalf("a's changes: %v", got)
	}
	e.waitState("a", "hibernated")
	e.write("a", "two.pem", "2")
	e.waitState("a", "hibernated")
	e.write("a", "three.txt", "3")
	got, _ = e.changes("a", e.mint("a", 0).Secret, cursor)
	if strings.Join(got, ",") != "create /two.pem,write /two.pem,create /three.txt,write /three.txt" {
		t.Fatalf("a's changes after %d, across two hibernations: %v", cursor, got)
	}
	e.must(http.StatusOK, "PATCH", "/v1/workspaces/a", map[string]any{"policy": map[string]any{"hidden": []string{"*.pem"}}}, nil)
	e.waitState("a", "hibernated")
	got, _ = e.changes("a", "", 0)
	if s := strings.Join(got, ","); strings.Contains(s, "pem") || !strings.Contains(s, "three.txt") {
		t.Fatalf("a's changes once *.pem is hidden: %v", got)
	}
}

// TestEventsScope: a workspace token reads its own workspace's changes
// and waits for them, never another's.
func TestEventsScope(t *testing.T) {
	e := serve(t, host.Options{})
	e.create("a")
	e.create("b")
	e.write("b", "b-only.txt", "b")
	tokA := e.mint("a", 0).Secret
	for _, path := range []string{
		"/v1/workspaces/b/events?after=0",
		"/v1/workspaces/a/../b/events?after=0",
		"/v1/workspaces/B/events?after=0",
		"/v1/workspaces/b%2fevents?after=0",
	} {
		st, b := e.do("GET", path, tokA, nil)
		if st == http.StatusOK || strings.Contains(string(b), "b-only") {
			t.Errorf("a's token on GET %s: %d %s", path, st, b)
		}
	}
	st, b := e.do("POST", "/v1/workspaces/b/tools/wait_for_change", tokA, map[string]any{"after": 0})
	if st != http.StatusUnauthorized || strings.Contains(string(b), "b-only") {
		t.Errorf("a's token waiting on b: %d %s", st, b)
	}
	// Its own: answered at once with a's change only.
	e.write("a", "a.txt", "a")
	st, b = e.do("POST", "/v1/workspaces/a/tools/wait_for_change", tokA, map[string]any{"after": 0, "timeout_ms": 60000})
	if st != http.StatusOK || !strings.Contains(string(b), "/a.txt") || strings.Contains(string(b), "b-only") {
		t.Fatalf("a's token waiting on a: %d %s", st, b)
	}
	if got, _ := e.changes("a", tokA, 0); fmt.Sprint(got) != "[create /a.txt write /a.txt]" {
		t.Fatalf("a's stream: %v", got)
	}
}
