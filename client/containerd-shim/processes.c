/* SPDX-License-Identifier: MIT */
/* The shim's state: the container and its processes, under one lock. */
#include "process.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oom.h"
#include "sha256.h"
#include "util.h"

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t state_cond = PTHREAD_COND_INITIALIZER;
static struct zs_container *container;

void zs_state_lock(void) {
        pthread_mutex_lock(&state_lock);
}

void zs_state_unlock(void) {
        pthread_mutex_unlock(&state_lock);
}

void zs_state_changed(void) {
        pthread_cond_broadcast(&state_cond);
}

void zs_state_wait(void) {
        pthread_cond_wait(&state_cond, &state_lock);
}

struct zs_container *zs_container_get(void) {
        return container;
}

int zs_container_set(char *id, char *bundle) {
        struct zs_container *c;

        if (container)
                return -EEXIST;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->id = id;
        c->bundle = bundle;
        container = c;
        return 0;
}

void zs_container_clear(void) {
        if (!container)
                return;
        while (container->processes)
                zs_process_remove(container->processes);
        /* its thread publishes without this lock: joining it here cannot deadlock */
        zs_oom_stop(container->oom);
        free(container->id);
        free(container->bundle);
        free(container);
        container = NULL;
}

struct zs_process *zs_process_find(const char *id, const char *exec_id) {
        if (!container || !id || !streq(container->id, id))
                return NULL;
        if (exec_id && !*exec_id)
                exec_id = NULL;
        for (struct zs_process *p = container->processes; p; p = p->next)
                if (streq_ptr(p->exec_id, exec_id))
                        return p;
        return NULL;
}

int zs_process_add(const char *exec_id, const char *task_id, struct zs_process **ret) {
        struct zs_process *p, **tail;

        if (!container)
                return -ENOENT;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->exec_id = exec_id && *exec_id ? strdup(exec_id) : NULL;
        p->task_id = strdup(task_id);
        if ((exec_id && *exec_id && !p->exec_id) || !p->task_id) {
                free(p->exec_id);
                free(p->task_id);
                free(p);
                return -ENOMEM;
        }
        p->refs = 1;
        zs_stdio_init(&p->io);
        for (tail = &container->processes; *tail; tail = &(*tail)->next)
                ;
        *tail = p;
        *ret = p;
        return 0;
}

void zs_process_ref(struct zs_process *p) {
        p->refs++;
}

void zs_process_unref(struct zs_process *p) {
        if (!p || --p->refs > 0)
                return;
        zs_stdio_done(&p->io);
        free(p->exec_id);
        free(p->task_id);
        free(p->stdin_path);
        free(p->stdout_path);
        free(p->stderr_path);
        free(p);
}

void zs_process_remove(struct zs_process *p) {
        /* gone already: the init's Delete takes the exec'd processes along */
        if (!container || p->deleted)
                return;
        for (struct zs_process **q = &container->processes; *q; q = &(*q)->next)
                if (*q == p) {
                        *q = p->next;
                        p->next = NULL;
                        p->deleted = true;
                        zs_process_unref(p);
                        return;
                }
}

unsigned zs_process_count(void) {
        unsigned n = 0;

        if (container)
                for (struct zs_process *p = container->processes; p; p = p->next)
                        n++;
        return n;
}

bool zs_task_id_valid(const char *s) {
        size_t n = strlen(s);

        if (n < 1 || n > 64)
                return false;
        return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

int zs_exec_task_id(const char *container_id, const char *exec_id, char **ret) {
        _cleanup_free_ char *id = NULL;
        struct zc_sha256 s;
        uint8_t d[ZC_SHA256_DIGEST_SIZE];

        if (asprintf(&id, "%s.%s", container_id, exec_id) < 0)
                return -ENOMEM;
        if (!zs_task_id_valid(id)) {
                /* the NUL between both keeps ("a.b", "c") and ("a", "b.c") apart */
                zc_sha256_init(&s);
                zc_sha256_update(&s, container_id, strlen(container_id) + 1);
                zc_sha256_update(&s, exec_id, strlen(exec_id));
                zc_sha256_final(&s, d);
                free(id);
                id = malloc(2 + 2 * 24 + 1);
                if (!id)
                        return -ENOMEM;
                strcpy(id, "x-");
                for (size_t i = 0; i < 24; i++)
                        sprintf(id + 2 + 2 * i, "%02x", d[i]);
        }
        *ret = TAKE_PTR(id);
        return 0;
}

int zs_exec_ids_line(const char *container_id, const char *exec_id, char **ret) {
        _cleanup_free_ char *task_id = NULL, *hex = NULL;
        size_t n = strlen(exec_id);
        int r = zs_exec_task_id(container_id, exec_id, &task_id);

        if (r < 0)
                return r;
        hex = malloc(2 * n + 1);
        if (!hex)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                sprintf(hex + 2 * i, "%02x", (unsigned char) exec_id[i]);
        hex[2 * n] = 0;
        return asprintf(ret, "%s %s\n", task_id, hex) < 0 ? -ENOMEM : 0;
}

static int unhex(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int zs_exec_ids_parse(const char *container_id, const char *line, char **ret) {
        _cleanup_free_ char *task_id = NULL, *exec_id = NULL, *want = NULL;
        const char *sp = strchr(line, ' ');
        size_t hex_len;
        int r;

        if (!sp)
                return -EINVAL;
        task_id = strndup(line, (size_t) (sp - line));
        hex_len = strcspn(sp + 1, "\n");
        if (!task_id)
                return -ENOMEM;
        if (hex_len == 0 || hex_len % 2 != 0)
                return -EINVAL;
        exec_id = malloc(hex_len / 2 + 1);
        if (!exec_id)
                return -ENOMEM;
        for (size_t i = 0; i < hex_len / 2; i++) {
                int hi = unhex(sp[1 + 2 * i]), lo = unhex(sp[2 + 2 * i]);
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                        return -EINVAL;
                exec_id[i] = (char) (hi << 4 | lo);
        }
        exec_id[hex_len / 2] = 0;
        /* the task id is the one of this container's exec: the file names no other task */
        r = zs_exec_task_id(container_id, exec_id, &want);
        if (r < 0)
                return r;
        if (!streq(want, task_id))
                return -EINVAL;
        *ret = TAKE_PTR(task_id);
        return 0;
}
