/* SPDX-License-Identifier: MIT */
/*
 * The profile registry: every loaded profile with its reference process and the tier its spawns
 * use now, and why.
 *
 * Tier choice per profile: `clone` when the kernel has SECCOMP_CLONE_FILTER and the
 * reference is up; else `inherit` when a probe worker forked by the reference gets through every
 * setup step under the profile's filter; else `load`. A forced tier (--tier) that a profile cannot
 * use leaves that profile out, loudly, rather than measuring the wrong thing.
 *
 * A reference that dies is seen on its pidfd: its profile is served by `load` meanwhile and the
 * reference is restarted with exponential backoff (0.1 s doubling to 30 s; reset after a minute
 * of good health).
 */
#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/capability.h>
#include <syslog.h>

#include "call.h"
#include "daemon.h"
#include "fork-gate.h"
#include "log.h"
#include "pidfd-util.h"
#include "registry.h"
#include "sd.h"
#include "tier.h"
#include "util.h"

#define BACKOFF_MIN 0.1
#define BACKOFF_MAX 30.0
#define HEALTHY_AFTER 60.0

static void on_ref_death(struct ev_loop *loop, ev_io *w, int revents);
static void on_restart(struct ev_loop *loop, ev_timer *w, int revents);
static void on_init_death(struct ev_loop *loop, ev_io *w, int revents);

/* ---- the profile's pid namespace (pidns.h) ---------------------------------------------- */

/* An init let go of (its profile unloaded, or its init replaced): it leaves once its namespace is
 * empty, and we reap it then, as its parent. */
struct released_init {
        ev_io watch;
        int pidfd;
        struct released_init *next;
};

/* The inits let go of and not yet gone: freed when they leave, or with the registry (one daemon
 * per process: a list of this module's own). */
static struct released_init *released_inits;

static void released_init_free(struct ev_loop *loop, struct released_init *ri) {
        for (struct released_init **p = &released_inits; *p; p = &(*p)->next)
                if (*p == ri) {
                        *p = ri->next;
                        break;
                }
        ev_io_stop(loop, &ri->watch);
        safe_close(ri->pidfd);
        free(ri);
}

static void on_released_init(struct ev_loop *loop, ev_io *w, int revents) {
        struct released_init *ri = w->data;

        (void) pidfd_reap(ri->pidfd, NULL);
        released_init_free(loop, ri);
}

static void entry_release_pidns(struct zd_entry *e) {
        struct released_init *ri;

        if (e->ns.pidref.fd < 0)
                return;
        ev_io_stop(e->d->loop, &e->ns_watch);
        /* zygoted stopping: the init is reparented when we exit, nobody here to reap it */
        ri = e->d->stopping ? NULL : malloc(sizeof(*ri));
        if (ri) {
                ri->pidfd = fcntl(e->ns.pidref.fd, F_DUPFD_CLOEXEC, 3);
                if (ri->pidfd >= 0) {
                        ev_io_init(&ri->watch, on_released_init, ri->pidfd, EV_READ);
                        ri->watch.data = ri;
                        ev_io_start(e->d->loop, &ri->watch);
                        ri->next = released_inits;
                        released_inits = ri;
                } else
                        free(ri);
        }
        zr_pidns_release(&e->ns); /* closes the control socket: the init drains */
}

static void on_init_scope(struct zd_daemon *d, const char *profile, pid_t pid, int r, const char *error) {
        if (r < 0)
                zd_log(LOG_WARNING,
                       "profile %s: the init of its pid namespace (pid %d) stays in zygoted's cgroup, where a kill of "
                       "the service kills it and its namespace's tasks: %s",
                       profile, (int) pid, error ? error : strerror(-r));
        else
                zd_log(LOG_DEBUG, "profile %s: the init of its pid namespace (pid %d) has a scope of its own", profile,
                       (int) pid);
}

/* The init leaves the service's cgroup for a scope of its own: `systemctl kill zygoted` signals
 * every process of the service, and the init's death would take its namespace's tasks along. */
