package js

// The worker's confinement is set up by a C constructor that runs before
// the Go runtime starts its threads, as runc's nsenter does: Landlock
// (ABI 7 here) restricts only the calling thread and the threads it
// creates later, so a Go init would leave the runtime's other threads
// free. With SQLFS_JS_WORKER set, the process gets no_new_privs, a
// Landlock domain that handles every file-system right (nothing is
// allowed but reading the time-zone database), TCP bind/connect and, where
// the kernel scopes them, abstract Unix sockets and signals; then a seccomp
// filter that refuses new sockets, processes (fork, vfork, clone without
// CLONE_THREAD, clone3), execve and ptrace. What is left is the pipes to
// the owner inherited as fds 3 and 4 and the page shared with it (fd 5,
// mapped and closed; wire.Pipes), standard error, and the
// Go runtime's own threads. A failure to confine ends the process (fail closed) unless the
// kernel has no Landlock at all, which the worker reports to its owner.

/*
#cgo CFLAGS: -O2 -D_GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

// Landlock's ABI, declared here so an older linux/landlock.h still builds.
struct sqlfs_ll_attr { uint64_t fs, net, scoped; };
struct sqlfs_ll_beneath { uint64_t allowed; int32_t fd; } __attribute__((packed));
#define SQLFS_LL_VERSION 1
#define SQLFS_LL_RULE_PATH_BENEATH 1
#define SQLFS_LL_READ_FILE (1ULL << 2)
#define SQLFS_LL_READ_DIR (1ULL << 3)

#ifndef __NR_clone3
#define __NR_clone3 435 // the same on x86-64 and arm64; older headers lack it
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

int sqlfs_js_landlock_abi = -1; // the ABI confined with; 0: the kernel has none

static void sqlfs_die(const char *what) {
	fprintf(stderr, "sqlfs js worker: %s: %s\n", what, strerror(errno));
	_exit(71);
}

static void sqlfs_allow_read(int ruleset, const char *path, uint64_t rights) {
	struct sqlfs_ll_beneath rule = { .allowed = rights };
	rule.fd = open(path, O_PATH | O_CLOEXEC);
	if (rule.fd < 0) return; // nothing there to read
	if (syscall(SYS_landlock_add_rule, ruleset, SQLFS_LL_RULE_PATH_BENEATH, &rule, 0) != 0) sqlfs_die("landlock rule");
	close(rule.fd);
}

static void sqlfs_landlock(void) {
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, SQLFS_LL_VERSION);
	if (abi < 1) {
		if (errno == ENOSYS || errno == EOPNOTSUPP) { sqlfs_js_landlock_abi = 0; return; }
		sqlfs_die("landlock version");
	}
	// Every file-system right the ABI knows: 13 bits at ABI 1, REFER at 2,
	// TRUNCATE at 3, IOCTL_DEV at 5.
	uint64_t fs = (1ULL << 13) - 1;
	if (abi >= 2) fs |= 1ULL << 13;
	if (abi >= 3) fs |= 1ULL << 14;
	if (abi >= 5) fs |= 1ULL << 15;
	struct sqlfs_ll_attr attr = { .fs = fs };
	size_t size = offsetof(struct sqlfs_ll_attr, net);
	if (abi >= 4) { attr.net = 3; size = offsetof(struct sqlfs_ll_attr, scoped); } // TCP bind, connect
	if (abi >= 6) { attr.scoped = 3; size = sizeof attr; } // abstract Unix sockets, signals
	int ruleset = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (ruleset < 0) sqlfs_die("landlock ruleset");
	sqlfs_allow_read(ruleset, "/usr/share/zoneinfo", SQLFS_LL_READ_FILE | SQLFS_LL_READ_DIR);
	sqlfs_allow_read(ruleset, "/etc/localtime", SQLFS_LL_READ_FILE);
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) sqlfs_die("landlock restrict");
	close(ruleset);
	sqlfs_js_landlock_abi = (int)abi;
}

#define SQLFS_DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)

static void sqlfs_seccomp(void) {
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
#if defined(__x86_64__)
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
#elif defined(__aarch64__)
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, 1, 0),
#else
#error "sqlfs js worker: seccomp filter for this architecture"
#endif
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		SQLFS_DENY(__NR_socket),
		SQLFS_DENY(__NR_socketpair),
		SQLFS_DENY(__NR_execve),
		SQLFS_DENY(__NR_execveat),
		SQLFS_DENY(__NR_ptrace),
#ifdef __NR_fork
		SQLFS_DENY(__NR_fork),
		SQLFS_DENY(__NR_vfork),
#endif
		// clone3 passes its flags in memory a filter cannot read: ENOSYS
		// makes callers fall back to clone.
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		// clone: threads only.
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof filter / sizeof filter[0], .filter = filter };
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) sqlfs_die("seccomp");
}

__attribute__((constructor)) static void sqlfs_js_worker_confine(void) {
	// SQLFS_JS_CONFINE alone confines without serving a job (tests).
	if (getenv("SQLFS_JS_WORKER") == NULL && getenv("SQLFS_JS_CONFINE") == NULL) return;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) sqlfs_die("no_new_privs");
	sqlfs_landlock();
	sqlfs_seccomp();
}
*/
import "C"

// workerEnv marks a process started as a js worker; the constructor above
// reads it before Go starts.
const workerEnv = "SQLFS_JS_WORKER"

// landlockABI is the Landlock ABI the worker confined itself with; 0 when
// the kernel has no Landlock.
func landlockABI() int { return int(C.sqlfs_js_landlock_abi) }
