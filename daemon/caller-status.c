/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/status and /proc/PID/task/TID/status parsed (caller.c's facet; caller-proc.h): a
 * thread's ids, groups, capability sets, no_new_privs, seccomp state and umask, and the comparison
 * of another thread's ids and groups with the first one's. Pure: the texts are read by caller.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "caller-proc.h"

/* The keys of /proc/PID/status read here. */
enum status_key {
        S_UID,
        S_GID,
        S_GROUPS,
        S_CAP_INH,
        S_CAP_PRM,
        S_CAP_EFF,
        S_CAP_BND,
        S_CAP_AMB,
        S_NO_NEW_PRIVS,
        S_SECCOMP,
        S_SECCOMP_FILTERS,
        S_UMASK,
        S_THREADS,
        _S_MAX
};

static const struct {
        const char *name;
        size_t len;
} status_keys[_S_MAX] = {
#define KEY(k, n) [k] = { n, sizeof(n) - 1 }
        KEY(S_UID, "Uid"),
        KEY(S_GID, "Gid"),
        KEY(S_GROUPS, "Groups"),
        KEY(S_CAP_INH, "CapInh"),
        KEY(S_CAP_PRM, "CapPrm"),
        KEY(S_CAP_EFF, "CapEff"),
        KEY(S_CAP_BND, "CapBnd"),
        KEY(S_CAP_AMB, "CapAmb"),
        KEY(S_NO_NEW_PRIVS, "NoNewPrivs"),
        KEY(S_SECCOMP, "Seccomp"),
        KEY(S_UMASK, "Umask"),
        KEY(S_THREADS, "Threads"),
        KEY(S_SECCOMP_FILTERS, "Seccomp_filters"),
#undef KEY
};

void zd_caller_status_index(const char *text, struct zd_caller_status *ret) {
        *ret = (struct zd_caller_status){};
        for (const char *l = text, *eol; *l; l = *eol ? eol + 1 : eol) {
                const char *colon = strchr(l, ':');

                eol = strchrnul(l, '\n');
                if (!colon || colon > eol)
                        continue;
                for (size_t i = 0; i < _S_MAX; i++)
                        if (!ret->v[i] && (size_t) (colon - l) == status_keys[i].len &&
                            memcmp(l, status_keys[i].name, status_keys[i].len) == 0) {
                                ret->v[i] = colon + 1 + strspn(colon + 1, " \t");
                                break;
                        }
        }
}

/* The n-th (0-based) number of a "Key:\t1\t2..." line, base 10 or 16. */
static int field_number(const struct zd_caller_status *st, enum status_key key, unsigned n, int base, uint64_t *ret) {
        const char *v = st->v[key];
        unsigned long long x;
        char *end;

        if (!v)
                return -EBADMSG;
        for (;;) {
                errno = 0;
                x = strtoull(v, &end, base);
                if (errno || end == v)
                        return -EBADMSG;
                if (n-- == 0) {
                        *ret = x;
                        return 0;
                }
                v = end;
        }
}

/* The line of "Key:" up to its newline, for comparing two threads' ids. */
static size_t line_len(const char *v) {
        return v ? strcspn(v, "\n") : 0;
}

static bool same_line(const struct zd_caller_status *a, const struct zd_caller_status *b, enum status_key key) {
        const char *x = a->v[key], *y = b->v[key];

        return x && y && line_len(x) == line_len(y) && strncmp(x, y, line_len(x)) == 0;
}

/* Groups: "Groups:\t1 2 3 \n" (empty for none). */
static int parse_groups(const struct zd_caller_status *st, struct zd_caller *c) {
        const char *v = st->v[S_GROUPS];
        size_t n = 0;

        if (!v)
                return -EBADMSG;
        for (const char *q = v; *q && *q != '\n'; q++)
                n += *q >= '0' && *q <= '9' && (q[1] < '0' || q[1] > '9');
        if (n > ZE_MAX_GROUPS)
                return -E2BIG;
        c->groups = n ? calloc(n, sizeof(gid_t)) : NULL;
        if (n && !c->groups)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                char *end;

                v += strspn(v, " \t");
                c->groups[i] = (gid_t) strtoul(v, &end, 10);
                v = end;
        }
        c->n_groups = n;
        return 0;
}

/* The capability sets and confinement flags of one status text. */
struct thread_caps {
        uint64_t inh, prm, eff, bnd, amb;
        bool nnp;
        unsigned seccomp;
        unsigned filters; /* Seccomp_filters (5.9+); UINT_MAX when the kernel does not say */
};

