/* SPDX-License-Identifier: MIT */
/*
 * The in-process zygoted of the protocol fuzzers; see fuzz-daemon.h for what it promises.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "registry.h"
#include "server.h"
#include "spawner.h"
#include "task.h"
#include "methods.h"
#include "fuzz-daemon.h"
#include "json-dispatch.h"
#include "util.h"

#define FZ_DAEMON_UID_NUMBER 65532 /* who the unprivileged daemon pretends to be */
#define FZ_MAX_STANDINS 4096
#define FZ_FAKE_PID_BASE 0x40000000 /* above any pid_max: kill(-pid) finds no group */

struct standin {
        bool used;
        pid_t pid;
        int exit_w;   /* write end of the pipe whose read end is the "pidfd"; closed = exited */
        int status_w; /* our copy of the status pipe while held */
        int hold_r;   /* our copy of the hold pipe while held */
        ev_io hold_watch;
};

static struct zd_daemon d;
static bool initialized;
static char profiles_dir[256];
static char *dirs[1];
static struct standin standins[FZ_MAX_STANDINS];
static pid_t next_pid = FZ_FAKE_PID_BASE;
static unsigned long progress;
static size_t baseline_fds;

/* The caller of the current input, for the oracle. */
static struct ucred caller;
static gid_t caller_groups[1];
static size_t caller_n_groups;

_noreturn_ static void finding(const char *what) {
        fprintf(stderr, "fuzz-daemon: FINDING: %s\n", what);
        abort();
}

static size_t count_fds(void) {
        DIR *dir = opendir("/proc/self/fd");
        size_t n = 0;
        if (!dir)
                finding("cannot read /proc/self/fd");
        while (readdir(dir))
                n++;
        closedir(dir);
        return n; /* includes ".", ".." and the DIR's own fd: the same every time */
}

/* ---- stand-in workers --------------------------------------------------------------------------- */

static void standin_close(struct standin *s) {
        if (!s->used)
                return;
        ev_io_stop(d.loop, &s->hold_watch);
        s->exit_w = safe_close(s->exit_w);
        s->status_w = safe_close(s->status_w);
        s->hold_r = safe_close(s->hold_r);
        s->used = false;
}

static void on_hold(struct ev_loop *loop, ev_io *w, int revents) {
        struct standin *s = w->data;
        char b;
        ssize_t n = read(s->hold_r, &b, 1);
        if (n < 0)
                return;
        progress++;
        ev_io_stop(loop, w);
        s->hold_r = safe_close(s->hold_r);
        /* A byte: Start, so "exec" (EOF on the status pipe). EOF: abandoned, the worker exits. */
        s->status_w = safe_close(s->status_w);
        if (n == 0)
                s->exit_w = safe_close(s->exit_w);
}

static bool in_caller_groups(gid_t g) {
        for (size_t i = 0; i < caller_n_groups; i++)
                if (caller_groups[i] == g)
                        return true;
        return false;
}

