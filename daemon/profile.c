/* SPDX-License-Identifier: MIT */
/*
 * Profiles: parse a Docker/OCI seccomp file or a zygote profile, decide which rules apply the way
 * Docker does (includes/excludes against the kept capabilities, the native architecture and the
 * running kernel), add them to libseccomp the way runc and crun do, and export the program once,
 * in libseccomp's binary-tree layout. See profile.h for the contract.
 *
 * Parsing validates the whole file, including rules that end up excluded, so that a profile fails
 * or loads the same way on every machine. Every message names the file and the JSON location.
 */

#include "profile.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "bpf.h"
#include "sha256.h"
#include "util.h"

#define LOC_MAX 192          /* a JSON location in messages, e.g. seccomp.syscalls[12].args[0].op */
#define JSON_DEPTH 16        /* deepest legitimate nesting is 6 */
#define SYSCALL_NAME_MAX 64

#ifndef PR_CAPBSET_DROP_MASK
#define PR_CAPBSET_DROP_MASK 82 /* RFC, see DESIGN.md: only used to probe the filter */
#endif

/* ---------------------------------------------------------------------------------------------
 * Messages */

struct loader {
        const char *path;    /* the profile file */
        const char *file;    /* the file being read: path, or the Docker/OCI file it refers to */
        char *error;         /* the first failure, malloc'd */
        uint64_t caps_keep;  /* for includes/excludes "caps" */
        uint32_t native;     /* seccomp_arch_native() */
        unsigned kernel_major, kernel_minor; /* running kernel, for "minKernel" */
};

