/* SPDX-License-Identifier: MIT */
/*
 * struct ze_plan <-> one flat buffer + fd list (see plan.h).
 *
 * The buffer is read with memcpy only (no casts into it): a receive buffer has no alignment
 * guarantee, and a corrupt one must fail with -EBADMSG, never fault.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "util.h"

/* The plan's plain fields, described once: each table drives the wire header, pack and unpack.
 * A new plain field of struct ze_plan that the reference needs goes in one of them. */
/* booleans, packed one bit each (PW_<field>), in this order */
#define ZE_PLAN_BOOLS(X) \
        X(ctty) X(set_ids) X(capbset_mask_prctl) X(set_caps) X(no_new_privs) X(filter_early) X(hold_quiet) X(set_sched)
/* numbers copied as they are: 32 bits (ids, the kernel's last capability, seccomp flags) ... */
#define ZE_PLAN_U32S(X) X(filter_flags) X(cap_last) X(uid) X(gid)
/* ... and 64 bits (capability masks, the fd limit) */
#define ZE_PLAN_U64S(X) X(capbset_drop) X(caps_keep) X(caps_inh_drop) X(nofile_soft)

/* Bit numbers of the wire's flags: the booleans, then what the message holds besides. */
enum {
#define BIT(field) PW_##field,
        ZE_PLAN_BOOLS(BIT)
#undef BIT
                PW_HAS_CWD,
        PW_HAS_SEARCH_PATH,
        PW_HAS_STATUS,
        PW_HAS_HOLD,
        PW_HAS_REF_PIDFD,
        PW_HAS_PROG,
        _PW_N,
};
#define PW(bit) (1u << (bit))
#define _PW_ALL (PW(_PW_N) - 1)

struct ze_plan_wire {
        uint32_t magic, version;
        uint32_t size; /* of the whole buffer */
        uint32_t flags;
        uint32_t n_argv, n_envp, n_fdmap, n_groups;
        uint32_t n_insns, strings_len, path_buf_len, filter_mode;
#define W_U32(field) uint32_t field;
        ZE_PLAN_U32S(W_U32)
#undef W_U32
        uint32_t n_rlimits, n_cgroups;
#define W_U64(field) uint64_t field;
        ZE_PLAN_U64S(W_U64)
#undef W_U64
        struct ze_sched sched; /* with set_sched; all 0 otherwise */
        /* then: int32_t target[n_fdmap], uint32_t group[n_groups], struct ze_rlimit
         * rlimit[n_rlimits], struct sock_filter insn[n_insns], char strings[strings_len] */
};

_Static_assert(sizeof(struct sock_filter) == 8, "struct sock_filter is 8 bytes");
_Static_assert(sizeof(gid_t) == 4, "gid_t is 32 bits");
_Static_assert(sizeof(struct ze_rlimit) == 24, "struct ze_rlimit has no padding");
_Static_assert(sizeof(struct ze_sched) == 24 + 8 * ZE_AFFINITY_WORDS, "struct ze_sched has no padding");

static size_t count_strv(char *const *v) {
        size_t n = 0;

        if (v)
                while (v[n])
                        n++;
        return n;
}

static size_t align8(size_t n) {
        return (n + 7) & ~(size_t) 7;
}

