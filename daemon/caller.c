/* SPDX-License-Identifier: MIT */
/*
 * What confines the caller, read so that its task can carry it (docs/SECURITY.md, "A task
 * carries its caller's confinement"). The daemon forks the task (or a reference does), so
 * without this the task would start with zygoted's limits, namespaces and cgroups.
 *
 * Race-free: the process is named by a pidfd, from SO_PEERPIDFD where the kernel has it (the
 * process that connected, whatever happened to its pid number since), else pidfd_open() on
 * SO_PEERCRED's pid, whose real uid must then be the connection's. Everything is read through
 * /proc/PID, and the pidfd is checked alive afterwards: a live process keeps its
 * pid number, so what was read under that number was its own.
 *
 * A connection keeps the process it found at its first call, and the files of it that every
 * call reads again (struct zd_caller_conn): a caller that changes between two calls is read as
 * it is at the second, as on a new connection; only opens and closes are saved.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caller.h"
#include "caller-proc.h"
#include "pidfd-util.h"
#include "util.h"

void zd_caller_done(struct zd_caller *c) {
        if (!c)
                return;
        c->pidfd = safe_close(c->pidfd);
        c->root_fd = safe_close(c->root_fd);
        free(c->groups);
        c->groups = NULL;
        c->n_groups = 0;
        for (size_t i = 0; i < c->n_cgroups; i++)
                safe_close(c->cgroup_fds[i]);
        c->n_cgroups = 0;
}

/* The first thread's as read at this call: its status (the text main points into) and what the
 * facets read of it (first). */
struct first_read {
        char status_buf[4096];
        char *status_long; /* owned: the text when it did not fit status_buf */
        bool status_read;  /* main indexes its status (on the BPF path, only once another thread needs it) */
        struct zd_caller_status main;
        uint64_t threads; /* its Threads: count, 1 when it does not say */
        struct zd_caller_first first;
};

/* Another thread of the caller, through its directory t->dir_fd and the files opened under it
 * where t has none yet: its status merged into c, its namespaces, cgroups and label compared
 * with the first thread's. -ENOENT or -ESRCH: it has ended. zygoted cannot know which thread sent
 * the call: each may hold other capabilities, flags or a filter of its own (all are per thread),
 * so the task gets what every thread holds and the most confined thread's flags and filter; ids,
 * namespaces, cgroups and labels are per thread too, and threads that disagree on them are
 * refused rather than guessed at. */
static int read_other(struct zd_caller_thread *t, const struct first_read *f, struct zd_caller *c) {
        _cleanup_free_ char *text = NULL;
        char buf[4096];
        int r;

        r = zd_caller_pread(&t->status_fd, t->dir_fd, "status", buf, sizeof(buf), &text);
        if (r >= 0)
                r = zd_caller_status_merge(&f->main, text ? text : buf, c);
        if (r >= 0)
                r = zd_caller_thread_same_ns(t->dir_fd, &f->first);
        if (r >= 0 && f->first.cgroup)
                r = zd_caller_thread_same_cgroups(&t->cgroup_fd, t->dir_fd, &f->first);
        if (r >= 0)
                r = zd_caller_thread_same_label(t->dir_fd, &f->first);
        return r;
}

/* The caller's other threads, listed in /proc/PID/task: each opened and read, its files kept by
 * the connection when keep is set (zd_caller_threads_keep()), else closed. A thread that ended
 * meanwhile (-ENOENT or -ESRCH) is passed over: whether the caller itself lives is checked on its
 * pidfd after every read. */
