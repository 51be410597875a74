/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc's OCI hooks (config.json "hooks"): checked when the config is loaded; prestart,
 * createRuntime, poststart and poststop run here, in the runtime's namespaces, with the
 * container's state on their stdin, their "env" (without one, as runc gives it: the runtime's
 * environment here, the container process's for the two the init runs) and a timeout past which
 * they are killed (SIGKILL) and have failed. Their stdout and stderr are the runtime's stderr.
 *
 * createContainer and startContainer run inside the container, in its init (engine/sandbox.c,
 * sandbox-hooks.c), which may not allocate: here they are prepared for it before the clone
 * (zct_hooks_for_init), and the init's failure record is put in words (zct_hooks_report_failure).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "libcontainer.h"
#include "util.h"

static const char *const known_kinds[] = {
        "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop",
};

/* A hook's end in words, as runc's message has it ("error running hook", "bad system call"):
 * "exit status N" or "killed by signal N (name)"; status is 128 + N for a signal. */
static const char *status_text(int status, char buf[static 96]) {
        if (status > 128) {
                int n = snprintf(buf, 96, "killed by signal %d (%s)", status - 128, strsignal(status - 128));
                char *p = strchr(buf, '(');
                if (n > 0 && p && p[1])
                        p[1] = (char) tolower((unsigned char) p[1]);
        } else
                snprintf(buf, 96, "exit status %d", status);
        return buf;
}

static int check_strings(json_object *h, const char *field, const char *where, char **err) {
        json_object *v;

        if (!json_object_object_get_ex(h, field, &v))
                return 0;
        if (!json_object_is_type(v, json_type_array))
                goto bad;
        for (size_t i = 0; i < json_object_array_length(v); i++)
                if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
                        goto bad;
        return 0;
bad:
        (void) asprintf(err, "%s.%s: not an array of strings", where, field);
        return -EINVAL;
}

static int check_hook(json_object *h, const char *where, char **err) {
        json_object *v;
        const char *path;
        int r;

        if (!json_object_is_type(h, json_type_object))
                return (void) asprintf(err, "%s: not an object", where), -EINVAL;
        if (!json_object_object_get_ex(h, "path", &v) || !json_object_is_type(v, json_type_string))
                return (void) asprintf(err, "%s.path: missing or not a string", where), -EINVAL;
        path = json_object_get_string(v);
        if (path[0] != '/')
                return (void) asprintf(err, "%s.path: \"%s\" is not an absolute path", where, path), -EINVAL;
        r = check_strings(h, "args", where, err);
        if (r >= 0)
                r = check_strings(h, "env", where, err);
        if (r < 0)
                return r;
        if (json_object_object_get_ex(h, "timeout", &v) &&
            (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) <= 0))
                return (void) asprintf(err, "%s.timeout: must be an integer greater than zero", where), -EINVAL;
        return 0;
}

