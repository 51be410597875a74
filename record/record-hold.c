/* SPDX-License-Identifier: MIT */
/*
 * The listener's held calls (record-hold.h): exit_group, execve and execveat of a process with
 * other threads wait until those threads have settled.
 *
 * A thread has settled when it is not running (its state in /proc is not R): it sleeps in a call
 * the listener let through (a futex, a read), or waits on a notification. The second kind is seen
 * on the listener (POLLIN), which is asked after the states: a thread found asleep before an empty
 * listener is asleep in a call of its own, not in one the listener has yet to read. Read in the
 * other order, a thread could make its call between the two looks and be killed with it unread.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record-hold.h"
#include "util.h"

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

void rec_hold_done(struct rec_hold *h) {
        free(h->held);
        *h = (struct rec_hold){};
}

static bool ends_other_threads(struct rec_hold *h, uint32_t arch, int nr) {
        static const char *const names[3] = { "exit_group", "execve", "execveat" };

        if (h->arch != arch) {
                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        h->nrs[i] = seccomp_syscall_resolve_name_arch(arch, names[i]);
                h->arch = arch;
        }
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (h->nrs[i] >= 0 && h->nrs[i] == nr)
                        return true;
        return false;
}

/* A thread's state letter from /proc/TID/task/X/stat (after the last ')'), 0 when it is gone. */
static char thread_state(int task_dir, const char *name) {
        char path[300], buf[512];
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;
        char *p;

        snprintf(path, sizeof(path), "%s/stat", name);
        fd = openat(task_dir, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return 0;
        buf[n] = 0;
        p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p[2] : 0;
}

/* Whether a thread of tid's process other than the held ones is running. *ret_others: whether
 * it has other threads at all. A process gone, or out of sight: nothing runs there. */
static bool others_running(const struct rec_hold *h, pid_t tid, bool *ret_others) {
        char path[64];
        _cleanup_close_ int fd = -EBADF;
        DIR *d;
        struct dirent *e;
        bool running = false;

        *ret_others = false;
        snprintf(path, sizeof(path), "/proc/%d/task", (int) tid);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return false;
        int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
        if (!d) {
                safe_close(dup_fd);
                return false;
        }
        while (!running && (e = readdir(d))) {
                pid_t t = (pid_t) strtol(e->d_name, NULL, 10);
                bool held = false;

                if (t <= 0)
                        continue;
                for (size_t i = 0; i < h->n && !held; i++)
                        held = h->held[i].tid == t;
                if (t == tid || held)
                        continue;
                *ret_others = true;
                running = thread_state(fd, e->d_name) == 'R';
        }
        closedir(d);
        return running;
}

bool rec_hold_take(struct rec_hold *h, int listener, const struct seccomp_notif *req, int error) {
        bool others;

        /* pid 0: the thread is out of the listener's pid namespace, its process out of sight */
        if (req->pid == 0 || !ends_other_threads(h, req->data.arch, req->data.nr))
                return false;
        (void) others_running(h, (pid_t) req->pid, &others);
        if (!others)
                return false;
        if (h->n == h->n_alloc) {
                size_t n = h->n_alloc ? h->n_alloc * 2 : 8;
                struct rec_held *p = reallocarray(h->held, n, sizeof(*p));

                if (!p)
                        return false; /* answered now: the other threads may lose their last calls */
                h->held = p;
                h->n_alloc = n;
        }
        h->held[h->n++] = (struct rec_held){ .listener = listener,
                                             .id = req->id,
                                             .tid = (pid_t) req->pid,
                                             .error = error,
                                             .deadline = now_ns() + UINT64_C(1000000) * REC_HOLD_MAX_MS };
        return true;
}

int rec_hold_timeout(const struct rec_hold *h) {
        return h->n > 0 ? REC_HOLD_POLL_MS : -1;
}

int rec_hold_release(struct rec_hold *h, int (*answer)(int listener, uint64_t id, int error, void *u), void *u) {
        uint64_t now = now_ns();
        size_t k = 0;
        int r = 0;

        for (size_t i = 0; i < h->n; i++) {
                struct rec_held *e = &h->held[i];
                struct pollfd p = { .fd = e->listener, .events = POLLIN };
                bool others, keep = false;

                /* the states first, then the listener (see above); a notification waiting is read
                 * first (its thread may be one of those), unless time is up */
                if (now < e->deadline)
                        keep = others_running(h, e->tid, &others) || poll(&p, 1, 0) != 0;
                if (keep) {
                        h->held[k++] = *e;
                        continue;
                }
                int q = answer(e->listener, e->id, e->error, u);
                if (q < 0 && r == 0)
                        r = q;
        }
        h->n = k;
        return r;
}
