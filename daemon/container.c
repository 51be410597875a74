/* SPDX-License-Identifier: MIT */
/*
 * CreateContainer: an OCI bundle started by zygoted (container.h). The daemon checks the caller,
 * makes the task and the pipes, and forks a container worker; the worker runs zygote-runc's create
 * recipe (container/create.c, with a struct zct_handoff) with the caller's fds as the init's stdio:
 * the init is cloned with CLONE_PARENT, so it is zygoted's child, and waits on the task's hold
 * pipe. The worker reports over a SOCK_SEQPACKET socket: the runtime's error lines (text), then
 * one record (a NUL byte, struct result) with the init's pidfd and its sync socket as SCM_RIGHTS.
 * The daemon's loop never waits on the worker: its reply is read when it arrives.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "call.h"
#include "caller.h"
#include "container.h"
#include "container-record.h"
#include "daemon.h"
#include "fd-util.h"
#include "container-filter.h"
#include "fork-gate.h"
#include "log.h"
#include "nspool.h"
#include "pidfd-util.h"
#include "profile.h"
#include "libcontainer.h"
#include "server.h"
#include "signal-util.h"
#include "steps.h"
#include "spawn-reply.h"
#include "task.h"
#include "util.h"

#define ZD_CONTAINER_MSG_MAX 2048 /* the runtime's error text kept for the reply */

/* The worker's last message, after a NUL byte; fds: the init's pidfd, then its sync socket. */
struct result {
        int32_t err;          /* 0: created */
        int32_t pid;          /* the init, 0 when none was cloned */
        int32_t premade_used; /* it joined the namespaces made ahead (nspool.c) */
        int32_t cloned;       /* its filter is a reference's, cloned (container-filter.c) */
};

/* CreateContainer's and ExecContainer's parameters: the fds by their index among the call's. */
struct container_param {
        const char *id, *container;
        int64_t bundle;
        json_object *process;
        int64_t in, out, err, console;
};

#define FIELD(n, t, f, fl) \
        { .name = n, .type = t, .offset = offsetof(struct container_param, f), .flags = fl }
#define STDIO_FIELDS \
        FIELD("stdin", ZC_JSON_INT64, in, ZC_JSON_NULLABLE), FIELD("stdout", ZC_JSON_INT64, out, ZC_JSON_NULLABLE), \
                FIELD("stderr", ZC_JSON_INT64, err, ZC_JSON_NULLABLE), \
                FIELD("consoleSocket", ZC_JSON_INT64, console, ZC_JSON_NULLABLE)

static const struct zc_json_field create_fields[] = {
        FIELD("id", ZC_JSON_STRING, id, ZC_JSON_MANDATORY),
        FIELD("bundle", ZC_JSON_INT64, bundle, ZC_JSON_MANDATORY),
        STDIO_FIELDS,
        {},
};

static const struct zc_json_field exec_fields[] = {
        FIELD("container", ZC_JSON_STRING, container, ZC_JSON_MANDATORY),
        FIELD("id", ZC_JSON_STRING, id, ZC_JSON_MANDATORY),
        FIELD("process", ZC_JSON_OBJECT, process, ZC_JSON_MANDATORY),
        STDIO_FIELDS,
        {},
};
#undef STDIO_FIELDS
#undef FIELD

#define CONTAINER_PARAM_INIT \
        { .in = INT64_MIN, .out = INT64_MIN, .err = INT64_MIN, .console = INT64_MIN }

/* One CreateContainer between the fork of its worker and the worker's report. */
struct zd_container_start {
        struct zd_daemon *d;
        struct zd_conn *conn; /* NULL once the caller has gone: the container is kept, created */
        struct zd_task *t;
        struct zc_pidref worker;
        int report_fd;  /* ours of the SOCK_SEQPACKET pair */
        int premade[3]; /* the namespaces made ahead it was given (nspool.c), until the report */
        int hold_fd;    /* the write end of the init's hold pipe: Start's */
        ev_io watch;
        char msg[ZD_CONTAINER_MSG_MAX];
        size_t msg_len;
        struct zd_container_start *next;
};

/* ---- the worker ---------------------------------------------------------------------------- */

