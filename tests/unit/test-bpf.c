/* SPDX-License-Identifier: MIT */
/* profile/bpf.c: the checker refuses what the kernel refuses, the interpreter computes what the
 * kernel computes, and the longest path is exact on libseccomp-shaped programs and an upper bound
 * beyond. */

#include <errno.h>
#include <linux/audit.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "bpf.h"
#include "seccomp-compile.h"
#include "testutil.h"

#define ARG_LO(i) ((uint32_t) (offsetof(struct seccomp_data, args) + 8 * (i)))
#define ARG_HI(i) (ARG_LO(i) + 4)
#define OFF_NR ((uint32_t) offsetof(struct seccomp_data, nr))
#define OFF_ARCH ((uint32_t) offsetof(struct seccomp_data, arch))
#define N(p) (sizeof(p) / sizeof((p)[0]))

static uint32_t run(const struct sock_filter *p, size_t n, const struct seccomp_data *d, unsigned *steps) {
        uint32_t action = 0xdeadbeef;
        assert_int_equal(zp_bpf_run(p, n, d, &action, steps), 0);
        return action;
}

static void test_check_rejects(void **state) {
        struct sock_filter ok[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
        struct sock_filter byte_load[] = { BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0), BPF_STMT(BPF_RET | BPF_A, 0) };
        struct sock_filter unaligned[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), BPF_STMT(BPF_RET | BPF_A, 0) };
        struct sock_filter beyond[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), BPF_STMT(BPF_RET | BPF_A, 0) };
        struct sock_filter ja_out[] = { BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0), BPF_STMT(BPF_RET | BPF_A, 0) };
        struct sock_filter jt_out[] = { BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0), BPF_STMT(BPF_RET | BPF_A, 0) };
        struct sock_filter jf_out[] = { BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1), BPF_STMT(BPF_RET | BPF_A, 0) };
        struct sock_filter no_ret[] = { BPF_STMT(BPF_LD | BPF_IMM, 1) };
        struct sock_filter div0[] = { BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), BPF_STMT(BPF_RET | BPF_A, 0) };
        struct sock_filter mod[] = { BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 3), BPF_STMT(BPF_RET | BPF_A, 0) };
        struct sock_filter shift32[] = { BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 32), BPF_STMT(BPF_RET | BPF_A, 0) };
        struct sock_filter mem16[] = { BPF_STMT(BPF_ST, 16), BPF_STMT(BPF_RET | BPF_A, 0) };
        struct sock_filter unset_mem[] = { BPF_STMT(BPF_LD | BPF_MEM, 3), BPF_STMT(BPF_RET | BPF_A, 0) };
        /* M[0] written on one branch only, then read where both branches meet. */
        struct sock_filter half_mem[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
                BPF_STMT(BPF_ST, 0),
                BPF_STMT(BPF_LD | BPF_MEM, 0),
                BPF_STMT(BPF_RET | BPF_A, 0),
        };
        struct sock_filter *big;

        assert_int_equal(zp_bpf_check(ok, N(ok)), 0);
        assert_int_equal(zp_bpf_check(ok, 0), -EINVAL);
        assert_int_equal(zp_bpf_check(NULL, 1), -EINVAL);
        assert_int_equal(zp_bpf_check(byte_load, N(byte_load)), -EINVAL);
        assert_int_equal(zp_bpf_check(unaligned, N(unaligned)), -EINVAL);
        assert_int_equal(zp_bpf_check(beyond, N(beyond)), -EINVAL);
        assert_int_equal(zp_bpf_check(ja_out, N(ja_out)), -EINVAL);
        assert_int_equal(zp_bpf_check(jt_out, N(jt_out)), -EINVAL);
        assert_int_equal(zp_bpf_check(jf_out, N(jf_out)), -EINVAL);
        assert_int_equal(zp_bpf_check(no_ret, N(no_ret)), -EINVAL);
        assert_int_equal(zp_bpf_check(div0, N(div0)), -EINVAL);
        assert_int_equal(zp_bpf_check(mod, N(mod)), -EINVAL); /* seccomp has no BPF_MOD */
        assert_int_equal(zp_bpf_check(shift32, N(shift32)), -EINVAL);
        assert_int_equal(zp_bpf_check(mem16, N(mem16)), -EINVAL);
        assert_int_equal(zp_bpf_check(unset_mem, N(unset_mem)), -EINVAL);
        assert_int_equal(zp_bpf_check(half_mem, N(half_mem)), -EINVAL);
        /* Writing M[0] before the branch makes the same read fine. */
        half_mem[0] = (struct sock_filter) BPF_STMT(BPF_ST, 0);
        assert_int_equal(zp_bpf_check(half_mem, N(half_mem)), 0);

        big = calloc(BPF_MAXINSNS + 1, sizeof(*big));
        assert_non_null(big);
        for (size_t i = 0; i <= BPF_MAXINSNS; i++)
                big[i] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, 0);
        assert_int_equal(zp_bpf_check(big, BPF_MAXINSNS), 0);
        assert_int_equal(zp_bpf_check(big, BPF_MAXINSNS + 1), -EINVAL);
        free(big);

        /* run refuses what check refuses */
        uint32_t action;
        struct seccomp_data d = {};
        assert_int_equal(zp_bpf_run(no_ret, N(no_ret), &d, &action, NULL), -EINVAL);
}

