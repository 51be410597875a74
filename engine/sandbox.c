/* SPDX-License-Identifier: MIT */
/*
 * The sandbox-setup module: a container process between clone and execve. See sandbox.h for the
 * contract and the order of the steps. Step 3, the filesystem, is in sandbox-mount.c.
 *
 * This runs in a freshly cloned copy of zygote-runc: no malloc, no stdio, no locks, no logging.
 * Only raw system calls, async-signal-safe libc wrappers and pure string helpers. Every failure is
 * one struct ze_status on sync_fd, then _exit(). The steps the task worker takes too are the
 * engine's step functions (steps.h); here are the container's own and the recipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "kernel-abi.h"
#include "signal-util.h"
#include "steps.h"
#include "sandbox.h"
#include "sandbox-hooks.h"
#include "sandbox-mount.h"
#include "util.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* A step's result: on failure, its record (index: which entry, -1 none) and exit 125. */
static void check_at(const struct ze_reporter *to, enum ze_step step, int index, int r) {
        if (r < 0)
                ze_fail(to, step, -r, index, ZE_EXIT_SETUP_FAILED);
}

static void check(const struct ze_reporter *to, enum ze_step step, int r) {
        check_at(to, step, -1, r);
}

/* One message of len bytes (a byte of 0 when data is NULL) with fd as SCM_RIGHTS. */
static int send_fd_with(int sock, int fd, const void *data, size_t len) {
        char byte = 0;
        struct iovec iov = { .iov_base = data ? (void *) data : &byte, .iov_len = data ? len : 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } u;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
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

static int send_fd(int sock, int fd) {
        return send_fd_with(sock, fd, NULL, 0);
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
        if (r == 0 && sb->console_rows && sb->console_cols) {
                struct winsize ws = { .ws_row = sb->console_rows, .ws_col = sb->console_cols };
                if (ioctl(peer, TIOCSWINSZ, &ws) < 0)
                        r = -errno;
        }
        /* the terminal is the process's: its user owns it (the group stays devpts' gid= option),
         * as runc gives it; an owner or user not mapped in a user namespace (EINVAL, EPERM) keeps
         * the one devpts gave, as runc keeps it */
        if (r == 0 && sb->set_ids && fchown(peer, sb->uid, (gid_t) -1) < 0 && errno != EINVAL && errno != EPERM)
                r = -errno;
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

/* Step 12's cwd, resolved inside the process's root ("/": the container's after pivot_root or
 * exec's chroot): a symlink in the image resolves as if the rootfs were "/", and a magic link
 * (/proc/self/fd/N, /proc/1/cwd) is refused rather than followed wherever it points. Opened before
 * the early filter (openat2 is newer than many profiles), entered by fchdir after it. The fd, or
 * -EBADF without a cwd, or a negative errno. */
static int open_cwd(const struct ze_sandbox *sb) {
        struct open_how how = { .flags = (uint64_t) (O_PATH | O_DIRECTORY | O_CLOEXEC),
                                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
        const char *cwd = sb->cwd;
        int root, fd, r = 0;

        if (!cwd)
                return -EBADF;
        root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        while (*cwd == '/')
                cwd++;
        fd = (int) syscall(SYS_openat2, root, *cwd ? cwd : ".", &how, sizeof(how));
        if (fd < 0)
                r = -errno;
        close(root);
        return r < 0 ? r : fd;
}

/* Step 4: lo up in a network namespace the container got new, as runc brings it up. */
static int loopback_up(const struct ze_sandbox *sb) {
        struct ifreq ifr = { .ifr_name = "lo" };
        int fd, r = 0;

        if (!sb->loopback_up)
                return 0;
        fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        /* A kernel built without IPv4 (the kernel lane's guest) has no address lo could serve:
         * nothing to bring up. */
        if (fd < 0)
                return errno == EAFNOSUPPORT ? 0 : -errno;
        if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
                r = -errno;
        ifr.ifr_flags |= IFF_UP;
        if (r == 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
                r = -errno;
        close(fd);
        return r;
}

/* Step 2: namespaces given by path, each only as the kind it was declared (ze_step_setns refuses
 * a type of 0). The entry that failed in *ret_index. */
static int join_ns_fds(const struct ze_sandbox *sb, int *ret_index) {
        for (size_t i = 0; i < sb->n_ns_fds && i < ZE_SB_MAX_NS; i++) {
                int r = ze_step_setns(sb->ns_fds[i], (unsigned) sb->ns_types[i]);

                *ret_index = (int) i;
                if (r < 0)
                        return r;
        }
        *ret_index = -1;
        return 0;
}

/* Step 2, in a new user namespace: our ids are unmapped until we take its root's, and devpts and
 * tmpfs refuse (EOVERFLOW) to create inodes for an unmapped owner. */
static int become_userns_root(const struct ze_sandbox *sb) {
        if (!sb->userns_root)
                return 0;
        if (syscall(SYS_setresgid, 0, 0, 0) < 0 || syscall(SYS_setresuid, 0, 0, 0) < 0)
                return -errno;
        return 0;
}

/* Step 2's fds: every fd but stdio, the preserved ones, keep (n of them) and the premade mounts'
 * trees, which step 3 attaches and closes. */
static int close_fds(const struct ze_sandbox *sb, const int *keep, size_t n) {
        int all[16 + ZE_SB_MAX_PREMADE];
        size_t k = 0;

        for (size_t i = 0; i < n && k < 16; i++)
                all[k++] = keep[i];
        for (size_t i = 0; sb->new_mount_ns && i < sb->n_mounts && k < ELEMENTSOF(all); i++)
                if (sb->mounts[i].premade)
                        all[k++] = sb->mounts[i].tree_fd;
        for (size_t i = 0; sb->new_mount_ns && i < sb->n_devices && k < ELEMENTSOF(all); i++)
                if (sb->devices[i].premade)
                        all[k++] = sb->devices[i].tree_fd;
        return ze_step_close_all_but(3U + (unsigned) (sb->preserve_fds > 0 ? sb->preserve_fds : 0), all, k);
}

/* Steps 5 and 6: the terminal, which makes the session too, or a session alone. */
static int console_or_session(const struct ze_sandbox *sb, enum ze_step *ret_step) {
        if (sb->console_fd >= 0) {
                *ret_step = ZE_STEP_CONSOLE;
                return setup_console(sb);
        }
        *ret_step = ZE_STEP_SETSID;
        return setsid() < 0 ? -errno : 0;
}

/* Steps 10 and 14, a filter with a listener (SCMP_ACT_NOTIFY): the listener goes to the
 * runtime at once, as a LISTENER record on the sync socket carrying the fd, and is closed here.
 * sendmsg is the one call the profile may not make wait (the profile module refuses that): the
 * runtime passes the listener on to the agent as soon as it reads the record, so that whatever
 * this process calls from here on, the agent has what it needs to answer. On failure the
 * listener is closed before the report: with no listener left, a call that would have waited
 * for an agent fails (ENOSYS) instead of hanging the report. */
static int hand_over_listener(const struct ze_sandbox *sb, int listener) {
        /* no getpid() here: no call but sendmsg between the load and the hand-over */
        const struct ze_status rec = { .step = ZE_STEP_LISTENER, .index = -1 };
        int r = send_fd_with(sb->sync_fd, listener, &rec, sizeof(rec));

        close(listener);
        return r;
}

/* Steps 10 and 14: the cloned filter falls back to prog on a kernel without the op. */
static int apply_filter(const struct ze_sandbox *sb, enum ze_step *ret_step) {
        enum ze_filter_mode mode = sb->ref_pidfd >= 0 ? ZE_FILTER_CLONE : sb->prog ? ZE_FILTER_LOAD : ZE_FILTER_NONE;
        int r = ze_step_filter(mode, sb->ref_pidfd, sb->prog, sb->filter_flags);

        *ret_step = ZE_STEP_FILTER;
        if (r <= 0)
                return r;
        *ret_step = ZE_STEP_LISTENER;
        return hand_over_listener(sb, r);
}

/* Step 10: without no_new_privs the kernel wants CAP_SYS_ADMIN for the filter, which step 11
 * may drop: then the filter goes on now, the effective set first raised back to the permitted
 * one if the switch left uid 0 (the profile must allow capset and prctl, as Docker's and
 * Podman's do). */
static int apply_filter_early(const struct ze_sandbox *sb, enum ze_step *ret_step) {
        int r;

        *ret_step = ZE_STEP_FILTER;
        if (sb->no_new_privs || (!sb->prog && sb->ref_pidfd < 0))
                return 0;
        r = sb->set_ids && sb->uid != 0 ? ze_step_raise_effective() : 0;
        return r < 0 ? r : apply_filter(sb, ret_step);
}

/* Step 12: the cwd opened before the filter; the permission to enter it is checked now, with the
 * container's capabilities. */
static int enter_cwd(int cwd_fd) {
        int r = 0;

        if (cwd_fd < 0)
                return 0;
        if (fchdir(cwd_fd) < 0)
                r = -errno;
        close(cwd_fd);
        return r;
}

/* Step 8a: the cwd entered first with the runtime's ids and capabilities, as runc tries it first:
 * a directory the runtime reaches and the container's user does not (an image's "/" only root
 * may search, a volume of another owner) is the process's cwd all the same; its path is resolved
 * inside the root either way. Refused permission (EACCES, EPERM: a directory only the user may
 * enter, a volume chowned to it behind root squashing) is tried again as the user (9a, 12).
 * false when entered or there is no cwd, true to try again, or a negative errno. */
static int enter_cwd_as_runtime(const struct ze_sandbox *sb) {
        int fd = open_cwd(sb), r;

        if (fd == -EBADF)
                return false;
        r = fd < 0 ? fd : enter_cwd(fd);
        if (r == -EACCES || r == -EPERM)
                return true;
        return r;
}

/* Step 13: the program, found now so that create fails for a missing one. */
static const char *resolve(const struct ze_sandbox *sb, const struct ze_reporter *to) {
        const char *path = NULL;
        int index, r;

        r = ze_step_resolve(sb->argv, sb->search_path, sb->path_buf, sb->path_buf_len, &path, &index);
        if (r < 0)
                ze_fail(to, ZE_STEP_EXEC, -r, index, r == -ENOTDIR ? ZE_EXIT_NOT_FOUND : ze_exec_exit_code(-r));
        return path;
}

/* Step 15: HELD with our pid, then the go: start writes to the exec fifo (or the parent to the
 * sync socket); EOF or an error there abandons. */
static void ready(const struct ze_sandbox *sb, const struct ze_reporter *to) {
        int start = sb->start_fd >= 0 ? sb->start_fd : sb->start_on_sync ? sb->sync_fd : -1;

        if (ze_report(to, ZE_STEP_HELD, 0, -1, (int) getpid()) < 0)
                _exit(ZE_EXIT_SETUP_FAILED);
        if (start >= 0 && ze_step_wait_go(start) <= 0)
                _exit(ZE_EXIT_ABANDONED);
}

/* Step 1: the parent's go, with our pid as the host sees it (for the hooks' state) when it sends
 * one: 1 for the go, 0 for EOF (the parent gave up), or a negative errno. */
static int wait_go(const struct ze_sandbox *sb) {
        char buf[8];
        int32_t pid = 0;
        ssize_t n;

        do
                n = read(sb->sync_fd, buf, sizeof(buf));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n == 0)
                return 0;
        if ((size_t) n >= 1 + sizeof(pid))
                memcpy(&pid, buf + 1, sizeof(pid));
        ze_sb_hooks_set_pid(&sb->create_hooks, pid);
        ze_sb_hooks_set_pid(&sb->start_hooks, pid);
        return 1;
}

/* A hook that failed: its record {step, err, index, status}, on sync_fd and (startContainer,
 * whose `start` has no sync socket) on hook_report_fd too, then exit 125. */
static void check_hooks(const struct ze_sandbox *sb, const struct ze_reporter *to, enum ze_step step,
                        const struct ze_sb_hooks *h) {
        const struct ze_reporter fifo = { .fd = step == ZE_STEP_START_HOOK ? sb->hook_report_fd : -1 };
        int index, status, r;

        r = ze_sb_run_hooks(h, &index, &status);
        if (r == 0)
                return;
        (void) ze_report(&fifo, step, -r, index, status);
        (void) ze_report(to, step, -r, index, status);
        _exit(ZE_EXIT_SETUP_FAILED);
}

/* The container init's recipe: the order is the security argument of sandbox.h. */
_Noreturn void ze_sandbox_run(const struct ze_sandbox *sb) {
        const struct ze_reporter to = { .fd = sb->sync_fd, .socket = true };
        /* what the remaining steps use; with stdio and the preserved fds, all that stays open */
        int keep[] = { sb->sync_fd, sb->start_fd, sb->console_fd, sb->ref_pidfd, sb->hook_report_fd, -EBADF };
        enum ze_step step = ZE_STEP_NONE;
        const char *path;
        int index = -1, r, lsm_fd = -EBADF, cwd_fd, again;
        int trees[ZE_SB_MAX_TREES];

        /* 0. no handler, ignored signal or mask of the runtime's reaches the container. A copy of
         * the runtime in the container's pid namespace: dumpable, its /proc/PID/exe, mem and
         * environ and its fds (pidfd_getfd) would be open to the container's processes. The
         * runtime forks us non-dumpable already; this is for any other caller. */
        zc_signals_reset(NULL);
        if (!sb->dumpable_until_go)
                check(&to, ZE_STEP_DUMPABLE, prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) < 0 ? -errno : 0);
        /* 1. wait for the parent: maps written, cgroups joined; EOF: it gave up */
        r = wait_go(sb);
        if (r == 0)
                _exit(ZE_EXIT_ABANDONED);
        check(&to, ZE_STEP_SYNC, r);
        check(&to, ZE_STEP_DUMPABLE, prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) < 0 ? -errno : 0);
        /* the AppArmor profile's file, while only the runtime's mounts are here */
        if (sb->lsm_exec) {
                lsm_fd = ze_sb_lsm_open(sb->lsm_attr);
                check(&to, ZE_STEP_LSM, lsm_fd < 0 ? lsm_fd : 0);
                keep[ELEMENTSOF(keep) - 1] = lsm_fd;
        }
        /* 2. namespaces given by path */
        r = join_ns_fds(sb, &index);
        check_at(&to, ZE_STEP_SETNS, index, r);
        /* Nothing the runtime opened may reach what config.json or the image names: a cwd or a
         * mount source of /proc/self/fd/N would otherwise start in the host's tree through an fd
         * of ours (a cgroup directory, a namespace, the state directory). */
        check(&to, ZE_STEP_FDS, close_fds(sb, keep, ELEMENTSOF(keep)));
        /* the bind sources while the ids are still the runtime's (a user namespace's root may
         * not reach them) */
        if (sb->userns_root && sb->new_mount_ns)
                ze_sb_open_trees(sb, trees);
        check(&to, ZE_STEP_SETNS, become_userns_root(sb));
        /* 3. the filesystem; the createContainer hooks before pivot_root */
        if (sb->new_mount_ns) {
                r = ze_sb_setup_mounts(sb, sb->userns_root ? trees : NULL, &step, &index);
                check_at(&to, step, index, r);
        }
        check_hooks(sb, &to, ZE_STEP_CREATE_HOOK, &sb->create_hooks);
        if (sb->new_mount_ns) {
                r = ze_sb_finish_root(sb, &step, &index);
                check_at(&to, step, index, r);
        }
        /* 4. */
        check(&to, ZE_STEP_HOSTNAME, sb->hostname && sethostname(sb->hostname, strlen(sb->hostname)) < 0 ? -errno : 0);
        check(&to, ZE_STEP_DOMAINNAME,
              sb->domainname && setdomainname(sb->domainname, strlen(sb->domainname)) < 0 ? -errno : 0);
        check(&to, ZE_STEP_LOOPBACK, loopback_up(sb));
        /* 5. + 6. terminal and session */
        r = console_or_session(sb, &step);
        check(&to, step, r);
        /* the profile for the execve, before ids, capabilities and no_new_privs (as runc) */
        if (lsm_fd >= 0)
                check(&to, ZE_STEP_LSM, ze_sb_lsm_write(lsm_fd, sb->lsm_exec));
        /* 7. */
        r = ze_step_rlimits(sb->rlimits, sb->n_rlimits, &index);
        check_at(&to, ZE_STEP_RLIMIT, index, r);
        /* 7a. inherited by everything the process starts, kept across execve */
        check(&to, ZE_STEP_MEMPOLICY, ze_sb_set_mempolicy(&sb->mempolicy));
        /* 8. bounding set, while CAP_SETPCAP is ours: every capability outside the kept one; the
         * loop (no mask prctl here) stops where the kernel's capabilities end */
        if (sb->set_caps)
                check(&to, ZE_STEP_CAPBSET, ze_capbset_drop(~sb->cap_bounding, false, sb->cap_last));
        /* 8a. */
        again = enter_cwd_as_runtime(sb);
        check(&to, ZE_STEP_CHDIR, again < 0 ? again : 0);
        /* 9. ids (KEEPCAPS across the switch); a user namespace with "setgroups deny"
         * (rootless) refuses any group list: keep none. keep_groups: the runtime's own groups stay,
         * none added (its caller's, which the runtime checked) */
        if (sb->set_ids) {
                r = ze_step_ids(sb->uid, sb->gid, sb->keep_groups ? NULL : sb->groups,
                                sb->keep_groups ? ZE_KEEP_GROUPS : sb->n_groups, sb->uid != 0, true, &step);
                check(&to, step, r);
        }
        /* 9a. before the early filter, what a profile is not written for: a container's profile is
         * the program's, and after step 10 the init makes only the calls runc makes after its own
         * load (capset, prctl, fchdir, close, stat and access of argv[0], getpid, the sync socket's
         * send and the go's read, the startContainer hooks, execve). The cwd is opened here (not
         * entered: the container's capabilities are not set yet); everything from 3 + preserve_fds
         * up becomes CLOEXEC (16): only the preserved fds cross execve. */
        check(&to, ZE_STEP_PERSONALITY,
              sb->personality != ZE_SB_NO_PERSONALITY && personality(sb->personality) < 0 ? -errno : 0);
        if (sb->umask != (mode_t) -1)
                umask(sb->umask);
        cwd_fd = again ? open_cwd(sb) : -EBADF;
        check(&to, ZE_STEP_CHDIR, cwd_fd == -EBADF ? 0 : cwd_fd);
        (void) syscall(SYS_close_range, 3U + (unsigned) sb->preserve_fds, ~0U, CLOSE_RANGE_CLOEXEC);
        /* 10. the filter, early variant (its listener handed over) */
        r = apply_filter_early(sb, &step);
        check(&to, step, r);
        /* 11. capabilities, then the ambient set */
        if (sb->set_caps)
                check(&to, ZE_STEP_CAPS,
                      ze_step_caps(true, sb->cap_effective, sb->cap_permitted, sb->cap_inheritable, sb->cap_ambient,
                                   sb->cap_last));
        /* 12. */
        check(&to, ZE_STEP_NNP, sb->no_new_privs ? ze_step_nnp() : 0);
        check(&to, ZE_STEP_CHDIR, enter_cwd(cwd_fd));
        /* 13. */
        path = resolve(sb, &to);
        /* 14. the filter, last */
        if (sb->no_new_privs) {
                r = apply_filter(sb, &step);
                check(&to, step, r);
        }
        /* 15. then the startContainer hooks, as the container's process */
        ready(sb, &to);
        check_hooks(sb, &to, ZE_STEP_START_HOOK, &sb->start_hooks);
        /* 16. (the fds: 9a) */
        execve(path, sb->argv, sb->envp);
        ze_fail(&to, ZE_STEP_EXEC, errno, -1, ze_exec_exit_code(errno));
}
