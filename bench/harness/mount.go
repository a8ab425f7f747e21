// Package harness runs benchmark targets side by side (a fresh sqlfs mount, a native
// directory on the same disk, optionally tmpfs as a bound) and turns repeated
// measurements into medians and ratios. It is shared by the bench and fio runners.
package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// ErrMountExited means the mount process ended before the mount became ready.
var ErrMountExited = errors.New("sqlfs-mount exited")

// Mount runs one sqlfs-mount process serving Store at Point.
type Mount struct {
	Bin   string   // path of the sqlfs-mount binary
	Args  []string // extra flags placed before STORE MOUNTPOINT
	Store string
	Point string
	Log   string // file receiving the process's stdout and stderr

	cmd  *exec.Cmd
	done chan struct{} // closed when the process has been reaped
	err  error         // exit status, valid after done is closed
}

// Spawn starts the process without waiting for the mount.
func (m *Mount) Spawn() error {
	logf, err := os.OpenFile(m.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("mount log: %w", err)
	}
	args := append(append([]string{}, m.Args...), m.Store, m.Point)
	cmd := exec.Command(m.Bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Own process group so a terminal Ctrl-C reaches only us and we unmount in order;
	// Pdeathsig so the mount does not outlive a killed harness.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", m.Bin, err)
	}
	m.cmd, m.done = cmd, make(chan struct{})
	go func() {
		m.err = cmd.Wait()
		logf.Close()
		close(m.done)
	}()
	return nil
}

// PID is the mount process id.
func (m *Mount) PID() int { return m.cmd.Process.Pid }

// Exited reports whether the process has ended, with its exit error.
func (m *Mount) Exited() (bool, error) {
	select {
	case <-m.done:
		return true, m.err
	default:
		return false, nil
	}
}

// WaitReady waits until Point is a fuse mount in /proc/self/mountinfo.
func (m *Mount) WaitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := IsFuseMount(m.Point)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-m.done:
			return fmt.Errorf("%w before mounting (%v): %s", ErrMountExited, m.err, m.logTail())
		case <-ctx.Done():
			return fmt.Errorf("waiting for mount at %s: %w: %s", m.Point, ctx.Err(), m.logTail())
		case <-tick.C:
		}
	}
}

// Start spawns the process and waits for the mount.
func (m *Mount) Start(ctx context.Context) error {
	if err := m.Spawn(); err != nil {
		return err
	}
	if err := m.WaitReady(ctx, 2*time.Minute); err != nil {
		return errors.Join(err, m.Stop())
	}
	return nil
}

// Stop sends SIGTERM (the mount flushes and unmounts), waits, escalates to SIGKILL,
// and makes sure Point is no longer mounted. It is safe to call twice.
func (m *Mount) Stop() error {
	var errs []error
	if m.cmd != nil {
		if exited, _ := m.Exited(); !exited {
			if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
				errs = append(errs, err)
			}
			select {
			case <-m.done:
			case <-time.After(2 * time.Minute):
				errs = append(errs, fmt.Errorf("sqlfs-mount pid %d ignored SIGTERM for 2m, killed", m.PID()))
				m.cmd.Process.Kill()
				<-m.done
			}
		}
		if m.err != nil {
			errs = append(errs, fmt.Errorf("sqlfs-mount exit: %w: %s", m.err, m.logTail()))
		}
	}
	if err := Unmount(m.Point); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (m *Mount) logTail() string {
	b, err := os.ReadFile(m.Log)
	if err != nil {
		return ""
	}
	b = bytes.TrimSpace(b)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// IsFuseMount reports whether dir is the mount point of a fuse file system.
func IsFuseMount(dir string) (bool, error) {
	infos, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(dir))
	if err != nil {
		return false, fmt.Errorf("mountinfo: %w", err)
	}
	for _, in := range infos {
		if in.FSType == "fuse" || strings.HasPrefix(in.FSType, "fuse.") {
			return true, nil
		}
	}
	return false, nil
}

// Unmount detaches whatever is mounted at dir (a crashed fuse server leaves its mount
// behind); it is a no-op when nothing is.
func Unmount(dir string) error {
	for range 10 {
		ok, err := IsMounted(dir)
		if err != nil {
			return fmt.Errorf("mountinfo %s: %w", dir, err)
		}
		if !ok {
			return nil
		}
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("unmount %s: %w", dir, err)
		}
	}
	return fmt.Errorf("unmount %s: still mounted", dir)
}

// BuildMount builds ./cmd/sqlfs-mount of the module containing dir into outDir, with
// tags if they build and without them otherwise. It returns the binary and the tags used.
func BuildMount(ctx context.Context, dir, tags, outDir string) (bin, usedTags string, err error) {
	env := exec.CommandContext(ctx, "go", "env", "GOMOD")
	env.Dir = dir
	gomod, err := env.Output()
	if err != nil {
		return "", "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	if root == "." || root == "" {
		return "", "", fmt.Errorf("no go.mod above %s", dir)
	}
	bin = filepath.Join(outDir, "sqlfs-mount")
	attempts := []string{tags}
	if tags != "" {
		attempts = append(attempts, "")
	}
	var errs []error
	for _, t := range attempts {
		cmd := exec.CommandContext(ctx, "go", "build", "-tags", t, "-o", bin, "./cmd/sqlfs-mount")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err == nil {
			return bin, t, nil
		}
		errs = append(errs, fmt.Errorf("go build -tags %q ./cmd/sqlfs-mount: %w\n%s", t, err, out))
		if t != "" {
			slog.Warn("sqlfs-mount does not build with these tags, trying without", "tags", t, "err", err, "output", string(out))
		}
	}
	return "", "", errors.Join(errs...)
}

// IsMounted reports whether anything is mounted at dir.
func IsMounted(dir string) (bool, error) {
	ok, err := mountinfo.Mounted(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return ok, err
}

// UnmountUnder detaches every mount at or below dir, deepest first: the last line of
// clean-up after a test or run that failed half way.
func UnmountUnder(dir string) error {
	infos, err := mountinfo.GetMounts(mountinfo.PrefixFilter(dir))
	if err != nil {
		return fmt.Errorf("mountinfo: %w", err)
	}
	slices.SortFunc(infos, func(a, b *mountinfo.Info) int { return len(b.Mountpoint) - len(a.Mountpoint) })
	var errs []error
	for _, in := range infos {
		errs = append(errs, Unmount(in.Mountpoint))
	}
	return errors.Join(errs...)
}
