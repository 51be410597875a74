/* SPDX-License-Identifier: MIT */
/*
 * The daemon's side of a reference process (see reference.h), and the message framing both
 * sides share. Library code: no logging, every wait bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fd-util.h"
#include "pidfd-util.h"
#include "plan.h"
#include "probe.h"
#include "reference.h"
#include "util.h"

#define ZR_REF_PROBE_UID 65534
#define ZR_REF_PROBE_GID 65534
#define ZR_REF_PROBE_EXEC_PATH "/proc/self/fd/3" /* the helper, mapped to fd 3 in the probe worker */
#define ZR_REF_PROBE_EXEC_FD 3

/* ---- framing ---------------------------------------------------------------------------- */

int zr_ref_send(int fd, const struct zr_ref_header *h, const void *payload, size_t len, const int *fds, size_t n_fds) {
        struct iovec iov[2] = {
                { .iov_base = (void *) h, .iov_len = sizeof(*h) },
                { .iov_base = (void *) payload, .iov_len = len },
        };
        ssize_t n;

        if (n_fds > ZE_PLAN_MAX_FDS || sizeof(*h) + len > ZR_REF_MAX_MSG)
                return -E2BIG;
        n = send_fds(fd, iov, len ? 2 : 1, fds, n_fds, MSG_DONTWAIT);
        if (n < 0)
                return n == -EMSGSIZE ? -E2BIG : (int) n;
        /* SEQPACKET: all or nothing */
        return (size_t) n == sizeof(*h) + len ? 0 : -EIO;
}

ssize_t zr_ref_recv(int fd, void *buf, size_t size, int *fds, size_t max_fds, size_t *ret_n_fds) {
        struct iovec iov = { .iov_base = buf, .iov_len = size };

        /* more fds than room, or a datagram cut short: -EMSGSIZE, whatever came closed */
        return recv_fds(fd, &iov, 1, fds, max_fds < ZE_PLAN_MAX_FDS ? max_fds : ZE_PLAN_MAX_FDS, ret_n_fds, 0);
}

/* ---- daemon side ------------------------------------------------------------------------ */

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is readable or the process behind pidfd (if >= 0) has exited. 1: fd readable,
 * 0: the process exited (and fd is not readable), -ETIMEDOUT. */
static int wait_readable(int fd, int pidfd, int64_t deadline) {
        for (;;) {
                struct pollfd p[2] = {
                        { .fd = fd, .events = POLLIN },
                        { .fd = pidfd, .events = POLLIN },
                };
                int64_t left = deadline - now_ms();
                int r;

                if (left < 0)
                        left = 0;
                r = poll(p, pidfd >= 0 ? 2 : 1, (int) (left > INT_MAX ? INT_MAX : left));
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                /* data first: a reply queued before the reference died still counts */
                if (p[0].revents)
                        return 1;
                if (pidfd >= 0 && p[1].revents)
                        return 0;
                if (r == 0)
                        return -ETIMEDOUT;
        }
}

/* The control socket is out of step (timeout, garbage): make it unusable, so that the next call
 * fails at once, and kill the reference, so that it cannot act on a request we gave up on (a late
 * worker would run a command the daemon reported as failed). The caller restarts it. */
static void break_ctl(struct zr_reference *r) {
        if (r->ctl_fd >= 0)
                (void) shutdown(r->ctl_fd, SHUT_RDWR);
        (void) zc_pidref_kill(&r->pidref, SIGKILL);
}

/* Receives one reply of type want (or ERROR). Returns 0 with *h filled, or a negative errno;
 * an ERROR reply becomes its errno. fds: room for max_fds. */
