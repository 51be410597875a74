/* SPDX-License-Identifier: MIT */
/*
 * The container's seccomp program: from zygoted when one we trust runs (GetFilter: compiled once
 * per distinct `linux.seccomp` object on this machine, handed over as a sealed memfd), else
 * compiled here with the same profile module zygoted uses. Compiling Podman's or Docker's profile
 * is most of a container start (docs/CONTAINERS.md); the daemon's cache makes it a lookup.
 *
 * Where the program comes from is the caller's choice, a struct zct_filter_source in its context
 * (zygote-runc's command line makes it of --no-zygote, --zygote-socket and ZYGOTE_RUNC_FILTER;
 * zygoted's container worker of its cache and its own socket). In order:
 *   the caller's cache (->cached), when it has one    zygoted's worker: the daemon's own programs
 *   ZCT_FILTER_LOCAL                                  compiled here, zygoted not asked
 *   ->socket, else libzygote's default socket         zygoted there, if it answers and runs as
 *                                                     root or as our own euid (SO_PEERCRED)
 *   anything else (no daemon, an untrusted one,       compiled here; the reason goes to the log
 *   an error of the daemon, no answer in 3 s)         once (zygoted's own verdict on bad content
 *                                                     is not repeated: the local compile words it)
 * ZCT_FILTER_ZYGOTED makes a failure to get it from zygoted an error (zygoted's worker, benchmarks).
 *
 * Why trust matters: the program is what confines the container. A daemon of another uid could
 * hand out a program that allows everything, so only root's or our own is asked.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "profile.h"
#include "sha256.h"
#include "libcontainer.h"
#include "util.h"
#include "zygote.h"

/* How long zygoted may take to answer: a cold compile there takes well under a second even on a
 * loaded machine, a local one about as long. */
#define ZCT_RUNC_FILTER_TIMEOUT_MS 3000

static uint64_t now_nsec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* The daemon's program as the profile struct the sandbox takes (program moved, not copied). */
/* The reply to a GetFilter sent on conn, within the timeout. */
static int read_answer(zy_conn *conn, const char *path, struct zy_filter **ret, char *why, size_t why_size) {
        if (!zy_conn_has_input(conn)) {
                /* A daemon that accepted and then stalls (stopped, or compiling for others) must
                 * not stall the container's start: past the timeout, compiling here is faster. */
                struct pollfd pfd = { .fd = zy_conn_get_fd(conn), .events = POLLIN };
                int n;
                do
                        n = poll(&pfd, 1, ZCT_RUNC_FILTER_TIMEOUT_MS);
                while (n < 0 && errno == EINTR);
                if (n == 0) {
                        snprintf(why, why_size, "zygoted at %s did not answer within %d ms", path,
                                 ZCT_RUNC_FILTER_TIMEOUT_MS);
                        return -ETIMEDOUT;
                }
        }
        return zy_get_filter_read(conn, ret);
}

