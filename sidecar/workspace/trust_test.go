package workspace_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/publish"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
	"github.com/sqlfs/sqlfs/sqlstore"
)

const secret = "TOPSECRET"

// TestHiddenThroughSymlinks plants symlinks to a hidden file and reaches for
// it through every frontend: the mount, the shell, the tools, the
// JavaScript fs, publish (a file, a directory, and links published before
// their target was swapped for a symlink), export and git. Each refuses,
// the secret appears nowhere, and the audit trail records each attempt
// under the hidden path the resolver reached.
func TestHiddenThroughSymlinks(t *testing.T) {
	fusetest.Skip(t)
	ctx := t.Context()
	dir := t.TempDir()
	store := filepath.Join(dir, "ws.db")
	// The trap is laid before the policy applies.
	f, err := sfs.Open(ctx, store, sfs.Options{})
	must(t, err)
	must(t, f.MkdirAll("/secrets", 0o755))
	must(t, f.MkdirAll("/pub/dir", 0o755))
	must(t, f.WriteFile("/secrets/key", []byte(secret), 0o644))
	must(t, f.WriteFile("/pub/ok", []byte("ok"), 0o644))
	must(t, f.WriteFile("/pub/dir/f", []byte("ok"), 0o644))
	must(t, f.Symlink("secrets/key", "/x"))
	must(t, f.Symlink(".", "/d"))
	must(t, f.Close())
	mnt := filepath.Join(dir, "mnt")
	must(t, os.Mkdir(mnt, 0o755))
	ws, err := workspace.Open(ctx, store, workspace.Options{
		FS:        sfs.Options{Policy: sfs.Policy{Hidden: []string{"secrets/**"}}},
		Mount:     mnt,
		FUSE:      fuse.Options{SameProcessClients: true},
		PublicURL: "http://public.example",
	})
	must(t, err)
	t.Cleanup(func() { must(t, ws.Close(context.WithoutCancel(ctx))) })
	links, err := publish.Open(store, "http://public.example")
	must(t, err)
	served := publish.Handler(ws.FS, links, slog.New(slog.DiscardHandler))
	download := func(link string) *httptest.ResponseRecorder {
		u, err := url.Parse(link)
		must(t, err)
		rec := httptest.NewRecorder()
		served.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u.RequestURI(), nil))
		return rec
	}
	exec := func(backend, actor, command string) string {
		var out bytes.Buffer
		_, err := ws.Backends[backend].Exec(ctx, sidecar.Request{Command: command, Actor: actor, Stdout: &out, Stderr: &out})
		must(t, err)
		return out.String()
	}

	// What each attempt printed or returned: none may hold the secret.
	seen := map[string]string{}
	t.Run("mount", func(t *testing.T) {
		for _, p := range []string{"x", "d/secrets/key", "d/d/secrets"} {
			if b, err := os.ReadFile(filepath.Join(mnt, p)); err == nil || !os.IsNotExist(err) {
				t.Errorf("read %s through the mount: %q %v", p, b, err)
			}
		}
		// The link's own target stays readable.
		if s, err := os.Readlink(filepath.Join(mnt, "x")); err != nil || s != "secrets/key" {
			t.Errorf("readlink x: %q %v", s, err)
		}
	})
	t.Run("shell", func(t *testing.T) {
		seen["shell"] = exec("shell", "exec:shell", "cat x; cat d/secrets/key; ls d/secrets; echo done")
		if !strings.Contains(seen["shell"], "done") {
			t.Errorf("shell: %q", seen["shell"])
		}
	})
	t.Run("tools", func(t *testing.T) {
		for _, p := range []string{"x", "d/secrets/key"} {
			if out, err := ws.Tools.Read(ctx, tools.ReadInput{Path: p}); err == nil {
				t.Errorf("read tool %s: %+v", p, out)
			}
		}
		if out, err := ws.Tools.Publish(ctx, tools.PublishInput{Path: "x"}); err == nil {
			t.Errorf("publish tool x: %+v", out)
		}
	})
	t.Run("js", func(t *testing.T) {
		seen["js"] = exec("js", "exec:js", `
const fs = require('fs'), { publish } = require('sqlfs:publish');
for (const p of ['x', 'd/secrets/key']) {
  try { console.log(fs.readFileSync(p, 'utf8')) } catch (e) { console.log('read', p, e.code) }
}
(async () => {
  for (const p of ['x', 'd/secrets']) {
    try { console.log(await publish(p)) } catch (e) { console.log('publish', p, 'refused') }
  }
  await require('fs/promises').readFile('x', 'utf8').then(console.log, (e) => console.log('promises', e.code))
})()`)
		for _, want := range []string{"read x ENOENT", "read d/secrets/key ENOENT", "publish x refused", "publish d/secrets refused", "promises ENOENT"} {
			if !strings.Contains(seen["js"], want) {
				t.Errorf("js: %q lacks %q", seen["js"], want)
			}
		}
	})
	t.Run("publish", func(t *testing.T) {
		// Links made while the paths were harmless, the files then swapped
		// for symlinks into the hidden directory: checked when served.
		file, err := ws.Tools.Publish(ctx, tools.PublishInput{Path: "pub/ok"})
		must(t, err)
		tree, err := ws.Tools.Publish(ctx, tools.PublishInput{Path: "pub/dir"})
		must(t, err)
		root, err := ws.Tools.Publish(ctx, tools.PublishInput{Path: "."})
		must(t, err)
		must(t, ws.FS.Remove("/pub/ok"))
		must(t, ws.FS.Symlink("../secrets/key", "/pub/ok"))
		must(t, ws.FS.RemoveAll("/pub/dir"))
		must(t, ws.FS.Symlink("../d/secrets", "/pub/dir"))
		for name, link := range map[string]string{"file": file.URL, "directory": tree.URL} {
			rec := download(link)
			seen["publish "+name] = rec.Body.String()
			if rec.Code != http.StatusNotFound {
				t.Errorf("%s link after the swap: %d %q", name, rec.Code, rec.Body)
			}
		}
		rec := download(root.URL)
		names, content := untar(t, rec.Body)
		seen["publish root"] = content
		if rec.Code != http.StatusOK || slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "secrets") }) {
			t.Errorf("root as .tar.gz: %d, entries %q", rec.Code, names)
		}
	})
	t.Run("export", func(t *testing.T) {
		for _, p := range []string{"x", "d/secrets"} {
			var out bytes.Buffer
			if err := ws.Tools.Export(ctx, p, &out); err == nil {
				t.Errorf("export %s: %d bytes", p, out.Len())
			}
		}
		var out bytes.Buffer
		must(t, ws.Tools.Export(ctx, ".", &out))
		names, content := untarPlain(t, &out)
		seen["export root"] = content
		if slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "secrets") }) {
			t.Errorf("export of the root holds %q", names)
		}
	})
	t.Run("git", func(t *testing.T) {
		seen["git"] = exec("shell", "exec:git", `git init -q repo && cd repo && ln -s ../d/secrets s && ln -s ../secrets/key k &&
git add s/key; git -C s status; git config user.name a && git config user.email a@b && git add -A && git commit -q -m c && git show HEAD:k; echo; git show HEAD:s/key; echo done`)
		if !strings.Contains(seen["git"], "done") || !strings.Contains(seen["git"], "../secrets/key") {
			t.Errorf("git: %q", seen["git"])
		}
	})
	for what, out := range seen {
		if strings.Contains(out, secret) {
			t.Errorf("%s showed the secret: %q", what, out)
		}
	}
	if t.Failed() {
		return
	}
	must(t, ws.FS.Flush(ctx))
	ev, err := ws.FS.Store().Audit(ctx, sqlstore.AuditFilter{PathPrefix: "/secrets"})
	must(t, err)
	refused := map[string]bool{}
	for _, e := range ev {
		switch {
		case e.Actor == "" && e.Result == "ok": // the setup
		case e.Result != "ENOENT", e.Actor == "":
			t.Errorf("audit: %+v", e)
		default:
			refused[strings.SplitN(e.Actor, " ", 2)[0]] = true
		}
	}
	for _, actor := range []string{"fuse:pid=" /* prefix */, "exec:shell", "tool:read", "tool:publish", "exec:js", publish.Actor, tools.ExportActor, "exec:git"} {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(refused)), func(a string) bool { return strings.HasPrefix(a, actor) }) {
			t.Errorf("no refusal audited for %s; audited: %v", actor, refused)
		}
	}
}

// untar lists a .tar.gz stream's entries and joins the contents of its files.
func untar(t *testing.T, r io.Reader) ([]string, string) {
	t.Helper()
	gz, err := gzip.NewReader(r)
	must(t, err)
	return untarPlain(t, gz)
}

func untarPlain(t *testing.T, r io.Reader) ([]string, string) {
	t.Helper()
	tr := tar.NewReader(r)
	var names []string
	var content strings.Builder
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, content.String()
		}
		must(t, err)
		names = append(names, h.Name)
		if _, err := io.Copy(&content, tr); err != nil {
			t.Fatal(err)
		}
	}
}
