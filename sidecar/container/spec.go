package container

import (
	"fmt"
	"os"
	"strconv"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/seccomp"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	// Lets the cgroup manager apply the device allow-list.
	_ "github.com/opencontainers/cgroups/devices"

	"github.com/sqlfs/sqlfs/sidecar"
)

// cgroupParent holds every container's cgroup, in each hierarchy.
const cgroupParent = "/sqlfs"

const cpuPeriod = 100_000 // µs, the kernel's default CFS period

// libcontainerConfig is the OCI runtime spec of runc's own example, tightened:
// read-only rootfs, no capabilities, no_new_privs, tmpfs /tmp, the workspace
// bound at /workspace, cgroup limits, and the seccomp deny list when
// libcontainer was built with seccomp support.
// netnsPath, when not empty, is the network namespace to join (the
// proxy's, Options.Egress).
func (b *Backend) libcontainerConfig(id, netnsPath string) (*configs.Config, error) {
	spec := specconv.Example()
	spec.Root = &specs.Root{Path: b.cfg.Rootfs, Readonly: true}
	spec.Hostname = "sqlfs"
	spec.Process.Terminal = false
	spec.Process.User = specs.User{UID: uint32(b.uid), GID: uint32(b.gid)}
	spec.Process.Capabilities = &specs.LinuxCapabilities{}
	spec.Process.NoNewPrivileges = true
	spec.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 65536, Soft: 65536}}
	spec.Mounts = append(spec.Mounts,
		specs.Mount{
			Destination: "/tmp",
			Type:        "tmpfs",
			Source:      "tmpfs",
			Options:     []string{"nosuid", "nodev", "mode=1777", "size=" + strconv.FormatInt(b.cfg.TmpBytes, 10)},
		},
		specs.Mount{
			Destination: sidecar.WorkspaceDir,
			Type:        "bind",
			Source:      b.cfg.Workspace,
			Options:     []string{"rbind", "rw", "nosuid", "nodev"},
		},
	)
	if netnsPath != "" {
		for i, n := range spec.Linux.Namespaces {
			if n.Type == specs.NetworkNamespace {
				spec.Linux.Namespaces[i].Path = netnsPath
			}
		}
	}
	if b.cfg.Network {
		ns := spec.Linux.Namespaces[:0]
		for _, n := range spec.Linux.Namespaces {
			if n.Type != specs.NetworkNamespace {
				ns = append(ns, n)
			}
		}
		spec.Linux.Namespaces = ns
		if _, err := os.Stat("/etc/resolv.conf"); err == nil {
			spec.Mounts = append(spec.Mounts, specs.Mount{
				Destination: "/etc/resolv.conf",
				Type:        "bind",
				Source:      "/etc/resolv.conf",
				Options:     []string{"bind", "ro", "nosuid", "nodev", "noexec"},
			})
		}
	}
	quota := int64(b.cfg.CPUs * cpuPeriod)
	period := uint64(cpuPeriod)
	memory := b.cfg.MemoryBytes
	spec.Linux.CgroupsPath = cgroupParent + "/" + id
	spec.Linux.Resources.Memory = &specs.LinuxMemory{Limit: &memory, Swap: &memory}
	spec.Linux.Resources.Pids = &specs.LinuxPids{Limit: &b.cfg.Pids}
	spec.Linux.Resources.CPU = &specs.LinuxCPU{Quota: &quota, Period: &period}
	if seccompSupported() {
		spec.Linux.Seccomp = seccompProfile()
	}
	config, err := specconv.CreateLibcontainerConfig(&specconv.CreateOpts{
		CgroupName: id,
		Spec:       spec,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	return config, nil
}

// seccompSupported reports whether libcontainer was built with libseccomp
// (-tags seccomp); without it a seccomp config makes the start fail.
func seccompSupported() bool {
	major, _, _ := seccomp.Version()
	return major > 0
}

// seccompProfile denies, with EPERM, what an agent's commands never need and
// what widens the kernel surface: namespaces, mounts, modules, keyrings, bpf,
// perf, io_uring (a large attack surface, denied by the common default
// profiles too), clock and reboot. Everything else is allowed: capabilities are
// already gone, so this is defence in depth, not the main wall.
func seccompProfile() *specs.LinuxSeccomp {
	denied := []string{
		"acct", "add_key", "bpf", "clock_adjtime", "clock_settime", "delete_module",
		"finit_module", "fsconfig", "fsmount", "fsopen", "fspick", "init_module",
		"io_uring_enter", "io_uring_register", "io_uring_setup",
		"iopl", "ioperm", "kexec_file_load", "kexec_load", "keyctl", "lookup_dcookie",
		"mount", "mount_setattr", "move_mount", "name_to_handle_at", "open_by_handle_at",
		"open_tree", "perf_event_open", "pivot_root", "quotactl", "reboot",
		"request_key", "setns", "settimeofday", "swapoff", "swapon", "syslog",
		"umount2", "unshare", "userfaultfd", "vhangup",
	}
	errno := uint(unix.EPERM)
	p := &specs.LinuxSeccomp{
		DefaultAction: specs.ActAllow,
		Architectures: []specs.Arch{specs.ArchX86_64, specs.ArchX86, specs.ArchX32, specs.ArchAARCH64, specs.ArchARM},
		Syscalls: []specs.LinuxSyscall{
			{Names: denied, Action: specs.ActErrno, ErrnoRet: &errno},
		},
	}
	// clone3 passes its flags in memory, where seccomp cannot look: make it
	// ENOSYS so libc falls back to clone, whose flags are checked below.
	enosys := uint(unix.ENOSYS)
	p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: []string{"clone3"}, Action: specs.ActErrno, ErrnoRet: &enosys})
	for _, flag := range []uint64{
		unix.CLONE_NEWNS, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWUSER,
		unix.CLONE_NEWPID, unix.CLONE_NEWNET, unix.CLONE_NEWCGROUP,
	} {
		p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{
			Names:    []string{"clone"},
			Action:   specs.ActErrno,
			ErrnoRet: &errno,
			Args:     []specs.LinuxSeccompArg{{Index: 0, Value: flag, ValueTwo: flag, Op: specs.OpMaskedEqual}},
		})
	}
	return p
}