/* The identity and fd rules every plan must follow, whatever the request said. */
static void check_plan(const struct ze_plan *p) {
        if (!p->argv || !p->argv[0] || !p->argv[0][0])
                finding("a plan without argv[0]");
        if (!p->envp)
                finding("a plan without envp");
        for (char *const *e = p->envp; *e; e++)
                if (!strchr(*e, '=') || (*e)[0] == '=')
                        finding("an env entry without a name and '='");
        if (!p->cwd || p->cwd[0] != '/')
                finding("a relative cwd");
        if (p->n_fds > ZE_MAX_FDS)
                finding("more fds than ZE_MAX_FDS in a plan");
        for (size_t i = 0; i < p->n_fds; i++) {
                if (p->fds[i].target < 0 || p->fds[i].target >= 1024)
                        finding("an fd target outside 0..1023");
                if (fcntl(p->fds[i].src, F_GETFD) < 0)
                        finding("a plan names an fd that is not open");
                for (size_t j = 0; j < i; j++)
                        if (p->fds[j].target == p->fds[i].target)
                                finding("two fds for one target");
        }
        if (fcntl(p->status_fd, F_GETFD) < 0)
                finding("no status pipe");
        if (p->filter_mode != ZE_FILTER_LOAD || !p->prog || !p->prog->filter || p->prog->len == 0)
                finding("a load-tier plan without its BPF program");
        if (p->caps_keep & p->capbset_drop)
                finding("a capability both kept and dropped from the bounding set");

        if (!d.privileged) {
                if (p->set_ids || p->set_caps || !p->no_new_privs)
                        finding("an unprivileged daemon's plan switches ids or caps, or lacks no_new_privs");
                if (caller.uid != 0 && caller.uid != d.uid)
                        finding("an unprivileged daemon serves a stranger");
                return;
        }
        if (caller.uid == 0)
                return; /* root may name anyone and keep the profile's capabilities */
        if (!p->set_ids || p->uid != caller.uid)
                finding("a non-root caller's task does not run as the caller");
        if (p->gid != caller.gid && !in_caller_groups(p->gid))
                finding("a non-root caller's task runs in a group the caller is not in");
        for (size_t i = 0; i < p->n_groups; i++)
                if (!in_caller_groups(p->groups[i]))
                        finding("a non-root caller's task gets a supplementary group the caller lacks");
        if (p->caps_keep != 0)
                finding("a non-root caller's task keeps capabilities");
        if (!p->no_new_privs)
                finding("a non-root caller's task may gain privileges (no no_new_privs)");
}

static int fork_hook(const struct ze_plan *plan, pid_t *ret_pid, int *ret_pidfd) {
        check_plan(plan);
        progress++;

        struct standin *s = NULL;
        for (size_t i = 0; i < FZ_MAX_STANDINS && !s; i++)
                if (!standins[i].used)
                        s = &standins[i];
        if (!s)
                return -EAGAIN; /* as fork would say */
        int p[2];
        if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
                return negative_errno();
        *s = (struct standin){ .used = true, .pid = next_pid++, .exit_w = p[1], .status_w = -EBADF, .hold_r = -EBADF };

        const char *name = strrchr(plan->argv[0], '/');
        name = name ? name + 1 : plan->argv[0];
        if (strncmp(name, "fail", 4) == 0) {
                struct ze_status st = { .step = ZE_STEP_EXEC, .err = ENOENT };
                if (write(plan->status_fd, &st, sizeof(st)) != sizeof(st))
                        finding("status pipe write");
                s->exit_w = safe_close(s->exit_w); /* exit 127 */
        } else if (plan->hold_fd >= 0) {
                struct ze_status st = { .step = ZE_STEP_HELD };
                if (write(plan->status_fd, &st, sizeof(st)) != sizeof(st))
                        finding("status pipe write");
                s->status_w = fcntl(plan->status_fd, F_DUPFD_CLOEXEC, 3);
                s->hold_r = fcntl(plan->hold_fd, F_DUPFD_CLOEXEC, 3);
                if (s->status_w < 0 || s->hold_r < 0)
                        finding("dup of the held worker's pipes");
                ev_io_init(&s->hold_watch, on_hold, s->hold_r, EV_READ);
                s->hold_watch.data = s;
                ev_io_start(d.loop, &s->hold_watch);
        } else if (strncmp(name, "exit", 4) == 0 || strncmp(name, "true", 4) == 0)
                s->exit_w = safe_close(s->exit_w);
        /* else: it "runs" until fz_exit_all(). spawn.c closes its end of the status pipe now:
         * EOF there means exec happened. */
        *ret_pid = s->pid;
        *ret_pidfd = p[0];
        return 0;
}

void fz_exit_all(void) {
        for (size_t i = 0; i < FZ_MAX_STANDINS; i++)
                standin_close(&standins[i]);
}

/* ---- set-up -------------------------------------------------------------------------------------- */