static int wait_reply(struct zr_reference *r, uint32_t want, struct zr_ref_header *h, int *fds, size_t max_fds,
                      size_t *n_fds) {
        char buf[sizeof(*h)];
        size_t got = 0;
        ssize_t n;
        int k;

        k = wait_readable(r->ctl_fd, r->pidref.fd, now_ms() + ZR_REF_TIMEOUT_MS);
        if (k == 0)
                return -ECONNRESET;
        if (k < 0) {
                break_ctl(r);
                return k;
        }
        n = zr_ref_recv(r->ctl_fd, buf, sizeof(buf), fds, max_fds, &got);
        if (n == 0 || n == -ECONNRESET)
                return -ECONNRESET;
        if (n < 0) {
                if (n == -EMSGSIZE)
                        break_ctl(r);
                return (int) n;
        }
        if ((size_t) n != sizeof(*h)) {
                close_many(fds, got);
                break_ctl(r);
                return -EBADMSG;
        }
        memcpy(h, buf, sizeof(*h));
        if (h->magic != ZR_REF_MAGIC || (h->type != want && h->type != ZR_REF_ERROR)) {
                close_many(fds, got);
                break_ctl(r);
                return -EBADMSG;
        }
        if (h->type == ZR_REF_ERROR) {
                close_many(fds, got);
                return h->err > 0 ? -h->err : -EIO;
        }
        *n_fds = got;
        return 0;
}

/* Reads the one status record a worker may send before exec. 0 and *ret_rec = {0, 0} on EOF
 * (exec happened), 1 with the record, or a negative errno. */
static int read_status(int fd, int pidfd, int64_t deadline, struct ze_status *ret_rec) {
        struct ze_status s;
        ssize_t n;
        int r;

        r = wait_readable(fd, -EBADF, deadline);
        if (r < 0)
                return r;
        do
                n = read(fd, &s, sizeof(s));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n == 0) {
                *ret_rec = (struct ze_status){ .step = 0 };
                return 0;
        }
        if (n != (ssize_t) sizeof(s))
                return -EBADMSG;
        *ret_rec = s;
        return 1;
}

static int reap(int pidfd, int64_t deadline, siginfo_t *ret_si) {
        int r;

        r = wait_readable(pidfd, -EBADF, deadline);
        if (r < 0)
                return r;
        return pidfd_reap(pidfd, ret_si);
}

int zr_reference_start(int helper_fd, const struct sock_filter *bpf, size_t len, unsigned filter_flags, bool nnp,
                       uint64_t capbset_drop, struct zr_reference *ret) {
        return zr_reference_start_ns(helper_fd, bpf, len, filter_flags, nnp, capbset_drop, -EBADF, -EBADF, 0, ret);
}

int zr_helper_clone(int helper_fd, char **argv, unsigned long clone_flags, int ctl_target, bool with_stderr,
                    struct zr_helper_child *ret) {
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF }, status[2] = { -EBADF, -EBADF };
        int pidfd = -EBADF;
        char *envp[] = { NULL };
        char path_buf[PATH_MAX];
        struct ze_fdmap map[2];
        struct ze_plan plan;
        long pid;

        if (helper_fd < 0 || !argv || !ret)
                return -EINVAL;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(status, O_CLOEXEC) < 0)
                return -errno;
        ze_plan_init(&plan, argv, envp, path_buf, sizeof(path_buf));
        plan.cwd = "/";
        plan.fds = map;
        plan.status_fd = status[1];
        plan.exec_by_fd = true;
        plan.exec_fd = helper_fd;
        map[plan.n_fds++] = (struct ze_fdmap){ .src = sv[1], .target = ctl_target };
        if (with_stderr && fcntl(STDERR_FILENO, F_GETFD) >= 0)
                map[plan.n_fds++] = (struct ze_fdmap){ .src = STDERR_FILENO, .target = STDERR_FILENO };

        pid = clone_with_pidfd(clone_flags, &pidfd);
        if (pid < 0)
                return (int) pid;
        if (pid == 0)
                ze_child_run(&plan); /* only raw syscalls from here: see child.c */
        *ret = (struct zr_helper_child){ .pidref = zc_pidref_make((pid_t) pid, pidfd),
                                         .ctl_fd = TAKE_FD(sv[0]),
                                         .status_fd = TAKE_FD(status[0]) };
        return 0;
}

