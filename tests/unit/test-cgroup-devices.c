/* SPDX-License-Identifier: MIT */
/*
 * container/cgroup-devices.c alone: OCI rules parse (and bad ones are named), the list a container
 * gets, the v1 lines and the v1 refusal, and the v2 program decides as the list says: a small
 * interpreter here runs the generated eBPF on every request of a grid, against a reference
 * written here from the OCI wording (per access, last matching rule wins, default deny), for the
 * default list, hand-made lists and seeded random ones. The kernel's verifier gets the programs
 * too (skipped where bpf(2) is not allowed).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup-devices.h"
#include "testutil.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the reference and the interpreter ------------------------------------------------------- */

/* The OCI meaning, read independently of the code under test. */
static bool expect(const struct zct_dev_rule *rules, size_t n, char type, uint32_t major, uint32_t minor,
                   unsigned access) {
        for (unsigned bit = 1; bit < 8; bit <<= 1) {
                int verdict = 0;

                if (!(access & bit))
                        continue;
                for (size_t i = 0; i < n; i++) {
                        const struct zct_dev_rule *r = &rules[i];
                        bool dev = (r->type == 'a' || r->type == type) && (r->major < 0 || r->major == major) &&
                                   (r->minor < 0 || r->minor == minor);
                        if (dev && (r->access & bit))
                                verdict = r->allow ? 1 : 0; /* a later one overrides */
                }
                if (!verdict)
                        return false;
        }
        return true;
}

/* Runs prog on one request; fails the test on anything the generator should never emit. Also
 * checks what the verifier would: jumps forward and inside, no read of an unset register. */
static uint64_t run(const struct bpf_insn *prog, int len, struct bpf_cgroup_dev_ctx ctx, unsigned *steps) {
        uint64_t reg[11] = { 0 };
        bool set[11] = { [BPF_REG_1] = true };
        int pc = 0;

        for (*steps = 0;; (*steps)++) {
                const struct bpf_insn *i;
                int32_t imm;

                assert_in_range(pc, 0, len - 1);
                i = &prog[pc++];
                imm = i->imm;
                assert_true(i->dst_reg <= 10 && i->src_reg <= 10);
                switch (i->code) {
                case BPF_LDX | BPF_MEM | BPF_W:
                        assert_int_equal(i->src_reg, BPF_REG_1);
                        assert_true(i->off == 0 || i->off == 4 || i->off == 8);
                        reg[i->dst_reg] = i->off == 0 ? ctx.access_type : i->off == 4 ? ctx.major : ctx.minor;
                        set[i->dst_reg] = true;
                        break;
                case BPF_ALU | BPF_MOV | BPF_X:
                        assert_true(set[i->src_reg]);
                        reg[i->dst_reg] = (uint32_t) reg[i->src_reg];
                        set[i->dst_reg] = true;
                        break;
                case BPF_ALU | BPF_AND | BPF_K:
                        assert_true(set[i->dst_reg]);
                        reg[i->dst_reg] = (uint32_t) reg[i->dst_reg] & (uint32_t) imm;
                        break;
                case BPF_ALU | BPF_RSH | BPF_K:
                        assert_true(set[i->dst_reg] && imm >= 0 && imm < 32);
                        reg[i->dst_reg] = (uint32_t) reg[i->dst_reg] >> imm;
                        break;
                case BPF_ALU64 | BPF_MOV | BPF_K:
                        reg[i->dst_reg] = (uint64_t) (int64_t) imm;
                        set[i->dst_reg] = true;
                        break;
                case BPF_JMP | BPF_JA:
                        assert_true(i->off >= 0);
                        pc += i->off;
                        break;
                case BPF_JMP | BPF_JEQ | BPF_K:
                case BPF_JMP | BPF_JNE | BPF_K: {
                        bool eq = reg[i->dst_reg] == (uint64_t) (int64_t) imm;

                        assert_true(set[i->dst_reg] && i->off >= 0);
                        if (eq == ((i->code & 0xf0) == BPF_JEQ))
                                pc += i->off;
                        break;
                }
                case BPF_JMP | BPF_EXIT:
                        assert_true(set[BPF_REG_0]);
                        return reg[BPF_REG_0];
                default:
                        fail_msg("unexpected opcode 0x%02x at %d", i->code, pc - 1);
                }
        }
}

