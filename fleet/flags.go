package fleet

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"
)

// Flags are serve --workspaces' fleet flags.
type Flags struct {
	lease, addr string
	ttl         time.Duration
}

// Register adds --fleet-lease, --advertise-addr and --lease-ttl to fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.lease, "fleet-lease", "", "with --workspaces: serve in a fleet, each workspace by one host at a time under a lease kept at `URL` (s3://BUCKET/PREFIX?endpoint=http://HOST:PORT&forcePathStyle=true; keys from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), forwarding requests for the workspaces other hosts hold; failover needs --replica")
	fs.StringVar(&f.addr, "advertise-addr", "", "with --fleet-lease: `HOST:PORT` (or http://HOST:PORT) where the other hosts reach this one")
	fs.DurationVar(&f.ttl, "lease-ttl", DefaultTTL, "with --fleet-lease: a lease's life without renewal, so a dead host's workspaces move after at most this long (hosts' clocks must agree to well within a third of it)")
}

// Enabled says whether --fleet-lease was given.
func (f *Flags) Enabled() bool { return f.lease != "" }

// Options checks the flags and returns the Options they configure
// (Opener and Dir left to the caller), with the lease store opened.
func (f *Flags) Options(ctx context.Context) (Options, error) {
	if f.addr == "" {
		return Options{}, errors.New("--fleet-lease needs --advertise-addr (where the other hosts reach this one)")
	}
	addr := f.addr
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	if err := checkAddr(addr); err != nil {
		return Options{}, fmt.Errorf("--advertise-addr: %w", err)
	}
	if f.ttl < time.Second {
		return Options{}, fmt.Errorf("--lease-ttl %v: want 1s or more", f.ttl)
	}
	l, err := OpenS3Lease(ctx, f.lease)
	if err != nil {
		return Options{}, fmt.Errorf("--fleet-lease: %w", err)
	}
	return Options{Lease: l, Addr: addr, TTL: f.ttl}, nil
}