static void copy_dir(const char *from, const char *to) {
        DIR *dir = opendir(from);
        struct dirent *de;
        if (!dir)
                return;
        while ((de = readdir(dir))) {
                size_t l = strlen(de->d_name);
                if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0)
                        continue;
                char src[4096], dst[4096], buf[65536];
                snprintf(src, sizeof(src), "%s/%s", from, de->d_name);
                snprintf(dst, sizeof(dst), "%s/%s", to, de->d_name);
                int in = open(src, O_RDONLY | O_CLOEXEC),
                    out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                ssize_t n;
                while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
                        if (write(out, buf, (size_t) n) != n)
                                finding("copying a profile");
                safe_close(in);
                safe_close(out);
        }
        closedir(dir);
}

static void log_error(const char *message, void *userdata) {
        fprintf(stderr, "fuzz-daemon: profile: %s\n", message);
}

void fz_init(void) {
        if (initialized)
                return;
        /* Quiet: a fuzzer would print millions of task lines. */
        setenv("ZYGOTE_LOG_LEVEL", "err", 0);
        unsetenv("NOTIFY_SOCKET");
        unsetenv("LISTEN_FDS");
        /* As zygoted's main() does: a write to a stand-in's closed hold pipe is an EPIPE for
         * task.c to handle, not the end of the process. */
        signal(SIGPIPE, SIG_IGN);
        zd_log_open(NULL);

        /* The profiles are copied once: a reload then always sees the same files, keeps every
         * entry and never starts a reference process. */
        snprintf(profiles_dir, sizeof(profiles_dir), "/tmp/zygote-fuzz-profiles-XXXXXX");
        if (!mkdtemp(profiles_dir))
                finding("mkdtemp");
        copy_dir(ZYGOTE_SOURCE_PROFILES_DIR, profiles_dir);
        copy_dir(ZYGOTE_FUZZ_PROFILES_DIR, profiles_dir);
        dirs[0] = profiles_dir;

        d.loop = ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV);
        if (!d.loop)
                finding("ev_loop_new");
        d.server = (struct zd_server){
                .loop = d.loop,
                .socket_path = "/nonexistent-zygote-fuzz.sock",
                .listen_fd = -EBADF,
                .on_call = zd_methods_call,
                .on_disconnect = zd_methods_disconnect,
                .userdata = &d,
        };
        d.profile_dirs = dirs;
        d.n_profile_dirs = 1;
        d.forced_tier = ZD_TIER_LOAD;
        snprintf(d.helper, sizeof(d.helper), "/nonexistent-zygote-fuzz/zygote-ref");
        if (ze_cap_last(&d.features.cap_last) < 0)
                d.features.cap_last = 40;
        if (zd_tasks_init(&d) < 0)
                finding("zd_tasks_init");

        struct zp_profile_set set = {};
        if (zp_profile_set_load((const char *const *) dirs, 1, &set, log_error, NULL) < 0 || set.n == 0)
                finding("no profile loaded");
        d.entries = calloc(set.n, sizeof(*d.entries));
        if (!d.entries)
                finding("calloc");
        for (size_t i = 0; i < set.n; i++) {
                struct zd_entry *e = calloc(1, sizeof(*e));
                if (!e)
                        finding("calloc");
                e->d = &d;
                e->profile = TAKE_PTR(set.items[i]);
                e->ref = ZR_REFERENCE_NULL;
                e->tier = e->best_tier = ZD_TIER_LOAD;
                snprintf(e->reason, sizeof(e->reason), "fuzzing: stand-in workers");
                d.entries[d.n_entries++] = e;
        }
        zp_profile_set_clear(&set);
        zd_spawn_fork_hook = fork_hook;
        initialized = true;
}

/* ---- one input ------------------------------------------------------------------------------------- */

