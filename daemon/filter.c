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
 * asks, except the limits. The daemon is single-threaded and a compile blocks it (tens to
 * hundreds of ms), so a non-root uid has a compile-time budget (filter-cache.h); cache hits are
 * free.
 */
#include <fcntl.h>
#include <linux/memfd.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "call.h"
#include "daemon.h"
#include "filter.h"
#include "filter-cache.h"
#include "log.h"
#include "profile.h"
#include "registry.h"
#include "server.h"
#include "util.h"

#define FILTER_SEALS (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

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

static int reply_filter(struct zd_call *call, const char *key, const char *hash, const struct sock_filter *bpf,
                        size_t len, unsigned flags, bool cached) {
        int fd = sealed_memfd(bpf, len);

        if (fd < 0)
                return zd_call_limit(call, "memory", 0);
        json_object *p = json_object_new_object();
        json_object_object_add(p, "key", json_object_new_string(key));
        json_object_object_add(p, "hash", json_object_new_string(hash));
        json_object_object_add(p, "instructions", json_object_new_int((int) len));
        json_object_object_add(p, "flags", json_object_new_int((int) flags));
        json_object_object_add(p, "cached", json_object_new_boolean(cached));
        zd_reply(call->conn, p, false, fd);
        return 0;
}

/* The profile module words an error "seccomp: LOCATION: what" (LOCATION may be absent): the
 * parameter named is "seccomp.LOCATION", or "seccomp". */
static int invalid_seccomp(struct zd_call *call, int r, const char *message) {
        char field[256] = "seccomp";
        const char *rest = message && strncmp(message, "seccomp: ", 9) == 0 ? message + 9 : NULL;
        const char *end = rest ? strstr(rest, ": ") : NULL;

        if (end && end > rest && (size_t) (end - rest) < sizeof(field) - 8 && !memchr(rest, ' ', (size_t) (end - rest)))
                snprintf(field, sizeof(field), "seccomp.%.*s", (int) (end - rest), rest);
        json_object *p = json_object_new_object();
        json_object_object_add(p, "parameter", json_object_new_string(field));
        json_object_object_add(p, "message", json_object_new_string(message ? message : strerror(-r)));
        return zd_call_fail(call, r, ZY_ERROR_INVALID_PARAMETER, p);
}

static int filter_of_profile(struct zd_call *call, const char *name) {
        const struct ucred *cr = zd_conn_cred(call->conn);
        size_t n_groups;
        const gid_t *groups = zd_conn_groups(call->conn, &n_groups);
        struct zd_entry *e = zd_registry_find(call->d, name);

        if (!e)
                return zd_call_failf(call, -ENOENT, ZY_ERROR_NO_SUCH_PROFILE, "profile", name);
        if (!zy_profile_allows(e->profile, cr->uid, cr->gid, groups, n_groups))
                return zd_call_failf(call, -EPERM, ZY_ERROR_PERMISSION_DENIED, "reason",
                                     "the profile's access list does not include the caller");
        const struct zy_profile *p = e->profile;
        /* A loaded profile is compiled already: its key is its program's hash. */
        return reply_filter(call, p->hash, p->hash, p->bpf, p->bpf_len, p->filter_flags, true);
}

static int filter_of_seccomp(struct zd_call *call, json_object *seccomp) {
        struct zd_daemon *d = call->d;
        uid_t uid = zd_conn_cred(call->conn)->uid;
        const char *text = json_object_to_json_string_ext(seccomp, JSON_C_TO_STRING_PLAIN);
        uint8_t key[ZY_SHA256_DIGEST_SIZE];
        struct zd_filter *f;
        struct zy_profile *p = NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        if (!text)
                return zd_call_limit(call, "memory", 0);
        /* Only an OCI object, which the OCI spec says has a defaultAction. The profile module
         * also reads zygote's own profile format, whose "seccomp" may name a file to read: that,
         * done as root for whoever asks, would open any file on the machine. */
        json_object *action;
        if (!json_object_object_get_ex(seccomp, "defaultAction", &action) || !action)
                return invalid_seccomp(call, -EINVAL, "seccomp: defaultAction: missing (an OCI seccomp object has one)");
        zd_filter_key(text, strlen(text), key);
        f = zd_filter_cache_lookup(&d->filters, key, uid);
        if (f)
                return reply_filter(call, f->key_hex, f->hash, f->bpf, f->bpf_len, f->flags, true);

        uint64_t start = now_nsec();
        r = zd_filter_budget_check(&d->filters, uid, start);
        if (r == -EDQUOT)
                return zd_call_limit(call, "compile_time_per_user", (long) (ZD_FILTER_BUDGET_NSEC / 1000000));
        if (r < 0)
                return zd_call_limit(call, "compile_time_users", ZD_FILTER_BUDGET_UIDS);
        /* "seccomp" as the file name: messages read "seccomp: syscalls[3].action: ...". */
        r = zy_profile_load_buffer_with("seccomp", text, strlen(text), NULL, &p, &err);
        uint64_t spent = now_nsec() - start;
        zd_filter_budget_charge(&d->filters, uid, start, spent);
        if (r < 0)
                return invalid_seccomp(call, r, err);

        r = zd_filter_cache_insert(&d->filters, key, uid, p->bpf, p->bpf_len, p->filter_flags, p->hash, spent, &f);
        if (r < 0 && r != -ENOSPC) {
                zy_profile_free(p);
                return zd_call_limit(call, "memory", 0);
        }
        if (r == -ENOSPC)
                zd_log(LOG_DEBUG, "GetFilter: uid %u's program not kept: the cache is full of root's", (unsigned) uid);
        zd_log(LOG_DEBUG, "GetFilter: compiled a seccomp object for uid %u in %.1f ms (%zu instructions)",
               (unsigned) uid, (double) spent / 1e6, p->bpf_len);
        char key_hex[2 * ZY_SHA256_DIGEST_SIZE + 1];
        zy_sha256_hex(text, strlen(text), key_hex);
        r = reply_filter(call, key_hex, p->hash, p->bpf, p->bpf_len, p->filter_flags, false);
        zy_profile_free(p);
        return r;
}

struct filter_param {
        const char *profile;
        json_object *seccomp;
};

static const struct zy_json_field filter_fields[] = {
        { .name = "profile", .type = ZY_JSON_STRING, .offset = offsetof(struct filter_param, profile),
          .flags = ZY_JSON_NULLABLE },
        { .name = "seccomp", .type = ZY_JSON_OBJECT, .offset = offsetof(struct filter_param, seccomp),
          .flags = ZY_JSON_NULLABLE },
        {},
};

int zd_get_filter(struct zd_call *call) {
        struct filter_param p = {};
        int r = zd_call_dispatch(call, filter_fields, &p);

        if (r < 0)
                return r;
        if (!p.profile == !p.seccomp) /* exactly one */
                return zd_call_invalid(call, p.profile ? "seccomp" : "profile");
        return p.profile ? filter_of_profile(call, p.profile) : filter_of_seccomp(call, p.seccomp);
}

void zd_filters_free(struct zd_daemon *d) {
        zd_filter_cache_clear(&d->filters);
}
