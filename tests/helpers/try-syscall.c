/* SPDX-License-Identifier: MIT */
/*
 * try-syscall NAME [ARG]: makes one system call with harmless arguments and prints
 * "NAME errno=N" (0 when the call succeeded), exit 0. Tells which calls a sandbox blocks: a
 * seccomp filter answers with its own errno (EPERM for Docker's default, ENOSYS for clone3)
 * before the kernel looks at the arguments.
 *
 * Every call is harmless if it is allowed, even as root: invalid arguments, nonexistent paths,
 * bad fds, invalid magic numbers; unshare only moves this process into a new UTS namespace.
 * exit 2 on usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#define NOWHERE "/nonexistent-zygote-try-syscall"

static long arg_value(const char *arg, long def) {
        char *end;
        long v;

        if (!arg)
                return def;
        errno = 0;
        v = strtol(arg, &end, 0);
        if (errno || end == arg || *end) {
                /* personality takes 0xffffffff, which strtol handles; anything else is a typo */
                fprintf(stderr, "try-syscall: bad argument: %s\n", arg);
                exit(2);
        }
        return v;
}

static long try_getpid(const char *arg) {
        return syscall(SYS_getpid);
}
static long try_getppid(const char *arg) {
        return syscall(SYS_getppid);
}
/* Signal 0 to itself: checks the call, sends nothing. */
static long try_kill(const char *arg) {
        return syscall(SYS_kill, getpid(), 0);
}
static long try_tkill(const char *arg) {
        return syscall(SYS_tkill, gettid(), 0);
}
static long try_tgkill(const char *arg) {
        return syscall(SYS_tgkill, getpid(), gettid(), 0);
}
static long try_uname(const char *arg) {
        struct utsname u;
        return syscall(SYS_uname, &u);
}
static long try_mkdirat(const char *arg) {
        /* below a directory that does not exist: ENOENT when allowed, nothing made */
        return syscall(SYS_mkdirat, AT_FDCWD, NOWHERE "/dir", 0700);
}
static long try_getcwd(const char *arg) {
        char buf[PATH_MAX];
        return syscall(SYS_getcwd, buf, sizeof(buf));
}
static long try_personality(const char *arg) {
        /* 0xffffffff only queries the current persona */
        return syscall(SYS_personality, (unsigned long) arg_value(arg, 0xffffffffL));
}
static long try_socket(const char *arg) {
        int domain = (int) arg_value(arg, AF_UNIX);
        long r = socket(domain, SOCK_STREAM | SOCK_CLOEXEC, 0);

        /* a family without stream sockets says so with these: try datagrams */
        if (r < 0 && (errno == ESOCKTNOSUPPORT || errno == EPROTONOSUPPORT || errno == EPROTOTYPE || errno == EINVAL))
                r = socket(domain, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        return r;
}
static long try_unshare(const char *arg) {
        return syscall(SYS_unshare, CLONE_NEWUTS);
}
static long try_mount(const char *arg) {
        return syscall(SYS_mount, "none", NOWHERE, "tmpfs", 0UL, NULL);
}
static long try_umount2(const char *arg) {
        return syscall(SYS_umount2, NOWHERE, 0);
}
static long try_keyctl(const char *arg) {
        /* looks the session keyring up without creating one */
        return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
}
static long try_add_key(const char *arg) {
        /* no such key type, no such keyring */
        return syscall(SYS_add_key, "zygote-no-such-type", "zygote", NULL, 0, 0);
}
static long try_kexec_load(const char *arg) {
        /* more segments than KEXEC_SEGMENT_MAX (16), no segments: EINVAL */
        return syscall(SYS_kexec_load, 0UL, 1000UL, NULL, 0xffff0000UL);
}
static long try_bpf(const char *arg) {
        return syscall(SYS_bpf, 0xffff, NULL, 0);
}
static long try_perf_event_open(const char *arg) {
        return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0UL); /* EFAULT */
}
static long try_ptrace(const char *arg) {
        /* no such process */
        return syscall(SYS_ptrace, PTRACE_PEEKDATA, 0x7ffffff0, NULL, NULL);
}
static long try_setns(const char *arg) {
        return syscall(SYS_setns, -1, 0);
}
static long try_chroot(const char *arg) {
        return syscall(SYS_chroot, NOWHERE);
}
static long try_pivot_root(const char *arg) {
        return syscall(SYS_pivot_root, NOWHERE, NOWHERE);
}
static long try_clone3(const char *arg) {
        return syscall(SYS_clone3, NULL, 0);
} /* EINVAL */
static long try_init_module(const char *arg) {
        return syscall(SYS_init_module, NULL, 0UL, "");
}
static long try_finit_module(const char *arg) {
        return syscall(SYS_finit_module, -1, "", 0);
}
static long try_delete_module(const char *arg) {
        return syscall(SYS_delete_module, "zygote_no_such_module", O_NONBLOCK);
}
static long try_swapon(const char *arg) {
        return syscall(SYS_swapon, NOWHERE, 0);
}
static long try_swapoff(const char *arg) {
        return syscall(SYS_swapoff, NOWHERE);
}
static long try_reboot(const char *arg) {
        /* invalid magic numbers: the kernel refuses before doing anything */
        return syscall(SYS_reboot, 0, 0, 0, NULL);
}
static long try_open_by_handle_at(const char *arg) {
        return syscall(SYS_open_by_handle_at, -1, NULL, O_RDONLY); /* EBADF or EFAULT */
}
static long try_name_to_handle_at(const char *arg) {
        return syscall(SYS_name_to_handle_at, -1, NOWHERE, NULL, NULL, 0);
}
static long try_userfaultfd(const char *arg) {
        long r = syscall(SYS_userfaultfd, O_CLOEXEC);
        if (r >= 0)
                close((int) r);
        return r;
}
static long try_io_uring_setup(const char *arg) {
        return syscall(SYS_io_uring_setup, 0, NULL);
}
static long try_acct(const char *arg) {
        return syscall(SYS_acct, NOWHERE);
}
static long try_settimeofday(const char *arg) {
        return syscall(SYS_settimeofday, NULL, NULL);
}
static long try_setresuid(const char *arg) {
        /* -1: keep every id as it is */
        return syscall(SYS_setresuid, -1, -1, -1);
}