/* Every instruction can be reached (the kernel refuses dead code). */
static void assert_all_reachable(const struct bpf_insn *prog, int len) {
        bool *seen = calloc((size_t) len, 1);

        assert_non_null(seen);
        seen[0] = true;
        for (int pc = 0; pc < len; pc++) {
                uint8_t code = prog[pc].code;

                if (!seen[pc])
                        continue;
                if (BPF_CLASS(code) == BPF_JMP && BPF_OP(code) != BPF_EXIT && BPF_OP(code) != BPF_CALL) {
                        assert_in_range(pc + 1 + prog[pc].off, pc + 1, len - 1);
                        seen[pc + 1 + prog[pc].off] = true;
                }
                if (!(BPF_CLASS(code) == BPF_JMP && (BPF_OP(code) == BPF_EXIT || BPF_OP(code) == BPF_JA)))
                        seen[pc + 1] = true;
        }
        for (int pc = 0; pc < len; pc++)
                if (!seen[pc])
                        fail_msg("instruction %d cannot be reached", pc);
        free(seen);
}

static int generate(const struct zct_dev_rule *rules, size_t n, struct bpf_insn **ret) {
        size_t max = zct_dev_program_max(n);
        struct bpf_insn *prog = calloc(max, sizeof(*prog));
        int len;

        assert_non_null(prog);
        len = zct_dev_program(rules, n, prog, max);
        assert_in_range(len, 1, (int) max);
        assert_all_reachable(prog, len);
        *ret = prog;
        return len;
}

static const uint32_t majors[] = { 0, 1, 4, 5, 7, 10, 136, 254, 4095 };
static const uint32_t minors[] = { 0, 1, 2, 3, 5, 7, 8, 9, 11, 200, 1048575 };

/* The program, the reference and zct_dev_rules_allow agree on the whole grid. */
static void assert_program_matches(const struct zct_dev_rule *rules, size_t n) {
        struct bpf_insn *prog;
        int len = generate(rules, n, &prog);

        for (int t = 0; t < 2; t++)
                for (size_t a = 0; a < N(majors); a++)
                        for (size_t b = 0; b < N(minors); b++)
                                for (unsigned acc = 1; acc < 8; acc++) {
                                        char type = t ? 'b' : 'c';
                                        struct bpf_cgroup_dev_ctx ctx = { .access_type = (acc << 16) |
                                                                                         (t ? BPF_DEVCG_DEV_BLOCK
                                                                                            : BPF_DEVCG_DEV_CHAR),
                                                                          .major = majors[a],
                                                                          .minor = minors[b] };
                                        bool want = expect(rules, n, type, majors[a], minors[b], acc);
                                        unsigned steps;

                                        if ((uint64_t) want != run(prog, len, ctx, &steps))
                                                fail_msg("%c %u:%u access %u: program says %s", type, majors[a],
                                                         minors[b], acc, want ? "deny" : "allow");
                                        assert_int_equal(
                                                want, zct_dev_rules_allow(rules, n, type, majors[a], minors[b], acc));
                                }
        free(prog);
}

static void parse(const char *json, struct zct_dev_rule **ret, size_t *ret_n) {
        json_object *o = json_tokener_parse(json);
        char *err = NULL;

        assert_non_null(o);
        if (zct_dev_rules_from_json(o, ret, ret_n, &err) < 0)
                fail_msg("%s: %s", json, err);
        assert_null(err);
        json_object_put(o);
}

/* ---- tests ------------------------------------------------------------------------------------ */

static void test_parse_errors(void **state) {
        static const struct {
                const char *json, *words;
        } bad[] = {
                { "{}", "must be an array" },
                { "[{\"access\":\"rwm\"}]", "[0]: allow must be true or false" },
                { "[{\"allow\":\"yes\"}]", "[0]: allow must be" },
                { "[{\"allow\":true},{\"allow\":true,\"type\":\"p\"}]", "[1]: type must be" },
                { "[{\"allow\":true,\"type\":\"c\",\"major\":-2}]", "[0]: major must be" },
                { "[{\"allow\":true,\"type\":\"c\",\"major\":\"1\"}]", "[0]: major must be" },
                { "[{\"allow\":true,\"type\":\"c\",\"minor\":4294967296}]", "[0]: minor must be" },
                { "[{\"allow\":true,\"type\":\"c\",\"access\":\"xa\"}]", "[0]: access must be" },
                { "[{\"allow\":true,\"type\":\"c\",\"access\":7}]", "[0]: access must be" },
                { "[5]", "[0]: must be an object" },
        };

        for (size_t i = 0; i < N(bad); i++) {
                json_object *o = json_tokener_parse(bad[i].json);
                struct zct_dev_rule *rules = (void *) 1;
                size_t n = 99;
                char *err = NULL;

                assert_non_null(o);
                assert_int_equal(zct_dev_rules_from_json(o, &rules, &n, &err), -EINVAL);
                assert_non_null(err);
                if (!strstr(err, bad[i].words))
                        fail_msg("%s: %s", bad[i].json, err);
                assert_ptr_equal(rules, (void *) 1); /* untouched on failure */
                assert_int_equal(n, 99);
                free(err);
                json_object_put(o);
        }
}

