/* SPDX-License-Identifier: MIT */
/*
 * GetFilter: a compiled seccomp program, for a loaded profile the caller may use or for an OCI
 * seccomp object the caller sends (a container's `linux.seccomp`), as a sealed memfd. This is
 * what lets zygote-runc start a container without compiling its profile: each distinct object is
 * compiled once here and the result kept (filter-cache.c) for every later container.
 *
 * The key is the SHA-256 of json-c's plain serialization of the object as it arrived, and that
 * same text is what gets compiled, by the same profile module and in the same way as
 * zygote-runc compiles locally (a plain OCI file: includes/excludes against Docker's default
 * capabilities, this machine's architecture and kernel). So a key names exactly one program on
 * this machine, whoever asked first.
 *
 * The program is public policy made from the caller's own input: nothing here depends on who
 * asks, except the limits. A compile can take libseccomp seconds (an object made expensive on
 * purpose), so it never runs in the daemon's one thread: a child compiles (filter-compile.c)
 * and the call is answered when its answer comes, while the loop serves everyone else. What a
 * compile may cost is bounded before it starts (the object's complexity, root included; how
 * many run at once; a non-root uid's CPU-time debt) and while it runs (RLIMIT_CPU, a wall-clock
 * deadline); its CPU time, read from the reaped child, is charged to the uid that started it
 * (filter-cache.h). Callers asking for an object already being compiled wait for that compile.
 */
#include <fcntl.h>
#include <linux/memfd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "call.h"
#include "daemon.h"
#include "fork-gate.h"
#include "getfilter.h"
#include "filter-cache.h"
#include "filter-compile.h"
#include "log.h"
#include "pidfd-util.h"
#include "profile.h"
#include "registry.h"
#include "server.h"
#include "util.h"

#define FILTER_SEALS (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static int unhex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1; /* lower case only: the key as the replies write it */
}

static uint64_t now_nsec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* A memfd holding the program, sealed so that nobody (we included) can change or resize it
 * after the caller checked it. A fresh one per reply: a shared one would share its offset. */
