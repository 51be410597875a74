/* SPDX-License-Identifier: MIT */
/*
 * Spawn's plan: from the request, the caller and the profile to the one struct ze_plan the worker
 * applies (child.h), and the plan's tier and pipes, again in the load tier when the reference
 * does not take the spawn. Never a capability the caller lacks.
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>

#include "kernel-abi.h"
#include "daemon.h"
#include "signal-util.h"
#include "spawn-plan.h"
#include "spawn-state.h"
#include "util.h"

static uint64_t all_caps(unsigned cap_last) {
        return cap_last >= 63 ? ~0ULL : (1ULL << (cap_last + 1)) - 1;
}

/* argv/envp arrays pointing into the request (alive until the fork is done), and the PATH the
 * worker searches. */
static int spawn_argv(struct spawn *s) {
        const struct spawn_req *req = &s->req;
        size_t argc = json_object_array_length(req->argv);
        size_t envc = req->env ? json_object_array_length(req->env) : 0;
        s->argv = calloc(argc + 1, sizeof(char *));
        s->envp = calloc(envc + 1, sizeof(char *));
        if (!s->argv || !s->envp)
                return -ENOMEM;
        for (size_t i = 0; i < argc; i++)
                s->argv[i] = (char *) json_object_get_string(json_object_array_get_idx(req->argv, i));
        for (size_t i = 0; i < envc; i++) {
                s->envp[i] = (char *) json_object_get_string(json_object_array_get_idx(req->env, i));
                if (strncmp(s->envp[i], "PATH=", 5) == 0)
                        s->search = s->envp[i] + 5;
        }
        s->path_len = strlen(s->search ? s->search : ZC_DEFAULT_PATH) + strlen(s->argv[0]) + 2;
        s->path_buf = malloc(s->path_len);
        return s->path_buf ? 0 : -ENOMEM;
}

/* The caller's scheduling and umask, for step 0c of its worker: nothing to do where they are
 * zygoted's own, which the worker starts with (a reference has those zygoted had when it
 * started it). zygoted's are read at each spawn: cheap system calls, and an administrator may
 * renice it while it runs. An unprivileged zygoted cannot make its worker more important than
 * itself: its task gets the larger nice value of the two. Nor can its worker write its
 * oom_score_adj at all: a process that is not dumpable (zygoted's copies never are) has its
 * /proc files owned by root. Its tasks keep zygoted's (docs/SECURITY.md, known issues). */
static int spawn_sched(struct spawn *s) {
        return zd_caller_task_sched(&s->caller, s->call->d->privileged, &s->sched, &s->set_sched);
}

/* The daemon's signal dispositions that are not SIG_DFL (its handlers, SIGPIPE ignored), read
 * once, at the first spawn (main.c sets them all before it serves, nothing later): a worker
 * forked here resets only those, not all 64: fewer system calls before exec. */
static const sigset_t *daemon_dispositions(void) {
        static sigset_t set;
        static bool known;

        if (!known) {
                zc_signals_handled(&set);
                known = true;
        }
        return &set;
}

/* The one plain struct the worker applies: fd map, ids, capabilities, filter, pipes. The fd map,
 * the ids and the caller are decided already (spawn-request.c, spawn-identity.c). */
