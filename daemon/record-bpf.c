/* SPDX-License-Identifier: MIT */
/*
 * The eBPF recorder (record-bpf.h): loads record-trace.bpf.c once at start-up, attaches it while
 * a recording is under way (every system call of the host then costs a hash lookup, so never
 * longer), and reads a recording back into JSON when its task has exited.
 *
 * Why the tracer keys threads by pid: the maps hold the initial pid namespace's thread ids, which
 * are zygoted's own only when zygoted runs there (checked at load). A cgroup would be the other
 * key, but a task has a cgroup of its own only under a service manager (spawn-scope.c); the fork
 * tracepoint follows every descendant wherever it moves, daemonized ones included.
 */
#include <errno.h>
#include <linux/audit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "probe.h"
#include "record-bpf.h"
#include "record-trace.h"
#include "record_trace.skel.h"
#include "util.h"

_Static_assert(ELEMENTSOF(((struct zd_recorder *) 0)->under_way) == RT_MAX_RECORDINGS, "one slot per recording");

/* The initial pid namespace's inode (the kernel's PROC_PID_INIT_INO). */
#define INIT_PIDNS_INO 0xEFFFFFFCU

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define COMPAT_ARCH AUDIT_ARCH_I386
/* i386's clone, clone3, socket, personality, seccomp, prctl, execve, execveat */
static const long compat_nrs[8] = { 120, 435, 359, 136, 354, 172, 11, 358 };
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define COMPAT_ARCH AUDIT_ARCH_ARM
static const long compat_nrs[8] = { 120, 435, 281, 136, 383, 172, 11, 387 }; /* arm's */
#else
#define NATIVE_ARCH 0
#define COMPAT_ARCH 0
static const long compat_nrs[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };
#endif

/* libbpf's own messages would go to our stderr: the reason below says what failed. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap) {
        return 0;
}

static const char *load(struct zd_recorder *rc) {
        static char why[160];
        struct stat st;
        int r;

        if (ze_feature_disabled("record_bpf"))
                return "disabled by ZYGOTE_DISABLE_FEATURES";
        if (NATIVE_ARCH == 0)
                return "no tracer for this architecture";
        if (stat("/proc/self/ns/pid", &st) < 0 || st.st_ino != INIT_PIDNS_INO)
                return "zygoted is not in the initial pid namespace, whose thread ids the tracer sees";
        libbpf_set_print(quiet);
        rc->skel = record_trace__open();
        if (!rc->skel) {
                snprintf(why, sizeof(why), "the tracer does not open: %s", strerror(errno));
                return why;
        }
        rc->skel->rodata->nr_clone[0] = __NR_clone;
        rc->skel->rodata->nr_clone3[0] = __NR_clone3;
        rc->skel->rodata->nr_socket[0] = __NR_socket;
        rc->skel->rodata->nr_personality[0] = __NR_personality;
        rc->skel->rodata->nr_clone[1] = compat_nrs[0];
        rc->skel->rodata->nr_clone3[1] = compat_nrs[1];
        rc->skel->rodata->nr_socket[1] = compat_nrs[2];
        rc->skel->rodata->nr_personality[1] = compat_nrs[3];
        rc->skel->rodata->nr_seccomp[0] = __NR_seccomp;
        rc->skel->rodata->nr_prctl[0] = __NR_prctl;
        rc->skel->rodata->nr_seccomp[1] = compat_nrs[4];
        rc->skel->rodata->nr_prctl[1] = compat_nrs[5];
        rc->skel->rodata->nr_execve[0] = __NR_execve;
        rc->skel->rodata->nr_execveat[0] = __NR_execveat;
        rc->skel->rodata->nr_execve[1] = compat_nrs[6];
        rc->skel->rodata->nr_execveat[1] = compat_nrs[7];
        r = record_trace__load(rc->skel);
        if (r < 0) {
                record_trace__destroy(rc->skel);
                rc->skel = NULL;
                snprintf(why, sizeof(why), "the tracer does not load (BTF, tp_btf programs: Linux 5.5): %s",
                         strerror(-r));
                return why;
        }
        return NULL;
}

static struct zd_recording *slot_of(struct zd_recorder *rc, uint64_t id) {
        for (size_t i = 0; id != 0 && i < RT_MAX_RECORDINGS; i++)
                if (rc->under_way[i].id == id)
                        return &rc->under_way[i];
        return NULL;
}

/* One id from the done ring: its owner told, once. */
static int on_ring(void *ctx, void *data, size_t size) {
        struct zd_recorder *rc = ctx;
        struct zd_recording *s;
        uint64_t id;

        if (size != sizeof(id))
                return 0;
        memcpy(&id, data, sizeof(id));
        s = slot_of(rc, id);
        if (!s || s->done)
                return 0;
        s->done = true;
        if (rc->on_done && s->owner)
                rc->on_done(s->owner); /* may end the recording: s is not used after */
        return 0;
}

