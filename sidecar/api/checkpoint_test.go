package api

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// TestCheckpointsOverSocket drives every checkpoint operation through the
// Client and the owner's endpoints, and through Local, with names made of
// bytes a URL and a path treat specially.
func TestCheckpointsOverSocket(t *testing.T) {
	e := serve(t, Options{}, false)
	ctx := t.Context()
	for i, conn := range []Conn{e.c, Local{e.svc}} {
		dir := []string{"client", "local"}[i]
		name := dir + " a/b c%2F?#&ü.."
		if _, err := e.svc.Write(ctx, tools.WriteInput{Path: dir + "/old", Content: "old"}); err != nil {
			t.Fatal(err)
		}
		c, err := conn.CreateCheckpoint(ctx, name)
		if err != nil || c.ID == "" || c.Name != name {
			t.Fatalf("%s: create = %+v, %v", dir, c, err)
		}
		if _, err := e.svc.Write(ctx, tools.WriteInput{Path: dir + "/new", Content: "new"}); err != nil {
			t.Fatal(err)
		}
		changes, err := conn.Diff(ctx, name, "")
		if err != nil || tools.NameStatus(changes) != "A\t"+dir+"/new\n" {
			t.Errorf("%s: diff = %v, %v", dir, changes, err)
		}
		if d, err := conn.Diff(ctx, c.ID, c.ID); err != nil || len(d) != 0 {
			t.Errorf("%s: diff of a checkpoint with itself = %v, %v", dir, d, err)
		}
		list, err := conn.Checkpoints(ctx)
		if err != nil || len(list) == 0 || list[len(list)-1].ID != c.ID || list[len(list)-1].Name != name {
			t.Errorf("%s: list = %+v, %v; want it to end with %+v", dir, list, err, c)
		}
		fork := filepath.Join(t.TempDir(), "fork.db")
		if err := conn.Fork(ctx, name, fork); err != nil {
			t.Fatalf("%s: fork: %v", dir, err)
		}
		if err := conn.Fork(ctx, "", fork); err == nil {
			t.Errorf("%s: fork over an existing store succeeded", dir)
		}
		if r, err := conn.Restore(ctx, name); err != nil || r.ID != c.ID {
			t.Fatalf("%s: restore = %+v, %v", dir, r, err)
		}
		if _, err := e.core.ReadFile("/" + dir + "/new"); err == nil {
			t.Errorf("%s: file created after the checkpoint survived its restore", dir)
		}
		if d, err := conn.DeleteCheckpoint(ctx, name); err != nil || d.ID != c.ID {
			t.Errorf("%s: delete = %+v, %v", dir, d, err)
		}
		for what, err := range map[string]error{
			"restore deleted": func() error { _, err := conn.Restore(ctx, name); return err }(),
			"diff deleted":    func() error { _, err := conn.Diff(ctx, c.ID, ""); return err }(),
			"delete deleted":  func() error { _, err := conn.DeleteCheckpoint(ctx, c.ID); return err }(),
			"undo unknown":    func() error { _, err := conn.Undo(ctx, "nosuchexec"); return err }(),
		} {
			if codeOf(err) != tools.CodeNoCheckpoint {
				t.Errorf("%s: %s: %v, want %s", dir, what, err, tools.CodeNoCheckpoint)
			}
		}
		if err := conn.Fork(ctx, "", "relative.db"); codeOf(err) != tools.CodeInvalid {
			t.Errorf("%s: fork to a relative path: %v", dir, err)
		}
		if _, err := conn.Restore(ctx, ""); codeOf(err) != tools.CodeInvalid {
			t.Errorf("%s: restore of an empty ref: %v", dir, err)
		}

		// The fork is a store of its own, with the checkpoint's tree.
		f, err := sfs.Open(ctx, fork, sfs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if b, err := f.ReadFile("/" + dir + "/old"); err != nil || string(b) != "old" {
			t.Errorf("%s: fork's old = %q, %v", dir, b, err)
		}
		if _, err := f.ReadFile("/" + dir + "/new"); err == nil {
			t.Errorf("%s: fork holds a file written after its checkpoint", dir)
		}
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(t.TempDir(), "relative.db")); err == nil {
		t.Error("a relative fork target was written")
	}
}

// TestCheckpointEndpointsHostile: malformed requests get JSON errors with
// the right status and change nothing.
func TestCheckpointEndpointsHostile(t *testing.T) {
	e := serve(t, Options{}, false)
	if _, err := e.c.CreateCheckpoint(t.Context(), "keep"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               tools.Code
	}{
		{"POST", "/v1/checkpoints", `{"name":"x","bogus":1}`, http.StatusBadRequest, codeBadJSON},
		{"POST", "/v1/checkpoints", `{"name":7}`, http.StatusBadRequest, codeBadJSON},
		{"POST", "/v1/checkpoints", ``, http.StatusBadRequest, codeBadJSON},
		{"POST", "/v1/checkpoints", `{"name":"keep"}`, http.StatusConflict, tools.CodeExists},
		{"POST", "/v1/checkpoints", `{"name":"a\u0000b"}`, http.StatusBadRequest, tools.CodeInvalid},
		{"POST", "/v1/checkpoints", `{"name":"` + strings.Repeat("n", 300) + `"}`, http.StatusBadRequest, tools.CodeInvalid},
		{"POST", "/v1/checkpoints/nope/restore", ``, http.StatusNotFound, tools.CodeNoCheckpoint},
		{"POST", "/v1/checkpoints/99999999999999999999999/restore", ``, http.StatusBadRequest, tools.CodeInvalid},
		{"POST", "/v1/checkpoints/%FF/restore", ``, http.StatusBadRequest, tools.CodeInvalid},
		{"GET", "/v1/checkpoints/keep/diff?from=1", ``, http.StatusBadRequest, tools.CodeInvalid},
		{"GET", "/v1/checkpoints/keep/diff?to=nope", ``, http.StatusNotFound, tools.CodeNoCheckpoint},
		{"DELETE", "/v1/checkpoints/-1", ``, http.StatusNotFound, tools.CodeNoCheckpoint},
		{"PUT", "/v1/checkpoints", ``, http.StatusMethodNotAllowed, codeMethod},
		{"POST", "/v1/fork", `{"store":"rel.db"}`, http.StatusBadRequest, tools.CodeInvalid},
		{"POST", "/v1/fork", `{"store":"/tmp/x","checkpoint":"nope"}`, http.StatusNotFound, tools.CodeNoCheckpoint},
		{"POST", "/v1/execs/nosuchexec/undo", ``, http.StatusNotFound, tools.CodeNoCheckpoint},
	} {
		st, body := e.raw(t, tc.method, tc.path, tc.body)
		if st != tc.status || !strings.Contains(body, `"code":"`+string(tc.code)+`"`) {
			t.Errorf("%s %s %s: %d %s; want %d %s", tc.method, tc.path, tc.body, st, body, tc.status, tc.code)
		}
	}
	list, err := e.c.Checkpoints(t.Context())
	if err != nil || len(list) != 1 || list[0].Name != "keep" {
		t.Errorf("checkpoints after the hostile requests: %+v, %v", list, err)
	}
}
