/* SPDX-License-Identifier: MIT */
/*
 * The listener's side of a recording (record-notify.h): one notification at a time, noted (record)
 * or decided by the profile under check, and answered.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf.h"
#include "record-agent.h"
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

/* What rec_listen polls besides the signals: the listeners it serves, the connections of
 * runtimes that will bring one (accepted on more's socket), and that socket. */
struct sources {
        int *fds;
        bool *is_conn;
        size_t n, n_alloc;
};

static void sources_done(struct sources *v) {
        for (size_t i = 0; i < v->n; i++)
                safe_close(v->fds[i]);
        free(v->fds);
        free(v->is_conn);
}

/* Takes fd (closed on failure). */
static int sources_add(struct sources *v, int fd, bool is_conn) {
        if (v->n == v->n_alloc) {
                size_t n = v->n_alloc ? v->n_alloc * 2 : 4;
                int *f = reallocarray(v->fds, n, sizeof(*f));
                bool *c = f ? reallocarray(v->is_conn, n, sizeof(*c)) : NULL;

                if (f)
                        v->fds = f;
                if (!c) {
                        safe_close(fd);
                        return -ENOMEM;
                }
                v->is_conn = c;
                v->n_alloc = n;
        }
        v->fds[v->n] = fd;
        v->is_conn[v->n++] = is_conn;
        return 0;
}

static void sources_drop(struct sources *v, size_t i) {
        safe_close(v->fds[i]);
        v->fds[i] = v->fds[v->n - 1];
        v->is_conn[i] = v->is_conn[v->n - 1];
        v->n--;
}

/* One notification of listener read, decided, and answered or held. */
static int serve_one(int listener, struct seccomp_notif *req, size_t req_size, struct rec_set *s,
                     struct rec_check *check, struct rec_hold *hold, struct answer_buf *buf) {
        int error = 0, r;

        memset(req, 0, req_size);
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
                /* ENOENT: the caller died before we read it */
                return errno == EINTR || errno == ENOENT ? 0 : -errno;
        r = decide(req, s, check, &error);
        if (r < 0)
                return r;
        if (rec_hold_take(hold, listener, req, error))
                return 0;
        return answer(listener, req->id, error, buf);
}

/* A connection (or more's socket) readable: a listener added, or nothing (a peer that says
 * nothing of use is dropped, the recording goes on). */
static void take_more(struct sources *v, size_t i, int accept_fd) {
        int fd;

        if (i == SIZE_MAX) {
                fd = accept4(accept_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (fd >= 0)
                        (void) sources_add(v, fd, true);
                return;
        }
        fd = rec_agent_read(v->fds[i]);
        sources_drop(v, i);
        if (fd >= 0)
                (void) sources_add(v, fd, false);
}

int rec_listen(int listener, struct rec_set *s, struct rec_check *check, const struct rec_forward *fw, int more) {
        struct seccomp_notif_sizes sizes;
        _cleanup_free_ struct seccomp_notif *req = NULL;
        _cleanup_free_ struct seccomp_notif_resp *resp = NULL;
        _cleanup_free_ struct pollfd *p = NULL;
        _cleanup_(rec_hold_donep) struct rec_hold hold = {};
        _cleanup_(sources_done) struct sources v = {};
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
        r = fcntl(listener, F_DUPFD_CLOEXEC, 3);
        if (r < 0)
                return -errno;
        r = sources_add(&v, r, false);
        if (r < 0)
                return r;

        /* until no task uses any listener's filter any more, and no runtime is bringing one */
        for (size_t n_p = 0; v.n > 0;) {
                size_t n = 0;

                if (v.n + 2 > n_p) {
                        struct pollfd *q = reallocarray(p, v.n + 2, sizeof(*p));
                        if (!q)
                                return -ENOMEM;
                        p = q;
                        n_p = v.n + 2;
                }
                p[n++] = (struct pollfd){ .fd = fw ? fw->signal_fd : -1, .events = POLLIN };
                p[n++] = (struct pollfd){ .fd = more, .events = POLLIN };
                for (size_t i = 0; i < v.n; i++)
                        p[n++] = (struct pollfd){ .fd = v.fds[i], .events = POLLIN };
                if (poll(p, n, rec_hold_timeout(&hold)) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[0].revents & POLLIN)
                        rec_forward_signals(fw);
                /* the calls held for their processes' other threads (record-hold.h) */
                r = rec_hold_release(&hold, answer, &buf);
                if (r < 0)
                        return r;
                if (p[1].revents & POLLIN)
                        take_more(&v, SIZE_MAX, more);
                /* backwards: a source dropped takes the last one's place */
                for (size_t i = n - 2; i-- > 0;) {
                        short ev = p[i + 2].revents;

                        if (v.is_conn[i] && ev)
                                take_more(&v, i, more);
                        else if (ev & POLLIN)
                                r = serve_one(v.fds[i], req, sizes.seccomp_notif, s, check, &hold, &buf);
                        else if (ev & (POLLHUP | POLLERR | POLLNVAL))
                                /* POLLHUP: no task uses the filter any more, the last has exited */
                                sources_drop(&v, i);
                        if (r < 0)
                                return r;
                }
                /* a runtime's connection may be queued still: taken before the end */
                if (v.n == 0 && more >= 0 && poll(&(struct pollfd){ .fd = more, .events = POLLIN }, 1, 0) > 0)
                        take_more(&v, SIZE_MAX, more);
        }
        return 0;
}
