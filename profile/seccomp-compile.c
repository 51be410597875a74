/* SPDX-License-Identifier: MIT */
/*
 * Compilation of a parsed spec with libseccomp, and the measurements of the program. See
 * seccomp-compile.h.
 */

#include "seccomp-compile.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bpf.h"
#include "child.h"
#include "sha256.h"
#include "util.h"

static uint64_t now_nsec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

static void seccomp_releasep(scmp_filter_ctx *ctx) {
        if (*ctx)
                seccomp_release(*ctx);
}

/* libseccomp 2.5.4 has no export to memory: export into a memfd and read it back. */
int zp_seccomp_export_bpf(scmp_filter_ctx ctx, struct sock_filter **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ struct sock_filter *prog = NULL;
        off_t size;
        size_t done = 0;
        int r;

        fd = memfd_create("zygote-bpf", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return r;
        size = lseek(fd, 0, SEEK_END);
        if (size < 0)
                return negative_errno();
        if (size == 0 || size % (off_t) sizeof(struct sock_filter) != 0 ||
            size > (off_t) (BPF_MAXINSNS * 16 * sizeof(struct sock_filter)))
                return -EBADMSG;
        prog = malloc((size_t) size);
        if (!prog)
                return -ENOMEM;
        while (done < (size_t) size) {
                ssize_t k = pread(fd, (uint8_t *) prog + done, (size_t) size - done, (off_t) done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        return -EIO;
                done += (size_t) k;
        }
        *ret_len = (size_t) size / sizeof(struct sock_filter);
        *ret = TAKE_PTR(prog);
        return 0;
}

static int add_rule(scmp_filter_ctx ctx, const struct zp_oci_rule *rule, int nr) {
        struct scmp_arg_cmp cmp[ZP_PROFILE_MAX_ARGS];
        unsigned count[6] = {};
        bool repeated = false;
        int r;

        if (rule->n_args == 0)
                return seccomp_rule_add(ctx, rule->action, nr, 0);

        for (size_t i = 0; i < rule->n_args; i++) {
                const struct zp_oci_arg *a = &rule->args[i];
                cmp[i] = (struct scmp_arg_cmp){
                        .arg = a->index, .op = a->op, .datum_a = a->value, .datum_b = a->value_two
                };
                if (++count[a->index] > 1)
                        repeated = true;
        }

        /* Conditions on distinct arguments form one rule: all must hold (libseccomp ANDs them).
         * When an argument appears more than once, libseccomp 2.5 refuses the rule (-EINVAL), and
         * runc and crun both fall back to one rule per condition, so any one of them matching is
         * enough (OR). We do exactly the same, so a Docker file means here what it means there. */
        if (!repeated)
                return seccomp_rule_add_array(ctx, rule->action, nr, (unsigned) rule->n_args, cmp);
        for (size_t i = 0; i < rule->n_args; i++) {
                r = seccomp_rule_add_array(ctx, rule->action, nr, 1, &cmp[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int zp_seccomp_compile(struct zp_json_loader *l, const struct zp_oci_spec *s, unsigned optimize, struct zp_profile *p) {
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        char loc_r[PJ_LOC_MAX], loc_n[PJ_LOC_MAX], loc_s[PJ_LOC_MAX], q[PJ_QUOTE_MAX];
        uint64_t start = now_nsec();
        int r;

        ctx = seccomp_init(s->default_action);
        if (!ctx)
                return zp_json_fail(l, -ENOMEM, NULL, "libseccomp could not create a filter");
        /* 2: libseccomp's binary tree sorted by syscall number, O(log n) per syscall instead of
         * a linear scan. 1 is libseccomp's own default, used here only for comparisons. */
        if (optimize != 1) {
                r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, optimize);
                if (r < 0)
                        return zp_json_fail(l, r, NULL, "libseccomp refused optimize level %u: %s", optimize,
                                            strerror(-r));
        }
        for (size_t i = 0; i < s->n_arches; i++) {
                r = seccomp_arch_add(ctx, s->arches[i]);
                if (r < 0 && r != -EEXIST)
                        return zp_json_fail(l, r, s->loc, "libseccomp refused architecture 0x%08x: %s", s->arches[i],
                                            strerror(-r));
        }

        zp_json_loc_key(loc_s, s->loc, "syscalls");
        for (size_t i = 0; i < s->n_rules; i++) {
                const struct zp_oci_rule *rule = &s->rules[i];

                if (!rule->active)
                        continue;
                /* libseccomp refuses a rule whose action is the default (-EACCES); runc and crun
                 * skip it, and it decides nothing anyway. */
                if (rule->action == s->default_action)
                        continue;
                zp_json_loc_index(loc_r, loc_s, rule->json_index);
                for (size_t j = 0; j < rule->n_names; j++) {
                        int nr = seccomp_syscall_resolve_name(rule->names[j]);

                        /* Unknown to this libseccomp: skipped and counted, as runc does. A name
                         * known only on another architecture resolves to a negative pseudo number
                         * that libseccomp maps per architecture. */
                        if (nr == __NR_SCMP_ERROR) {
                                p->skipped_syscalls++;
                                continue;
                        }
                        r = add_rule(ctx, rule, nr);
                        if (r < 0) {
                                zp_json_loc_key(loc_n, loc_r, "names");
                                return zp_json_fail(l, r, loc_n, "libseccomp refused the rule for %s: %s",
                                                    zp_json_quote(rule->names[j], q), strerror(-r));
                        }
                        p->n_rules++;
                }
        }

        r = zp_seccomp_export_bpf(ctx, &p->bpf, &p->bpf_len);
        if (r < 0)
                return zp_json_fail(l, r, NULL, "exporting the BPF program failed: %s", strerror(-r));
        p->compile_nsec = now_nsec() - start;

        if (p->bpf_len > BPF_MAXINSNS)
                return zp_json_fail(l, -E2BIG, NULL, "the program has %zu instructions, more than the kernel's %d",
                                    p->bpf_len, BPF_MAXINSNS);
        r = zp_bpf_check(p->bpf, p->bpf_len);
        if (r < 0)
                return zp_json_fail(l, r, NULL, "libseccomp produced a program the kernel would refuse");

        memcpy(p->arches, s->arches, s->n_arches * sizeof(uint32_t));
        p->n_arches = s->n_arches;
        p->filter_flags = s->flags;
        return 0;
}

/* Longest path over every syscall number a process can pass: 0..1023 on each architecture, the
 * x32 range on x86_64 (x32 calls arrive with AUDIT_ARCH_X86_64 and bit 30 set, whether or not
 * the profile allows x32), and -1 (what ptrace uses to skip a call). */
static int measure(struct zp_profile *p) {
        unsigned best = 0, steps;
        int r;

        for (size_t i = 0; i < p->n_arches; i++) {
                uint32_t arch = p->arches[i];

                if (arch == SCMP_ARCH_X32) /* never in seccomp_data.arch, see above */
                        continue;
                r = zp_bpf_longest_path_range(p->bpf, p->bpf_len, arch, 0, 1024, &steps, NULL);
                if (r < 0)
                        return r;
                best = steps > best ? steps : best;
                if (arch == SCMP_ARCH_X86_64) {
                        r = zp_bpf_longest_path_range(p->bpf, p->bpf_len, arch, 0x40000000u, 1024, &steps, NULL);
                        if (r < 0)
                                return r;
                        best = steps > best ? steps : best;
                }
                r = zp_bpf_longest_path(p->bpf, p->bpf_len, arch, UINT32_MAX, &steps);
                if (r < 0)
                        return r;
                best = steps > best ? steps : best;
        }
        p->longest_path = best;
        return 0;
}

/* The worker's setup in the inherit tier (child.h lists its system calls): the filter is in place
 * before all of them, so each must be allowed, with the arguments the worker passes. */
static int check_worker_setup(struct zp_profile *p) {
        p->worker_setup_ok = true;
        p->worker_setup_blocked = NULL;
        p->worker_sched_ok = true;
        p->worker_nocopy_ok = true;

        for (size_t i = 0; i < ze_worker_syscalls_n; i++) {
                const struct ze_worker_syscall *call = &ze_worker_syscalls[i];
                struct seccomp_data d = { .arch = p->arches[0] };
                uint32_t action;
                int nr, r;

                if (call->when == ZE_WORKER_CALL_TERMINAL || call->when == ZE_WORKER_CALL_FORKED ||
                    (call->when == ZE_WORKER_CALL_KEEP_CAPS && p->caps_keep == 0))
                        continue;
                nr = seccomp_syscall_resolve_name_arch(p->arches[0], call->name);
                if (nr < 0)
                        continue; /* not a syscall on this architecture */
                d.nr = nr;
                memcpy(d.args, call->args, sizeof(d.args));
                r = zp_bpf_run(p->bpf, p->bpf_len, &d, &action, NULL);
                if (r < 0)
                        return r;
                action &= SECCOMP_RET_ACTION_FULL;
                if (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_LOG && call->when == ZE_WORKER_CALL_SCHED) {
                        p->worker_sched_ok = false;
                        continue;
                }
                if (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_LOG && call->when == ZE_WORKER_CALL_NOCOPY) {
                        p->worker_nocopy_ok = false;
                        continue;
                }
                if (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_LOG) {
                        p->worker_setup_ok = false;
                        p->worker_setup_blocked = call->name;
                        return 0;
                }
        }
        return 0;
}

int zp_seccomp_measure(struct zp_profile *p) {
        int r = measure(p);

        if (r >= 0)
                r = check_worker_setup(p);
        if (r < 0)
                return r;
        zc_sha256_hex(p->bpf, p->bpf_len * sizeof(struct sock_filter), p->hash);
        return 0;
}
