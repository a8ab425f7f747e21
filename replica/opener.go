package replica

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// Opener is a host's Opener over its Dir with a replica: a workspace whose
// store is missing locally is restored from the replica on its first
// request, and a workspace's Close (hibernation, removal, shutdown)
// returns only once the replica holds everything it committed.
type Opener struct {
	Dir *host.Dir
	// Supervisor replicates Dir (StartDir); nil: restore only.
	Supervisor *Supervisor
	// Options name the host's replica: workspace ID is at
	// URL/ID/workspace.sqlfs.
	Options Options
	// SyncTimeout bounds the wait for the replica at Close. Default 1m.
	SyncTimeout time.Duration
}

// WorkspaceURL is where a host's replica u keeps workspace id's store.
func WorkspaceURL(u URL, id string) URL { return u.Join(id, host.StoreName) }

// Open opens workspace id, restoring its store first when it has none
// locally and the replica has one.
func (o *Opener) Open(ctx context.Context, id string) (host.Workspace, error) {
	if err := host.CheckID(id); err != nil {
		return nil, fmt.Errorf("%w: %w", host.ErrNotFound, err)
	}
	store := o.Dir.StorePath(id)
	if _, err := os.Lstat(store); errors.Is(err, fs.ErrNotExist) {
		if err := o.restore(ctx, id, store); err != nil && !errors.Is(err, ErrNoReplica) {
			return nil, fmt.Errorf("workspace %s: %w", id, err)
		}
	}
	ws, err := o.Dir.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	return &synced{Workspace: ws, o: o, store: store}, nil
}

// restore brings workspace id's store from the replica into place,
// making its folder when the host has none. The host opens one id at a
// time, so no two restores of one id race.
func (o *Opener) restore(ctx context.Context, id, store string) error {
	ro := o.Options
	ro.URL = WorkspaceURL(o.Options.URL, id)
	// Restored beside DIR's workspaces (one filesystem, so the move into
	// place is a link), under a name no workspace can have.
	tmpDir := filepath.Join(o.Dir.Root(), ".restore")
	if err := os.MkdirAll(tmpDir, 0o700); err != nil {
		return err
	}
	tmp := filepath.Join(tmpDir, id+".sqlfs")
	_ = os.Remove(tmp)
	if err := Restore(ctx, ro, tmp, time.Time{}); err != nil {
		return err
	}
	defer os.Remove(tmp)
	if _, err := os.Lstat(filepath.Dir(store)); errors.Is(err, fs.ErrNotExist) {
		if err := o.Dir.Create(id, nil); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	if err := os.Link(tmp, store); err != nil {
		return fmt.Errorf("restore into place: %w", err)
	}
	ro.Logger.Info("restored workspace from the replica", "id", id, "replica", ro.URL.Redacted())
	return nil
}

// synced is an open workspace whose Close waits for the replica.
type synced struct {
	host.Workspace
	o     *Opener
	store string
}

// Tools is the workspace's tool service (the host forks through it).
func (s *synced) Tools() *tools.Service {
	if t, ok := s.Workspace.(interface{ Tools() *tools.Service }); ok {
		return t.Tools()
	}
	return nil
}

func (s *synced) Close(ctx context.Context) error {
	err := s.Workspace.Close(ctx)
	if s.o.Supervisor == nil {
		return err
	}
	// The close's own context bounds waiting for execs, which may have
	// used it up: the replica gets a time of its own.
	wait := s.o.SyncTimeout
	if wait <= 0 {
		wait = time.Minute
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
	defer cancel()
	return errors.Join(err, s.o.Supervisor.Sync(sctx, s.store))
}