int zr_reference_start_ns(int helper_fd, const struct sock_filter *bpf, size_t len, unsigned filter_flags, bool nnp,
                          uint64_t capbset_drop, int pidns_fd, int mntns_fd, unsigned ref_flags,
                          struct zr_reference *ret) {
        const int ns_fds[2] = { pidns_fd, mntns_fd };
        _cleanup_close_ int status_fd = -EBADF;
        _cleanup_free_ char *payload = NULL;
        char *argv[] = { (char *) "zygote-ref", NULL };
        struct zr_helper_child child;
        struct zr_reference r = ZR_REFERENCE_NULL;
        struct zr_ref_init init = {
                .filter_flags = filter_flags,
                .nnp = nnp,
                .n_insns = (uint32_t) len,
                .flags = ref_flags,
                .capbset_drop = capbset_drop,
        };
        struct zr_ref_header h = { .magic = ZR_REF_MAGIC, .type = ZR_REF_INIT };
        struct ze_status rec;
        size_t n_fds = 0;
        int64_t deadline = now_ms() + ZR_REF_TIMEOUT_MS;
        int sndbuf = (int) ZR_REF_MAX_MSG * 2, k;

        if (helper_fd < 0 || !bpf || len == 0 || len > ZE_PLAN_MAX_INSNS || !ret || (pidns_fd < 0) != (mntns_fd < 0))
                return -EINVAL;
        /* the daemon's stderr, for the reference's fatal messages */
        k = zr_helper_clone(helper_fd, argv, 0, ZR_REF_CTL_FD, true, &child);
        if (k < 0)
                return k;
        r = (struct zr_reference){ .pidref = child.pidref, .ctl_fd = child.ctl_fd };
        status_fd = child.status_fd;
        /* the largest plan must fit one datagram; clamped to wmem_max, which is still enough */
        (void) setsockopt(r.ctl_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));

        /* exec, or a (step, errno) record */
        k = read_status(status_fd, r.pidref.fd, deadline, &rec);
        if (k != 0) {
                zr_reference_stop(&r);
                return k < 0 ? k : -(rec.err > 0 ? rec.err : EIO);
        }

        payload = malloc(sizeof(init) + len * sizeof(struct sock_filter));
        if (!payload) {
                zr_reference_stop(&r);
                return -ENOMEM;
        }
        memcpy(payload, &init, sizeof(init));
        memcpy(payload + sizeof(init), bpf, len * sizeof(struct sock_filter));
        k = zr_ref_send(r.ctl_fd, &h, payload, sizeof(init) + len * sizeof(struct sock_filter), ns_fds,
                        pidns_fd >= 0 ? 2 : 0);
        if (k == 0)
                k = wait_reply(&r, ZR_REF_READY, &h, NULL, 0, &n_fds);
        if (k < 0) {
                zr_reference_stop(&r);
                return k;
        }
        *ret = r;
        return 0;
}

/* A pidfd for pid, which must be our child: the reference answers a pid, and a pid that is not
 * one of our children could be anyone's. Exact because we reap our children only through their
 * pidfds: until then the pid cannot be reused. */
static int open_child(pid_t pid) {
        _cleanup_close_ int fd = pidfd_open_pid(pid);
        siginfo_t si;
        int k;

        if (fd < 0)
                return fd;
        k = pidfd_wait(fd, WEXITED | WNOHANG | WNOWAIT, &si);
        if (k < 0)
                return k == -ECHILD ? -EBADMSG : k;
        return TAKE_FD(fd);
}

int zr_reference_request(struct zr_reference *r, const struct ze_plan *plan) {
        struct zr_ref_header h = { .magic = ZR_REF_MAGIC, .type = ZR_REF_SPAWN };
        _cleanup_free_ void *buf = NULL;
        int fds[ZE_PLAN_MAX_FDS];
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        int k;

        if (!r || !plan)
                return -EINVAL;
        if (r->ctl_fd < 0)
                return -ENOTCONN;
        k = ze_plan_pack(plan, &buf, &len, fds, &n_fds);
        if (k < 0)
                return k;
        return zr_ref_send(r->ctl_fd, &h, buf, len, fds, n_fds);
}

int zr_reference_pool_request(struct zr_reference *r, int chan_fd) {
        struct zr_ref_header h = { .magic = ZR_REF_MAGIC, .type = ZR_REF_POOL };

        if (!r || chan_fd < 0)
                return -EINVAL;
        if (r->ctl_fd < 0)
                return -ENOTCONN;
        return zr_ref_send(r->ctl_fd, &h, NULL, 0, &chan_fd, 1);
}