static int sealed_memfd(const struct sock_filter *bpf, size_t len) {
        _cleanup_close_ int fd = memfd_create("zygote-filter", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        size_t size = len * sizeof(*bpf), done = 0;

        if (fd < 0)
                return negative_errno();
        while (done < size) {
                ssize_t n = write(fd, (const char *) bpf + done, size - done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EIO;
                done += (size_t) n;
        }
        if (fcntl(fd, F_ADD_SEALS, FILTER_SEALS) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}

/* The program as the call's (last) reply; LimitExceeded "memory" when no memfd can hold it. */
static void reply_filter(struct zd_conn *conn, const char *key, const char *hash, const struct sock_filter *bpf,
                         size_t len, unsigned flags, bool cached) {
        int fd = sealed_memfd(bpf, len);
        json_object *p = json_object_new_object();

        if (fd < 0) {
                json_object_object_add(p, "limit", json_object_new_string("memory"));
                json_object_object_add(p, "max", json_object_new_int(0));
                zd_reply_error(conn, ZY_ERROR_LIMIT_EXCEEDED, p);
                return;
        }
        json_object_object_add(p, "key", json_object_new_string(key));
        json_object_object_add(p, "hash", json_object_new_string(hash));
        json_object_object_add(p, "instructions", json_object_new_int((int) len));
        json_object_object_add(p, "flags", json_object_new_int((int) flags));
        json_object_object_add(p, "cached", json_object_new_boolean(cached));
        zd_reply(conn, p, false, fd);
}

/* The profile module words an error "seccomp: LOCATION: what" (LOCATION may be absent): the
 * parameter named is "seccomp.LOCATION", or "seccomp". */
static json_object *invalid_seccomp_params(int r, const char *message) {
        char field[256] = "seccomp";
        const char *rest = message && strncmp(message, "seccomp: ", 9) == 0 ? message + 9 : NULL;
        const char *end = rest ? strstr(rest, ": ") : NULL;

        if (end && end > rest && (size_t) (end - rest) < sizeof(field) - 8 && !memchr(rest, ' ', (size_t) (end - rest)))
                snprintf(field, sizeof(field), "seccomp.%.*s", (int) (end - rest), rest);
        json_object *p = json_object_new_object();
        json_object_object_add(p, "parameter", json_object_new_string(field));
        json_object_object_add(p, "message", json_object_new_string(message ? message : strerror(-r)));
        return p;
}

static int invalid_seccomp(struct zd_call *call, int r, const char *message) {
        return zd_call_fail(call, r, ZY_ERROR_INVALID_PARAMETER, invalid_seccomp_params(r, message));
}

/* LimitExceeded with the limit, its maximum and a sentence for a person. */
static json_object *limit_params(const char *limit, long max, const char *message) {
        json_object *p = json_object_new_object();

        json_object_object_add(p, "limit", json_object_new_string(limit));
        json_object_object_add(p, "max", json_object_new_int64(max));
        if (message)
                json_object_object_add(p, "message", json_object_new_string(message));
        return p;
}

static int filter_of_profile(struct zd_call *call, const char *name) {
        const struct ucred *cr = zd_conn_cred(call->conn);
        size_t n_groups;
        const gid_t *groups = zd_conn_groups(call->conn, &n_groups);
        struct zd_entry *e = zd_registry_find(call->d, name);

        if (!e)
                return zd_registry_no_such_profile(call, name);
        if (!zp_profile_allows(e->profile, cr->uid, cr->gid, groups, n_groups))
                return zd_call_failf(call, -EPERM, ZY_ERROR_PERMISSION_DENIED, "reason",
                                     "the profile's access list does not include the caller");
        const struct zp_profile *p = e->profile;
        /* A loaded profile is compiled already: its key is its program's hash. */
        reply_filter(call->conn, p->hash, p->hash, p->bpf, p->bpf_len, p->filter_flags, true);
        return 0;
}

/* ---- compiles in a child ------------------------------------------------------------------ */

struct zd_filter_compile {
        struct zd_filter_compile *next;
        struct zd_daemon *d;
        uint8_t key[ZC_SHA256_DIGEST_SIZE];
        char key_hex[2 * ZC_SHA256_DIGEST_SIZE + 1];
        uid_t uid; /* who started it: charged its CPU time */
        unsigned cpu_sec;
        pid_t pid;
        int pidfd, out;
        ev_io out_watch, exit_watch;
        ev_timer deadline;
        char *buf; /* the answer so far */
        size_t len, size;
        bool eof, exited, timed_out, too_long;
        siginfo_t si;
        uint64_t cpu_nsec;
        struct zd_conn **waiters; /* NULL: that caller left */
        size_t n_waiters;
};

#define ANSWER_MAX (64 + ZD_COMPILE_MAX_INSNS * sizeof(struct sock_filter) + ZD_COMPILE_MAX_MESSAGE)

static void compile_free(struct zd_filter_compile *k) {
        struct ev_loop *loop = k->d->loop;

        ev_io_stop(loop, &k->out_watch);
        ev_io_stop(loop, &k->exit_watch);
        ev_timer_stop(loop, &k->deadline);
        safe_close(k->out);
        safe_close(k->pidfd);
        free(k->buf);
        free(k->waiters);
        free(k);
}

static void compile_unlink(struct zd_filter_compile *k) {
        for (struct zd_filter_compile **p = &k->d->filters.compiling; *p; p = &(*p)->next)
                if (*p == k) {
                        *p = k->next;
                        return;
                }
}

/* The test seam of the CPU limit: ZYGOTE_FILTER_CPU_SEC (1 to ZD_FILTER_CPU_SEC) lowers it, so
 * that a test can show what a compile past it gets without spending the full limit. */
static unsigned cpu_limit(void) {
        const char *e = secure_getenv("ZYGOTE_FILTER_CPU_SEC");
        long v = e ? strtol(e, NULL, 10) : 0;

        return v >= 1 && v < ZD_FILTER_CPU_SEC ? (unsigned) v : ZD_FILTER_CPU_SEC;
}

/* Every caller still waiting gets the same error. */
static void compile_fail_all(struct zd_filter_compile *k, const char *error, json_object *params) {
        for (size_t i = 0; i < k->n_waiters; i++)
                if (k->waiters[i])
                        zd_reply_error(k->waiters[i], error, json_object_get(params));
        json_object_put(params);
}

static void compile_finish(struct zd_filter_compile *k) {
        struct zd_daemon *d = k->d;
        struct zd_compile_result res = {};
        char msg[256];
        int r = -EBADMSG;

        compile_unlink(k);
        zd_filter_budget_charge(&d->filters, k->uid, now_nsec(), k->cpu_nsec);
        if (k->si.si_code == CLD_EXITED && k->si.si_status == 0 && !k->too_long)
                r = zd_compile_result_parse(k->buf, k->len, &res);
        if (r >= 0 && res.error < 0) {
                zd_log(LOG_DEBUG, "GetFilter: uid %u's object refused by the compiler (%.1f ms of CPU): %s",
                       (unsigned) k->uid, (double) k->cpu_nsec / 1e6, res.message ? res.message : "");
                json_object *p = invalid_seccomp_params(res.error, res.message);
                compile_fail_all(k, ZY_ERROR_INVALID_PARAMETER, p);
        } else if (r >= 0) {
                struct zd_filter *f = NULL;
                int q = zd_filter_cache_insert(&d->filters, k->key, k->uid, res.bpf, res.bpf_len, res.flags, res.hash,
                                               k->cpu_nsec, &f);
                if (q == -ENOSPC)
                        zd_log(LOG_DEBUG, "GetFilter: uid %u's program not kept: the cache is full of root's",
                               (unsigned) k->uid);
                zd_log(LOG_DEBUG,
                       "GetFilter: compiled a seccomp object for uid %u in %.1f ms of CPU (%zu instructions)",
                       (unsigned) k->uid, (double) k->cpu_nsec / 1e6, res.bpf_len);
                for (size_t i = 0; i < k->n_waiters; i++)
                        if (k->waiters[i])
                                reply_filter(k->waiters[i], k->key_hex, res.hash, res.bpf, res.bpf_len, res.flags,
                                             false);
        } else if (k->timed_out) {
                snprintf(msg, sizeof(msg), "the compile did not finish within %d s and was stopped",
                         ZD_FILTER_WALL_SEC);
                zd_log(LOG_NOTICE, "GetFilter: uid %u's compile stopped at its deadline", (unsigned) k->uid);
                compile_fail_all(k, ZY_ERROR_LIMIT_EXCEEDED,
                                 limit_params("compile_wall_time", ZD_FILTER_WALL_SEC * 1000L, msg));
        } else if ((k->si.si_code == CLD_KILLED || k->si.si_code == CLD_DUMPED) &&
                   (k->si.si_status == SIGXCPU || k->si.si_status == SIGKILL)) {
                snprintf(msg, sizeof(msg),
                         "the compile used more than %u s of CPU time and was stopped; "
                         "an object with fewer argument comparisons compiles faster",
                         k->cpu_sec);
                zd_log(LOG_NOTICE, "GetFilter: uid %u's compile stopped past its CPU limit (%u s)", (unsigned) k->uid,
                       k->cpu_sec);
                compile_fail_all(k, ZY_ERROR_LIMIT_EXCEEDED, limit_params("compile_cpu", k->cpu_sec * 1000L, msg));
        } else {
                snprintf(msg, sizeof(msg), "the compile failed (%s %d)",
                         k->si.si_code == CLD_EXITED ? "exit status" : "signal", k->si.si_status);
                zd_log(LOG_WARNING, "GetFilter: uid %u's %s", (unsigned) k->uid, msg);
                compile_fail_all(k, ZY_ERROR_LIMIT_EXCEEDED, limit_params("compile", 0, msg));
        }
        zd_compile_result_done(&res);
        compile_free(k);
}

/* Reads what the child wrote; at EOF (and its exit seen), the compile is over. */
static void compile_read(struct zd_filter_compile *k) {
        while (!k->eof) {
                if (k->len == k->size) {
                        size_t n = k->size ? k->size * 2 : 16384;
                        char *b = n <= ANSWER_MAX * 2 ? realloc(k->buf, n) : NULL;
                        if (!b) {
                                /* no answer is that long: the child is not ours to trust any more */
                                k->too_long = true;
                                (void) pidfd_kill(k->pidfd, SIGKILL);
                                k->len = 0;
                                continue;
                        }
                        k->buf = b;
                        k->size = n;
                }
                ssize_t n = read(k->out, k->buf + k->len, k->size - k->len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return;
                if (n <= 0) {
                        k->eof = true;
                        ev_io_stop(k->d->loop, &k->out_watch);
                        k->out = safe_close(k->out);
                        break;
                }
                k->len += (size_t) n;
        }
        if (k->exited)
                compile_finish(k);
}

static void on_compile_out(struct ev_loop *loop, ev_io *w, int revents) {
        compile_read(w->data);
}

/* The child exited: reaped here, with its CPU time (waitid's rusage, which glibc's wrapper does
 * not pass). What it wrote is all in the pipe now. */
static void on_compile_exit(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_filter_compile *k = w->data;
        struct rusage ru = {};
        siginfo_t si = {};

        if (syscall(SYS_waitid, P_PIDFD, k->pidfd, &si, WEXITED | WNOHANG, &ru) < 0 || si.si_pid == 0)
                return;
        ev_io_stop(loop, w);
        ev_timer_stop(loop, &k->deadline);
        k->exited = true;
        k->si = si;
        k->cpu_nsec = (uint64_t) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
                      (uint64_t) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
        compile_read(k);
}

static void on_compile_deadline(struct ev_loop *loop, ev_timer *w, int revents) {
        struct zd_filter_compile *k = w->data;

        k->timed_out = true;
        (void) pidfd_kill(k->pidfd, SIGKILL); /* its exit finishes the compile */
}

/* The compile of text for uid's call, started; the call is answered when it ends. */
static int compile_start(struct zd_call *call, const uint8_t key[ZC_SHA256_DIGEST_SIZE], const char *text) {
        struct zd_daemon *d = call->d;
        struct zd_filter_compile *k = calloc(1, sizeof(*k));
        pid_t pid;

        if (!k)
                return zd_call_limit(call, "memory", 0);
        k->waiters = calloc(1, sizeof(*k->waiters));
        if (!k->waiters) {
                free(k);
                return zd_call_limit(call, "memory", 0);
        }
        k->d = d;
        k->uid = zd_conn_account(call->conn);
        k->cpu_sec = cpu_limit();
        k->pidfd = k->out = -EBADF;
        memcpy(k->key, key, ZC_SHA256_DIGEST_SIZE);
        zc_sha256_hex(text, strlen(text), k->key_hex);
        /* the child copies our fd table: no other caller's fd may be in it */
        zd_fork_gate();
        pid = zd_compile_fork(text, strlen(text), k->cpu_sec, &k->pidfd, &k->out);
        if (pid < 0) {
                zd_log(LOG_WARNING, "GetFilter: no compile child: %s", strerror((int) -pid));
                compile_free(k);
                return zd_call_limit(call, "memory", 0);
        }
        k->pid = pid;
        d->filters.compiles++;
        k->waiters[k->n_waiters++] = call->conn;
        ev_io_init(&k->out_watch, on_compile_out, k->out, EV_READ);
        k->out_watch.data = k;
        ev_io_init(&k->exit_watch, on_compile_exit, k->pidfd, EV_READ);
        k->exit_watch.data = k;
        ev_timer_init(&k->deadline, on_compile_deadline, ZD_FILTER_WALL_SEC, 0.);
        k->deadline.data = k;
        ev_io_start(d->loop, &k->out_watch);
        ev_io_start(d->loop, &k->exit_watch);
        ev_timer_start(d->loop, &k->deadline);
        k->next = d->filters.compiling;
        d->filters.compiling = k;
        return 0;
}

/* A compile of key already running: the call waits for it. 1 when it does, 0 when there is none. */
static int compile_join(struct zd_call *call, const uint8_t key[ZC_SHA256_DIGEST_SIZE]) {
        for (struct zd_filter_compile *k = call->d->filters.compiling; k; k = k->next) {
                if (memcmp(k->key, key, ZC_SHA256_DIGEST_SIZE) != 0)
                        continue;
                struct zd_conn **w = reallocarray(k->waiters, k->n_waiters + 1, sizeof(*w));
                if (!w)
                        return zd_call_limit(call, "memory", 0);
                k->waiters = w;
                k->waiters[k->n_waiters++] = call->conn;
                return 1;
        }
        return 0;
}

/* How many compiles run: in all, for non-root uids, for uid. */
static void compiles_running(struct zd_daemon *d, uid_t uid, unsigned *ret_all, unsigned *ret_users,
                             unsigned *ret_uid) {
        *ret_all = *ret_users = *ret_uid = 0;
        for (struct zd_filter_compile *k = d->filters.compiling; k; k = k->next) {
                (*ret_all)++;
                *ret_users += k->uid != 0;
                *ret_uid += k->uid == uid;
        }
}

/* The object's complexity (filter-cache.h), from its JSON before any compile: what the profile
 * module would refuse anyway counts as nothing here. */
static uint64_t object_complexity(json_object *o) {
        json_object *list, *e, *v;
        size_t n_arches = 1, n = 0;
        uint64_t c;

        if (json_object_object_get_ex(o, "architectures", &list) && json_object_is_type(list, json_type_array))
                n_arches = json_object_array_length(list);
        else if (json_object_object_get_ex(o, "archMap", &list) && json_object_is_type(list, json_type_array))
                for (size_t i = 0; i < json_object_array_length(list); i++) {
                        e = json_object_array_get_idx(list, i);
                        size_t k = 1;
                        if (json_object_object_get_ex(e, "subArchitectures", &v) &&
                            json_object_is_type(v, json_type_array))
                                k += json_object_array_length(v);
                        n_arches = k > n_arches ? k : n_arches;
                }
        n_arches = n_arches < 1 ? 1 : n_arches > ZP_PROFILE_MAX_ARCHES ? ZP_PROFILE_MAX_ARCHES : n_arches;
        if (!json_object_object_get_ex(o, "syscalls", &list) || !json_object_is_type(list, json_type_array))
                return 0;
        size_t n_rules = json_object_array_length(list);
        _cleanup_free_ size_t *names = calloc(n_rules + 1, sizeof(size_t));
        _cleanup_free_ size_t *args = calloc(n_rules + 1, sizeof(size_t));
        if (!names || !args)
                return UINT64_MAX;
        for (size_t i = 0; i < n_rules; i++) {
                e = json_object_array_get_idx(list, i);
                if (json_object_object_get_ex(e, "names", &v) && json_object_is_type(v, json_type_array))
                        names[n] = json_object_array_length(v);
                else
                        names[n] = json_object_object_get_ex(e, "name", &v) ? 1 : 0;
                if (json_object_object_get_ex(e, "args", &v) && json_object_is_type(v, json_type_array))
                        args[n] = json_object_array_length(v);
                n++;
        }
        c = zd_filter_complexity(n_arches, names, args, n);
        return c;
}

/* Whether uid's account may start a compile now: its CPU-time debt, its compile slot, the slots
 * of all. 1 when it may; else the call's error, recorded. */
static int compile_allowed(struct zd_call *call, uid_t uid) {
        struct zd_daemon *d = call->d;
        unsigned all, users, mine;
        int r;

        r = zd_filter_budget_check(&d->filters, uid, now_nsec());
        if (r == -EDQUOT)
                return zd_call_limit(call, "compile_time_per_user", (long) (ZD_FILTER_BUDGET_NSEC / 1000000));
        if (r < 0)
                return zd_call_limit(call, "compile_time_users", ZD_FILTER_BUDGET_UIDS);
        compiles_running(d, uid, &all, &users, &mine);
        if (uid != 0 && mine >= ZD_FILTER_COMPILES_PER_UID)
                return zd_call_limit(call, "compiles_per_user", ZD_FILTER_COMPILES_PER_UID);
        if (all >= ZD_FILTER_COMPILES_MAX || (uid != 0 && users >= ZD_FILTER_COMPILES_USERS_MAX))
                return zd_call_limit(call, "compiles",
                                     uid != 0 ? ZD_FILTER_COMPILES_USERS_MAX : ZD_FILTER_COMPILES_MAX);
        return 1;
}

static int filter_of_seccomp(struct zd_call *call, json_object *seccomp) {
        struct zd_daemon *d = call->d;
        uid_t uid = zd_conn_account(call->conn); /* every budget by the caller's account */
        uint8_t key[ZC_SHA256_DIGEST_SIZE];
        struct zd_filter *f;
        uint64_t cost;
        char msg[256];
        int r;

        /* Only an OCI object, which the OCI spec says has a defaultAction. The profile module
         * also reads zygote's own profile format, whose "seccomp" may name a file to read: that,
         * done as root for whoever asks, would open any file on the machine. */
        json_object *action;
        if (!json_object_object_get_ex(seccomp, "defaultAction", &action) || !action)
                return invalid_seccomp(call, -EINVAL,
                                       "seccomp: defaultAction: missing (an OCI seccomp object has one)");
        /* root too: no caller's object may keep a compile child busy past reason (a walk of
         * the arrays' lengths only) */
        cost = object_complexity(seccomp);
        if (cost > ZD_FILTER_ARG_CMP_MAX) {
                snprintf(msg, sizeof(msg),
                         "the object asks for %llu argument comparisons (each name of an entry "
                         "with args, per comparison, per architecture); at most %d are compiled",
                         (unsigned long long) cost, ZD_FILTER_ARG_CMP_MAX);
                return zd_call_fail(call, -E2BIG, ZY_ERROR_LIMIT_EXCEEDED,
                                    limit_params("filter_complexity", ZD_FILTER_ARG_CMP_MAX, msg));
        }
        /* An account that could not start a compile now is refused before its object is
         * serialised and hashed (each linear in up to 64 KiB, in the loop's thread), a cached
         * program included: a client that has the object asks by its key first (a
         * few bytes, no compile slot needed), as zygote-runc does. */
        if (uid != 0) {
                r = compile_allowed(call, uid);
                if (r <= 0)
                        return r;
        }
        const char *text = json_object_to_json_string_ext(seccomp, JSON_C_TO_STRING_PLAIN);
        if (!text)
                return zd_call_limit(call, "memory", 0);
        zd_filter_key(text, strlen(text), key);
        f = zd_filter_cache_lookup(&d->filters, key, uid);
        if (f) {
                reply_filter(call->conn, f->key_hex, f->hash, f->bpf, f->bpf_len, f->flags, true);
                return 0;
        }
        r = compile_join(call, key);
        if (r != 0)
                return r < 0 ? r : 0;
        if (uid == 0) {
                r = compile_allowed(call, uid);
                if (r <= 0)
                        return r;
        }
        return compile_start(call, key, text);
}

/* A program compiled before, by its key alone (a client that has the object hashes it first and
 * sends the object only on a miss): NoSuchFilter when it is not cached. Programs are public
 * policy; that one was compiled says only that someone on this machine asked for it. */
static int filter_of_key(struct zd_call *call, const char *hex) {
        uint8_t key[ZC_SHA256_DIGEST_SIZE];
        struct zd_filter *f;

        if (strlen(hex) != 2 * ZC_SHA256_DIGEST_SIZE)
                return zd_call_invalid(call, "key");
        for (size_t i = 0; i < ZC_SHA256_DIGEST_SIZE; i++) {
                int hi = unhex(hex[2 * i]), lo = unhex(hex[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return zd_call_invalid(call, "key");
                key[i] = (uint8_t) (hi << 4 | lo);
        }
        f = zd_filter_cache_lookup(&call->d->filters, key, zd_conn_account(call->conn));
        if (!f)
                return zd_call_failf(call, -ENOENT, ZY_ERROR_NO_SUCH_FILTER, "key", hex);
        reply_filter(call->conn, f->key_hex, f->hash, f->bpf, f->bpf_len, f->flags, true);
        return 0;
}

struct filter_param {
        const char *profile;
        json_object *seccomp;
        const char *key;
};

static const struct zc_json_field filter_fields[] = {
        { .name = "profile",
          .type = ZC_JSON_STRING,
          .offset = offsetof(struct filter_param, profile),
          .flags = ZC_JSON_NULLABLE },
        { .name = "seccomp",
          .type = ZC_JSON_OBJECT,
          .offset = offsetof(struct filter_param, seccomp),
          .flags = ZC_JSON_NULLABLE },
        { .name = "key",
          .type = ZC_JSON_STRING,
          .offset = offsetof(struct filter_param, key),
          .flags = ZC_JSON_NULLABLE },
        {},
};

int zd_get_filter(struct zd_call *call) {
        struct filter_param p = {};
        int r = zd_call_dispatch(call, filter_fields, &p);

        if (r < 0)
                return r;
        if (!!p.profile + !!p.seccomp + !!p.key != 1) /* exactly one */
                return zd_call_invalid(call, p.key ? "key" : p.profile ? "seccomp" : "profile");
        if (p.key)
                return filter_of_key(call, p.key);
        return p.profile ? filter_of_profile(call, p.profile) : filter_of_seccomp(call, p.seccomp);
}

void zd_filter_drop_conn(struct zd_daemon *d, struct zd_conn *c) {
        for (struct zd_filter_compile *k = d->filters.compiling; k; k = k->next) {
                bool waited = false;
                for (size_t i = 0; i < k->n_waiters; i++) {
                        if (k->waiters[i] == c)
                                k->waiters[i] = NULL;
                        waited = waited || k->waiters[i];
                }
                /* nobody waits for it now: its CPU time is charged all the same when it is reaped */
                if (!waited)
                        (void) pidfd_kill(k->pidfd, SIGKILL);
        }
}

void zd_filters_free(struct zd_daemon *d) {
        struct zd_filter_compile *k;

        /* a compile child at shutdown: killed and reaped (it is in libseccomp, never waiting) */
        while ((k = d->filters.compiling)) {
                d->filters.compiling = k->next;
                if (!k->exited) {
                        (void) pidfd_kill(k->pidfd, SIGKILL);
                        (void) pidfd_reap(k->pidfd, NULL);
                }
                compile_free(k);
        }
        zd_filter_cache_clear(&d->filters);
}