int fz_begin(uint8_t header) {
        fz_init();
        baseline_fds = count_fds();
        d.privileged = !(header & 4);
        d.uid = d.privileged ? 0 : FZ_DAEMON_UID_NUMBER;
        d.gid = d.privileged ? 0 : FZ_DAEMON_UID_NUMBER;
        caller_n_groups = 0;
        switch ((enum fz_caller)(header & 3)) {
        case FZ_ROOT:
                caller = (struct ucred){ .pid = 1, .uid = 0, .gid = 0 };
                break;
        case FZ_NOBODY:
                caller = (struct ucred){ .pid = 1, .uid = 65534, .gid = 65534 };
                caller_groups[0] = 4242;
                caller_n_groups = 1;
                break;
        case FZ_OTHER:
                caller = (struct ucred){ .pid = 1, .uid = 65533, .gid = 65533 };
                break;
        case FZ_DAEMON_UID:
                caller = (struct ucred){ .pid = 1, .uid = FZ_DAEMON_UID_NUMBER, .gid = FZ_DAEMON_UID_NUMBER };
                break;
        }
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
                finding("socketpair");
        if (zd_server_add_conn(&d.server, sv[0], &caller, caller_groups, caller_n_groups) < 0)
                finding("zd_server_add_conn");
        return sv[1];
}

/* Reads what the daemon sent: NUL-terminated JSON objects, each a reply or an error, at most
 * one fd each (a pidfd). Returns the bytes read; -1 at EOF. */
static char *pending;
static size_t pending_len;

static void check_reply(const char *s, size_t len) {
        json_tokener *tok = json_tokener_new();
        json_object *o = json_tokener_parse_ex(tok, s, (int) len);
        bool ok = json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == len &&
                  json_object_is_type(o, json_type_object) && zc_utf8_valid(s, len);
        json_object *p, *e;
        if (ok) {
                bool has_p = json_object_object_get_ex(o, "parameters", &p) && json_object_is_type(p, json_type_object);
                bool has_e = json_object_object_get_ex(o, "error", &e);
                ok = has_p && (!has_e || json_object_is_type(e, json_type_string));
        }
        json_object_put(o);
        json_tokener_free(tok);
        if (!ok)
                finding("a reply that is not a varlink message");
}

static ssize_t drain(int client) {
        ssize_t total = 0;
        for (;;) {
                char buf[65536];
                union {
                        struct cmsghdr align;
                        char b[CMSG_SPACE(sizeof(int) * 8)];
                } control;
                struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
                struct msghdr mh = {
                        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.b, .msg_controllen = sizeof(control.b)
                };
                ssize_t n = recvmsg(client, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
                if (n < 0)
                        return errno == EAGAIN ? total : (total ? total : -1);
                for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
                        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
                                finding("the daemon sent a control message that is not SCM_RIGHTS");
                        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        if (k != 1)
                                finding("the daemon sent more than one fd with a reply");
                        int fd;
                        memcpy(&fd, CMSG_DATA(cm), sizeof(int));
                        safe_close(fd);
                }
                if (mh.msg_flags & MSG_CTRUNC)
                        finding("the daemon sent more fds than a reply carries");
                if (n == 0)
                        return total ? total : -1;
                total += n;
                char *np = realloc(pending, pending_len + (size_t) n);
                if (!np)
                        finding("realloc");
                pending = np;
                memcpy(pending + pending_len, buf, (size_t) n);
                pending_len += (size_t) n;
                char *nul;
                while ((nul = memchr(pending, 0, pending_len))) {
                        size_t l = (size_t) (nul - pending);
                        check_reply(pending, l);
                        memmove(pending, nul + 1, pending_len - l - 1);
                        pending_len -= l + 1;
                }
                if (pending_len > 16u * 1024 * 1024)
                        finding("a reply without end");
        }
}

void fz_pump(int client) {
        unsigned quiet = 0;
        for (unsigned i = 0; i < 100000 && quiet < 3; i++) {
                unsigned long before = progress;
                ev_run(d.loop, EVRUN_NOWAIT);
                if (client >= 0 && drain(client) > 0)
                        progress++;
                quiet = progress == before ? quiet + 1 : 0;
        }
}