static void test_loads(void **state) {
        struct seccomp_data d = { .nr = 39,
                                  .arch = AUDIT_ARCH_X86_64,
                                  .instruction_pointer = 0x1122334455667788ull,
                                  .args = { 0xaaaaaaaabbbbbbbbull, 2, 3, 4, 5, 0x600000007ull } };
        struct sock_filter p[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0), BPF_STMT(BPF_RET | BPF_A, 0) };
        static const struct {
                uint32_t off, want;
        } v[] = {
                { OFF_NR, 39 },
                { OFF_ARCH, AUDIT_ARCH_X86_64 },
                { 8, 0x55667788 },
                { 12, 0x11223344 },
                { ARG_LO(0), 0xbbbbbbbb },
                { ARG_HI(0), 0xaaaaaaaa },
                { ARG_LO(5), 7 },
                { ARG_HI(5), 6 },
        };

        for (size_t i = 0; i < N(v); i++) {
                p[0].k = v[i].off;
                assert_int_equal(run(p, N(p), &d, NULL), v[i].want);
        }

        /* BPF_LEN is sizeof(struct seccomp_data), for A and X */
        struct sock_filter len[] = { BPF_STMT(BPF_LDX | BPF_W | BPF_LEN, 0), BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
                                     BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0), BPF_STMT(BPF_RET | BPF_A, 0) };
        assert_int_equal(run(len, N(len), &d, NULL), 128);

        /* scratch memory, immediates, TAX/TXA */
        struct sock_filter mem[] = {
                BPF_STMT(BPF_LD | BPF_IMM, 5),  BPF_STMT(BPF_ST, 15),
                BPF_STMT(BPF_LDX | BPF_IMM, 9), BPF_STMT(BPF_STX, 0),
                BPF_STMT(BPF_LD | BPF_MEM, 0),  BPF_STMT(BPF_MISC | BPF_TAX, 0),
                BPF_STMT(BPF_LD | BPF_MEM, 15), BPF_STMT(BPF_ALU | BPF_MUL | BPF_X, 0),
                BPF_STMT(BPF_RET | BPF_A, 0),
        };
        assert_int_equal(run(mem, N(mem), &d, NULL), 45);
        struct sock_filter txa[] = { BPF_STMT(BPF_LDX | BPF_IMM, 77), BPF_STMT(BPF_MISC | BPF_TXA, 0),
                                     BPF_STMT(BPF_RET | BPF_A, 0) };
        assert_int_equal(run(txa, N(txa), &d, NULL), 77);
}