static void worker_report(int fd, int err, pid_t pid, int pidfd, int sync_fd, bool premade_used, bool cloned) {
        char buf[1 + sizeof(struct result)] = { 0 };
        struct result res = { .err = err, .pid = pid, .premade_used = premade_used, .cloned = cloned };
        int fds[2];
        size_t n = 0;

        memcpy(buf + 1, &res, sizeof(res));
        if (pidfd >= 0)
                fds[n++] = pidfd;
        if (sync_fd >= 0)
                fds[n++] = sync_fd;
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };

        (void) send_fds(fd, &iov, 1, fds, n, 0);
}

/* Moves the fds the worker keeps to known numbers: 0..2 the init's stdio, then report, bundle,
 * hold (the init's start fd), console and the namespaces made ahead, then the references' pidfds
 * the container may clone its filter from (container-filter.c), everything else closed. */
enum { W_REPORT = 3, W_BUNDLE, W_HOLD, W_CONSOLE, W_NET, W_IPC, W_UTS, W_FIRST_FREE };
#define W_FDS W_FIRST_FREE

/* A failure of worker_fds(), told on whichever copy of the report socket is in place: the
 * worker exits (the daemon answers with this text). */
_Noreturn static void worker_fds_failed(int report, const char *what, int err) {
        char msg[128];
        int n = snprintf(msg, sizeof(msg), "the container worker's fds: %s: %s", what, strerror(err));

        (void) !write(report, msg, (size_t) n);
        _exit(1);
}

