/* SPDX-License-Identifier: MIT */
/* Classic BPF for seccomp: checker, interpreter, longest-path measurement. See bpf.h. */

#include "bpf.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define SECCOMP_DATA_SIZE ((uint32_t) sizeof(struct seccomp_data))

int zp_bpf_check(const struct sock_filter *prog, size_t len) {
        uint16_t *masks, memvalid = 0;
        int r = 0;

        if (!prog || len == 0 || len > BPF_MAXINSNS)
                return -EINVAL;

        for (size_t pc = 0; pc < len; pc++) {
                const struct sock_filter *f = &prog[pc];

                switch (f->code) {
                case BPF_LD | BPF_W | BPF_ABS:
                        /* seccomp_check_filter: 32-bit aligned and inside struct seccomp_data. */
                        if (f->k >= SECCOMP_DATA_SIZE || (f->k & 3))
                                return -EINVAL;
                        break;
                case BPF_LD | BPF_W | BPF_LEN:
                case BPF_LDX | BPF_W | BPF_LEN:
                case BPF_RET | BPF_K:
                case BPF_RET | BPF_A:
                case BPF_ALU | BPF_ADD | BPF_K:
                case BPF_ALU | BPF_ADD | BPF_X:
                case BPF_ALU | BPF_SUB | BPF_K:
                case BPF_ALU | BPF_SUB | BPF_X:
                case BPF_ALU | BPF_MUL | BPF_K:
                case BPF_ALU | BPF_MUL | BPF_X:
                case BPF_ALU | BPF_DIV | BPF_X:
                case BPF_ALU | BPF_AND | BPF_K:
                case BPF_ALU | BPF_AND | BPF_X:
                case BPF_ALU | BPF_OR | BPF_K:
                case BPF_ALU | BPF_OR | BPF_X:
                case BPF_ALU | BPF_XOR | BPF_K:
                case BPF_ALU | BPF_XOR | BPF_X:
                case BPF_ALU | BPF_LSH | BPF_X:
                case BPF_ALU | BPF_RSH | BPF_X:
                case BPF_ALU | BPF_NEG:
                case BPF_LD | BPF_IMM:
                case BPF_LDX | BPF_IMM:
                case BPF_MISC | BPF_TAX:
                case BPF_MISC | BPF_TXA:
                        break;
                case BPF_ALU | BPF_DIV | BPF_K:
                        if (f->k == 0)
                                return -EINVAL;
                        break;
                case BPF_ALU | BPF_LSH | BPF_K:
                case BPF_ALU | BPF_RSH | BPF_K:
                        if (f->k >= 32)
                                return -EINVAL;
                        break;
                case BPF_LD | BPF_MEM:
                case BPF_LDX | BPF_MEM:
                case BPF_ST:
                case BPF_STX:
                        if (f->k >= BPF_MEMWORDS)
                                return -EINVAL;
                        break;
                case BPF_JMP | BPF_JA:
                        /* Unsigned offsets: every jump goes forward, so programs always end. */
                        if (f->k >= len - pc - 1)
                                return -EINVAL;
                        break;
                case BPF_JMP | BPF_JEQ | BPF_K:
                case BPF_JMP | BPF_JEQ | BPF_X:
                case BPF_JMP | BPF_JGE | BPF_K:
                case BPF_JMP | BPF_JGE | BPF_X:
                case BPF_JMP | BPF_JGT | BPF_K:
                case BPF_JMP | BPF_JGT | BPF_X:
                case BPF_JMP | BPF_JSET | BPF_K:
                case BPF_JMP | BPF_JSET | BPF_X:
                        if (pc + 1 + f->jt >= len || pc + 1 + f->jf >= len)
                                return -EINVAL;
                        break;
                default:
                        return -EINVAL;
                }
        }

        if (prog[len - 1].code != (BPF_RET | BPF_K) && prog[len - 1].code != (BPF_RET | BPF_A))
                return -EINVAL;

        /* Scratch memory must be written on every path before it is read (check_load_and_stores):
         * masks[pc] is the set of cells valid on every jump into pc. */
        masks = malloc(len * sizeof(*masks));
        if (!masks)
                return -ENOMEM;
        memset(masks, 0xff, len * sizeof(*masks));
        for (size_t pc = 0; pc < len && r == 0; pc++) {
                const struct sock_filter *f = &prog[pc];

                memvalid &= masks[pc];
                switch (f->code) {
                case BPF_ST:
                case BPF_STX:
                        memvalid |= (uint16_t) (1u << f->k);
                        break;
                case BPF_LD | BPF_MEM:
                case BPF_LDX | BPF_MEM:
                        if (!(memvalid & (1u << f->k)))
                                r = -EINVAL;
                        break;
                case BPF_JMP | BPF_JA:
                        masks[pc + 1 + f->k] &= memvalid;
                        memvalid = 0xffff;
                        break;
                default:
                        if (BPF_CLASS(f->code) == BPF_JMP) {
                                masks[pc + 1 + f->jt] &= memvalid;
                                masks[pc + 1 + f->jf] &= memvalid;
                                memvalid = 0xffff;
                        }
                        break;
                }
        }
        free(masks);
        return r;
}

