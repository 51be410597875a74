/* SPDX-License-Identifier: MIT */
/*
 * The engine's shared steps of no particular facet: the step names, the status record, signals,
 * fds, scheduling and the hold. See steps.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "steps.h"

static const char *const step_names[_ZE_STEP_MAX] = {
#define ZE_STEP_NAME(id, name) [ZE_STEP_##id] = name,
        ZY_STEPS(ZE_STEP_NAME)
#undef ZE_STEP_NAME
};

const char *ze_step_to_string(enum ze_step step) {
        if ((unsigned) step >= _ZE_STEP_MAX || !step_names[step])
                return "unknown";
        return step_names[step];
}

int ze_report(const struct ze_reporter *to, enum ze_step step, int err, int index, int pid) {
        struct ze_status s = { .step = step, .err = err, .index = index, .pid = pid };
        ssize_t n;

        if (to->fd < 0)
                return 0;
        /* 16 bytes into a pipe are written whole or not at all (< PIPE_BUF), and one datagram on
         * a SOCK_SEQPACKET is; only EINTR repeats. */
        do
                n = to->socket ? send(to->fd, &s, sizeof(s), MSG_NOSIGNAL) : write(to->fd, &s, sizeof(s));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return n == (ssize_t) sizeof(s) ? 0 : -EIO;
}

_Noreturn void ze_fail(const struct ze_reporter *to, enum ze_step step, int err, int index, int code) {
        (void) ze_report(to, step, err > 0 ? err : EIO, index, 0);
        _exit(code);
}

int ze_step_close_all_but(unsigned first, const int *keep, size_t n) {
        unsigned from = first;

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

int ze_step_setns(int fd, unsigned flags) {
        if (flags == 0)
                return -EINVAL;
        return syscall(SYS_setns, fd, (int) flags) < 0 ? -errno : 0;
}

int ze_step_rlimits(const struct ze_rlimit *rl, size_t n, int *ret_index) {
        for (size_t i = 0; i < n; i++) {
                struct {
                        uint64_t cur, max;
                } v = { rl[i].cur, rl[i].max };

                *ret_index = (int) i;
                if (syscall(SYS_prlimit64, 0, rl[i].resource, &v, NULL) < 0)
                        return -errno;
        }
        *ret_index = -1;
        return 0;
}

int ze_step_wait_go(int fd) {
        char b;
        ssize_t n;

        do
                n = read(fd, &b, 1);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return n > 0;
}

/* oom_score_adj: the number as text into /proc/self/oom_score_adj, one write. */
static int set_oom_score_adj(int32_t v) {
        char buf[16], *q = buf + sizeof(buf);
        uint32_t u = v < 0 ? (uint32_t) - (int64_t) v : (uint32_t) v;
        ssize_t n;
        int fd, e;

        do
                *--q = (char) ('0' + u % 10);
        while ((u /= 10) > 0);
        if (v < 0)
                *--q = '-';
        fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return -errno;
        do
                n = write(fd, q, (size_t) (buf + sizeof(buf) - q));
        while (n < 0 && errno == EINTR);
        e = n < 0 ? errno : 0;
        (void) close(fd);
        return n < 0 ? -e : 0;
}

int ze_step_sched(const struct ze_sched *c, enum ze_step *ret_step) {
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