/* Every source is copied above the targets first (a source may sit where another goes). */
static void worker_fds(const int src[W_FDS], struct zd_container_filter *cf) {
        int tmp[W_FDS], min = W_FIRST_FREE + (int) cf->n > 64 ? W_FIRST_FREE + (int) cf->n : 64;

        for (size_t i = 0; i < W_FDS; i++) {
                tmp[i] = -1;
                if (src[i] >= 0 && (tmp[i] = fcntl(src[i], F_DUPFD_CLOEXEC, min)) < 0)
                        worker_fds_failed(src[W_REPORT], "F_DUPFD", errno);
        }
        for (size_t i = 0; i < cf->n; i++)
                if ((cf->fds[i] = fcntl(cf->fds[i], F_DUPFD_CLOEXEC, min)) < 0)
                        worker_fds_failed(src[W_REPORT], "F_DUPFD", errno);
        for (int i = 0; i < W_FDS; i++) {
                int report = i > W_REPORT ? W_REPORT : tmp[W_REPORT];
                if (tmp[i] < 0) {
                        if (i > 2)
                                continue;
                        tmp[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
                        if (tmp[i] < 0)
                                worker_fds_failed(report, "/dev/null", errno);
                }
                if (dup2(tmp[i], i) < 0 || (i > 2 && fcntl(i, F_SETFD, FD_CLOEXEC) < 0))
                        worker_fds_failed(report, "dup2", errno);
        }
        for (size_t i = 0; i < cf->n; i++)
                if (dup3(cf->fds[i], W_FIRST_FREE + (int) i, O_CLOEXEC) < 0)
                        worker_fds_failed(W_REPORT, "dup3", errno);
        zd_container_filter_moved(cf, W_FIRST_FREE);
        if (close_range(W_FIRST_FREE + (unsigned) cf->n, ~0U, 0) < 0)
                worker_fds_failed(W_REPORT, "close_range", errno);
}

/* What a worker does: create a container (process NULL), or exec process (an OCI process object)
 * in container id. */
struct worker_job {
        const char *id;
        const char *process;
        const struct zd_caller *caller; /* read at this call (authorize()) */
        bool console;
        const struct zd_task *container; /* an exec's: its recording joined (container-record.c) */
        bool record_agent;               /* a create's recording, through zygote-record's agent */
};

/* The process object as the file zygote-runc's exec reads (--process): a memfd. */
static int process_file(const char *json, char *path, size_t size) {
        int fd = memfd_create("process.json", MFD_CLOEXEC);
        size_t n = strlen(json);

        if (fd < 0 || write(fd, json, n) != (ssize_t) n)
                return -errno;
        snprintf(path, size, "/proc/self/fd/%d", fd);
        return 0;
}

static int worker_job_run(struct zct_ctx *ctx, const struct worker_job *job, struct zct_handoff *h) {
        char bundle[64], process[64];

        if (!job->process) {
                /* The caller's own directory, in the namespaces it shares with us (container.h) */
                snprintf(bundle, sizeof(bundle), "/proc/self/fd/%d", W_BUNDLE);
                struct zct_create_args a = { .p = { .id = job->id }, .bundle = bundle, .handoff = h };
                return zct_container_create(ctx, &a);
        }
        if (process_file(job->process, process, sizeof(process)) < 0)
                return zct_error(ctx, "exec: the process object: %s", strerror(errno));
        struct zct_exec_args a = { .p = { .id = job->id }, .process = process, .handoff = h };
        return zct_exec_process(ctx, &a);
}

/* The worker joins its caller's cgroups (those that differ from zygoted's), as runc would be its
 * caller's child: it, the hooks it runs and the init until it joins its own count there. */
static void worker_join_cgroups(const struct zd_caller *caller, int report) {
        for (size_t i = 0; i < caller->n_cgroups; i++) {
                _cleanup_close_ int fd = openat(caller->cgroup_fds[i], "cgroup.procs", O_WRONLY | O_CLOEXEC);

                if (fd < 0 || write(fd, "0", 1) != 1)
                        worker_fds_failed(report, "joining the caller's cgroup", errno ? errno : EIO);
        }
}

/* What every hook the worker or the init runs holds (prestart, createRuntime, createContainer; the
 * startContainer ones are the container's process): what the caller holds (zd_caller_caps_held),
 * its inheritable and ambient sets within that, no more. A hook runs as uid 0, and its execve
 * would give it its bounding set: that is the caller's held set. A caller whose bounding set has
 * more than it holds cannot get it back itself (SECBIT_NOROOT, locked or not, which cannot be read
 * from outside it) or chose to lose it: its hooks get SECBIT_NOROOT|SECBIT_NOROOT_LOCKED, and then
 * only its ambient capabilities at their execve, as runc's would as its children. Setting them
 * needs CAP_SETPCAP: a caller without it gets hooks without them, with the bounding set above
 * still its held set. */
static struct ze_hook_creds hook_creds(const struct zd_daemon *d, const struct zd_caller *caller) {
        uint64_t held = zd_caller_caps_held(caller);
        bool noroot = (caller->cap_bnd & ~held) != 0 && (held & (UINT64_C(1) << CAP_SETPCAP));

        return (struct ze_hook_creds){ .set = true,
                                       .securebits = noroot ? SECBIT_NOROOT | SECBIT_NOROOT_LOCKED : 0,
                                       .bounding = held,
                                       .caps = held,
                                       .inheritable = caller->cap_inh & held,
                                       .ambient = caller->cap_amb & held,
                                       .cap_last = d->features.cap_last };
}

/* The caller's scheduling and umask for the worker and all it starts (zd_caller_task_sched). */
static int worker_sched(const struct zd_daemon *d, const struct zd_caller *caller, const char **ret_what) {
        enum ze_step step = ZE_STEP_SCHED;
        struct ze_sched t;
        bool set;
        int r;

        r = zd_caller_task_sched(caller, d->privileged, &t, &set);
        if (r >= 0 && set)
                r = ze_step_sched(&t, &step);
        *ret_what = ze_step_to_string(step);
        return r;
}

_Noreturn static void worker_run(struct zd_daemon *d, const int fds[W_FDS], const struct worker_job *job) {
        const struct zd_caller *caller = job->caller;
        const struct ze_hook_creds creds = hook_creds(d, caller);
        uint64_t held = creds.caps;
        bool premade = fds[W_NET] >= 0;
        struct zct_handoff h = { .start_fd = W_HOLD,
                                 .console_fd = job->console ? W_CONSOLE : -1,
                                 .pidfd = -1,
                                 .sync_fd = -1,
                                 .premade = { premade ? W_NET : -1, premade ? W_IPC : -1, premade ? W_UTS : -1 },
                                 .hook_creds = &creds,
                                 .record_agent = job->record_agent,
                                 /* below the caller's only as it could itself */
                                 .oom_floor = held & (UINT64_C(1) << CAP_SYS_RESOURCE) ? INT_MIN
                                                                                       : caller->sched.oom_score_adj };
        struct zd_container_filter cf = { .d = d }; /* the references: zd_container_filter_init() */
        /* seccomp programs: the cache, else GetFilter on our own socket; a reference's filter
         * cloned when it holds the same program (container-filter.c) */
        struct zct_ctx ctx = { .root = d->container_root,
                               .rootless = zct_rootless(),
                               .msg_to_fd = true,
                               .msg_fd = W_REPORT,
                               .filter = zd_container_filter_source(&cf) };
        const char *what;
        int r;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        zc_signals_reset(NULL);
        worker_join_cgroups(caller, fds[W_REPORT]); /* before worker_fds() closes their fds */
        /* The caller's scheduling and umask (Spawn's rule; zygoted's own read through its kept
         * fds, before worker_fds() closes them), while the worker may still set them
         * (CAP_SYS_NICE, CAP_SYS_RESOURCE): what it starts inherits them, and the container's
         * process takes the config's umask after. Then no limit above the caller's and no
         * capability the caller lacks, for the worker, its hooks and the container (whose config
         * may raise a limit, or lower its oom_score_adj, only with CAP_SYS_RESOURCE) */
        r = worker_sched(d, caller, &what);
        if (zd_container_filter_init(d, &cf) < 0)
                worker_fds_failed(fds[W_REPORT], "the references", ENOMEM);
        worker_fds(fds, &cf);
        if (r >= 0) {
                what = "limits and capabilities";
                r = ze_step_rlimits(caller->rlimits, caller->n_rlimits, &(int){ 0 });
        }
        if (r >= 0)
                r = ze_capbset_drop(~held, d->features.capbset_drop_mask, d->features.cap_last);
        if (r >= 0)
                r = ze_step_capset(held, held, caller->cap_inh & held);
        if (r < 0) {
                zct_error(&ctx, "taking the caller's %s: %s", what, strerror(-r));
                worker_report(W_REPORT, -r, 0, -1, -1, false, false);
                _exit(1);
        }
        r = worker_job_run(&ctx, job, &h);
        worker_report(W_REPORT, r == 0 ? 0 : (h.pid > 0 ? ECHILD : EINVAL), h.pid, h.pidfd, h.sync_fd, h.premade_used,
                      cf.cloned);
        _exit(r == 0 ? 0 : 1);
}

/* ---- the daemon's side ---------------------------------------------------------------------- */

static void start_unlink(struct zd_container_start *s) {
        for (struct zd_container_start **p = &s->d->container_starts; *p; p = &(*p)->next)
                if (*p == s) {
                        *p = s->next;
                        return;
                }
}

/* The namespaces made ahead: back to the pool when the init did not join them. */
static void premade_done(struct zd_container_start *s, bool used) {
        if (used)
                close_many(s->premade, 3);
        else
                zd_nspool_give_back(s->d, s->premade);
}

static void start_free(struct zd_container_start *s) {
        premade_done(s, true);
        ev_io_stop(s->d->loop, &s->watch);
        start_unlink(s);
        safe_close(s->report_fd);
        safe_close(s->hold_fd);
        if (s->worker.fd >= 0 || s->worker.pid > 0)
                zd_task_reap_orphan(s->d, s->worker); /* done with us: killed if still there */
        free(s);
}

static void start_failed(struct zd_container_start *s, int err) {
        if (s->conn) {
                char *nl;
                while (s->msg_len > 0 && s->msg[s->msg_len - 1] == '\n')
                        s->msg[--s->msg_len] = '\0';
                nl = strrchr(s->msg, '\n');
                zd_spawn_reply_failed_text(s->conn, "create", err, s->msg_len ? (nl ? nl + 1 : s->msg) : NULL);
        }
        zd_log(LOG_INFO, "container %s: create failed: %s", s->t->id, s->msg_len ? s->msg : strerror(err));
        zd_task_discard(s->t);
        start_free(s);
}

/* The worker's record: the container created (its init becomes the task), or not. */
static void start_result(struct zd_container_start *s, const struct result *res, int *fds, size_t n_fds) {
        int pidfd = n_fds > 0 ? fds[0] : -EBADF, sync_fd = n_fds > 1 ? fds[1] : -EBADF;

        premade_done(s, res->premade_used);

        if (res->err != 0 || pidfd < 0 || sync_fd < 0) {
                if (res->pid > 0) /* killed by the worker already; ours to reap */
                        zd_task_reap_orphan(s->d,
                                            zc_pidref_make(res->pid, pidfd >= 0 ? pidfd : pidfd_open_pid(res->pid)));
                else
                        safe_close(pidfd);
                safe_close(sync_fd);
                start_failed(s, res->err ? res->err : EPROTO);
                return;
        }
        s->t->container = true;
        s->t->tier = res->cloned ? ZD_TIER_CLONE : ZD_TIER_LOAD;
        zd_task_attach_created(s->t, zc_pidref_make(res->pid, pidfd), sync_fd, TAKE_FD(s->hold_fd), s->conn);
        s->conn = NULL;
        start_free(s);
}

static void on_report(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_container_start *s = w->data;
        char buf[ZD_CONTAINER_MSG_MAX];
        int fds[2];
        size_t n_fds = 0;
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
        ssize_t n = recv_fds(s->report_fd, &iov, 1, fds, 2, &n_fds, MSG_DONTWAIT);

        if (n < 0 && (n == -EAGAIN || n == -EINTR))
                return;
        if (n <= 0) {
                start_failed(s, n < 0 ? (int) -n : EPROTO); /* the worker died without a word */
                return;
        }
        if (buf[0] == '\0' && (size_t) n == 1 + sizeof(struct result)) {
                struct result res;
                memcpy(&res, buf + 1, sizeof(res));
                start_result(s, &res, fds, n_fds);
                return;
        }
        for (size_t i = 0; i < n_fds; i++)
                safe_close(fds[i]);
        buf[n] = '\0';
        size_t room = sizeof(s->msg) - s->msg_len;
        int k = snprintf(s->msg + s->msg_len, room, "%s%s", s->msg_len ? "\n" : "", buf);
        s->msg_len = k < 0 ? s->msg_len : (size_t) k >= room ? sizeof(s->msg) - 1 : s->msg_len + (size_t) k;
}

/* A container is made with root's powers over mounts, namespaces and cgroups: a root caller
 * that holds CAP_SYS_ADMIN, confined by nothing a container would not carry. The worker then
 * acts with the capabilities the caller holds, in its cgroups (worker_run), so that neither it,
 * its hooks nor the container has one the caller lacks. */
static int authorize(struct zd_call *call, struct zd_caller *caller) {
        struct zd_conn *c = call->conn;
        const uint64_t admin = UINT64_C(1) << CAP_SYS_ADMIN;
        int r;

        if (!call->d->privileged)
                return zd_call_denied(call, "containers need a zygoted running as root");
        if (!zd_conn_root_at_connect(c))
                return zd_call_denied(call, "containers: root only");
        r = zd_caller_read(zd_conn_fd(c), zd_conn_peer_cred(c),
                           zd_caller_conn_get(zd_conn_caller(c), call->d->caller_cache), caller);
        if (r < 0)
                return zd_call_failf(call, r, ZY_ERROR_CALLER_CONFINED, "reason",
                                     "the caller's process cannot be read");
        if (caller->euid != 0 || !(zd_caller_caps_held(caller) & admin))
                return zd_call_denied(call, "containers need a root caller holding CAP_SYS_ADMIN");
        if (caller->seccomp_mode != 0 || caller->no_new_privs || caller->lsm_attr)
                return zd_call_failf(call, -EACCES, ZY_ERROR_CALLER_CONFINED, "reason",
                                     "containers: the caller has a seccomp filter, no_new_privs or an LSM label of "
                                     "its own, which a container would not carry");
        if (caller->ns_join || caller->ns_other || caller->root_fd >= 0)
                return zd_call_failf(call, -EACCES, ZY_ERROR_CALLER_CONFINED, "reason",
                                     "containers: the caller is in namespaces or a root other than zygoted's");
        return 0;
}

/* The index of one of the call's fds, or -1 when absent (INT64_MIN). */
static int call_fd(struct zd_call *call, int64_t index, const char *name, int *ret) {
        if (index == INT64_MIN) {
                *ret = -1;
                return 0;
        }
        if (index < 0 || (uint64_t) index >= call->n_fds)
                return zd_call_invalid(call, name);
        *ret = call->fds[index];
        return 0;
}

static int worker_fork(struct zd_call *call, struct zd_task *t, const int fds[W_FDS], const struct worker_job *job,
                       int report[2], int hold[2]) {
        struct zd_daemon *d = call->d;
        struct zd_container_start *s = calloc(1, sizeof(*s));
        int child_fds[W_FDS];
        pid_t pid;

        if (!s)
                return -ENOMEM;
        memcpy(child_fds, fds, sizeof(child_fds));
        child_fds[W_REPORT] = report[1];
        child_fds[W_HOLD] = hold[0];
        int r = zd_container_record_before_fork(call, t, job->container);
        if (r < 0) {
                free(s);
                return r;
        }
        zd_fork_gate();
        pid = fork();
        int err = errno;
        if (pid == 0)
                worker_run(d, child_fds, job);
        zd_container_record_after_fork(d, t, job->container);
        if (pid < 0) {
                free(s);
                return -err;
        }
        *s = (struct zd_container_start){ .d = d,
                                          .conn = call->conn,
                                          .t = t,
                                          .report_fd = TAKE_FD(report[0]),
                                          .hold_fd = TAKE_FD(hold[1]),
                                          .premade = { fds[W_NET], fds[W_IPC], fds[W_UTS] } };
        s->worker = zc_pidref_make(pid, pidfd_open_pid(pid));
        report[1] = safe_close(report[1]);
        hold[0] = safe_close(hold[0]);
        ev_io_init(&s->watch, on_report, s->report_fd, EV_READ);
        s->watch.data = s;
        ev_io_start(d->loop, &s->watch);
        s->next = d->container_starts;
        d->container_starts = s;
        return 0;
}

/* The task's worker, forked and watched; on failure the task is discarded. */
static int start_worker(struct zd_call *call, struct zd_task *t, const int fds[W_FDS], const struct worker_job *job) {
        int report[2] = { -EBADF, -EBADF }, hold[2] = { -EBADF, -EBADF }, r = 0;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, report) < 0 ||
            pipe2(hold, O_CLOEXEC) < 0)
                r = -errno;
        if (r >= 0)
                r = worker_fork(call, t, fds, job, report, hold);
        close_pairp(&report);
        close_pairp(&hold);
        if (r < 0) {
                zd_nspool_give_back(call->d, (int[3]){ fds[W_NET], fds[W_IPC], fds[W_UTS] });
                zd_task_discard(t);
                /* a recording refused says so itself (container-record.c) */
                return call->error ? r : zd_spawn_fail_call(call, r, "fork", NULL);
        }
        return 0;
}