static void entry_scope_init(struct zd_entry *e) {
        struct zd_daemon *d = e->d;
        char what[128];
        int r;

        if (!zd_scope_available(d))
                return;
        snprintf(what, sizeof(what), "zygote: pid namespace init of profile %s", e->profile->name);
        r = zd_scope_start(d, "init", e->ns.pidref.pid, NULL, what, e->profile->name, on_init_scope);
        if (r < 0)
                on_init_scope(d, e->profile->name, e->ns.pidref.pid, r, NULL);
}

static int entry_start_pidns(struct zd_entry *e) {
        struct zd_daemon *d = e->d;
        char what[64] = "";
        int r;

        if (!d->features.pid_namespace || e->ns.pidref.fd >= 0)
                return 0;
        zd_fork_gate();
        r = zr_pidns_start(d->helper_fd, &e->ns, what, sizeof(what));
        if (r < 0) {
                zd_log(LOG_ERR, "profile %s: the init of its pid namespace failed to start%s%s: %s", e->profile->name,
                       what[0] ? " at " : "", what, strerror(-r));
                return r;
        }
        ev_io_init(&e->ns_watch, on_init_death, e->ns.pidref.fd, EV_READ);
        e->ns_watch.data = e;
        ev_io_start(d->loop, &e->ns_watch);
        entry_scope_init(e);
        return 0;
}

const struct zr_pidns *zd_entry_pidns(struct zd_entry *e, int *ret_err) {
        int r;

        *ret_err = 0;
        if (!e->d->features.pid_namespace)
                return NULL;
        r = entry_start_pidns(e);
        if (r < 0) {
                *ret_err = r;
                return NULL;
        }
        return &e->ns;
}

/* A reference's pidfd in systemd's fd store: the next zygoted ends it (adopt.c). Polled: a dead
 * reference has nothing to hand over. */
static void reference_fdname(pid_t pid, char buf[static 32]) {
        snprintf(buf, 32, "ref/%d", (int) pid);
}

static int entry_start_reference(struct zd_entry *e) {
        struct zd_daemon *d = e->d;
        const struct zp_profile *p = e->profile;
        unsigned last = d->features.cap_last;
        /* What the profile's workers drop anyway: once in the reference for all of them. An
         * unprivileged zygoted drops nothing (it could not). */
        uint64_t drop = !d->privileged ? 0 : (last >= 63 ? ~0ULL : (1ULL << (last + 1)) - 1) & ~p->caps_keep;
        /* The reference joins the pid namespace before its filter: its workers are born there. */
        int r = entry_start_pidns(e);
        if (r < 0)
                return r;
        zd_fork_gate();
        r = zr_reference_start_ns(d->helper_fd, p->bpf, p->bpf_len, p->filter_flags, p->no_new_privs || !d->privileged,
                                  drop, e->ns.pidns_fd, e->ns.mntns_fd,
                                  d->fork_workers || !p->worker_nocopy_ok ? ZR_REF_INIT_FORK_WORKERS : 0, &e->ref);
        if (r < 0)
                return r;
        e->ref_capbset = drop;
        e->ref_up = true;
        e->ref_started_at = ev_now(d->loop);
        char name[32];
        reference_fdname(e->ref.pidref.pid, name);
        (void) zd_sd_fdstore_add(name, e->ref.pidref.fd, true);
        ev_io_init(&e->ref_watch, on_ref_death, e->ref.pidref.fd, EV_READ);
        e->ref_watch.data = e;
        ev_io_start(d->loop, &e->ref_watch);
        return 0;
}

static void entry_stop_reference(struct zd_entry *e) {
        if (!e->ref_up)
                return;
        /* its pool workers first: never used once it is gone; those it is forking are settled
         * with its other requests */
        zd_ref_pool_stop(&e->pool);
        zd_ref_client_lost(&e->client); /* what it had in hand is settled before it is reaped */
        ev_io_stop(e->d->loop, &e->ref_watch);
        char name[32];
        reference_fdname(e->ref.pidref.pid, name);
        zd_sd_fdstore_remove(name);
        zr_reference_stop(&e->ref);
        e->ref_up = false;
}

