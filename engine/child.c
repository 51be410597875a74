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
#include "signal-util.h"
#include "steps.h"
#include "child.h"
#include "util.h"

#define ZE_MAX_TARGET (1 << 20) /* above any RLIMIT_NOFILE we would see; keeps the sums below safe */

/* Where failures go, and the fds the child itself still needs after the fd step, at their new
 * numbers. */
struct state {
        struct ze_reporter to; /* the status pipe */
        int hold_fd;
        int ref_pidfd;
        int exec_fd;
        int caller_pidfd;
        int root_fd;
        int mntns_fd;
};

/* A step's result: on failure, its record and exit 125. */
static void check(const struct state *st, enum ze_step step, int r) {
        if (r < 0)
                ze_fail(&st->to, step, -r, -1, ZE_EXIT_SETUP_FAILED);
}

static int move_above(int fd, int base) {
        int r = fcntl(fd, F_DUPFD_CLOEXEC, base);
        return r < 0 ? -errno : r;
}

/* Step 1. Two passes: every fd we still need goes above base first (so that no dup3 into a
 * target can clobber a source, the status fd or the hold fd), then dup3 puts them in place. */
static int setup_fds(const struct ze_plan *p, struct state *st) {
        int moved[ZE_MAX_FDS];
        int keep[ZE_MAX_FDS + 7];
        size_t n_keep_all = 0;
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
        int *const kept[] = { &st->to.fd,        &st->hold_fd, &st->ref_pidfd, &st->exec_fd,
                              &st->caller_pidfd, &st->root_fd, &st->mntns_fd };

        n_keep = 0;
        for (size_t i = 0; i < ELEMENTSOF(kept); i++)
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
        for (size_t i = 0; i < ELEMENTSOF(kept); i++) {
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
        for (size_t i = 0; i < ELEMENTSOF(kept); i++) {
                if (*kept[i] < 0)
                        continue;
                if (dup3(*kept[i], next, O_CLOEXEC) < 0)
                        return -errno;
                *kept[i] = next++;
        }

        /* Close (not only CLOEXEC) everything else: the gaps below the highest target, the moved
         * copies and any fd of the parent. A held worker may wait for a long time and must not
         * keep the daemon's sockets (or a client's connection) open meanwhile. */
        for (size_t i = 0; i < p->n_fds; i++)
                keep[n_keep_all++] = p->fds[i].target;
        for (size_t i = 0; i < ELEMENTSOF(kept); i++)
                keep[n_keep_all++] = *kept[i];
        return ze_step_close_all_but(3, keep, n_keep_all);
}

/* Steps 5 and 9: the plan's filter. A CLONE plan carries no program to fall back to: the
 * daemon chose the tier by probing the kernel. */
static int apply_filter(const struct ze_plan *p, const struct state *st) {
        /* the caller's filters stay under the profile's: the task is denied what either denies */
        if (p->filter_mode == ZE_FILTER_LOAD)
                for (size_t i = 0; i < p->n_caller_progs; i++) {
                        int r = ze_step_filter_load(&p->caller_progs[i], 0);

                        if (r < 0)
                                return r;
                }
        return ze_step_filter(p->filter_mode, st->ref_pidfd, p->filter_mode == ZE_FILTER_LOAD ? p->prog : NULL,
                              p->filter_flags);
}

/* Step 5, the filter while the worker may still load it: without no_new_privs that needs
 * CAP_SYS_ADMIN, which step 6 may be about to drop; a worker that left uid 0 (step 4 set
 * KEEPCAPS) raises its effective set back to the permitted one first. */
static int apply_filter_early(const struct ze_plan *p, const struct state *st) {
        int r = p->set_ids && p->uid != 0 && p->set_caps ? ze_step_raise_effective() : 0;

        return r < 0 ? r : apply_filter(p, st);
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
        /* a label or number cut short must not pass for written */
        return (size_t) n == len ? 0 : -EIO;
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

/* Step 3b: every limit as the caller has it. */
static int set_rlimits(const struct ze_plan *p) {
        int index;

        if (p->n_rlimits > ZE_MAX_RLIMITS)
                return -EINVAL;
        return ze_step_rlimits(p->rlimits, p->n_rlimits, &index);
}

/* Step 1b: the fd limit zygoted started with (it raised its own). */
static int restore_nofile(uint64_t soft) {
        struct rlimit rl;

        if (soft == 0)
                return 0;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return -errno;
        if (rl.rlim_cur == soft)
                return 0;
        rl.rlim_cur = soft < rl.rlim_max ? soft : rl.rlim_max;
        return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? -errno : 0;
}

/* Step 1d: the caller's root (its chroot, or its mount namespace's root), and with own_proc a
 * procfs of the worker's pid namespace on its /proc. The part that failed in *ret_step. */
static int enter_root(const struct ze_plan *p, const struct state *st, enum ze_step *ret_step) {
        *ret_step = ZE_STEP_CHROOT;
        if (!p->enter_root)
                return 0;
        if (fchdir(st->root_fd) < 0)
                return -errno;
        /* A private copy, so that our /proc stays ours: unshare moves root and cwd to the
         * copies of their mounts; "/" is still the namespace's root, a mount's root, as
         * MS_SLAVE needs. Slaves: the caller's later mounts still reach the task. */
        *ret_step = ZE_STEP_PROC;
        if (p->own_proc && (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0))
                return -errno;
        *ret_step = ZE_STEP_CHROOT;
        if (chroot(".") < 0)
                return -errno;
        /* The caller's /proc shows the pid namespace it was mounted in: ours shows the
         * task's. A root without /proc has none to show (the daemon refused a caller that
         * sees a procfs elsewhere). */
        *ret_step = ZE_STEP_PROC;
        if (p->own_proc && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") < 0 &&
            errno != ENOENT)
                return -errno;
        return 0;
}

/* Step 10: report HELD (unless hold_quiet) and wait at hold_fd: a byte means go on, EOF means
 * abandon. */
static void hold(const struct ze_plan *p, const struct state *st) {
        int r;

        if (st->hold_fd < 0)
                return;
        /* Without the HELD record the daemon would never answer Spawn: give up instead. */
        if (!p->hold_quiet && ze_report(&st->to, ZE_STEP_HELD, 0, -1, 0) < 0)
                _exit(ZE_EXIT_SETUP_FAILED);
        r = ze_step_wait_go(st->hold_fd);
        if (r == 0)
                _exit(ZE_EXIT_ABANDONED);
        check(st, ZE_STEP_HOLD, r);
}

/* Step 11: the open file, or argv[0] on the plan's PATH. */
_Noreturn static void do_exec(const struct ze_plan *p, const struct state *st) {
        const char *name = p->argv ? p->argv[0] : NULL;
        int r, index = -1;

        if (!name)
                ze_fail(&st->to, ZE_STEP_EXEC, EINVAL, -1, ZE_EXIT_SETUP_FAILED);
        if (!*name)
                ze_fail(&st->to, ZE_STEP_EXEC, ENOENT, -1, ZE_EXIT_NOT_FOUND);
        if (p->exec_by_fd) {
                syscall(SYS_execveat, st->exec_fd, "", p->argv, p->envp, AT_EMPTY_PATH);
                r = -errno;
        } else if (!strchr(name, '/') && !p->path_buf)
                ze_fail(&st->to, ZE_STEP_EXEC, EINVAL, -1, ZE_EXIT_SETUP_FAILED);
        else
                r = ze_step_execvp(p->argv, p->envp, p->search_path, p->path_buf, p->path_buf_len, &index);
        ze_fail(&st->to, ZE_STEP_EXEC, -r, index, ze_exec_exit_code(-r));
}

/* The task worker's recipe: the order is the security argument of child.h. */
_Noreturn void ze_child_run(const struct ze_plan *p) {
        struct state st = {
                .to = { .fd = p->status_fd, .socket = false },
                .hold_fd = p->hold_fd,
                .ref_pidfd = p->filter_mode == ZE_FILTER_CLONE ? p->ref_pidfd : -EBADF,
                .exec_fd = p->exec_by_fd ? p->exec_fd : -EBADF,
                .caller_pidfd = p->ns_join ? p->caller_pidfd : -EBADF,
                .root_fd = p->enter_root ? p->root_fd : -EBADF,
                .mntns_fd = p->join_mntns ? p->mntns_fd : -EBADF,
        };
        enum ze_step step = ZE_STEP_NONE;
        int r;

        /* 0. no handler, ignored signal or mask of the parent's reaches the task */
        if (!p->signals_default)
                zc_signals_reset(p->signals_reset);
        /* 0b. the caller's cgroups, first: from here on the worker counts there (and the fds go
         * at step 1, the fd limit may fall at step 3b) */
        check(&st, ZE_STEP_CGROUP, join_cgroups(p));
        /* 0c. the caller's scheduling and umask: before the fd step (the /proc file is opened in
         * the parent's mount namespace, never in the caller's) and while the worker still has
         * the capabilities a value more important than its parent's needs */
        if (p->set_sched) {
                r = ze_step_sched(&p->sched, &step);
                check(&st, step, r);
        }
        /* 0d. the caller's LSM label for the exec: in the parent's mount namespace, as root
         * with every capability, before no_new_privs and the filter */
        if (p->lsm_attr)
                check(&st, ZE_STEP_LSM, write_text_at(AT_FDCWD, p->lsm_attr, p->lsm_exec, strlen(p->lsm_exec)));
        /* 1. the fd map; everything else of the parent's closed */
        check(&st, ZE_STEP_FDS, setup_fds(p, &st));
        /* 1b. */
        check(&st, ZE_STEP_RLIMIT, restore_nofile(p->nofile_soft));
        /* 1c. the caller's namespaces, all at once, after the fd step: /dev/null was opened in
         * the parent's mount namespace, never in one the caller may have made. */
        if (p->ns_join)
                check(&st, ZE_STEP_SETNS, ze_step_setns(st.caller_pidfd, p->ns_join));
        /* 1c'. the mount namespace of the profile's pid namespace: its /proc shows only that */
        if (p->join_mntns)
                check(&st, ZE_STEP_MNTNS, ze_step_setns(st.mntns_fd, CLONE_NEWNS));
        /* 1d. the caller's root. Nothing is looked up by path as root from here but /proc: the
         * next lookup is chdir, as the target user. */
        r = enter_root(p, &st, &step);
        check(&st, step, r);
        /* 2. a session of its own (the controlling tty comes after the ids: step 6b) */
        check(&st, ZE_STEP_SETSID, setsid() < 0 ? -errno : 0);
        /* 3. bounding set, while we still have CAP_SETPCAP */
        check(&st, ZE_STEP_CAPBSET, ze_capbset_drop(p->capbset_drop, p->capbset_mask_prctl, p->cap_last));
        /* 3b. the caller's resource limits, before the uid switch: setresuid checks
         * RLIMIT_NPROC against the target user's processes (over the caller's limit, execve then
         * fails with EAGAIN, as the caller's own fork would). No hard limit is raised: the plan's
         * are at most the parent's. Nothing below opens an fd or forks, so the caller's lower
         * limits cannot break a later step. */
        check(&st, ZE_STEP_RLIMIT, set_rlimits(p));
        /* 4. ids. Leaving uid 0 empties the permitted set unless KEEPCAPS: step 6 still has to
         * set caps_keep, and an early filter still needs CAP_SYS_ADMIN. */
        if (p->set_ids) {
                r = ze_step_ids(p->uid, p->gid, p->groups, p->n_groups,
                                p->uid != 0 && p->set_caps && (p->caps_keep != 0 || p->filter_early), false, &step);
                check(&st, step, r);
        }
        /* 5. the filter, early variant: without no_new_privs, loading needs CAP_SYS_ADMIN */
        if (p->filter_early)
                check(&st, ZE_STEP_FILTER, apply_filter_early(p, &st));
        /* 6. capabilities: no ambient ones; the inheritable set also within the caller's */
        check(&st, ZE_STEP_CAPS,
              ze_step_caps(p->set_caps, p->caps_keep, p->caps_keep, p->caps_keep & ~p->caps_inh_drop, 0, p->cap_last));
        /* 6b. controlling tty, with the task's own ids and capabilities: the kernel lets only a
         * reader of the terminal (or CAP_SYS_ADMIN) make it the controlling one, and root's
         * capabilities here would let a caller that may only write to another user's terminal
         * read it through /dev/tty. */
        check(&st, ZE_STEP_CTTY, p->ctty && ioctl(0, TIOCSCTTY, 0) < 0 ? -errno : 0);
        /* 7. working directory, as the target user */
        check(&st, ZE_STEP_CHDIR, p->cwd && chdir(p->cwd) < 0 ? -errno : 0);
        /* 8. */
        check(&st, ZE_STEP_NNP, p->no_new_privs ? ze_step_nnp() : 0);
        /* 9. the filter, the last restriction: from here on only write, read, execve and
         * exit_group are needed, which every sane profile allows. */
        if (!p->filter_early)
                check(&st, ZE_STEP_FILTER, apply_filter(p, &st));
        /* 10. */
        hold(p, &st);
        /* 11. */
        do_exec(p, &st);
}