static void test_alu(void **state) {
        static const struct {
                uint16_t op;
                uint32_t a, src, want;
        } v[] = {
                { BPF_ADD, 0xffffffff, 2, 1 }, { BPF_SUB, 1, 2, 0xffffffff },       { BPF_MUL, 0x10000, 0x10000, 0 },
                { BPF_DIV, 7, 2, 3 },          { BPF_AND, 0xf0f0, 0xff00, 0xf000 }, { BPF_OR, 0xf0, 0x0f, 0xff },
                { BPF_XOR, 0xff, 0x0f, 0xf0 }, { BPF_LSH, 1, 31, 0x80000000 },      { BPF_RSH, 0x80000000, 31, 1 },
        };
        struct seccomp_data d = {};

        for (size_t i = 0; i < N(v); i++) {
                struct sock_filter k[] = { BPF_STMT(BPF_LD | BPF_IMM, v[i].a),
                                           BPF_STMT(BPF_ALU | v[i].op | BPF_K, v[i].src),
                                           BPF_STMT(BPF_RET | BPF_A, 0) };
                struct sock_filter x[] = { BPF_STMT(BPF_LD | BPF_IMM, v[i].a), BPF_STMT(BPF_LDX | BPF_IMM, v[i].src),
                                           BPF_STMT(BPF_ALU | v[i].op | BPF_X, 0), BPF_STMT(BPF_RET | BPF_A, 0) };
                assert_int_equal(run(k, N(k), &d, NULL), v[i].want);
                assert_int_equal(run(x, N(x), &d, NULL), v[i].want);
        }

        struct sock_filter neg[] = { BPF_STMT(BPF_LD | BPF_IMM, 1), BPF_STMT(BPF_ALU | BPF_NEG, 0),
                                     BPF_STMT(BPF_RET | BPF_A, 0) };
        assert_int_equal(run(neg, N(neg), &d, NULL), 0xffffffff);

        /* Division by X == 0 ends the program with 0 (SECCOMP_RET_KILL_THREAD), after 4 steps. */
        unsigned steps;
        struct sock_filter div0[] = { BPF_STMT(BPF_LD | BPF_IMM, 7), BPF_STMT(BPF_LDX | BPF_IMM, 0),
                                      BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
                                      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
        assert_int_equal(run(div0, N(div0), &d, &steps), 0);
        assert_int_equal(steps, 3);

        /* Shifts by X use the low 5 bits. */
        struct sock_filter shx[] = { BPF_STMT(BPF_LD | BPF_IMM, 1), BPF_STMT(BPF_LDX | BPF_IMM, 33),
                                     BPF_STMT(BPF_ALU | BPF_LSH | BPF_X, 0), BPF_STMT(BPF_RET | BPF_A, 0) };
        assert_int_equal(run(shx, N(shx), &d, NULL), 2);
}

static void test_jumps(void **state) {
        static const struct {
                uint16_t op;
                uint32_t a, src;
                bool taken;
        } v[] = {
                { BPF_JEQ, 5, 5, true },  { BPF_JEQ, 5, 6, false },  { BPF_JGT, 6, 5, true },
                { BPF_JGT, 5, 5, false }, { BPF_JGE, 5, 5, true },   { BPF_JGE, 4, 5, false },
                { BPF_JSET, 6, 2, true }, { BPF_JSET, 6, 1, false }, { BPF_JGT, 0xffffffff, 0, true }, /* unsigned */
        };
        struct seccomp_data d = {};

        for (size_t i = 0; i < N(v); i++) {
                struct sock_filter k[] = { BPF_STMT(BPF_LD | BPF_IMM, v[i].a),
                                           BPF_JUMP(BPF_JMP | v[i].op | BPF_K, v[i].src, 0, 1),
                                           BPF_STMT(BPF_RET | BPF_K, 1), BPF_STMT(BPF_RET | BPF_K, 2) };
                struct sock_filter x[] = { BPF_STMT(BPF_LD | BPF_IMM, v[i].a), BPF_STMT(BPF_LDX | BPF_IMM, v[i].src),
                                           BPF_JUMP(BPF_JMP | v[i].op | BPF_X, 0, 0, 1), BPF_STMT(BPF_RET | BPF_K, 1),
                                           BPF_STMT(BPF_RET | BPF_K, 2) };
                assert_int_equal(run(k, N(k), &d, NULL), v[i].taken ? 1 : 2);
                assert_int_equal(run(x, N(x), &d, NULL), v[i].taken ? 1 : 2);
        }

        unsigned steps;
        struct sock_filter ja[] = { BPF_JUMP(BPF_JMP | BPF_JA, 2, 0, 0), BPF_STMT(BPF_RET | BPF_K, 1),
                                    BPF_STMT(BPF_RET | BPF_K, 2), BPF_STMT(BPF_RET | BPF_K, 3) };
        assert_int_equal(run(ja, N(ja), &d, &steps), 3);
        assert_int_equal(steps, 2);
}

/* A small filter shaped like libseccomp's: arch check, nr check, two argument checks. */
static const struct sock_filter small[] = {
        /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_ARCH),
        /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 8),
        /* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_NR),
        /* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 5),
        /* 4 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
        /* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 2),
        /* 6 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
        /* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 9, 1, 1),
        /* 8 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
        /* 9 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* 10 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

static void test_steps_and_longest_path(void **state) {
        struct seccomp_data d = { .nr = 1, .arch = AUDIT_ARCH_X86_64, .args = { 7 } };
        unsigned steps, longest;
        uint32_t worst;

        assert_int_equal(run(small, N(small), &d, &steps), SECCOMP_RET_ALLOW);
        assert_int_equal(steps, 9);
        d.args[0] = 6;
        assert_int_equal(run(small, N(small), &d, &steps), SECCOMP_RET_ERRNO | 1);
        assert_int_equal(steps, 7);
        d.nr = 2;
        assert_int_equal(run(small, N(small), &d, &steps), SECCOMP_RET_ALLOW);
        assert_int_equal(steps, 5);
        d.arch = AUDIT_ARCH_I386;
        assert_int_equal(run(small, N(small), &d, &steps), SECCOMP_RET_KILL_PROCESS);
        assert_int_equal(steps, 3);

        /* Over every argument value: nr 1 reaches the second argument check. */
        assert_int_equal(zp_bpf_longest_path(small, N(small), AUDIT_ARCH_X86_64, 1, &longest), 0);
        assert_int_equal(longest, 9);
        assert_int_equal(zp_bpf_longest_path(small, N(small), AUDIT_ARCH_X86_64, 2, &longest), 0);
        assert_int_equal(longest, 5);
        assert_int_equal(zp_bpf_longest_path(small, N(small), AUDIT_ARCH_I386, 1, &longest), 0);
        assert_int_equal(longest, 3);
        assert_int_equal(zp_bpf_longest_path_range(small, N(small), AUDIT_ARCH_X86_64, 0, 100, &longest, &worst), 0);
        assert_int_equal(longest, 9);
        assert_int_equal(worst, 1);
}

