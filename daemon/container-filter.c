/* SPDX-License-Identifier: MIT */
/*
 * A container worker's seccomp program (container-filter.h), in the worker zygoted forked:
 *
 * - the program: the daemon's filter cache as the fork copied it, else GetFilter on zygoted's own
 *   socket (container/filter-remote.c), so that an OCI object is compiled once for everyone;
 * - how the container's processes get it: where the kernel has SECCOMP_CLONE_FILTER and a
 *   profile in the clone tier has, byte for byte and with the same flags, the program the
 *   container asks for, its init (or exec'd process) clones the filter of that profile's
 *   reference process through the reference's pidfd, as a task of the clone tier does; anything
 *   else loads the program. No reference is started for a container's own object: the
 *   container's program must equal a loaded profile's (Docker's default profile, shipped as
 *   profiles/default.json, is the common case), which a profile written from the same OCI object
 *   gives.
 *
 * Why a clone gives the container exactly what a load would: the reference loaded that same
 * program (same instructions, same flags) on itself and nothing after it; the daemon and the
 * container's init carry the same filters under it (none on a daemon as documented, else the
 * daemon's own, an ancestor of the reference's, which the kernel checks). A program with a
 * listener is never cloned (a clone carries no listener for the runtime to hand over), and the
 * init is given no program to fall back on: it clones or fails at the filter step, so a tier
 * reported as clone cannot hide a load. A container whose program matches no profile, or a
 * reference that is down (the profile then serves from the load tier), loads.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>

#include "container-filter.h"
#include "daemon.h"
#include "filter-cache.h"
#include "profile.h"
#include "registry.h"
#include "util.h"

/* The daemon's cache as the fork left it: a program compiled before for the same object. */
static int filter_from_cache(void *userdata, json_object *seccomp, struct zp_profile **ret, char *why,
                             size_t why_size) {
        struct zd_container_filter *cf = userdata;
        uint8_t key[ZC_SHA256_DIGEST_SIZE];
        const char *text = json_object_to_json_string_ext(seccomp, JSON_C_TO_STRING_PLAIN);
        struct zd_filter *f;
        struct zp_profile *p;

        if (!text)
                return -ENOENT;
        zd_filter_key(text, strlen(text), key);
        f = zd_filter_cache_lookup(&cf->d->filters, key, 0);
        if (!f)
                return -ENOENT;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->bpf = malloc(f->bpf_len * sizeof(*f->bpf));
        if (!p->bpf) {
                free(p);
                return -ENOMEM;
        }
        memcpy(p->bpf, f->bpf, f->bpf_len * sizeof(*f->bpf));
        p->bpf_len = f->bpf_len;
        p->filter_flags = f->flags;
        snprintf(p->hash, sizeof(p->hash), "%s", f->hash);
        snprintf(why, why_size, "zygoted's cache, in the worker");
        *ret = p;
        return 0;
}

static bool same_program(const struct zp_profile *a, const struct zp_profile *b) {
        return a->bpf_len == b->bpf_len && a->filter_flags == b->filter_flags && a->bpf_len > 0 &&
               memcmp(a->bpf, b->bpf, a->bpf_len * sizeof(*a->bpf)) == 0;
}

/* The pidfd of a reference that holds program, or -1 (load it). The other kept pidfds are
 * closed: nothing else in the worker, its hooks or the init needs them. */
static int filter_reference(void *userdata, const struct zp_profile *program) {
        struct zd_container_filter *cf = userdata;
        int fd = -1;

        if (program->filter_flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)
                return -1;
        for (size_t i = 0; i < cf->n; i++)
                if (fd < 0 && same_program(cf->entries[i]->profile, program))
                        fd = cf->fds[i];
        if (fd < 0)
                return -1;
        for (size_t i = 0; i < cf->n; i++)
                if (cf->fds[i] != fd)
                        cf->fds[i] = safe_close(cf->fds[i]);
        cf->cloned = true;
        return fd;
}

int zd_container_filter_init(struct zd_daemon *d, struct zd_container_filter *f) {
        *f = (struct zd_container_filter){ .d = d };
        if (!d->features.clone_filter)
                return 0;
        f->entries = calloc(d->n_entries ? d->n_entries : 1, sizeof(*f->entries));
        f->fds = calloc(d->n_entries ? d->n_entries : 1, sizeof(*f->fds));
        if (!f->entries || !f->fds)
                return -ENOMEM;
        for (size_t i = 0; i < d->n_entries; i++) {
                struct zd_entry *e = d->entries[i];
                if (e->tier != ZD_TIER_CLONE || !e->ref_up || e->ref.pidref.fd < 0 || !e->profile->bpf ||
                    (e->profile->filter_flags & SECCOMP_FILTER_FLAG_NEW_LISTENER))
                        continue;
                f->entries[f->n] = e;
                f->fds[f->n++] = e->ref.pidref.fd;
        }
        return 0;
}

void zd_container_filter_moved(struct zd_container_filter *f, int first) {
        for (size_t i = 0; i < f->n; i++)
                f->fds[i] = first + (int) i;
}

struct zct_filter_source zd_container_filter_source(struct zd_container_filter *f) {
        /* never a compile of the worker's own, which no one else would reuse */
        return (struct zct_filter_source){ .from = ZCT_FILTER_ZYGOTED,
                                           .socket = f->d->server.socket_path,
                                           .cached = filter_from_cache,
                                           .reference = filter_reference,
                                           .userdata = f };
}
