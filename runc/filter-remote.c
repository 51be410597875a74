/* SPDX-License-Identifier: MIT */
/*
 * The container's seccomp program: from zygoted when one we trust runs (GetFilter: compiled once
 * per distinct `linux.seccomp` object on this machine, handed over as a sealed memfd), else
 * compiled here with the same profile module zygoted uses. Compiling Podman's or Docker's profile
 * is most of a container start (docs/CONTAINERS.md); the daemon's cache makes it a lookup.
 *
 * Where the program comes from, in order:
 *   --no-zygote, or ZYGOTE_RUNC_FILTER=local        compiled here, zygoted not asked
 *   --zygote-socket PATH, else $ZYGOTE_SOCKET,      zygoted there, if it answers and runs as
 *   else libzygote's default socket                 root or as our own euid (SO_PEERCRED)
 *   anything else (no daemon, an untrusted one,     compiled here; the reason goes to the log
 *   an error of the daemon, no answer in 3 s)       once (zygoted's own verdict on bad content
 *                                                   is not repeated: the local compile words it)
 * ZYGOTE_RUNC_FILTER=zygoted makes a failure to get it from zygoted an error (benchmarks, tests).
 *
 * Why trust matters: the program is what confines the container. A daemon of another uid could
 * hand out a program that allows everything, so only root's or our own is asked.
 *
 * The loader (config.c) has no command context; zrc_runc_filter_setup() gives this file the
 * command's (one container per zygote-runc process).
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
#include "runtime.h"
#include "util.h"
#include "zygote.h"

/* How long zygoted may take to answer: a cold compile there takes well under a second even on a
 * loaded machine, a local one about as long. */
#define ZRC_RUNC_FILTER_TIMEOUT_MS 3000

static struct {
        const struct zrc_ctx *ctx;
        const char *socket; /* NULL: $ZYGOTE_SOCKET or libzygote's default */
        bool local;
        bool required;
        char source[512]; /* where the last program came from, for the debug line */
} filter_setup;

void zrc_runc_filter_setup(const struct zrc_ctx *c, const char *socket, bool no_zygote) {
        const char *mode = secure_getenv("ZYGOTE_RUNC_FILTER");

        filter_setup.ctx = c;
        filter_setup.socket = socket;
        filter_setup.local = no_zygote || (mode && streq(mode, "local"));
        filter_setup.required = !filter_setup.local && mode && streq(mode, "zygoted");
        if (mode && *mode && !streq(mode, "local") && !streq(mode, "zygoted"))
                zrc_info(c, "ZYGOTE_RUNC_FILTER=%s is neither \"local\" nor \"zygoted\": ignored", mode);
}

const char *zrc_runc_filter_source(void) {
        return filter_setup.source[0] ? filter_setup.source : "no filter";
}

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
                        n = poll(&pfd, 1, ZRC_RUNC_FILTER_TIMEOUT_MS);
                while (n < 0 && errno == EINTR);
                if (n == 0) {
                        snprintf(why, why_size, "zygoted at %s did not answer within %d ms", path,
                                 ZRC_RUNC_FILTER_TIMEOUT_MS);
                        return -ETIMEDOUT;
                }
        }
        return zy_get_filter_read(conn, ret);
}

static int from_daemon(json_object *seccomp, char *why, size_t why_size, struct zp_profile **ret) {
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

        if (filter_setup.socket)
                path = strdup(filter_setup.socket);
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
        snprintf(filter_setup.source, sizeof(filter_setup.source), "from zygoted at %s (%s, key %.12s, %.2f ms)", path,
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

int (*zrc_runc_filter_provider)(json_object *seccomp, struct zp_profile **ret, char *why, size_t why_size) = NULL;

int zrc_runc_filter_load(const char *config, json_object *seccomp, struct zp_profile **ret, char **ret_error) {
        const struct zrc_ctx *c = filter_setup.ctx;
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
        if (zrc_runc_filter_provider &&
            zrc_runc_filter_provider(seccomp, ret, filter_setup.source, sizeof(filter_setup.source)) >= 0)
                return 0;
        if (!filter_setup.local) {
                r = from_daemon(seccomp, why, sizeof(why), ret);
                if (r >= 0)
                        return 0;
                if (filter_setup.required) {
                        if (ret_error)
                                *ret_error = strdup(why);
                        return r;
                }
                /* Said once per container, where containerd and podman keep the runtime's log. */
                if (c)
                        zrc_info(c, "seccomp filter compiled here, not by zygoted: %s", why);
        }
        text = json_object_to_json_string_ext(seccomp, JSON_C_TO_STRING_PLAIN);
        if (!text)
                return -ENOMEM;
        /* the runtime hands a notifying filter's listener to linux.seccomp.listenerPath */
        r = zp_profile_load_buffer_with(config, text, strlen(text),
                                        &(const struct zp_profile_options){ .listener = true }, ret, ret_error);
        /* a long reason is cut at the buffer's end: the source line is for the log only */
        if (r >= 0 && snprintf(filter_setup.source, sizeof(filter_setup.source), "compiled here in %.2f ms (%s)",
                               (double) (*ret)->compile_nsec / 1e6, why) < 0)
                filter_setup.source[0] = '\0';
        return r;
}
