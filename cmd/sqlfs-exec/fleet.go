package main

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/sqlfs/sqlfs/fleet"
	"github.com/sqlfs/sqlfs/host"
)

// joinFleet makes the host a fleet member (--fleet-lease): opener wrapped
// so that each workspace is opened under its lease, and the handler
// wrapped so that requests for the workspaces other hosts hold reach them;
// deleting a workspace deletes it from replica (nil: none) too.
// The local copies were parked before (fleet.ParkAll).
func joinFleet(ctx context.Context, o hostOptions, dir *host.Dir, opener fleet.Opener, replica host.Remote) (*fleet.Fleet, error) {
	if strings.HasPrefix(o.listen, "unix:") || o.listen == "" || o.token == "" {
		return nil, errors.New("--fleet-lease needs --listen HOST:PORT and --token-file: the hosts forward requests to each other over TCP")
	}
	fo, err := o.fleet.Options(ctx)
	if err != nil {
		return nil, err
	}
	fo.Opener, fo.Dir, fo.Replica, fo.Logger = opener, dir.Root(), replica, o.logger
	return fleet.New(fo)
}

// fleetHandler routes handler's workspace requests through f, which
// takes a turn of a (handler's own) before it opens a workspace for one.
func fleetHandler(f *fleet.Fleet, h *host.Host, dir *host.Dir, o hostOptions, a *host.Admission, handler http.Handler) http.Handler {
	f.Bind(h)
	return f.Handler(handler, fleet.HandlerOptions{OperatorToken: o.token, Dir: dir, Admission: a})
}
