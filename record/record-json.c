/* SPDX-License-Identifier: MIT */
/*
 * A recorded set as an OCI/Docker seccomp profile and back (record-json.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"
#include "record-json.h"
#include "util.h"

static const char *const filtered_names[] = { "clone", "clone3", "socket", "personality" };

static bool is_filtered_name(const char *n) {
        for (size_t i = 0; i < ELEMENTSOF(filtered_names); i++)
                if (streq(n, filtered_names[i]))
                        return true;
        return false;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int cmp_json_str(const void *a, const void *b) {
        return strcmp(json_object_get_string(*(json_object *const *) a),
                      json_object_get_string(*(json_object *const *) b));
}

static json_object *arg_rule(const char *name, unsigned index, uint64_t value, const char *op) {
        json_object *rule = json_object_new_object(), *names = json_object_new_array(), *args = json_object_new_array(),
                    *arg = json_object_new_object();

        if (!rule || !names || !args || !arg) {
                json_object_put(rule);
                json_object_put(names);
                json_object_put(args);
                json_object_put(arg);
                return NULL;
        }
        json_object_array_add(names, json_object_new_string(name));
        json_object_object_add(rule, "names", names);
        json_object_object_add(rule, "action", json_object_new_string("SCMP_ACT_ALLOW"));
        json_object_object_add(arg, "index", json_object_new_int((int) index));
        json_object_object_add(arg, "value", json_object_new_uint64(value));
        json_object_object_add(arg, "valueTwo", json_object_new_uint64(0));
        json_object_object_add(arg, "op", json_object_new_string(op));
        json_object_array_add(args, arg);
        json_object_object_add(rule, "args", args);
        return rule;
}

/* The sorted, unique names of s's calls; which of the filtered ones were seen, in *seen. */
static int collect_names(const struct rec_set *s, char ***ret, size_t *ret_n, bool seen[4], unsigned *ret_unnamed) {
        _cleanup_free_ char **names = calloc(s->n_calls + 1, sizeof(char *));
        size_t n = 0;
        unsigned unnamed = 0;

        if (!names)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_calls; i++) {
                char *name = rec_syscall_name(s->calls[i].arch, s->calls[i].nr);
                if (!name) {
                        unnamed++;
                        continue;
                }
                names[n++] = name;
        }
        qsort(names, n, sizeof(char *), cmp_str);
        size_t u = 0;
        for (size_t i = 0; i < n; i++) {
                if (u > 0 && streq(names[u - 1], names[i])) {
                        free(names[i]);
                        continue;
                }
                names[u++] = names[i];
        }
        for (size_t i = 0; i < ELEMENTSOF(filtered_names); i++)
                seen[i] = false;
        for (size_t i = 0; i < u; i++)
                for (size_t k = 0; k < ELEMENTSOF(filtered_names); k++)
                        if (streq(names[i], filtered_names[k]))
                                seen[k] = true;
        *ret = TAKE_PTR(names);
        *ret_n = u;
        if (ret_unnamed)
                *ret_unnamed = unnamed;
        return 0;
}

/* Whether s holds only s390 architectures (clone's flags are its second argument there), only
 * others (the first), or both (no one index fits: clone is then allowed outright). */
static int clone_flags_index(const struct rec_set *s) {
        bool s390 = false, other = false;

        for (size_t i = 0; i < s->n_arches; i++) {
                if (s->arches[i] == AUDIT_ARCH_S390 || s->arches[i] == AUDIT_ARCH_S390X)
                        s390 = true;
                else
                        other = true;
        }
        return s390 && other ? -1 : s390 ? 1 : 0;
}

/* The argument rules (clone, clone3, socket, personality) appended to syscalls; the filtered
 * calls allowed outright appended to plain instead. */