static void test_too_many_rules(void **state) {
        json_object *a = json_object_new_array();
        struct zct_dev_rule *rules = NULL;
        size_t n = 0;
        char *err = NULL;

        for (int i = 0; i <= ZCT_DEV_MAX_CONFIG_RULES; i++)
                json_object_array_add(a, json_tokener_parse("{\"allow\":false}"));
        assert_int_equal(zct_dev_rules_from_json(a, &rules, &n, &err), -E2BIG);
        assert_non_null(strstr(err, "more than"));
        free(err);
        json_object_put(a);
}

static void test_list_shape(void **state) {
        struct zct_dev_rule *rules;
        size_t n, n_default;

        parse("[]", &rules, &n_default);
        free(rules);
        /* no devices member at all: the same list */
        assert_int_equal(zct_dev_rules_from_json(NULL, &rules, &n, NULL), 0);
        assert_int_equal(n, n_default);
        free(rules);

        parse("[{\"allow\":true,\"type\":\"a\",\"major\":1,\"minor\":3,\"access\":\"r\"},"
              "{\"allow\":false,\"type\":\"b\",\"major\":7},{\"allow\":true,\"type\":\"c\",\"minor\":null,\"access\":"
              "\"\"},{\"allow\":false,\"type\":\"c\",\"major\":1,\"minor\":11,\"access\":\"rwa\"}]",
              &rules, &n);
        assert_int_equal(n, n_default + 4);
        /* deny everything first, whatever the config says */
        assert_false(rules[0].allow);
        assert_int_equal(rules[0].type, 'a');
        assert_int_equal(rules[0].access, ZCT_DEV_ALL);
        /* "a" is every device */
        assert_int_equal(rules[1].type, 'a');
        assert_int_equal(rules[1].major, ZCT_DEV_ANY);
        assert_int_equal(rules[1].minor, ZCT_DEV_ANY);
        assert_int_equal(rules[1].access, ZCT_DEV_READ);
        /* absent minor and access: any minor, every access */
        assert_int_equal(rules[2].major, 7);
        assert_int_equal(rules[2].minor, ZCT_DEV_ANY);
        assert_int_equal(rules[2].access, ZCT_DEV_ALL);
        assert_int_equal(rules[3].minor, ZCT_DEV_ANY);
        assert_int_equal(rules[3].access, ZCT_DEV_ALL);
        /* a letter other than r, w and m is no access, as runc reads it: "rwa" is "rw" */
        assert_int_equal(rules[4].minor, 11);
        assert_int_equal(rules[4].access, ZCT_DEV_READ | ZCT_DEV_WRITE);
        free(rules);
}

/* The list every container gets: the standard devices, mknod of anything, nothing else. */
static void test_default_list(void **state) {
        static const struct {
                char type;
                uint32_t major, minor;
                unsigned access;
                bool allowed;
        } cases[] = {
                { 'c', 1, 3, ZCT_DEV_READ | ZCT_DEV_WRITE, true },   /* null */
                { 'c', 1, 9, ZCT_DEV_READ, true },                   /* urandom */
                { 'c', 5, 2, ZCT_DEV_READ | ZCT_DEV_WRITE, true },   /* ptmx */
                { 'c', 136, 7, ZCT_DEV_READ | ZCT_DEV_WRITE, true }, /* a pts */
                { 'c', 1, 11, ZCT_DEV_WRITE, false },                /* kmsg */
                { 'c', 1, 1, ZCT_DEV_READ, false },                  /* mem */
                { 'b', 254, 0, ZCT_DEV_READ, false },                /* a disk */
                { 'b', 254, 0, ZCT_DEV_MKNOD, true },                /* its node may be made */
                { 'b', 254, 0, ZCT_DEV_MKNOD | ZCT_DEV_READ, false },
                { 'c', 10, 200, ZCT_DEV_READ | ZCT_DEV_WRITE, false }, /* tun: not by default */
        };
        struct zct_dev_rule *rules;
        size_t n;

        parse("[{\"allow\":false,\"access\":\"rwm\"}]", &rules, &n);
        for (size_t i = 0; i < N(cases); i++)
                if (zct_dev_rules_allow(rules, n, cases[i].type, cases[i].major, cases[i].minor, cases[i].access) !=
                    cases[i].allowed)
                        fail_msg("case %zu: %c %u:%u", i, cases[i].type, cases[i].major, cases[i].minor);
        assert_program_matches(rules, n);
        free(rules);

        /* one allow more opens exactly that device, for exactly that access */
        parse("[{\"allow\":true,\"type\":\"b\",\"major\":7,\"minor\":0,\"access\":\"r\"}]", &rules, &n);
        assert_true(zct_dev_rules_allow(rules, n, 'b', 7, 0, ZCT_DEV_READ));
        assert_false(zct_dev_rules_allow(rules, n, 'b', 7, 0, ZCT_DEV_READ | ZCT_DEV_WRITE));
        assert_false(zct_dev_rules_allow(rules, n, 'b', 7, 1, ZCT_DEV_READ));
        assert_false(zct_dev_rules_allow(rules, n, 'c', 7, 0, ZCT_DEV_READ));
        assert_program_matches(rules, n);
        free(rules);
}

