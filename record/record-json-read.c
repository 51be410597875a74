/* SPDX-License-Identifier: MIT */
/*
 * An OCI/Docker seccomp profile read back into a recorded set (record-json.h), and the files.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record-json.h"
#include "util.h"

__attribute__((format(printf, 3, 4))) static int fail(char **ret_error, int r, const char *fmt, ...) {
        va_list ap;

        if (ret_error) {
                va_start(ap, fmt);
                if (vasprintf(ret_error, fmt, ap) < 0)
                        *ret_error = NULL;
                va_end(ap);
        }
        return r;
}

/* "SCMP_ARCH_X86_64" to its token; 0 for a name libseccomp does not know. */
static uint32_t arch_from_name(const char *name) {
        char low[32];
        size_t i;

        if (strncmp(name, "SCMP_ARCH_", 10) != 0)
                return 0;
        name += 10;
        for (i = 0; name[i] && i < sizeof(low) - 1; i++)
                low[i] = (char) tolower((unsigned char) name[i]);
        low[i] = 0;
        return seccomp_arch_resolve_name(low);
}

static int read_arches(json_object *o, uint32_t *arches, size_t *n, char **ret_error) {
        json_object *a = json_object_object_get(o, "architectures"), *map = json_object_object_get(o, "archMap");

        *n = 0;
        if (a && json_object_is_type(a, json_type_array))
                for (size_t i = 0; i < json_object_array_length(a) && *n < REC_MAX_ARCHES; i++) {
                        const char *name = json_object_get_string(json_object_array_get_idx(a, i));
                        uint32_t t = name ? arch_from_name(name) : 0;
                        if (!t)
                                return fail(ret_error, -EINVAL, "architectures[%zu]: unknown architecture", i);
                        arches[(*n)++] = t;
                }
        if (map && json_object_is_type(map, json_type_array))
                for (size_t i = 0; i < json_object_array_length(map); i++) {
                        json_object *e = json_object_array_get_idx(map, i), *sub;
                        const char *name = json_object_get_string(json_object_object_get(e, "architecture"));
                        if (name && arch_from_name(name) && *n < REC_MAX_ARCHES)
                                arches[(*n)++] = arch_from_name(name);
                        sub = json_object_object_get(e, "subArchitectures");
                        if (!json_object_is_type(sub, json_type_array))
                                sub = NULL; /* null, as Docker writes it for none */
                        for (size_t k = 0; sub && k < json_object_array_length(sub) && *n < REC_MAX_ARCHES; k++) {
                                const char *sn = json_object_get_string(json_object_array_get_idx(sub, k));
                                if (sn && arch_from_name(sn))
                                        arches[(*n)++] = arch_from_name(sn);
                        }
                }
        if (*n == 0)
                arches[(*n)++] = seccomp_arch_native();
        return 0;
}