int ze_plan_pack(const struct ze_plan *p, void **ret_buf, size_t *ret_len, int *fds, size_t *n_fds) {
        struct ze_plan_wire w = {
                .magic = ZE_PLAN_MAGIC,
                .version = ZE_PLAN_VERSION,
        };
        /* Only the load mode uses the program: the inherit tier must not copy a profile's
         * 30 KB of BPF into every SPAWN message. */
        const struct sock_fprog *prog = p && p->filter_mode == ZE_FILTER_LOAD ? p->prog : NULL;
        size_t n_argv, n_envp, strings = 0, size, n = 0, cap;
        char *buf, *q;

        if (!p || !ret_buf || !ret_len || !fds || !n_fds)
                return -EINVAL;
        cap = *n_fds;
        n_argv = count_strv(p->argv);
        n_envp = count_strv(p->envp);
        if (n_argv == 0)
                return -EINVAL;
        if (n_argv + n_envp > ZE_PLAN_MAX_STRINGS || p->n_fds > ZE_MAX_FDS || p->n_groups > ZE_MAX_GROUPS ||
            p->n_rlimits > ZE_MAX_RLIMITS || p->n_cgroups > ZE_MAX_CGROUPS)
                return -E2BIG;
        if ((p->n_fds > 0 && !p->fds) || (p->n_groups > 0 && !p->groups))
                return -EINVAL;
        /* exec_fd, the caller's namespaces, root and filters: never packed (see child.h) */
        if ((unsigned) p->filter_mode > ZE_FILTER_INHERITED || p->exec_by_fd || p->ns_join || p->enter_root ||
            p->n_caller_progs)
                return -EINVAL;
        if (prog && (prog->len > ZE_PLAN_MAX_INSNS || (prog->len > 0 && !prog->filter)))
                return -E2BIG;
        if (p->filter_mode == ZE_FILTER_CLONE && p->ref_pidfd < 0)
                return -EBADF;
        if (p->hold_quiet && p->hold_fd < 0)
                return -EINVAL;

        for (size_t i = 0; i < n_argv; i++)
                strings += strlen(p->argv[i]) + 1;
        for (size_t i = 0; i < n_envp; i++)
                strings += strlen(p->envp[i]) + 1;
        if (p->cwd)
                strings += strlen(p->cwd) + 1;
        if (p->search_path)
                strings += strlen(p->search_path) + 1;
        if (strings > ZE_PLAN_MAX_SIZE)
                return -E2BIG;

        size = sizeof(w) + p->n_fds * sizeof(int32_t) + p->n_groups * sizeof(uint32_t) +
               p->n_rlimits * sizeof(struct ze_rlimit) + (prog ? prog->len : 0) * sizeof(struct sock_filter) + strings;
        if (size > ZE_PLAN_MAX_SIZE)
                return -E2BIG;

        /* the fd list: map sources, cgroup directories, status, hold, reference pidfd */
        if (cap < p->n_fds + p->n_cgroups + 3)
                return -ENOBUFS;
        for (size_t i = 0; i < p->n_fds; i++) {
                if (p->fds[i].src < 0 || p->fds[i].target < 0)
                        return -EBADF;
                fds[n++] = p->fds[i].src;
        }
        for (size_t i = 0; i < p->n_cgroups; i++) {
                if (p->cgroup_fds[i] < 0)
                        return -EBADF;
                fds[n++] = p->cgroup_fds[i];
        }
        if (p->status_fd >= 0) {
                w.flags |= PW(PW_HAS_STATUS);
                fds[n++] = p->status_fd;
        }
        if (p->hold_fd >= 0) {
                w.flags |= PW(PW_HAS_HOLD);
                fds[n++] = p->hold_fd;
        }
        if (p->filter_mode == ZE_FILTER_CLONE) {
                w.flags |= PW(PW_HAS_REF_PIDFD);
                fds[n++] = p->ref_pidfd;
        }

        w.size = (uint32_t) size;
#define PACK(field) w.flags |= p->field ? PW(PW_##field) : 0;
        ZE_PLAN_BOOLS(PACK)
#undef PACK
        w.flags |= (p->cwd ? PW(PW_HAS_CWD) : 0) | (p->search_path ? PW(PW_HAS_SEARCH_PATH) : 0) |
                   (prog ? PW(PW_HAS_PROG) : 0);
        w.n_argv = (uint32_t) n_argv;
        w.n_envp = (uint32_t) n_envp;
        w.n_fdmap = (uint32_t) p->n_fds;
        w.n_groups = (uint32_t) p->n_groups;
        w.n_rlimits = (uint32_t) p->n_rlimits;
        w.n_cgroups = (uint32_t) p->n_cgroups;
        w.n_insns = prog ? prog->len : 0;
        w.strings_len = (uint32_t) strings;
        /* only scratch: more than this is never needed for one PATH candidate */
        w.path_buf_len = (uint32_t) (p->path_buf && p->path_buf_len > ZE_PLAN_MAX_PATH_BUF ? ZE_PLAN_MAX_PATH_BUF
                                     : p->path_buf                                         ? p->path_buf_len
                                                                                           : 0);
        w.filter_mode = (uint32_t) p->filter_mode;
#define PACK_NUMBER(field) w.field = p->field;
        ZE_PLAN_U32S(PACK_NUMBER)
        ZE_PLAN_U64S(PACK_NUMBER)
#undef PACK_NUMBER
        if (p->set_sched)
                w.sched = p->sched;

        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        q = buf;
        memcpy(q, &w, sizeof(w));
        q += sizeof(w);
        for (size_t i = 0; i < p->n_fds; i++) {
                int32_t t = p->fds[i].target;

                memcpy(q, &t, sizeof(t));
                q += sizeof(t);
        }
        if (p->n_groups) {
                memcpy(q, p->groups, p->n_groups * sizeof(uint32_t));
                q += p->n_groups * sizeof(uint32_t);
        }
        if (p->n_rlimits) {
                memcpy(q, p->rlimits, p->n_rlimits * sizeof(struct ze_rlimit));
                q += p->n_rlimits * sizeof(struct ze_rlimit);
        }
        if (w.n_insns) {
                memcpy(q, prog->filter, w.n_insns * sizeof(struct sock_filter));
                q += w.n_insns * sizeof(struct sock_filter);
        }
#define PUT_STRING(s) \
        do { \
                size_t _l = strlen(s) + 1; \
                memcpy(q, (s), _l); \
                q += _l; \
        } while (0)
        for (size_t i = 0; i < n_argv; i++)
                PUT_STRING(p->argv[i]);
        for (size_t i = 0; i < n_envp; i++)
                PUT_STRING(p->envp[i]);
        if (p->cwd)
                PUT_STRING(p->cwd);
        if (p->search_path)
                PUT_STRING(p->search_path);
#undef PUT_STRING

        *ret_buf = buf;
        *ret_len = size;
        *n_fds = n;
        return 0;
}