/* Lists whose answer depends on reading access per kind, and on the order. */
static void test_hand_made_lists(void **state) {
        const struct zct_dev_rule deny_write[] = {
                { true, 'a', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_ALL },
                { false, 'c', 1, 5, ZCT_DEV_WRITE },
        };
        const struct zct_dev_rule split_allow[] = {
                { false, 'a', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_ALL },
                { true, 'c', 1, 5, ZCT_DEV_READ },
                { true, 'c', ZCT_DEV_ANY, 5, ZCT_DEV_WRITE },
        };
        const struct zct_dev_rule later_wins[] = {
                { true, 'c', 1, ZCT_DEV_ANY, ZCT_DEV_ALL },
                { false, 'c', 1, 3, ZCT_DEV_ALL },
                { true, 'c', ZCT_DEV_ANY, 3, ZCT_DEV_READ },
        };
        const struct zct_dev_rule allow_all[] = { { true, 'a', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_ALL } };
        const struct zct_dev_rule nothing[] = { { false, 'b', 1, 1, ZCT_DEV_READ } };

        /* open(O_RDWR) of a device whose write is denied: refused, though read alone is fine */
        assert_false(zct_dev_rules_allow(deny_write, N(deny_write), 'c', 1, 5, ZCT_DEV_READ | ZCT_DEV_WRITE));
        assert_true(zct_dev_rules_allow(deny_write, N(deny_write), 'c', 1, 5, ZCT_DEV_READ));
        /* read and write granted by two rules: O_RDWR is granted */
        assert_true(zct_dev_rules_allow(split_allow, N(split_allow), 'c', 1, 5, ZCT_DEV_READ | ZCT_DEV_WRITE));
        assert_false(zct_dev_rules_allow(split_allow, N(split_allow), 'c', 2, 5, ZCT_DEV_READ | ZCT_DEV_WRITE));
        assert_true(zct_dev_rules_allow(later_wins, N(later_wins), 'c', 1, 3, ZCT_DEV_READ));
        assert_false(zct_dev_rules_allow(later_wins, N(later_wins), 'c', 1, 3, ZCT_DEV_WRITE));
        assert_true(zct_dev_rules_allow(later_wins, N(later_wins), 'c', 1, 4, ZCT_DEV_WRITE));
        assert_program_matches(deny_write, N(deny_write));
        assert_program_matches(split_allow, N(split_allow));
        assert_program_matches(later_wins, N(later_wins));
        assert_program_matches(allow_all, N(allow_all)); /* no deny at all: no dead "return 0" */
        assert_program_matches(nothing, N(nothing));
        assert_program_matches(nothing, 0);
}

static void random_rule(unsigned *seed, struct zct_dev_rule *r) {
        static const int64_t nums[] = { ZCT_DEV_ANY, ZCT_DEV_ANY, 0, 1, 3, 5, 7, 136, 254 };
        int t = rand_r(seed) % 5;

        r->allow = rand_r(seed) % 2;
        r->type = t == 0 ? 'a' : t <= 2 ? 'c' : 'b';
        r->major = r->type == 'a' ? ZCT_DEV_ANY : nums[rand_r(seed) % N(nums)];
        r->minor = r->type == 'a' ? ZCT_DEV_ANY : nums[rand_r(seed) % N(nums)];
        r->access = 1 + (unsigned) rand_r(seed) % 7;
}

static void test_random_lists(void **state) {
        unsigned seed = 22;

        for (int round = 0; round < 300; round++) {
                struct zct_dev_rule rules[24];
                size_t n = 1 + (size_t) rand_r(&seed) % N(rules);

                for (size_t i = 0; i < n; i++)
                        random_rule(&seed, &rules[i]);
                assert_program_matches(rules, n);
        }
}