/* Decides the entry's tier. Returns < 0 when a forced tier cannot be honoured. */
static int entry_choose_tier(struct zd_entry *e) {
        struct zd_daemon *d = e->d;
        enum zd_tier forced = d->forced_tier;
        _cleanup_free_ char *why = NULL;
        int r;

        if (forced == ZD_TIER_LOAD) {
                e->best_tier = ZD_TIER_LOAD;
                snprintf(e->reason, sizeof(e->reason), "forced by --tier load");
                goto done;
        }
        if (!e->ref_up) {
                if (forced != ZD_TIER_AUTO) {
                        snprintf(e->reason, sizeof(e->reason), "--tier %s: the reference process did not start",
                                 zd_tier_to_string(forced));
                        return -ESRCH;
                }
                e->best_tier = ZD_TIER_LOAD;
                snprintf(e->reason, sizeof(e->reason), "reference process did not start");
                goto done;
        }
        if (d->features.clone_filter && forced != ZD_TIER_INHERIT) {
                e->best_tier = ZD_TIER_CLONE;
                snprintf(e->reason, sizeof(e->reason), "%s",
                         forced == ZD_TIER_CLONE ? "forced by --tier clone" : "kernel has SECCOMP_CLONE_FILTER");
                goto done;
        }
        if (forced == ZD_TIER_CLONE) {
                snprintf(e->reason, sizeof(e->reason), "--tier clone: the kernel lacks SECCOMP_CLONE_FILTER");
                return -EOPNOTSUPP;
        }
        r = zr_reference_probe_inherit(&e->ref, d->helper_fd, d->privileged, &why);
        if (r >= 0) {
                e->best_tier = ZD_TIER_INHERIT;
                snprintf(e->reason, sizeof(e->reason), "%s",
                         forced == ZD_TIER_INHERIT  ? "forced by --tier inherit; inherit probe passed"
                         : d->features.clone_filter ? "inherit probe passed"
                                                    : "kernel lacks SECCOMP_CLONE_FILTER; inherit probe passed");
                goto done;
        }
        if (forced == ZD_TIER_INHERIT) {
                snprintf(e->reason, sizeof(e->reason), "--tier inherit: inherit probe failed: %s",
                         why ? why : strerror(-r));
                return -EPERM;
        }
        e->best_tier = ZD_TIER_LOAD;
        snprintf(e->reason, sizeof(e->reason), "kernel lacks SECCOMP_CLONE_FILTER; inherit probe failed: %s",
                 why ? why : strerror(-r));
done:
        e->tier = e->best_tier;
        return 0;
}

static void entry_free(struct zd_entry *e) {
        if (!e)
                return;
        entry_stop_reference(e);
        entry_release_pidns(e);
        ev_timer_stop(e->d->loop, &e->restart);
        zd_ref_pool_done(&e->pool);
        zd_ref_client_done(&e->client);
        zp_profile_free(e->profile);
        free(e);
}

