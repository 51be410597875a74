/* SPDX-License-Identifier: MIT */
/*
 * Transient scope units of the service manager that runs zygoted (systemd), asked for over its
 * private socket (/run/systemd/private, or $XDG_RUNTIME_DIR/systemd/private for a user's
 * manager) with sd-bus, driven by the daemon's loop: no call here blocks.
 *
 * A scope is for a process that must live neither in the service's cgroup (`systemctl kill
 * zygoted` signals every process there) nor in its caller's (which goes when the caller's unit
 * stops): a profile's pid namespace init, whose death takes its namespace's tasks along; a task
 * whose caller asked it to outlive the caller; a task of a user's zygoted whose caller's cgroup
 * (a login session's scope, owned by root) it may not join. It is what `systemd-run --scope`
 * asks for: StartTransientUnit with the process's pid, then the job's JobRemoved signal, which
 * the manager sends to every client of its private socket, says that the process was moved.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "probe.h"
#include "scope-unit.h"
#include "scope.h"
#include "sd.h"
#include "util.h"

#define SCOPE_CALL_USEC (5 * 1000 * 1000ULL) /* the method call's own bound */
#define SCOPE_JOB_SECONDS 10.0               /* and the job's, once queued */

struct zd_scope_req {
        struct zd_scope_req *next;
        struct zd_daemon *d;
        sd_bus_slot *slot;
        char *job; /* the job's object path, once the manager answered */
        char *key;
        char name[64]; /* the scope's */
        char *description;
        char *caller_cgroup;      /* for a task's: its caller's, whose unit the scope takes after */
        bool strict;              /* no unit for it: refused (else a scope in the default slice) */
        sd_bus_message *props;    /* the caller's unit's, as its manager gave them */
        bool foreign;             /* that manager is the system one, not ours (a user's zygoted) */
        struct zd_scope_bus *via; /* where the next call goes */
        char slice[256];          /* the unit's slice of detached tasks */
        pid_t pid;
        zd_scope_fn done;
        ev_timer expire;
};

static void scopes_arm(struct zd_scope_bus *b);

static void req_free(struct zd_scope_req *q) {
        sd_bus_slot_unref(q->slot);
        free(q->job);
        free(q->key);
        free(q->description);
        free(q->caller_cgroup);
        sd_bus_message_unref(q->props);
        free(q);
}

static void req_finish(struct zd_scope_req *q, int r, const char *error) {
        struct zd_daemon *d = q->d;

        for (struct zd_scope_req **p = &d->scopes.pending; *p; p = &(*p)->next)
                if (*p == q) {
                        *p = q->next;
                        break;
                }
        ev_timer_stop(d->loop, &q->expire);
        q->slot = sd_bus_slot_unref(q->slot);
        if (q->done)
                q->done(d, q->key, q->pid, r, error);
        req_free(q);
}

/* A connection is gone (the manager re-executed or stopped, the bus went away): every request
 * fails, and the next one connects again. */
static void scopes_drop_bus(struct zd_daemon *d, int r) {
        struct zd_scope_bus *buses[] = { &d->scopes.manager, &d->scopes.system };

        for (size_t i = 0; i < 2; i++) {
                ev_io_stop(d->loop, &buses[i]->io);
                ev_timer_stop(d->loop, &buses[i]->timer);
        }
        while (d->scopes.pending)
                req_finish(d->scopes.pending, r, "the connection to the service manager was lost");
        for (size_t i = 0; i < 2; i++)
                buses[i]->bus = sd_bus_flush_close_unref(buses[i]->bus);
}

static void scopes_process(struct zd_scope_bus *b) {
        for (;;) {
                int r = sd_bus_process(b->bus, NULL);
                if (r < 0) {
                        zd_log(LOG_WARNING, "service manager connection: %s", strerror(-r));
                        scopes_drop_bus(b->d, r);
                        return;
                }
                if (!b->bus)
                        return; /* a callback dropped it */
                if (r == 0)
                        break;
        }
        scopes_arm(b);
}