static void on_ring_readable(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_recorder *rc = w->data;
        (void) ring_buffer__consume(rc->ring);
}

void zd_recorder_init(struct zd_recorder *rc, bool privileged, struct ev_loop *loop, void (*on_done)(void *owner)) {
        const char *why;

        *rc = (struct zd_recorder){ .next_id = 1, .loop = loop, .on_done = on_done };
        why = privileged ? load(rc) : "zygoted does not run as root";
        if (!why) {
                rc->ring = ring_buffer__new(bpf_map__fd(rc->skel->maps.done), on_ring, rc, NULL);
                if (!rc->ring) {
                        record_trace__destroy(rc->skel);
                        rc->skel = NULL;
                        why = "the tracer's ring buffer (Linux 5.8) cannot be read";
                }
        }
        if (rc->ring) {
                ev_io_init(&rc->ring_watch, on_ring_readable, ring_buffer__epoll_fd(rc->ring), EV_READ);
                rc->ring_watch.data = rc;
                ev_io_start(loop, &rc->ring_watch);
        }
        snprintf(rc->reason, sizeof(rc->reason), "%s", why ? why : "loaded");
}

void zd_recorder_free(struct zd_recorder *rc) {
        if (rc->ring) {
                ev_io_stop(rc->loop, &rc->ring_watch);
                ring_buffer__free(rc->ring);
        }
        rc->ring = NULL;
        if (rc->skel)
                record_trace__destroy(rc->skel);
        rc->skel = NULL;
}

bool zd_recorder_done(const struct zd_recorder *rc, uint64_t id) {
        return !slot_of((struct zd_recorder *) rc, id) || slot_of((struct zd_recorder *) rc, id)->done;
}

/* Every key of a map deleted (the tracer detached: nothing adds meanwhile). */
static void map_clear(struct bpf_map *m) {
        unsigned char key[32];
        int fd = bpf_map__fd(m);

        if (bpf_map__key_size(m) > sizeof(key))
                return;
        while (bpf_map_get_next_key(fd, NULL, key) == 0)
                if (bpf_map_delete_elem(fd, key) < 0)
                        break;
}

static void recording_end(struct zd_recorder *rc, uint64_t id) {
        for (size_t i = 0; i < RT_MAX_RECORDINGS; i++)
                if (rc->under_way[i].id == id)
                        rc->under_way[i] = (struct zd_recording){};
        (void) bpf_map__delete_elem(rc->skel->maps.records, &id, sizeof(id), 0);
        if (rc->active > 0 && --rc->active == 0) {
                /* the threads of ended recordings that still live leave the map with it */
                record_trace__detach(rc->skel);
                map_clear(rc->skel->maps.tasks);
                map_clear(rc->skel->maps.personas);
        }
}

int zd_recorder_begin(struct zd_recorder *rc, pid_t pid, uid_t account, enum zd_record_from from, void *owner,
                      uint64_t *ret_id) {
        _cleanup_free_ struct rt_record *zero = NULL;
        struct zd_recording *slot = NULL;
        unsigned mine = 0;
        uint64_t id;
        uint32_t tid = (uint32_t) pid;
        struct rt_task task = {};
        int r;

        if (!rc->skel)
                return -EOPNOTSUPP;
        for (size_t i = 0; i < RT_MAX_RECORDINGS; i++) {
                if (rc->under_way[i].id == 0 && !slot)
                        slot = &rc->under_way[i];
                else if (rc->under_way[i].id != 0 && rc->under_way[i].account == account)
                        mine++;
        }
        if (!slot)
                return -EAGAIN;
        if (account != 0 && mine >= ZD_RECORDINGS_PER_UID)
                return -EUSERS;
        zero = calloc(1, sizeof(*zero));
        if (!zero)
                return -ENOMEM;
        zero->arm_on_exec = from == ZD_RECORD_FROM_EXEC;
        /* a task's: pid is its one thread now; a container's ends with its init, uncounted */
        zero->count_live = from == ZD_RECORD_FROM_EXEC;
        zero->live = zero->count_live ? 1 : 0;
        id = rc->next_id++;
        r = bpf_map__update_elem(rc->skel->maps.records, &id, sizeof(id), zero, sizeof(*zero), BPF_NOEXIST);
        if (r < 0)
                return r;
        if (rc->active == 0) {
                r = record_trace__attach(rc->skel);
                if (r < 0) {
                        (void) bpf_map__delete_elem(rc->skel->maps.records, &id, sizeof(id), 0);
                        return r;
                }
        }
        rc->active++;
        *slot = (struct zd_recording){
                .id = id, .account = account, .owner = owner, .done = from != ZD_RECORD_FROM_EXEC
        };
        task.id = id;
        r = bpf_map__update_elem(rc->skel->maps.tasks, &tid, sizeof(tid), &task, sizeof(task), BPF_ANY);
        if (r < 0) {
                recording_end(rc, id);
                return r;
        }
        *ret_id = id;
        return 0;
}

