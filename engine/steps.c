/* SPDX-License-Identifier: MIT */
/*
 * The engine's shared steps of no particular facet: the step names, the status record, signals,
 * fds and the hold. See steps.h.
 */
#include <errno.h>
#include <sys/socket.h>
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