static void on_io(struct ev_loop *loop, ev_io *w, int revents) {
        scopes_process(w->data);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents) {
        scopes_process(w->data);
}

/* The watchers follow what sd-bus waits for: readable, writable, a deadline. */
static void scopes_arm(struct zd_scope_bus *b) {
        struct ev_loop *loop = b->d->loop;
        int ev = sd_bus_get_events(b->bus);
        uint64_t until = UINT64_MAX;

        if (ev < 0) {
                scopes_drop_bus(b->d, ev);
                return;
        }
        ev_io_stop(loop, &b->io);
        ev_io_set(&b->io, sd_bus_get_fd(b->bus), EV_READ | ((ev & POLLOUT) ? EV_WRITE : 0));
        ev_io_start(loop, &b->io);
        ev_timer_stop(loop, &b->timer);
        if (sd_bus_get_timeout(b->bus, &until) >= 0 && until != UINT64_MAX) {
                struct timespec now;
                clock_gettime(CLOCK_MONOTONIC, &now);
                uint64_t n = (uint64_t) now.tv_sec * 1000000ULL + (uint64_t) now.tv_nsec / 1000;
                ev_timer_set(&b->timer, until > n ? (double) (until - n) / 1e6 : 0., 0.);
                ev_timer_start(loop, &b->timer);
        }
}

/* b driven by the loop from now on. */
static void bus_attach(struct zd_daemon *d, struct zd_scope_bus *b, sd_bus *bus) {
        b->bus = bus;
        b->d = d;
        ev_io_init(&b->io, on_io, sd_bus_get_fd(bus), EV_READ);
        b->io.data = b;
        ev_timer_init(&b->timer, on_timer, 0., 0.);
        b->timer.data = b;
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct zd_daemon *d = userdata;
        const char *job, *unit, *result;
        uint32_t id;

        if (sd_bus_message_read(m, "uoss", &id, &job, &unit, &result) < 0)
                return 0;
        for (struct zd_scope_req *q = d->scopes.pending; q; q = q->next)
                if (q->job && strcmp(q->job, job) == 0) {
                        if (strcmp(result, "done") == 0)
                                req_finish(q, 0, NULL);
                        else {
                                char what[128];
                                snprintf(what, sizeof(what), "the manager's job for %s ended: %s", unit, result);
                                req_finish(q, -EIO, what);
                        }
                        break;
                }
        return 0;
}

/* The manager's private socket: the system manager's for root, the user's manager's otherwise
 * (NULL without XDG_RUNTIME_DIR). */
static const char *private_socket(char *buf, size_t size) {
        const char *rt = getenv("XDG_RUNTIME_DIR");

        if (getuid() == 0)
                snprintf(buf, size, "/run/systemd/private");
        else if (rt && *rt)
                snprintf(buf, size, "%s/systemd/private", rt);
        else
                return NULL;
        return buf;
}

static int scopes_connect(struct zd_daemon *d) {
        struct zd_scopes *s = &d->scopes;
        _cleanup_free_ char *address = NULL;
        char path[4096];
        sd_bus *bus = NULL;
        int r;

        if (s->manager.bus)
                return 0;
        if (!zd_scope_available(d))
                return -EHOSTDOWN;
        if (!private_socket(path, sizeof(path)) || asprintf(&address, "unix:path=%s", path) < 0)
                address = NULL;
        if (!address)
                return -ENOMEM;
        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, NULL, "/org/freedesktop/systemd1",
                                        "org.freedesktop.systemd1.Manager", "JobRemoved", on_job_removed, d);
        if (r < 0) {
                sd_bus_unref(bus);
                return r;
        }
        bus_attach(d, &s->manager, bus);
        return 0;
}

/* The system bus, where any user may read the system manager's units (its policy allows
 * GetUnitByControlGroup and Properties.GetAll to all): connected on first use, not waited for
 * (the Hello and the calls are queued). */
