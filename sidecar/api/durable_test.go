package api

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// TestToolAckDurable: a tool call that changes the workspace is answered
// only after a durable commit holding its change (the store shows it with
// no commit interval passing); one that only reads forces none.
func TestToolAckDurable(t *testing.T) {
	core, err := sfs.Open(t.Context(), filepath.Join(t.TempDir(), "ws.sqlfs"), sfs.Options{CommitInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	conn := Local{tools.NewForCore(core, map[string]sidecar.Backend{}, tools.Options{})}
	for _, tc := range []struct {
		tool, args string
		syncs      bool
		op         string // the audited op the store must hold at once
	}{
		{"write", `{"path":"a","content":"one\n"}`, true, "write"},
		{"read", `{"path":"a"}`, false, ""},
		{"edit", `{"path":"a","edits":[{"old_text":"one","new_text":"two"}]}`, true, "write"},
		{"ls", `{}`, false, ""},
		{"checkpoint", `{}`, true, "checkpoint"},
		{"delete", `{"path":"a"}`, true, "remove"},
		{"wait_for_change", `{"timeout_ms":1}`, false, ""},
	} {
		before := testutil.ToFloat64(metrics.StoreSyncCommits)
		var seq int64
		if ev, err := core.Store().Audit(t.Context(), sqlstore.AuditFilter{Limit: 100_000}); err == nil && len(ev) > 0 {
			seq = ev[len(ev)-1].Seq
		}
		if _, err := conn.Call(t.Context(), tc.tool, []byte(tc.args)); err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		if got := testutil.ToFloat64(metrics.StoreSyncCommits) - before; tc.syncs != (got > 0) {
			t.Errorf("%s: %v durable commits, want them: %v", tc.tool, got, tc.syncs)
		}
		if tc.op == "" {
			continue
		}
		// Read straight from the store, without the flush Audit does.
		ev, err := core.Store().Audit(t.Context(), sqlstore.AuditFilter{AfterSeq: seq, Op: tc.op})
		if err != nil || len(ev) == 0 {
			t.Errorf("%s answered before its commit: store shows %v %v", tc.tool, ev, err)
		}
	}
}