/* The fds of stdio and the console, by their indexes. */
static int stdio_fds(struct zd_call *call, int64_t in, int64_t out, int64_t err, int64_t console, int fds[W_FDS]) {
        int r;

        if ((r = call_fd(call, in, "stdin", &fds[0])) < 0 || (r = call_fd(call, out, "stdout", &fds[1])) < 0 ||
            (r = call_fd(call, err, "stderr", &fds[2])) < 0 ||
            (r = call_fd(call, console, "consoleSocket", &fds[6])) < 0)
                return r;
        return 0;
}

/* A new task for a container or an exec (id checked), or the error recorded. */
static int new_task(struct zd_call *call, const char *id, struct zd_task **ret) {
        int r = zd_task_new(call->d, id, 0, ret);
        if (r == -EEXIST)
                return zd_call_failf(call, r, ZY_ERROR_TASK_EXISTS, "id", id);
        if (r < 0)
                return r;
        (*ret)->tier = ZD_TIER_LOAD;
        (*ret)->argv = json_object_new_array();
        return 0;
}

/* What both methods do first: the parameters, the id, who calls, the stdio fds. */
static int container_call(struct zd_call *call, const struct zc_json_field *fields, struct container_param *p,
                          struct zd_caller *caller, int fds[W_FDS]) {
        int r = zd_call_dispatch(call, fields, p);

        if (r >= 0 && !zd_task_id_ok(p->id))
                r = zd_call_invalid(call, "id");
        if (r >= 0)
                r = authorize(call, caller);
        if (r >= 0)
                r = stdio_fds(call, p->in, p->out, p->err, p->console, fds);
        return r;
}