static int scopes_connect_system(struct zd_daemon *d) {
        sd_bus *bus = NULL;
        int r;

        if (d->scopes.system.bus)
                return 0;
        r = sd_bus_open_system(&bus);
        if (r < 0)
                return r;
        bus_attach(d, &d->scopes.system, bus);
        return 0;
}

bool zd_scope_available(struct zd_daemon *d) {
        struct zd_scopes *s = &d->scopes;
        const char *why = NULL;
        char path[4096];

        if (s->manager.bus)
                return true; /* asked once, connected since */
        if (s->unavailable)
                return false;
        if (ze_feature_disabled("scopes"))
                why = "disabled (ZYGOTE_DISABLE_FEATURES)";
        else if (!zd_sd_enabled())
                why = "zygoted does not run under a service manager";
        else if (!private_socket(path, sizeof(path)) || access(path, F_OK) < 0)
                why = "the service manager's private socket is not there";
        if (why) {
                s->unavailable = true;
                zd_log(LOG_INFO,
                       "no scope units: %s; tasks stay in their callers' cgroups and pid namespace inits in "
                       "zygoted's",
                       why);
        }
        return !why;
}

static void on_expire(struct ev_loop *loop, ev_timer *w, int revents) {
        req_finish(w->data, -ETIMEDOUT, "the service manager did not move the process in time");
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct zd_scope_req *q = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        const char *job;

        if (e) {
                int r = sd_bus_error_get_errno(e);
                req_finish(q, r > 0 ? -r : -EIO, e->message ? e->message : e->name);
                return 0;
        }
        if (sd_bus_message_read(m, "o", &job) < 0 || !(q->job = strdup(job))) {
                req_finish(q, -EBADMSG, "the service manager's answer could not be read");
                return 0;
        }
        return 0;
}

/* StartTransientUnit's call up to its properties, whose array is left open for more. */
static int scope_message_begin(sd_bus *bus, const char *name, pid_t pid, const char *description,
                               sd_bus_message **ret) {
        sd_bus_message *m = NULL;
        int r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                               "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", name, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)(sv)(sv)", "Description", "s", description, "PIDs", "au", 1,
                                          (uint32_t) pid, "CollectMode", "s", "inactive-or-failed");
        if (r < 0) {
                sd_bus_message_unref(m);
                return r;
        }
        *ret = m;
        return 0;
}

/* The slice (NULL: the manager's default), and the end of the call. */
static int scope_message_end(sd_bus_message *m, const char *slice) {
        int r = 0;

        if (slice)
                r = sd_bus_message_append(m, "(sv)", "Slice", "s", slice);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        return r;
}

static int scope_message(sd_bus *bus, const char *name, pid_t pid, const char *slice, const char *description,
                         sd_bus_message **ret) {
        sd_bus_message *m = NULL;
        int r = scope_message_begin(bus, name, pid, description, &m);

        if (r >= 0)
                r = scope_message_end(m, slice);
        if (r < 0) {
                sd_bus_message_unref(m);
                return r;
        }
        *ret = m;
        return 0;
}

/* A request of ours, not yet sent; NULL without memory. */
static struct zd_scope_req *req_new(struct zd_daemon *d, const char *kind, pid_t pid, const char *description,
                                    const char *key, zd_scope_fn done) {
        struct zd_scope_req *q = calloc(1, sizeof(*q));

        if (!q)
                return NULL;
        snprintf(q->name, sizeof(q->name), "zygote-%s-%d.scope", kind, (int) pid);
        q->key = strdup(key ? key : "");
        q->description = strdup(description);
        if (!q->key || !q->description) {
                req_free(q);
                return NULL;
        }
        q->d = d;
        q->via = &d->scopes.manager;
        q->pid = pid;
        q->done = done;
        ev_timer_init(&q->expire, on_expire, SCOPE_JOB_SECONDS, 0.);
        q->expire.data = q;
        return q;
}

/* Sends m (taken) for q, whose answer goes to fn. A request already pending stays so on
 * failure (its caller finishes it); a new one is freed. */
