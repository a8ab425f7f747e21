package shell

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar"
)

// newTestBackend opens a fresh store and a shell backend over it; both are
// closed when the test ends.
func newTestBackend(t testing.TB, opts Options) (*Backend, *sfs.FS) {
	t.Helper()
	fsys, err := sfs.Open(context.Background(), filepath.Join(t.TempDir(), "ws.db"), sfs.Options{NoAudit: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	b := New(fsys, opts)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close backend: %v", err)
		}
		if err := fsys.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return b, fsys
}

type execOut struct {
	sidecar.Result
	stdout, stderr string
}

// execReq executes req and fails the test if the backend could not run it.
func execReq(t testing.TB, b *Backend, req sidecar.Request) execOut {
	t.Helper()
	var out, errb bytes.Buffer
	req.Stdout, req.Stderr = &out, &errb
	res, err := b.Exec(context.Background(), req)
	if err != nil {
		t.Fatalf("exec %q: %v", req.Command, err)
	}
	return execOut{res, out.String(), errb.String()}
}

func sh(t testing.TB, b *Backend, command string) execOut {
	t.Helper()
	return execReq(t, b, sidecar.Request{Command: command})
}

// settled fails the test unless the goroutine count comes back to
// baseline: an exec that ended left nothing of itself running.
func settled(t testing.TB, baseline int) {
	t.Helper()
	deadline := time.Now().Add(testenv.Slack(2 * time.Second * slowdown))
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, baseline %d:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
