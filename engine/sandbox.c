/* SPDX-License-Identifier: MIT */
/*
 * The sandbox-setup module: a container process between clone and execve. See sandbox.h for the
 * contract and the order of the steps. Step 3, the filesystem, is in sandbox-mount.c.
 *
 * This runs in a freshly cloned copy of zygote-runc: no malloc, no stdio, no locks, no logging.
 * Only raw system calls, async-signal-safe libc wrappers and pure string helpers. Every failure is
 * one struct ze_sb_status on sync_fd, then _exit().
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "kernel-abi.h"
#include "steps.h"
#include "sandbox.h"
#include "sandbox-mount.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif


static const char *const step_names[_ZY_SB_STEP_MAX] = {
#define ZE_SB_STEP_NAME(id, name) [ZE_SB_STEP_##id] = name,
        ZE_SB_STEPS(ZE_SB_STEP_NAME)
#undef ZE_SB_STEP_NAME
};

const char *ze_sb_step_to_string(enum ze_sb_step step) {
        if ((unsigned) step >= _ZY_SB_STEP_MAX || !step_names[step])
                return "unknown";
        return step_names[step];
}

static int report(int fd, enum ze_sb_step step, int err, int index, int pid) {
        struct ze_sb_status s = { .step = step, .err = err, .index = index, .pid = pid };
        ssize_t n;

        if (fd < 0)
                return 0;
        /* one datagram on a SOCK_SEQPACKET: whole or nothing; MSG_NOSIGNAL: a parent that went
         * away must not kill us with SIGPIPE before we exit with our code */
        do
                n = send(fd, &s, sizeof(s), MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return n == (ssize_t) sizeof(s) ? 0 : -EIO;
}

_Noreturn static void fail_at(const struct ze_sandbox *sb, enum ze_sb_step step, int err, int index,
                              int code) {
        (void) report(sb->sync_fd, step, err > 0 ? err : EIO, index, 0);
        _exit(code);
}

_Noreturn static void fail(const struct ze_sandbox *sb, enum ze_sb_step step, int err) {
        fail_at(sb, step, err, -1, ZE_EXIT_SETUP_FAILED);
}

static int send_fd(int sock, int fd) {
        char byte = 0;
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } u;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                              .msg_controllen = sizeof(u.buf) };
        struct cmsghdr *c;

        memset(&u, 0, sizeof(u));
        c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0)
                return -errno;
        return 0;
}

/* Step 5: the pty comes from the container's own devpts, so that its number and permissions are
 * the container's; the master goes to the caller (conmon, the shim) and never stays here. */
static int setup_console(const struct ze_sandbox *sb) {
        int master, peer = -1, unlock = 0, r = 0;
        unsigned n;

        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0)
                return -errno;
        if (ioctl(master, TIOCSPTLCK, &unlock) < 0 || ioctl(master, TIOCGPTN, &n) < 0)
                r = -errno;
        if (r == 0) {
                peer = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
                if (peer < 0)
                        r = -errno;
        }
        if (r == 0 && sb->dev_console)
                r = ze_sb_bind_console(peer, sb->dev_console);
        if (r == 0)
                r = send_fd(sb->console_fd, master);
        close(master);
        if (r < 0)
                return r;
        if (setsid() < 0 || ioctl(peer, TIOCSCTTY, 0) < 0)
                return -errno;
        for (int t = 0; t < 3; t++)
                if (dup3(peer, t, 0) < 0)
                        return -errno;
        if (peer > 2)
                close(peer);
        close(sb->console_fd);
        return 0;
}


static int set_caps(const struct ze_sandbox *sb) {
        unsigned last = sb->cap_last > 0 && sb->cap_last < 64 ? sb->cap_last : 63;
        int r;

        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0UL, 0UL, 0UL) < 0)
                return -errno;
        r = ze_step_capset(sb->cap_effective, sb->cap_permitted, sb->cap_inheritable);
        if (r < 0)
                return r;
        /* the kernel raises an ambient capability only when it is permitted and inheritable;
         * others are skipped, as runc does (its default spec asks for ambient ones with an
         * empty inheritable set) */
        for (unsigned c = 0; c <= last; c++)
                if ((sb->cap_ambient & sb->cap_permitted & sb->cap_inheritable & (UINT64_C(1) << c)) &&
                    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (unsigned long) c, 0UL, 0UL) < 0)
                        return -errno;
        return 0;
}