int zct_hooks_check(json_object *root, char **err) {
        json_object *hooks;

        if (!json_object_object_get_ex(root, "hooks", &hooks) || json_object_is_type(hooks, json_type_null))
                return 0;
        if (!json_object_is_type(hooks, json_type_object))
                return (void) asprintf(err, "hooks: not an object"), -EINVAL;
        json_object_object_foreach(hooks, kind, list) {
                bool known = false;

                for (size_t i = 0; i < ELEMENTSOF(known_kinds); i++)
                        known = known || streq(kind, known_kinds[i]);
                if (!known)
                        return (void) asprintf(err, "hooks.%s: unknown hook kind", kind), -EINVAL;
                if (!json_object_is_type(list, json_type_array))
                        return (void) asprintf(err, "hooks.%s: not an array", kind), -EINVAL;
                for (size_t i = 0; i < json_object_array_length(list); i++) {
                        char where[64];
                        int r;

                        snprintf(where, sizeof(where), "hooks.%s[%zu]", kind, i);
                        r = check_hook(json_object_array_get_idx(list, i), where, err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* A container zygoted starts: its worker runs the create hooks and is gone before Start; nothing
 * would run poststart or poststop, so they are refused rather than skipped. */
int zct_hooks_check_handoff(json_object *root, char **err) {
        static const char *const later[] = { "poststart", "poststop" };
        json_object *hooks, *list;

        if (!json_object_object_get_ex(root, "hooks", &hooks) || !json_object_is_type(hooks, json_type_object))
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(later); i++)
                if (json_object_object_get_ex(hooks, later[i], &list) && json_object_is_type(list, json_type_array) &&
                    json_object_array_length(list) > 0)
                        return (void) asprintf(err,
                                               "hooks.%s: not supported for a container zygoted starts (use "
                                               "zygote-runc)",
                                               later[i]),
                               -EOPNOTSUPP;
        return 0;
}

json_object *zct_hooks_state(const struct zct_state *st, const char *status, pid_t pid) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "ociVersion", json_object_new_string(ZCT_RUNC_OCI_VERSION));
        json_object_object_add(o, "id", json_object_new_string(st->id ? st->id : ""));
        json_object_object_add(o, "status", json_object_new_string(status));
        json_object_object_add(o, "pid", json_object_new_int(pid));
        json_object_object_add(o, "bundle", json_object_new_string(st->bundle ? st->bundle : ""));
        if (st->annotations)
                json_object_object_add(o, "annotations", json_object_get(st->annotations));
        return o;
}

/* A NULL-terminated vector of h's FIELD (strings), or of `dflt` alone when there is none. */
static char **string_vector(json_object *h, const char *field, const char *dflt) {
        json_object *v = NULL;
        size_t n;
        char **vec;

        (void) json_object_object_get_ex(h, field, &v);
        n = v ? json_object_array_length(v) : 0;
        vec = calloc(n + 2, sizeof(char *));
        if (!vec)
                return NULL;
        for (size_t i = 0; i < n; i++)
                vec[i] = (char *) json_object_get_string(json_object_array_get_idx(v, i));
        if (n == 0 && dflt)
                vec[0] = (char *) dflt;
        return vec;
}

/* h's "env", or a copy of inherit (the vector; the strings stay inherit's) when it has none: runc
 * leaves a hook without one the environment of whoever runs it. An "env" of [] stays empty. */
static char **env_vector(json_object *h, char *const *inherit) {
        size_t n = 0;
        char **vec;

        if (json_object_object_get_ex(h, "env", NULL) || !inherit)
                return string_vector(h, "env", NULL);
        while (inherit[n])
                n++;
        vec = calloc(n + 1, sizeof(char *));
        if (vec)
                memcpy(vec, inherit, n * sizeof(char *));
        return vec;
}

/* The state, as a memory file the hook reads as its stdin (no pipe to fill, nothing to block on). */
static int state_memfd(json_object *state) {
        const char *text = json_object_to_json_string_ext(state, JSON_C_TO_STRING_PLAIN);
        size_t len = strlen(text), done = 0;
        int fd = memfd_create("zrc-hook-state", MFD_CLOEXEC);

        if (fd < 0)
                return -errno;
        while (done < len) {
                ssize_t n = write(fd, text + done, len - done);
                if (n < 0) {
                        int r = -errno;
                        close(fd);
                        return r;
                }
                done += (size_t) n;
        }
        if (lseek(fd, 0, SEEK_SET) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

/* Waits for the hook (pidfd) for at most timeout seconds (0: no limit); killed past it. */
static int wait_hook(int pidfd, long long timeout, bool *ret_timed_out) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        siginfo_t si = {};
        int r;

        do
                r = poll(&p, 1, timeout > 0 ? (int) (timeout > 2000000 ? 2000000000 : timeout * 1000) : -1);
        while (r < 0 && errno == EINTR);
        if (r == 0) {
                *ret_timed_out = true;
                (void) pidfd_kill(pidfd, SIGKILL);
        }
        r = pidfd_reap(pidfd, &si);
        if (r < 0)
                return r;
        if (si.si_code == CLD_EXITED)
                return si.si_status;
        return 128 + si.si_status;
}

static int run_one(const struct zct_ctx *c, json_object *h, const char *where, int state_fd,
                   const struct ze_hook_creds *creds) {
        json_object *v;
        const char *path = json_object_get_string(json_object_object_get(h, "path"));
        long long timeout = json_object_object_get_ex(h, "timeout", &v) ? json_object_get_int64(v) : 0;
        _cleanup_free_ char **argv = string_vector(h, "args", path);
        /* a hook holding a caller's credentials (zygoted's) inherits nothing of the daemon's */
        _cleanup_free_ char **envp = env_vector(h, creds ? NULL : environ);
        bool timed_out = false;
        pid_t pid;
        int pidfd, r;

        if (!argv || !envp)
                return zct_error(c, "%s: %s", where, zct_errstr(ENOMEM)), -ENOMEM;
        zct_debug(c, "running %s: %s", where, path);
        pid = fork();
        if (pid < 0)
                return zct_error_errno(c, "%s: fork", where);
        if (pid == 0) {
                if (dup2(state_fd, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
                        _exit(127);
                (void) close_range(3, ~0U, 0);
                r = ze_step_hook_creds(creds);
                if (r < 0) {
                        dprintf(STDERR_FILENO, "zygote-runc: %s: the caller's credentials: %s\n", where, strerror(-r));
                        _exit(126);
                }
                execve(path, argv, envp);
                dprintf(STDERR_FILENO, "zygote-runc: %s: cannot execute %s: %s\n", where, path, strerror(errno));
                _exit(127);
        }
        pidfd = pidfd_open_pid(pid);
        if (pidfd < 0) {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                return zct_error(c, "%s: pidfd_open: %s", where, zct_errstr(-pidfd)), pidfd;
        }
        r = wait_hook(pidfd, timeout, &timed_out);
        close(pidfd);
        if (r < 0)
                return zct_error(c, "%s (%s): waiting: %s", where, path, zct_errstr(-r)), r;
        if (timed_out)
                return zct_error(c, "%s (%s) timed out after %llds and was killed", where, path, timeout), -ETIME;
        if (r != 0) {
                char why[96];
                return zct_error(c, "error running hook: %s (%s) failed: %s", where, path, status_text(r, why)),
                       -EPROTO;
        }
        return 0;
}

int zct_hooks_run(const struct zct_ctx *c, json_object *hooks, const char *kind, json_object *state,
                  const struct ze_hook_creds *creds) {
        json_object *list;
        int ret = 0;

        if (!hooks || !json_object_object_get_ex(hooks, kind, &list) || json_object_array_length(list) == 0)
                return 0;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                char where[64];
                int fd, r;

                snprintf(where, sizeof(where), "%s hook %zu", kind, i);
                fd = state_memfd(state);
                if (fd < 0)
                        return zct_error(c, "%s: state: %s", where, zct_errstr(-fd)), fd;
                r = run_one(c, json_object_array_get_idx(list, i), where, fd, creds);
                close(fd);
                if (r < 0 && ret == 0)
                        ret = r;
                /* poststart too, as runc: the rest does not run, and start fails */
                if (r < 0 && (streq(kind, "prestart") || streq(kind, "createRuntime") || streq(kind, "poststart")))
                        return r;
        }
        return ret;
}

/* The state text of a hook the init runs, with ZE_SB_PID_SLOT characters for the pid the init
 * writes in (a placeholder number, found again in the text: inside a JSON string a quote is
 * always escaped, so the key as written here cannot appear there). */
static int init_state(const struct zct_state *st, const char *status, struct ze_sb_hooks *h) {
        static const char placeholder[] = "\"pid\":1999999999";
        json_object *o = zct_hooks_state(st, status, 1999999999);
        const char *text = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : NULL;
        const char *at = text ? strstr(text, placeholder) : NULL;
        int r = 0;

        _Static_assert(sizeof("1999999999") - 1 == ZE_SB_PID_SLOT, "the placeholder fills the slot");
        if (!at || !(h->state = strdup(text)))
                r = -ENOMEM;
        else {
                h->state_len = strlen(h->state);
                h->pid_at = (size_t) (at - text) + sizeof("\"pid\":") - 1;
                memset(h->state + h->pid_at, ' ', ZE_SB_PID_SLOT - 1);
                h->state[h->pid_at + ZE_SB_PID_SLOT - 1] = '0';
        }
        json_object_put(o);
        return r;
}

int zct_hooks_for_init(json_object *hooks, const char *kind, const struct zct_state *st, const char *status,
                       char *const *envp, struct ze_sb_hooks *ret) {
        json_object *list, *v;
        struct ze_sb_hooks h = {};
        struct ze_sb_hook *l;
        size_t n;

        if (!hooks || !json_object_object_get_ex(hooks, kind, &list) || json_object_array_length(list) == 0)
                return 0;
        n = json_object_array_length(list);
        l = calloc(n, sizeof(*l));
        if (!l)
                return -ENOMEM;
        h.list = l;
        h.n = n;
        for (size_t i = 0; i < n; i++) {
                json_object *hk = json_object_array_get_idx(list, i);
                long long timeout = json_object_object_get_ex(hk, "timeout", &v) ? json_object_get_int64(v) : 0;

                l[i].path = json_object_get_string(json_object_object_get(hk, "path"));
                l[i].argv = string_vector(hk, "args", l[i].path);
                l[i].envp = env_vector(hk, envp);
                /* checked > 0 at load; poll's bound is an int of milliseconds */
                l[i].timeout_ms = timeout <= 0 ? 0 : timeout > INT_MAX / 1000 ? INT_MAX : (int) (timeout * 1000);
                if (!l[i].argv || !l[i].envp) {
                        zct_hooks_for_init_free(&h);
                        return -ENOMEM;
                }
        }
        if (init_state(st, status, &h) < 0) {
                zct_hooks_for_init_free(&h);
                return -ENOMEM;
        }
        *ret = h;
        return 0;
}

void zct_hooks_for_init_free(struct ze_sb_hooks *h) {
        struct ze_sb_hook *l = (struct ze_sb_hook *) h->list;

        for (size_t i = 0; l && i < h->n; i++) {
                free((char **) l[i].argv);
                free((char **) l[i].envp);
        }
        free(l);
        free(h->state);
        *h = (struct ze_sb_hooks){};
}

void zct_hooks_report_failure(const struct zct_ctx *c, json_object *hooks, const struct ze_status *s) {
        const char *kind = s->step == ZE_STEP_CREATE_HOOK ? "createContainer" : "startContainer";
        json_object *list = NULL, *h, *v;
        const char *path = "?";
        long long timeout = 0;

        if (hooks && json_object_object_get_ex(hooks, kind, &list) && s->index >= 0 &&
            (size_t) s->index < json_object_array_length(list)) {
                h = json_object_array_get_idx(list, (size_t) s->index);
                path = json_object_get_string(json_object_object_get(h, "path"));
                timeout = json_object_object_get_ex(h, "timeout", &v) ? json_object_get_int64(v) : 0;
        }
        if (s->status < 0)
                zct_error(c, "%s hook %d (%s) could not be run: %s", kind, s->index, path, zct_errstr(s->err));
        else if (s->err == ETIME)
                zct_error(c, "%s hook %d (%s) timed out after %llds and was killed", kind, s->index, path, timeout);
        else {
                char why[96];
                zct_error(c, "error running hook: %s hook %d (%s) failed: %s", kind, s->index, path,
                          status_text(s->status, why));
        }
}

int zct_hooks_report_fifo(const char *dir, json_object *hooks, int *ret_fd) {
        _cleanup_free_ char *fifo = NULL;
        json_object *list;
        int fd;

        if (!hooks || !json_object_object_get_ex(hooks, "startContainer", &list) || json_object_array_length(list) == 0)
                return 0;
        if (asprintf(&fifo, "%s/" ZCT_HOOKS_FIFO, dir) < 0)
                return -ENOMEM;
        if (mkfifo(fifo, 0600) < 0)
                return -errno;
        /* O_RDWR: a writer from the start, so that `start` may open it for reading at any time
         * and read EOF only once the init has closed it (by its execve, or its exit) */
        fd = open(fifo, O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

int zct_hooks_open_report(const struct zct_state *st) {
        _cleanup_free_ char *fifo = NULL;
        int fd;

        if (asprintf(&fifo, "%s/" ZCT_HOOKS_FIFO, st->dir) < 0)
                return -ENOMEM;
        fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int zct_hooks_wait_start(const struct zct_ctx *c, const struct zct_state *st, int fd) {
        struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = zct_state_pidfd(st), .events = POLLIN } };
        struct ze_status s;
        int r = 0;

        for (;;) {
                /* the fifo first: the init's end closes at its execve (EOF), and only a record
                 * says a hook failed; read() gives EOF once no writer is left even where poll()
                 * would not say so (a writer that was gone before we opened the fifo) */
                ssize_t n = read(fd, &s, sizeof(s));

                if (n == (ssize_t) sizeof(s)) {
                        zct_hooks_report_failure(c, st->hooks, &s);
                        r = -EPROTO;
                        break;
                }
                if (n == 0)
                        break;
                if (n > 0 || (errno != EAGAIN && errno != EINTR)) {
                        r = n > 0 ? -EIO : -errno;
                        zct_error(c, "startContainer hooks: %s", zct_errstr(-r));
                        break;
                }
                if (poll(p, 2, -1) < 0 && errno != EINTR) {
                        r = zct_error_errno(c, "startContainer hooks");
                        break;
                }
                if (p[1].revents & POLLIN)
                        p[1].fd = -1; /* the init exited: what it wrote is in the fifo, or nothing */
        }
        if (p[1].fd >= 0)
                close(p[1].fd);
        return r;
}

/* poststart, once start let the user's process go: the first failure ends them (the caller ends
 * the container and fails start, as runc does). */
int zct_hooks_poststart(const struct zct_ctx *c, const struct zct_state *st) {
        json_object *state;
        int r;

        if (!st->hooks)
                return 0;
        state = zct_hooks_state(st, "running", st->pid);
        r = state ? zct_hooks_run(c, st->hooks, "poststart", state, NULL) : -ENOMEM;
        json_object_put(state);
        return r;
}

/* poststop, once the container is deleted: a failure is logged, the delete stands. */
void zct_hooks_poststop(const struct zct_ctx *c, const struct zct_state *st) {
        json_object *state;

        if (!st->hooks)
                return;
        state = zct_hooks_state(st, "stopped", 0);
        if (zct_hooks_run(c, st->hooks, "poststop", state, NULL) < 0)
                zct_debug(c, "a poststop hook failed; the container is deleted");
        json_object_put(state);
}