static uint32_t load_word(const struct seccomp_data *d, uint32_t off) {
        uint32_t v;

        /* The kernel reads the u32 at that offset in native byte order. */
        memcpy(&v, (const uint8_t *) d + off, sizeof(v));
        return v;
}

/* One ALU operation; false for a division by zero (the program then returns 0). */
static bool alu(uint16_t op, uint32_t *a, uint32_t src) {
        switch (op) {
        case BPF_ADD:
                *a += src;
                break;
        case BPF_SUB:
                *a -= src;
                break;
        case BPF_MUL:
                *a *= src;
                break;
        case BPF_DIV:
                if (src == 0)
                        return false;
                *a /= src;
                break;
        case BPF_AND:
                *a &= src;
                break;
        case BPF_OR:
                *a |= src;
                break;
        case BPF_XOR:
                *a ^= src;
                break;
        case BPF_LSH:
                *a <<= (src & 31);
                break;
        case BPF_RSH:
                *a >>= (src & 31);
                break;
        case BPF_NEG:
                *a = -*a;
                break;
        }
        return true;
}

static bool jump_taken(uint16_t op, uint32_t a, uint32_t src) {
        switch (op) {
        case BPF_JEQ:
                return a == src;
        case BPF_JGT:
                return a > src;
        case BPF_JGE:
                return a >= src;
        case BPF_JSET:
                return (a & src) != 0;
        }
        return false;
}

/* A load into A (BPF_LD) or X (BPF_LDX), which share their modes; BPF_ABS is A's only
 * (zp_bpf_check refuses it for X). */
static void run_load(const struct sock_filter *f, const struct seccomp_data *d, const uint32_t *mem, uint32_t *reg) {
        switch (BPF_MODE(f->code)) {
        case BPF_ABS:
                *reg = load_word(d, f->k);
                break;
        case BPF_LEN:
                *reg = SECCOMP_DATA_SIZE;
                break;
        case BPF_IMM:
                *reg = f->k;
                break;
        case BPF_MEM:
                *reg = mem[f->k];
                break;
        }
}

int zp_bpf_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *d, uint32_t *ret_action,
               unsigned *ret_steps) {
        uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {};
        unsigned steps = 0;
        int r;

        r = zp_bpf_check(prog, len);
        if (r < 0)
                return r;

        for (size_t pc = 0; pc < len; pc++) {
                const struct sock_filter *f = &prog[pc];
                uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;

                steps++;
                switch (BPF_CLASS(f->code)) {
                case BPF_LD:
                        run_load(f, d, mem, &a);
                        break;
                case BPF_LDX:
                        run_load(f, d, mem, &x);
                        break;
                case BPF_ST:
                        mem[f->k] = a;
                        break;
                case BPF_STX:
                        mem[f->k] = x;
                        break;
                case BPF_ALU:
                        if (!alu(BPF_OP(f->code), &a, src))
                                goto done_zero; /* kernel: division by zero returns 0 */
                        break;
                case BPF_MISC:
                        if (BPF_MISCOP(f->code) == BPF_TAX)
                                x = a;
                        else
                                a = x;
                        break;
                case BPF_JMP:
                        if (BPF_OP(f->code) == BPF_JA)
                                pc += f->k;
                        else
                                pc += jump_taken(BPF_OP(f->code), a, src) ? f->jt : f->jf;
                        break;
                case BPF_RET:
                        *ret_action = BPF_RVAL(f->code) == BPF_A ? a : f->k;
                        if (ret_steps)
                                *ret_steps = steps;
                        return 0;
                }
        }
        /* Unreachable for a checked program: the last instruction is a return. */
        return -EINVAL;

done_zero:
        *ret_action = 0;
        if (ret_steps)
                *ret_steps = steps;
        return 0;
}

/* --- longest path ----------------------------------------------------------------------------
 * Abstract interpretation over the DAG: a register holds a known 32-bit value or "unknown"
 * (anything loaded from the arguments or the instruction pointer). Instructions are visited in
 * address order, which is a topological order because every jump goes forward; each one keeps the
 * distinct states that reach it with the longest prefix length seen for each. */

