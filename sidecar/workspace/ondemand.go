package workspace

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar"
)

// ContainerBackend is the name the container backend registers under
// (container.Name), known here before a mount on demand opens it.
const ContainerBackend = "container"

// onDemand is the container backend of a workspace mounted only for it
// (Options.MountOnDemand): its first exec makes the mountpoint, mounts the
// store there and opens the backend over the mount; Close stops the
// backend, unmounts and removes the mountpoint, so a workspace that never
// ran a container, or was closed, leaves no mount behind.
type onDemand struct {
	// open mounts and opens the backend, returning what to undo.
	open func(ctx context.Context) (sidecar.Backend, func() error, error)
	// ctx is the backend's life (the workspace's): an exec's would stop
	// it with the exec.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	b       sidecar.Backend
	unmount func() error
	closed  bool
}

var (
	_ sidecar.Backend = (*onDemand)(nil)
	_ portDialer      = (*onDemand)(nil)
)

// errNotStarted is DialPort's answer before the first container exec (or
// after Close): no container, so no port to reach.
var errNotStarted = errors.New("the container is not running: start the server in an exec first")

func (d *onDemand) Name() string { return ContainerBackend }

// backend returns the open backend, mounting and opening it on first use.
func (d *onDemand) backend() (sidecar.Backend, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errors.New("container backend closed")
	}
	if d.b == nil {
		b, unmount, err := d.open(d.ctx)
		if err != nil {
			return nil, err
		}
		d.b, d.unmount = b, unmount
	}
	return d.b, nil
}

func (d *onDemand) Exec(ctx context.Context, req sidecar.Request) (sidecar.Result, error) {
	b, err := d.backend()
	if err != nil {
		return sidecar.Result{}, err
	}
	return b.Exec(ctx, req)
}

// DialPort reaches port inside the running container (a preview), never
// mounting or starting one: a preview belongs to a running exec, which
// started it.
func (d *onDemand) DialPort(ctx context.Context, port uint16) (net.Conn, error) {
	d.mu.Lock()
	b, closed := d.b, d.closed
	d.mu.Unlock()
	if b == nil || closed {
		return nil, errNotStarted
	}
	pd, ok := b.(portDialer)
	if !ok {
		return nil, fmt.Errorf("the %s backend reaches no port inside its container", b.Name())
	}
	return pd.DialPort(ctx, port)
}

// Close stops the backend, then unmounts: the container holds the mount.
func (d *onDemand) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.cancel()
	if d.b == nil {
		return nil
	}
	err := d.b.Close()
	return errors.Join(err, d.unmount())
}

// mountOnDemand returns the open of onDemand: mount at mountpoint (made
// 0700 in its private parent), then start the backend over it.
func mountOnDemand(mountpoint string, mount func(ctx context.Context, mountpoint string) (*fuse.Mount, error), start func(ctx context.Context, mountpoint string) (sidecar.Backend, error)) func(ctx context.Context) (sidecar.Backend, func() error, error) {
	return func(ctx context.Context) (sidecar.Backend, func() error, error) {
		if err := checkPrivateParent(mountpoint); err != nil {
			return nil, nil, err
		}
		if err := os.Mkdir(mountpoint, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, nil, fmt.Errorf("mountpoint: %w", err)
		}
		m, err := mount(ctx, mountpoint)
		if err != nil {
			return nil, nil, errors.Join(err, os.Remove(mountpoint))
		}
		unmount := func() error {
			err := m.Unmount()
			if err == nil {
				err = os.Remove(mountpoint)
			}
			return err
		}
		b, err := start(ctx, m.Mountpoint())
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("container backend: %w", err), unmount())
		}
		if b.Name() != ContainerBackend {
			return nil, nil, errors.Join(fmt.Errorf("container backend named %q, want %q", b.Name(), ContainerBackend), b.Close(), unmount())
		}
		return b, unmount, nil
	}
}

// admitContainers is tools.Options.Admit for slots (nil: no bound): a
// container exec takes one, counted in the metrics when refused.
func admitContainers(slots *sidecar.Slots) func(backend string) (func(), error) {
	if slots == nil {
		return nil
	}
	return func(backend string) (func(), error) {
		if backend != ContainerBackend {
			return func() {}, nil
		}
		release, err := slots.Take()
		if err != nil {
			metrics.HostContainerRefusals.Inc()
		}
		return release, err
	}
}