static int apply_filter(const struct ze_sandbox *sb) {
        if (sb->ref_pidfd >= 0) {
                int r = ze_step_filter_clone(sb->ref_pidfd);

                /* a kernel without the op answers EINVAL and installed nothing: load instead */
                if (r == 0 || r != -EINVAL || !sb->prog)
                        return r;
        }
        if (!sb->prog)
                return 0;
        return ze_step_filter_load(sb->prog, sb->filter_flags);
}

/* Closes every fd from 3 + preserve up, but the n of keep (any order; negative ones ignored): the
 * gaps between them, each with one close_range. */
static int close_all_but(unsigned preserve, const int *keep, size_t n) {
        unsigned from = 3U + preserve;

        for (;;) {
                unsigned next = ~0U; /* the lowest kept fd at or above from */

                for (size_t i = 0; i < n; i++)
                        if (keep[i] >= 0 && (unsigned) keep[i] >= from && (unsigned) keep[i] < next)
                                next = (unsigned) keep[i];
                if (next > from && syscall(SYS_close_range, from, next == ~0U ? ~0U : next - 1, 0U) < 0)
                        return -errno;
                if (next == ~0U)
                        return 0;
                from = next + 1;
        }
}

/* Step 12's cwd, resolved inside the process's root ("/": the container's after pivot_root or
 * exec's chroot): a symlink in the image resolves as if the rootfs were "/", and a magic link
 * (/proc/self/fd/N, /proc/1/cwd) is refused rather than followed wherever it points. */