struct sym {
        uint32_t a, x;
        uint32_t m[BPF_MEMWORDS];
        uint16_t m_known; /* bit i: m[i] is known */
        uint8_t a_known, x_known;
        uint32_t pad_; /* keeps the struct free of implicit padding for memcmp */
};

struct slot {
        struct sym s;
        unsigned len; /* instructions executed before reaching this pc */
        int next;     /* next slot at the same pc, -1 ends */
};

struct explorer {
        const struct sock_filter *prog;
        size_t len;
        int *head;       /* per pc: first slot, -1 none */
        unsigned *count; /* per pc: slots */
        struct slot *pool;
        size_t n_pool, cap_pool;
};

static bool sym_is_top(const struct sym *s) {
        return !s->a_known && !s->x_known && s->m_known == 0;
}

static void sym_top(struct sym *s) {
        memset(s, 0, sizeof(*s));
}

/* A load into A (BPF_LD) or X (BPF_LDX), which share their modes; BPF_ABS, A only, reads
 * seccomp_data, of which only nr and arch are known here. */
static void sym_load(const struct sym *s, const struct sock_filter *f, uint32_t arch, uint32_t nr, uint32_t *reg,
                     uint8_t *known) {
        *known = 1;
        switch (BPF_MODE(f->code)) {
        case BPF_ABS:
                if (f->k == offsetof(struct seccomp_data, nr))
                        *reg = nr;
                else if (f->k == offsetof(struct seccomp_data, arch))
                        *reg = arch;
                else
                        *known = 0, *reg = 0;
                break;
        case BPF_MEM:
                *known = !!(s->m_known & (1u << f->k));
                *reg = *known ? s->m[f->k] : 0;
                break;
        default: /* BPF_LEN, BPF_IMM: the instruction alone gives the value */
                run_load(f, NULL, NULL, reg);
                break;
        }
}

static int add_state(struct explorer *e, size_t pc, const struct sym *s, unsigned len) {
        int i;

        for (i = e->head[pc]; i >= 0; i = e->pool[i].next)
                if (sym_is_top(&e->pool[i].s) || memcmp(&e->pool[i].s, s, sizeof(*s)) == 0) {
                        if (e->pool[i].len < len)
                                e->pool[i].len = len;
                        return 0;
                }

        if (e->count[pc] >= ZP_BPF_MAX_STATES) {
                /* Too many distinct states here: widen to "everything unknown", which covers them
                 * all, so the answer stays an upper bound. The other slots become garbage. */
                unsigned best = len;
                for (i = e->head[pc]; i >= 0; i = e->pool[i].next)
                        if (e->pool[i].len > best)
                                best = e->pool[i].len;
                i = e->head[pc];
                sym_top(&e->pool[i].s);
                e->pool[i].len = best;
                e->pool[i].next = -1;
                e->count[pc] = 1;
                return 0;
        }

        if (e->n_pool == e->cap_pool) {
                size_t cap = e->cap_pool ? e->cap_pool * 2 : 256;
                struct slot *p = realloc(e->pool, cap * sizeof(*p));
                if (!p)
                        return -ENOMEM;
                e->pool = p;
                e->cap_pool = cap;
        }
        e->pool[e->n_pool] = (struct slot){ .s = *s, .len = len, .next = e->head[pc] };
        e->head[pc] = (int) e->n_pool++;
        e->count[pc]++;
        return 0;
}

