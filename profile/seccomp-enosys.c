/* SPDX-License-Identifier: MIT */
/*
 * runc 1.1's -ENOSYS stub for a container's filter: a few instructions before libseccomp's
 * program that answer ENOSYS to a system call newer than every one the object names, on each
 * architecture it lists. A profile written before a call existed then behaves as the kernel of
 * its time did: a newer libc sees ENOSYS and falls back (clone3 to clone, openat2 to openat),
 * where the default action (EPERM, a kill) would break it. Still refused, with another errno:
 * the stub never lets a call through. See seccomp-compile.h.
 *
 * Layout (an architecture's block is skipped, jf, when seccomp_data.arch is another one):
 *
 *   ld arch
 *   per architecture:  jeq AUDIT_ARCH ; ld nr ; [its checks: jump to ENOSYS or to the program]
 *   ja program         (an architecture the object does not list: libseccomp decides)
 *   ENOSYS: ret ERRNO(ENOSYS)
 *   program: libseccomp's, unchanged (it loads arch and nr again)
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp-compile.h"
#include "util.h"

#define X32_BIT 0x40000000u
#define STUB_MAX (3 + ZP_PROFILE_MAX_ARCHES * 5) /* ld, the blocks, ja, ret */

enum target { TO_NEXT, TO_ENOSYS, TO_PROGRAM };

/* The stub under construction: instructions, and for each jump where it goes, fixed up last. */
struct stub {
        struct sock_filter insn[STUB_MAX];
        enum target jt[STUB_MAX], jf[STUB_MAX];
        size_t n;
};

static void emit(struct stub *s, uint16_t code, uint32_t k, enum target jt, enum target jf) {
        s->insn[s->n] = (struct sock_filter){ .code = code, .k = k };
        s->jt[s->n] = jt;
        s->jf[s->n] = jf;
        s->n++;
}

/* The highest number, on arch, of a name of an active rule (whatever its action, as runc counts
 * them); 0 when the object names none there. A name another architecture only has resolves to a
 * negative pseudo number, which counts for nothing. */
static uint32_t last_syscall(const struct zp_oci_spec *spec, uint32_t arch) {
        uint32_t last = 0;

        for (size_t i = 0; i < spec->n_rules; i++) {
                if (!spec->rules[i].active)
                        continue;
                for (size_t j = 0; j < spec->rules[i].n_names; j++) {
                        int nr = seccomp_syscall_resolve_name_arch(arch, spec->rules[i].names[j]);
                        if (nr > 0 && (uint32_t) nr > last)
                                last = (uint32_t) nr;
                }
        }
        return last;
}

static bool listed(const struct zp_oci_spec *spec, uint32_t arch) {
        for (size_t i = spec->native_listed ? 0 : 1; i < spec->n_arches; i++)
                if (spec->arches[i] == arch)
                        return true;
        return false;
}

/* One architecture's block. x86_64 and x32 share AUDIT_ARCH_X86_64 (x32 calls carry bit 30):
 * one block for both, each number compared with its own ABI's last, or left to the program when
 * that ABI is not listed. s390's number 0 multiplexes the old calls: answered ENOSYS, as runc. */
static void emit_block(struct stub *s, uint32_t audit, uint32_t last, uint32_t last_x32) {
        size_t start = s->n;

        emit(s, BPF_JMP | BPF_JEQ | BPF_K, audit, TO_NEXT, TO_NEXT); /* jf fixed below */
        emit(s, BPF_LD | BPF_W | BPF_ABS, (uint32_t) offsetof(struct seccomp_data, nr), TO_NEXT, TO_NEXT);
        if (audit == AUDIT_ARCH_S390 || audit == AUDIT_ARCH_S390X)
                emit(s, BPF_JMP | BPF_JEQ | BPF_K, 0, TO_ENOSYS, TO_NEXT);
        if (audit == AUDIT_ARCH_X86_64) {
                /* bit 30 set: the x32 comparison next; clear: the x86_64 one after it */
                emit(s, BPF_JMP | BPF_JSET | BPF_K, X32_BIT, TO_NEXT, TO_NEXT);
                s->insn[s->n - 1].jf = 1;
                if (last_x32)
                        emit(s, BPF_JMP | BPF_JGT | BPF_K, last_x32, TO_ENOSYS, TO_PROGRAM);
                else
                        emit(s, BPF_JMP | BPF_JA, 0, TO_PROGRAM, TO_PROGRAM);
        }
        if (last)
                emit(s, BPF_JMP | BPF_JGT | BPF_K, last, TO_ENOSYS, TO_PROGRAM);
        else
                emit(s, BPF_JMP | BPF_JA, 0, TO_PROGRAM, TO_PROGRAM);
        s->insn[start].jf = (uint8_t) (s->n - start - 1);
}