int zr_pool_channel(int ret[2]) {
        int sv[2], sndbuf = (int) ZR_REF_MAX_MSG * 2;

        if (!ret)
                return -EINVAL;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        /* the largest plan must fit one datagram, as on the control socket */
        (void) setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        ret[0] = sv[0];
        ret[1] = sv[1];
        return 0;
}

int zr_pool_send(int chan, const struct ze_plan *plan) {
        struct zr_ref_header h = { .magic = ZR_REF_MAGIC, .type = ZR_REF_SPAWN, .arg = -1 };
        _cleanup_free_ void *buf = NULL;
        int fds[ZE_PLAN_MAX_FDS];
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        int k;

        if (chan < 0 || !plan)
                return -EINVAL;
        k = ze_plan_pack(plan, &buf, &len, fds, &n_fds);
        if (k < 0)
                return k;
        /* where the status fd is among the fds (ze_plan_pack()'s order): a worker that cannot
         * unpack the plan still reports there, never looks like an exec */
        if (plan->status_fd >= 0)
                h.arg = (int32_t) (plan->n_fds + plan->n_cgroups);
        return zr_ref_send(chan, &h, buf, len, fds, n_fds);
}

/* The reference is out of step or gone with a request in its hands: its worker is unknown. */
static int worker_unknown(struct zr_reference *r, pid_t *ret_pid, int k) {
        break_ctl(r);
        *ret_pid = ZR_REF_WORKER_UNKNOWN;
        return k;
}

int zr_reference_reply(struct zr_reference *r, struct zc_pidref *ret_worker) {
        struct zr_ref_header h;
        char buf[sizeof(h)];
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
        ssize_t n;
        int k;

        if (!r || !ret_worker)
                return -EINVAL;
        *ret_worker = ZC_PIDREF_NULL;
        if (r->ctl_fd < 0)
                return worker_unknown(r, &ret_worker->pid, -ENOTCONN);
        n = recv_fds(r->ctl_fd, &iov, 1, NULL, 0, NULL, MSG_DONTWAIT);
        if (n == -EAGAIN)
                return -EAGAIN;
        if (n == 0 || n == -ECONNRESET)
                return worker_unknown(r, &ret_worker->pid, -ECONNRESET);
        if (n < 0)
                return worker_unknown(r, &ret_worker->pid, (int) n);
        if ((size_t) n != sizeof(h))
                return worker_unknown(r, &ret_worker->pid, -EBADMSG);
        memcpy(&h, buf, sizeof(h));
        if (h.magic != ZR_REF_MAGIC || (h.type != ZR_REF_SPAWNED && h.type != ZR_REF_ERROR))
                return worker_unknown(r, &ret_worker->pid, -EBADMSG);
        /* An ERROR reply: the reference forked nothing. */
        if (h.type == ZR_REF_ERROR)
                return h.err > 0 ? -h.err : -EIO;
        if (h.arg <= 0)
                return worker_unknown(r, &ret_worker->pid, -EBADMSG);
        k = open_child((pid_t) h.arg);
        /* not our child: the reference is out of step, and its worker unknown */
        if (k == -EBADMSG)
                return worker_unknown(r, &ret_worker->pid, k);
        ret_worker->pid = (pid_t) h.arg;
        if (k < 0)
                return k;
        ret_worker->fd = k;
        return 0;
}

int zr_reference_spawn(struct zr_reference *r, const struct ze_plan *plan, struct zc_pidref *ret_worker) {
        int64_t deadline = now_ms() + ZR_REF_TIMEOUT_MS;
        int k;

        if (!r || !plan || !ret_worker)
                return -EINVAL;
        *ret_worker = ZC_PIDREF_NULL;
        k = zr_reference_request(r, plan);
        if (k < 0)
                return k;
        for (;;) {
                k = wait_readable(r->ctl_fd, r->pidref.fd, deadline);
                if (k == 0)
                        return worker_unknown(r, &ret_worker->pid, -ECONNRESET);
                if (k < 0)
                        return worker_unknown(r, &ret_worker->pid, k);
                k = zr_reference_reply(r, ret_worker);
                if (k != -EAGAIN)
                        return k;
        }
}

