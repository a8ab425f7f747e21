package workspace_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// stubContainer stands in for the container backend: it names every
// request's pid as its exec.
type stubContainer struct{}

func (stubContainer) Name() string { return "container" }
func (stubContainer) Exec(context.Context, sidecar.Request) (sidecar.Result, error) {
	return sidecar.Result{}, errors.New("stub")
}
func (stubContainer) Close() error                      { return nil }
func (stubContainer) ActorForPID(uint32) (string, bool) { return "exec:stub", true }

func openStub(context.Context, string, sidecar.Root, *egress.Dialer, workspace.ContainerLimits) (sidecar.Backend, error) {
	return stubContainer{}, nil
}

// asNobody runs a command as uid/gid 65534 with no supplementary groups.
func asNobody(args ...string) error {
	return exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--"}, args...)...).Run()
}

func open(t *testing.T, parentMode os.FileMode, o workspace.Options) (*workspace.Workspace, string, error) {
	t.Helper()
	fusetest.Skip(t)
	_, err := exec.LookPath("setpriv")
	fusetest.Require(t, "setpriv (util-linux)", err)
	base := t.TempDir()
	must(t, os.Chmod(filepath.Dir(base), 0o755)) // the test's own temp dir
	must(t, os.Chmod(base, 0o755))
	parent := filepath.Join(base, "parent")
	must(t, os.Mkdir(parent, parentMode))
	must(t, os.Chmod(parent, parentMode))
	mnt := filepath.Join(parent, "mnt")
	must(t, os.Mkdir(mnt, 0o755))
	o.Mount = mnt
	o.FUSE.SameProcessClients = true // the test writes through the mount itself
	// The control: uid 65534 can read a world-readable file next to it.
	open := filepath.Join(base, "open")
	must(t, os.WriteFile(open, []byte("x"), 0o644))
	must(t, asNobody("cat", open))
	ws, err := workspace.Open(t.Context(), filepath.Join(base, "ws.db"), o)
	if err == nil {
		t.Cleanup(func() {
			if err := ws.Close(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	return ws, mnt, err
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Other host users cannot use the workspace: a plain mount has no
// allow_other, and one with (for a container's user) must sit in a private
// directory.
func TestOtherUsersCannotReachTheMount(t *testing.T) {
	t.Run("plain mount", func(t *testing.T) {
		ws, mnt, err := open(t, 0o755, workspace.Options{})
		must(t, err)
		must(t, ws.FS.Chmod("/", 0o777))
		must(t, ws.FS.WriteFile("/f", []byte("secret"), 0o644))
		if err := asNobody("cat", filepath.Join(mnt, "f")); err == nil {
			t.Fatal("uid 65534 read a file through the mount")
		}
		must(t, exec.Command("cat", filepath.Join(mnt, "f")).Run())
	})
	t.Run("container mount in an open directory", func(t *testing.T) {
		_, _, err := open(t, 0o755, workspace.Options{Container: openStub})
		if !errors.Is(err, workspace.ErrNotPrivate) {
			t.Fatalf("got %v, want ErrNotPrivate", err)
		}
	})
	t.Run("container mount in a private directory", func(t *testing.T) {
		ws, mnt, err := open(t, 0o700, workspace.Options{Container: openStub})
		must(t, err)
		must(t, ws.FS.Chmod("/", 0o777))
		must(t, ws.FS.WriteFile("/f", []byte("secret"), 0o644))
		if err := asNobody("cat", filepath.Join(mnt, "f")); err == nil {
			t.Fatal("uid 65534 read a file through the mount")
		}
	})
}

// Writes through the mount by a container exec's process are audited as
// that exec, and the usage gauges follow the store.
func TestContainerActorsAndUsageGauges(t *testing.T) {
	ws, mnt, err := open(t, 0o700, workspace.Options{Container: openStub})
	must(t, err)
	if _, ok := ws.Backends["container"]; !ok {
		t.Fatalf("backends %v", ws.Backends)
	}
	must(t, os.WriteFile(filepath.Join(mnt, "made"), []byte("x"), 0o644))
	must(t, ws.FS.Flush(t.Context()))
	ev, err := ws.FS.Store().Audit(t.Context(), sqlstore.AuditFilter{Op: "create", PathPrefix: "/made"})
	must(t, err)
	if len(ev) != 1 || ev[0].Actor != "exec:stub" {
		t.Fatalf("create events: %+v", ev)
	}
	if got, want := testutil.ToFloat64(metrics.FSInodes), float64(ws.FS.Usage().Inodes); got < 1 || got > want {
		t.Fatalf("inode gauge %v, store has %v", got, want)
	}
}