static int read_listed(struct zd_caller_conn *k, bool keep, pid_t pid, const struct first_read *f,
                       struct zd_caller *c) {
        int fd = openat(k->proc_fd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct dirent *de;
        DIR *dir;
        int r = 0;

        if (fd < 0)
                return negative_errno();
        dir = fdopendir(fd);
        if (!dir) {
                r = negative_errno();
                close(fd);
                return r;
        }
        while (r >= 0 && (errno = 0, de = readdir(dir))) {
                struct zd_caller_thread t = ZD_CALLER_THREAD_INIT;

                /* thread ids are numbers: nothing else is read */
                if (strspn(de->d_name, "0123456789") != strlen(de->d_name) || strlen(de->d_name) > 10 ||
                    atoi(de->d_name) == pid)
                        continue;
                t.dir_fd = openat(dirfd(dir), de->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
                r = t.dir_fd < 0 ? negative_errno() : read_other(&t, f, c);
                if (r >= 0 && keep)
                        zd_caller_threads_keep(k, &t);
                zd_caller_thread_close(&t);
                if (r == -ENOENT || r == -ESRCH)
                        r = 0;
        }
        if (r >= 0 && errno != 0)
                r = negative_errno();
        closedir(dir);
        return r;
}

/* One thread (number tid) read the /proc way, as read_listed() reads it: where its record from the
 * BPF task iterator cannot tell. Gone meanwhile (-ENOENT, -ESRCH): passed over, as there. */
static int read_tid(struct zd_caller_conn *k, uint32_t tid, const struct first_read *f, struct zd_caller *c) {
        struct zd_caller_thread t = ZD_CALLER_THREAD_INIT;
        char path[32];
        int r;

        if (tid == 0)
                return -EPROTO; /* not in zygoted's pid namespace: not a caller's thread */
        snprintf(path, sizeof(path), "task/%" PRIu32, tid);
        t.dir_fd = openat(k->proc_fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        r = t.dir_fd < 0 ? negative_errno() : read_other(&t, f, c);
        zd_caller_thread_close(&t);
        return r == -ENOENT || r == -ESRCH ? 0 : r;
}

/* The other threads through the BPF task iterator (caller-bpf.c): every thread's record in one
 * read(), each compared with the first thread's record and merged as read_other() does. The first
 * thread's record must show what its status showed (its effective ids), and its capability sets
 * and flags are merged too: it may have changed since. A thread that is exiting is passed over,
 * as its /proc files would be. */
static int read_threads_bpf(struct zd_caller_conn *k, const struct first_read *f, struct zd_caller *c) {
        const struct zd_caller_bpf_thread *first = NULL;
        struct zd_caller_bpf_threads ts;
        int r;

        r = zd_caller_bpf_read(k, &ts);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ts.n && !first; i++)
                if ((ts.t[i].flags & (ZD_CALLER_BPF_LEADER | ZD_CALLER_BPF_EXITING)) == ZD_CALLER_BPF_LEADER)
                        first = &ts.t[i];
        if (!first)
                return -ESRCH;
        if (first->ids[1] != c->euid || first->ids[5] != c->egid)
                return -ENOTUNIQ;
        for (size_t i = 0; i < ts.n; i++) {
                if (ts.t[i].flags & ZD_CALLER_BPF_EXITING)
                        continue;
                r = zd_caller_bpf_merge(first, &ts.t[i], f->first.has_label, c);
                if (r > 0)
                        r = read_tid(k, ts.t[i].tid, f, c);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The other threads of a caller with more than one, in one walk: through the threads the
 * connection keeps (ZD_CALLER_KEEP_THREADS) when they are provably all of them, else listed. The
 * caller has n threads by its first thread's status, read before them; each kept thread was
 * opened at an earlier call, and its status answers now, so that thread was alive at that status
 * read too; n - 1 of them and the first thread are then all the n that were. One that ended
 * (ESRCH, ENOENT), or another count, and the threads are listed and opened again, as without
 * keeping them. What was merged already stays merged: it was a thread of the caller, and a thread
 * read twice changes nothing. */
static int read_threads(struct zd_caller_conn *k, const struct first_read *f, struct zd_caller *c) {
        int r = -ESRCH;

        if (f->threads <= 1) {
                zd_caller_threads_clear(k);
                return 0;
        }
        /* one read per thread, in the daemon's one thread: bounded, or a caller with thousands
         * would stall every other caller at each of its Spawns */
        if (f->threads > ZD_CALLER_MAX_THREADS)
                return -EMLINK;
        if (zd_caller_bpf_loaded() && !k->proc_only)
                return read_threads_bpf(k, f, c);
        if (!k->keep_threads)
                return read_listed(k, false, c->pid, f, c);
        if (k->threads.n == f->threads - 1) {
                r = 0;
                for (size_t i = 0; r >= 0 && i < k->threads.n; i++)
                        r = read_other(&k->threads.t[i], f, c);
        }
        if (r != -ESRCH && r != -ENOENT)
                return r;
        zd_caller_threads_clear(k);
        r = read_listed(k, true, c->pid, f, c);
        if (r < 0)
                zd_caller_threads_clear(k);
        return r;
}

/* The first thread's status, read and indexed into f (once a call). */
static int read_status(struct zd_caller_conn *k, struct first_read *f) {
        int r;

        if (f->status_read)
                return 0;
        r = zd_caller_pread(&k->status_fd, k->proc_fd, "status", f->status_buf, sizeof(f->status_buf), &f->status_long);
        if (r < 0)
                return r;
        zd_caller_status_index(f->status_long ? f->status_long : f->status_buf, &f->main);
        f->status_read = true;
        return 0;
}

static int read_ids(int conn_fd, const struct ucred *cr, struct zd_caller_conn *k, uid_t *ret_uid, gid_t *ret_gid) {
        _cleanup_free_ char *text = NULL;
        struct zd_caller_status st;
        uid_t uid;
        gid_t gid;
        int r;

        r = zd_caller_find(conn_fd, cr, k);
        if (r < 0)
                return r;
        r = zd_caller_read_kept(&k->status_fd, k->proc_fd, "status", &text);
        if (r < 0)
                return r == -ENOENT ? -ESRCH : r;
        zd_caller_status_index(text, &st);
        r = zd_caller_status_ids(&st, k->check_uid ? &cr->uid : NULL, &uid, &gid);
        if (r < 0)
                return r;
        if (pidfd_kill(k->pidfd, 0) == -ESRCH) /* gone: its number may be another's now */
                return -ESRCH;
        *ret_uid = uid;
        *ret_gid = gid;
        return 0;
}

int zd_caller_read_ids(int conn_fd, const struct ucred *cr, struct zd_caller_conn *k, uid_t *ret_uid, gid_t *ret_gid) {
        struct zd_caller_conn once = ZD_CALLER_CONN_INIT;
        int r = read_ids(conn_fd, cr, k ? k : &once, ret_uid, ret_gid);

        zd_caller_conn_clear(&once);
        return r;
}

static int read_proc(struct zd_caller_conn *k, const struct ucred *cr, struct first_read *f, struct zd_caller *c);

/* Every thread, the first one too, from one walk of the BPF iterator (caller-bpf.c,
 * caller-bpf-first.c): the first thread's ids, groups, capability sets, flags, umask, scheduling,
 * limits and namespace numbers from its record, its CPU affinity, cgroups and label as the /proc
 * path reads them; each other thread merged as read_threads_bpf() merges it. 1: the walk cannot
 * tell the first thread's, c untouched (read_proc() reads the caller instead). */
static int read_bpf(struct zd_caller_conn *k, const struct ucred *cr, struct first_read *f, struct zd_caller *c) {
        const struct zd_caller_bpf_thread *first;
        struct zd_caller_bpf_threads ts;
        int r;

        r = zd_caller_bpf_read(k, &ts);
        if (r >= 0)
                r = zd_caller_bpf_read_first(&ts, k->check_uid ? &cr->uid : NULL, c, f->first.ns, &first);
        if (r != 0)
                return r;
        r = zd_caller_read_affinity(c->pid, &c->sched);
        if (r >= 0 && c->has_own_sched)
                r = zd_caller_read_affinity(0, &c->own_sched);
        if (r >= 0)
                r = zd_caller_read_namespaces(k->proc_fd, k, c, &f->first, true);
        if (r >= 0)
                r = zd_caller_read_cgroups(k->proc_fd, k, c, &f->first);
        if (r >= 0)
                r = zd_caller_read_lsm(k->proc_fd, c, &f->first);
        for (size_t i = 0; r >= 0 && i < ts.n; i++) {
                if (&ts.t[i] == first || (ts.t[i].flags & ZD_CALLER_BPF_EXITING))
                        continue;
                r = zd_caller_bpf_merge(first, &ts.t[i], f->first.has_label, c);
                /* a thread its record cannot decide: compared with the first thread's status */
                if (r > 0) {
                        r = read_status(k, f);
                        if (r >= 0)
                                r = read_tid(k, ts.t[i].tid, f, c);
                }
        }
        return r < 0 ? r : 0;
}

static int read_caller(int conn_fd, const struct ucred *cr, struct zd_caller_conn *k, struct first_read *f,
                       struct zd_caller *c) {
        int r;

        r = zd_caller_find(conn_fd, cr, k);
        if (r < 0)
                return r;
        c->pid = k->pid;
        /* the spawn's own: it may outlive the connection */
        c->pidfd = fcntl(k->pidfd, F_DUPFD_CLOEXEC, 3);
        if (c->pidfd < 0)
                return negative_errno();

        /* every thread in one walk of the BPF iterator, or the first thread through /proc and
         * then every other one in one walk (read_threads()) */
        r = zd_caller_bpf_loaded() && !k->proc_only ? read_bpf(k, cr, f, c) : 1;
        if (r == 1)
                r = read_proc(k, cr, f, c);
        /* A process that is gone may have left its number to another: what was read may be
         * that one's. Alive now, it was alive throughout, and the number was its own. */
        if (pidfd_kill(c->pidfd, 0) == -ESRCH) /* EPERM: alive, only not ours to signal */
                return -ESRCH;
        return r == -ENOENT ? -ESRCH : r;
}

/* The first thread through /proc (its status, limits, oom_score_adj, ns links) and its scheduling
 * system calls, its cgroups and label, then every other thread (read_threads()). */
static int read_proc(struct zd_caller_conn *k, const struct ucred *cr, struct first_read *f, struct zd_caller *c) {
        int r;

        r = read_status(k, f);
        if (r >= 0)
                r = zd_caller_status_first(&f->main, k->check_uid ? &cr->uid : NULL, c, &f->threads);
        if (r >= 0)
                r = zd_caller_read_sched(&k->oom_fd, k->proc_fd, "oom_score_adj", c->pid, &c->sched);
        if (r >= 0)
                r = zd_caller_read_rlimits(k, c);
        if (r >= 0)
                r = zd_caller_read_namespaces(k->proc_fd, k, c, &f->first, false);
        if (r >= 0)
                r = zd_caller_read_cgroups(k->proc_fd, k, c, &f->first);
        if (r >= 0)
                r = zd_caller_read_lsm(k->proc_fd, c, &f->first);
        if (r >= 0)
                r = read_threads(k, f, c);
        return r;
}

int zd_caller_read(int conn_fd, const struct ucred *cr, struct zd_caller_conn *k, struct zd_caller *c) {
        struct zd_caller_conn once = ZD_CALLER_CONN_INIT;
        struct first_read f;
        int r;

        f.status_long = f.first.cgroup_long = NULL;
        f.status_read = false;
        r = read_caller(conn_fd, cr, k ? k : &once, &f, c);
        free(f.status_long);
        free(f.first.cgroup_long);
        zd_caller_conn_clear(&once);
        return r;
}