static int add_arg_rules(const struct rec_set *s, const bool seen[4], json_object *syscalls, json_object *plain) {
        json_object *rule;
        int idx = clone_flags_index(s);

        if (seen[0]) {
                uint64_t forbidden = REC_CLONE_NS_MASK & ~s->clone_ns;
                if (s->clone_any || idx < 0 || forbidden == 0)
                        json_object_array_add(plain, json_object_new_string("clone"));
                else {
                        rule = arg_rule("clone", (unsigned) idx, forbidden, "SCMP_CMP_MASKED_EQ");
                        if (!rule)
                                return -ENOMEM;
                        json_object_array_add(syscalls, rule);
                }
        }
        /* clone3 always: its flags sit in memory no filter can read, so it gets ENOSYS and the C
         * library falls back to clone (the recorder answered it the same way). */
        rule = json_object_new_object();
        json_object *names = json_object_new_array();
        if (!rule || !names) {
                json_object_put(rule);
                json_object_put(names);
                return -ENOMEM;
        }
        json_object_array_add(names, json_object_new_string("clone3"));
        json_object_object_add(rule, "names", names);
        json_object_object_add(rule, "action", json_object_new_string("SCMP_ACT_ERRNO"));
        json_object_object_add(rule, "errnoRet", json_object_new_int(ENOSYS));
        json_object_array_add(syscalls, rule);

        if (seen[2]) {
                if (s->socket_any)
                        json_object_array_add(plain, json_object_new_string("socket"));
                else
                        for (unsigned f = 0; f < 64; f++) {
                                if (!(s->socket_families & (UINT64_C(1) << f)))
                                        continue;
                                rule = arg_rule("socket", 0, f, "SCMP_CMP_EQ");
                                if (!rule)
                                        return -ENOMEM;
                                json_object_array_add(syscalls, rule);
                        }
        }
        if (seen[3]) {
                if (s->personality_any)
                        json_object_array_add(plain, json_object_new_string("personality"));
                else
                        for (size_t i = 0; i < s->n_personas; i++) {
                                rule = arg_rule("personality", 0, s->personas[i], "SCMP_CMP_EQ");
                                if (!rule)
                                        return -ENOMEM;
                                json_object_array_add(syscalls, rule);
                        }
        }
        return 0;
}

int rec_json_build(const struct rec_set *s, json_object **ret, unsigned *ret_unnamed) {
        char **names = NULL;
        size_t n = 0;
        bool seen[4];
        json_object *o = NULL, *arches, *syscalls, *plain, *allow;
        int r;

        r = collect_names(s, &names, &n, seen, ret_unnamed);
        if (r < 0)
                return r;
        o = json_object_new_object();
        arches = json_object_new_array();
        syscalls = json_object_new_array();
        plain = json_object_new_array();
        allow = json_object_new_object();
        if (!o || !arches || !syscalls || !plain || !allow) {
                json_object_put(arches);
                json_object_put(syscalls);
                json_object_put(plain);
                json_object_put(allow);
                r = -ENOMEM;
                goto finish;
        }
        json_object_object_add(o, "defaultAction", json_object_new_string("SCMP_ACT_ERRNO"));
        json_object_object_add(o, "defaultErrnoRet", json_object_new_int(EPERM));
        for (size_t i = 0; i < s->n_arches; i++) {
                const char *a = zp_profile_arch_name(s->arches[i]);
                if (a)
                        json_object_array_add(arches, json_object_new_string(a));
        }
        json_object_object_add(o, "architectures", arches);
        for (size_t i = 0; i < n; i++)
                if (!is_filtered_name(names[i]))
                        json_object_array_add(plain, json_object_new_string(names[i]));
        json_object_object_add(allow, "names", plain);
        json_object_object_add(allow, "action", json_object_new_string("SCMP_ACT_ALLOW"));
        json_object_array_add(syscalls, allow);
        json_object_object_add(o, "syscalls", syscalls);
        r = add_arg_rules(s, seen, syscalls, plain);
        if (r < 0)
                goto finish;
        /* the plain names sorted again, the filtered ones allowed outright included */
        json_object_array_sort(plain, cmp_json_str);
        *ret = TAKE_PTR(o);
finish:
        json_object_put(o);
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return r;
}
