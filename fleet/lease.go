package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sqlfs/sqlfs/host"
)

// Lease is where the fleet's workspace leases live: one record per
// workspace, changed only by compare-and-swap, so of two hosts racing for
// one workspace exactly one wins. The backend here is S3 conditional
// writes (NewS3Lease).
type Lease interface {
	// Acquire takes workspace id's lease for c when nobody holds it (never
	// held, released or expired) or c's own instance does. When another
	// holds it live it fails with a *HeldError naming the holder.
	Acquire(ctx context.Context, id string, c Claim) (Record, error)
	// Renew extends a held lease by its TTL. It fails with ErrLost when
	// the record is no longer r (another host took it).
	Renew(ctx context.Context, r Record) (Record, error)
	// Release gives a held lease up, so the next host asked takes it
	// without waiting for it to expire; ErrLost as for Renew.
	Release(ctx context.Context, r Record) error
	// Holder is workspace id's record, the zero Record when it was never
	// leased.
	Holder(ctx context.Context, id string) (Record, error)
	// List returns the id of every workspace with a record.
	List(ctx context.Context) ([]string, error)
	// Delete removes the record of a workspace deleted under r, a lease
	// held; ErrLost as for Renew.
	Delete(ctx context.Context, r Record) error
}

// Claim is who asks for a lease, and for how long.
type Claim struct {
	// Addr is the holder's advertised URL (http://HOST:PORT): where the
	// other hosts forward this workspace's requests.
	Addr string `json:"addr"`
	// Instance is the holding process's random id: a host restarted on
	// the same address is another instance.
	Instance string `json:"instance"`
	// TTL is how long the lease lasts without a renewal.
	TTL time.Duration `json:"ttl"`
}

// Record is a workspace's lease as the backend stores it.
type Record struct {
	ID string `json:"id"`
	Claim
	// Generation counts the acquisitions, from 1: the fencing token. A
	// host that held generation N and sees N+1 knows nobody else held the
	// workspace in between.
	Generation int64 `json:"generation"`
	// Expires is the holder's wall clock at its last write plus TTL: the
	// hosts' clocks must agree to well within Margin (NTP does).
	Expires  time.Time `json:"expires"`
	Released bool      `json:"released,omitempty"`
	// token is the backend's compare-and-swap token (an ETag).
	token string
}

// Live says whether r holds its workspace at now.
func (r Record) Live(now time.Time) bool {
	return r.Generation > 0 && !r.Released && now.Before(r.Expires)
}

var (
	// ErrLost: the lease is no longer the one this host held.
	ErrLost = errors.New("lease lost to another host")
	// ErrHeld is wrapped by HeldError.
	ErrHeld = errors.New("workspace held by another host")
)

// HeldError says which live host holds a workspace.
type HeldError struct{ Record Record }

func (e *HeldError) Error() string {
	return fmt.Sprintf("%v: %s is served by %s until %s", ErrHeld, e.Record.ID, e.Record.Addr, e.Record.Expires.Format(time.RFC3339))
}

// Unwrap: ErrHeld, and host.ErrUnavailable (503, served again through
// the fleet's routing, which forwards it to the holder).
func (e *HeldError) Unwrap() []error { return []error{ErrHeld, host.ErrUnavailable} }

// next is the record that claim c writes over old (the zero Record when
// none) at now, or a *HeldError when old is another's live lease.
func next(id string, old Record, c Claim, now time.Time) (Record, error) {
	if old.Live(now) && old.Instance != c.Instance {
		return Record{}, &HeldError{Record: old}
	}
	return Record{ID: id, Claim: c, Generation: old.Generation + 1, Expires: now.Add(c.TTL)}, nil
}