static int parse_thread(const struct zd_caller_status *st, struct thread_caps *t) {
        uint64_t v;
        int r;

        if ((r = field_number(st, S_CAP_INH, 0, 16, &t->inh)) < 0 ||
            (r = field_number(st, S_CAP_PRM, 0, 16, &t->prm)) < 0 ||
            (r = field_number(st, S_CAP_EFF, 0, 16, &t->eff)) < 0 ||
            (r = field_number(st, S_CAP_BND, 0, 16, &t->bnd)) < 0)
                return r;
        /* CapAmb (4.3) and NoNewPrivs (4.10): none on a kernel without them */
        t->amb = field_number(st, S_CAP_AMB, 0, 16, &v) >= 0 ? v : 0;
        t->nnp = field_number(st, S_NO_NEW_PRIVS, 0, 10, &v) >= 0 && v != 0;
        t->seccomp = field_number(st, S_SECCOMP, 0, 10, &v) >= 0 ? (unsigned) v : 0;
        t->filters = field_number(st, S_SECCOMP_FILTERS, 0, 10, &v) >= 0 ? (unsigned) v : UINT_MAX;
        return 0;
}

static void merge_thread(struct zd_caller *c, const struct thread_caps *t) {
        c->cap_inh &= t->inh;
        c->cap_prm &= t->prm;
        c->cap_eff &= t->eff;
        c->cap_bnd &= t->bnd;
        c->cap_amb &= t->amb;
        c->no_new_privs = c->no_new_privs || t->nnp;
        c->seccomp_mode = t->seccomp > c->seccomp_mode ? t->seccomp : c->seccomp_mode;
        c->seccomp_filters = t->filters > c->seccomp_filters ? t->filters : c->seccomp_filters;
}

/* One status text of another thread, merged into c: ids the first thread's (main), or -ENOTUNIQ. */
int zd_caller_status_merge(const struct zd_caller_status *main, const char *text, struct zd_caller *c) {
        struct thread_caps t;
        struct zd_caller_status st;
        int r;

        zd_caller_status_index(text, &st);
        if (!same_line(&st, main, S_UID) || !same_line(&st, main, S_GID) || !same_line(&st, main, S_GROUPS))
                return -ENOTUNIQ;
        r = parse_thread(&st, &t);
        if (r >= 0)
                merge_thread(c, &t);
        return r;
}

int zd_caller_status_first(const struct zd_caller_status *st, const uid_t *check_uid, struct zd_caller *c,
                           uint64_t *ret_threads) {
        struct thread_caps t;
        uint64_t v;
        int r;

        if (check_uid) {
                if (field_number(st, S_UID, 0, 10, &v) < 0 || v != *check_uid)
                        return -ESRCH; /* not the process that connected */
        }
        /* Uid and Gid: real, effective, saved, filesystem. The effective ones, as SO_PEERCRED. */
        if ((r = field_number(st, S_UID, 1, 10, &v)) < 0)
                return r;
        c->euid = (uid_t) v;
        if ((r = field_number(st, S_GID, 1, 10, &v)) < 0)
                return r;
        c->egid = (gid_t) v;
        r = parse_groups(st, c);
        if (r < 0)
                return r;
        r = parse_thread(st, &t);
        if (r < 0)
                return r;
        c->cap_inh = c->cap_prm = c->cap_eff = c->cap_bnd = c->cap_amb = UINT64_MAX;
        c->no_new_privs = false;
        c->seccomp_mode = 0;
        c->seccomp_filters = 0;
        merge_thread(c, &t);
        /* Umask (4.7): without it, the strictest */
        c->sched.umask = field_number(st, S_UMASK, 0, 8, &v) >= 0 ? (uint32_t) (v & 0777) : 0777;
        if (field_number(st, S_THREADS, 0, 10, ret_threads) < 0)
                *ret_threads = 1;
        return 0;
}

int zd_caller_status_ids(const struct zd_caller_status *st, const uid_t *check_uid, uid_t *ret_uid, gid_t *ret_gid) {
        uint64_t uid, gid, v;
        int r;

        if (check_uid && (field_number(st, S_UID, 0, 10, &v) < 0 || v != *check_uid))
                return -ESRCH; /* not the process that connected */
        if ((r = field_number(st, S_UID, 1, 10, &uid)) < 0 || (r = field_number(st, S_GID, 1, 10, &gid)) < 0)
                return r;
        *ret_uid = (uid_t) uid;
        *ret_gid = (gid_t) gid;
        return 0;
}

_Static_assert(_S_MAX == ZD_CALLER_STATUS_KEYS, "struct zd_caller_status holds every key");
