/* SPDX-License-Identifier: MIT */
/*
 * The worker between fork and execve. See child.h for the contract and the order of the steps.
 *
 * Everything here runs in a freshly forked (or cloned) copy of a process that may have had other
 * threads, libev state, stdio buffers and malloc locks: so no malloc, no stdio, no locks, no
 * logging. Only raw syscall(2) and async-signal-safe libc wrappers (plus pure string helpers).
 * Every failure is reported as one struct ze_status on the status fd, then _exit().
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "kernel-abi.h"
#include "steps.h"
#include "child.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define ZE_MAX_TARGET (1 << 20) /* above any RLIMIT_NOFILE we would see; keeps the sums below safe */

static const char *const step_names[_ZY_STEP_MAX] = {
#define ZE_STEP_NAME(id, name) [ZE_STEP_##id] = name,
        ZE_STEPS(ZE_STEP_NAME)
#undef ZE_STEP_NAME
};

const char *ze_step_to_string(enum ze_step step) {
        if ((unsigned) step >= _ZY_STEP_MAX)
                return "unknown";
        return step_names[step];
}

/* The fds the child itself still needs after the fd step, at their new numbers. */
struct state {
        int status_fd;
        int hold_fd;
        int ref_pidfd;
        int exec_fd;
        int caller_pidfd;
        int root_fd;
        int mntns_fd;
};

static int report(int fd, enum ze_step step, int err) {
        struct ze_status s = { .step = step, .err = err };
        ssize_t n;

        if (fd < 0)
                return 0;
        /* 8 bytes into a pipe are written whole or not at all (< PIPE_BUF); only EINTR repeats. */
        do
                n = write(fd, &s, sizeof(s));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return n == (ssize_t) sizeof(s) ? 0 : -EIO;
}

_Noreturn static void fail(const struct state *st, enum ze_step step, int err, int code) {
        (void) report(st->status_fd, step, err > 0 ? err : EIO);
        _exit(code);
}

static int move_above(int fd, int base) {
        int r = fcntl(fd, F_DUPFD_CLOEXEC, base);
        return r < 0 ? -errno : r;
}

static int close_range_raw(unsigned first, unsigned last, unsigned flags) {
        if (first > last)
                return 0;
        if (syscall(SYS_close_range, first, last, flags) < 0)
                return -errno;
        return 0;
}

/* Step 1. Two passes: every fd we still need goes above base first (so that no dup3 into a
 * target can clobber a source, the status fd or the hold fd), then dup3 puts them in place. */