/* The header: known magic, version and flags, every count within its bound, and a size that is
 * exactly what the counts announce. */
static int check_wire(const struct ze_plan_wire *w, size_t len) {
        uint64_t expect;

        if (w->magic != ZE_PLAN_MAGIC || w->version != ZE_PLAN_VERSION || w->size != len)
                return -EBADMSG;
        if ((w->flags & ~(uint32_t) _PW_ALL) || w->filter_mode > ZE_FILTER_INHERITED)
                return -EBADMSG;
        if (w->n_argv == 0 || (uint64_t) w->n_argv + w->n_envp > ZE_PLAN_MAX_STRINGS || w->n_fdmap > ZE_MAX_FDS ||
            w->n_groups > ZE_MAX_GROUPS || w->n_rlimits > ZE_MAX_RLIMITS || w->n_cgroups > ZE_MAX_CGROUPS ||
            w->n_insns > ZE_PLAN_MAX_INSNS || w->path_buf_len > ZE_PLAN_MAX_PATH_BUF || w->strings_len == 0)
                return -EBADMSG;
        if (!(w->flags & PW(PW_HAS_PROG)) && w->n_insns != 0)
                return -EBADMSG;
        if ((w->flags & PW(PW_hold_quiet)) && !(w->flags & PW(PW_HAS_HOLD)))
                return -EBADMSG;
        if (w->sched.umask > 0777 || (!(w->flags & PW(PW_set_sched)) && w->sched.umask != 0))
                return -EBADMSG;
        if (!!(w->flags & PW(PW_HAS_REF_PIDFD)) != (w->filter_mode == ZE_FILTER_CLONE))
                return -EBADMSG;

        /* every count is bounded above, so this cannot overflow 64 bits */
        expect = (uint64_t) sizeof(*w) + (uint64_t) w->n_fdmap * sizeof(int32_t) +
                 (uint64_t) w->n_groups * sizeof(uint32_t) + (uint64_t) w->n_rlimits * sizeof(struct ze_rlimit) +
                 (uint64_t) w->n_insns * sizeof(struct sock_filter) + w->strings_len;
        if (expect != len)
                return -EBADMSG;
        return 0;
}

/* The fds: as many as the header announces, every one valid. */
static int check_fds(const struct ze_plan_wire *w, const int *fds, size_t n_fds) {
        size_t want_fds = w->n_fdmap + w->n_cgroups + !!(w->flags & PW(PW_HAS_STATUS)) +
                          !!(w->flags & PW(PW_HAS_HOLD)) + !!(w->flags & PW(PW_HAS_REF_PIDFD));

        if (n_fds != want_fds)
                return -EBADMSG;
        for (size_t i = 0; i < n_fds; i++)
                if (fds[i] < 0)
                        return -EBADMSG;
        return 0;
}