static void test_program_too_long(void **state) {
        const struct zct_dev_rule rules[] = { { true, 'c', 1, 3, ZCT_DEV_ALL } };
        struct bpf_insn prog[8];

        assert_int_equal(zct_dev_program(rules, N(rules), prog, N(prog)), -E2BIG);
}

static void test_v1_lines_and_refusal(void **state) {
        const struct zct_dev_rule lines[] = {
                { true, 'c', 1, 3, ZCT_DEV_ALL },
                { false, 'b', 7, ZCT_DEV_ANY, ZCT_DEV_READ },
                { true, 'c', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_MKNOD },
                { false, 'a', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_ALL },
        };
        static const char *const want[] = { "c 1:3 rwm", "b 7:* r", "c *:* m", "a" };
        const struct zct_dev_rule carve[] = {
                { false, 'a', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_ALL },
                { true, 'c', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_ALL },
                { false, 'c', 1, 1, ZCT_DEV_READ },
        };
        const struct zct_dev_rule same[] = {
                { false, 'a', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_ALL },
                { true, 'c', 1, 1, ZCT_DEV_ALL },
                { false, 'c', 1, 1, ZCT_DEV_WRITE },
                { true, 'c', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_MKNOD },
                { false, 'c', 1, 2, ZCT_DEV_READ }, /* no access in common with the wide allow */
        };
        const struct zct_dev_rule reset[] = {
                { true, 'c', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_ALL },
                { false, 'a', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_ALL }, /* empties the v1 list */
                { false, 'c', 1, 1, ZCT_DEV_READ },
        };
        struct zct_dev_rule *rules;
        size_t n;
        char buf[64], *err = NULL;

        for (size_t i = 0; i < N(lines); i++) {
                zct_dev_rule_v1_line(&lines[i], buf, sizeof(buf));
                assert_string_equal(buf, want[i]);
        }
        assert_int_equal(zct_dev_rules_check_v1(carve, N(carve), &err), -EINVAL);
        assert_non_null(strstr(err, "\"c 1:1 r\""));
        assert_non_null(strstr(err, "\"c *:* rwm\""));
        free(err);
        assert_int_equal(zct_dev_rules_check_v1(same, N(same), NULL), 0);
        assert_int_equal(zct_dev_rules_check_v1(reset, N(reset), NULL), 0);
        /* the default list, and podman's shape of list, are fine on v1 */
        parse("[{\"allow\":false,\"access\":\"rwm\"},{\"allow\":true,\"type\":\"c\",\"major\":10,\"minor\":229,"
              "\"access\":\"rwm\"}]",
              &rules, &n);
        assert_int_equal(zct_dev_rules_check_v1(rules, n, NULL), 0);
        free(rules);
}

/* The kernel's verifier accepts what the generator makes, loaded as the runtime loads it. */
static void test_kernel_accepts(void **state) {
        struct zct_dev_rule *rules, big[ZCT_DEV_MAX_CONFIG_RULES];
        unsigned seed = 7;
        size_t n;

        for (size_t i = 0; i < N(big); i++)
                random_rule(&seed, &big[i]);
        parse("[]", &rules, &n);
        for (int k = 0; k < 2; k++) {
                struct bpf_insn *prog;
                int len = k == 0 ? generate(rules, n, &prog) : generate(big, N(big), &prog);
                char *log = NULL;
                int fd = zct_dev_program_load(prog, (size_t) len, &log);

                free(prog);
                if (fd == -EPERM || fd == -ENOSYS) {
                        free(rules);
                        print_message("bpf(BPF_PROG_LOAD) not allowed here (%s): needs root and "
                                      "CONFIG_CGROUP_BPF\n",
                                      strerror(-fd));
                        skip();
                }
                if (fd < 0)
                        fail_msg("program %d (%d instructions) refused: %s\n%s", k, len, strerror(-fd), log ? log : "");
                /* the program's fd: O_CLOEXEC, as the runtime's other fds */
                assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
                close(fd);
                free(log);
        }
        free(rules);
}

TU_MAIN(cmocka_unit_test(test_parse_errors), cmocka_unit_test(test_too_many_rules), cmocka_unit_test(test_list_shape),
        cmocka_unit_test(test_default_list), cmocka_unit_test(test_hand_made_lists),
        cmocka_unit_test(test_random_lists), cmocka_unit_test(test_program_too_long),
        cmocka_unit_test(test_v1_lines_and_refusal), cmocka_unit_test(test_kernel_accepts))
