/* SPDX-License-Identifier: MIT */
/* The OOM watch of a container's memory cgroup. */
#include "oom.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "cgroup.h"
#include "github.com/containerd/containerd/api/events/task.pb-c.h"
#include "log.h"
#include "publish.h"
#include "util.h"

struct zs_oom {
        char *container_id;
        char *dir; /* the memory cgroup */
        bool v2;   /* fd: an inotify watch of memory.events; else an eventfd */
        int fd;
        int cancel[2];  /* ends the thread */
        uint64_t kills; /* v2: oom_kill as last read */
        pthread_t thread;
        bool running;
};

static int oom_kills(const char *dir, uint64_t *ret) {
        _cleanup_free_ char *path = NULL, *line = NULL;
        size_t size = 0;
        FILE *f;

        if (asprintf(&path, "%s/memory.events", dir) < 0)
                return -ENOMEM;
        f = fopen(path, "re");
        if (!f)
                return -errno;
        *ret = 0;
        while (getline(&line, &size, f) > 0)
                if (sscanf(line, "oom_kill %" SCNu64, ret) == 1)
                        break;
        fclose(f);
        return 0;
}

/* v1: the kernel signals the eventfd at each OOM, and once more when the cgroup is removed
 * (registered by the cgroup manager). */
static int arm_v1(struct zs_oom *o) {
        return zs_cgroup_oom_eventfd(o->dir, &o->fd);
}

static int arm_v2(struct zs_oom *o) {
        _cleanup_free_ char *events = NULL;

        if (asprintf(&events, "%s/memory.events", o->dir) < 0)
                return -ENOMEM;
        o->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (o->fd < 0)
                return -errno;
        if (inotify_add_watch(o->fd, events, IN_MODIFY) < 0)
                return errno == ENOENT ? -EOPNOTSUPP : -errno;
        return oom_kills(o->dir, &o->kills);
}

/* Whether what woke the thread was an OOM kill (and not the cgroup's removal, or another of
 * memory.events' counters). */
static bool was_oom(struct zs_oom *o) {
        if (!o->v2) {
                uint64_t v;
                _cleanup_free_ char *control = NULL;

                if (read(o->fd, &v, sizeof(v)) != sizeof(v))
                        return false;
                return asprintf(&control, "%s/memory.oom_control", o->dir) >= 0 && access(control, F_OK) == 0;
        }
        char buf[4096];
        uint64_t kills = o->kills;

        while (read(o->fd, buf, sizeof(buf)) > 0)
                ;
        if (oom_kills(o->dir, &kills) < 0 || kills <= o->kills)
                return false;
        o->kills = kills;
        return true;
}

static void *oom_thread(void *arg) {
        struct zs_oom *o = arg;

        for (;;) {
                struct pollfd p[2] = { { .fd = o->fd, .events = POLLIN }, { .fd = o->cancel[0], .events = POLLIN } };
                Containerd__Events__TaskOOM ev = CONTAINERD__EVENTS__TASK_OOM__INIT;
                int r;

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return NULL;
                }
                if (p[1].revents)
                        return NULL;
                if (!was_oom(o))
                        continue;
                ev.container_id = o->container_id;
                r = zs_publish("/tasks/oom", &ev.base);
                if (r < 0)
                        zs_log("publishing /tasks/oom failed: %s", strerror(-r));
        }
}

int zs_oom_watch(pid_t init, const char *container_id, struct zs_oom **ret) {
        struct zs_oom *o = calloc(1, sizeof(*o));
        int r;

        if (!o)
                return -ENOMEM;
        o->fd = o->cancel[0] = o->cancel[1] = -EBADF;
        o->v2 = zs_cgroup_v2();
        o->container_id = strdup(container_id);
        r = o->container_id ? zs_cgroup_dir(init, "memory", &o->dir) : -ENOMEM;
        if (r >= 0)
                r = o->v2 ? arm_v2(o) : arm_v1(o);
        if (r >= 0 && pipe2(o->cancel, O_CLOEXEC) < 0)
                r = -errno;
        if (r >= 0)
                r = -pthread_create(&o->thread, NULL, oom_thread, o);
        if (r < 0) {
                zs_oom_stop(o);
                return r;
        }
        o->running = true;
        *ret = o;
        return 0;
}

struct zs_oom *zs_oom_stop(struct zs_oom *o) {
        if (!o)
                return NULL;
        /* the thread's poll sees POLLHUP on the pipe once its only write end is closed */
        o->cancel[1] = safe_close(o->cancel[1]);
        if (o->running)
                pthread_join(o->thread, NULL);
        safe_close(o->fd);
        safe_close(o->cancel[0]);
        free(o->dir);
        free(o->container_id);
        free(o);
        return NULL;
}
