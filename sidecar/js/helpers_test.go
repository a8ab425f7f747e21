package js

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell"
)

// newTestBackend opens a fresh store with a shell and a js backend over
// it; all are closed when the test ends.
func newTestBackend(t testing.TB, opts Options) (*Backend, *shell.Backend, *sfs.FS) {
	t.Helper()
	return backendOn(t, filepath.Join(t.TempDir(), "ws.db"), opts)
}

// backendOn opens the store db with a shell and a js backend over it.
func backendOn(t testing.TB, db string, opts Options) (*Backend, *shell.Backend, *sfs.FS) {
	t.Helper()
	fsys, err := sfs.Open(context.Background(), db, sfs.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	sh := shell.New(fsys, shell.Options{})
	t.Cleanup(func() {
		if err := sh.Close(); err != nil {
			t.Errorf("close shell: %v", err)
		}
		if err := fsys.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return New(sh, opts), sh, fsys
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