static int entry_new(struct zd_daemon *d, struct zp_profile *p, struct zd_entry **ret, char **ret_error) {
        struct zd_entry *e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->d = d;
        e->profile = p;
        e->ref = ZR_REFERENCE_NULL;
        e->ns = ZR_PIDNS_NULL;
        e->backoff = BACKOFF_MIN;
        ev_timer_init(&e->restart, on_restart, 0., 0.);
        e->restart.data = e;
        int r = zd_ref_client_init(&e->client, d, &e->ref, p->name);
        if (r < 0) {
                free(e);
                return r;
        }
        zd_ref_pool_init(&e->pool, d, &e->client, d->pool_max);
        /* Without its pid namespace, a profile's tasks could reach outside their sandbox: the
         * profile is not served at all. */
        r = entry_start_pidns(e);
        if (r < 0) {
                if (ret_error &&
                    asprintf(ret_error, "the init of its pid namespace failed to start: %s", strerror(-r)) < 0)
                        *ret_error = NULL;
                e->profile = NULL;
                entry_free(e);
                return r;
        }
        r = entry_start_reference(e);
        if (r < 0)
                zd_log(LOG_WARNING, "profile %s: reference process failed to start: %s", p->name, strerror(-r));
        r = entry_choose_tier(e);
        if (r < 0) {
                if (ret_error)
                        *ret_error = strdup(e->reason);
                e->profile = NULL; /* the caller still owns it */
                entry_free(e);
                return r;
        }
        /* The reference only matters for clone and inherit; with load it stays as the filter
         * source for a later reload, but costs memory: stop it. */
        if (e->best_tier == ZD_TIER_LOAD)
                entry_stop_reference(e);
        else if (e->best_tier == ZD_TIER_INHERIT)
                zd_ref_pool_start(&e->pool);
        *ret = e;
        return 0;
}

static void on_restart(struct ev_loop *loop, ev_timer *w, int revents) {
        struct zd_entry *e = w->data;
        int r = entry_start_reference(e);
        if (r < 0) {
                e->backoff = e->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : e->backoff * 2;
                zd_log(LOG_WARNING, "profile %s: restarting the reference failed: %s; next try in %.1fs",
                       e->profile->name, strerror(-r), e->backoff);
                ev_timer_set(&e->restart, e->backoff, 0.);
                ev_timer_start(loop, &e->restart);
                return;
        }
        e->restarts++;
        e->tier = e->best_tier;
        if (e->tier == ZD_TIER_INHERIT)
                zd_ref_pool_start(&e->pool); /* a new pool: the old one went with the old reference */
        snprintf(e->reason, sizeof(e->reason), "reference restarted (%u restarts)", e->restarts);
        zd_log(LOG_NOTICE, "profile %s: reference process restarted (pid %d); back to the %s tier", e->profile->name,
               (int) e->ref.pidref.pid, zd_tier_to_string(e->tier));
}

static void on_ref_death(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_entry *e = w->data;
        pid_t pid = e->ref.pidref.pid;
        double lived = ev_now(loop) - e->ref_started_at;
        entry_stop_reference(e); /* reaps it */
        if (lived > HEALTHY_AFTER)
                e->backoff = BACKOFF_MIN;
        e->tier = ZD_TIER_LOAD;
        snprintf(e->reason, sizeof(e->reason), "reference process died; serving from the load tier until it restarts");
        zd_log(LOG_WARNING, "profile %s: reference process %d died; load tier meanwhile, restart in %.1fs",
               e->profile->name, (int) pid, e->backoff);
        ev_timer_set(&e->restart, e->backoff, 0.);
        ev_timer_start(loop, &e->restart);
        e->backoff = e->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : e->backoff * 2;
}

/* The init died (killed from outside: no task can signal it), and every process of its namespace
 * with it; the reference, whose children would be born in a dead namespace, goes too and is
 * restarted with a new one. The next spawn starts the init if this fails. */
static void on_init_death(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_entry *e = w->data;
        pid_t pid = e->ns.pidref.pid;
        siginfo_t si = {};

        ev_io_stop(loop, w);
        (void) zc_pidref_wait(&e->ns.pidref, WEXITED, &si);
        zr_pidns_release(&e->ns);
        zd_log(LOG_WARNING,
               "profile %s: the init %d of its pid namespace died (%s %d), and its tasks with it; "
               "starting another",
               e->profile->name, (int) pid, si.si_code == CLD_EXITED ? "exit status" : "signal", si.si_status);
        /* its watcher sees it die and restarts it, in the new namespace */
        if (e->ref_up)
                (void) zc_pidref_kill(&e->ref.pidref, SIGKILL);
        (void) entry_start_pidns(e);
}

struct zd_entry *zd_registry_find(struct zd_daemon *d, const char *name) {
        for (size_t i = 0; i < d->n_entries; i++)
                if (streq(d->entries[i]->profile->name, name))
                        return d->entries[i];
        return NULL;
}