/* Whether fd of process pid is open for writing (/proc/PID/fdinfo/FD's flags). */
static bool fd_writes(pid_t pid, const char *fd) {
        char path[sizeof("/proc//fdinfo/") + 3 * sizeof(int) + NAME_MAX], line[128];
        bool w = false;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int) pid, fd);
        f = fopen(path, "re");
        if (!f)
                return false;
        while (fgets(line, sizeof(line), f)) {
                unsigned long flags;

                if (sscanf(line, "flags: %lo", &flags) == 1) {
                        w = (flags & O_ACCMODE) == O_WRONLY || (flags & O_ACCMODE) == O_RDWR;
                        break;
                }
        }
        fclose(f);
        return w;
}

/* Whether process pid holds, open for writing, the file kind ("pipe", "socket") whose inode is
 * ino. For a pipe, the write end: any child the daemon forks meanwhile holds copies of its read
 * ends until its exec. */
static bool holds_file(pid_t pid, const char *kind, ino_t ino) {
        char dir[64], want[64], link[64];
        struct dirent *de;
        bool found = false;
        DIR *d;

        snprintf(dir, sizeof(dir), "/proc/%d/fd", (int) pid);
        snprintf(want, sizeof(want), "%s:[%lu]", kind, (unsigned long) ino);
        d = opendir(dir);
        if (!d)
                return false; /* gone, or not ours to look at */
        while (!found && (de = readdir(d))) {
                ssize_t n;

                if (de->d_name[0] == '.')
                        continue;
                n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
                if (n <= 0)
                        continue;
                link[n] = 0;
                found = streq(link, want) && fd_writes(pid, de->d_name);
        }
        closedir(d);
        return found;
}

static pid_t find_holder(const struct zr_reference *r, const char *kind, ino_t ino) {
        char path[64];
        pid_t found = 0;
        long pid;
        FILE *f;
        int k;

        /* Dead, so that its fork, if it made one, is complete. It is being killed already. */
        if (r->pidref.fd >= 0) {
                k = wait_readable(r->pidref.fd, -EBADF, now_ms() + ZR_REF_TIMEOUT_MS);
                if (k < 0)
                        return k;
        }
        /* every child, however many tasks there are: read as a stream */
        snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int) getpid());
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (!found && fscanf(f, "%ld", &pid) == 1)
                if (pid > 0 && pid != r->pidref.pid && holds_file((pid_t) pid, kind, ino))
                        found = (pid_t) pid;
        fclose(f);
        return found;
}

pid_t zr_reference_find_worker(const struct zr_reference *r, int status_r) {
        struct stat st;

        if (!r || status_r < 0)
                return -EINVAL;
        if (fstat(status_r, &st) < 0)
                return -errno;
        return find_holder(r, "pipe", st.st_ino);
}

pid_t zr_reference_find_socket_holder(const struct zr_reference *r, ino_t ino) {
        if (!r || ino == 0)
                return -EINVAL;
        return find_holder(r, "socket", ino);
}

