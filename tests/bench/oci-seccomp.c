/* SPDX-License-Identifier: MIT */
/*
 * The per-launch baseline: build a seccomp filter from an OCI `linux.seccomp` object with
 * libseccomp, as runc (libcontainer/seccomp) and crun do for every container they start.
 * This is what zygote avoids, so it must be built the same way they build it, not a cheaper
 * shortcut: one seccomp_rule_add_array() per name, libseccomp resolving names and arches.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "seccomp-oci.h"
#include "util.h"

static int parse_action(const char *name, json_object *errno_ret, uint32_t *ret) {
        uint32_t e = EPERM;

        if (errno_ret) {
                int64_t v = json_object_get_int64(errno_ret);
                if (v < 0 || v > 0xffff)
                        return -EINVAL;
                e = (uint32_t) v;
        }
        if (streq(name, "SCMP_ACT_ALLOW"))
                *ret = SCMP_ACT_ALLOW;
        else if (streq(name, "SCMP_ACT_ERRNO"))
                *ret = SCMP_ACT_ERRNO(e);
        else if (streq(name, "SCMP_ACT_KILL") || streq(name, "SCMP_ACT_KILL_THREAD"))
                *ret = SCMP_ACT_KILL_THREAD;
        else if (streq(name, "SCMP_ACT_KILL_PROCESS"))
                *ret = SCMP_ACT_KILL_PROCESS;
        else if (streq(name, "SCMP_ACT_TRAP"))
                *ret = SCMP_ACT_TRAP;
        else if (streq(name, "SCMP_ACT_TRACE"))
                *ret = SCMP_ACT_TRACE(e);
        else if (streq(name, "SCMP_ACT_LOG"))
                *ret = SCMP_ACT_LOG;
        else
                return -EINVAL; /* SCMP_ACT_NOTIFY needs a listener: not a launch baseline */
        return 0;
}

/* "SCMP_ARCH_X86_64" -> libseccomp's token. */
static int parse_arch(const char *name, uint32_t *ret) {
        char lower[32];
        size_t i;

        if (strncmp(name, "SCMP_ARCH_", 10) != 0)
                return -EINVAL;
        name += 10;
        for (i = 0; name[i] && i + 1 < sizeof(lower); i++)
                lower[i] = (char) tolower((unsigned char) name[i]);
        lower[i] = 0;
        uint32_t a = seccomp_arch_resolve_name(lower);
        if (a == 0)
                return -EINVAL;
        *ret = a;
        return 0;
}

static int parse_arg(json_object *ja, struct scmp_arg_cmp *ret) {
        json_object *ji, *jv, *jv2, *jop;
        enum scmp_compare op;
        int r;

        if (!json_object_object_get_ex(ja, "index", &ji) || !json_object_object_get_ex(ja, "value", &jv) ||
            !json_object_object_get_ex(ja, "op", &jop))
                return -EINVAL;
        r = zp_oci_op_from_name(json_object_get_string(jop), &op);
        if (r < 0)
                return r;
        int64_t index = json_object_get_int64(ji);
        if (index < 0 || index > 5)
                return -EINVAL;
        /* json-c keeps integers above INT64_MAX as uint64; get_uint64 reads both forms. */
        uint64_t v = json_object_get_uint64(jv);
        uint64_t v2 = json_object_object_get_ex(ja, "valueTwo", &jv2) ? json_object_get_uint64(jv2) : 0;
        *ret = (struct scmp_arg_cmp){ .arg = (unsigned) index, .op = op, .datum_a = v, .datum_b = v2 };
        return 0;
}

static int add_rule(scmp_filter_ctx ctx, uint32_t action, json_object *jnames, json_object *jargs) {
        struct scmp_arg_cmp cmp[6];
        size_t n_args = jargs ? json_object_array_length(jargs) : 0;
        bool same_index = n_args > 1;
        int r;

        if (n_args > 6)
                return -EINVAL;
        for (size_t i = 0; i < n_args; i++) {
                r = parse_arg(json_object_array_get_idx(jargs, i), &cmp[i]);
                if (r < 0)
                        return r;
                if (i > 0 && cmp[i].arg != cmp[0].arg)
                        same_index = false;
        }
        for (size_t i = 0; i < json_object_array_length(jnames); i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(jnames, i));
                int nr = seccomp_syscall_resolve_name(name);
                if (nr == __NR_SCMP_ERROR)
                        continue; /* unknown to this libseccomp: runc skips it too */
                if (same_index) {
                        /* libseccomp cannot AND two tests of one argument: runc ORs them as
                         * separate rules, and so must we to build the same filter. */
                        for (size_t k = 0; k < n_args; k++) {
                                r = seccomp_rule_add_array(ctx, action, nr, 1, &cmp[k]);
                                if (r < 0)
                                        return r;
                        }
                        continue;
                }
                r = seccomp_rule_add_array(ctx, action, nr, (unsigned) n_args, cmp);
                if (r < 0)
                        return r;
        }
        return 0;
}

int bench_oci_build(json_object *seccomp, unsigned optimize, scmp_filter_ctx *ret) {
        json_object *jdef, *jerr = NULL, *jarches, *jcalls;
        uint32_t def_action;
        scmp_filter_ctx ctx;
        int r;

        if (!json_object_object_get_ex(seccomp, "defaultAction", &jdef))
                return -EINVAL;
        json_object_object_get_ex(seccomp, "defaultErrnoRet", &jerr);
        r = parse_action(json_object_get_string(jdef), jerr, &def_action);
        if (r < 0)
                return r;

        ctx = seccomp_init(def_action);
        if (!ctx)
                return -ENOMEM;
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, optimize);
        if (r < 0)
                goto fail;
        /* runc sets no_new_privs itself, before loading; so does the caller here. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        if (r < 0)
                goto fail;

        if (json_object_object_get_ex(seccomp, "architectures", &jarches) && jarches)
                for (size_t i = 0; i < json_object_array_length(jarches); i++) {
                        uint32_t arch;
                        r = parse_arch(json_object_get_string(json_object_array_get_idx(jarches, i)), &arch);
                        if (r < 0)
                                goto fail;
                        r = seccomp_arch_add(ctx, arch);
                        if (r < 0 && r != -EEXIST) /* the native arch is already there */
                                goto fail;
                }

        if (json_object_object_get_ex(seccomp, "syscalls", &jcalls) && jcalls)
                for (size_t i = 0; i < json_object_array_length(jcalls); i++) {
                        json_object *jc = json_object_array_get_idx(jcalls, i);
                        json_object *jnames, *jact, *jret = NULL, *jargs = NULL;
                        uint32_t action;

                        if (!json_object_object_get_ex(jc, "names", &jnames) ||
                            !json_object_is_type(jnames, json_type_array) ||
                            !json_object_object_get_ex(jc, "action", &jact)) {
                                r = -EINVAL;
                                goto fail;
                        }
                        json_object_object_get_ex(jc, "errnoRet", &jret);
                        json_object_object_get_ex(jc, "args", &jargs);
                        r = parse_action(json_object_get_string(jact), jret, &action);
                        if (r < 0)
                                goto fail;
                        if (action == def_action)
                                continue; /* libseccomp refuses it; runc skips it */
                        r = add_rule(ctx, action, jnames, jargs);
                        if (r < 0)
                                goto fail;
                }

        *ret = ctx;
        return 0;
fail:
        seccomp_release(ctx);
        return r;
}