/* n arg-dependent branches each load a different constant and meet at one instruction that
 * compares A with a value none of them has; behind the "equal" side lies a long chain. */
static struct sock_filter *converging(unsigned n, size_t *ret_len, size_t *ret_meet) {
        size_t len = 1 + 3 * n + 1 + 1 + 10 + 2, pc = 0, meet = 1 + 3 * n + 1;
        struct sock_filter *p = calloc(len, sizeof(*p));

        assert_non_null(p);
        p[pc++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0));
        for (unsigned i = 0; i < n; i++) {
                /* if (arg0 == i) { A = 100 + i; goto meet; } */
                p[pc] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, i, 0, 2);
                pc++;
                p[pc++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_IMM, 100 + i);
                p[pc] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JA, (uint32_t) (meet - pc - 1), 0, 0);
                pc++;
        }
        p[pc++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 2);
        assert_int_equal(pc, meet);
        p[pc++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 5, 0, 11);
        for (unsigned i = 0; i < 10; i++)
                p[pc++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_IMM, i);
        p[pc++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        p[pc++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1);
        assert_int_equal(pc, len);
        *ret_len = len;
        *ret_meet = meet;
        return p;
}

static void test_longest_path_widening(void **state) {
        size_t len, meet;
        unsigned longest;
        struct sock_filter *p;

        /* 10 distinct states at the meeting point: exact. The longest real path takes the last
         * branch: the load, 9 failed compares, compare + load + jump (n + 3 = 13 to reach the
         * meeting point), then the compare, which no constant passes, and the return. */
        p = converging(10, &len, &meet);
        assert_int_equal(zp_bpf_check(p, len), 0);
        assert_int_equal(zp_bpf_longest_path(p, len, AUDIT_ARCH_X86_64, 0, &longest), 0);
        assert_int_equal(longest, 10 + 3 + 2);
        free(p);

        /* 20 states: more than ZP_BPF_MAX_STATES, widened to "unknown", so the chain behind the
         * compare counts too (compare, 10 loads, return): an upper bound, never below the truth. */
        p = converging(20, &len, &meet);
        assert_int_equal(zp_bpf_check(p, len), 0);
        assert_int_equal(zp_bpf_longest_path(p, len, AUDIT_ARCH_X86_64, 0, &longest), 0);
        assert_int_equal(longest, 20 + 3 + 12);
        free(p);
}