static int fail(struct loader *l, int err, const char *loc, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int fail(struct loader *l, int err, const char *loc, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int r;

        if (l->error) /* keep the first, most precise message */
                return err;

        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                return err;

        if (l->file != l->path)
                r = asprintf(&l->error, "%s: seccomp file %s: %s%s%s", l->path, l->file, loc ? loc : "",
                             loc && *loc ? ": " : "", msg);
        else
                r = asprintf(&l->error, "%s: %s%s%s", l->path, loc ? loc : "", loc && *loc ? ": " : "", msg);
        if (r < 0)
                l->error = NULL;
        return err;
}

/* A string from the file, quoted for a message: escaped and cut at 64 bytes. */
#define QUOTE_MAX (64 * 4 + 8)
static const char *quote(const char *s, char buf[static QUOTE_MAX]) {
        size_t n = 0;

        buf[n++] = '"';
        for (size_t i = 0; s[i]; i++) {
                unsigned char c = (unsigned char) s[i];
                if (i >= 64) {
                        memcpy(buf + n, "...", 3);
                        n += 3;
                        break;
                }
                if (c == '"' || c == '\\')
                        buf[n++] = '\\', buf[n++] = (char) c;
                else if (c < 0x20 || c >= 0x7f)
                        n += (size_t) snprintf(buf + n, 5, "\\x%02x", c);
                else
                        buf[n++] = (char) c;
        }
        buf[n++] = '"';
        buf[n] = '\0';
        return buf;
}

/* Locations are built by bounded copies: a location cut at LOC_MAX still reads fine. */
static void loc_join(char out[static LOC_MAX], const char *parent, const char *sep, const char *tail) {
        size_t n = 0;

        for (const char *part[] = { parent, sep, tail }, **p = part; p < part + 3; p++)
                for (const char *c = *p; c && *c && n < LOC_MAX - 1; c++)
                        out[n++] = *c;
        out[n] = '\0';
}

static void loc_key(char out[static LOC_MAX], const char *parent, const char *key) {
        loc_join(out, parent, parent && *parent ? "." : "", key);
}

static void loc_index(char out[static LOC_MAX], const char *parent, size_t i) {
        char idx[32];

        snprintf(idx, sizeof(idx), "[%zu]", i);
        loc_join(out, parent, "", idx);
}

/* ---------------------------------------------------------------------------------------------
 * JSON access with precise errors */

/* The value of key, or NULL when absent or JSON null (Docker's Go structs read null as absent). */
static json_object *field(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

static int check_keys(struct loader *l, json_object *o, const char *loc, const char *const *allowed) {
        char q[QUOTE_MAX];

        json_object_object_foreach(o, key, val) {
                bool ok = false;
                (void) val;
                for (size_t i = 0; allowed[i]; i++)
                        if (streq(allowed[i], key)) {
                                ok = true;
                                break;
                        }
                if (!ok)
                        return fail(l, -EINVAL, loc, "unknown field %s", quote(key, q));
        }
        return 0;
}

static int want_object(struct loader *l, json_object *v, const char *loc) {
        if (!json_object_is_type(v, json_type_object))
                return fail(l, -EINVAL, loc, "expected an object, got %s", json_type_to_name(json_object_get_type(v)));
        return 0;
}

static int get_array(struct loader *l, json_object *v, const char *loc, size_t max, size_t *ret_n) {
        size_t n;

        if (!json_object_is_type(v, json_type_array))
                return fail(l, -EINVAL, loc, "expected an array, got %s", json_type_to_name(json_object_get_type(v)));
        n = json_object_array_length(v);
        if (n > max)
                return fail(l, -E2BIG, loc, "%zu entries, more than the %zu allowed", n, max);
        *ret_n = n;
        return 0;
}

static int get_string(struct loader *l, json_object *v, const char *loc, const char **ret) {
        const char *s;

        if (!json_object_is_type(v, json_type_string))
                return fail(l, -EINVAL, loc, "expected a string, got %s", json_type_to_name(json_object_get_type(v)));
        s = json_object_get_string(v);
        if (strlen(s) != (size_t) json_object_get_string_len(v))
                return fail(l, -EINVAL, loc, "string contains a NUL character");
        *ret = s;
        return 0;
}

/* A non-negative integer up to max. json-c keeps integers as int64 or uint64; a negative value
 * reads as 0 through get_uint64, so the sign is checked through get_int64. Literals beyond
 * 2^64-1 were rejected by scan_numbers before we get here. */
static int get_uint(struct loader *l, json_object *v, const char *loc, uint64_t max, uint64_t *ret) {
        uint64_t u;

        if (!json_object_is_type(v, json_type_int))
                return fail(l, -EINVAL, loc, "expected an integer, got %s", json_type_to_name(json_object_get_type(v)));
        if (json_object_get_int64(v) < 0)
                return fail(l, -ERANGE, loc, "%" PRId64 " is negative", json_object_get_int64(v));
        u = json_object_get_uint64(v);
        if (u > max)
                return fail(l, -ERANGE, loc, "%" PRIu64 " is out of range (0..%" PRIu64 ")", u, max);
        *ret = u;
        return 0;
}

static int get_bool(struct loader *l, json_object *v, const char *loc, bool *ret) {
        if (!json_object_is_type(v, json_type_boolean))
                return fail(l, -EINVAL, loc, "expected true or false, got %s", json_type_to_name(json_object_get_type(v)));
        *ret = json_object_get_boolean(v);
        return 0;
}

static void offset_to_line(const char *data, size_t size, size_t off, unsigned *ret_line, unsigned *ret_col) {
        unsigned line = 1, col = 1;

        for (size_t i = 0; i < off && i < size; i++) {
                if (data[i] == '\n')
                        line++, col = 1;
                else
                        col++;
        }
        *ret_line = line;
        *ret_col = col;
}

/* json-c clamps integer literals beyond 64 bits instead of failing: find them in the text. */
static bool scan_numbers(const char *data, size_t size, size_t *ret_offset) {
        bool in_string = false, escaped = false;

        for (size_t i = 0; i < size; i++) {
                char c = data[i];

                if (in_string) {
                        if (escaped)
                                escaped = false;
                        else if (c == '\\')
                                escaped = true;
                        else if (c == '"')
                                in_string = false;
                        continue;
                }
                if (c == '"') {
                        in_string = true;
                        continue;
                }
                if (c == '-' || (c >= '0' && c <= '9')) {
                        bool neg = c == '-', overflow = false, fraction = false;
                        uint64_t v = 0;
                        size_t j = i + neg;

                        for (; j < size && data[j] >= '0' && data[j] <= '9'; j++) {
                                unsigned d = (unsigned) (data[j] - '0');
                                if (v > (UINT64_MAX - d) / 10)
                                        overflow = true;
                                else
                                        v = v * 10 + d;
                        }
                        for (; j < size && (data[j] == '.' || data[j] == 'e' || data[j] == 'E' ||
                                            data[j] == '+' || data[j] == '-' || (data[j] >= '0' && data[j] <= '9'));
                             j++)
                                fraction = true;
                        if (!fraction && (overflow || (neg && v > (uint64_t) INT64_MAX + 1))) {
                                *ret_offset = i;
                                return false;
                        }
                        i = j - 1;
                }
        }
        return true;
}

static int parse_json(struct loader *l, const char *data, size_t size, json_object **ret) {
        struct json_tokener *tok = NULL;
        json_object *o;
        size_t end, bad;
        unsigned line, col;
        int r;

        if (size > ZY_PROFILE_MAX_FILE_SIZE)
                return fail(l, -EFBIG, NULL, "%zu bytes, more than the %d allowed", size, ZY_PROFILE_MAX_FILE_SIZE);

        tok = json_tokener_new_ex(JSON_DEPTH);
        if (!tok)
                return -ENOMEM;
        /* Strict: no comments, single quotes or trailing commas; RFC 8259 JSON only. */
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        o = json_tokener_parse_ex(tok, data, (int) size);
        end = json_tokener_get_parse_end(tok);
        if (!o) {
                enum json_tokener_error e = json_tokener_get_error(tok);
                offset_to_line(data, size, end, &line, &col);
                r = fail(l, -EINVAL, NULL, "line %u, column %u: %s", line, col,
                         e == json_tokener_continue ? "unexpected end of data" : json_tokener_error_desc(e));
                json_tokener_free(tok);
                return r;
        }
        json_tokener_free(tok);

        /* json-c stops at a NUL byte or after the first value: the rest must be blank. */
        for (size_t i = end; i < size; i++)
                if (!strchr(" \t\r\n", data[i]) || data[i] == '\0') {
                        offset_to_line(data, size, i, &line, &col);
                        json_object_put(o);
                        return fail(l, -EINVAL, NULL, "line %u, column %u: unexpected data after the JSON value",
                                    line, col);
                }
        if (!scan_numbers(data, size, &bad)) {
                offset_to_line(data, size, bad, &line, &col);
                json_object_put(o);
                return fail(l, -ERANGE, NULL, "line %u, column %u: integer out of range", line, col);
        }
        if (!json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return fail(l, -EINVAL, NULL, "top level is not a JSON object");
        }
        *ret = o;
        return 0;
}

/* Reads a regular file of at most ZY_PROFILE_MAX_FILE_SIZE bytes. */
static int read_file(const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t n = 0;

        /* O_NONBLOCK: a FIFO placed where a profile should be must not hang the daemon. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_size > ZY_PROFILE_MAX_FILE_SIZE)
                return -EFBIG;

        /* One byte more than allowed, to see a file that grew since fstat. */
        buf = malloc(ZY_PROFILE_MAX_FILE_SIZE + 2);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, buf + n, ZY_PROFILE_MAX_FILE_SIZE + 1 - n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > ZY_PROFILE_MAX_FILE_SIZE)
                        return -EFBIG;
        }
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Names: capabilities, architectures, actions, operators, errno values */

int zy_cap_from_name(const char *name, unsigned *ret) {
        cap_value_t v;
        char *canon;
        bool same;

        /* libcap also takes lower case and bare numbers; Docker and OCI write "CAP_CHOWN" only. */
        if (!name || strncmp(name, "CAP_", 4) != 0 || strlen(name) > 64)
                return -EINVAL;
        for (const char *p = name; *p; p++)
                if (!(isupper((unsigned char) *p) || isdigit((unsigned char) *p) || *p == '_'))
                        return -EINVAL;
        if (cap_from_name(name, &v) < 0 || v < 0 || v > 63)
                return -EINVAL;
        canon = cap_to_name(v); /* "cap_chown" for a known capability, a number otherwise */
        if (!canon)
                return -ENOMEM;
        same = strcasecmp(canon, name) == 0;
        cap_free(canon);
        if (!same)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

int zy_cap_to_name(unsigned cap, char **ret) {
        char *s, *copy;

        if (cap > 63)
                return -EINVAL;
        s = cap_to_name((cap_value_t) cap);
        if (!s)
                return -ENOMEM;
        if (strncmp(s, "cap_", 4) != 0) {
                cap_free(s);
                return -EINVAL;
        }
        copy = strdup(s);
        cap_free(s);
        if (!copy)
                return -ENOMEM;
        for (char *p = copy; *p; p++)
                *p = (char) toupper((unsigned char) *p);
        *ret = copy;
        return 0;
}

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

static const char *arch_to_name(uint32_t arch) {
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
                { SCMP_ARCH_X86_64, { "amd64", "x86_64" } },
                { SCMP_ARCH_X86, { "x86", NULL } },
                { SCMP_ARCH_AARCH64, { "arm64", "aarch64" } },
                { SCMP_ARCH_ARM, { "arm", NULL } },
                { SCMP_ARCH_PPC64LE, { "ppc64le", NULL } },
                { SCMP_ARCH_PPC64, { "ppc64", NULL } },
                { SCMP_ARCH_S390X, { "s390x", NULL } },
                { SCMP_ARCH_S390, { "s390", NULL } },
                { SCMP_ARCH_MIPS64, { "mips64", NULL } },
                { SCMP_ARCH_MIPSEL64, { "mips64le", NULL } },
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
        ACT_ERRNO_MAX_4094,  /* SCMP_ACT_ERRNO: libseccomp 2.5 takes 0..4094 (the kernel caps at 4095) */
        ACT_DATA_MAX_65535,  /* SCMP_ACT_TRACE: 16 bits handed to the tracer */
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

/* "EPERM" to 1 (podman's "errno"/"defaultErrno" fields); 0 if unknown. */
static int errno_from_name(const char *name) {
        for (int i = 1; i < 4096; i++) {
                const char *n = strerrorname_np(i);
                if (n && streq(n, name))
                        return i;
        }
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The parsed seccomp object */

struct arg {
        unsigned index;
        enum scmp_compare op;
        uint64_t value, value_two;
};

struct rule {
        size_t json_index;    /* position in "syscalls", for messages */
        uint32_t action;
        bool active;          /* includes/excludes let it in */
        const char **names;   /* borrowed from the JSON tree, which outlives compilation */
        size_t n_names;
        struct arg args[ZY_PROFILE_MAX_ARGS];
        size_t n_args;
};

struct spec {
        const char *loc;      /* "" for a plain file, "seccomp" for an inline object */
        uint32_t default_action;
        uint32_t arches[ZY_PROFILE_MAX_ARCHES];
        size_t n_arches;
        unsigned flags;
        struct rule *rules;
        size_t n_rules;
        size_t n_names;
};

static void spec_done(struct spec *s) {
        for (size_t i = 0; i < s->n_rules; i++)
                free(s->rules[i].names);
        free(s->rules);
        *s = (struct spec) {};
}

static int add_arch(struct loader *l, struct spec *s, uint32_t arch, const char *loc) {
        for (size_t i = 0; i < s->n_arches; i++)
                if (s->arches[i] == arch)
                        return 0;
        if (s->n_arches >= ZY_PROFILE_MAX_ARCHES)
                return fail(l, -E2BIG, loc, "more than %d architectures", ZY_PROFILE_MAX_ARCHES);
        s->arches[s->n_arches++] = arch;
        return 0;
}

/* action + errnoRet (+ podman's errno name) of one object: a rule, or the top level with the
 * "default" keys. */
static int parse_action(struct loader *l, json_object *o, const char *loc, const char *action_key,
                        const char *ret_key, const char *name_key, uint32_t *ret) {
        char loc_a[LOC_MAX], loc_r[LOC_MAX], loc_n[LOC_MAX], q[QUOTE_MAX];
        json_object *va = field(o, action_key), *vr = field(o, ret_key), *vn = field(o, name_key);
        const char *name, *errno_name;
        uint64_t data = EPERM; /* runc and crun: ERRNO and TRACE without errnoRet mean EPERM */
        size_t i;
        int r;

        loc_key(loc_a, loc, action_key);
        loc_key(loc_r, loc, ret_key);
        loc_key(loc_n, loc, name_key);
        if (!va)
                return fail(l, -EINVAL, loc, "missing \"%s\"", action_key);
        r = get_string(l, va, loc_a, &name);
        if (r < 0)
                return r;
        if (streq(name, "SCMP_ACT_NOTIFY"))
                return fail(l, -EOPNOTSUPP, loc_a,
                            "SCMP_ACT_NOTIFY needs a seccomp user-notification listener, which zygote does not provide");
        for (i = 0; i < ELEMENTSOF(actions); i++)
                if (streq(actions[i].name, name))
                        break;
        if (i == ELEMENTSOF(actions))
                return fail(l, -EINVAL, loc_a, "unknown action %s", quote(name, q));

        if ((vr || vn) && actions[i].data == ACT_NO_ERRNO)
                return fail(l, -EINVAL, vr ? loc_r : loc_n,
                            "only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno value, not %s", name);
        if (vn) {
                int e;
                r = get_string(l, vn, loc_n, &errno_name);
                if (r < 0)
                        return r;
                e = errno_from_name(errno_name);
                if (e == 0)
                        return fail(l, -EINVAL, loc_n, "unknown errno name %s", quote(errno_name, q));
                data = (uint64_t) e;
        }
        if (vr) {
                uint64_t v;
                r = get_uint(l, vr, loc_r, actions[i].data == ACT_ERRNO_MAX_4094 ? 4094 : 65535, &v);
                if (r < 0)
                        return r;
                if (vn && v != data)
                        return fail(l, -EINVAL, loc_r, "%" PRIu64 " disagrees with %s %s", v, name_key,
                                    quote(errno_name, q));
                data = v;
        }
        if (actions[i].data == ACT_NO_ERRNO)
                *ret = actions[i].action;
        else
                *ret = actions[i].action | (uint32_t) (data & 0xffff);
        return 0;
}

static int parse_kernel_version(struct loader *l, json_object *v, const char *loc, unsigned *ret_major,
                                unsigned *ret_minor) {
        char q[QUOTE_MAX];
        const char *s;
        unsigned major = 0, minor = 0;
        int n = 0, r;

        r = get_string(l, v, loc, &s);
        if (r < 0)
                return r;
        /* Docker's KernelVersion: "<kernel>.<major>", e.g. "4.8". */
        if (!isdigit((unsigned char) s[0]) || sscanf(s, "%5u.%5u%n", &major, &minor, &n) != 2 ||
            s[n] != '\0' || (major == 0 && minor == 0))
                return fail(l, -EINVAL, loc, "%s is not a kernel version like \"4.8\"", quote(s, q));
        *ret_major = major;
        *ret_minor = minor;
        return 0;
}

/* includes/excludes: true when every given condition holds (includes) or any holds (excludes). */
static int parse_filter(struct loader *l, json_object *o, const char *loc, bool is_include, bool *ret_pass) {
        static const char *const keys[] = { "caps", "arches", "minKernel", NULL };
        char loc_k[LOC_MAX], loc_i[LOC_MAX];
        json_object *v;
        bool any = false, all = true;
        size_t n;
        int r;

        r = want_object(l, o, loc);
        if (r < 0)
                return r;
        r = check_keys(l, o, loc, keys);
        if (r < 0)
                return r;

        v = field(o, "arches");
        if (v) {
                bool match = false;
                loc_key(loc_k, loc, "arches");
                r = get_array(l, v, loc_k, ZY_PROFILE_MAX_LIST, &n);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        const char *s;
                        loc_index(loc_i, loc_k, i);
                        r = get_string(l, json_object_array_get_idx(v, i), loc_i, &s);
                        if (r < 0)
                                return r;
                        match = match || docker_arch_is_native(s, l->native);
                }
                /* Docker: an empty list is no condition. */
                if (n > 0)
                        any = any || match, all = all && match;
        }

        v = field(o, "caps");
        if (v) {
                loc_key(loc_k, loc, "caps");
                r = get_array(l, v, loc_k, ZY_PROFILE_MAX_LIST, &n);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        const char *s;
                        unsigned cap;
                        bool kept;
                        loc_index(loc_i, loc_k, i);
                        r = get_string(l, json_object_array_get_idx(v, i), loc_i, &s);
                        if (r < 0)
                                return r;
                        /* Docker compares names with the bounding set; a name libcap does not know
                         * cannot be in ours, so it counts as not kept (a newer Docker file still loads). */
                        kept = zy_cap_from_name(s, &cap) >= 0 && (l->caps_keep & (UINT64_C(1) << cap));
                        any = any || kept, all = all && kept;
                }
        }

        v = field(o, "minKernel");
        if (v) {
                unsigned major = 0, minor = 0;
                bool ge;
                loc_key(loc_k, loc, "minKernel");
                r = parse_kernel_version(l, v, loc_k, &major, &minor);
                if (r < 0)
                        return r;
                ge = l->kernel_major > major || (l->kernel_major == major && l->kernel_minor >= minor);
                any = any || ge, all = all && ge;
        }

        *ret_pass = is_include ? all : !any;
        return 0;
}

static bool syscall_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > SYSCALL_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(isalnum((unsigned char) s[i]) || s[i] == '_'))
                        return false;
        return true;
}

