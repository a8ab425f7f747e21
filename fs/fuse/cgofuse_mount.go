//go:build cgofuse || !linux

package fuse

import (
	"context"
	"fmt"
	"strings"

	cgofuse "github.com/winfsp/cgofuse/fuse"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// mountOptions are the -o options every mount gets: the kernel checks
// permissions itself and caches what it can (see cacheOptions; the options
// that libfuse2 takes here and libfuse3 in init are in fuse2.go/fuse3.go).
func mountOptions(o Options) []string {
	name := o.FSName
	if name == "" {
		name = "sqlfs"
	}
	opts := []string{"fsname=" + strings.ReplaceAll(name, ",", "_"), "subtype=sqlfs", "default_permissions"}
	opts = append(opts, cacheOptions...)
	if o.AllowOther {
		opts = append(opts, "allow_other")
	}
	if o.ReadOnly {
		opts = append(opts, "ro")
	}
	for _, e := range o.Extra {
		if e != "" {
			opts = append(opts, e)
		}
	}
	return []string{"-o", strings.Join(opts, ",")}
}

// Start mounts fsys at mountpoint and serves it in the background until
// Unmount, or until the mount is unmounted from outside.
func Start(ctx context.Context, fsys *sfs.FS, mountpoint string, o Options) (*Mount, error) {
	abs, err := prepareMount(mountpoint)
	if err != nil {
		return nil, err
	}
	a := newAdapter(fsys, o)
	host := cgofuse.NewFileSystemHost(a)
	host.SetCapReaddirPlus(true)
	host.SetUseIno(true)
	configureHost(host)
	m := &Mount{mountpoint: abs, done: make(chan struct{}), unmount: host.Unmount}
	args := mountOptions(o)
	if o.Debug {
		args = append(args, "-d")
	}
	go func() {
		defer close(m.done)
		defer func() {
			// cgofuse panics when it cannot load libfuse.
			if r := recover(); r != nil {
				m.err = fmt.Errorf("%w: %v (install the fuse3 package)", ErrNoFUSE, r)
			}
		}()
		if !host.Mount(abs, args) {
			m.err = fmt.Errorf("%w at %s (see the messages above from libfuse)", ErrMountFailed, abs)
		}
	}()
	select {
	case <-a.ready:
	case <-m.done:
		return nil, m.err
	case <-ctx.Done():
		m.Unmount()
		return nil, ctx.Err()
	}
	m.startInvalidator(fsys, host)
	setReadAhead(abs, readAheadKB)
	return m, nil
}

// startInvalidator tells the kernel of every change made outside it,
// before the call that made the change returns, so other frontends' changes
// show through the mount at once. Notify runs on the caller's goroutine:
// such callers are never FUSE request threads (those are Kernel callers and
// not reported), and the core holds no lock while it reports.
func (m *Mount) startInvalidator(fsys *sfs.FS, host *cgofuse.FileSystemHost) {
	if !canNotify {
		return
	}
	m.fsys = fsys
	fsys.SetInvalidator(func(changes []sfs.Change) {
		for _, c := range changes {
			action := uint32(cgofuse.NOTIFY_TRUNCATE)
			if c.Name {
				// Drops the name (positive or negative) and the parent's
				// attributes as well as the inode's.
				action = cgofuse.NOTIFY_UNLINK
			}
			host.Notify(c.Path, action)
		}
	})
}