static int explore(struct explorer *e, uint32_t arch, uint32_t nr, unsigned *ret_steps) {
        struct sym s0;
        unsigned best = 0;
        int r;

        for (size_t pc = 0; pc < e->len; pc++)
                e->head[pc] = -1, e->count[pc] = 0;
        e->n_pool = 0;

        sym_top(&s0);
        s0.a_known = s0.x_known = 1; /* A = X = 0 on entry */
        r = add_state(e, 0, &s0, 0);
        if (r < 0)
                return r;

        for (size_t pc = 0; pc < e->len; pc++) {
                const struct sock_filter *f = &e->prog[pc];

                for (int i = e->head[pc]; i >= 0; i = e->pool[i].next) {
                        struct sym s = e->pool[i].s;
                        unsigned len = e->pool[i].len + 1;
                        bool src_known = BPF_SRC(f->code) == BPF_X ? s.x_known : true;
                        uint32_t src = BPF_SRC(f->code) == BPF_X ? s.x : f->k;
                        size_t next = pc + 1;

                        switch (BPF_CLASS(f->code)) {
                        case BPF_LD:
                                sym_load(&s, f, arch, nr, &s.a, &s.a_known);
                                break;
                        case BPF_LDX:
                                sym_load(&s, f, arch, nr, &s.x, &s.x_known);
                                break;
                        case BPF_ST:
                        case BPF_STX: {
                                bool known = BPF_CLASS(f->code) == BPF_ST ? s.a_known : s.x_known;
                                s.m[f->k] = known ? (BPF_CLASS(f->code) == BPF_ST ? s.a : s.x) : 0;
                                if (known)
                                        s.m_known |= (uint16_t) (1u << f->k);
                                else
                                        s.m_known &= (uint16_t) ~(1u << f->k);
                                break;
                        }
                        case BPF_ALU:
                                if (BPF_OP(f->code) == BPF_DIV && (!src_known || src == 0)) {
                                        /* Division by zero ends the program here. */
                                        if (len > best)
                                                best = len;
                                        if (src_known)
                                                continue;
                                }
                                if (s.a_known && (src_known || BPF_OP(f->code) == BPF_NEG)) {
                                        if (!alu(BPF_OP(f->code), &s.a, src))
                                                continue;
                                } else
                                        s.a_known = 0, s.a = 0;
                                break;
                        case BPF_MISC:
                                if (BPF_MISCOP(f->code) == BPF_TAX)
                                        s.x = s.a, s.x_known = s.a_known;
                                else
                                        s.a = s.x, s.a_known = s.x_known;
                                break;
                        case BPF_JMP:
                                if (BPF_OP(f->code) == BPF_JA) {
                                        next = pc + 1 + f->k;
                                        break;
                                }
                                if (s.a_known && src_known)
                                        next = pc + 1 + (jump_taken(BPF_OP(f->code), s.a, src) ? f->jt : f->jf);
                                else {
                                        /* Depends on an argument: both ways are possible. */
                                        r = add_state(e, pc + 1 + f->jt, &s, len);
                                        if (r < 0)
                                                return r;
                                        next = pc + 1 + f->jf;
                                }
                                break;
                        case BPF_RET:
                                if (len > best)
                                        best = len;
                                continue;
                        }
                        r = add_state(e, next, &s, len);
                        if (r < 0)
                                return r;
                }
        }

        *ret_steps = best;
        return 0;
}

int zp_bpf_longest_path_range(const struct sock_filter *prog, size_t len, uint32_t arch, uint32_t nr_first,
                              uint32_t n_nr, unsigned *ret_steps, uint32_t *ret_worst_nr) {
        struct explorer e = { .prog = prog, .len = len };
        unsigned best = 0;
        uint32_t worst = nr_first;
        int r;

        r = zp_bpf_check(prog, len);
        if (r < 0)
                return r;

        e.head = malloc(len * sizeof(*e.head));
        e.count = malloc(len * sizeof(*e.count));
        if (!e.head || !e.count) {
                r = -ENOMEM;
                goto finish;
        }

        for (uint32_t i = 0; i < n_nr; i++) {
                uint32_t nr = nr_first + i;
                unsigned steps;

                r = explore(&e, arch, nr, &steps);
                if (r < 0)
                        goto finish;
                if (steps > best)
                        best = steps, worst = nr;
        }

        *ret_steps = best;
        if (ret_worst_nr)
                *ret_worst_nr = worst;
        r = 0;
finish:
        free(e.head);
        free(e.count);
        free(e.pool);
        return r;
}

int zp_bpf_longest_path(const struct sock_filter *prog, size_t len, uint32_t arch, uint32_t nr, unsigned *ret_steps) {
        return zp_bpf_longest_path_range(prog, len, arch, nr, 1, ret_steps, NULL);
}

char *zp_bpf_action_to_string(uint32_t action, char *buf, size_t size) {
        /* with_data: the action's 16 data bits are part of it (an errno, a tracer's value) */
        static const struct {
                uint32_t action;
                const char *name;
                bool with_data;
        } names[] = {
                { SECCOMP_RET_KILL_PROCESS, "KILL_PROCESS", false },
                { SECCOMP_RET_KILL_THREAD, "KILL_THREAD", false },
                { SECCOMP_RET_TRAP, "TRAP", true },
                { SECCOMP_RET_ERRNO, "ERRNO", true },
                { SECCOMP_RET_USER_NOTIF, "USER_NOTIF", false },
                { SECCOMP_RET_TRACE, "TRACE", true },
                { SECCOMP_RET_LOG, "LOG", false },
                { SECCOMP_RET_ALLOW, "ALLOW", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                if (names[i].action != (action & SECCOMP_RET_ACTION_FULL))
                        continue;
                if (names[i].with_data)
                        snprintf(buf, size, "%s(%u)", names[i].name, action & SECCOMP_RET_DATA);
                else
                        snprintf(buf, size, "%s", names[i].name);
                return buf;
        }
        snprintf(buf, size, "0x%08x", action);
        return buf;
}
