package api

import (
	"io"
	"net/http"
	"strings"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/api/apitest"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// TestAuditRoutesHideHiddenPaths is a regression test: GET /v1/audit gave
// the agent's token "create /secret/key ok" that /v1/events left out. No
// route that reads the audit trail (audit, an exec's changes, a
// checkpoint diff) names a hidden path, and audit pages stay full across
// the events left out.
func TestAuditRoutesHideHiddenPaths(t *testing.T) {
	core, err := sfs.Open(t.Context(), apitest.HiddenTrail(t), sfs.Options{Policy: sfs.Policy{Hidden: apitest.HiddenGlobs}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	svc := tools.NewForCore(core, map[string]sidecar.Backend{"shell": testBackend{}}, tools.Options{})
	srv := httpServe(t, NewServer(Options{Tools: svc, Logger: quiet}))

	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(srv + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %s", path, resp.Status, b)
		}
		if apitest.Leaks(string(b)) {
			t.Errorf("GET %s names a hidden path: %s", path, b)
		}
		return string(b)
	}
	for _, p := range []string{"/v1/audit", "/v1/audit?path_prefix=secret", "/v1/audit?op=rename", "/v1/audit?op=link", "/v1/audit?actor=exec:e1",
		"/v1/execs/e1/changes", "/v1/checkpoints/c1/diff?to=c2"} {
		get(p)
	}
	all := get("/v1/audit")
	for _, want := range []string{`"op":"rename","path":"/pub/a","result"`, `"op":"rename","path":"","path2":"/pub/k"`, `"op":"link","path":"","path2":"/pub/b"`, `"path":"/pub/last"`} {
		if !strings.Contains(all, want) {
			t.Errorf("audit lacks %s:\n%s", want, all)
		}
	}
	// The client (sqlfs-exec log) pages by two, after the last event's
	// seq, until a short page: the run of hidden events must not end it.
	c, err := Dial(t.Context(), srv, "")
	must(err)
	var seen []string
	f := sqlstore.AuditFilter{Limit: 2}
	for {
		page, err := c.Audit(t.Context(), f)
		must(err)
		for _, e := range page {
			seen = append(seen, e.Op+" "+e.Path+" "+e.Path2)
		}
		if len(page) < f.Limit {
			break
		}
		f.AfterSeq = page[len(page)-1].Seq
	}
	whole, err := c.Audit(t.Context(), sqlstore.AuditFilter{})
	must(err)
	var want []string
	for _, e := range whole {
		want = append(want, e.Op+" "+e.Path+" "+e.Path2)
	}
	if got, want := strings.Join(seen, "\n"), strings.Join(want, "\n"); got != want || !strings.Contains(got, "write /pub/last") {
		t.Errorf("paged audit:\n%s\nwant\n%s", got, want)
	}
}