int zd_container_create(struct zd_call *call) {
        struct container_param p = CONTAINER_PARAM_INIT;
        _cleanup_(zd_caller_done) struct zd_caller caller = ZD_CALLER_INIT;
        int fds[W_FDS] = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 };
        struct zd_task *t = NULL;
        _cleanup_free_ char *record_out = NULL, *record_in = NULL;
        bool record_agent;
        struct stat st;
        int r;

        r = container_call(call, create_fields, &p, &caller, fds);
        if (r < 0 || (r = call_fd(call, p.bundle, "bundle", &fds[4])) < 0)
                return r;
        if (fstat(fds[4], &st) < 0 || !S_ISDIR(st.st_mode))
                return zd_call_invalid(call, "bundle");
        r = zd_container_record_parse(call, fds[4], &record_out, &record_in, &record_agent);
        if (r < 0)
                return r;
        r = new_task(call, p.id, &t);
        if (r < 0)
                return r;
        t->record_out = TAKE_PTR(record_out);
        t->record_in = TAKE_PTR(record_in);
        t->profile = strdup("container");
        t->exe = strdup("");
        if (zd_nspool_take(call->d, &fds[W_NET]) < 0)
                fds[W_NET] = fds[W_IPC] = fds[W_UTS] = -1;
        return start_worker(
                call, t, fds,
                &(struct worker_job){
                        .id = p.id, .caller = &caller, .console = fds[6] >= 0, .record_agent = record_agent });
}

