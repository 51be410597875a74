/* SPDX-License-Identifier: MIT */
/*
 * The engine's last step: find the program on PATH and execve it, for the worker, or find it and
 * check it may be executed, for a container init whose create must fail before start. One search
 * for both; no malloc. See steps.h.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel-abi.h"
#include "steps.h"

int ze_exec_exit_code(int err) {
        return err == ENOENT ? ZE_EXIT_NOT_FOUND : ZE_EXIT_NOT_EXECUTABLE;
}

/* The PATH search: one element after the other, name appended, in buf. */
struct path_search {
        const char *next; /* the element to build next, NULL at the end */
        const char *name;
        size_t name_len;
        char *buf;
        size_t len;
        bool empty_is_cwd; /* an empty element: "." (POSIX) or skipped */
};

static void path_search_init(struct path_search *s, const char *search_path, const char *name, char *buf, size_t len,
                             bool empty_is_cwd) {
        *s = (struct path_search){ .next = search_path ? search_path : ZC_DEFAULT_PATH,
                                   .name = name,
                                   .name_len = strlen(name),
                                   .buf = buf,
                                   .len = len,
                                   .empty_is_cwd = empty_is_cwd };
}

/* 1 with the next candidate in buf, 0 at the end; elements that do not fit in buf, and empty
 * ones unless empty_is_cwd, are passed over. */
static int path_search_next(struct path_search *s) {
        while (s->next) {
                const char *d = s->next, *e = strchrnul(d, ':');
                size_t dir_len = (size_t) (e - d);
                char *q = s->buf;

                s->next = *e ? e + 1 : NULL;
                if (dir_len == 0 && !s->empty_is_cwd)
                        continue;
                if ((dir_len ? dir_len : 1) + 1 + s->name_len + 1 > s->len)
                        continue;
                if (dir_len) {
                        memcpy(q, d, dir_len);
                        q += dir_len;
                } else
                        *q++ = '.';
                *q++ = '/';
                memcpy(q, s->name, s->name_len + 1);
                return 1;
        }
        return 0;
}

int ze_step_execvp(char *const *argv, char *const *envp, const char *search_path, char *buf, size_t len,
                   int *ret_index) {
        const char *name = argv ? argv[0] : NULL;
        struct path_search s;
        bool got_eacces = false, tried = false;

        *ret_index = 1;
        if (!name)
                return -EINVAL;
        if (!*name)
                return -ENOENT;
        if (strchr(name, '/')) {
                execve(name, argv, envp);
                return -errno;
        }
        *ret_index = 0;
        if (!buf)
                return -EINVAL;
        path_search_init(&s, search_path, name, buf, len, true);
        while (path_search_next(&s)) {
                tried = true;
                execve(buf, argv, envp);
                switch (errno) {
                case EACCES:
                        got_eacces = true;
                        break;
                case ENOENT:
                case ENOTDIR:
                case ESTALE:
                case ENODEV:
                case ETIMEDOUT:
                        break;
                default:
                        return -errno;
                }
        }
        if (got_eacces)
                return -EACCES;
        if (!tried)
                return -ENAMETOOLONG;
        return -ENOENT;
}

static int check_exec(const char *path) {
        struct stat st;

        if (stat(path, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EACCES;
        if (access(path, X_OK) < 0)
                return -errno;
        return 0;
}

int ze_step_resolve(char *const *argv, const char *search_path, char *buf, size_t len, const char **ret_path,
                    int *ret_index) {
        const char *name = argv ? argv[0] : NULL;
        struct path_search s;
        bool eacces = false;
        int r;

        *ret_index = -1;
        if (!name || !*name)
                return -ENOENT;
        if (strchr(name, '/')) {
                *ret_index = 1;
                r = check_exec(name);
                if (r < 0)
                        return r;
                *ret_path = name;
                return 0;
        }
        *ret_index = 0;
        if (!buf)
                return -EINVAL;
        path_search_init(&s, search_path, name, buf, len, false);
        while (path_search_next(&s)) {
                r = check_exec(buf);
                if (r == 0) {
                        *ret_path = buf;
                        return 0;
                }
                if (r == -EACCES)
                        eacces = true;
        }
        return eacces ? -EACCES : -ENOENT;
}
