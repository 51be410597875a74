/* SPDX-License-Identifier: MIT */
/*
 * The OCI seccomp object to a plain spec (see seccomp-oci.h): names of actions, operators,
 * architectures and flags, and Docker's includes/excludes.
 */

#include "seccomp-oci.h"

#include <ctype.h>
#include <inttypes.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "caps.h"
#include "util.h"

#define SYSCALL_NAME_MAX 64

/* ---------------------------------------------------------------------------------------------
 * Names: architectures, actions, operators, flags, errno values */

/* "SCMP_ARCH_X86_64" (OCI) or "x86_64" (libseccomp) to an AUDIT_ARCH_* token; 0 if unknown. */
static uint32_t arch_from_name(const char *name) {
        char lower[32];
        size_t i;

        if (strncmp(name, "SCMP_ARCH_", 10) == 0)
                name += 10;
        for (i = 0; name[i] && i < sizeof(lower) - 1; i++)
                lower[i] = (char) tolower((unsigned char) name[i]);
        if (name[i])
                return 0;
        lower[i] = '\0';
        if (streq(lower, "native"))
                return seccomp_arch_native();
        return seccomp_arch_resolve_name(lower);
}

const char *zp_oci_arch_to_name(uint32_t arch) {
        static const struct {
                uint32_t arch;
                const char *name;
        } table[] = {
                { SCMP_ARCH_X86_64, "SCMP_ARCH_X86_64" }, { SCMP_ARCH_X86, "SCMP_ARCH_X86" },
                { SCMP_ARCH_X32, "SCMP_ARCH_X32" },       { SCMP_ARCH_AARCH64, "SCMP_ARCH_AARCH64" },
                { SCMP_ARCH_ARM, "SCMP_ARCH_ARM" },       { SCMP_ARCH_PPC64LE, "SCMP_ARCH_PPC64LE" },
                { SCMP_ARCH_S390X, "SCMP_ARCH_S390X" },   { SCMP_ARCH_RISCV64, "SCMP_ARCH_RISCV64" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (table[i].arch == arch)
                        return table[i].name;
        return NULL;
}

/* Docker's name for the native architecture in includes/excludes "arches" (Go's GOARCH mapped
 * by moby's goToNative); the brief also accepts the kernel's name. */
static bool docker_arch_is_native(const char *name, uint32_t native) {
        static const struct {
                uint32_t arch;
                const char *names[2];
        } table[] = {
                { SCMP_ARCH_X86_64, { "amd64", "x86_64" } },   { SCMP_ARCH_X86, { "x86", NULL } },
                { SCMP_ARCH_AARCH64, { "arm64", "aarch64" } }, { SCMP_ARCH_ARM, { "arm", NULL } },
                { SCMP_ARCH_PPC64LE, { "ppc64le", NULL } },    { SCMP_ARCH_PPC64, { "ppc64", NULL } },
                { SCMP_ARCH_S390X, { "s390x", NULL } },        { SCMP_ARCH_S390, { "s390", NULL } },
                { SCMP_ARCH_MIPS64, { "mips64", NULL } },      { SCMP_ARCH_MIPSEL64, { "mips64le", NULL } },
                { SCMP_ARCH_RISCV64, { "riscv64", NULL } },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (table[i].arch == native)
                        for (size_t j = 0; j < 2; j++)
                                if (table[i].names[j] && streq(table[i].names[j], name))
                                        return true;
        return false;
}

enum {
        ACT_NO_ERRNO = 0,
        ACT_ERRNO_MAX_4094, /* SCMP_ACT_ERRNO: libseccomp 2.5 takes 0..4094 (the kernel caps at 4095) */
        ACT_DATA_MAX_65535, /* SCMP_ACT_TRACE: 16 bits handed to the tracer */
};

static const struct {
        const char *name;
        uint32_t action; /* with data 0 */
        int data;
} actions[] = {
        { "SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD, ACT_NO_ERRNO },
        { "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, ACT_NO_ERRNO },
        { "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, ACT_NO_ERRNO },
        { "SCMP_ACT_TRAP", SCMP_ACT_TRAP, ACT_NO_ERRNO },
        { "SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0), ACT_ERRNO_MAX_4094 },
        { "SCMP_ACT_TRACE", SCMP_ACT_TRACE(0), ACT_DATA_MAX_65535 },
        { "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, ACT_NO_ERRNO },
        { "SCMP_ACT_LOG", SCMP_ACT_LOG, ACT_NO_ERRNO },
        { "SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY, ACT_NO_ERRNO }, /* only with spec->listener */
};

static const struct {
        const char *name;
        enum scmp_compare op;
} operators[] = {
        { "SCMP_CMP_NE", SCMP_CMP_NE },
        { "SCMP_CMP_LT", SCMP_CMP_LT },
        { "SCMP_CMP_LE", SCMP_CMP_LE },
        { "SCMP_CMP_EQ", SCMP_CMP_EQ },
        { "SCMP_CMP_GE", SCMP_CMP_GE },
        { "SCMP_CMP_GT", SCMP_CMP_GT },
        { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

static const struct {
        const char *name;
        unsigned flag;
} filter_flags[] = {
        { "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
        { "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
        { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
};

int zp_oci_op_from_name(const char *name, enum scmp_compare *ret) {
        for (size_t i = 0; i < ELEMENTSOF(operators); i++)
                if (streq(operators[i].name, name)) {
                        *ret = operators[i].op;
                        return 0;
                }
        return -EINVAL;
}

/* "EPERM" to 1 (podman's "errno"/"defaultErrno" fields); 0 if unknown. */
static int errno_from_name(const char *name) {
        for (int i = 1; i < 4096; i++) {
                const char *n = strerrorname_np(i);
                if (n && streq(n, name))
                        return i;
        }
        return 0;
}

static int add_arch(struct zp_json_loader *l, struct zp_oci_spec *s, uint32_t arch, const char *loc) {
        for (size_t i = 0; i < s->n_arches; i++)
                if (s->arches[i] == arch)
                        return 0;
        if (s->n_arches >= ZP_PROFILE_MAX_ARCHES)
                return zp_json_fail(l, -E2BIG, loc, "more than %d architectures", ZP_PROFILE_MAX_ARCHES);
        s->arches[s->n_arches++] = arch;
        return 0;
}

/* action + errnoRet (+ podman's errno name) of one object: a rule, or the top level with the
 * "default" keys. */
static int parse_action(struct zp_json_loader *l, const struct zp_oci_spec *s, json_object *o, const char *loc,
                        const char *action_key, const char *ret_key, const char *name_key, uint32_t *ret) {
        char loc_a[PJ_LOC_MAX], loc_r[PJ_LOC_MAX], loc_n[PJ_LOC_MAX], q[PJ_QUOTE_MAX];
        json_object *va = zp_json_field(o, action_key), *vr = zp_json_field(o, ret_key),
                    *vn = zp_json_field(o, name_key);
        const char *name, *errno_name;
        uint64_t data = EPERM; /* runc and crun: ERRNO and TRACE without errnoRet mean EPERM */
        size_t i;
        int r;

        zp_json_loc_key(loc_a, loc, action_key);
        zp_json_loc_key(loc_r, loc, ret_key);
        zp_json_loc_key(loc_n, loc, name_key);
        if (!va)
                return zp_json_fail(l, -EINVAL, loc, "missing \"%s\"", action_key);
        r = zp_json_get_string(l, va, loc_a, &name);
        if (r < 0)
                return r;
        if (streq(name, "SCMP_ACT_NOTIFY")) {
                r = zp_oci_check_notify(l, s, loc_a, streq(action_key, "defaultAction"));
                if (r < 0)
                        return r;
        }
        for (i = 0; i < ELEMENTSOF(actions); i++)
                if (streq(actions[i].name, name))
                        break;
        if (i == ELEMENTSOF(actions))
                return zp_json_fail(l, -EINVAL, loc_a, "unknown action %s", zp_json_quote(name, q));

        if ((vr || vn) && actions[i].data == ACT_NO_ERRNO)
                return zp_json_fail(l, -EINVAL, vr ? loc_r : loc_n,
                                    "only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno value, not %s", name);
        if (vn) {
                int e;
                r = zp_json_get_string(l, vn, loc_n, &errno_name);
                if (r < 0)
                        return r;
                e = errno_from_name(errno_name);
                if (e == 0)
                        return zp_json_fail(l, -EINVAL, loc_n, "unknown errno name %s", zp_json_quote(errno_name, q));
                data = (uint64_t) e;
        }
        if (vr) {
                uint64_t v;
                r = zp_json_get_uint(l, vr, loc_r, actions[i].data == ACT_ERRNO_MAX_4094 ? 4094 : 65535, &v);
                if (r < 0)
                        return r;
                if (vn && v != data)
                        return zp_json_fail(l, -EINVAL, loc_r, "%" PRIu64 " disagrees with %s %s", v, name_key,
                                            zp_json_quote(errno_name, q));
                data = v;
        }
        if (actions[i].data == ACT_NO_ERRNO)
                *ret = actions[i].action;
        else
                *ret = actions[i].action | (uint32_t) (data & 0xffff);
        return 0;
}

static int parse_kernel_version(struct zp_json_loader *l, json_object *v, const char *loc, unsigned *ret_major,
                                unsigned *ret_minor) {
        char q[PJ_QUOTE_MAX];
        const char *s;
        unsigned major = 0, minor = 0;
        int n = 0, r;

        r = zp_json_get_string(l, v, loc, &s);
        if (r < 0)
                return r;
        /* Docker's KernelVersion: "<kernel>.<major>", e.g. "4.8". */
        if (!isdigit((unsigned char) s[0]) || sscanf(s, "%5u.%5u%n", &major, &minor, &n) != 2 || s[n] != '\0' ||
            (major == 0 && minor == 0))
                return zp_json_fail(l, -EINVAL, loc, "%s is not a kernel version like \"4.8\"", zp_json_quote(s, q));
        *ret_major = major;
        *ret_minor = minor;
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * includes/excludes */

struct filter_state {
        const struct zp_oci_spec *spec;
        bool any, all; /* over the conditions seen so far */
        bool match;    /* "arches": one entry names the native architecture */
};

static void condition(struct filter_state *f, bool holds) {
        f->any = f->any || holds;
        f->all = f->all && holds;
}

static int filter_arch(struct zp_json_loader *l, const char *s, const char *loc, void *userdata) {
        struct filter_state *f = userdata;

        f->match = f->match || docker_arch_is_native(s, f->spec->native);
        return 0;
}

static int filter_cap(struct zp_json_loader *l, const char *s, const char *loc, void *userdata) {
        struct filter_state *f = userdata;
        unsigned cap;

        /* Docker compares names with the bounding set; a name libcap does not know cannot be in
         * ours, so it counts as not kept (a newer Docker file still loads). */
        condition(f, zp_cap_from_name(s, &cap) >= 0 && (f->spec->caps_keep & (UINT64_C(1) << cap)));
        return 0;
}

/* includes/excludes: true when every given condition holds (includes) or any holds (excludes). */
static int parse_filter(struct zp_json_loader *l, const struct zp_oci_spec *s, json_object *o, const char *loc,
                        bool is_include, bool *ret_pass) {
        static const char *const keys[] = { "caps", "arches", "minKernel", NULL };
        struct filter_state f = { .spec = s, .all = true };
        char loc_k[PJ_LOC_MAX];
        json_object *v;
        size_t n;
        int r;

        r = zp_json_object(l, o, loc, keys);
        if (r < 0)
                return r;

        r = zp_json_string_array(l, o, loc, "arches", ZP_PROFILE_MAX_LIST, filter_arch, &f, &n);
        if (r < 0)
                return r;
        /* Docker: an empty list is no condition. */
        if (n > 0)
                condition(&f, f.match);

        r = zp_json_string_array(l, o, loc, "caps", ZP_PROFILE_MAX_LIST, filter_cap, &f, NULL);
        if (r < 0)
                return r;

        v = zp_json_field(o, "minKernel");
        if (v) {
                unsigned major = 0, minor = 0;
                zp_json_loc_key(loc_k, loc, "minKernel");
                r = parse_kernel_version(l, v, loc_k, &major, &minor);
                if (r < 0)
                        return r;
                condition(&f, s->kernel_major > major || (s->kernel_major == major && s->kernel_minor >= minor));
        }

        *ret_pass = is_include ? f.all : !f.any;
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * syscalls[] */

static bool syscall_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > SYSCALL_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(isalnum((unsigned char) s[i]) || s[i] == '_'))
                        return false;
        return true;
}

static int add_name(struct zp_json_loader *l, const char *s, const char *loc, void *userdata) {
        struct zp_oci_rule *rule = userdata;
        char q[PJ_QUOTE_MAX];

        if (!syscall_name_valid(s))
                return zp_json_fail(l, -EINVAL, loc, "%s is not a syscall name", zp_json_quote(s, q));
        rule->names[rule->n_names++] = s;
        return 0;
}

static int parse_names(struct zp_json_loader *l, struct zp_oci_spec *s, json_object *o, const char *loc,
                       struct zp_oci_rule *rule) {
        json_object *names = zp_json_field(o, "names"), *name = zp_json_field(o, "name");
        char loc_k[PJ_LOC_MAX];
        const char *nm;
        size_t n = 1;
        int r;

        /* Docker's older single "name" and "names" exclude each other. */
        if (names && name)
                return zp_json_fail(l, -EINVAL, loc, "use either \"name\" or \"names\", not both");
        if (!names && !name)
                return zp_json_fail(l, -EINVAL, loc, "missing \"names\"");
        zp_json_loc_key(loc_k, loc, names ? "names" : "name");
        if (names) {
                r = zp_json_get_array(l, names, loc_k, ZP_PROFILE_MAX_NAMES, &n);
                if (r < 0)
                        return r;
                if (n == 0)
                        return zp_json_fail(l, -EINVAL, loc_k, "no syscall names");
        }
        if (s->n_names + n > ZP_PROFILE_MAX_NAMES)
                return zp_json_fail(l, -E2BIG, loc_k, "more than %d syscall names in the file", ZP_PROFILE_MAX_NAMES);
        rule->names = calloc(n, sizeof(char *));
        if (!rule->names)
                return -ENOMEM;
        s->n_names += n;
        if (names)
                return zp_json_string_array(l, o, loc, "names", ZP_PROFILE_MAX_NAMES, add_name, rule, NULL);
        r = zp_json_get_string(l, name, loc_k, &nm);
        if (r < 0)
                return r;
        return add_name(l, nm, loc_k, rule);
}

static int parse_arg(struct zp_json_loader *l, json_object *a, const char *loc, struct zp_oci_arg *arg) {
        static const char *const keys[] = { "index", "value", "valueTwo", "op", NULL };
        char loc_f[PJ_LOC_MAX], q[PJ_QUOTE_MAX];
        json_object *f;
        uint64_t idx;
        const char *op;
        int r;

        r = zp_json_object(l, a, loc, keys);
        if (r >= 0)
                r = zp_json_require(l, a, loc, "index", loc_f, &f);
        if (r >= 0)
                r = zp_json_get_uint(l, f, loc_f, 5, &idx);
        if (r < 0)
                return r;
        arg->index = (unsigned) idx;

        r = zp_json_require_string(l, a, loc, "op", loc_f, &op);
        if (r < 0)
                return r;
        if (zp_oci_op_from_name(op, &arg->op) < 0)
                return zp_json_fail(l, -EINVAL, loc_f, "unknown operator %s", zp_json_quote(op, q));

        /* Go reads a missing value as 0; so do we. */
        r = zp_json_optional_uint(l, a, loc, "value", UINT64_MAX, loc_f, &arg->value);
        if (r >= 0)
                r = zp_json_optional_uint(l, a, loc, "valueTwo", UINT64_MAX, loc_f, &arg->value_two);
        if (r < 0)
                return r;
        /* libseccomp ignores it for other operators: a second value there is a misunderstanding,
         * not a rule. (loc_f is valueTwo's: a value other than 0 was given.) */
        if (arg->value_two != 0 && arg->op != SCMP_CMP_MASKED_EQ)
                return zp_json_fail(l, -EINVAL, loc_f, "only SCMP_CMP_MASKED_EQ uses valueTwo");
        return 0;
}

static int parse_rule(struct zp_json_loader *l, struct zp_oci_spec *s, json_object *o, const char *loc,
                      struct zp_oci_rule *rule) {
        static const char *const keys[] = { "names", "name",    "action",   "errnoRet", "errno",
                                            "args",  "comment", "includes", "excludes", NULL };
        char loc_k[PJ_LOC_MAX], loc_i[PJ_LOC_MAX];
        const char *comment;
        json_object *v;
        bool pass = true;
        size_t n;
        int r;

        r = zp_json_object(l, o, loc, keys);
        if (r < 0)
                return r;
        r = parse_names(l, s, o, loc, rule);
        if (r < 0)
                return r;
        r = parse_action(l, s, o, loc, "action", "errnoRet", "errno", &rule->action);
        if (r < 0)
                return r;
        r = zp_json_optional_string(l, o, loc, "comment", &comment);
        if (r < 0)
                return r;

        r = zp_json_optional_array(l, o, loc, "args", ZP_PROFILE_MAX_ARGS, loc_k, &v, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                zp_json_loc_index(loc_i, loc_k, i);
                r = parse_arg(l, json_object_array_get_idx(v, i), loc_i, &rule->args[i]);
                if (r < 0)
                        return r;
                rule->n_args++;
        }

        /* Evaluate both, so that errors in either are found on every machine. */
        for (int inc = 1; inc >= 0; inc--) {
                const char *key = inc ? "includes" : "excludes";
                bool holds;

                v = zp_json_field(o, key);
                if (!v)
                        continue;
                zp_json_loc_key(loc_k, loc, key);
                r = parse_filter(l, s, v, loc_k, inc, &holds);
                if (r < 0)
                        return r;
                pass = pass && holds;
        }
        rule->active = pass;
        return rule->action == SCMP_ACT_NOTIFY && pass ? zp_oci_note_notify(l, s, rule, loc) : 0;
}

/* ---------------------------------------------------------------------------------------------
 * architectures, archMap, flags */

struct arch_list {
        struct zp_oci_spec *spec;
        bool use; /* false: check the names only (archMap entries of other architectures) */
};

static int list_arch(struct zp_json_loader *l, const char *name, const char *loc, void *userdata) {
        struct arch_list *a = userdata;
        char q[PJ_QUOTE_MAX];
        uint32_t arch;

        if (!a->use)
                return 0;
        arch = arch_from_name(name);
        if (arch == 0)
                return zp_json_fail(l, -EINVAL, loc, "unknown architecture %s", zp_json_quote(name, q));
        a->spec->native_listed = a->spec->native_listed || arch == a->spec->native;
        return add_arch(l, a->spec, arch, loc);
}

static int parse_arch_map_entry(struct zp_json_loader *l, struct zp_oci_spec *s, json_object *e, const char *loc) {
        static const char *const keys[] = { "architecture", "subArchitectures", NULL };
        char loc_j[PJ_LOC_MAX];
        struct arch_list a = { .spec = s };
        const char *name;
        int r;

        r = zp_json_object(l, e, loc, keys);
        if (r < 0)
                return r;
        r = zp_json_require_string(l, e, loc, "architecture", loc_j, &name);
        if (r < 0)
                return r;
        /* Docker uses only the entry of the native architecture; the others may name
         * architectures this libseccomp does not know (LOONGARCH64 here). */
        a.use = arch_from_name(name) == s->native;
        s->native_listed = s->native_listed || a.use;

        return zp_json_string_array(l, e, loc, "subArchitectures", ZP_PROFILE_MAX_LIST, list_arch, &a, NULL);
}

static int parse_arches(struct zp_json_loader *l, json_object *o, const char *loc, struct zp_oci_spec *s) {
        char loc_k[PJ_LOC_MAX], loc_i[PJ_LOC_MAX];
        json_object *list = zp_json_field(o, "architectures"), *map = zp_json_field(o, "archMap");
        struct arch_list a = { .spec = s, .use = true };
        size_t n;
        int r;

        /* libseccomp's filter always holds the native architecture (runc and crun keep it too). */
        r = add_arch(l, s, s->native, loc);
        if (r < 0)
                return r;

        if (list && map)
                return zp_json_fail(l, -EINVAL, loc, "use either \"architectures\" or \"archMap\", not both");
        if (list)
                return zp_json_string_array(l, o, loc, "architectures", ZP_PROFILE_MAX_LIST, list_arch, &a, NULL);
        r = zp_json_optional_array(l, o, loc, "archMap", ZP_PROFILE_MAX_LIST, loc_k, &map, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                zp_json_loc_index(loc_i, loc_k, i);
                r = parse_arch_map_entry(l, s, json_object_array_get_idx(map, i), loc_i);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_flag(struct zp_json_loader *l, const char *f, const char *loc, void *userdata) {
        struct zp_oci_spec *s = userdata;
        char q[PJ_QUOTE_MAX];

        int r = zp_oci_listener_flag(l, s, f, loc);

        if (r != 0)
                return r < 0 ? r : 0;
        for (size_t j = 0; j < ELEMENTSOF(filter_flags); j++)
                if (streq(filter_flags[j].name, f)) {
                        s->flags |= filter_flags[j].flag;
                        return 0;
                }
        return zp_json_fail(l, -EINVAL, loc, "unknown flag %s", zp_json_quote(f, q));
}

/* ---------------------------------------------------------------------------------------------
 * The seccomp object */

void zp_oci_spec_init(struct zp_oci_spec *s, uint64_t caps_keep) {
        struct utsname u;

        *s = (struct zp_oci_spec){ .caps_keep = caps_keep, .native = seccomp_arch_native() };
        if (uname(&u) == 0)
                (void) sscanf(u.release, "%u.%u", &s->kernel_major, &s->kernel_minor);
}

void zp_oci_spec_done(struct zp_oci_spec *s) {
        for (size_t i = 0; i < s->n_rules; i++)
                free(s->rules[i].names);
        free(s->rules);
        s->rules = NULL;
        s->n_rules = 0;
}

int zp_oci_parse_seccomp(struct zp_json_loader *l, json_object *o, const char *loc, struct zp_oci_spec *s) {
        static const char *const keys[] = {
                "defaultAction", "defaultErrnoRet", "defaultErrno",     "architectures", "archMap", "syscalls",
                "flags",         "listenerPath",    "listenerMetadata", "comment",       NULL
        };
        char loc_k[PJ_LOC_MAX], loc_i[PJ_LOC_MAX];
        const char *str;
        json_object *v;
        size_t n;
        int r;

        s->loc = loc;
        r = zp_json_object(l, o, loc, keys);
        if (r < 0)
                return r;
        r = parse_action(l, s, o, loc, "defaultAction", "defaultErrnoRet", "defaultErrno", &s->default_action);
        if (r < 0)
                return r;
        r = parse_arches(l, o, loc, s);
        if (r < 0)
                return r;

        r = zp_json_string_array(l, o, loc, "flags", ZP_PROFILE_MAX_LIST, add_flag, s, NULL);
        if (r < 0)
                return r;

        r = zp_oci_parse_listener_fields(l, o, loc, s);
        if (r < 0)
                return r;
        r = zp_json_optional_string(l, o, loc, "comment", &str);
        if (r < 0)
                return r;

        r = zp_json_optional_array(l, o, loc, "syscalls", ZP_PROFILE_MAX_RULES, loc_k, &v, &n);
        if (r < 0)
                return r;
        if (!v)
                return zp_oci_finish_listener(l, s);
        s->rules = calloc(n ? n : 1, sizeof(struct zp_oci_rule));
        if (!s->rules)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct zp_oci_rule *rule = &s->rules[s->n_rules++];
                rule->json_index = i;
                zp_json_loc_index(loc_i, loc_k, i);
                r = parse_rule(l, s, json_object_array_get_idx(v, i), loc_i, rule);
                if (r < 0)
                        return r;
        }
        return zp_oci_finish_listener(l, s);
}