static int req_send(struct zd_scope_req *q, sd_bus_message *m, sd_bus_message_handler_t fn) {
        struct zd_daemon *d = q->d;
        bool pending = ev_is_active(&q->expire);
        int r;

        q->slot = sd_bus_slot_unref(q->slot);
        r = sd_bus_call_async(q->via->bus, &q->slot, m, fn, q, SCOPE_CALL_USEC);
        sd_bus_message_unref(m);
        if (r < 0) {
                if (!pending)
                        req_free(q);
                return r;
        }
        if (!pending) {
                ev_timer_start(d->loop, &q->expire);
                q->next = d->scopes.pending;
                d->scopes.pending = q;
        }
        scopes_arm(q->via);
        return 0;
}

/* A call of the Manager object's method member on b. */
static int manager_call(struct zd_scope_bus *b, const char *member, sd_bus_message **ret) {
        return sd_bus_message_new_method_call(b->bus, ret, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                              "org.freedesktop.systemd1.Manager", member);
}

int zd_scope_start(struct zd_daemon *d, const char *kind, pid_t pid, const char *slice, const char *description,
                   const char *key, zd_scope_fn done) {
        sd_bus_message *m = NULL;
        struct zd_scope_req *q;
        int r;

        r = scopes_connect(d);
        if (r < 0)
                return r;
        q = req_new(d, kind, pid, description, key, done);
        if (!q)
                return -ENOMEM;
        r = scope_message(d->scopes.manager.bus, q->name, pid, slice, description, &m);
        if (r < 0) {
                req_free(q);
                return r;
        }
        r = req_send(q, m, on_reply);
        if (r < 0)
                scopes_drop_bus(d, r);
        return r;
}

/* The caller's unit's limits (its properties, q->props, read again from their start) appended to
 * out's open "a(sv)"; u says what else the unit is. A refusal has its reason in why. */
static int req_copy(struct zd_scope_req *q, sd_bus_message *out, struct zd_scope_unit *u, char *why, size_t size) {
        int r = sd_bus_message_rewind(q->props, true);

        if (r < 0)
                return r;
        return zd_scope_unit_copy(q->props, q->caller_cgroup, q->foreign, out, u, why, size);
}

static int send_slice_set(struct zd_scope_req *q);

/* The answer to a scope made with its slice: another request of the same unit may have made the
 * slice since GetUnit said it was not there; then, once, as for a slice that was. */
static int on_created(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct zd_scope_req *q = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        int r;

        if (!e || !sd_bus_error_has_name(e, "org.freedesktop.systemd1.UnitExists"))
                return on_reply(m, userdata, ret_error);
        r = send_slice_set(q);
        if (r < 0)
                req_finish(q, r, "the request could not be sent to the service manager");
        return 0;
}

/* The task's scope, in the unit's slice of detached tasks (q->slice), carrying the unit's limits
 * itself too: should that slice be gone and made again by the manager as a plain one (stopped
 * by hand between our calls), no task has more than the unit had. With create, the slice is
 * made in the same call (an auxiliary unit), with the limits, stopped by the manager once no
 * scope needs it. */
static int send_task_scope(struct zd_scope_req *q, bool create) {
        sd_bus_message *call = NULL;
        struct zd_scope_unit u;
        char why[64];
        int r = scope_message_begin(q->via->bus, q->name, q->pid, q->description, &call);

        if (r >= 0)
                r = req_copy(q, call, &u, why, sizeof(why));
        if (r >= 0)
                r = sd_bus_message_append(call, "(sv)", "Slice", "s", q->slice);
        if (r >= 0)
                r = sd_bus_message_close_container(call);
        if (r >= 0 && !create)
                r = sd_bus_message_append(call, "a(sa(sv))", 0);
        else if (r >= 0) {
                r = sd_bus_message_open_container(call, 'a', "(sa(sv))");
                if (r >= 0)
                        r = sd_bus_message_open_container(call, 'r', "sa(sv)");
                if (r >= 0)
                        r = sd_bus_message_append(call, "s", q->slice);
                if (r >= 0)
                        r = sd_bus_message_open_container(call, 'a', "(sv)");
                if (r >= 0)
                        r = sd_bus_message_append(call, "(sv)(sv)", "Description", "s",
                                                  "zygote: detached tasks of one unit", "StopWhenUnneeded", "b", 1);
                if (r >= 0)
                        r = req_copy(q, call, &u, why, sizeof(why));
                for (int i = 0; i < 3 && r >= 0; i++)
                        r = sd_bus_message_close_container(call);
        }
        if (r < 0) {
                sd_bus_message_unref(call);
                return r;
        }
        return req_send(q, call, create ? on_created : on_reply);
}