int fz_send(int client, const void *data, size_t len, const int *fds, size_t n_fds) {
        const char *p = data;
        bool first = true;
        while (len > 0 || (first && n_fds > 0)) {
                struct iovec iov = { .iov_base = (void *) p, .iov_len = len };
                union {
                        struct cmsghdr align;
                        char b[CMSG_SPACE(sizeof(int) * 253)];
                } control;
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
                if (first && n_fds > 0) {
                        if (n_fds > 253)
                                n_fds = 253; /* SCM_MAX_FD */
                        mh.msg_control = control.b;
                        mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
                        cm->cmsg_level = SOL_SOCKET;
                        cm->cmsg_type = SCM_RIGHTS;
                        cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                        memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
                        if (len == 0)
                                return 0; /* fds need a byte to travel with */
                        iov.iov_len = 1;  /* fds go with the first byte, like every client */
                }
                ssize_t n = sendmsg(client, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno == EPIPE || errno == ECONNRESET)
                                return -EPIPE;
                        if (errno != EAGAIN)
                                finding("sendmsg to the daemon");
                        unsigned long before = progress;
                        fz_pump(client);
                        if (progress == before && drain(client) <= 0) {
                                /* The daemon reads no more (its buffer is full while a call is
                                 * busy): what is left is not sent, as a real client would wait. */
                                return 0;
                        }
                        continue;
                }
                first = false;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

static bool standins_left(void) {
        for (size_t i = 0; i < FZ_MAX_STANDINS; i++)
                if (standins[i].used)
                        return true;
        return false;
}

void fz_end(int client) {
        fz_pump(client);
        safe_close(client);
        fz_pump(-1);
        /* Until nothing is left: every stand-in exits (a buffered call may start another once
         * the call before it ends), and a connection whose peer's end the daemon itself holds
         * (the client sent its own socket with a message that never ended) sees no EOF, so its
         * partial-message timer must end it. No time passes here: fire those timers as 10 s
         * would. */
        for (unsigned round = 0; round < 256; round++) {
                /* A GetFilter compile runs in a child (filter.c), which holds a copy of this
                 * process's fd table, the client's end too, until it drops what it does not
                 * keep: its answer, and the connection's EOF, come when it ends (its deadline
                 * bounds the wait). */
                while (d.filters.compiling)
                        ev_run(d.loop, EVRUN_ONCE);
                fz_exit_all();
                fz_pump(-1);
                if (zd_server_expire_partial(&d.server))
                        fz_pump(-1);
                else if (!standins_left())
                        break;
        }
        free(pending);
        pending = NULL;
        pending_len = 0;
        if (d.server.n_conns != 0 || d.server.conns) {
                zd_server_dump(&d.server, stderr);
                finding("a connection outlived its client");
        }
        if (d.events.n_subscribers != 0)
                finding("an Events subscriber outlived its connection");
        /* Whatever is left in the table (stopped tasks nobody deleted) goes; the stand-ins have
         * all exited, so nothing waits for a pidfd any more. */
        zd_tasks_free(&d);
        if (zd_tasks_init(&d) < 0)
                finding("zd_tasks_init");
        if (d.n_tasks != 0)
                finding("the task count is off");
        size_t now = count_fds();
        if (now != baseline_fds) {
                DIR *dir = opendir("/proc/self/fd");
                struct dirent *de;
                while (dir && (de = readdir(dir))) {
                        char path[300], target[300] = "";
                        snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
                        (void) !readlink(path, target, sizeof(target) - 1);
                        fprintf(stderr, "fuzz-daemon: fd %s -> %s\n", de->d_name, target);
                }
                if (dir)
                        closedir(dir);
                char msg[128];
                snprintf(msg, sizeof(msg), "fd leak: %zu fds open after the input, %zu before", now, baseline_fds);
                finding(msg);
        }
}
