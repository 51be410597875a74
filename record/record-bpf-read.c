/* SPDX-License-Identifier: MIT */
/* A recording of zygoted's eBPF tracer into a set: see record-bpf-read.h. */
#include <errno.h>
#include <stdint.h>

#include <seccomp.h>

#include "profile.h"
#include "record-bpf-read.h"
#include "util.h"

/* A JSON integer in [0, max], or -1. */
static int64_t int_in(json_object *v, int64_t max) {
        int64_t n;

        if (!json_object_is_type(v, json_type_int))
                return -1;
        n = json_object_get_int64(v);
        return n >= 0 && n <= max ? n : -1;
}

/* One value of an argument fact: socket's family or personality's persona. */
static int add_values(struct rec_set *s, uint32_t arch, uint32_t nr, json_object *values, bool any) {
        uint64_t args[6] = {};
        size_t n = json_object_array_length(values);
        int r;

        if (any || n == 0) /* a value the tracer could not keep: the call allowed outright */
                return rec_set_add_any(s, arch, nr);
        for (size_t i = 0; i < n; i++) {
                int64_t v = int_in(json_object_array_get_idx(values, i), UINT32_MAX);
                if (v < 0)
                        return -EINVAL;
                args[0] = (uint64_t) v;
                r = rec_set_add(s, arch, nr, args);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_arch(struct rec_set *s, json_object *a) {
        json_object *calls = json_object_object_get(a, "calls"), *fam = json_object_object_get(a, "socketFamilies"),
                    *personas = json_object_object_get(a, "personas");
        int64_t arch = int_in(json_object_object_get(a, "arch"), UINT32_MAX),
                flags = int_in(json_object_object_get(a, "cloneFlags"), UINT32_MAX);
        bool other = json_object_get_boolean(json_object_object_get(a, "socketOther"));
        uint64_t clone_args[6] = {};
        int clone_nr, r;

        /* an architecture a profile cannot name could not be written */
        if (arch <= 0 || !zp_profile_arch_name((uint32_t) arch) || flags < 0 ||
            !json_object_is_type(calls, json_type_array) || !json_object_is_type(fam, json_type_array) ||
            !json_object_is_type(personas, json_type_array))
                return -EINVAL;
        r = rec_set_add_arch(s, (uint32_t) arch);
        if (r < 0)
                return r;
        /* s390 passes clone's flags second; every other architecture first */
        clone_args[0] = clone_args[1] = (uint64_t) flags;
        clone_nr = seccomp_syscall_resolve_name_arch((uint32_t) arch, "clone");
        for (size_t i = 0; i < json_object_array_length(calls); i++) {
                int64_t nr = int_in(json_object_array_get_idx(calls, i), UINT32_MAX);
                uint64_t none[6] = {};
                if (nr < 0)
                        return -EINVAL;
                switch (rec_set_kind(s, (uint32_t) arch, (uint32_t) nr)) {
                case '3':
                        r = rec_set_add(s, (uint32_t) arch, (uint32_t) nr, none);
                        if (r >= 0 && clone_nr >= 0)
                                r = rec_set_add(s, (uint32_t) arch, (uint32_t) clone_nr, clone_args);
                        break;
                case 'c':
                        r = rec_set_add(s, (uint32_t) arch, (uint32_t) nr, clone_args);
                        break;
                case 's':
                        r = add_values(s, (uint32_t) arch, (uint32_t) nr, fam, other);
                        break;
                case 'p':
                        r = add_values(s, (uint32_t) arch, (uint32_t) nr, personas, false);
                        break;
                default:
                        r = rec_set_add(s, (uint32_t) arch, (uint32_t) nr, none);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

int rec_bpf_parse(json_object *o, struct rec_set *s, const char **ret_incomplete) {
        json_object *arches = json_object_object_get(o, "arches"), *inc = json_object_object_get(o, "incomplete");
        int r;

        if (!json_object_is_type(arches, json_type_array) || (inc && !json_object_is_type(inc, json_type_string)))
                return -EINVAL;
        for (size_t i = 0; i < json_object_array_length(arches); i++) {
                r = add_arch(s, json_object_array_get_idx(arches, i));
                if (r < 0)
                        return r;
        }
        *ret_incomplete = inc ? json_object_get_string(inc) : NULL;
        return 0;
}