static const struct {
        const char *name;
        long (*fn)(const char *arg);
} calls[] = {
        { "getpid", try_getpid },
        { "getppid", try_getppid },
        { "kill", try_kill },
        { "tkill", try_tkill },
        { "tgkill", try_tgkill },
        { "uname", try_uname },
        { "getcwd", try_getcwd },
        { "mkdirat", try_mkdirat },
        { "personality", try_personality },
        { "socket", try_socket },
        { "unshare", try_unshare },
        { "mount", try_mount },
        { "umount2", try_umount2 },
        { "keyctl", try_keyctl },
        { "add_key", try_add_key },
        { "kexec_load", try_kexec_load },
        { "bpf", try_bpf },
        { "perf_event_open", try_perf_event_open },
        { "ptrace", try_ptrace },
        { "setns", try_setns },
        { "chroot", try_chroot },
        { "pivot_root", try_pivot_root },
        { "clone3", try_clone3 },
        { "init_module", try_init_module },
        { "finit_module", try_finit_module },
        { "delete_module", try_delete_module },
        { "swapon", try_swapon },
        { "swapoff", try_swapoff },
        { "reboot", try_reboot },
        { "open_by_handle_at", try_open_by_handle_at },
        { "name_to_handle_at", try_name_to_handle_at },
        { "userfaultfd", try_userfaultfd },
        { "io_uring_setup", try_io_uring_setup },
        { "acct", try_acct },
        { "settimeofday", try_settimeofday },
        { "setresuid", try_setresuid },
};

int main(int argc, char **argv) {
        if (argc < 2 || argc > 3) {
                fprintf(stderr, "usage: try-syscall NAME [ARG]\n");
                return 2;
        }
        if (strcmp(argv[1], "--list") == 0) {
                for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
                        printf("%s\n", calls[i].name);
                return 0;
        }
        for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
                if (strcmp(argv[1], calls[i].name) == 0) {
                        long r;

                        errno = 0;
                        r = calls[i].fn(argc > 2 ? argv[2] : NULL);
                        printf("%s errno=%d\n", argv[1], r < 0 ? errno : 0);
                        return fflush(stdout) == 0 ? 0 : 1;
                }
        fprintf(stderr, "try-syscall: unknown system call: %s\n", argv[1]);
        return 2;
}