static int setup_fds(const struct ze_plan *p, struct state *st) {
        int moved[ZE_MAX_FDS];
        int sorted[ZE_MAX_FDS + 3];
        size_t n_sorted = 0;
        bool have_std[3] = { false, false, false };
        int max_target = 2, devnull = -EBADF, next, base, r;
        unsigned n_keep;

        if (p->n_fds > ZE_MAX_FDS || (p->n_fds > 0 && !p->fds))
                return -EINVAL;
        for (size_t i = 0; i < p->n_fds; i++) {
                int t = p->fds[i].target;

                if (t < 0 || t >= ZE_MAX_TARGET || p->fds[i].src < 0)
                        return -EBADF;
                for (size_t j = 0; j < i; j++)
                        if (p->fds[j].target == t)
                                return -EINVAL;
                if (t > max_target)
                        max_target = t;
                if (t < 3)
                        have_std[t] = true;
        }

        /* The fds the worker itself keeps, in the order they are placed above the targets. */
        int *const kept[] = { &st->status_fd, &st->hold_fd, &st->ref_pidfd, &st->exec_fd, &st->caller_pidfd,
                              &st->root_fd, &st->mntns_fd };

        n_keep = 0;
        for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
                n_keep += *kept[i] >= 0;
        /* Kept fds end up at max_target+1.. ; the moved copies live above them. */
        base = max_target + 1 + (int) n_keep;

        /* Pass 1. Every map entry gets its own copy, even when src == target: then the dup3 below
         * never has src == target (which dup3 refuses with EINVAL) and never clears CLOEXEC on
         * an fd we did not mean to pass. */
        for (size_t i = 0; i < p->n_fds; i++) {
                r = move_above(p->fds[i].src, base);
                if (r < 0)
                        return r;
                moved[i] = r;
        }
        for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
                if (*kept[i] < 0)
                        continue;
                r = move_above(*kept[i], base);
                if (r < 0)
                        return r;
                *kept[i] = r;
        }
        if (!have_std[0] || !have_std[1] || !have_std[2]) {
                r = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
                if (r < 0)
                        return -errno;
                /* It took the lowest free number, possibly a target: move it up as well. The low
                 * copy is closed with the gaps below. */
                devnull = move_above(r, base);
                if (devnull < 0)
                        return devnull;
        }

        /* Pass 2: into place, without CLOEXEC (dup3 with flags 0). */
        for (size_t i = 0; i < p->n_fds; i++)
                if (dup3(moved[i], p->fds[i].target, 0) < 0)
                        return -errno;
        for (int t = 0; t < 3; t++)
                if (!have_std[t] && dup3(devnull, t, 0) < 0)
                        return -errno;

        /* The status/hold/reference/caller fds go right above the highest target, CLOEXEC: they
         * close at exec. Whatever was at those numbers was not ours to keep (every source has a
         * copy). */
        next = max_target + 1;
        for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
                if (*kept[i] < 0)
                        continue;
                if (dup3(*kept[i], next, O_CLOEXEC) < 0)
                        return -errno;
                *kept[i] = next++;
        }

        /* Close the gaps below the highest target: sort the target numbers (at most 67). */
        for (int t = 0; t < 3; t++)
                sorted[n_sorted++] = t;
        for (size_t i = 0; i < p->n_fds; i++)
                if (p->fds[i].target >= 3)
                        sorted[n_sorted++] = p->fds[i].target;
        for (size_t i = 1; i < n_sorted; i++)
                for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
                        int tmp = sorted[j];
                        sorted[j] = sorted[j - 1];
                        sorted[j - 1] = tmp;
                }
        for (size_t i = 0; i + 1 < n_sorted; i++)
                if (sorted[i + 1] > sorted[i] + 1) {
                        r = close_range_raw((unsigned) sorted[i] + 1, (unsigned) sorted[i + 1] - 1, 0);
                        if (r < 0)
                                return r;
                }

        /* Close (not only CLOEXEC) everything above the kept fds: the moved copies and any fd of
         * the parent. A held worker may wait for a long time and must not keep the daemon's
         * sockets (or a client's connection) open meanwhile. */
        return close_range_raw((unsigned) next, ~0U, 0);
}

/* Step 3. */
static int drop_capbset(const struct ze_plan *p) {
        return ze_capbset_drop(p->capbset_drop, p->capbset_mask_prctl, p->cap_last);
}

/* Step 6. */
static int set_caps(const struct ze_plan *p) {
        /* Ambient capabilities would survive execve for a non-root uid: never pass any on. */
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0UL, 0UL, 0UL) < 0)
                return -errno;
        if (!p->set_caps)
                return 0;
        /* the inheritable set: also within the caller's (caps_inh_drop) */
        return ze_step_capset(p->caps_keep, p->caps_keep, p->caps_keep & ~p->caps_inh_drop);
}

/* Step 5, for a worker that left uid 0: the switch emptied the effective set (KEEPCAPS kept
 * only the permitted one), and loading a filter without no_new_privs needs CAP_SYS_ADMIN in it.
 * Step 6 then sets the final sets. */
static int raise_effective(const struct ze_plan *p) {
        /* only where step 4 set KEEPCAPS: step 6 then sets the final sets */
        if (!p->set_ids || p->uid == 0 || !p->set_caps)
                return 0;
        return ze_step_raise_effective();
}