static int chdir_in_root(const char *cwd) {
        struct open_how how = { .flags = (uint64_t) (O_PATH | O_DIRECTORY | O_CLOEXEC),
                                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
        int root, fd, r = 0;

        root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        while (*cwd == '/')
                cwd++;
        fd = (int) syscall(SYS_openat2, root, *cwd ? cwd : ".", &how, sizeof(how));
        if (fd < 0)
                r = -errno;
        close(root);
        if (r < 0)
                return r;
        if (fchdir(fd) < 0)
                r = -errno;
        close(fd);
        return r;
}

static int check_exec(const char *path) {
        struct stat st;

        if (stat(path, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EACCES;
        if (access(path, X_OK) < 0)
                return -errno;
        return 0;
}

/* Step 13: like execvp's search (without its /bin/sh fallback); the result is in path_buf, or
 * argv[0] itself when it has a slash. Returns the path to exec or fails the child. */
static const char *resolve(const struct ze_sandbox *sb) {
        const char *name = sb->argv ? sb->argv[0] : NULL;
        bool eacces = false;
        size_t name_len;
        int r;

        if (!name || !*name)
                fail_at(sb, ZE_SB_STEP_RESOLVE, ENOENT, -1, ZE_EXIT_NOT_FOUND);
        if (strchr(name, '/')) {
                r = check_exec(name);
                if (r < 0)
                        fail_at(sb, ZE_SB_STEP_RESOLVE, -r, 1,
                                r == -ENOENT || r == -ENOTDIR ? ZE_EXIT_NOT_FOUND : ZE_EXIT_NOT_EXECUTABLE);
                return name;
        }
        name_len = strlen(name);
        for (const char *s = sb->search_path ? sb->search_path : ZC_DEFAULT_PATH;; s++) {
                const char *e = strchrnul(s, ':');
                size_t dir_len = (size_t) (e - s);

                if (dir_len > 0 && dir_len + 1 + name_len + 1 <= sb->path_buf_len) {
                        memcpy(sb->path_buf, s, dir_len);
                        sb->path_buf[dir_len] = '/';
                        memcpy(sb->path_buf + dir_len + 1, name, name_len + 1);
                        r = check_exec(sb->path_buf);
                        if (r == 0)
                                return sb->path_buf;
                        if (r == -EACCES)
                                eacces = true;
                }
                if (!*e)
                        break;
                s = e;
        }
        /* index 0: searched PATH (the runtime says "executable file not found in $PATH") */
        if (eacces)
                fail_at(sb, ZE_SB_STEP_RESOLVE, EACCES, 0, ZE_EXIT_NOT_EXECUTABLE);
        fail_at(sb, ZE_SB_STEP_RESOLVE, ENOENT, 0, ZE_EXIT_NOT_FOUND);
}

_Noreturn void ze_sandbox_run(const struct ze_sandbox *sb) {
        const char *path;
        char b;
        ssize_t n;
        int r;

        ze_step_reset_signals(NULL);
        /* A copy of the runtime in the container's pid namespace: dumpable, its /proc/PID/exe,
         * mem and environ and its fds (pidfd_getfd) would be open to the container's processes.
         * The runtime forks us non-dumpable already; this is for any other caller. */
        if (!sb->dumpable_until_go && prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) < 0)
                fail(sb, ZE_SB_STEP_DUMPABLE, errno);

        /* 1. wait for the parent: maps written, cgroups joined */
        do
                n = read(sb->sync_fd, &b, 1);
        while (n < 0 && errno == EINTR);
        if (n == 0)
                _exit(ZE_EXIT_ABANDONED);
        if (n < 0)
                fail(sb, ZE_SB_STEP_GO, errno);
        if (prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) < 0)
                fail(sb, ZE_SB_STEP_DUMPABLE, errno);

        /* 2. namespaces given by path, each only as the kind it was declared: with a type of 0
         * the kernel would join whatever the file is (an "ipc" entry naming the host's mount
         * namespace would put the container's mounts there) */
        for (size_t i = 0; i < sb->n_ns_fds && i < ZE_SB_MAX_NS; i++)
                if (sb->ns_types[i] == 0 || setns(sb->ns_fds[i], sb->ns_types[i]) < 0)
                        fail_at(sb, ZE_SB_STEP_SETNS, sb->ns_types[i] == 0 ? EINVAL : errno, (int) i,
                                ZE_EXIT_SETUP_FAILED);

        /* Nothing the runtime opened may reach what config.json or the image names: a cwd or a
         * mount source of /proc/self/fd/N would otherwise start in the host's tree through an fd
         * of ours (a cgroup directory, a namespace, the state directory). Only what the
         * container is given and what the remaining steps use stays open. */
        {
                const int keep[] = { sb->sync_fd, sb->start_fd, sb->console_fd, sb->ref_pidfd };

                r = close_all_but((unsigned) (sb->preserve_fds > 0 ? sb->preserve_fds : 0), keep, 4);
                if (r < 0)
                        fail(sb, ZE_SB_STEP_FDS, -r);
        }

        /* our ids are unmapped in a new user namespace until we take its root's: devpts and
         * tmpfs refuse (EOVERFLOW) to create inodes for an unmapped owner */
        if (sb->userns_root && (syscall(SYS_setresgid, 0, 0, 0) < 0 || syscall(SYS_setresuid, 0, 0, 0) < 0))
                fail(sb, ZE_SB_STEP_SETNS, errno);

        /* 3. the filesystem */
        if (sb->new_mount_ns) {
                enum ze_sb_step step;
                int index;

                r = ze_sb_setup_mounts(sb, &step, &index);
                if (r < 0)
                        fail_at(sb, step, -r, index, ZE_EXIT_SETUP_FAILED);
        }

        /* 4. hostname */
        if (sb->hostname && sethostname(sb->hostname, strlen(sb->hostname)) < 0)
                fail(sb, ZE_SB_STEP_HOSTNAME, errno);

        /* 5. + 6. terminal and session */
        if (sb->console_fd >= 0) {
                r = setup_console(sb);
                if (r < 0)
                        fail(sb, ZE_SB_STEP_CONSOLE, -r);
        } else if (setsid() < 0)
                fail(sb, ZE_SB_STEP_SETSID, errno);

        /* 7. rlimits */
        for (size_t i = 0; i < sb->n_rlimits; i++)
                if (setrlimit(sb->rlimits[i].resource, &sb->rlimits[i].limit) < 0)
                        fail_at(sb, ZE_SB_STEP_RLIMIT, errno, (int) i, ZE_EXIT_SETUP_FAILED);

        /* 8. bounding set, while CAP_SETPCAP is ours */
        if (sb->set_caps) {
                /* every capability outside the kept bounding set; the loop (no mask prctl here)
                 * stops where the kernel's capabilities end */
                r = ze_capbset_drop(~sb->cap_bounding, false, sb->cap_last);
                if (r < 0)
                        fail(sb, ZE_SB_STEP_CAPBSET, -r);
        }

        /* 9. ids, raw: glibc's wrappers would broadcast to threads this copy does not have */
        if (sb->set_ids) {
                /* a user namespace with "setgroups deny" (rootless) refuses any list: keep none */
                if (syscall(SYS_setgroups, sb->n_groups, sb->groups) < 0 &&
                    !(errno == EPERM && sb->n_groups == 0))
                        fail(sb, ZE_SB_STEP_GROUPS, errno);
                if (syscall(SYS_setresgid, sb->gid, sb->gid, sb->gid) < 0)
                        fail(sb, ZE_SB_STEP_GID, errno);
                if (sb->uid != 0 && prctl(PR_SET_KEEPCAPS, 1UL, 0UL, 0UL, 0UL) < 0)
                        fail(sb, ZE_SB_STEP_UID, errno);
                if (syscall(SYS_setresuid, sb->uid, sb->uid, sb->uid) < 0)
                        fail(sb, ZE_SB_STEP_UID, errno);
        }

        /* 10. without no_new_privs the kernel wants CAP_SYS_ADMIN for the filter, which step 11
         * may drop: then the filter goes on now (the profile must allow capset and prctl, as
         * Docker's and Podman's do) */
        if (!sb->no_new_privs && (sb->prog || sb->ref_pidfd >= 0)) {
                r = sb->set_ids && sb->uid != 0 ? ze_step_raise_effective() : 0;
                if (r >= 0)
                        r = apply_filter(sb);
                if (r < 0)
                        fail(sb, ZE_SB_STEP_FILTER, -r);
        }

        /* 11. capabilities */
        if (sb->set_caps) {
                r = set_caps(sb);
                if (r < 0)
                        fail(sb, ZE_SB_STEP_CAPS, -r);
        }

        /* 12. */
        if (sb->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0)
                fail(sb, ZE_SB_STEP_NNP, errno);
        if (sb->umask != (mode_t) -1)
                umask(sb->umask);
        if (sb->cwd) {
                r = chdir_in_root(sb->cwd);
                if (r < 0)
                        fail(sb, ZE_SB_STEP_CHDIR, -r);
        }

        /* 13. */
        path = resolve(sb);

        /* 14. the filter, last */
        if (sb->no_new_privs) {
                r = apply_filter(sb);
                if (r < 0)
                        fail(sb, ZE_SB_STEP_FILTER, -r);
        }

        /* 15. ready; wait for start */
        if (report(sb->sync_fd, ZE_SB_STEP_READY, 0, -1, (int) getpid()) < 0)
                _exit(ZE_EXIT_SETUP_FAILED);
        int start = sb->start_fd >= 0 ? sb->start_fd : sb->start_on_sync ? sb->sync_fd : -1;
        if (start >= 0) {
                do
                        n = read(start, &b, 1);
                while (n < 0 && errno == EINTR);
                if (n <= 0)
                        _exit(ZE_EXIT_ABANDONED);
        }

        /* 16. only the preserved fds cross execve */
        (void) syscall(SYS_close_range, 3U + (unsigned) sb->preserve_fds, ~0U, CLOSE_RANGE_CLOEXEC);
        execve(path, sb->argv, sb->envp);
        fail_at(sb, ZE_SB_STEP_EXEC, errno, -1,
                errno == ENOENT ? ZE_EXIT_NOT_FOUND : ZE_EXIT_NOT_EXECUTABLE);
}
