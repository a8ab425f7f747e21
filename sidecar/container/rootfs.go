package container

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BusyboxPath is where Debian's busybox-static installs busybox.
const BusyboxPath = "/bin/busybox"

// ErrNoBusybox means BuildBusyboxRootfs has no static busybox to copy.
var ErrNoBusybox = errors.New("no static busybox (apt-get install busybox-static)")

// BuildBusyboxRootfs makes a minimal root filesystem in dir from the host's
// static busybox: the binary, a link per applet, the directories the
// container mounts over, and a passwd naming the default user. It is what
// the tests use; mkrootfs.sh builds the full Debian one.
func BuildBusyboxRootfs(ctx context.Context, dir string) error {
	if err := checkStatic(BusyboxPath); err != nil {
		return err
	}
	// The root must be searchable by the unprivileged user (MkdirTemp makes 0700).
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("busybox rootfs: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("busybox rootfs: %w", err)
	}
	for _, d := range []string{"bin", "sbin", "usr/bin", "usr/sbin", "etc", "tmp", "proc", "sys", "dev", "workspace", "root"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return fmt.Errorf("busybox rootfs: %w", err)
		}
	}
	if err := copyFile(BusyboxPath, filepath.Join(dir, "bin/busybox"), 0o755); err != nil {
		return fmt.Errorf("busybox rootfs: %w", err)
	}
	out, err := exec.CommandContext(ctx, BusyboxPath, "--list-full").Output()
	if err != nil {
		return fmt.Errorf("busybox rootfs: list applets: %w", err)
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "bin/busybox" {
			continue
		}
		if err := os.Symlink("/bin/busybox", filepath.Join(dir, applet)); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("busybox rootfs: %w", err)
		}
	}
	files := map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
		"etc/group":  "root:x:0:\nagent:x:1000:\nnogroup:x:65534:\n",
		"etc/hosts":  "127.0.0.1 localhost sqlfs\n::1 localhost\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("busybox rootfs: %w", err)
		}
	}
	return nil
}

// checkStatic rejects a missing or dynamically linked busybox, which would
// not run in a rootfs without libc.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoBusybox, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%w: %s is dynamically linked", ErrNoBusybox, path)
		}
	}
	return nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