static void test_libseccomp_program(void **state) {
        struct sock_filter *prog[2];
        size_t len[2];
        unsigned longest[2];

        for (int layout = 0; layout < 2; layout++) {
                scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(1));
                assert_non_null(ctx);
                if (layout == 1)
                        assert_int_equal(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2), 0);
                assert_int_equal(seccomp_arch_add(ctx, SCMP_ARCH_X86), 0);
                for (int nr = 0; nr < 300; nr += 3)
                        if (nr != SCMP_SYS(personality)) /* it gets an argument rule below */
                                assert_int_equal(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0), 0);
                assert_int_equal(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1,
                                                  SCMP_A0(SCMP_CMP_EQ, 0xffffffff, 0)),
                                 0);
                assert_int_equal(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(22), SCMP_SYS(clone), 1,
                                                  SCMP_A0(SCMP_CMP_MASKED_EQ, 0x10000000, 0x10000000)),
                                 0);
                assert_int_equal(zp_seccomp_export_bpf(ctx, &prog[layout], &len[layout]), 0);
                seccomp_release(ctx);
                assert_int_equal(zp_bpf_check(prog[layout], len[layout]), 0);

                struct seccomp_data d = { .arch = AUDIT_ARCH_X86_64 };
                d.nr = 3;
                assert_int_equal(run(prog[layout], len[layout], &d, NULL), SECCOMP_RET_ALLOW);
                d.nr = 4;
                assert_int_equal(run(prog[layout], len[layout], &d, NULL), SECCOMP_RET_ERRNO | 1);
                d.nr = SCMP_SYS(personality);
                d.args[0] = 0xffffffff;
                assert_int_equal(run(prog[layout], len[layout], &d, NULL), SECCOMP_RET_ALLOW);
                d.args[0] = 0x1ffffffffull; /* the high half counts on x86_64 */
                assert_int_equal(run(prog[layout], len[layout], &d, NULL), SECCOMP_RET_ERRNO | 1);
                d.nr = SCMP_SYS(clone);
                d.args[0] = 0x10000000 | 0x11; /* CLONE_NEWUSER */
                assert_int_equal(run(prog[layout], len[layout], &d, NULL), SECCOMP_RET_ERRNO | 22);
                d.args[0] = 0x11;
                assert_int_equal(run(prog[layout], len[layout], &d, NULL), SECCOMP_RET_ERRNO | 1);
                d.arch = AUDIT_ARCH_AARCH64; /* not in the filter: libseccomp's default bad-arch action */
                assert_int_equal(run(prog[layout], len[layout], &d, NULL), SECCOMP_RET_KILL_THREAD);

                assert_int_equal(zp_bpf_longest_path_range(prog[layout], len[layout], AUDIT_ARCH_X86_64, 0, 512,
                                                           &longest[layout], NULL),
                                 0);
        }
        /* The binary tree is much shorter than the linear layout. */
        printf("# 100-rule filter: longest path %u (linear) vs %u (binary tree)\n", longest[0], longest[1]);
        assert_true(longest[1] * 3 < longest[0]);
        free(prog[0]);
        free(prog[1]);
}

static void test_action_to_string(void **state) {
        char buf[32];

        assert_string_equal(zp_bpf_action_to_string(SECCOMP_RET_ALLOW, buf, sizeof(buf)), "ALLOW");
        assert_string_equal(zp_bpf_action_to_string(SECCOMP_RET_ERRNO | 38, buf, sizeof(buf)), "ERRNO(38)");
        assert_string_equal(zp_bpf_action_to_string(SECCOMP_RET_KILL_PROCESS, buf, sizeof(buf)), "KILL_PROCESS");
        assert_string_equal(zp_bpf_action_to_string(SECCOMP_RET_KILL_THREAD, buf, sizeof(buf)), "KILL_THREAD");
        assert_string_equal(zp_bpf_action_to_string(SECCOMP_RET_TRACE | 7, buf, sizeof(buf)), "TRACE(7)");
        assert_string_equal(zp_bpf_action_to_string(SECCOMP_RET_LOG, buf, sizeof(buf)), "LOG");
        assert_string_equal(zp_bpf_action_to_string(0x12340000, buf, sizeof(buf)), "0x12340000");
}

TU_MAIN(cmocka_unit_test(test_check_rejects), cmocka_unit_test(test_loads), cmocka_unit_test(test_alu),
        cmocka_unit_test(test_jumps), cmocka_unit_test(test_steps_and_longest_path),
        cmocka_unit_test(test_longest_path_widening), cmocka_unit_test(test_libseccomp_program),
        cmocka_unit_test(test_action_to_string))
