package replica

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// writeStore makes workspace id's store at file holding path with
// content, as a host that served it left it.
func writeStore(t *testing.T, d *host.Dir, id, file, path, content string) {
	t.Helper()
	ctx := context.Background()
	if err := d.Create(id, nil); err != nil && !errors.Is(err, os.ErrExist) {
		t.Fatal(err)
	}
	ws, err := d.OpenGeneration(ctx, id, 99)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toolsOf(t, ws).Write(ctx, tools.WriteInput{Path: path, Content: content}); err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(ctx); err != nil {
		t.Fatal(err)
	}
	gen := d.GenerationStorePath(id, 99)
	if err := host.MoveStore(gen, file); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(gen)); err != nil {
		t.Fatal(err)
	}
}

// TestEmptyStoreFile: an empty file (0 bytes) where a workspace's store
// should be, what SQLite leaves when the replicator reopens a store that
// moved away, is never taken for the store, nor a reason to start the
// workspace anew: the open serves the copy it stood in for (a stale copy
// over an empty replica), or refuses with ErrEmptyStore. Before, every
// open failed on the empty file.
func TestEmptyStoreFile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gen     int64
		stale   bool // a local copy another generation set aside
		wantErr error
	}{
		{name: "stale copy over an empty replica", gen: 2, stale: true},
		{name: "first generation, nothing anywhere", gen: 1, wantErr: ErrEmptyStore},
		{name: "no fleet, nothing anywhere", gen: 0, wantErr: ErrEmptyStore},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			d := openDir(t)
			s3 := newS3(t)
			op := &Opener{Dir: d, Options: Options{URL: s3.url(t, "host"), Credentials: testKeys, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))}}
			if err := d.Create("w", nil); err != nil {
				t.Fatal(err)
			}
			if tc.stale {
				writeStore(t, d, "w", filepath.Join(d.Root(), "w", host.StaleName), "f.txt", "acknowledged")
			}
			empty := d.GenerationStorePath("w", tc.gen)
			if err := os.MkdirAll(filepath.Dir(empty), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(empty, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			ws, err := op.OpenGeneration(ctx, "w", tc.gen)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("open: %v; want %v", err, tc.wantErr)
				}
				if _, err := os.Stat(empty); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a store at %s after the refused open: %v", empty, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close(ctx)
			out, err := toolsOf(t, ws).Read(ctx, tools.ReadInput{Path: "f.txt"})
			if err != nil {
				t.Fatalf("the copy's file: %v", err)
			}
			if !strings.HasSuffix(out.Content, "\tacknowledged\n") {
				t.Fatalf("f.txt reads %q", out.Content)
			}
		})
	}
}
