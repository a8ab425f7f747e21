//go:build integration

package integration

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/s3test"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// TestPointInTime writes rounds of changes (new files, and a delete of one
// of the round before) a few seconds apart, then restores the
// replica at a second after each round and at one inside the gap before
// the next: each restore must hold exactly the load/ tree the audit trail
// says was committed before that second, no more, no less.
func TestPointInTime(t *testing.T) {
	s3 := s3test.Start(t, s3test.Options{})
	url := s3.URL("pitr/ws")
	o := startOwner(t, s3, filepath.Join(t.TempDir(), "ws.sqlfs"), url)
	c := o.client(t)
	const rounds = 4
	var marks []time.Time
	for r := range rounds {
		for k := range 3 {
			if err := writeFile(t, c, 10*r+k); err != nil {
				t.Fatal(err)
			}
		}
		if r > 0 {
			del, _ := json.Marshal(tools.DeleteInput{Path: "load/" + strconv.Itoa(10*(r-1))})
			if _, err := c.Call(t.Context(), "delete", del); err != nil {
				t.Fatal(err)
			}
		}
		o.waitSynced(t, committed(t, c), 2*time.Minute)
		// Two marks in the quiet gap before the next round: its first
		// whole second and the one after.
		first := time.Now().Truncate(time.Second).Add(time.Second)
		marks = append(marks, first, first.Add(time.Second))
		time.Sleep(time.Until(first.Add(time.Second)) + 300*time.Millisecond)
	}
	events, err := c.Audit(t.Context(), sqlstore.AuditFilter{PathPrefix: "/load/", Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		t.Fatal("the audit trail holds no change under load/")
	}
	for _, mark := range marks {
		want := treeAt(events, mark)
		export, took := restored(t, s3, url, "--timestamp", mark.UTC().Format(time.RFC3339))
		got := present(t, export)
		if !maps.Equal(got, want) {
			t.Errorf("restore at %s: load/ holds %v; the audit trail says %v", mark.Format(time.RFC3339), sorted(got), sorted(want))
			continue
		}
		t.Logf("restore at %s: %d files as the audit says, in %.2f s", mark.Format(time.RFC3339), len(want), took.Seconds())
	}
	t.Logf("REPORT point in time: %d restores, each the tree the audit trail has at its second; load average %s", len(marks), loadAverage())
}

// treeAt replays the audit trail's changes made before at into the set of
// load/N files present.
func treeAt(events []api.AuditEvent, at time.Time) map[int]bool {
	tree := map[int]bool{}
	num := func(p string) (int, bool) {
		n, err := strconv.Atoi(strings.TrimPrefix(p, "/load/"))
		return n, err == nil && strings.HasPrefix(p, "/load/")
	}
	for _, e := range events {
		if !e.Time.Before(at) || e.Result != "ok" {
			continue
		}
		n, ok := num(e.Path)
		if !ok {
			continue
		}
		switch e.Op {
		case "create":
			tree[n] = true
		case "unlink", "remove":
			delete(tree, n)
		case "rename":
			delete(tree, n)
			if m, ok := num(e.Path2); ok {
				tree[m] = true
			}
		}
	}
	return tree
}

func sorted(m map[int]bool) []int { return slices.Sorted(maps.Keys(m)) }
