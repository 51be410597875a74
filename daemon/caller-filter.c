/* SPDX-License-Identifier: MIT */
/*
 * The caller's own seccomp filters (caller-filter.h). The kernel gives a task's programs to a
 * tracer only (PTRACE_SECCOMP_GET_FILTER, CAP_SYS_ADMIN, no filter on the tracer), and only while
 * the task sits in a ptrace stop: no /proc file, pidfd call or listener fdinfo shows them. So a
 * child of zygoted seizes each thread (PTRACE_SEIZE: no signal, nothing the caller can see but
 * TracerPid) and interrupts it (PTRACE_INTERRUPT: a stop of its own, not a group stop: the
 * caller's parent hears nothing), all of them before waiting for any, then reads each chain and
 * lets every thread go, giving back a signal a stop had caught. The caller's thread that sent the call is waiting for the reply and is only paused;
 * another thread's interruptible system call is restarted, but one that cannot be restarted
 * (epoll_wait, a socket read with a timeout) returns EINTR, as after SIGSTOP and SIGCONT.
 *
 * Why a child and not zygoted itself: a thread that does not reach its stop (uninterruptible
 * sleep) cannot be detached from while it runs, and would stay traced; a child that takes too
 * long is killed, and a tracer's death detaches every thread it seized.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caller-filter.h"
#include "pidfd-util.h"
#include "util.h"

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif
#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

/* What the child writes: this head, then head.total instructions, the oldest filter's first. */
struct filters_head {
        int32_t err;
        uint32_t n, total;
        uint32_t lens[ZD_CALLER_MAX_FILTERS]; /* oldest first */
};

/* One thread's chain into buf (cap instructions), oldest first: the kernel numbers a task's filters
 * from the first installed (get_nth_filter() counts back from the newest). */
static int read_chain(pid_t tid, struct sock_filter *buf, size_t cap, uint32_t lens[], uint32_t *ret_n,
                      uint32_t *ret_total) {
        uint32_t n = 0, total = 0;

        for (;; n++) {
                long len = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *) (uintptr_t) n, NULL);

                /* ENOENT: past the newest; EINVAL at 0: a thread without a filter */
                if (len < 0 && (errno == ENOENT || (errno == EINVAL && n == 0)))
                        break;
                if (len < 0)
                        return -errno;
                if (n >= ZD_CALLER_MAX_FILTERS || (size_t) len > cap - total)
                        return -E2BIG;
                if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *) (uintptr_t) n, buf + total) != len)
                        return -EIO;
                lens[n] = (uint32_t) len;
                total += (uint32_t) len;
        }
        *ret_n = n;
        *ret_total = total;
        return 0;
}

#define THREADS_MAX 1024 /* the caller has at most 64 (caller.c), more may have come since */

/* The caller's threads as the child holds them: each seized and interrupted before any is waited
 * for, so that their stops overlap (on a loaded machine each waits for a CPU), then read, then let
 * go, each with the signal whose delivery it stopped for (0: the interrupt's own stop, or a group
 * stop it stays in). */
struct seized {
        size_t n;
        pid_t tid[THREADS_MAX];
        int sig[THREADS_MAX];
        bool stopped[THREADS_MAX];
};

struct dirent64_raw {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[];
};

/* Every thread listed in /proc/PID/task (task_dir, opened by zygoted: the child shares its fd
 * table and opens nothing) seized and interrupted; one that ended since the listing (ESRCH) is
 * passed over. */
static int seize_all(int task_dir, struct seized *t) {
        static char buf[8192];
        long n;
        int r = 0;

        if (lseek(task_dir, 0, SEEK_SET) < 0)
                return -errno;
        while (r >= 0 && (n = syscall(SYS_getdents64, task_dir, buf, sizeof(buf))) > 0)
                for (long at = 0; r >= 0 && at < n;) {
                        struct dirent64_raw *de = (struct dirent64_raw *) (buf + at);
                        pid_t tid;

                        at += de->reclen;
                        if (strspn(de->name, "0123456789") != strlen(de->name))
                                continue;
                        if (t->n >= THREADS_MAX) {
                                r = -E2BIG;
                                break;
                        }
                        tid = (pid_t) atoi(de->name);
                        if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0 || ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0)
                                r = errno == ESRCH ? 0 : -errno;
                        else
                                t->tid[t->n++] = tid;
                }
        if (r >= 0 && n < 0)
                r = errno == ENOENT ? -ESRCH : -errno;
        return r;
}

/* Waits for thread i's stop: 1 stopped, 0 ended meanwhile, or -errno. */
static int wait_stop(struct seized *t, size_t i) {
        int status;

        while (waitpid(t->tid[i], &status, __WALL) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFSTOPPED(status))
                return 0;
        t->sig[i] = status >> 16 == 0 ? WSTOPSIG(status) : 0;
        t->stopped[i] = true;
        return 1;
}

/* The child: every thread of pid, its chain read and compared with the first one's. */
static int child_read(int task_dir, struct filters_head *h, struct sock_filter *buf, struct sock_filter *other) {
        static struct seized t;
        bool first = true;
        int r;

        r = seize_all(task_dir, &t);
        for (size_t i = 0; r >= 0 && i < t.n; i++) {
                uint32_t lens[ZD_CALLER_MAX_FILTERS], n = 0, total = 0;

                r = wait_stop(&t, i);
                if (r <= 0)
                        continue; /* ended since the listing (0), or r < 0 ends the loop */
                r = read_chain(t.tid[i], first ? buf : other, ZD_CALLER_MAX_FILTER_INSNS, lens, &n, &total);
                if (r < 0)
                        break;
                if (first) {
                        h->n = n;
                        h->total = total;
                        memcpy(h->lens, lens, n * sizeof(*lens));
                        first = false;
                } else if (n != h->n || total != h->total || memcmp(buf, other, total * sizeof(*buf)) != 0 ||
                           memcmp(lens, h->lens, n * sizeof(*lens)) != 0)
                        r = -ENOTUNIQ;
        }
        /* let go of every thread that stopped; one seized and not waited for is let go by this
         * child's exit, which detaches it (a tracee can be detached only in a stop) */
        for (size_t i = 0; i < t.n; i++)
                if (t.stopped[i])
                        (void) ptrace(PTRACE_DETACH, t.tid[i], NULL, (void *) (uintptr_t) t.sig[i]);
        if (r >= 0 && first)
                r = -ESRCH; /* no thread left */
        return r;
}