static void log_profile_error(const char *message, void *userdata) {
        json_object *failed = userdata;
        zd_log(LOG_ERR, "%s", message);
        if (failed)
                json_object_array_add(failed, json_object_new_string(message));
}

/* Builds entries for a freshly loaded set; `old` entries with the same compiled program and
 * settings are kept as they are (reference and all). Takes the profiles out of `set`. */
static int build_entries(struct zd_daemon *d, struct zp_profile_set *set, struct zd_entry **old, size_t n_old,
                         json_object *loaded, json_object *failed, struct zd_entry ***ret, size_t *ret_n) {
        struct zd_entry **entries = calloc(set->n + n_old + 1, sizeof(*entries));
        if (!entries)
                return -ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < set->n; i++) {
                struct zp_profile *p = set->items[i];
                struct zd_entry *keep = NULL;
                for (size_t j = 0; j < n_old; j++) {
                        struct zd_entry *o = old[j];
                        if (o && streq(o->profile->name, p->name) && streq(o->profile->hash, p->hash) &&
                            o->profile->caps_keep == p->caps_keep && o->profile->no_new_privs == p->no_new_privs &&
                            o->profile->filter_flags == p->filter_flags) {
                                keep = o;
                                old[j] = NULL;
                                break;
                        }
                }
                if (keep) {
                        /* Same program: keep the reference; take the new access list and path. */
                        zp_profile_free(keep->profile);
                        keep->profile = p;
                        set->items[i] = NULL;
                        entries[n++] = keep;
                } else {
                        struct zd_entry *e;
                        _cleanup_free_ char *err = NULL;
                        int r = entry_new(d, p, &e, &err);
                        if (r < 0) {
                                char buf[512];
                                snprintf(buf, sizeof(buf), "%s: %s", p->path, err ? err : strerror(-r));
                                log_profile_error(buf, failed);
                                continue; /* stays in set; freed with it */
                        }
                        set->items[i] = NULL;
                        entries[n++] = e;
                        zd_log(LOG_INFO, "profile %s: %zu BPF instructions, longest path %u, tier %s (%s)", p->name,
                               p->bpf_len, p->longest_path, zd_tier_to_string(e->tier), e->reason);
                }
                if (loaded)
                        json_object_array_add(loaded, json_object_new_string(entries[n - 1]->profile->name));
        }
        *ret = entries;
        *ret_n = n;
        return 0;
}

void zd_registry_add_failures(const struct zd_daemon *d, json_object *params) {
        if (d->profile_failures && json_object_array_length(d->profile_failures) > 0)
                json_object_object_add(params, "failedFiles", json_object_get(d->profile_failures));
}

int zd_registry_no_such_profile(struct zd_call *call, const char *name) {
        json_object *p = json_object_new_object();

        json_object_object_add(p, "profile", json_object_new_string(name ? name : ""));
        zd_registry_add_failures(call->d, p);
        return zd_call_fail(call, -ENOENT, ZY_ERROR_NO_SUCH_PROFILE, p);
}

int zd_registry_load(struct zd_daemon *d) {
        struct zp_profile_set set = {};
        json_object *failed = json_object_new_array();
        int r = zp_profile_set_load((const char *const *) d->profile_dirs, d->n_profile_dirs, &set, log_profile_error,
                                    failed);
        if (r < 0) {
                json_object_put(failed);
                return r;
        }
        r = build_entries(d, &set, NULL, 0, NULL, failed, &d->entries, &d->n_entries);
        json_object_put(d->profile_failures);
        d->profile_failures = failed;
        zp_profile_set_clear(&set);
        if (r < 0)
                return r;
        return d->n_entries > 0 ? 0 : -ENOENT;
}

