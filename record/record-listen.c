/* SPDX-License-Identifier: MIT */
/*
 * The listener's side of a recording (record-notify.h): one notification at a time, noted (record)
 * or decided by the profile under check, and answered.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf.h"
#include "record-hold.h"
#include "record-notify.h"
#include "util.h"

#define REC_MAX(a, b) ((a) > (b) ? (a) : (b))

#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif

/* The answer to one call: *ret_error 0 and CONTINUE, or a negative errno to return instead. */
static int decide(struct seccomp_notif *req, struct rec_set *s, struct rec_check *check, int *ret_error) {
        uint64_t args[6];
        uint32_t action;
        int r;

        memcpy(args, req->data.args, sizeof(args));
        if (!check) {
                r = rec_set_add(s, req->data.arch, (uint32_t) req->data.nr, args);
                /* past the set's limits the call is not recorded (the profile will refuse it,
                 * and check will name it), and the run goes on */
                if (r < 0 && r != -E2BIG)
                        return r;
                /* clone3's flags are out of any filter's reach: the profile written answers it
                 * ENOSYS (the C library then uses clone), and so does the recording, so that the
                 * run takes the path its profile will let it take. */
                *ret_error = rec_set_kind(s, req->data.arch, (uint32_t) req->data.nr) == '3' ? -ENOSYS : 0;
                return 0;
        }
        r = zp_bpf_run(check->prog, check->len, &req->data, &action, NULL);
        if (r < 0)
                return r;
        switch (action & SECCOMP_RET_ACTION_FULL) {
        case SECCOMP_RET_ALLOW:
        case SECCOMP_RET_LOG:
                *ret_error = 0;
                return 0;
        case SECCOMP_RET_ERRNO:
                /* an errno of 0 would read as "continue": the kernel returns 0 itself then */
                *ret_error = -(int) (action & SECCOMP_RET_DATA);
                break;
        default:
                /* a kill, trap or trace: refused, and answered ENOSYS rather than acted out */
                *ret_error = -ENOSYS;
                break;
        }
        r = rec_set_add(&check->refused, req->data.arch, (uint32_t) req->data.nr, args);
        if (r < 0 && r != -E2BIG)
                return r;
        check->n_refused++;
        return 0;
}

void rec_forward_signals(const struct rec_forward *f) {
        struct signalfd_siginfo si;

        while (read(f->signal_fd, &si, sizeof(si)) == (ssize_t) sizeof(si))
                if (si.ssi_code != SI_KERNEL)
                        (void) syscall(__NR_pidfd_send_signal, f->forward_pidfd, (int) si.ssi_signo, NULL, 0);
}

struct answer_buf {
        struct seccomp_notif_resp *resp;
        size_t size;
};

/* The answer to notification id: CONTINUE, or the negative errno error. ENOENT (the caller died,
 * or a signal interrupted its call) is no failure. */
static int answer(int listener, uint64_t id, int error, void *u) {
        struct answer_buf *b = u;

        memset(b->resp, 0, b->size);
        b->resp->id = id;
        b->resp->error = error;
        b->resp->flags = error == 0 ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, b->resp) < 0) {
                if (errno == ENOENT)
                        return 0;
                /* kernels before 5.5 know no FLAG_CONTINUE */
                if (errno == EINVAL && b->resp->flags)
                        return -EOPNOTSUPP;
                return -errno;
        }
        return 0;
}

static void rec_hold_donep(struct rec_hold *h) {
        rec_hold_done(h);
}

int rec_listen(int listener, struct rec_set *s, struct rec_check *check, const struct rec_forward *fw) {
        struct seccomp_notif_sizes sizes;
        _cleanup_free_ struct seccomp_notif *req = NULL;
        _cleanup_free_ struct seccomp_notif_resp *resp = NULL;
        _cleanup_(rec_hold_donep) struct rec_hold hold = {};
        struct answer_buf buf;
        int r;

        if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
                return errno == EINVAL ? -EOPNOTSUPP : -errno;
        /* the kernel's structs may be larger than ours: sized as it says */
        req = calloc(1, REC_MAX((size_t) sizes.seccomp_notif, sizeof(*req)));
        resp = calloc(1, REC_MAX((size_t) sizes.seccomp_notif_resp, sizeof(*resp)));
        if (!req || !resp)
                return -ENOMEM;
        buf = (struct answer_buf){ .resp = resp, .size = sizes.seccomp_notif_resp };

        for (;;) {
                struct pollfd p = { .fd = listener, .events = POLLIN },
                              ps = { .fd = fw ? fw->signal_fd : -1, .events = POLLIN };
                struct pollfd both[2] = { p, ps };
                int error = 0;

                if (poll(both, 2, rec_hold_timeout(&hold)) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (both[1].revents & POLLIN)
                        rec_forward_signals(fw);
                /* the calls held for their processes' other threads (record-hold.h) */
                r = rec_hold_release(&hold, listener, answer, &buf);
                if (r < 0)
                        return r;
                p = both[0];
                if (!(p.revents & POLLIN)) {
                        /* POLLHUP: no task uses the filter any more, the last has exited */
                        if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
                                return 0;
                        continue;
                }
                memset(req, 0, sizes.seccomp_notif);
                if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
                        /* ENOENT: the caller died before we read it */
                        if (errno == EINTR || errno == ENOENT)
                                continue;
                        return -errno;
                }
                r = decide(req, s, check, &error);
                if (r < 0)
                        return r;
                if (rec_hold_take(&hold, req, error))
                        continue;
                r = answer(listener, req->id, error, &buf);
                if (r < 0)
                        return r;
        }
}