/* What the child leaves in the shared mapping: the head, then the instructions. */
struct filters_map {
        struct filters_head h;
        struct sock_filter insns[ZD_CALLER_MAX_FILTER_INSNS];
};

/* The child shares zygoted's fd table (CLONE_FILES): it holds no copy of any caller's fds (whose
 * close could wait on that caller), and it closes and opens nothing in it. It ends with 0 once
 * the mapping holds its answer. */
_Noreturn static void child_main(int task_dir, pid_t parent, struct filters_map *m) {
        struct sock_filter *other = malloc(ZD_CALLER_MAX_FILTER_INSNS * sizeof(*other));
        sigset_t none;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void) prctl(PR_SET_NAME, (unsigned long) "zygote-cfread", 0, 0, 0); /* not a worker: ps, tests */
        if (getppid() != parent)
                _exit(1);
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        m->h.err = other ? child_read(task_dir, &m->h, m->insns, other) : -ENOMEM;
        _exit(0);
}

int zd_caller_filters_start(pid_t pid, struct zd_filter_read *ret) {
        _cleanup_close_ int task_dir = -EBADF;
        struct filters_map *m;
        char path[64];
        pid_t parent = getpid(), child;
        int child_fd = -EBADF;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        task_dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (task_dir < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
                return -errno;
        child = clone_with_pidfd(CLONE_FILES, &child_fd);
        if (child == 0)
                child_main(task_dir, parent, m);
        if (child < 0) {
                (void) munmap(m, sizeof(*m));
                return (int) child;
        }
        *ret = (struct zd_filter_read){ .child_fd = child_fd, .task_dir = TAKE_FD(task_dir), .map = m };
        return 0;
}

/* The child's answer, out of the mapping. */
static int parse(const struct filters_map *m, struct zd_caller_filters *ret) {
        _cleanup_free_ struct sock_filter *insns = NULL;
        struct filters_head h = m->h;
        size_t at = 0;

        if (h.err < 0)
                return h.err;
        if (h.n > ZD_CALLER_MAX_FILTERS || h.total > ZD_CALLER_MAX_FILTER_INSNS)
                return -EBADMSG;
        insns = malloc((h.total ? h.total : 1) * sizeof(*insns));
        if (!insns)
                return -ENOMEM;
        memcpy(insns, m->insns, h.total * sizeof(*insns));
        for (uint32_t i = 0; i < h.n; i++) {
                if (h.lens[i] == 0 || h.lens[i] > h.total - at)
                        return -EBADMSG;
                ret->progs[i] = (struct sock_fprog){ .len = (unsigned short) h.lens[i], .filter = insns + at };
                at += h.lens[i];
        }
        ret->n = h.n;
        ret->insns = TAKE_PTR(insns);
        return 0;
}

void zd_caller_filters_stop(struct zd_filter_read *rd) {
        if (rd->child_fd >= 0)
                (void) pidfd_kill(rd->child_fd, SIGKILL);
        rd->stopped = true;
}

int zd_caller_filters_finish(struct zd_filter_read *rd, int caller_pidfd, struct zd_caller_filters *ret) {
        struct zd_caller_filters f = {};
        siginfo_t si = {};
        int r;

        if (rd->child_fd < 0)
                return -EBADF;
        /* done, or too late: a tracer's death detaches every thread it still holds */
        r = pidfd_wait(rd->child_fd, WEXITED | WNOHANG, &si);
        if (r >= 0 && si.si_pid == 0) {
                zd_caller_filters_stop(rd);
                r = pidfd_reap(rd->child_fd, &si);
        }
        if (r >= 0 && si.si_code == CLD_EXITED && si.si_status == 0)
                r = parse(rd->map, &f); /* it answered, even if stopped since */
        else if (r >= 0)
                r = rd->stopped ? -ETIME : -EIO;
        rd->child_fd = safe_close(rd->child_fd);
        rd->task_dir = safe_close(rd->task_dir);
        (void) munmap(rd->map, sizeof(struct filters_map));
        rd->map = NULL;
        if (r >= 0 && pidfd_kill(caller_pidfd, 0) == -ESRCH)
                r = -ESRCH; /* what was read under its number may be another's */
        if (r < 0) {
                zd_caller_filters_done(&f);
                return r;
        }
        *ret = f;
        return 0;
}

int zd_caller_read_filters(pid_t pid, int pidfd, struct zd_caller_filters *ret) {
        struct zd_filter_read rd;
        struct pollfd pfd;
        int r;

        r = zd_caller_filters_start(pid, &rd);
        if (r < 0)
                return r;
        pfd = (struct pollfd){ .fd = rd.child_fd, .events = POLLIN };
        while (poll(&pfd, 1, ZD_CALLER_FILTER_TIMEOUT_MS) < 0 && errno == EINTR)
                ; /* a signal may shorten the wait: finish() then tells a child still running */
        return zd_caller_filters_finish(&rd, pidfd, ret);
}

void zd_caller_filters_done(struct zd_caller_filters *f) {
        if (!f)
                return;
        free(f->insns);
        f->insns = NULL;
        f->n = 0;
}
