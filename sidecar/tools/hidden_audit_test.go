package tools_test

import (
	"fmt"
	"strings"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar/api/apitest"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// hiddenTrail serves apitest.HiddenTrail under its policy.
func hiddenTrail(t *testing.T) *tools.Service {
	t.Helper()
	core, err := sfs.Open(t.Context(), apitest.HiddenTrail(t), sfs.Options{Policy: sfs.Policy{Hidden: apitest.HiddenGlobs}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	return tools.NewForCore(core, nil, tools.Options{})
}

// TestAuditHidesHiddenPaths is a regression test: the audit trail named
// hidden paths to the agent that /v1/events kept them from.
func TestAuditHidesHiddenPaths(t *testing.T) {
	svc := hiddenTrail(t)
	render := func(ev []sqlstore.AuditEvent) string {
		var b strings.Builder
		for _, e := range ev {
			fmt.Fprintf(&b, "%d %s %s %s %s\n", e.Seq, e.Actor, e.Op, e.Path, e.Path2)
		}
		return b.String()
	}
	all, err := svc.Audit(t.Context(), sqlstore.AuditFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	got := render(all)
	if apitest.Leaks(got) {
		t.Errorf("audit names hidden paths:\n%s", got)
	}
	for _, want := range []string{"create /pub/b", "rename /pub/a \n", "rename  /pub/k", "link  /pub/b", "symlink /pub/s", "create /pub/last"} {
		if !strings.Contains(got, want) {
			t.Errorf("audit lacks %q:\n%s", want, got)
		}
	}
	// Paged one by one across runs of hidden events, every page is full
	// until the end: none looks like the end early.
	var paged []sqlstore.AuditEvent
	f := sqlstore.AuditFilter{Limit: 2}
	for {
		page, err := svc.Audit(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, page...)
		if len(page) < f.Limit {
			break
		}
		f.AfterSeq = page[len(page)-1].Seq
	}
	if p := render(paged); p != got {
		t.Errorf("paged by 2:\n%s\nwant\n%s", p, got)
	}
	// Path filters and op filters go through the same rule.
	for _, f := range []sqlstore.AuditFilter{{PathPrefix: "/secret"}, {Op: "rename"}, {Op: "link"}, {Actor: tools.Actor("e1")}} {
		ev, err := svc.Audit(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		if r := render(ev); apitest.Leaks(r) {
			t.Errorf("%+v: hidden paths:\n%s", f, r)
		}
	}

	ch, err := svc.Changes(t.Context(), "e1")
	if err != nil {
		t.Fatal(err)
	}
	if r := strings.Join(ch, " "); apitest.Leaks(r) || r != "pub/a pub/b" {
		t.Errorf("exec changes: %q, want %q", r, "pub/a pub/b")
	}

	diff, err := svc.DiffCheckpoints(t.Context(), tools.CheckpointActor, "c1", "c2")
	if err != nil {
		t.Fatal(err)
	}
	if r := fmt.Sprint(diff); apitest.Leaks(r) || !strings.Contains(r, "pub/last") {
		t.Errorf("checkpoint diff: %s", r)
	}

	// Back to c1 would remove the hidden files: refused, counting them.
	_, err = svc.RestoreCheckpoint(t.Context(), tools.CheckpointActor, "c1")
	if err == nil || apitest.Leaks(err.Error()) || !strings.Contains(err.Error(), "hidden") {
		t.Errorf("restore: %v", err)
	}
}
