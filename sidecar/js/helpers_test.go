package js

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/git"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// newTestBackend opens a fresh store with a shell and a js backend over
// it; all are closed when the test ends.
func newTestBackend(t testing.TB, opts Options) (*Backend, *shell.Backend, *sfs.FS) {
	t.Helper()
	return backendOn(t, filepath.Join(t.TempDir(), "ws.db"), opts, shell.Options{})
}

// newTestBackendWith is newTestBackend with the shell's options (its
// network).
func newTestBackendWith(t testing.TB, opts Options, shOpts shell.Options) (*Backend, *shell.Backend, *sfs.FS) {
	t.Helper()
	return backendOn(t, filepath.Join(t.TempDir(), "ws.db"), opts, shOpts)
}

// backendOn opens the store db with a shell (shOpts, to which it adds node
// and git as the workspace does) and a js backend over it.
func backendOn(t testing.TB, db string, opts Options, shOpts shell.Options) (*Backend, *shell.Backend, *sfs.FS) {
	t.Helper()
	fsys, err := sfs.Open(context.Background(), db, sfs.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	shOpts.Commands = map[string]builtin.Func{"node": Command(opts), "git": git.Main}
	sh := shell.New(fsys, shOpts)
	t.Cleanup(func() {
		if err := sh.Close(); err != nil {
			t.Errorf("close shell: %v", err)
		}
		if err := fsys.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return New(sh), sh, fsys
}

type execOut struct {
	sidecar.Result
	stdout, stderr string
}

func run(t testing.TB, b sidecar.Backend, req sidecar.Request) execOut {
	t.Helper()
	var out, errb bytes.Buffer
	req.Stdout, req.Stderr = &out, &errb
	res, err := b.Exec(context.Background(), req)
	if err != nil {
		t.Fatalf("exec %q: %v", req.Command, err)
	}
	return execOut{res, out.String(), errb.String()}
}