/* The slice was there: it has been given the unit's limits as they are now; the scope goes in. */
static int on_slice_set(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct zd_scope_req *q = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        char why[1024];
        int r;

        if (e) {
                snprintf(why, sizeof(why), "the service manager did not set the limits of %s: %s", q->slice,
                         e->message ? e->message : e->name);
                req_finish(q, -EIO, why);
                return 0;
        }
        r = send_task_scope(q, false);
        if (r < 0)
                req_finish(q, r, "the request could not be sent to the service manager");
        return 0;
}

/* The limits set again on the slice that is there, as the unit has them now: they may have
 * changed since the slice was made (systemctl set-property); one the unit dropped since stays. */
static int send_slice_set(struct zd_scope_req *q) {
        sd_bus_message *call = NULL;
        struct zd_scope_unit u;
        char why[64];
        int r = manager_call(q->via, "SetUnitProperties", &call);

        if (r >= 0)
                r = sd_bus_message_append(call, "sb", q->slice, 1);
        if (r >= 0)
                r = sd_bus_message_open_container(call, 'a', "(sv)");
        if (r >= 0)
                r = req_copy(q, call, &u, why, sizeof(why));
        if (r >= 0)
                r = sd_bus_message_close_container(call);
        if (r < 0) {
                sd_bus_message_unref(call);
                return r;
        }
        return req_send(q, call, on_slice_set);
}

/* Whether the unit's slice of detached tasks is there (GetUnit loads nothing): made with the
 * scope if not, else given the limits again first. */
static int on_slice(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct zd_scope_req *q = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        int r;

        if (e && !sd_bus_error_has_name(e, "org.freedesktop.systemd1.NoSuchUnit")) {
                char why[1024];
                snprintf(why, sizeof(why), "the service manager did not say whether %s is there: %s", q->slice,
                         e->message ? e->message : e->name);
                req_finish(q, -EIO, why);
                return 0;
        }
        r = e ? send_task_scope(q, true) : send_slice_set(q);
        if (r < 0)
                req_finish(q, r, "the request could not be sent to the service manager");
        return 0;
}

/* The unit's properties: the scope takes its limits, in a slice of the unit's detached tasks
 * below the unit's slice, shared by all of them (one budget, as in the unit), or the request is
 * refused. */
static int on_unit_properties(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct zd_scope_req *q = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        sd_bus_message *call = NULL;
        struct zd_scope_unit u;
        char why[1024];
        int r;

        if (e) {
                snprintf(why, sizeof(why),
                         "the service manager did not give the properties of the unit of cgroup %s: %s",
                         q->caller_cgroup, e->message ? e->message : e->name);
                req_finish(q, -EIO, why);
                return 0;
        }
        q->props = sd_bus_message_ref(m);
        q->via = &q->d->scopes.manager; /* the scope is our manager's, whoever's the unit is */
        snprintf(why, sizeof(why), "the service manager's answer could not be read");
        /* read once to decide, into a message thrown away */
        r = scope_message_begin(q->via->bus, q->name, q->pid, q->description, &call);
        if (r >= 0)
                r = req_copy(q, call, &u, why, sizeof(why));
        sd_bus_message_unref(call);
        if (r >= 0 && q->foreign)
                r = zd_scope_unit_foreign_below(&u, why, sizeof(why));
        if (r >= 0 && (r = zd_scope_unit_slice_name(&u, q->slice, sizeof(q->slice))) < 0)
                snprintf(why, sizeof(why), "the name of a slice for the detached tasks of %s would be too long", u.id);
        if (r < 0) {
                req_finish(q, r, why);
                return 0;
        }
        zd_log(LOG_DEBUG, "%s: in %s, with %u properties of %s", q->name, q->slice, u.n_copied, u.id);
        r = manager_call(q->via, "GetUnit", &call);
        if (r >= 0)
                r = sd_bus_message_append(call, "s", q->slice);
        if (r >= 0)
                r = req_send(q, TAKE_PTR(call), on_slice);
        if (r < 0) {
                sd_bus_message_unref(call);
                req_finish(q, r, "the request could not be sent to the service manager");
        }
        return 0;
}