static int parse_rule(struct loader *l, struct spec *s, json_object *o, const char *loc, struct rule *rule) {
        static const char *const keys[] = { "names", "name", "action", "errnoRet", "errno", "args",
                                            "comment", "includes", "excludes", NULL };
        char loc_k[LOC_MAX], loc_i[LOC_MAX], q[QUOTE_MAX];
        json_object *names = field(o, "names"), *name = field(o, "name"), *v;
        bool pass = true;
        size_t n;
        int r;

        r = want_object(l, o, loc);
        if (r < 0)
                return r;
        r = check_keys(l, o, loc, keys);
        if (r < 0)
                return r;

        /* Docker's older single "name" and "names" exclude each other. */
        if (names && name)
                return fail(l, -EINVAL, loc, "use either \"name\" or \"names\", not both");
        if (!names && !name)
                return fail(l, -EINVAL, loc, "missing \"names\"");
        if (names) {
                loc_key(loc_k, loc, "names");
                r = get_array(l, names, loc_k, ZY_PROFILE_MAX_NAMES, &n);
                if (r < 0)
                        return r;
                if (n == 0)
                        return fail(l, -EINVAL, loc_k, "no syscall names");
        } else {
                loc_key(loc_k, loc, "name");
                n = 1;
        }
        if (s->n_names + n > ZY_PROFILE_MAX_NAMES)
                return fail(l, -E2BIG, loc_k, "more than %d syscall names in the file", ZY_PROFILE_MAX_NAMES);
        rule->names = calloc(n, sizeof(char *));
        if (!rule->names)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *nm;
                if (names)
                        loc_index(loc_i, loc_k, i);
                else
                        loc_join(loc_i, loc_k, "", "");
                r = get_string(l, names ? json_object_array_get_idx(names, i) : name, loc_i, &nm);
                if (r < 0)
                        return r;
                if (!syscall_name_valid(nm))
                        return fail(l, -EINVAL, loc_i, "%s is not a syscall name", quote(nm, q));
                rule->names[rule->n_names++] = nm;
        }
        s->n_names += n;

        r = parse_action(l, o, loc, "action", "errnoRet", "errno", &rule->action);
        if (r < 0)
                return r;

        v = field(o, "comment");
        if (v) {
                const char *c;
                loc_key(loc_k, loc, "comment");
                r = get_string(l, v, loc_k, &c);
                if (r < 0)
                        return r;
        }

        v = field(o, "args");
        if (v) {
                static const char *const arg_keys[] = { "index", "value", "valueTwo", "op", NULL };
                loc_key(loc_k, loc, "args");
                r = get_array(l, v, loc_k, ZY_PROFILE_MAX_ARGS, &n);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        json_object *a = json_object_array_get_idx(v, i), *f;
                        struct arg *arg = &rule->args[i];
                        char loc_f[LOC_MAX];
                        uint64_t idx;
                        const char *op;
                        size_t j;

                        loc_index(loc_i, loc_k, i);
                        r = want_object(l, a, loc_i);
                        if (r < 0)
                                return r;
                        r = check_keys(l, a, loc_i, arg_keys);
                        if (r < 0)
                                return r;

                        f = field(a, "index");
                        if (!f)
                                return fail(l, -EINVAL, loc_i, "missing \"index\"");
                        loc_key(loc_f, loc_i, "index");
                        r = get_uint(l, f, loc_f, 5, &idx);
                        if (r < 0)
                                return r;
                        arg->index = (unsigned) idx;

                        f = field(a, "op");
                        if (!f)
                                return fail(l, -EINVAL, loc_i, "missing \"op\"");
                        loc_key(loc_f, loc_i, "op");
                        r = get_string(l, f, loc_f, &op);
                        if (r < 0)
                                return r;
                        for (j = 0; j < ELEMENTSOF(operators); j++)
                                if (streq(operators[j].name, op))
                                        break;
                        if (j == ELEMENTSOF(operators))
                                return fail(l, -EINVAL, loc_f, "unknown operator %s", quote(op, q));
                        arg->op = operators[j].op;

                        /* Go reads a missing value as 0; so do we. */
                        f = field(a, "value");
                        if (f) {
                                loc_key(loc_f, loc_i, "value");
                                r = get_uint(l, f, loc_f, UINT64_MAX, &arg->value);
                                if (r < 0)
                                        return r;
                        }
                        f = field(a, "valueTwo");
                        if (f) {
                                loc_key(loc_f, loc_i, "valueTwo");
                                r = get_uint(l, f, loc_f, UINT64_MAX, &arg->value_two);
                                if (r < 0)
                                        return r;
                                /* libseccomp ignores it for other operators: a second value there
                                 * is a misunderstanding, not a rule. */
                                if (arg->value_two != 0 && arg->op != SCMP_CMP_MASKED_EQ)
                                        return fail(l, -EINVAL, loc_f, "only SCMP_CMP_MASKED_EQ uses valueTwo");
                        }
                        rule->n_args++;
                }
        }

        /* Evaluate both, so that errors in either are found on every machine. */
        v = field(o, "includes");
        if (v) {
                bool in;
                loc_key(loc_k, loc, "includes");
                r = parse_filter(l, v, loc_k, true, &in);
                if (r < 0)
                        return r;
                pass = pass && in;
        }
        v = field(o, "excludes");
        if (v) {
                bool keep;
                loc_key(loc_k, loc, "excludes");
                r = parse_filter(l, v, loc_k, false, &keep);
                if (r < 0)
                        return r;
                pass = pass && keep;
        }
        rule->active = pass;
        return 0;
}

