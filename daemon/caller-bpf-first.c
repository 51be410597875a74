/* SPDX-License-Identifier: MIT */
/*
 * The caller's first thread from its record of the BPF task iterator (caller.c's facet;
 * caller-proc.h): what its /proc/PID/status, limits, oom_score_adj and ns links and its
 * scheduling system calls would say of it, made from the kernel objects they render, into the
 * same struct zd_caller fields the /proc reading fills. Where the record cannot say exactly what
 * /proc would (no first thread alive in the walk, more groups than it holds), nothing is taken
 * from it and caller.c reads the first thread through /proc.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "caller-proc.h"

#define NICE_0_PRIO 120 /* static_prio of nice 0: the kernel's MAX_RT_PRIO + 20 */

/* What sched_getscheduler(), sched_getparam(), getpriority() and ioprio_get() of the first thread
 * answer, from its record. ioprio_get() gives the io_context's priority, or 0 (class NONE) for a
 * thread without one (the kernels that have the task iterator's pid filter; zd_caller_bpf_load()
 * checks it on zygoted itself). */
static void sched_raw(const struct zd_caller_bpf_first *f, struct zd_caller_sched_raw *ret) {
        int policy = (int) f->policy;

        ret->policy = policy | (f->flags & ZD_CALLER_BPF_RESET_ON_FORK ? SCHED_RESET_ON_FORK : 0);
        ret->priority = policy == SCHED_FIFO || policy == SCHED_RR ? (int) f->rt_priority : 0;
        ret->nice = f->static_prio - NICE_0_PRIO;
        ret->ioprio = (int) f->ioprio;
        ret->oom_score_adj = f->oom_score_adj;
}

int zd_caller_bpf_read_first(const struct zd_caller_bpf_threads *ts, const uid_t *check_uid, struct zd_caller *c,
                             uint64_t ns[ZD_CALLER_NS_MAX], const struct zd_caller_bpf_thread **ret_first) {
        const struct zd_caller_bpf_first *f = &ts->first;
        const struct zd_caller_bpf_thread *first = NULL;
        struct zd_caller_sched_raw raw;
        gid_t *groups = NULL;
        int r;

        for (size_t i = 0; i < ts->n && !first; i++)
                if (ts->t[i].flags & ZD_CALLER_BPF_LEADER)
                        first = &ts->t[i];
        /* an exiting first thread may have lost its namespaces and fs already, where its /proc
         * files say so their own way; groups past the record's, only its status lists */
        if (!first || !ts->has_first || (first->flags & ZD_CALLER_BPF_EXITING) || !first->cred ||
            !(f->flags & ZD_CALLER_BPF_SIGNAL) || first->ngroups < 0 || first->ngroups > ZD_CALLER_BPF_GROUPS)
                return 1;
        if (check_uid && first->ids[0] != *check_uid)
                return -ESRCH; /* not the process that connected */
        if (first->ngroups > 0) {
                groups = calloc((size_t) first->ngroups, sizeof(gid_t));
                if (!groups)
                        return -ENOMEM;
                for (int i = 0; i < first->ngroups; i++)
                        groups[i] = f->groups[i];
        }
        c->euid = first->ids[1];
        c->egid = first->ids[5];
        c->groups = groups;
        c->n_groups = (size_t) first->ngroups;
        c->cap_inh = c->cap_prm = c->cap_eff = c->cap_bnd = c->cap_amb = UINT64_MAX;
        c->no_new_privs = false;
        c->seccomp_mode = 0;
        c->seccomp_filters = 0;
        (void) zd_caller_bpf_merge(first, first, false, c);
        /* Umask, as the status's: the strictest where it has none (no fs_struct) */
        c->sched.umask = f->flags & ZD_CALLER_BPF_FS ? f->umask & 0777 : 0777;
        sched_raw(f, &raw);
        zd_caller_sched_fork(&raw, &c->sched);
        /* /proc/PID/limits: RLIM_INFINITY shows as "unlimited", read back as RLIM_INFINITY */
        c->n_rlimits = 0;
        for (int res = 0; res < RLIM_NLIMITS && res < ZE_MAX_RLIMITS && res < ZD_CALLER_BPF_RLIMITS; res++)
                c->rlimits[c->n_rlimits++] = (struct ze_rlimit){ .resource = (uint32_t) res,
                                                                 .cur = f->rlim[res][0],
                                                                 .max = f->rlim[res][1] };
        r = zd_caller_clamp_rlimits(c);
        if (r < 0)
                return r;
        zd_caller_ns_from_record(first, f->pid_ns, ns);
        /* zygoted's own, from the same walk: all but its CPU affinity (caller.c) */
        if (ts->has_self && (ts->self.flags & ZD_CALLER_BPF_FS)) {
                sched_raw(&ts->self, &raw);
                zd_caller_sched_fork(&raw, &c->own_sched);
                c->own_sched.umask = ts->self.umask & 0777;
                c->has_own_sched = true;
        }
        *ret_first = first;
        return 0;
}