int zd_container_exec(struct zd_call *call) {
        struct container_param p = CONTAINER_PARAM_INIT;
        _cleanup_(zd_caller_done) struct zd_caller caller = ZD_CALLER_INIT;
        int fds[W_FDS] = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 };
        struct zd_task *t = NULL, *ct;
        const char *process;
        int r;

        r = container_call(call, exec_fields, &p, &caller, fds);
        if (r < 0)
                return r;
        ct = zd_task_find(call->d, 0, p.container); /* containers are root's (new_task()) */
        if (!ct || !ct->container)
                return zd_call_failf(call, -ENOENT, ZY_ERROR_NO_SUCH_TASK, "id", p.container);
        if (ct->state != ZD_TASK_RUNNING && ct->state != ZD_TASK_CREATED) {
                json_object *e = json_object_new_object();
                json_object_object_add(e, "id", json_object_new_string(ct->id));
                json_object_object_add(e, "state", json_object_new_string(zd_task_state_to_string(ct->state)));
                return zd_call_fail(call, -EBUSY, ZY_ERROR_INVALID_STATE, e);
        }
        process = json_object_to_json_string_ext(p.process, JSON_C_TO_STRING_PLAIN);
        if (!process)
                return -ENOMEM;
        r = new_task(call, p.id, &t);
        if (r < 0)
                return r;
        t->profile = strdup(ct->profile ? ct->profile : "container");
        t->exe = strdup("");
        return start_worker(
                call, t, fds,
                &(struct worker_job){
                        .id = ct->id, .process = process, .caller = &caller, .console = fds[6] >= 0, .container = ct });
}

