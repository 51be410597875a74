/* SPDX-License-Identifier: MIT */
/*
 * config.json access for config*.c: members of the right type or NULL, errors with a message.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config-util.h"
#include "util.h"

int zct_oci_note(struct zct_oci *o, const char *fmt, ...) {
        _cleanup_free_ char *line = NULL;
        char *all;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&line, fmt, ap);
        va_end(ap);
        if (n < 0 || asprintf(&all, "%s%s%s", o->notes ? o->notes : "", o->notes ? "\n" : "", line) < 0)
                return -ENOMEM;
        free(o->notes);
        o->notes = all;
        return 0;
}

int zct_errorf(char **ret_error, int r, const char *fmt, ...) {
        va_list ap;

        if (ret_error) {
                free(*ret_error);
                va_start(ap, fmt);
                if (vasprintf(ret_error, fmt, ap) < 0)
                        *ret_error = NULL;
                va_end(ap);
        }
        return r;
}

json_object *zct_get(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!o || !json_object_is_type(o, json_type_object))
                return NULL;
        return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

const char *zct_get_str(json_object *o, const char *key) {
        json_object *v = zct_get(o, key);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

size_t zct_array_len(json_object *a) {
        return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

int zct_str_array(json_object *a, const char *what, char ***ret, char **ret_error) {
        size_t n = zct_array_len(a);
        char **v = calloc(n + 1, sizeof(char *));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                if (!json_object_is_type(e, json_type_string)) {
                        free(v);
                        return zct_errorf(ret_error, -EINVAL, "config.json: %s[%zu] is not a string", what, i);
                }
                v[i] = (char *) json_object_get_string(e);
        }
        *ret = v;
        return 0;
}

char *zct_join_path(const char *a, const char *b) {
        char *s;

        while (*b == '/')
                b++;
        if (asprintf(&s, "%s/%s", a, b) < 0)
                return NULL;
        return s;
}

int zct_read_json(const char *path, json_object **ret, char **ret_error) {
        json_object *j = json_object_from_file(path);

        if (!j) {
                if (access(path, R_OK) < 0)
                        return zct_errorf(ret_error, -errno, "open %s: %s", path, strerror(errno));
                return zct_errorf(ret_error, -EINVAL, "%s: not valid JSON: %s", path, json_util_get_last_err());
        }
        if (!json_object_is_type(j, json_type_object)) {
                json_object_put(j);
                return zct_errorf(ret_error, -EINVAL, "%s: not a JSON object", path);
        }
        *ret = j;
        return 0;
}
