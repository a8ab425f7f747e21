package apitest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// HiddenTrail writes a store whose audit trail names paths HiddenGlobs
// hide: created, renamed into and out of a hidden
// directory, linked under a hidden name, changed by exec e1, and between
// checkpoints c1 and c2.
func HiddenTrail(t testing.TB) (store string) {
	t.Helper()
	store = filepath.Join(t.TempDir(), "ws.sqlfs")
	before, err := sfs.Open(t.Context(), store, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = before.Checkpoint(t.Context(), sfs.CheckpointOptions{Name: "c1"})
	must(err)
	must(before.MkdirAll("/secret", 0o755))
	must(before.MkdirAll("/pub", 0o755))
	exec := before.WithActor(tools.Actor("e1"))
	for _, p := range []string{"/secret/k", "/pub/a", "/pub/b", "/pub/c.key"} {
		must(exec.WriteFile(p, []byte("x"), 0o644))
	}
	must(before.Rename("/pub/a", "/secret/a"))
	must(before.Rename("/secret/k", "/pub/k"))
	must(before.Link("/pub/b", "/secret/b"))
	must(before.Link("/pub/b", "/pub/b2.key"))
	must(before.Symlink("/secret/a", "/pub/s"))
	for i := range 5 {
		must(before.WriteFile(fmt.Sprintf("/secret/f%d", i), []byte("x"), 0o644))
	}
	must(before.WriteFile("/pub/last", []byte("x"), 0o644))
	for i := range 5 {
		must(before.WriteFile(fmt.Sprintf("/secret/g%d", i), []byte("x"), 0o644))
	}
	_, err = before.Checkpoint(t.Context(), sfs.CheckpointOptions{Name: "c2"})
	must(err)
	must(before.Close())
	return store
}

// HiddenGlobs are the hidden globs of HiddenTrail's policy.
var HiddenGlobs = []string{"secret", "*.key"}

// Leaks says whether s names a path HiddenGlobs hide.
func Leaks(s string) bool { return strings.Contains(s, "secret") || strings.Contains(s, ".key") }
