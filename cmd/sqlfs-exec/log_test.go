package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// storeWithEvents makes a store holding events numbered first..last: it
// records last of them and prunes those before first.
func storeWithEvents(t *testing.T, first, last int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ws.db")
	keep := sqlstore.AuditRetention{MaxEvents: last - first + 1}
	st, err := sqlstore.Open(t.Context(), path, sqlstore.Options{AuditRetention: &keep})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := &sqlstore.Batch{}
	for i := range last {
		b.Audit = append(b.Audit, sqlstore.AuditEvent{Time: time.Now(), Actor: "test", Op: "write", Path: fmt.Sprintf("/f%d", i+1), Result: "ok"})
	}
	if err := st.Commit(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PruneAudit(t.Context(), time.Now()); err != nil {
		t.Fatal(err)
	}
	return path
}

var nextCommand = regexp.MustCompile(`(?m)^-- (\d+) events shown, more follow: sqlfs-exec (.*)$`)

// TestLogPages follows the command each page prints until the last page,
// and sees every event kept exactly once, and the note about pruned ones.
func TestLogPages(t *testing.T) {
	store := storeWithEvents(t, 3, 9)
	args := []string{"log", "--store", store, "--limit", "2"}
	var seen []string
	for page := 0; ; page++ {
		if page > 10 {
			t.Fatal("paging does not end")
		}
		out, stderr, code := sqlfsExec(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			seen = append(seen, strings.Fields(line)[0])
		}
		if pruned := strings.Contains(stderr, "events before 3 are not shown: pruned"); pruned != (page == 0) {
			t.Errorf("page %d: pruning note %v:\n%s", page, pruned, stderr)
		}
		m := nextCommand.FindStringSubmatch(stderr)
		if m == nil {
			break
		}
		if m[1] != "2" {
			t.Errorf("page %d says %s events shown", page, m[1])
		}
		args = strings.Fields(m[2])
	}
	if got := strings.Join(seen, " "); got != "3 4 5 6 7 8 9" {
		t.Fatalf("events seen over all pages: %s", got)
	}
}

func TestLogFilteredPageSaysNothingOfPruning(t *testing.T) {
	store := storeWithEvents(t, 3, 9)
	out, stderr, code := sqlfsExec(t, "", "log", "--store", store, "--path", "f9", "--limit", "5")
	if code != 0 || !strings.HasPrefix(out, "9\t") || stderr != "" {
		t.Fatalf("filtered log: %d %q %q", code, out, stderr)
	}
	if _, stderr, code := sqlfsExec(t, "", "log", "--store", store, "--limit", "0"); code == 0 || !strings.Contains(stderr, "--limit 0") {
		t.Fatalf("--limit 0: %d %s", code, stderr)
	}
}

func TestEventPaths(t *testing.T) {
	for _, tc := range []struct {
		event api.AuditEvent
		want  string
	}{
		{api.AuditEvent{Op: "write", Path: "/a"}, "/a"},
		{api.AuditEvent{Op: "rename", Path: "/a", Path2: "/b"}, "/a -> /b"},
		{api.AuditEvent{Op: "connect", Path: "/127.0.0.1:80", Path2: "denied by --egress-deny 127.0.0.1/32"}, "/127.0.0.1:80 (denied by --egress-deny 127.0.0.1/32)"},
		{api.AuditEvent{Op: "connect", Path: "/127.0.0.1:80"}, "/127.0.0.1:80"},
	} {
		if got := eventPaths(tc.event); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.event, got, tc.want)
		}
	}
}
