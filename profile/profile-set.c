/* SPDX-License-Identifier: MIT */
/*
 * Profile sets: every *.json file of one or more directories, in name order; a later
 * directory's profile replaces an earlier one of the same name; a file that fails is reported
 * and left out, the others still load. See profile.h.
 */

#include "profile.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>

#include "util.h"

static int report(zp_profile_error_fn on_error, void *userdata, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int report(zp_profile_error_fn on_error, void *userdata, const char *fmt, ...) {
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

int zp_profile_set_load(const char *const *dirs, size_t n_dirs, struct zp_profile_set *ret,
                        zp_profile_error_fn on_error, void *userdata) {
        struct zp_profile_set set = {};
        size_t *origin = NULL; /* index of the directory each item came from */
        int r = 0;

        if (!ret || (!dirs && n_dirs > 0))
                return -EINVAL;

        set.items = calloc(ZP_PROFILE_SET_MAX, sizeof(struct zp_profile *));
        origin = calloc(ZP_PROFILE_SET_MAX, sizeof(size_t));
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
                        struct zp_profile *p = NULL;
                        size_t k;

                        if (asprintf(&path, "%s/%s", dirs[di], names[i]) < 0) {
                                path = NULL;
                                r = -ENOMEM;
                                break;
                        }
                        r = zp_profile_load_file(path, &p, &err);
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
                                zp_profile_free(p);
                                continue;
                        }
                        if (k < set.n) { /* a later directory overrides an earlier one */
                                zp_profile_free(set.items[k]);
                                set.items[k] = p;
                                origin[k] = di;
                                continue;
                        }
                        if (set.n >= ZP_PROFILE_SET_MAX) {
                                report(on_error, userdata, "%s: more than %d profiles, left out", path,
                                       ZP_PROFILE_SET_MAX);
                                zp_profile_free(p);
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
        set = (struct zp_profile_set){};
        r = 0;
finish:
        zp_profile_set_clear(&set);
        free(origin);
        return r;
}

void zp_profile_set_clear(struct zp_profile_set *set) {
        if (!set)
                return;
        for (size_t i = 0; i < set->n; i++)
                zp_profile_free(set->items[i]);
        free(set->items);
        *set = (struct zp_profile_set){};
}

const struct zp_profile *zp_profile_set_find(const struct zp_profile_set *set, const char *name) {
        if (!set || !name)
                return NULL;
        for (size_t i = 0; i < set->n; i++)
                if (streq(set->items[i]->name, name))
                        return set->items[i];
        return NULL;
}