/* Steps 5 and 9. */
static int apply_filter(const struct ze_plan *p, const struct state *st) {
        switch (p->filter_mode) {
        case ZE_FILTER_NONE:
        case ZE_FILTER_INHERITED:
                return 0;
        case ZE_FILTER_LOAD:
                return ze_step_filter_load(p->prog, p->filter_flags);
        case ZE_FILTER_CLONE:
                return ze_step_filter_clone(st->ref_pidfd);
        }
        return -EINVAL;
}

/* Writes len bytes of text to the file path under dirfd (a kernel interface file: one write). */
static int write_text_at(int dirfd, const char *path, const char *text, size_t len) {
        int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        ssize_t n;

        if (fd < 0)
                return -errno;
        do
                n = write(fd, text, len);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
                int e = errno;

                (void) close(fd);
                return -e;
        }
        (void) close(fd);
        return 0;
}

/* Step 0b: the worker moves itself into each of the caller's cgroups. Writing "0" moves the
 * writer; the directories were opened by the parent, so no path is looked up here. */
static int join_cgroups(const struct ze_plan *p) {
        if (p->n_cgroups > ZE_MAX_CGROUPS)
                return -EINVAL;
        for (size_t i = 0; i < p->n_cgroups; i++) {
                int r = write_text_at(p->cgroup_fds[i], "cgroup.procs", "0", 1);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* Step 0c, oom_score_adj: the number as text into /proc/self/oom_score_adj (a value below the
 * parent's needs CAP_SYS_RESOURCE, which the worker still has here). */
static int set_oom_score_adj(int32_t v) {
        char buf[16], *q = buf + sizeof(buf);
        uint32_t u = v < 0 ? (uint32_t) -(int64_t) v : (uint32_t) v;

        do
                *--q = (char) ('0' + u % 10);
        while ((u /= 10) > 0);
        if (v < 0)
                *--q = '-';
        return write_text_at(AT_FDCWD, "/proc/self/oom_score_adj", q, (size_t) (buf + sizeof(buf) - q));
}

/* Step 0c: the caller's scheduling, each value set as it is (the daemon made them no more
 * important than the caller's), so that the task weighs with the kernel what its caller does.
 * The step that failed in *ret_step. */
static int set_sched(const struct ze_sched *c, enum ze_step *ret_step) {
        struct sched_param sp = { .sched_priority = c->priority };
        int r;

        *ret_step = ZE_STEP_OOM;
        r = c->oom_score_adj == ZE_OOM_KEEP ? 0 : set_oom_score_adj(c->oom_score_adj);
        if (r < 0)
                return r;
        /* sched_setscheduler keeps the nice value, and setpriority sets it under any policy */
        *ret_step = ZE_STEP_SCHED;
        if (syscall(SYS_sched_setscheduler, 0, c->policy, &sp) < 0)
                return -errno;
        *ret_step = ZE_STEP_NICE;
        if (syscall(SYS_setpriority, PRIO_PROCESS, 0, c->nice) < 0)
                return -errno;
        *ret_step = ZE_STEP_IOPRIO;
        if (syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, c->ioprio) < 0)
                return -errno;
        *ret_step = ZE_STEP_AFFINITY;
        if (syscall(SYS_sched_setaffinity, 0, sizeof(c->affinity), c->affinity) < 0)
                return -errno;
        (void) umask((mode_t) c->umask);
        return 0;
}

/* Step 3b: every limit as the caller has it, soft and hard at once (prlimit64, so that a soft
 * limit above the old hard one is never refused in between). */
static int set_rlimits(const struct ze_plan *p) {
        if (p->n_rlimits > ZE_MAX_RLIMITS)
                return -EINVAL;
        for (size_t i = 0; i < p->n_rlimits; i++) {
                struct {
                        uint64_t cur, max;
                } rl = { p->rlimits[i].cur, p->rlimits[i].max };

                if (syscall(SYS_prlimit64, 0, p->rlimits[i].resource, &rl, NULL) < 0)
                        return -errno;
        }
        return 0;
}

static int exec_exit_code(int err) {
        return err == ENOENT ? ZE_EXIT_NOT_FOUND : ZE_EXIT_NOT_EXECUTABLE;
}

/* Step 11, like execvp(3) without its /bin/sh fallback for ENOEXEC and without malloc. */
_Noreturn static void do_exec(const struct ze_plan *p, const struct state *st) {
        const char *name = p->argv ? p->argv[0] : NULL;
        const char *s;
        bool got_eacces = false, tried = false;
        size_t name_len;

        if (!name)
                fail(st, ZE_STEP_EXEC, EINVAL, ZE_EXIT_SETUP_FAILED);
        if (!*name)
                fail(st, ZE_STEP_EXEC, ENOENT, ZE_EXIT_NOT_FOUND);
        if (p->exec_by_fd) {
                syscall(SYS_execveat, st->exec_fd, "", p->argv, p->envp, AT_EMPTY_PATH);
                fail(st, ZE_STEP_EXEC, errno, exec_exit_code(errno));
        }
        if (strchr(name, '/')) {
                execve(name, p->argv, p->envp);
                fail(st, ZE_STEP_EXEC, errno, exec_exit_code(errno));
        }
        if (!p->path_buf)
                fail(st, ZE_STEP_EXEC, EINVAL, ZE_EXIT_SETUP_FAILED);

        name_len = strlen(name);
        for (s = p->search_path ? p->search_path : ZC_DEFAULT_PATH;; s++) {
                const char *e = strchrnul(s, ':');
                size_t dir_len = (size_t) (e - s);
                char *q = p->path_buf;

                /* An empty element means the current directory (POSIX). */
                if ((dir_len ? dir_len : 1) + 1 + name_len + 1 <= p->path_buf_len) {
                        if (dir_len) {
                                memcpy(q, s, dir_len);
                                q += dir_len;
                        } else
                                *q++ = '.';
                        *q++ = '/';
                        memcpy(q, name, name_len + 1);

                        tried = true;
                        execve(p->path_buf, p->argv, p->envp);
                        switch (errno) {
                        case EACCES:
                                got_eacces = true;
                                break;
                        case ENOENT:
                        case ENOTDIR:
                        case ESTALE:
                        case ENODEV:
                        case ETIMEDOUT:
                                break;
                        default:
                                fail(st, ZE_STEP_EXEC, errno, exec_exit_code(errno));
                        }
                }
                if (!*e)
                        break;
                s = e;
        }
        if (got_eacces)
                fail(st, ZE_STEP_EXEC, EACCES, ZE_EXIT_NOT_EXECUTABLE);
        if (!tried)
                fail(st, ZE_STEP_EXEC, ENAMETOOLONG, ZE_EXIT_NOT_EXECUTABLE);
        fail(st, ZE_STEP_EXEC, ENOENT, ZE_EXIT_NOT_FOUND);
}

_Noreturn void ze_child_run(const struct ze_plan *p) {
        struct state st = {
                .status_fd = p->status_fd,
                .hold_fd = p->hold_fd,
                .ref_pidfd = p->filter_mode == ZE_FILTER_CLONE ? p->ref_pidfd : -EBADF,
                .exec_fd = p->exec_by_fd ? p->exec_fd : -EBADF,
                .caller_pidfd = p->ns_join ? p->caller_pidfd : -EBADF,
                .root_fd = p->enter_root ? p->root_fd : -EBADF,
                .mntns_fd = p->join_mntns ? p->mntns_fd : -EBADF,
        };
        int r;

        if (!p->signals_default)
                ze_step_reset_signals(p->signals_reset);

        /* 0b. the caller's cgroups, first: from here on the worker counts there (and the fds go
         * at step 1, the fd limit may fall at step 3b) */
        r = join_cgroups(p);
        if (r < 0)
                fail(&st, ZE_STEP_CGROUP, -r, ZE_EXIT_SETUP_FAILED);

        /* 0c. the caller's scheduling and umask: before the fd step (the /proc file is opened in
         * the parent's mount namespace, never in the caller's) and while the worker still has
         * the capabilities a value more important than its parent's needs */
        if (p->set_sched) {
                enum ze_step step;

                r = set_sched(&p->sched, &step);
                if (r < 0)
                        fail(&st, step, -r, ZE_EXIT_SETUP_FAILED);
        }

        /* 1. fds */
        r = setup_fds(p, &st);
        if (r < 0)
                fail(&st, ZE_STEP_FDS, -r, ZE_EXIT_SETUP_FAILED);

        /* 1b. the fd limit zygoted started with (it raised its own) */
        if (p->nofile_soft > 0) {
                struct rlimit rl;
                if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                        fail(&st, ZE_STEP_RLIMIT, errno, ZE_EXIT_SETUP_FAILED);
                if (rl.rlim_cur != p->nofile_soft) {
                        rl.rlim_cur = p->nofile_soft < rl.rlim_max ? p->nofile_soft : rl.rlim_max;
                        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                                fail(&st, ZE_STEP_RLIMIT, errno, ZE_EXIT_SETUP_FAILED);
                }
        }

        /* 1c. the caller's namespaces, all at once, after the fd step: /dev/null was opened in
         * the parent's mount namespace, never in one the caller may have made. */
        if (p->ns_join && syscall(SYS_setns, st.caller_pidfd, (int) p->ns_join) < 0)
                fail(&st, ZE_STEP_SETNS, errno, ZE_EXIT_SETUP_FAILED);

        /* 1c'. the mount namespace of the profile's pid namespace: its /proc shows only that */
        if (p->join_mntns && syscall(SYS_setns, st.mntns_fd, CLONE_NEWNS) < 0)
                fail(&st, ZE_STEP_MNTNS, errno, ZE_EXIT_SETUP_FAILED);

        /* 1d. the caller's root (its chroot, or its mount namespace's root). Nothing is looked
         * up by path as root from here but /proc: the next lookup is chdir, as the target user. */
        if (p->enter_root) {
                if (fchdir(st.root_fd) < 0)
                        fail(&st, ZE_STEP_CHROOT, errno, ZE_EXIT_SETUP_FAILED);
                /* A private copy, so that our /proc stays ours: unshare moves root and cwd to the
                 * copies of their mounts; "/" is still the namespace's root, a mount's root, as
                 * MS_SLAVE needs. Slaves: the caller's later mounts still reach the task. */
                if (p->own_proc && (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0))
                        fail(&st, ZE_STEP_PROC, errno, ZE_EXIT_SETUP_FAILED);
                if (chroot(".") < 0)
                        fail(&st, ZE_STEP_CHROOT, errno, ZE_EXIT_SETUP_FAILED);
                /* The caller's /proc shows the pid namespace it was mounted in: ours shows the
                 * task's. A root without /proc has none to show (the daemon refused a caller that
                 * sees a procfs elsewhere). */
                if (p->own_proc && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") < 0 &&
                    errno != ENOENT)
                        fail(&st, ZE_STEP_PROC, errno, ZE_EXIT_SETUP_FAILED);
        }

        /* 2. a session of its own (the controlling tty comes after the ids: step 6b) */
        if (setsid() < 0)
                fail(&st, ZE_STEP_SETSID, errno, ZE_EXIT_SETUP_FAILED);

        /* 3. bounding set, while we still have CAP_SETPCAP */
        r = drop_capbset(p);
        if (r < 0)
                fail(&st, ZE_STEP_CAPBSET, -r, ZE_EXIT_SETUP_FAILED);

        /* 3b. the caller's resource limits, before the uid switch: setresuid checks
         * RLIMIT_NPROC against the target user's processes (over the caller's limit, execve then
         * fails with EAGAIN, as the caller's own fork would). No hard limit is raised: the plan's
         * are at most the parent's. Nothing below opens an fd or forks, so the caller's lower
         * limits cannot break a later step. */
        r = set_rlimits(p);
        if (r < 0)
                fail(&st, ZE_STEP_RLIMIT, -r, ZE_EXIT_SETUP_FAILED);

        /* 4. ids. Raw syscalls: the kernel's calls are per thread, and glibc's wrappers would try
         * to broadcast to threads that do not exist in this copy of the process. */
        if (p->set_ids) {
                if (p->n_groups > ZE_MAX_GROUPS || (p->n_groups > 0 && !p->groups))
                        fail(&st, ZE_STEP_GROUPS, EINVAL, ZE_EXIT_SETUP_FAILED);
                if (syscall(SYS_setgroups, p->n_groups, p->groups) < 0)
                        fail(&st, ZE_STEP_GROUPS, errno, ZE_EXIT_SETUP_FAILED);
                if (syscall(SYS_setresgid, p->gid, p->gid, p->gid) < 0)
                        fail(&st, ZE_STEP_GID, errno, ZE_EXIT_SETUP_FAILED);
                /* Leaving uid 0 empties the permitted set unless KEEPCAPS: step 6 still has to
                 * set caps_keep, and an early filter still needs CAP_SYS_ADMIN. KEEPCAPS itself
                 * is cleared by execve. */
                if (p->uid != 0 && p->set_caps && (p->caps_keep != 0 || p->filter_early) &&
                    prctl(PR_SET_KEEPCAPS, 1UL, 0UL, 0UL, 0UL) < 0)
                        fail(&st, ZE_STEP_UID, errno, ZE_EXIT_SETUP_FAILED);
                if (syscall(SYS_setresuid, p->uid, p->uid, p->uid) < 0)
                        fail(&st, ZE_STEP_UID, errno, ZE_EXIT_SETUP_FAILED);
        }

        /* 5. filter, early variant: without no_new_privs, loading needs CAP_SYS_ADMIN, which
         * step 6 may be about to drop. */
        if (p->filter_early) {
                r = raise_effective(p);
                if (r >= 0)
                        r = apply_filter(p, &st);
                if (r < 0)
                        fail(&st, ZE_STEP_FILTER, -r, ZE_EXIT_SETUP_FAILED);
        }

        /* 6. capabilities */
        r = set_caps(p);
        if (r < 0)
                fail(&st, ZE_STEP_CAPS, -r, ZE_EXIT_SETUP_FAILED);

        /* 6b. controlling tty, with the task's own ids and capabilities: the kernel lets only a
         * reader of the terminal (or CAP_SYS_ADMIN) make it the controlling one, and root's
         * capabilities here would let a caller that may only write to another user's terminal
         * read it through /dev/tty. */
        if (p->ctty && ioctl(0, TIOCSCTTY, 0) < 0)
                fail(&st, ZE_STEP_CTTY, errno, ZE_EXIT_SETUP_FAILED);

        /* 7. working directory, as the target user */
        if (p->cwd && chdir(p->cwd) < 0)
                fail(&st, ZE_STEP_CHDIR, errno, ZE_EXIT_SETUP_FAILED);

        /* 8. no_new_privs */
        if (p->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0)
                fail(&st, ZE_STEP_NNP, errno, ZE_EXIT_SETUP_FAILED);

        /* 9. the filter, the last restriction: from here on only write, read, execve and
         * exit_group are needed, which every sane profile allows. */
        if (!p->filter_early) {
                r = apply_filter(p, &st);
                if (r < 0)
                        fail(&st, ZE_STEP_FILTER, -r, ZE_EXIT_SETUP_FAILED);
        }

        /* 10. hold */
        if (st.hold_fd >= 0) {
                char b;
                ssize_t n;

                /* Without the HELD record the daemon would never answer Spawn: give up instead. */
                if (!p->hold_quiet && report(st.status_fd, ZE_STEP_HELD, 0) < 0)
                        _exit(ZE_EXIT_SETUP_FAILED);
                do
                        n = read(st.hold_fd, &b, 1);
                while (n < 0 && errno == EINTR);
                if (n == 0)
                        _exit(ZE_EXIT_ABANDONED);
                if (n < 0)
                        fail(&st, ZE_STEP_HOLD, errno, ZE_EXIT_SETUP_FAILED);
        }

        /* 11. exec */
        do_exec(p, &st);
}
