/* SPDX-License-Identifier: MIT */
/*
 * gen-bpf: writes a docker-like seccomp BPF program for filter-bench, on the host (the guest's
 * static programs have no libseccomp).
 *
 * Usage: gen-bpf OUT_FILE
 *
 * Used only while zygoted cannot dump the BPF of profiles/default.json itself: the program has
 * the shape of Docker's default profile (default action EPERM, its unconditional allow list, the
 * argument checks on socket, personality and clone, clone3 answering ENOSYS), compiled with
 * libseccomp's binary-tree layout for the native architecture, as zygote compiles profiles.
 * Names the installed libseccomp does not know are skipped, as runc does.
 */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const allowed[] = {
        "accept", "accept4", "access", "adjtimex", "alarm", "arch_prctl", "bind", "brk", "cachestat",
        "capget", "capset", "chdir", "chmod", "chown", "clock_adjtime", "clock_getres",
        "clock_gettime", "clock_nanosleep", "close", "close_range", "connect", "copy_file_range",
        "creat", "dup", "dup2", "dup3", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_pwait",
        "epoll_pwait2", "epoll_wait", "eventfd", "eventfd2", "execve", "execveat", "exit",
        "exit_group", "faccessat", "faccessat2", "fadvise64", "fallocate", "fanotify_mark",
        "fchdir", "fchmod", "fchmodat", "fchmodat2", "fchown", "fchownat", "fcntl", "fdatasync",
        "fgetxattr", "flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat",
        "fstatfs", "fsync", "ftruncate", "futex", "futex_requeue", "futex_wait", "futex_waitv",
        "futex_wake", "futimesat", "getcpu", "getcwd", "getdents", "getdents64", "getegid",
        "geteuid", "getgid", "getgroups", "getitimer", "getpeername", "getpgid", "getpgrp",
        "getpid", "getppid", "getpriority", "getrandom", "getresgid", "getresuid", "getrlimit",
        "get_robust_list", "getrusage", "getsid", "getsockname", "getsockopt", "get_thread_area",
        "gettid", "gettimeofday", "getuid", "getxattr", "inotify_add_watch", "inotify_init",
        "inotify_init1", "inotify_rm_watch", "io_cancel", "ioctl", "io_destroy", "io_getevents",
        "io_pgetevents", "ioprio_get", "ioprio_set", "io_setup", "io_submit", "kill",
        "landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self", "lchown",
        "lgetxattr", "link", "linkat", "listen", "listxattr", "llistxattr", "lremovexattr",
        "lseek", "lsetxattr", "lstat", "madvise", "map_shadow_stack", "membarrier",
        "memfd_create", "memfd_secret", "mincore", "mkdir", "mkdirat", "mknod", "mknodat", "mlock",
        "mlock2", "mlockall", "mmap", "modify_ldt", "mprotect", "mq_getsetattr", "mq_notify",
        "mq_open", "mq_timedreceive", "mq_timedsend", "mq_unlink", "mremap", "msgctl", "msgget",
        "msgrcv", "msgsnd", "msync", "munlock", "munlockall", "munmap", "name_to_handle_at",
        "nanosleep", "newfstatat", "open", "openat", "openat2", "pause", "pidfd_open",
        "pidfd_send_signal", "pipe", "pipe2", "pkey_alloc", "pkey_free", "pkey_mprotect", "poll",
        "ppoll", "prctl", "pread64", "preadv", "preadv2", "prlimit64", "process_mrelease",
        "pselect6", "ptrace", "pwrite64", "pwritev", "pwritev2", "read", "readahead", "readlink",
        "readlinkat", "readv", "recvfrom", "recvmmsg", "recvmsg", "remap_file_pages",
        "removexattr", "rename", "renameat", "renameat2", "restart_syscall", "rmdir", "rseq",
        "rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn",
        "rt_sigsuspend", "rt_sigtimedwait", "rt_tgsigqueueinfo", "sched_getaffinity",
        "sched_getattr", "sched_getparam", "sched_get_priority_max", "sched_get_priority_min",
        "sched_getscheduler", "sched_rr_get_interval", "sched_setaffinity", "sched_setattr",
        "sched_setparam", "sched_setscheduler", "sched_yield", "seccomp", "select", "semctl",
        "semget", "semop", "semtimedop", "sendfile", "sendmmsg", "sendmsg", "sendto", "setfsgid",
        "setfsuid", "setgid", "setgroups", "setitimer", "setpgid", "setpriority", "setregid",
        "setresgid", "setresuid", "setreuid", "setrlimit", "set_robust_list", "setsid",
        "setsockopt", "set_thread_area", "set_tid_address", "setuid", "setxattr", "shmat",
        "shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd", "signalfd4",
        "socketpair", "splice", "stat", "statfs", "statx", "symlink", "symlinkat", "sync",
        "sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time", "timer_create",
        "timer_delete", "timer_getoverrun", "timer_gettime", "timer_settime", "timerfd_create",
        "timerfd_gettime", "timerfd_settime", "times", "tkill", "truncate", "uname", "unlink",
        "unlinkat", "utime", "utimensat", "utimes", "vfork", "vmsplice", "wait4", "waitid",
        "write", "writev",
};

/* SCMP_A0() leaves datum_b implicit, which clang's -Wextra flags. */
#define ARG0(cmp, a, b) ((struct scmp_arg_cmp){ .arg = 0, .op = (cmp), .datum_a = (a), .datum_b = (b) })

static int add_rules(scmp_filter_ctx ctx) {
        int r;
        for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
                int nr = seccomp_syscall_resolve_name(allowed[i]);
                if (nr == __NR_SCMP_ERROR)
                        continue;
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
                if (r < 0)
                        return r;
        }
        /* socket: anything but AF_VSOCK (40). */
        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, ARG0(SCMP_CMP_NE, 40, 0));
        if (r < 0)
                return r;
        /* personality: the handful of values Docker allows. */
        static const unsigned long personas[] = { 0x0, 0x8, 0x20000, 0x20008, 0xffffffff };
        for (size_t i = 0; i < sizeof(personas) / sizeof(personas[0]); i++) {
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1,
                                     ARG0(SCMP_CMP_EQ, personas[i], 0));
                if (r < 0)
                        return r;
        }
        /* clone: no namespace flags (CLONE_NEWNS|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWCGROUP). */
        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                             ARG0(SCMP_CMP_MASKED_EQ, 0x7E020000, 0));
        if (r < 0)
                return r;
        /* clone3's flags are behind a pointer: make callers fall back to clone. */
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
}

int main(int argc, char **argv) {
        if (argc != 2) {
                fprintf(stderr, "usage: %s OUT_FILE\n", argv[0]);
                return 2;
        }
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
        if (!ctx) {
                fprintf(stderr, "gen-bpf: seccomp_init failed\n");
                return 1;
        }
        int r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
        if (r >= 0)
                r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        if (r >= 0)
                r = add_rules(ctx);
        int fd = -1;
        if (r >= 0) {
                fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                r = fd < 0 ? -errno : seccomp_export_bpf(ctx, fd);
        }
        if (fd >= 0 && close(fd) < 0 && r >= 0)
                r = -errno;
        seccomp_release(ctx);
        if (r < 0) {
                fprintf(stderr, "gen-bpf: %s: %s\n", argv[1], strerror(-r));
                return 1;
        }
        return 0;
}