int zd_spawn_plan(struct spawn *s) {
        struct zd_call *call = s->call;
        struct zd_daemon *d = call->d;
        const struct zp_profile *p = s->entry->profile;
        int r;

        /* Never a capability the caller lacks: the bounding set within the caller's. A task that
         * runs as root gets, at its exec, its bounding set (and inheritable one) as permitted and
         * effective sets: so also within those the caller holds now, which a root caller may have
         * emptied (capsh --drop, a service's CapabilityBoundingSet=) without leaving uid 0. */
        s->keep &= s->who.uid == 0 ? zd_caller_caps_held(&s->caller) : s->caller.cap_bnd;
        r = spawn_argv(s);
        if (r < 0)
                return r;
        s->ns = zd_entry_pidns(s->entry, &r);
        if (r < 0)
                return r;

        r = spawn_sched(s);
        if (r < 0)
                return r;

        bool root_worker = s->id.set_ids ? s->id.uid == 0 : d->uid == 0;
        s->capbset_drop = d->privileged ? all_caps(d->features.cap_last) & ~s->keep : 0;
        s->prog = (struct sock_fprog){ .len = (unsigned short) p->bpf_len, .filter = p->bpf };
        s->plan = (struct ze_plan){
                .argv = s->argv,
                .envp = s->envp,
                .cwd = s->req.cwd ? s->req.cwd : "/",
                .search_path = s->search,
                .fds = s->map,
                .n_fds = s->n_map,
                .hold_fd = -1,
                .ctty = s->req.terminal,
                .set_ids = s->id.set_ids,
                .uid = s->id.uid,
                .gid = s->id.gid,
                .groups = s->id.groups,
                .n_groups = s->id.n_groups,
                .capbset_drop = s->capbset_drop, /* less in the inherit tier: zd_spawn_set_tier() */
                .capbset_mask_prctl = d->features.capbset_drop_mask,
                .cap_last = d->features.cap_last,
                .caps_keep = root_worker ? s->keep : 0,
                .caps_inh_drop = ~s->caller.cap_inh,
                .set_caps = d->privileged,
                /* A non-root caller never gains privileges through its task: no setuid or
                 * file-capability exec, whatever the profile says (and an unprivileged daemon
                 * cannot load a filter without it). */
                .no_new_privs = p->no_new_privs || !d->privileged || s->who.uid != 0 || s->caller.no_new_privs,
                .filter_flags = p->filter_flags,
                /* the caller's limits replace it, RLIMIT_NOFILE with the others */
                .nofile_soft = s->caller.n_rlimits > 0 ? 0 : d->nofile_soft,
                .n_rlimits = s->caller.n_rlimits,
                .n_cgroups = s->caller.n_cgroups,
                .ns_join = s->caller.ns_join,
                .caller_pidfd = s->caller.pidfd,
                .enter_root = s->caller.root_fd >= 0,
                .root_fd = s->caller.root_fd,
                /* the pid namespace's /proc: through its mount namespace, or for a caller whose
                 * root the worker enters, a private copy with a procfs of its own */
                .join_mntns = s->ns && s->caller.root_fd < 0,
                .mntns_fd = s->ns ? s->ns->mntns_fd : -EBADF,
                .set_sched = s->set_sched,
                .sched = s->sched,
                .own_proc = s->ns && s->caller.root_fd >= 0,
                .lsm_attr = s->caller.lsm_attr,
                .lsm_exec = s->caller.lsm_attr ? s->caller.lsm_exec : NULL,
                .caller_progs = s->caller_filters.progs,
                .n_caller_progs = s->caller_filters.n,
                .prog = &s->prog,
                .signals_reset = daemon_dispositions(),
                .path_buf = s->path_buf,
                .path_buf_len = s->path_len,
        };
        memcpy(s->plan.rlimits, s->caller.rlimits, sizeof(s->plan.rlimits));
        memcpy(s->plan.cgroup_fds, s->caller.cgroup_fds, sizeof(s->plan.cgroup_fds));
        /* clone and inherit need the reference: without it, this spawn loads. A worker that joins
         * the caller's namespaces or root is forked here: the inherit tier's filter, in place
         * before the worker runs, allows no setns nor chroot. So is one that takes its caller's
         * LSM label: the reference's plan does not carry one. */
        enum zd_tier tier = s->entry->tier;
        if ((tier == ZD_TIER_CLONE || tier == ZD_TIER_INHERIT) && !s->entry->ref_up)
                tier = ZD_TIER_LOAD;
        if (tier == ZD_TIER_INHERIT && (s->plan.ns_join || s->plan.enter_root || s->plan.lsm_attr))
                tier = ZD_TIER_LOAD;
        /* the caller's own filters go under the profile's: only a worker that loads both can
         * stack them so (a reference's filter, inherited or cloned, would be below them) */
        if (s->plan.n_caller_progs)
                tier = ZD_TIER_LOAD;
        /* a profile whose filter refuses the calls of step 0c: forked here, before any filter */
        if (tier == ZD_TIER_INHERIT && s->plan.set_sched && !p->worker_sched_ok)
                tier = ZD_TIER_LOAD;
        zd_spawn_set_tier(s, tier);
        return zd_spawn_pipes(s);
}

/* Without no_new_privs, loading (or cloning) a filter needs CAP_SYS_ADMIN: load it while the
 * worker still has it, before capabilities and ids change. */
static bool filter_early(const struct ze_plan *plan) {
        return !plan->no_new_privs && !(plan->caps_keep & (1ULL << CAP_SYS_ADMIN)) &&
               plan->filter_mode != ZE_FILTER_INHERITED;
}

void zd_spawn_set_tier(struct spawn *s, enum zd_tier tier) {
        s->tier = tier;
        s->plan.filter_mode = tier == ZD_TIER_CLONE     ? ZE_FILTER_CLONE
                              : tier == ZD_TIER_INHERIT ? ZE_FILTER_INHERITED
                                                        : ZE_FILTER_LOAD;
        s->plan.ref_pidfd = tier == ZD_TIER_CLONE ? s->entry->ref.pidref.fd : -1;
        /* a worker of the reference starts from its bounding set: only the rest is dropped */
        s->plan.capbset_drop = tier == ZD_TIER_INHERIT ? s->capbset_drop & ~s->entry->ref_capbset : s->capbset_drop;
        s->plan.filter_early = filter_early(&s->plan);
}

int zd_spawn_pipes(struct spawn *s) {
        bool gate = (s->tier == ZD_TIER_INHERIT && !s->req.hold) || s->scope || s->req.record;

        for (int i = 0; i < 2; i++) {
                s->status[i] = safe_close(s->status[i]);
                s->hold[i] = safe_close(s->hold[i]);
        }
        s->plan.status_fd = s->plan.hold_fd = -EBADF;
        if (pipe2(s->status, O_CLOEXEC) < 0 || fcntl(s->status[0], F_SETFL, O_NONBLOCK) < 0)
                return negative_errno();
        s->plan.status_fd = s->status[1];
        if (s->req.hold || gate) {
                if (pipe2(s->hold, O_CLOEXEC) < 0)
                        return negative_errno();
                s->plan.hold_fd = s->hold[0];
        }
        s->plan.hold_quiet = gate;
        return 0;
}

int zd_spawn_set_load(struct spawn *s) {
        /* the profile may have been reloaded meanwhile (same program): the entry's copy */
        s->prog = (struct sock_fprog){ .len = (unsigned short) s->entry->profile->bpf_len,
                                       .filter = s->entry->profile->bpf };
        zd_spawn_set_tier(s, ZD_TIER_LOAD);
        return zd_spawn_pipes(s);
}