/* The unit that holds the caller's cgroup, as its manager says (a cgroup delegated to a unit is
 * that unit's, whatever its delegate named it). */
static int on_unit(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct zd_scope_req *q = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        sd_bus_message *call = NULL;
        const char *path;
        char why[1024];
        int r;

        if (e && !q->strict) {
                /* not the manager's: a scope as before, in its default slice (docs/SECURITY.md) */
                r = scope_message(q->via->bus, q->name, q->pid, NULL, q->description, &call);
                if (r >= 0)
                        r = req_send(q, call, on_reply);
                if (r < 0)
                        req_finish(q, r, "the request could not be sent to the service manager");
                return 0;
        }
        if (e && !q->foreign) {
                /* a user's manager has no unit for a login session's scope: the system one does */
                q->foreign = true;
                r = scopes_connect_system(q->d);
                if (r >= 0) {
                        q->via = &q->d->scopes.system;
                        r = manager_call(q->via, "GetUnitByControlGroup", &call);
                }
                if (r >= 0)
                        r = sd_bus_message_append(call, "s", q->caller_cgroup);
                if (r >= 0)
                        r = req_send(q, TAKE_PTR(call), on_unit);
                if (r >= 0)
                        return 0;
                sd_bus_message_unref(call);
                call = NULL;
        }
        if (e) {
                snprintf(why, sizeof(why),
                         "no unit for the caller's cgroup %s, in the service manager or the system's: %s",
                         q->caller_cgroup, e->message ? e->message : e->name);
                req_finish(q, -ESRCH, why);
                return 0;
        }
        r = sd_bus_message_read(m, "o", &path);
        if (r >= 0)
                r = sd_bus_message_new_method_call(q->via->bus, &call, "org.freedesktop.systemd1", path,
                                                   "org.freedesktop.DBus.Properties", "GetAll");
        if (r >= 0)
                r = sd_bus_message_append(call, "s", ""); /* every interface: the unit's and its type's */
        if (r >= 0)
                r = req_send(q, TAKE_PTR(call), on_unit_properties);
        if (r < 0) {
                sd_bus_message_unref(call);
                req_finish(q, r, "the service manager's answer could not be read");
        }
        return 0;
}

int zd_scope_start_for(struct zd_daemon *d, const char *kind, pid_t pid, const char *caller_cgroup, bool strict,
                       const char *description, const char *key, zd_scope_fn done) {
        sd_bus_message *m = NULL;
        struct zd_scope_req *q;
        int r;

        r = scopes_connect(d);
        if (r < 0)
                return r;
        q = req_new(d, kind, pid, description, key, done);
        if (!q)
                return -ENOMEM;
        q->strict = strict;
        q->caller_cgroup = strdup(caller_cgroup);
        r = q->caller_cgroup ? 0 : -ENOMEM;
        if (r >= 0)
                r = manager_call(q->via, "GetUnitByControlGroup", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", caller_cgroup);
        if (r < 0) {
                sd_bus_message_unref(m);
                req_free(q);
                return r;
        }
        r = req_send(q, m, on_unit);
        if (r < 0)
                scopes_drop_bus(d, r);
        return r;
}

void zd_scopes_free(struct zd_daemon *d) {
        if (d->scopes.manager.bus || d->scopes.system.bus)
                scopes_drop_bus(d, -ECANCELED);
}