int zd_registry_reload(struct zd_daemon *d, json_object **ret_loaded, json_object **ret_failed) {
        struct zp_profile_set set = {};
        json_object *loaded = json_object_new_array(), *failed = json_object_new_array();
        int r = zp_profile_set_load((const char *const *) d->profile_dirs, d->n_profile_dirs, &set, log_profile_error,
                                    failed);
        if (r < 0)
                goto fail;
        struct zd_entry **entries;
        size_t n;
        r = build_entries(d, &set, d->entries, d->n_entries, loaded, failed, &entries, &n);
        zp_profile_set_clear(&set);
        if (r < 0)
                goto fail;
        /* A profile whose file now fails keeps its old version in service. */
        for (size_t j = 0; j < d->n_entries; j++) {
                struct zd_entry *o = d->entries[j];
                if (!o)
                        continue;
                bool failing = false;
                for (size_t k = 0; k < json_object_array_length(failed) && !failing; k++) {
                        const char *msg = json_object_get_string(json_object_array_get_idx(failed, k));
                        size_t l = strlen(o->profile->path);
                        failing = strncmp(msg, o->profile->path, l) == 0 && msg[l] == ':';
                }
                bool replaced = false;
                for (size_t k = 0; k < n && !replaced; k++)
                        replaced = streq(entries[k]->profile->name, o->profile->name);
                if (failing && !replaced) {
                        zd_log(LOG_WARNING, "profile %s: keeping the version loaded before", o->profile->name);
                        entries[n++] = o;
                } else
                        entry_free(o);
                d->entries[j] = NULL;
        }
        free(d->entries);
        d->entries = entries;
        d->n_entries = n;
        json_object_put(d->profile_failures);
        d->profile_failures = json_object_get(failed);
        *ret_loaded = loaded;
        *ret_failed = failed;
        return 0;
fail:
        json_object_put(loaded);
        json_object_put(failed);
        return r;
}

void zd_registry_free(struct zd_daemon *d) {
        for (size_t i = 0; i < d->n_entries; i++)
                entry_free(d->entries[i]);
        while (released_inits)
                released_init_free(d->loop, released_inits);
        free(d->entries);
        d->entries = NULL;
        d->n_entries = 0;
        json_object_put(d->profile_failures);
        d->profile_failures = NULL;
}

json_object *zd_entry_to_json(const struct zd_entry *e) {
        const struct zp_profile *p = e->profile;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(p->name));
        json_object_object_add(o, "path", json_object_new_string(p->path ? p->path : ""));
        json_object_object_add(o, "tier", json_object_new_string(zd_tier_to_string(e->tier)));
        json_object_object_add(o, "tierReason", json_object_new_string(e->reason));
        json_object_object_add(o, "bpfInstructions", json_object_new_int64((int64_t) p->bpf_len));
        json_object_object_add(o, "longestPath", json_object_new_int64(p->longest_path));
        json_object_object_add(o, "hash", json_object_new_string(p->hash));
        json_object *caps = json_object_new_array();
        for (unsigned i = 0; i < 64; i++)
                if (p->caps_keep & (1ULL << i)) {
                        char *name = cap_to_name((cap_value_t) i);
                        for (char *c = name; c && *c; c++)
                                *c = (char) toupper((unsigned char) *c);
                        json_object_array_add(caps, json_object_new_string(name ? name : "?"));
                        cap_free(name);
                }
        json_object_object_add(o, "capabilities", caps);
        json_object_object_add(o, "noNewPrivileges", json_object_new_boolean(p->no_new_privs));
        if (e->ref_up)
                json_object_object_add(o, "referencePid", json_object_new_int(e->ref.pidref.pid));
        if (e->ns.pidref.fd >= 0)
                json_object_object_add(o, "initPid", json_object_new_int(e->ns.pidref.pid));
        json_object_object_add(o, "parkedSpawns", json_object_new_int64(zd_ref_client_pending(&e->client)));
        json_object_object_add(o, "skippedSyscalls", json_object_new_int64(p->skipped_syscalls));
        if (e->best_tier == ZD_TIER_INHERIT && e->pool.max > 0)
                json_object_object_add(o, "pool", zd_ref_pool_to_json(&e->pool));
        return o;
}