/* The jumps' offsets, now that the stub's length is known: -E2BIG past a conditional jump's 255. */
static int fix_jumps(struct stub *s, size_t enosys, size_t program) {
        for (size_t i = 0; i < s->n; i++) {
                struct sock_filter *f = &s->insn[i];
                enum target t[2] = { s->jt[i], s->jf[i] };

                for (int b = 0; b < 2; b++) {
                        size_t to = t[b] == TO_ENOSYS ? enosys : program, off;
                        if (t[b] == TO_NEXT)
                                continue;
                        off = to - i - 1;
                        if (BPF_OP(f->code) == BPF_JA) {
                                f->k = (uint32_t) off;
                                break;
                        }
                        if (off > 255)
                                return -E2BIG;
                        if (b == 0)
                                f->jt = (uint8_t) off;
                        else
                                f->jf = (uint8_t) off;
                }
        }
        return 0;
}

int zp_seccomp_enosys_stub(const struct zp_oci_spec *spec, struct zp_profile *p) {
        _cleanup_free_ struct stub *s = NULL;
        uint32_t def = spec->default_action, act = def & SECCOMP_RET_ACTION_FULL;
        struct sock_filter *prog;
        size_t blocks = 0, enosys;
        int r;

        /* what runc leaves alone: a default that lets calls through (or traces them), and one
         * that answers ENOSYS already */
        if (act == SECCOMP_RET_ALLOW || act == SECCOMP_RET_LOG || act == SECCOMP_RET_TRACE ||
            def == SCMP_ACT_ERRNO(ENOSYS))
                return 0;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        emit(s, BPF_LD | BPF_W | BPF_ABS, (uint32_t) offsetof(struct seccomp_data, arch), TO_NEXT, TO_NEXT);
        for (size_t i = 0; i < spec->n_arches; i++) {
                uint32_t arch = spec->arches[i], last, last_x32 = 0;

                if (arch == SCMP_ARCH_X32 && listed(spec, SCMP_ARCH_X86_64))
                        continue; /* x86_64's block has it */
                if (!listed(spec, arch))
                        continue;
                last = arch == SCMP_ARCH_X32 ? 0 : last_syscall(spec, arch);
                if (arch == SCMP_ARCH_X86_64 || arch == SCMP_ARCH_X32)
                        last_x32 = listed(spec, SCMP_ARCH_X32) ? last_syscall(spec, SCMP_ARCH_X32) : 0;
                if (!last && !last_x32)
                        continue; /* it names nothing there: runc leaves it to the program too */
                emit_block(s, arch == SCMP_ARCH_X32 ? AUDIT_ARCH_X86_64 : arch, last, last_x32);
                blocks++;
        }
        if (blocks == 0)
                return 0;
        emit(s, BPF_JMP | BPF_JA, 0, TO_PROGRAM, TO_PROGRAM);
        enosys = s->n;
        emit(s, BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS, TO_NEXT, TO_NEXT);
        r = fix_jumps(s, enosys, s->n);
        if (r < 0)
                return r;
        if (s->n + p->bpf_len > BPF_MAXINSNS)
                return -E2BIG;
        prog = malloc((s->n + p->bpf_len) * sizeof(*prog));
        if (!prog)
                return -ENOMEM;
        memcpy(prog, s->insn, s->n * sizeof(*prog));
        memcpy(prog + s->n, p->bpf, p->bpf_len * sizeof(*prog));
        free(p->bpf);
        p->bpf = prog;
        p->bpf_len += s->n;
        return 0;
}