static int parse_arches(struct loader *l, json_object *o, const char *loc, struct spec *s) {
        char loc_k[LOC_MAX], loc_i[LOC_MAX], loc_j[LOC_MAX], q[QUOTE_MAX];
        json_object *list = field(o, "architectures"), *map = field(o, "archMap");
        size_t n;
        int r;

        /* libseccomp's filter always holds the native architecture (runc and crun keep it too). */
        r = add_arch(l, s, l->native, loc);
        if (r < 0)
                return r;

        if (list && map)
                return fail(l, -EINVAL, loc, "use either \"architectures\" or \"archMap\", not both");

        if (list) {
                loc_key(loc_k, loc, "architectures");
                r = get_array(l, list, loc_k, ZY_PROFILE_MAX_LIST, &n);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        const char *name;
                        uint32_t a;
                        loc_index(loc_i, loc_k, i);
                        r = get_string(l, json_object_array_get_idx(list, i), loc_i, &name);
                        if (r < 0)
                                return r;
                        a = arch_from_name(name);
                        if (a == 0)
                                return fail(l, -EINVAL, loc_i, "unknown architecture %s", quote(name, q));
                        r = add_arch(l, s, a, loc_i);
                        if (r < 0)
                                return r;
                }
        }

        if (map) {
                static const char *const keys[] = { "architecture", "subArchitectures", NULL };
                loc_key(loc_k, loc, "archMap");
                r = get_array(l, map, loc_k, ZY_PROFILE_MAX_LIST, &n);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(map, i), *v, *subs;
                        const char *name;
                        size_t n_sub = 0;
                        bool native;

                        loc_index(loc_i, loc_k, i);
                        r = want_object(l, e, loc_i);
                        if (r < 0)
                                return r;
                        r = check_keys(l, e, loc_i, keys);
                        if (r < 0)
                                return r;
                        v = field(e, "architecture");
                        if (!v)
                                return fail(l, -EINVAL, loc_i, "missing \"architecture\"");
                        loc_key(loc_j, loc_i, "architecture");
                        r = get_string(l, v, loc_j, &name);
                        if (r < 0)
                                return r;
                        /* Docker uses only the entry of the native architecture; the others may
                         * name architectures this libseccomp does not know (LOONGARCH64 here). */
                        native = arch_from_name(name) == l->native;

                        subs = field(e, "subArchitectures");
                        loc_key(loc_j, loc_i, "subArchitectures");
                        if (subs) {
                                r = get_array(l, subs, loc_j, ZY_PROFILE_MAX_LIST, &n_sub);
                                if (r < 0)
                                        return r;
                        }
                        for (size_t j = 0; j < n_sub; j++) {
                                char loc_s[LOC_MAX];
                                const char *sub;
                                uint32_t a;
                                loc_index(loc_s, loc_j, j);
                                r = get_string(l, json_object_array_get_idx(subs, j), loc_s, &sub);
                                if (r < 0)
                                        return r;
                                if (!native)
                                        continue;
                                a = arch_from_name(sub);
                                if (a == 0)
                                        return fail(l, -EINVAL, loc_s, "unknown architecture %s", quote(sub, q));
                                r = add_arch(l, s, a, loc_s);
                                if (r < 0)
                                        return r;
                        }
                }
        }
        return 0;
}