int zd_recorder_follow(struct zd_recorder *rc, pid_t tid, uint64_t id) {
        struct rt_task task = { .id = id };
        uint32_t key = (uint32_t) tid;

        if (!rc->skel)
                return -EOPNOTSUPP;
        /* unarmed: its calls count from its filter load, as its container's create's did */
        if (!slot_of(rc, id))
                return -ESRCH;
        return bpf_map__update_elem(rc->skel->maps.tasks, &key, sizeof(key), &task, sizeof(task), BPF_ANY);
}

void zd_recorder_forget(struct zd_recorder *rc, pid_t tid) {
        uint32_t key = (uint32_t) tid;

        if (rc->skel)
                (void) bpf_map__delete_elem(rc->skel->maps.tasks, &key, sizeof(key), 0);
}

void zd_recorder_cancel(struct zd_recorder *rc, uint64_t id) {
        if (rc->skel && id != 0)
                recording_end(rc, id);
}

/* The personas recording id saw on architecture c, taken out of the map. */
static json_object *take_personas(struct zd_recorder *rc, uint64_t id, int c) {
        struct bpf_map *m = rc->skel->maps.personas;
        int fd = bpf_map__fd(m);
        json_object *a = json_object_new_array();
        struct rt_persona key, next, mine[64];
        size_t n = 0;
        bool first = true;

        /* collected, then deleted: deleting while walking would restart the walk */
        while (bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0 && n < ELEMENTSOF(mine)) {
                first = false;
                key = next;
                if (next.id == id && next.compat == (uint32_t) c)
                        mine[n++] = next;
        }
        for (size_t i = 0; i < n; i++) {
                json_object_array_add(a, json_object_new_int64(mine[i].persona));
                (void) bpf_map_delete_elem(fd, &mine[i]);
        }
        return a;
}

/* One architecture's part of a recording; NULL when it saw no call there. */
static json_object *arch_json(struct zd_recorder *rc, const struct rt_record *r, uint64_t id, int c) {
        json_object *o, *calls = json_object_new_array(), *fam = json_object_new_array();
        int64_t clone_flags = 0;

        for (int nr = 0; nr < RT_MAX_NR; nr++)
                if (r->calls[c][nr])
                        json_object_array_add(calls, json_object_new_int(nr));
        if (json_object_array_length(calls) == 0) {
                json_object_put(calls);
                json_object_put(fam);
                return NULL;
        }
        for (int i = 0; i < 32; i++)
                if (r->clone_flags[c][i])
                        clone_flags |= INT64_C(1) << i;
        for (int f = 0; f < 64; f++)
                if (r->families[c][f])
                        json_object_array_add(fam, json_object_new_int(f));
        o = json_object_new_object();
        json_object_object_add(o, "arch", json_object_new_int64(c ? COMPAT_ARCH : NATIVE_ARCH));
        json_object_object_add(o, "calls", calls);
        json_object_object_add(o, "cloneFlags", json_object_new_int64(clone_flags));
        json_object_object_add(o, "socketFamilies", fam);
        json_object_object_add(o, "socketOther", json_object_new_boolean(r->family_other[c]));
        json_object_object_add(o, "personas", take_personas(rc, id, c));
        return o;
}

json_object *zd_recorder_take(struct zd_recorder *rc, uint64_t id) {
        _cleanup_free_ struct rt_record *r = calloc(1, sizeof(*r));
        json_object *o = NULL, *arches, *a;
        const char *incomplete = NULL;

        if (!rc->skel || id == 0)
                return NULL;
        if (r && bpf_map__lookup_elem(rc->skel->maps.records, &id, sizeof(id), r, sizeof(*r), 0) == 0) {
                o = json_object_new_object();
                arches = json_object_new_array();
                for (int c = 0; c < 2; c++) {
                        a = arch_json(rc, r, id, c);
                        if (a)
                                json_object_array_add(arches, a);
                }
                json_object_object_add(o, "arches", arches);
                if (r->lost_thread)
                        incomplete = "a thread was not followed (too many threads recorded at once)";
                else if (r->persona_over)
                        incomplete = "a personality value was not kept (too many)";
                else if (r->nr_over)
                        incomplete = "a system call number beyond the tracer's range (x32's)";
                if (incomplete)
                        json_object_object_add(o, "incomplete", json_object_new_string(incomplete));
        }
        recording_end(rc, id);
        return o;
}

json_object *zd_recorder_status(const struct zd_recorder *rc) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "bpf", json_object_new_boolean(rc->skel != NULL));
        json_object_object_add(o, "reason", json_object_new_string(rc->reason));
        json_object_object_add(o, "active", json_object_new_int((int) rc->active));
        return o;
}