/* The one argument condition of an allowed clone, socket or personality rule, folded into s. */
static int read_arg_rule(struct rec_set *s, const uint32_t *arches, size_t n_arches, const char *name,
                         json_object *args, size_t ri, char **ret_error) {
        json_object *a;
        const char *op;
        uint64_t value, two, idx;
        int r;

        if (json_object_array_length(args) != 1)
                return fail(ret_error, -EOPNOTSUPP, "syscalls[%zu]: a recording holds one argument condition", ri);
        a = json_object_array_get_idx(args, 0);
        op = json_object_get_string(json_object_object_get(a, "op"));
        idx = json_object_get_uint64(json_object_object_get(a, "index"));
        value = json_object_get_uint64(json_object_object_get(a, "value"));
        two = json_object_get_uint64(json_object_object_get(a, "valueTwo"));
        if (!op)
                return fail(ret_error, -EINVAL, "syscalls[%zu].args[0]: no op", ri);
        for (size_t k = 0; k < n_arches; k++) {
                int nr = seccomp_syscall_resolve_name_arch(arches[k], name);
                uint64_t argv[6] = {};

                if (nr < 0)
                        continue;
                if (streq(name, "clone") && streq(op, "SCMP_CMP_MASKED_EQ") && two == 0 && idx <= 1 &&
                    (value & ~REC_CLONE_NS_MASK) == 0) {
                        /* allowed: the namespace flags outside the forbidden ones; rec_set_add
                         * reads the argument of the architecture's own order */
                        argv[0] = argv[1] = REC_CLONE_NS_MASK & ~value;
                } else if ((streq(name, "socket") || streq(name, "personality")) && streq(op, "SCMP_CMP_EQ") &&
                           idx == 0)
                        argv[0] = value;
                else
                        return fail(ret_error, -EOPNOTSUPP,
                                    "syscalls[%zu]: %s with %s on argument %" PRIu64
                                    " is not a condition a recording holds",
                                    ri, name, op, idx);
                r = rec_set_add(s, arches[k], (uint32_t) nr, argv);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int read_rule(struct rec_set *s, const uint32_t *arches, size_t n_arches, json_object *rule, size_t ri,
                     char **ret_error) {
        json_object *names = json_object_object_get(rule, "names"), *args = json_object_object_get(rule, "args");
        const char *action = json_object_get_string(json_object_object_get(rule, "action"));
        int r;

        for (size_t i = 0; i < 2; i++) {
                json_object *c = json_object_object_get(rule, i == 0 ? "includes" : "excludes");
                if (c && json_object_is_type(c, json_type_object) && json_object_object_length(c) > 0)
                        return fail(ret_error, -EOPNOTSUPP, "syscalls[%zu]: %s are not part of a recording", ri,
                                    i == 0 ? "includes" : "excludes");
        }
        if (!names || !json_object_is_type(names, json_type_array) || !action)
                return fail(ret_error, -EINVAL, "syscalls[%zu]: needs names and action", ri);
        if (args && !json_object_is_type(args, json_type_array))
                return fail(ret_error, -EINVAL, "syscalls[%zu].args: not an array", ri);
        if (streq(action, "SCMP_ACT_ERRNO") && json_object_array_length(names) == 1 &&
            streq(json_object_get_string(json_object_array_get_idx(names, 0)) ?: "", "clone3"))
                return 0; /* written again, always */
        if (!streq(action, "SCMP_ACT_ALLOW"))
                return fail(ret_error, -EOPNOTSUPP, "syscalls[%zu]: action %s is not part of a recording", ri, action);
        for (size_t i = 0; i < json_object_array_length(names); i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(names, i));
                if (!name)
                        return fail(ret_error, -EINVAL, "syscalls[%zu].names[%zu]: not a string", ri, i);
                if (args && json_object_array_length(args) > 0) {
                        r = read_arg_rule(s, arches, n_arches, name, args, ri, ret_error);
                        if (r < 0)
                                return r;
                        continue;
                }
                for (size_t k = 0; k < n_arches; k++) {
                        int nr = seccomp_syscall_resolve_name_arch(arches[k], name);
                        if (nr < 0)
                                continue; /* not a call of that architecture */
                        r = rec_set_add_any(s, arches[k], (uint32_t) nr);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int rec_json_parse(json_object *o, struct rec_set *s, char **ret_error) {
        uint32_t arches[REC_MAX_ARCHES];
        size_t n_arches;
        json_object *syscalls;
        const char *def;
        int r;

        if (!json_object_is_type(o, json_type_object))
                return fail(ret_error, -EINVAL, "not a JSON object");
        def = json_object_get_string(json_object_object_get(o, "defaultAction"));
        if (!def || !streq(def, "SCMP_ACT_ERRNO"))
                return fail(ret_error, -EOPNOTSUPP, "defaultAction: a recording's is SCMP_ACT_ERRNO, not %s",
                            def ?: "(none)");
        r = read_arches(o, arches, &n_arches, ret_error);
        if (r < 0)
                return r;
        syscalls = json_object_object_get(o, "syscalls");
        if (syscalls && !json_object_is_type(syscalls, json_type_array))
                return fail(ret_error, -EINVAL, "syscalls: not an array");
        for (size_t i = 0; syscalls && i < json_object_array_length(syscalls); i++) {
                r = read_rule(s, arches, n_arches, json_object_array_get_idx(syscalls, i), i, ret_error);
                if (r < 0)
                        return r;
        }
        /* an architecture without any call still belongs to the profile */
        for (size_t k = 0; k < n_arches; k++) {
                r = rec_set_add_arch(s, arches[k]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int rec_json_read_file(const char *path, struct rec_set *s, bool *ret_found, char **ret_error) {
        json_object *o;
        int r;

        if (access(path, F_OK) < 0) {
                if (errno != ENOENT)
                        return fail(ret_error, -errno, "%s: %s", path, strerror(errno));
                *ret_found = false;
                return 0;
        }
        o = json_object_from_file(path);
        if (!o)
                return fail(ret_error, -EINVAL, "%s: %s", path, json_util_get_last_err() ?: "not JSON");
        _cleanup_free_ char *err = NULL;
        r = rec_json_parse(o, s, &err);
        json_object_put(o);
        if (r < 0)
                return fail(ret_error, r, "%s: %s", path, err ?: strerror(-r));
        *ret_found = true;
        return 0;
}

int rec_json_write_file(const char *path, const struct rec_set *s, unsigned *ret_unnamed) {
        _cleanup_free_ char *tmp = NULL;
        json_object *o = NULL;
        const char *text;
        _cleanup_close_ int fd = -EBADF;
        size_t len;
        int r;

        r = rec_json_build(s, &o, ret_unnamed);
        if (r < 0)
                return r;
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE);
        if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
                tmp = NULL;
                r = -ENOMEM;
                goto finish;
        }
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                goto finish;
        }
        len = strlen(text);
        if (write(fd, text, len) != (ssize_t) len || write(fd, "\n", 1) != 1 || fchmod(fd, 0644) < 0 || fsync(fd) < 0 ||
            rename(tmp, path) < 0) {
                r = errno ? -errno : -EIO;
                (void) unlink(tmp);
                goto finish;
        }
        r = 0;
finish:
        json_object_put(o);
        return r;
}