/* The string area: NUL-terminated, exactly as many strings as announced; the fd map's targets:
 * none negative. */
static int check_contents(const struct ze_plan_wire *w, const char *in, size_t len) {
        const char *strings = in + len - w->strings_len, *s, *end;
        size_t n_strings = 0;

        if (strings[w->strings_len - 1] != 0)
                return -EBADMSG;
        for (s = strings, end = strings + w->strings_len; s < end; s += strlen(s) + 1)
                n_strings++;
        if (n_strings !=
            (size_t) w->n_argv + w->n_envp + !!(w->flags & PW(PW_HAS_CWD)) + !!(w->flags & PW(PW_HAS_SEARCH_PATH)))
                return -EBADMSG;

        for (uint32_t i = 0; i < w->n_fdmap; i++) {
                int32_t t;

                memcpy(&t, in + sizeof(*w) + i * sizeof(t), sizeof(t));
                if (t < 0)
                        return -EBADMSG;
        }
        return 0;
}

struct unpack_layout {
        size_t off_groups, off_insns, off_strings, off_path, total;
};

/* Where the pointer arrays, groups, BPF, strings and path_buf go in the one block. */
static struct unpack_layout unpack_layout(const struct ze_plan_wire *w) {
        struct unpack_layout l;

        l.off_groups = align8(((size_t) w->n_argv + 1 + w->n_envp + 1) * sizeof(char *));
        l.off_insns = align8(l.off_groups + (size_t) w->n_groups * sizeof(gid_t));
        l.off_strings = align8(l.off_insns + (size_t) w->n_insns * sizeof(struct sock_filter));
        l.off_path = align8(l.off_strings + w->strings_len);
        l.total = l.off_path + w->path_buf_len + 1;
        return l;
}

/* A checked message into ret, in mem (zeroed, at least l->total bytes, 8-byte aligned); fds
 * handed out in the order pack put them in. */
static int unpack_checked(const struct ze_plan_wire *w, const char *in, const int *fds, const struct unpack_layout *l,
                          char *mem, struct ze_plan_storage *ret) {
        size_t off_ptrs = 0, off_groups = l->off_groups, off_insns = l->off_insns, off_strings = l->off_strings,
               off_path = l->off_path, fi = 0;
        const char *s, *rlimits;
        char **ptrs;

        memset(ret, 0, sizeof(*ret));
        in += sizeof(*w);
        for (uint32_t i = 0; i < w->n_fdmap; i++) {
                int32_t t;

                memcpy(&t, in, sizeof(t));
                in += sizeof(t);
                ret->fdmap[i] = (struct ze_fdmap){ .src = fds[fi++], .target = t };
        }
        memcpy(mem + off_groups, in, (size_t) w->n_groups * sizeof(gid_t));
        in += (size_t) w->n_groups * sizeof(gid_t);
        rlimits = in;
        in += (size_t) w->n_rlimits * sizeof(struct ze_rlimit);
        memcpy(mem + off_insns, in, (size_t) w->n_insns * sizeof(struct sock_filter));
        in += (size_t) w->n_insns * sizeof(struct sock_filter);
        memcpy(mem + off_strings, in, w->strings_len);

        ptrs = (char **) (void *) (mem + off_ptrs);
        s = mem + off_strings;
        for (uint32_t i = 0; i < w->n_argv; i++, s += strlen(s) + 1)
                ptrs[i] = (char *) s;
        ptrs[w->n_argv] = NULL;
        for (uint32_t i = 0; i < w->n_envp; i++, s += strlen(s) + 1)
                ptrs[w->n_argv + 1 + i] = (char *) s;
        ptrs[w->n_argv + 1 + w->n_envp] = NULL;

        ret->plan = (struct ze_plan){
                .argv = ptrs,
                .envp = ptrs + w->n_argv + 1,
                .fds = ret->fdmap,
                .n_fds = w->n_fdmap,
                .status_fd = -EBADF,
                .hold_fd = -EBADF,
                .ref_pidfd = -EBADF,
                .groups = w->n_groups ? (const gid_t *) (void *) (mem + off_groups) : NULL,
                .n_groups = w->n_groups,
                .sched = w->sched,
                .filter_mode = (enum ze_filter_mode) w->filter_mode,
                .path_buf = w->path_buf_len ? mem + off_path : NULL,
                .path_buf_len = w->path_buf_len,
        };
#define UNPACK(field) ret->plan.field = !!(w->flags & PW(PW_##field));
        ZE_PLAN_BOOLS(UNPACK)
#undef UNPACK
#define UNPACK_NUMBER(field) ret->plan.field = w->field;
        ZE_PLAN_U32S(UNPACK_NUMBER)
        ZE_PLAN_U64S(UNPACK_NUMBER)
#undef UNPACK_NUMBER
        memcpy(ret->plan.rlimits, rlimits, (size_t) w->n_rlimits * sizeof(struct ze_rlimit));
        ret->plan.n_rlimits = w->n_rlimits;
        for (uint32_t i = 0; i < w->n_cgroups; i++)
                ret->plan.cgroup_fds[i] = fds[fi++];
        ret->plan.n_cgroups = w->n_cgroups;
        if (w->flags & PW(PW_HAS_CWD)) {
                ret->plan.cwd = s;
                s += strlen(s) + 1;
        }
        if (w->flags & PW(PW_HAS_SEARCH_PATH))
                ret->plan.search_path = s;
        if (w->flags & PW(PW_HAS_STATUS))
                ret->plan.status_fd = fds[fi++];
        if (w->flags & PW(PW_HAS_HOLD))
                ret->plan.hold_fd = fds[fi++];
        if (w->flags & PW(PW_HAS_REF_PIDFD))
                ret->plan.ref_pidfd = fds[fi++];
        if (w->flags & PW(PW_HAS_PROG)) {
                ret->prog = (struct sock_fprog){
                        .len = (unsigned short) w->n_insns,
                        .filter = (struct sock_filter *) (void *) (mem + off_insns),
                };
                ret->plan.prog = &ret->prog;
        }
        return 0;
}