static int from_daemon(const char *socket, json_object *seccomp, char *why, size_t why_size, char *source,
                       size_t source_size, struct zp_profile **ret) {
        _cleanup_free_ char *path = NULL;
        struct ucred cred;
        socklen_t len = sizeof(cred);
        zy_conn *conn = NULL;
        struct zy_filter *f = NULL;
        struct zp_profile *p = NULL;
        uint64_t start = now_nsec();
        const char *text = json_object_to_json_string_ext(seccomp, JSON_C_TO_STRING_PLAIN);
        char key_buf[2 * ZC_SHA256_DIGEST_SIZE + 1], *key = NULL;
        bool by_key = false;
        int r = 0;

        if (text) {
                zc_sha256_hex(text, strlen(text), key_buf);
                key = key_buf;
        }

        if (socket)
                path = strdup(socket);
        else
                r = zy_default_socket_path(&path);
        if (!path) {
                snprintf(why, why_size, "no zygoted socket path");
                return -ENOMEM;
        }
        r = zy_connect(path, &conn);
        if (r < 0) {
                snprintf(why, why_size, "no zygoted at %s (%s)", path, strerror(-r));
                return r;
        }
        if (getsockopt(zy_conn_get_fd(conn), SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
                r = -errno;
                snprintf(why, why_size, "zygoted at %s: its credentials cannot be read (%s)", path, strerror(-r));
                goto out;
        }
        if (cred.uid != 0 && cred.uid != geteuid()) {
                r = -EPERM;
                snprintf(why, why_size, "zygoted at %s runs as uid %u, neither root nor us: not trusted", path,
                         (unsigned) cred.uid);
                goto out;
        }
        /* The key first (the object's hash: a few bytes to send and nothing to parse there), the
         * object itself only when zygoted has not compiled it before */
        r = key ? zy_get_filter_key_send(conn, key) : -ENOENT;
        if (r >= 0)
                r = read_answer(conn, path, &f, why, why_size);
        by_key = r >= 0;
        /* NoSuchFilter (-ENOENT), or a zygoted that predates keys (InvalidParameter): the object */
        if (r < 0 && r != -ETIMEDOUT) {
                r = zy_get_filter_send(conn, NULL, seccomp);
                if (r >= 0)
                        r = read_answer(conn, path, &f, why, why_size);
        }
        if (r == -ETIMEDOUT)
                goto out;
        if (r < 0) {
                const char *name = zy_conn_error_name(conn);
                snprintf(why, why_size, "zygoted at %s: GetFilter failed: %s%s%s", path, strerror(-r), name ? ", " : "",
                         name ? name : "");
                goto out;
        }
        p = calloc(1, sizeof(*p));
        if (!p) {
                r = -ENOMEM;
                snprintf(why, why_size, "out of memory");
                goto out;
        }
        p->bpf = TAKE_PTR(f->program);
        p->bpf_len = f->n_instructions;
        p->filter_flags = f->flags;
        snprintf(p->hash, sizeof(p->hash), "%s", f->hash);
        snprintf(source, source_size, "from zygoted at %s (%s, key %.12s, %.2f ms)", path,
                 by_key      ? "cached, asked by its key"
                 : f->cached ? "cached"
                             : "compiled there now",
                 f->key, (double) (now_nsec() - start) / 1e6);
        *ret = p;
        r = 0;
out:
        zy_filter_free(f);
        zy_conn_free(conn);
        return r;
}

int zct_runc_filter_load(const struct zct_ctx *c, const char *config, json_object *seccomp, struct zp_profile **ret,
                         char *source, size_t source_size, char **ret_error) {
        const struct zct_filter_source *from = &c->filter;
        char why[768] = "--no-zygote or ZYGOTE_RUNC_FILTER=local";
        const char *text;
        json_object *action;
        int r;

        /* The OCI object only: the profile module also reads zygote's profile format, whose
         * "seccomp" names a file to read, which no config.json should make the runtime open. */
        if (!json_object_object_get_ex(seccomp, "defaultAction", &action) || !action) {
                if (ret_error)
                        *ret_error = strdup("defaultAction: missing (an OCI seccomp object has one)");
                return -EINVAL;
        }
        if (from->cached && from->cached(from->userdata, seccomp, ret, source, source_size) >= 0)
                return 0;
        if (from->from != ZCT_FILTER_LOCAL) {
                r = from_daemon(from->socket, seccomp, why, sizeof(why), source, source_size, ret);
                if (r >= 0)
                        return 0;
                if (from->from == ZCT_FILTER_ZYGOTED) {
                        if (ret_error)
                                *ret_error = strdup(why);
                        return r;
                }
                /* Said once per container, where containerd and podman keep the runtime's log. */
                zct_info(c, "seccomp filter compiled here, not by zygoted: %s", why);
        }
        text = json_object_to_json_string_ext(seccomp, JSON_C_TO_STRING_PLAIN);
        if (!text)
                return -ENOMEM;
        /* the runtime hands a notifying filter's listener to linux.seccomp.listenerPath; a call
         * newer than the object knows answers ENOSYS, as runc's (zygoted compiles it the same) */
        r = zp_profile_load_buffer_with(config, text, strlen(text),
                                        &(const struct zp_profile_options){ .listener = true, .enosys_newer = true },
                                        ret, ret_error);
        /* a long reason is cut at the buffer's end: the source line is for the log only */
        if (r >= 0 && snprintf(source, source_size, "compiled here in %.2f ms (%s)",
                               (double) (*ret)->compile_nsec / 1e6, why) < 0)
                source[0] = '\0';
        return r;
}
