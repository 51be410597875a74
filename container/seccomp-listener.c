/* SPDX-License-Identifier: MIT */
/*
 * A container process's seccomp listener, handed to the agent at `linux.seccomp.listenerPath`
 * (the runtime spec's "container process state"): the process loaded a filter with an
 * SCMP_ACT_NOTIFY rule (SECCOMP_FILTER_FLAG_NEW_LISTENER, set by the profile module), sent the
 * listener back on its sync socket as a ZE_STEP_LISTENER record carrying the fd
 * (engine/sandbox.c), and goes on. The runtime connected to the agent's Unix stream socket before
 * it made the process (from its own namespaces and root: zygoted's exec worker joins the
 * container's before it clones); here the record is read, one message goes on that connection,
 * the state's JSON with the listener as SCM_RIGHTS ("fds": ["seccompFd"]), and the connection and
 * our copy of the listener are closed.
 *
 * Until the agent has the listener, a system call of the process that the profile makes wait
 * does wait; the record comes first on the sync socket after the load, so it is handed over
 * before the runtime waits for anything else of the process (its ready, its exec). A hand-over
 * that fails is an error of create or exec (the spec's "MUST generate an error"), and the
 * process is killed by the caller.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fd-util.h"
#include "profile.h"
#include "libcontainer.h"
#include "util.h"

/* The container process state the agent reads (runtime spec, config-linux.md). */
static json_object *process_state(const struct zct_listener_for *f) {
        json_object *o = json_object_new_object(), *fds = json_object_new_array();

        json_object_object_add(o, "ociVersion", json_object_new_string(ZCT_RUNC_OCI_VERSION));
        json_object_array_add(fds, json_object_new_string("seccompFd"));
        json_object_object_add(o, "fds", fds);
        json_object_object_add(o, "pid", json_object_new_int(f->pid));
        if (f->o->listener_metadata)
                json_object_object_add(o, "metadata", json_object_new_string(f->o->listener_metadata));
        json_object_object_add(o, "state", zct_hooks_state(f->st, f->status, f->st->pid));
        return o;
}

int zct_seccomp_listener_connect(const struct zct_ctx *c, const struct zct_oci *o, bool absolute_only, int *ret_fd) {
        int fd;

        *ret_fd = -EBADF;
        if (!o->seccomp || !(o->seccomp->filter_flags & SECCOMP_FILTER_FLAG_NEW_LISTENER))
                return 0;
        /* the profile module refuses a notifying rule without it: a program from elsewhere */
        if (!o->listener_path)
                return zct_error(c, "linux.seccomp.listenerPath is not set, and the filter has a listener"), -EINVAL;
        /* relative: to our cwd, as runc takes it; zygoted's worker has zygoted's, not the caller's */
        if (absolute_only && o->listener_path[0] != '/')
                return zct_error(c,
                                 "linux.seccomp.listenerPath %s: not an absolute path (a container of zygoted's has "
                                 "no working directory of its caller's to resolve it in)",
                                 o->listener_path),
                       -EINVAL;
        fd = zc_unix_connect(o->listener_path);
        if (fd < 0)
                return zct_error(c, "failed to connect with seccomp agent at linux.seccomp.listenerPath %s: %s",
                                 o->listener_path, zct_errstr(-fd)),
                       fd;
        *ret_fd = fd;
        return 0;
}

/* One message: the state with the listener, the rest of a partial send without it. */
static int send_to_agent(int sock, const char *text, int listener) {
        size_t len = strlen(text);
        struct iovec iov = { .iov_base = (void *) text, .iov_len = len };
        ssize_t n;

        n = send_fds(sock, &iov, 1, &listener, 1, 0);
        if (n < 0)
                return (int) n;
        return zc_write_all(sock, text + n, len - (size_t) n);
}

int zct_seccomp_listener_send(const struct zct_ctx *c, const struct zct_listener_for *f, int listener) {
        json_object *state;
        const char *text;
        int r;

        /* one state per connection, and the connection closed after it (the spec) */
        if (!f->agent_fd || *f->agent_fd < 0)
                return zct_error(c, "a seccomp listener arrived for no connection to an agent"), -EPROTO;
        state = process_state(f);
        text = json_object_to_json_string_ext(state, JSON_C_TO_STRING_PLAIN);
        r = text ? send_to_agent(*f->agent_fd, text, listener) : -ENOMEM;
        json_object_put(state);
        *f->agent_fd = safe_close(*f->agent_fd);
        if (r < 0)
                return zct_error(c, "seccomp agent at linux.seccomp.listenerPath %s: %s", f->o->listener_path,
                                 zct_errstr(-r)),
                       r;
        zct_debug(c, "seccomp listener of pid %d handed to the agent at %s", (int) f->pid, f->o->listener_path);
        return 0;
}

int zct_runc_read_status_passing(const struct zct_ctx *c, const struct zct_listener_for *f, int sync_fd,
                                 struct ze_status *ret) {
        for (;;) {
                struct ze_status s;
                struct iovec iov = { .iov_base = &s, .iov_len = sizeof(s) };
                int fd = -EBADF, r;
                size_t n_fds = 0;
                ssize_t n;

                n = recv_fds(sync_fd, &iov, 1, &fd, 1, &n_fds, 0);
                if (n < 0)
                        return zct_error(c, "the container process's status: %s", zct_errstr((int) -n)), (int) n;
                if (n == 0) {
                        close_many(&fd, n_fds);
                        return 0; /* EOF: execve happened (or the process died without a word) */
                }
                if (n != (ssize_t) sizeof(s) || (s.step == ZE_STEP_LISTENER) != (n_fds == 1)) {
                        close_many(&fd, n_fds);
                        return zct_error(c, "the container process's status: a malformed record"), -EBADMSG;
                }
                if (s.step != ZE_STEP_LISTENER) {
                        *ret = s;
                        return 1;
                }
                r = zct_seccomp_listener_send(c, f, fd);
                close(fd);
                if (r < 0)
                        return r;
        }
}