/* The header copied out and every check passed. */
static int check_message(const void *buf, size_t len, const int *fds, size_t n_fds, struct ze_plan_wire *ret) {
        int r;

        if (len < sizeof(*ret) || len > ZE_PLAN_MAX_SIZE)
                return -EBADMSG;
        memcpy(ret, buf, sizeof(*ret));
        r = check_wire(ret, len);
        if (r >= 0)
                r = check_fds(ret, fds, n_fds);
        if (r >= 0)
                r = check_contents(ret, buf, len);
        return r;
}

int ze_plan_unpack(const void *buf, size_t len, const int *fds, size_t n_fds, struct ze_plan_storage *ret) {
        struct unpack_layout l;
        struct ze_plan_wire w;
        char *mem;
        int r;

        if (!buf || !ret || (n_fds > 0 && !fds))
                return -EINVAL;
        r = check_message(buf, len, fds, n_fds, &w);
        if (r < 0)
                return r;
        l = unpack_layout(&w);
        mem = calloc(1, l.total);
        if (!mem)
                return -ENOMEM;
        r = unpack_checked(&w, buf, fds, &l, mem, ret);
        ret->mem = mem;
        return r;
}

int ze_plan_unpack_into(const void *buf, size_t len, const int *fds, size_t n_fds, void *mem, size_t mem_size,
                        struct ze_plan_storage *ret) {
        struct unpack_layout l;
        struct ze_plan_wire w;
        int r;

        if (!buf || !ret || !mem || ((uintptr_t) mem & 7) || (n_fds > 0 && !fds))
                return -EINVAL;
        r = check_message(buf, len, fds, n_fds, &w);
        if (r < 0)
                return r;
        l = unpack_layout(&w);
        if (l.total > mem_size)
                return -E2BIG;
        /* only what unpack does not overwrite needs zeroes: the pointer arrays' ends are written,
         * path_buf is scratch whose last byte must be a NUL */
        ((char *) mem)[l.total - 1] = 0;
        return unpack_checked(&w, buf, fds, &l, mem, ret);
}

void ze_plan_storage_done(struct ze_plan_storage *s) {
        if (!s)
                return;
        free(s->mem);
        memset(s, 0, sizeof(*s));
}
