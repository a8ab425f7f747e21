package metrics

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// grafanaPanel is the part of a Grafana panel the checks need; rows nest panels.
type grafanaPanel struct {
	ID      int            `json:"id"`
	Title   string         `json:"title"`
	Panels  []grafanaPanel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// dashboardExprs returns every PromQL expression of docs/grafana/sqlfs.json with Grafana's
// variables replaced by values Prometheus accepts, keyed by panel title.
func dashboardExprs(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", "grafana", "sqlfs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []grafanaPanel `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	vars := strings.NewReplacer("$__rate_interval", "1m", "$job", ".*", "$instance", ".*")
	exprs := map[string][]string{}
	ids := map[int]string{}
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			if other, dup := ids[p.ID]; dup {
				t.Errorf("panels %q and %q share id %d", other, p.Title, p.ID)
			}
			ids[p.ID] = p.Title
			for _, tg := range p.Targets {
				exprs[p.Title] = append(exprs[p.Title], vars.Replace(tg.Expr))
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	return exprs
}

var metricName = regexp.MustCompile(`\b(sqlfs|go|process)_[a-z0-9_]+`)

// TestDashboardUsesExportedMetrics catches a dashboard that queries a metric this package does not
// export (a rename, a typo) and covers what issue 7 asks the dashboard to show.
func TestDashboardUsesExportedMetrics(t *testing.T) {
	touchAll()
	mfs, err := Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	families := map[string]bool{}
	for _, mf := range mfs {
		families[mf.GetName()] = true
	}
	used := map[string]bool{}
	for title, list := range dashboardExprs(t) {
		for _, e := range list {
			for _, name := range metricName.FindAllString(e, -1) {
				family := name
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if base, ok := strings.CutSuffix(name, suffix); ok && families[base] {
						family = base
					}
				}
				if !families[family] {
					t.Errorf("panel %q queries %s, which is not exported", title, name)
				}
				used[family] = true
			}
		}
	}
	for _, want := range []string{
		"sqlfs_fuse_requests_total", "sqlfs_fuse_request_duration_seconds", "sqlfs_meta_cache_hits_total",
		"sqlfs_meta_cache_misses_total", "sqlfs_store_commit_ops", "sqlfs_exec_total",
	} {
		if !used[want] {
			t.Errorf("dashboard does not show %s", want)
		}
	}
}

// TestDashboardPromQL parses every dashboard query with promtool as a recording rule.
func TestDashboardPromQL(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool", "prometheus")
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, list := range dashboardExprs(t) {
		for _, e := range list {
			expr, err := json.Marshal(e) // a JSON string is a valid YAML double-quoted scalar
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&rules, "      - record: dashboard:expr_%d\n        expr: %s\n", n, expr)
			n++
		}
	}
	path := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), promtool, "check", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s\nrules:\n%s", err, out, rules.String())
	}
	if !strings.Contains(string(out), fmt.Sprintf("%d rules found", n)) {
		t.Errorf("promtool did not check all %d queries:\n%s", n, out)
	}
}
