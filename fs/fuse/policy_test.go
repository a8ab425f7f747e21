package fuse_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// The kernel resolves symlinks itself, one lookup per component: each
// lookup the policy hides fails, so no link leads to a hidden file, a link's
// own target stays readable, and each attempt is audited as the caller's.
func TestPolicyThroughTheKernel(t *testing.T) {
	w := fusetest.Mount(t, sfs.Options{}, fuse.Options{})
	for _, d := range []string{"/secrets", "/certs", "/config"} {
		must(t, w.FS.Mkdir(d, 0o755))
	}
	for p, data := range map[string]string{"/secrets/key": "s3cret", "/certs/n.pem": "pem", "/config/app.yml": "app"} {
		must(t, w.FS.WriteFile(p, []byte(data), 0o644))
	}
	for link, target := range map[string]string{"/x": "secrets/key", "/d": ".", "/pem": "certs/n.pem", "/c": "config/app.yml", "/cd": "config"} {
		must(t, w.FS.Symlink(target, link))
	}
	w.RemountWith(sfs.Options{Policy: sfs.Policy{Hidden: []string{"secrets/**", "*.pem"}, ReadOnly: []string{"config/**"}}})

	for _, p := range []string{"x", "d/secrets/key", "d/d/secrets", "certs/n.pem", "pem"} {
		if b, err := os.ReadFile(w.Path(p)); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("read %s: %q %v, want ENOENT", p, b, err)
		}
	}
	if s, err := os.Readlink(w.Path("x")); err != nil || s != "secrets/key" {
		t.Errorf("readlink x: %q %v", s, err)
	}
	for _, dir := range []string{"", "d", "certs"} {
		ents, err := os.ReadDir(w.Path(dir))
		must(t, err)
		for _, e := range ents {
			if e.Name() == "secrets" || strings.HasSuffix(e.Name(), ".pem") {
				t.Errorf("listing of /%s shows %s", dir, e.Name())
			}
		}
	}
	for _, p := range []string{"c", "cd/new"} {
		if err := os.WriteFile(w.Path(p), []byte("w"), 0o644); !errors.Is(err, syscall.EROFS) {
			t.Errorf("write %s: %v, want EROFS", p, err)
		}
	}
	if b, err := os.ReadFile(w.Path("c")); err != nil || string(b) != "app" {
		t.Errorf("read c: %q %v", b, err)
	}
	must(t, w.FS.Flush(t.Context()))
	ev, err := w.FS.Store().Audit(t.Context(), sqlstore.AuditFilter{ActorPrefix: "fuse:"})
	must(t, err)
	var paths []string
	for _, e := range ev {
		if e.Result == "ENOENT" {
			paths = append(paths, e.Path)
		}
	}
	for _, want := range []string{"/secrets", "/certs/n.pem"} {
		if !slices.Contains(paths, want) {
			t.Errorf("audited refusals %q lack %s", paths, want)
		}
	}
}
