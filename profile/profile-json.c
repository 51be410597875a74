/* SPDX-License-Identifier: MIT */
/*
 * The profile module's JSON layer: strict parsing, typed getters and messages that name the file
 * and the JSON location. See profile-json.h.
 */

#include "profile-json.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "profile-limits.h"
#include "util.h"

#define JSON_DEPTH 16 /* deepest legitimate nesting is 6 */

/* ---------------------------------------------------------------------------------------------
 * Messages */

int zp_json_fail(struct zp_json_loader *l, int err, const char *loc, const char *fmt, ...) {
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

const char *zp_json_quote(const char *s, char buf[static PJ_QUOTE_MAX]) {
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

static void zp_json_loc_join(char out[static PJ_LOC_MAX], const char *parent, const char *sep, const char *tail) {
        size_t n = 0;

        for (const char *part[] = { parent, sep, tail }, **p = part; p < part + 3; p++)
                for (const char *c = *p; c && *c && n < PJ_LOC_MAX - 1; c++)
                        out[n++] = *c;
        out[n] = '\0';
}

void zp_json_loc_key(char out[static PJ_LOC_MAX], const char *parent, const char *key) {
        zp_json_loc_join(out, parent, parent && *parent ? "." : "", key);
}

void zp_json_loc_index(char out[static PJ_LOC_MAX], const char *parent, size_t i) {
        char idx[32];

        snprintf(idx, sizeof(idx), "[%zu]", i);
        zp_json_loc_join(out, parent, "", idx);
}

/* ---------------------------------------------------------------------------------------------
 * JSON access with precise errors */

json_object *zp_json_field(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

static int zp_json_check_keys(struct zp_json_loader *l, json_object *o, const char *loc, const char *const *allowed) {
        char q[PJ_QUOTE_MAX];

        json_object_object_foreach(o, key, val) {
                bool ok = false;
                (void) val;
                for (size_t i = 0; allowed[i]; i++)
                        if (streq(allowed[i], key)) {
                                ok = true;
                                break;
                        }
                if (!ok)
                        return zp_json_fail(l, -EINVAL, loc, "unknown field %s", zp_json_quote(key, q));
        }
        return 0;
}

/* "expected <what>, got <v's type>". */
static int wrong_type(struct zp_json_loader *l, json_object *v, const char *loc, const char *what) {
        return zp_json_fail(l, -EINVAL, loc, "expected %s, got %s", what, json_type_to_name(json_object_get_type(v)));
}

int zp_json_get_array(struct zp_json_loader *l, json_object *v, const char *loc, size_t max, size_t *ret_n) {
        size_t n;

        if (!json_object_is_type(v, json_type_array))
                return wrong_type(l, v, loc, "an array");
        n = json_object_array_length(v);
        if (n > max)
                return zp_json_fail(l, -E2BIG, loc, "%zu entries, more than the %zu allowed", n, max);
        *ret_n = n;
        return 0;
}

int zp_json_get_string(struct zp_json_loader *l, json_object *v, const char *loc, const char **ret) {
        const char *s;

        if (!json_object_is_type(v, json_type_string))
                return wrong_type(l, v, loc, "a string");
        s = json_object_get_string(v);
        if (strlen(s) != (size_t) json_object_get_string_len(v))
                return zp_json_fail(l, -EINVAL, loc, "string contains a NUL character");
        *ret = s;
        return 0;
}

/* A non-negative integer up to max. json-c keeps integers as int64 or uint64; a negative value
 * reads as 0 through get_uint64, so the sign is checked through get_int64. Literals beyond
 * 2^64-1 were rejected by scan_numbers before we get here. */
int zp_json_get_uint(struct zp_json_loader *l, json_object *v, const char *loc, uint64_t max, uint64_t *ret) {
        uint64_t u;

        if (!json_object_is_type(v, json_type_int))
                return wrong_type(l, v, loc, "an integer");
        if (json_object_get_int64(v) < 0)
                return zp_json_fail(l, -ERANGE, loc, "%" PRId64 " is negative", json_object_get_int64(v));
        u = json_object_get_uint64(v);
        if (u > max)
                return zp_json_fail(l, -ERANGE, loc, "%" PRIu64 " is out of range (0..%" PRIu64 ")", u, max);
        *ret = u;
        return 0;
}

int zp_json_get_bool(struct zp_json_loader *l, json_object *v, const char *loc, bool *ret) {
        if (!json_object_is_type(v, json_type_boolean))
                return wrong_type(l, v, loc, "true or false");
        *ret = json_object_get_boolean(v);
        return 0;
}

int zp_json_require(struct zp_json_loader *l, json_object *o, const char *loc, const char *key,
                    char loc_out[static PJ_LOC_MAX], json_object **ret) {
        json_object *v = zp_json_field(o, key);

        if (!v)
                return zp_json_fail(l, -EINVAL, loc, "missing \"%s\"", key);
        zp_json_loc_key(loc_out, loc, key);
        *ret = v;
        return 0;
}

int zp_json_object(struct zp_json_loader *l, json_object *o, const char *loc, const char *const *allowed) {
        if (!json_object_is_type(o, json_type_object))
                return wrong_type(l, o, loc, "an object");
        return zp_json_check_keys(l, o, loc, allowed);
}

int zp_json_require_string(struct zp_json_loader *l, json_object *o, const char *loc, const char *key,
                           char loc_out[static PJ_LOC_MAX], const char **ret) {
        json_object *v;
        int r = zp_json_require(l, o, loc, key, loc_out, &v);

        return r < 0 ? r : zp_json_get_string(l, v, loc_out, ret);
}

int zp_json_optional_array(struct zp_json_loader *l, json_object *o, const char *loc, const char *key, size_t max,
                           char loc_out[static PJ_LOC_MAX], json_object **ret, size_t *ret_n) {
        json_object *v = zp_json_field(o, key);
        int r;

        *ret = NULL;
        *ret_n = 0;
        if (!v)
                return 0;
        zp_json_loc_key(loc_out, loc, key);
        r = zp_json_get_array(l, v, loc_out, max, ret_n);
        if (r < 0)
                return r;
        *ret = v;
        return 0;
}

int zp_json_optional_uint(struct zp_json_loader *l, json_object *o, const char *loc, const char *key, uint64_t max,
                          char loc_out[static PJ_LOC_MAX], uint64_t *ret) {
        json_object *v = zp_json_field(o, key);

        if (!v)
                return 0;
        zp_json_loc_key(loc_out, loc, key);
        return zp_json_get_uint(l, v, loc_out, max, ret);
}

int zp_json_optional_string(struct zp_json_loader *l, json_object *o, const char *loc, const char *key,
                            const char **ret) {
        char loc_k[PJ_LOC_MAX];
        json_object *v = zp_json_field(o, key);

        *ret = NULL;
        if (!v)
                return 0;
        zp_json_loc_key(loc_k, loc, key);
        return zp_json_get_string(l, v, loc_k, ret);
}

int zp_json_string_array(struct zp_json_loader *l, json_object *o, const char *loc, const char *key, size_t max,
                         zp_json_string_fn fn, void *userdata, size_t *ret_n) {
        char loc_k[PJ_LOC_MAX], loc_i[PJ_LOC_MAX];
        json_object *v;
        size_t n;
        int r;

        r = zp_json_optional_array(l, o, loc, key, max, loc_k, &v, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const char *s;

                zp_json_loc_index(loc_i, loc_k, i);
                r = zp_json_get_string(l, json_object_array_get_idx(v, i), loc_i, &s);
                if (r < 0)
                        return r;
                r = fn(l, s, loc_i, userdata);
                if (r < 0)
                        return r;
        }
        if (ret_n)
                *ret_n = n;
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
                        for (; j < size && (data[j] == '.' || data[j] == 'e' || data[j] == 'E' || data[j] == '+' ||
                                            data[j] == '-' || (data[j] >= '0' && data[j] <= '9'));
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

int zp_json_parse(struct zp_json_loader *l, const char *data, size_t size, json_object **ret) {
        struct json_tokener *tok = NULL;
        json_object *o;
        size_t end, bad;
        unsigned line, col;
        int r;

        if (size > ZP_PROFILE_MAX_FILE_SIZE)
                return zp_json_fail(l, -EFBIG, NULL, "%zu bytes, more than the %d allowed", size,
                                    ZP_PROFILE_MAX_FILE_SIZE);

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
                r = zp_json_fail(l, -EINVAL, NULL, "line %u, column %u: %s", line, col,
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
                        return zp_json_fail(l, -EINVAL, NULL,
                                            "line %u, column %u: unexpected data after the JSON value", line, col);
                }
        if (!scan_numbers(data, size, &bad)) {
                offset_to_line(data, size, bad, &line, &col);
                json_object_put(o);
                return zp_json_fail(l, -ERANGE, NULL, "line %u, column %u: integer out of range", line, col);
        }
        if (!json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return zp_json_fail(l, -EINVAL, NULL, "top level is not a JSON object");
        }
        *ret = o;
        return 0;
}

/* O_NONBLOCK: a FIFO placed where a profile should be must not hang the daemon. */
#define PJ_OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

bool zp_json_no_openat2 = false;

/* The path the fd was opened as (readlink of /proc/self/fd/N). */
static int fd_path(int fd, char buf[static PATH_MAX]) {
        char link[64];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, buf, PATH_MAX - 1);
        if (n < 0)
                return negative_errno();
        if (n >= PATH_MAX - 1)
                return -ENAMETOOLONG;
        buf[n] = '\0';
        return 0;
}

/* rel opened beneath the directory dirfd: -EXDEV where it would leave it (through "..", an
 * absolute symlink, a symlink pointing up, a magic link). */
static int open_beneath(int dirfd, const char *rel) {
        if (!zp_json_no_openat2) {
                struct open_how how = {
                        .flags = PJ_OPEN_FLAGS,
                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
                };
                int fd = (int) syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
                if (fd >= 0)
                        return fd;
                if (errno != ENOSYS && errno != EPERM) /* EPERM: a filter that does not know it */
                        return negative_errno();
        }
        /* No openat2 (Linux before 5.6): open it, then check where it landed. The check is on
         * the opened file itself, so a path changed meanwhile cannot fool it. */
        _cleanup_close_ int fd = openat(dirfd, rel, PJ_OPEN_FLAGS);
        if (fd < 0)
                return negative_errno();
        char dir[PATH_MAX], file[PATH_MAX];
        int r = fd_path(dirfd, dir);
        if (r >= 0)
                r = fd_path(fd, file);
        if (r < 0)
                return r;
        size_t n = streq(dir, "/") ? 0 : strlen(dir);
        if (strncmp(file, dir, n) != 0 || file[n] != '/')
                return -EXDEV;
        return TAKE_FD(fd);
}

static int read_fd(int fd, char **ret, size_t *ret_size);

int zp_json_read_file(const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = open(path, PJ_OPEN_FLAGS);
        if (fd < 0)
                return negative_errno();
        return read_fd(fd, ret, ret_size);
}

int zp_json_read_file_beneath(const char *dir, const char *rel, char **ret, size_t *ret_size) {
        _cleanup_close_ int dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return negative_errno();
        _cleanup_close_ int fd = open_beneath(dirfd, rel);
        if (fd < 0)
                return fd;
        return read_fd(fd, ret, ret_size);
}

static int read_fd(int fd, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t n = 0;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_size > ZP_PROFILE_MAX_FILE_SIZE)
                return -EFBIG;

        /* One byte more than allowed, to see a file that grew since fstat. */
        buf = malloc(ZP_PROFILE_MAX_FILE_SIZE + 2);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, buf + n, ZP_PROFILE_MAX_FILE_SIZE + 1 - n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > ZP_PROFILE_MAX_FILE_SIZE)
                        return -EFBIG;
        }
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}