/* ---- a container's processes and its end ----------------------------------------------------- */

json_object *zd_container_pids(struct zd_daemon *d, const char *id) {
        struct zct_state st = {};
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        json_object *a = json_object_new_array();

        if (!a || zct_state_load(d->container_root, id, &st) < 0)
                return a;
        if (zct_cgroup_pids(&st.cgroup, &pids, &n) >= 0)
                for (size_t i = 0; i < n; i++)
                        json_object_array_add(a, json_object_new_int(pids[i]));
        zct_state_done(&st);
        return a;
}

int zd_container_kill_all(struct zd_daemon *d, const char *id, int sig) {
        struct zct_state st = {};
        _cleanup_free_ int *fds = NULL;
        size_t n = 0;
        int r = zct_state_load(d->container_root, id, &st);

        if (r >= 0)
                r = zct_cgroup_pidfds(&st.cgroup, &fds, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                int k = pidfd_kill(fds[i], sig);
                if (k < 0 && k != -ESRCH)
                        r = k;
        }
        for (size_t i = 0; i < n; i++)
                safe_close(fds[i]);
        zct_state_done(&st);
        return r;
}

/* After Delete: every process of the container killed and waited for, its cgroups and state
 * removed, by a child (the waiting may take long; the loop does not). */
void zd_container_drop_conn(struct zd_daemon *d, struct zd_conn *c) {
        for (struct zd_container_start *s = d->container_starts; s; s = s->next)
                if (s->conn == c)
                        s->conn = NULL;
        zd_container_deletes_drop_conn(d, c);
}

void zd_container_starts_free(struct zd_daemon *d) {
        while (d->container_starts) {
                struct zd_container_start *s = d->container_starts;
                zd_task_discard(s->t);
                start_free(s);
        }
}
