package api

import (
	"errors"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

func TestCheckUTF8JSON(t *testing.T) {
	for _, c := range []struct {
		name, body string
		ok         bool
	}{
		{"ascii", `{"path":"a"}`, true},
		{"multibyte", `{"path":"é日本😀"}`, true},
		{"escaped pair", `{"path":"\ud83d\ude00"}`, true},
		{"escaped backslash then u", `{"path":"\\ud800"}`, true},
		{"escaped U+FFFD is what was meant", `{"path":"\ufffd"}`, true},
		{"raw invalid byte", "{\"path\":\"a\xffb\"}", false},
		{"truncated sequence", "{\"path\":\"\xe6\x97\"}", false},
		{"lone high surrogate", `{"path":"\ud800x"}`, false},
		{"lone low surrogate", `{"path":"\udc00"}`, false},
		{"high then high", `{"path":"\ud800\ud800"}`, false},
		{"high at the end", `{"path":"\ud83d`, false},
	} {
		err := checkUTF8JSON([]byte(c.body))
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok %v", c.name, err, c.ok)
		}
	}
}

// TestInvalidUTF8Refused: invalid UTF-8 in paths and content was replaced
// with U+FFFD and written; now it is a 400 and nothing is written.
func TestInvalidUTF8Refused(t *testing.T) {
	e := serve(t, Options{}, false)
	for _, c := range []struct {
		name, method, path, body string
	}{
		{"raw byte in path", "POST", "/v1/tools/write", "{\"path\":\"a\xff\",\"content\":\"x\"}"},
		{"raw byte in content", "POST", "/v1/tools/write", "{\"path\":\"b\",\"content\":\"\xff\xfe\"}"},
		{"surrogate in path", "POST", "/v1/tools/write", `{"path":"c\udc80","content":"x"}`},
		{"exec command", "POST", "/v1/exec", "{\"command\":\"echo \xff > d\"}"},
		{"query", "GET", "/v1/audit?path_prefix=" + url.QueryEscape("a\xff"), ""},
		{"export source", "GET", "/v1/export?src=%FF", ""},
	} {
		status, body := e.raw(t, c.method, c.path, c.body)
		if status != 400 || !strings.Contains(body, "UTF") {
			t.Errorf("%s: %d %s", c.name, status, body)
		}
	}
	ents, err := e.core.ReadDir("/")
	if err != nil || len(ents) != 0 {
		t.Errorf("workspace after refusals: %v %v", ents, err)
	}
	// Through the MCP path, which calls the same tool code.
	if _, err := (Local{e.svc}).Call(t.Context(), "write", []byte("{\"path\":\"m\xff\",\"content\":\"x\"}")); codeOf(err) != codeBadJSON {
		t.Errorf("local call: %v", err)
	}
	if _, err := e.core.Stat("/m\uFFFD"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("replacement-character file exists: %v", err)
	}
}

// TestAuditPathPrefixAsLogPrints: `log` prints /x, and path_prefix=/x was
// refused as a path outside the workspace.
func TestAuditPathPrefixAsLogPrints(t *testing.T) {
	e := serve(t, Options{}, false)
	if _, err := e.c.Call(t.Context(), "write", []byte(`{"path":"dir/f","content":"x"}`)); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"/dir", "dir", "/workspace/dir", "dir/"} {
		ev, err := e.c.Audit(t.Context(), sqlstore.AuditFilter{PathPrefix: prefix})
		if err != nil || len(ev) == 0 {
			t.Errorf("path_prefix %q: %v %v", prefix, ev, err)
		}
		status, body := e.raw(t, "GET", "/v1/audit?path_prefix="+url.QueryEscape(prefix), "")
		if status != 200 || !strings.Contains(body, "/dir/f") {
			t.Errorf("GET path_prefix=%s: %d %s", prefix, status, body)
		}
	}
	if p, err := AuditPathPrefix("../x"); !errors.Is(err, tools.ErrEscape) {
		t.Errorf("../x: %q %v", p, err)
	}
}