static int parse_seccomp(struct loader *l, json_object *o, const char *loc, struct spec *s) {
        static const char *const keys[] = { "defaultAction", "defaultErrnoRet", "defaultErrno", "architectures",
                                            "archMap", "syscalls", "flags", "listenerPath", "listenerMetadata",
                                            "comment", NULL };
        char loc_k[LOC_MAX], loc_i[LOC_MAX], q[QUOTE_MAX];
        json_object *v;
        size_t n;
        int r;

        s->loc = loc;
        r = want_object(l, o, loc);
        if (r < 0)
                return r;
        r = check_keys(l, o, loc, keys);
        if (r < 0)
                return r;

        r = parse_action(l, o, loc, "defaultAction", "defaultErrnoRet", "defaultErrno", &s->default_action);
        if (r < 0)
                return r;

        r = parse_arches(l, o, loc, s);
        if (r < 0)
                return r;

        v = field(o, "flags");
        if (v) {
                loc_key(loc_k, loc, "flags");
                r = get_array(l, v, loc_k, ZY_PROFILE_MAX_LIST, &n);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        const char *f;
                        size_t j;
                        loc_index(loc_i, loc_k, i);
                        r = get_string(l, json_object_array_get_idx(v, i), loc_i, &f);
                        if (r < 0)
                                return r;
                        if (streq(f, "SECCOMP_FILTER_FLAG_NEW_LISTENER") ||
                            streq(f, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"))
                                return fail(l, -EOPNOTSUPP, loc_i,
                                            "%s needs a seccomp user-notification listener, which zygote does not provide", f);
                        for (j = 0; j < ELEMENTSOF(filter_flags); j++)
                                if (streq(filter_flags[j].name, f))
                                        break;
                        if (j == ELEMENTSOF(filter_flags))
                                return fail(l, -EINVAL, loc_i, "unknown flag %s", quote(f, q));
                        s->flags |= filter_flags[j].flag;
                }
        }

        /* OCI's listener fields: only an empty value is acceptable without a listener. */
        for (size_t i = 0; i < 2; i++) {
                const char *key = i == 0 ? "listenerPath" : "listenerMetadata";
                const char *str;
                v = field(o, key);
                if (!v)
                        continue;
                loc_key(loc_k, loc, key);
                r = get_string(l, v, loc_k, &str);
                if (r < 0)
                        return r;
                if (*str)
                        return fail(l, -EOPNOTSUPP, loc_k, "zygote has no seccomp user-notification listener");
        }

        v = field(o, "comment");
        if (v) {
                const char *c;
                loc_key(loc_k, loc, "comment");
                r = get_string(l, v, loc_k, &c);
                if (r < 0)
                        return r;
        }

        v = field(o, "syscalls");
        if (v) {
                loc_key(loc_k, loc, "syscalls");
                r = get_array(l, v, loc_k, ZY_PROFILE_MAX_RULES, &n);
                if (r < 0)
                        return r;
                s->rules = calloc(n ? n : 1, sizeof(struct rule));
                if (!s->rules)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        struct rule *rule = &s->rules[s->n_rules++];
                        rule->json_index = i;
                        loc_index(loc_i, loc_k, i);
                        r = parse_rule(l, s, json_object_array_get_idx(v, i), loc_i, rule);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Compilation */

static uint64_t now_nsec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

static void seccomp_releasep(scmp_filter_ctx *ctx) {
        if (*ctx)
                seccomp_release(*ctx);
}

/* libseccomp 2.5.4 has no export to memory: export into a memfd and read it back. */
static int export_bpf(scmp_filter_ctx ctx, struct sock_filter **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ struct sock_filter *prog = NULL;
        off_t size;
        size_t done = 0;
        int r;

        fd = memfd_create("zygote-bpf", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return r;
        size = lseek(fd, 0, SEEK_END);
        if (size < 0)
                return negative_errno();
        if (size == 0 || size % (off_t) sizeof(struct sock_filter) != 0 ||
            size > (off_t) (BPF_MAXINSNS * 16 * sizeof(struct sock_filter)))
                return -EBADMSG;
        prog = malloc((size_t) size);
        if (!prog)
                return -ENOMEM;
        while (done < (size_t) size) {
                ssize_t k = pread(fd, (uint8_t *) prog + done, (size_t) size - done, (off_t) done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        return -EIO;
                done += (size_t) k;
        }
        *ret_len = (size_t) size / sizeof(struct sock_filter);
        *ret = TAKE_PTR(prog);
        return 0;
}

static int add_rule(scmp_filter_ctx ctx, const struct rule *rule, int nr) {
        struct scmp_arg_cmp cmp[ZY_PROFILE_MAX_ARGS];
        unsigned count[6] = {};
        bool repeated = false;
        int r;

        if (rule->n_args == 0)
                return seccomp_rule_add(ctx, rule->action, nr, 0);

        for (size_t i = 0; i < rule->n_args; i++) {
                const struct arg *a = &rule->args[i];
                cmp[i] = (struct scmp_arg_cmp) { .arg = a->index, .op = a->op, .datum_a = a->value,
                                                 .datum_b = a->value_two };
                if (++count[a->index] > 1)
                        repeated = true;
        }

        /* Conditions on distinct arguments form one rule: all must hold (libseccomp ANDs them).
         * When an argument appears more than once, libseccomp 2.5 refuses the rule (-EINVAL), and
         * runc and crun both fall back to one rule per condition, so any one of them matching is
         * enough (OR). We do exactly the same, so a Docker file means here what it means there. */
        if (!repeated)
                return seccomp_rule_add_array(ctx, rule->action, nr, (unsigned) rule->n_args, cmp);
        for (size_t i = 0; i < rule->n_args; i++) {
                r = seccomp_rule_add_array(ctx, rule->action, nr, 1, &cmp[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int compile(struct loader *l, const struct spec *s, unsigned optimize, struct zy_profile *p) {
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        char loc_r[LOC_MAX], loc_n[LOC_MAX], loc_s[LOC_MAX], q[QUOTE_MAX];
        uint64_t start = now_nsec();
        int r;

        ctx = seccomp_init(s->default_action);
        if (!ctx)
                return fail(l, -ENOMEM, NULL, "libseccomp could not create a filter");
        /* 2: libseccomp's binary tree sorted by syscall number, O(log n) per syscall instead of
         * a linear scan. 1 is libseccomp's own default, used here only for comparisons. */
        if (optimize != 1) {
                r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, optimize);
                if (r < 0)
                        return fail(l, r, NULL, "libseccomp refused optimize level %u: %s", optimize, strerror(-r));
        }
        for (size_t i = 0; i < s->n_arches; i++) {
                r = seccomp_arch_add(ctx, s->arches[i]);
                if (r < 0 && r != -EEXIST)
                        return fail(l, r, s->loc, "libseccomp refused architecture 0x%08x: %s", s->arches[i],
                                    strerror(-r));
        }

        loc_key(loc_s, s->loc, "syscalls");
        for (size_t i = 0; i < s->n_rules; i++) {
                const struct rule *rule = &s->rules[i];

                if (!rule->active)
                        continue;
                /* libseccomp refuses a rule whose action is the default (-EACCES); runc and crun
                 * skip it, and it decides nothing anyway. */
                if (rule->action == s->default_action)
                        continue;
                loc_index(loc_r, loc_s, rule->json_index);
                for (size_t j = 0; j < rule->n_names; j++) {
                        int nr = seccomp_syscall_resolve_name(rule->names[j]);

                        /* Unknown to this libseccomp: skipped and counted, as runc does. A name
                         * known only on another architecture resolves to a negative pseudo number
                         * that libseccomp maps per architecture. */
                        if (nr == __NR_SCMP_ERROR) {
                                p->skipped_syscalls++;
                                continue;
                        }
                        r = add_rule(ctx, rule, nr);
                        if (r < 0) {
                                loc_key(loc_n, loc_r, "names");
                                return fail(l, r, loc_n, "libseccomp refused the rule for %s: %s",
                                            quote(rule->names[j], q), strerror(-r));
                        }
                        p->n_rules++;
                }
        }

        r = export_bpf(ctx, &p->bpf, &p->bpf_len);
        if (r < 0)
                return fail(l, r, NULL, "exporting the BPF program failed: %s", strerror(-r));
        p->compile_nsec = now_nsec() - start;

        if (p->bpf_len > BPF_MAXINSNS)
                return fail(l, -E2BIG, NULL, "the program has %zu instructions, more than the kernel's %d", p->bpf_len,
                            BPF_MAXINSNS);
        r = zy_bpf_check(p->bpf, p->bpf_len);
        if (r < 0)
                return fail(l, r, NULL, "libseccomp produced a program the kernel would refuse");

        memcpy(p->arches, s->arches, s->n_arches * sizeof(uint32_t));
        p->n_arches = s->n_arches;
        p->filter_flags = s->flags;
        return 0;
}

/* Longest path over every syscall number a process can pass: 0..1023 on each architecture, the
 * x32 range on x86_64 (x32 calls arrive with AUDIT_ARCH_X86_64 and bit 30 set, whether or not
 * the profile allows x32), and -1 (what ptrace uses to skip a call). */
static int measure(struct zy_profile *p) {
        unsigned best = 0, steps;
        int r;

        for (size_t i = 0; i < p->n_arches; i++) {
                uint32_t arch = p->arches[i];

                if (arch == SCMP_ARCH_X32) /* never in seccomp_data.arch, see above */
                        continue;
                r = zy_bpf_longest_path_range(p->bpf, p->bpf_len, arch, 0, 1024, &steps, NULL);
                if (r < 0)
                        return r;
                best = steps > best ? steps : best;
                if (arch == SCMP_ARCH_X86_64) {
                        r = zy_bpf_longest_path_range(p->bpf, p->bpf_len, arch, 0x40000000u, 1024, &steps, NULL);
                        if (r < 0)
                                return r;
                        best = steps > best ? steps : best;
                }
                r = zy_bpf_longest_path(p->bpf, p->bpf_len, arch, UINT32_MAX, &steps);
                if (r < 0)
                        return r;
                best = steps > best ? steps : best;
        }
        p->longest_path = best;
        return 0;
}

/* The syscalls zygote's worker makes between fork and execve (child.h) and the reference process
 * makes to fork it, with the arguments that matter for filters. In the inherit tier the filter is
 * already in place for all of them; if any is refused the profile must use another tier. */
static const struct {
        const char *name;
        uint64_t args[6];
} worker_calls[] = {
        { "clone", { CLONE_PARENT | CLONE_PIDFD } },
        { "close_range", {} },
        { "dup3", {} },
        { "fcntl", { 0, F_GETFD } },
        { "fcntl", { 0, F_SETFD, FD_CLOEXEC } },
        { "setsid", {} },
        { "prctl", { PR_CAPBSET_DROP } },
        { "prctl", { PR_CAPBSET_DROP_MASK } },
        { "prctl", { PR_CAPBSET_READ } },
        { "setgroups", {} },
        { "setresgid", {} },
        { "setresuid", {} },
        { "prctl", { PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL } },
        { "capget", {} },
        { "capset", {} },
        { "chdir", {} },
        { "prctl", { PR_SET_NO_NEW_PRIVS, 1 } },
        { "read", {} },
        { "write", {} },
        { "recvmsg", {} },
        { "sendmsg", {} },
        { "close", {} },
        { "execve", {} },
        { "exit_group", {} },
};

static int check_worker_setup(struct zy_profile *p) {
        p->worker_setup_ok = true;
        p->worker_setup_blocked = NULL;

        for (size_t i = 0; i < ELEMENTSOF(worker_calls); i++) {
                struct seccomp_data d = { .arch = p->arches[0] };
                uint32_t action;
                int nr, r;

                nr = seccomp_syscall_resolve_name_arch(p->arches[0], worker_calls[i].name);
                if (nr < 0)
                        continue; /* not a syscall on this architecture */
                d.nr = nr;
                memcpy(d.args, worker_calls[i].args, sizeof(d.args));
                r = zy_bpf_run(p->bpf, p->bpf_len, &d, &action, NULL);
                if (r < 0)
                        return r;
                action &= SECCOMP_RET_ACTION_FULL;
                if (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_LOG) {
                        p->worker_setup_ok = false;
                        p->worker_setup_blocked = worker_calls[i].name;
                        return 0;
                }
        }
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Profiles */

void zy_profile_free(struct zy_profile *p) {
        if (!p)
                return;
        free(p->name);
        free(p->path);
        free(p->bpf);
        free(p->access_uids);
        free(p->access_gids);
        free(p);
}

static void zy_profile_freep(struct zy_profile **p) {
        zy_profile_free(*p);
}

static void json_object_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}

static void spec_donep(struct spec *s) {
        spec_done(s);
}

static bool profile_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > ZY_PROFILE_NAME_MAX || s[0] == '.' || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(isalnum((unsigned char) s[i]) || strchr("._-", s[i])))
                        return false;
        return true;
}

/* "dir/default.json" -> "default" */
static char *name_from_path(const char *path) {
        const char *base = strrchr(path, '/');
        size_t n;

        base = base ? base + 1 : path;
        n = strlen(base);
        if (n > 5 && streq(base + n - 5, ".json"))
                n -= 5;
        return strndup(base, n);
}

static int parse_caps(struct loader *l, json_object *v, const char *loc, uint64_t *ret) {
        char loc_i[LOC_MAX], q[QUOTE_MAX];
        uint64_t caps = 0;
        size_t n;
        int r;

        r = get_array(l, v, loc, ZY_PROFILE_MAX_LIST, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const char *s;
                unsigned cap;
                loc_index(loc_i, loc, i);
                r = get_string(l, json_object_array_get_idx(v, i), loc_i, &s);
                if (r < 0)
                        return r;
                if (zy_cap_from_name(s, &cap) < 0)
                        return fail(l, -EINVAL, loc_i, "unknown capability %s", quote(s, q));
                caps |= UINT64_C(1) << cap;
        }
        *ret = caps;
        return 0;
}

static int lookup_id(bool user, const char *name, uint32_t *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 4096;

        for (;;) {
                struct passwd pw, *pwr = NULL;
                struct group gr, *grr = NULL;
                char *nbuf = realloc(buf, size);
                int e;

                if (!nbuf)
                        return -ENOMEM;
                buf = nbuf;
                e = user ? getpwnam_r(name, &pw, buf, size, &pwr) : getgrnam_r(name, &gr, buf, size, &grr);
                if (e == ERANGE && size < 1024 * 1024) {
                        size *= 2;
                        continue;
                }
                if (e != 0)
                        return -e;
                if (user ? !pwr : !grr)
                        return -ESRCH;
                *ret = user ? pwr->pw_uid : grr->gr_gid;
                return 0;
        }
}

static int parse_access(struct loader *l, json_object *o, const char *loc, struct zy_profile *p) {
        static const char *const keys[] = { "users", "groups", NULL };
        char loc_k[LOC_MAX], loc_i[LOC_MAX], q[QUOTE_MAX];
        int r;

        r = want_object(l, o, loc);
        if (r < 0)
                return r;
        r = check_keys(l, o, loc, keys);
        if (r < 0)
                return r;
        p->access_all = false;

        for (int which = 0; which < 2; which++) {
                bool user = which == 0;
                json_object *v = field(o, user ? "users" : "groups");
                uint32_t *ids;
                size_t n;

                if (!v)
                        continue;
                loc_key(loc_k, loc, user ? "users" : "groups");
                r = get_array(l, v, loc_k, ZY_PROFILE_MAX_ACCESS, &n);
                if (r < 0)
                        return r;
                ids = calloc(n ? n : 1, sizeof(uint32_t));
                if (!ids)
                        return -ENOMEM;
                if (user)
                        p->access_uids = ids, p->n_access_uids = n;
                else
                        p->access_gids = ids, p->n_access_gids = n;

                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        loc_index(loc_i, loc_k, i);
                        if (json_object_is_type(e, json_type_int)) {
                                uint64_t id;
                                /* (uid_t) -1 means "no change" to setresuid: never a real id. */
                                r = get_uint(l, e, loc_i, UINT32_MAX - 1, &id);
                                if (r < 0)
                                        return r;
                                ids[i] = (uint32_t) id;
                        } else if (json_object_is_type(e, json_type_string)) {
                                const char *name;
                                r = get_string(l, e, loc_i, &name);
                                if (r < 0)
                                        return r;
                                r = lookup_id(user, name, &ids[i]);
                                if (r == -ENOMEM)
                                        return r;
                                if (r < 0)
                                        return fail(l, -ESRCH, loc_i, "unknown %s %s", user ? "user" : "group",
                                                    quote(name, q));
                        } else
                                return fail(l, -EINVAL, loc_i, "expected a name or a number, got %s",
                                            json_type_to_name(json_object_get_type(e)));
                }
        }
        return 0;
}

static int load_referenced(struct loader *l, json_object *v, const char *loc, char **ret_path,
                           json_object **ret_root) {
        _cleanup_free_ char *full = NULL, *data = NULL;
        char q[QUOTE_MAX];
        const char *rel, *slash;
        size_t size;
        int r;

        r = get_string(l, v, loc, &rel);
        if (r < 0)
                return r;
        if (!*rel)
                return fail(l, -EINVAL, loc, "empty path");
        if (rel[0] == '/')
                return fail(l, -EINVAL, loc, "%s: the path must be relative to the profile's directory", quote(rel, q));
        slash = strrchr(l->path, '/');
        if (slash)
                r = asprintf(&full, "%.*s/%s", (int) (slash - l->path), l->path, rel);
        else
                r = asprintf(&full, "%s", rel);
        if (r < 0)
                return -ENOMEM;
        r = read_file(full, &data, &size);
        if (r < 0)
                return fail(l, r, loc, "cannot read %s: %s", full, strerror(-r));

        l->file = full; /* messages now name the referenced file */
        r = parse_json(l, data, size, ret_root);
        if (r >= 0 && field(*ret_root, "seccomp"))
                r = fail(l, -EINVAL, NULL, "is a zygote profile; \"seccomp\" must name a Docker/OCI seccomp file");
        if (r < 0) {
                l->file = l->path;
                return r;
        }
        *ret_path = TAKE_PTR(full);
        return 0;
}

static int load_buffer(const char *path, const char *data, size_t size, const struct zy_profile_options *opts,
                       struct zy_profile **ret, char **ret_error, struct loader *l) {
        _cleanup_(zy_profile_freep) struct zy_profile *p = NULL;
        _cleanup_(json_object_putp) json_object *root = NULL, *ref_root = NULL;
        _cleanup_(spec_donep) struct spec spec = {};
        _cleanup_free_ char *ref_path = NULL;
        char q[QUOTE_MAX];
        unsigned optimize = opts && opts->optimize ? opts->optimize : 2;
        struct utsname u;
        bool plain, wrapped;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->path = strdup(path);
        if (!p->path)
                return -ENOMEM;
        p->no_new_privs = true;
        p->access_all = true;

        l->native = seccomp_arch_native();
        if (uname(&u) == 0)
                (void) sscanf(u.release, "%u.%u", &l->kernel_major, &l->kernel_minor);

        r = parse_json(l, data, size, &root);
        if (r < 0)
                return r;

        plain = field(root, "defaultAction") || field(root, "syscalls");
        wrapped = field(root, "seccomp");
        if (plain && wrapped)
                return fail(l, -EINVAL, NULL,
                            "both \"seccomp\" (zygote profile) and \"defaultAction\"/\"syscalls\" (Docker/OCI file) at top level");
        if (!plain && !wrapped)
                return fail(l, -EINVAL, NULL,
                            "neither a Docker/OCI seccomp file (\"defaultAction\", \"syscalls\") nor a zygote profile (\"seccomp\")");

        if (plain) {
                static const char *const docker_caps[] = { ZY_DOCKER_DEFAULT_CAPS };

                p->name = name_from_path(path);
                if (!p->name)
                        return -ENOMEM;
                if (!profile_name_valid(p->name))
                        return fail(l, -EINVAL, NULL, "%s is not a valid profile name (from the file name)",
                                    quote(p->name, q));
                for (size_t i = 0; i < ELEMENTSOF(docker_caps); i++) {
                        unsigned cap;
                        r = zy_cap_from_name(docker_caps[i], &cap);
                        if (r < 0)
                                return r;
                        p->caps_keep |= UINT64_C(1) << cap;
                }
                l->caps_keep = p->caps_keep;
                r = parse_seccomp(l, root, "", &spec);
                if (r < 0)
                        return r;
        } else {
                static const char *const keys[] = { "name", "seccomp", "capabilities", "noNewPrivileges", "access",
                                                    "comment", NULL };
                json_object *v;
                const char *s;

                r = check_keys(l, root, "", keys);
                if (r < 0)
                        return r;

                v = field(root, "name");
                if (!v)
                        return fail(l, -EINVAL, NULL, "missing \"name\"");
                r = get_string(l, v, "name", &s);
                if (r < 0)
                        return r;
                if (!profile_name_valid(s))
                        return fail(l, -EINVAL, "name",
                                    "%s is not a valid profile name (1-%d of A-Z a-z 0-9 . _ -, not starting with . or -)",
                                    quote(s, q), ZY_PROFILE_NAME_MAX);
                p->name = strdup(s);
                if (!p->name)
                        return -ENOMEM;

                v = field(root, "comment");
                if (v) {
                        r = get_string(l, v, "comment", &s);
                        if (r < 0)
                                return r;
                }

                /* Capabilities first: includes/excludes in the seccomp part are evaluated against them. */
                v = field(root, "capabilities");
                if (!v)
                        return fail(l, -EINVAL, NULL, "missing \"capabilities\" (the bounding set to keep; [] keeps none)");
                r = parse_caps(l, v, "capabilities", &p->caps_keep);
                if (r < 0)
                        return r;
                l->caps_keep = p->caps_keep;

                v = field(root, "noNewPrivileges");
                if (v) {
                        r = get_bool(l, v, "noNewPrivileges", &p->no_new_privs);
                        if (r < 0)
                                return r;
                }

                v = field(root, "access");
                if (v) {
                        r = parse_access(l, v, "access", p);
                        if (r < 0)
                                return r;
                }

                v = field(root, "seccomp");
                if (json_object_is_type(v, json_type_string)) {
                        r = load_referenced(l, v, "seccomp", &ref_path, &ref_root);
                        if (r < 0)
                                return r;
                        r = parse_seccomp(l, ref_root, "", &spec);
                } else
                        r = parse_seccomp(l, v, "seccomp", &spec);
                if (r < 0)
                        return r;
        }

        r = compile(l, &spec, optimize, p);
        if (r < 0)
                return r;
        l->file = l->path;

        r = measure(p);
        if (r < 0)
                return fail(l, r, NULL, "measuring the program failed: %s", strerror(-r));
        r = check_worker_setup(p);
        if (r < 0)
                return fail(l, r, NULL, "checking the program failed: %s", strerror(-r));
        zy_sha256_hex(p->bpf, p->bpf_len * sizeof(struct sock_filter), p->hash);

        *ret = TAKE_PTR(p);
        return 0;
}

int zy_profile_load_buffer_with(const char *path, const char *data, size_t size,
                                const struct zy_profile_options *opts, struct zy_profile **ret,
                                char **ret_error) {
        struct loader l = { .path = path, .file = path };
        int r;

        if (!path || (!data && size > 0) || !ret)
                return -EINVAL;
        if (opts && opts->optimize > 2)
                return -EINVAL;
        r = load_buffer(path, data ? data : "", size, opts, ret, ret_error, &l);
        if (r < 0 && !l.error) {
                /* A failure that is not about the content (memory, I/O): still name the file. */
                if (asprintf(&l.error, "%s: %s", path, strerror(-r)) < 0)
                        l.error = NULL;
        }
        if (r < 0 && ret_error)
                *ret_error = TAKE_PTR(l.error);
        free(l.error);
        return r;
}

int zy_profile_load_buffer(const char *path, const char *data, size_t size, struct zy_profile **ret,
                           char **ret_error) {
        return zy_profile_load_buffer_with(path, data, size, NULL, ret, ret_error);
}

int zy_profile_load_file_with(const char *path, const struct zy_profile_options *opts, struct zy_profile **ret,
                              char **ret_error) {
        _cleanup_free_ char *data = NULL;
        size_t size;
        int r;

        if (!path || !ret)
                return -EINVAL;
        r = read_file(path, &data, &size);
        if (r < 0) {
                if (ret_error) {
                        if (r == -EFBIG)
                                r = asprintf(ret_error, "%s: more than the %d bytes allowed", path,
                                             ZY_PROFILE_MAX_FILE_SIZE) < 0 ? -ENOMEM : r;
                        else if (r == -EBADFD)
                                r = asprintf(ret_error, "%s: not a regular file", path) < 0 ? -ENOMEM : r;
                        else {
                                int e = r;
                                r = asprintf(ret_error, "%s: %s", path, strerror(-e)) < 0 ? -ENOMEM : e;
                        }
                }
                return r;
        }
        return zy_profile_load_buffer_with(path, data, size, opts, ret, ret_error);
}

int zy_profile_load_file(const char *path, struct zy_profile **ret, char **ret_error) {
        return zy_profile_load_file_with(path, NULL, ret, ret_error);
}

bool zy_profile_allows(const struct zy_profile *p, uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups) {
        if (!p)
                return false;
        if (uid == 0 || p->access_all)
                return true;
        for (size_t i = 0; i < p->n_access_uids; i++)
                if (p->access_uids[i] == uid)
                        return true;
        for (size_t i = 0; i < p->n_access_gids; i++) {
                if (p->access_gids[i] == gid)
                        return true;
                for (size_t j = 0; j < n_groups; j++)
                        if (groups && p->access_gids[i] == groups[j])
                                return true;
        }
        return false;
}

/* ---------------------------------------------------------------------------------------------
 * Sets */

static int report(zy_profile_error_fn on_error, void *userdata, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int report(zy_profile_error_fn on_error, void *userdata, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int r;

        if (!on_error)
                return 0;
        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        on_error(msg, userdata);
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

static void free_strv(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

/* The *.json names in dir, sorted. */
static int list_dir(const char *dir, char ***ret, size_t *ret_n) {
        DIR *d;
        struct dirent *de;
        char **v = NULL;
        size_t n = 0, cap = 0;

        d = opendir(dir); /* glibc opens it O_CLOEXEC */
        if (!d)
                return negative_errno();
        while ((errno = 0, de = readdir(d))) {
                size_t len = strlen(de->d_name);
                if (de->d_name[0] == '.' || len <= 5 || !streq(de->d_name + len - 5, ".json"))
                        continue;
                if (n == cap) {
                        char **nv;
                        cap = cap ? cap * 2 : 16;
                        nv = realloc(v, cap * sizeof(char *));
                        if (!nv)
                                goto oom;
                        v = nv;
                }
                v[n] = strdup(de->d_name);
                if (!v[n])
                        goto oom;
                n++;
        }
        closedir(d);
        if (n > 0)
                qsort(v, n, sizeof(char *), cmp_str);
        *ret = v;
        *ret_n = n;
        return 0;
oom:
        closedir(d);
        free_strv(v, n);
        return -ENOMEM;
}

int zy_profile_set_load(const char *const *dirs, size_t n_dirs, struct zy_profile_set *ret,
                        zy_profile_error_fn on_error, void *userdata) {
        struct zy_profile_set set = {};
        size_t *origin = NULL; /* index of the directory each item came from */
        int r = 0;

        if (!ret || (!dirs && n_dirs > 0))
                return -EINVAL;

        set.items = calloc(ZY_PROFILE_SET_MAX, sizeof(struct zy_profile *));
        origin = calloc(ZY_PROFILE_SET_MAX, sizeof(size_t));
        if (!set.items || !origin) {
                r = -ENOMEM;
                goto finish;
        }

        for (size_t di = 0; di < n_dirs; di++) {
                char **names = NULL;
                size_t n_names = 0;

                r = list_dir(dirs[di], &names, &n_names);
                if (r == -ENOMEM)
                        goto finish;
                if (r < 0) {
                        report(on_error, userdata, "%s: cannot read the profile directory: %s", dirs[di], strerror(-r));
                        r = 0;
                        continue;
                }
                for (size_t i = 0; i < n_names; i++) {
                        _cleanup_free_ char *path = NULL, *err = NULL;
                        struct zy_profile *p = NULL;
                        size_t k;

                        if (asprintf(&path, "%s/%s", dirs[di], names[i]) < 0) {
                                path = NULL;
                                r = -ENOMEM;
                                break;
                        }
                        r = zy_profile_load_file(path, &p, &err);
                        if (r == -ENOMEM)
                                break;
                        if (r < 0) {
                                report(on_error, userdata, "%s", err ? err : path);
                                r = 0;
                                continue;
                        }
                        for (k = 0; k < set.n; k++)
                                if (streq(set.items[k]->name, p->name))
                                        break;
                        if (k < set.n && origin[k] == di) {
                                report(on_error, userdata, "%s: profile name \"%s\" is already used by %s", path,
                                       p->name, set.items[k]->path);
                                zy_profile_free(p);
                                continue;
                        }
                        if (k < set.n) { /* a later directory overrides an earlier one */
                                zy_profile_free(set.items[k]);
                                set.items[k] = p;
                                origin[k] = di;
                                continue;
                        }
                        if (set.n >= ZY_PROFILE_SET_MAX) {
                                report(on_error, userdata, "%s: more than %d profiles, left out", path,
                                       ZY_PROFILE_SET_MAX);
                                zy_profile_free(p);
                                continue;
                        }
                        set.items[set.n] = p;
                        origin[set.n++] = di;
                }
                free_strv(names, n_names);
                if (r < 0)
                        goto finish;
        }

        *ret = set;
        set = (struct zy_profile_set) {};
        r = 0;
finish:
        zy_profile_set_clear(&set);
        free(origin);
        return r;
}

void zy_profile_set_clear(struct zy_profile_set *set) {
        if (!set)
                return;
        for (size_t i = 0; i < set->n; i++)
                zy_profile_free(set->items[i]);
        free(set->items);
        *set = (struct zy_profile_set) {};
}

const struct zy_profile *zy_profile_set_find(const struct zy_profile_set *set, const char *name) {
        if (!set || !name)
                return NULL;
        for (size_t i = 0; i < set->n; i++)
                if (streq(set->items[i]->name, name))
                        return set->items[i];
        return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * --check-profile */

int zy_profile_check(const char *path, FILE *out, char **ret_error) {
        _cleanup_(zy_profile_freep) struct zy_profile *p = NULL;
        int r;

        r = zy_profile_load_file(path, &p, ret_error);
        if (r < 0)
                return r;

        fprintf(out, "profile:       %s (%s)\n", p->name, p->path);
        fprintf(out, "capabilities: ");
        if (p->caps_keep == 0)
                fprintf(out, " (none)");
        for (unsigned c = 0; c < 64; c++) {
                _cleanup_free_ char *name = NULL;
                if (!(p->caps_keep & (UINT64_C(1) << c)))
                        continue;
                if (zy_cap_to_name(c, &name) < 0)
                        fprintf(out, " %u", c);
                else
                        fprintf(out, " %s", name);
        }
        fprintf(out, "\nno_new_privs:  %s\n", p->no_new_privs ? "yes" : "no");
        if (p->access_all)
                fprintf(out, "access:        everyone who can reach the socket\n");
        else {
                fprintf(out, "access:        root");
                for (size_t i = 0; i < p->n_access_uids; i++)
                        fprintf(out, ", uid %u", (unsigned) p->access_uids[i]);
                for (size_t i = 0; i < p->n_access_gids; i++)
                        fprintf(out, ", gid %u", (unsigned) p->access_gids[i]);
                fprintf(out, "\n");
        }
        fprintf(out, "architectures:");
        for (size_t i = 0; i < p->n_arches; i++) {
                const char *a = arch_to_name(p->arches[i]);
                if (a)
                        fprintf(out, " %s", a);
                else
                        fprintf(out, " 0x%08x", p->arches[i]);
        }
        fprintf(out, "\ninstructions:  %zu\n", p->bpf_len);
        fprintf(out, "longest path:  %u instructions\n", p->longest_path);
        fprintf(out, "rules:         %u (%u syscall names unknown to libseccomp %u.%u.%u, skipped)\n", p->n_rules,
                p->skipped_syscalls, seccomp_version()->major, seccomp_version()->minor, seccomp_version()->micro);
        fprintf(out, "flags:         0x%x\n", p->filter_flags);
        fprintf(out, "worker setup:  %s%s%s\n", p->worker_setup_ok ? "allowed (inherit tier possible)" : "blocked at ",
                p->worker_setup_ok ? "" : p->worker_setup_blocked, p->worker_setup_ok ? "" : " (load tier)");
        fprintf(out, "compile time:  %.3f ms\n", (double) p->compile_nsec / 1e6);
        fprintf(out, "sha256:        %s\n", p->hash);
        return 0;
}
