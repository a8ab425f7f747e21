package tools

import (
	"path/filepath"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// newCore opens a fresh store in a temporary directory, closed at cleanup.
func newCore(t *testing.T, opts sfs.Options) *sfs.FS {
	t.Helper()
	f, err := sfs.Open(t.Context(), filepath.Join(t.TempDir(), "ws.sqlfs"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	return f
}

func newTestFS(t *testing.T) FS { return coreFS{newCore(t, sfs.Options{})} }