int zr_reference_probe_inherit(struct zr_reference *r, int helper_fd, bool privileged, char **ret_reason) {
        static const gid_t groups[] = { ZR_REF_PROBE_GID };
        _cleanup_close_pair_ int status[2] = { -EBADF, -EBADF };
        _cleanup_(zc_pidref_done) struct zc_pidref worker = ZC_PIDREF_NULL;
        /* The probe worker runs as ZR_REF_PROBE_UID, which may not search the directories above
         * the helper (a build in /root): it gets the daemon's fd of the helper and execs it by
         * /proc/self/fd, with execve, the call every real worker makes under the filter already in
         * place (execveat is not in every profile). A task may always follow its own fds. */
        char self_path[] = ZR_REF_PROBE_EXEC_PATH;
        struct ze_fdmap map[] = { { .src = helper_fd, .target = ZR_REF_PROBE_EXEC_FD } };
        char *argv[] = { self_path, "--probe-exec", NULL };
        char *envp[] = { NULL };
        char path_buf[PATH_MAX];
        struct ze_status rec;
        struct ze_plan plan;
        siginfo_t si;
        int64_t deadline;
        unsigned cap_last;
        char *reason = NULL;
        int k;

        if (!r || helper_fd < 0)
                return -EINVAL;
        if (pipe2(status, O_CLOEXEC) < 0)
                return -errno;
        ze_plan_init(&plan, argv, envp, path_buf, sizeof(path_buf));
        plan.n_fds = ELEMENTSOF(map);
        plan.fds = map;
        plan.cwd = "/";
        plan.status_fd = status[1];
        plan.no_new_privs = true;
        plan.filter_mode = ZE_FILTER_INHERITED;
        if (privileged) {
                /* every step a real worker of a non-root caller goes through */
                k = ze_cap_last(&cap_last);
                if (k < 0)
                        return k;
                plan.set_ids = true;
                plan.uid = ZR_REF_PROBE_UID;
                plan.gid = ZR_REF_PROBE_GID;
                plan.groups = groups;
                plan.n_groups = ELEMENTSOF(groups);
                plan.cap_last = cap_last;
                plan.capbset_drop = cap_last >= 63 ? UINT64_MAX : (UINT64_C(1) << (cap_last + 1)) - 1;
                plan.set_caps = true;
                plan.caps_keep = 0;
        }

        k = zr_reference_spawn(r, &plan, &worker);
        if (k < 0) {
                if (ret_reason && asprintf(&reason, "spawn through the reference: %s", strerror(-k)) >= 0)
                        *ret_reason = reason;
                return k;
        }
        status[1] = safe_close(status[1]);

        deadline = now_ms() + ZR_REF_TIMEOUT_MS;
        k = read_status(status[0], worker.fd, deadline, &rec);
        if (k >= 0) {
                int w = reap(worker.fd, deadline, &si);
                if (w < 0)
                        k = w;
        }
        if (k < 0) {
                /* a worker that does not finish in time is killed, never left behind */
                (void) zc_pidref_kill(&worker, SIGKILL);
                (void) reap(worker.fd, now_ms() + ZR_REF_TIMEOUT_MS, NULL);
                if (ret_reason && asprintf(&reason, "probe worker: %s", strerror(-k)) >= 0)
                        *ret_reason = reason;
                return k;
        }
        if (k == 1) {
                if (ret_reason && asprintf(&reason, "%s: %s", ze_step_to_string(rec.step), strerror(rec.err)) >= 0)
                        *ret_reason = reason;
                return rec.err > 0 ? -rec.err : -EIO;
        }
        if (si.si_code != CLD_EXITED || si.si_status != 0) {
                if (ret_reason &&
                    asprintf(&reason, "probe worker %s %d after exec",
                             si.si_code == CLD_EXITED ? "exited with" : "was killed by signal", si.si_status) >= 0)
                        *ret_reason = reason;
                return -EPROTO;
        }
        return 0;
}

void zr_reference_stop(struct zr_reference *r) {
        if (!r)
                return;
        r->ctl_fd = safe_close(r->ctl_fd);
        zc_pidref_kill_and_reap(&r->pidref);
}

int zr_helper_open(const char *path) {
        int fd;

        if (!path)
                return -EINVAL;
        fd = open(path, O_PATH | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int zr_helper_path(char *buf, size_t size) {
        const char *env = secure_getenv("ZYGOTE_REF_HELPER");
        char self[PATH_MAX];
        const char *found = NULL;
        ssize_t n;

        if (!buf)
                return -EINVAL;
        if (env && *env)
                found = env;
        else {
                n = readlink("/proc/self/exe", self, sizeof(self) - 1);
                if (n > 0 && (size_t) n < sizeof(self) - sizeof("/zygote-ref")) {
                        char *slash;

                        self[n] = 0;
                        slash = strrchr(self, '/');
                        if (slash) {
                                strcpy(slash, "/zygote-ref");
                                if (access(self, X_OK) == 0)
                                        found = self;
                        }
                }
                if (!found)
                        found = ZYGOTE_LIBEXEC_DIR "/zygote-ref";
        }
        if (strlen(found) >= size)
                return -ENAMETOOLONG;
        strcpy(buf, found);
        return 0;
}
