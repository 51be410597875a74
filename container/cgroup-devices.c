/* SPDX-License-Identifier: MIT */
/*
 * The device cgroup of a container: rules, v1 lines, the v2 program. See cgroup-devices.h for
 * the meaning of a list; cgroup.c writes or attaches the result.
 *
 * Shape of the program: the context's three words go into registers once; then, for each kind of
 * access (mknod, read, write) the request asks for, the rules that name that access are tried
 * from the last to the first, and the first of them that matches the device decides that access
 * (an allow goes on to the next access, a deny ends in "return 0"). A request whose every access
 * found an allow returns 1. Per access rather than per request because one open(O_RDWR) asks
 * for read and write at once: a list that denies only write must refuse it, and one that allows
 * read and write by two rules must grant it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup-devices.h"
#include "util.h"

/* runc's and crun's default allows, which every container gets after its config's rules: mknod
 * of anything (a node is harmless until it is opened), and the devices every OCI container has */
static const struct zct_dev_rule default_allows[] = {
        { true, 'c', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_MKNOD },
        { true, 'b', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_MKNOD },
        { true, 'c', 1, 3, ZCT_DEV_ALL },             /* null */
        { true, 'c', 1, 5, ZCT_DEV_ALL },             /* zero */
        { true, 'c', 1, 7, ZCT_DEV_ALL },             /* full */
        { true, 'c', 1, 8, ZCT_DEV_ALL },             /* random */
        { true, 'c', 1, 9, ZCT_DEV_ALL },             /* urandom */
        { true, 'c', 5, 0, ZCT_DEV_ALL },             /* tty */
        { true, 'c', 5, 1, ZCT_DEV_ALL },             /* console */
        { true, 'c', 5, 2, ZCT_DEV_ALL },             /* ptmx */
        { true, 'c', 136, ZCT_DEV_ANY, ZCT_DEV_ALL }, /* the container's own /dev/pts/N */
};

static int fail(char **ret_error, size_t i, const char *what) {
        if (ret_error) {
                free(*ret_error);
                if (asprintf(ret_error, "config.json: linux.resources.devices[%zu]: %s", i, what) < 0)
                        *ret_error = NULL;
        }
        return -EINVAL;
}

/* major/minor: absent, null or -1 is the wildcard */
static int parse_number(json_object *e, const char *key, int64_t *ret) {
        json_object *v = NULL;
        int64_t n;

        if (!json_object_object_get_ex(e, key, &v) || !v) {
                *ret = ZCT_DEV_ANY;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        errno = 0;
        n = json_object_get_int64(v);
        if (errno != 0 || n < -1 || n > INT32_MAX)
                return -EINVAL;
        *ret = n;
        return 0;
}

static int parse_rule(json_object *e, size_t i, struct zct_dev_rule *ret, char **ret_error) {
        struct zct_dev_rule r = { .type = 'a', .major = ZCT_DEV_ANY, .minor = ZCT_DEV_ANY };
        json_object *v = NULL;
        const char *s;

        if (!json_object_is_type(e, json_type_object))
                return fail(ret_error, i, "must be an object");
        if (!json_object_object_get_ex(e, "allow", &v) || !json_object_is_type(v, json_type_boolean))
                return fail(ret_error, i, "allow must be true or false");
        r.allow = json_object_get_boolean(v);
        if (json_object_object_get_ex(e, "type", &v) && v) {
                s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
                if (!streq(s, "a") && !streq(s, "c") && !streq(s, "b"))
                        return fail(ret_error, i, "type must be \"a\", \"c\" or \"b\"");
                r.type = s[0];
        }
        if (parse_number(e, "major", &r.major) < 0)
                return fail(ret_error, i, "major must be -1 (any) or a number from 0 to 2147483647");
        if (parse_number(e, "minor", &r.minor) < 0)
                return fail(ret_error, i, "minor must be -1 (any) or a number from 0 to 2147483647");
        if (r.type == 'a')
                r.major = r.minor = ZCT_DEV_ANY; /* "a" is every device, as the v1 kernel reads it */
        if (json_object_object_get_ex(e, "access", &v) && v) {
                if (!json_object_is_type(v, json_type_string))
                        return fail(ret_error, i, "access must be a string of r, w and m");
                /* another letter is no permission and ignored, as runc ignores it ("rwa" is "rw"):
                 * the rule never covers more than its known letters; one with none is refused
                 * (it is not the empty access, which means all) */
                for (s = json_object_get_string(v); *s; s++)
                        r.access |= *s == 'r'   ? ZCT_DEV_READ
                                    : *s == 'w' ? ZCT_DEV_WRITE
                                    : *s == 'm' ? ZCT_DEV_MKNOD
                                                : 0;
                if (json_object_get_string(v)[0] && r.access == 0)
                        return fail(ret_error, i, "access must be a string of r, w and m");
        }
        /* absent or empty: everything, as the v1 kernel reads a line without access */
        if (r.access == 0)
                r.access = ZCT_DEV_ALL;
        *ret = r;
        return 0;
}

int zct_dev_rules_from_json(json_object *devices, struct zct_dev_rule **ret, size_t *ret_n, char **ret_error) {
        _cleanup_free_ struct zct_dev_rule *rules = NULL;
        size_t n_config = 0, n = 0;
        int r;

        if (devices) {
                if (!json_object_is_type(devices, json_type_array)) {
                        if (ret_error &&
                            asprintf(ret_error, "config.json: linux.resources.devices must be an array") < 0)
                                *ret_error = NULL;
                        return -EINVAL;
                }
                n_config = json_object_array_length(devices);
                if (n_config > ZCT_DEV_MAX_CONFIG_RULES) {
                        if (ret_error && asprintf(ret_error, "config.json: linux.resources.devices: more than %d rules",
                                                  ZCT_DEV_MAX_CONFIG_RULES) < 0)
                                *ret_error = NULL;
                        return -E2BIG;
                }
        }
        rules = calloc(1 + n_config + ELEMENTSOF(default_allows), sizeof(*rules));
        if (!rules)
                return -ENOMEM;
        /* the default is deny, whatever the config starts with (podman and containerd send
         * "deny all" first anyway) */
        rules[n++] = (struct zct_dev_rule){ false, 'a', ZCT_DEV_ANY, ZCT_DEV_ANY, ZCT_DEV_ALL };
        for (size_t i = 0; i < n_config; i++) {
                r = parse_rule(json_object_array_get_idx(devices, i), i, &rules[n], ret_error);
                if (r < 0)
                        return r;
                n++;
        }
        /* last, so that a config cannot take from a container what every runtime gives it */
        memcpy(rules + n, default_allows, sizeof(default_allows));
        n += ELEMENTSOF(default_allows);
        *ret = TAKE_PTR(rules);
        *ret_n = n;
        return 0;
}

static bool rule_matches(const struct zct_dev_rule *r, char type, uint32_t major, uint32_t minor) {
        return (r->type == 'a' || r->type == type) && (r->major == ZCT_DEV_ANY || r->major == major) &&
               (r->minor == ZCT_DEV_ANY || r->minor == minor);
}

bool zct_dev_rules_allow(const struct zct_dev_rule *rules, size_t n, char type, uint32_t major, uint32_t minor,
                         unsigned access) {
        for (unsigned bit = 1; bit <= ZCT_DEV_WRITE; bit <<= 1) {
                bool allowed = false;

                if (!(access & bit))
                        continue;
                for (size_t i = n; i-- > 0;)
                        if ((rules[i].access & bit) && rule_matches(&rules[i], type, major, minor)) {
                                allowed = rules[i].allow;
                                break;
                        }
                if (!allowed)
                        return false;
        }
        return true;
}

static bool overlap(const struct zct_dev_rule *a, const struct zct_dev_rule *b) {
        return a->type == b->type && (a->major == ZCT_DEV_ANY || b->major == ZCT_DEV_ANY || a->major == b->major) &&
               (a->minor == ZCT_DEV_ANY || b->minor == ZCT_DEV_ANY || a->minor == b->minor);
}

int zct_dev_rules_check_v1(const struct zct_dev_rule *rules, size_t n, char **ret_error) {
        size_t since = 0; /* the rules after the last "a": the kernel's exception list */
        bool deny_mode = true;

        for (size_t i = 0; i < n; i++) {
                const struct zct_dev_rule *d = &rules[i];

                if (d->type == 'a') {
                        /* "a" resets the cgroup: default allow or deny, no exceptions */
                        deny_mode = !d->allow;
                        since = i + 1;
                        continue;
                }
                /* with a default allow, denies add exceptions and an allow only removes one: v1
                 * can then only be stricter than the list, never looser */
                if (d->allow || !deny_mode)
                        continue;
                for (size_t j = since; j < i; j++) {
                        const struct zct_dev_rule *a = &rules[j];

                        if (!a->allow || !(a->access & d->access) || !overlap(a, d))
                                continue;
                        if (a->major == d->major && a->minor == d->minor)
                                continue; /* the same device: the kernel takes the access away */
                        if (ret_error) {
                                char la[64], ld[64];

                                zct_dev_rule_v1_line(a, la, sizeof(la));
                                zct_dev_rule_v1_line(d, ld, sizeof(ld));
                                free(*ret_error);
                                if (asprintf(ret_error,
                                             "linux.resources.devices: cgroup v1 cannot deny \"%s\" out of the "
                                             "wider allow \"%s\" before it; deny the whole range or list the allows",
                                             ld, la) < 0)
                                        *ret_error = NULL;
                        }
                        return -EINVAL;
                }
        }
        return 0;
}

void zct_dev_rule_v1_line(const struct zct_dev_rule *rule, char *buf, size_t len) {
        char maj[16] = "*", min[16] = "*", acc[4];
        size_t k = 0;

        if (rule->type == 'a') {
                /* the kernel reads "a" alone and ignores the rest */
                snprintf(buf, len, "a");
                return;
        }
        if (rule->major != ZCT_DEV_ANY)
                snprintf(maj, sizeof(maj), "%lld", (long long) rule->major);
        if (rule->minor != ZCT_DEV_ANY)
                snprintf(min, sizeof(min), "%lld", (long long) rule->minor);
        if (rule->access & ZCT_DEV_READ)
                acc[k++] = 'r';
        if (rule->access & ZCT_DEV_WRITE)
                acc[k++] = 'w';
        if (rule->access & ZCT_DEV_MKNOD)
                acc[k++] = 'm';
        acc[k] = '\0';
        snprintf(buf, len, "%c %s:%s %s", rule->type, maj, min, acc);
}

/* ---- the v2 program ---------------------------------------------------------------------------- */

/* registers: r1 the context; r2 access_type; r3 device type; r4 access; r5 major; r6 minor */
enum { R0, R1, R2, R3, R4, R5, R6 };

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/* per rule: type, major, minor tests and the decision */
#define RULE_MAX 4
/* per access: the test of the request's bit, the rules, the default deny */
#define ACCESS_EXTRA 4
#define HEAD 7
#define TAIL 4

size_t zct_dev_program_max(size_t n) {
        return HEAD + 3 * (ACCESS_EXTRA + RULE_MAX * n) + TAIL;
}

struct emitter {
        struct bpf_insn *prog;
        size_t len, pc;
        bool overflow;
};

static size_t emit(struct emitter *e, struct bpf_insn i) {
        if (e->pc >= e->len) {
                e->overflow = true;
                return e->pc++;
        }
        e->prog[e->pc] = i;
        return e->pc++;
}

/* sets the jump at pc to land on target */
static void patch(struct emitter *e, size_t pc, size_t target) {
        if (pc < e->len)
                e->prog[pc].off = (int16_t) (target - pc - 1);
}

int zct_dev_program(const struct zct_dev_rule *rules, size_t n, struct bpf_insn *prog, size_t len) {
        struct emitter e = { .prog = prog, .len = len };
        /* jumps to the final "return 0", patched at the end: at most one per rule and access */
        _cleanup_free_ size_t *to_deny = calloc(3 * (n + 1), sizeof(size_t));
        size_t n_deny = 0, deny;

        if (!to_deny)
                return -ENOMEM;
        if (n > ZCT_DEV_MAX_CONFIG_RULES + 64)
                return -E2BIG;

        /* the context (struct bpf_cgroup_dev_ctx) as 32-bit loads, which the verifier wants */
        emit(&e, INSN(BPF_LDX | BPF_MEM | BPF_W, R2, R1, offsetof(struct bpf_cgroup_dev_ctx, access_type), 0));
        emit(&e, INSN(BPF_ALU | BPF_MOV | BPF_X, R3, R2, 0, 0));
        emit(&e, INSN(BPF_ALU | BPF_AND | BPF_K, R3, 0, 0, 0xffff));
        emit(&e, INSN(BPF_ALU | BPF_MOV | BPF_X, R4, R2, 0, 0));
        emit(&e, INSN(BPF_ALU | BPF_RSH | BPF_K, R4, 0, 0, 16));
        emit(&e, INSN(BPF_LDX | BPF_MEM | BPF_W, R5, R1, offsetof(struct bpf_cgroup_dev_ctx, major), 0));
        emit(&e, INSN(BPF_LDX | BPF_MEM | BPF_W, R6, R1, offsetof(struct bpf_cgroup_dev_ctx, minor), 0));

        for (unsigned bit = ZCT_DEV_MKNOD; bit <= ZCT_DEV_WRITE; bit <<= 1) {
                /* the allows of this access jump past its block: patched when it ends */
                _cleanup_free_ size_t *to_next = calloc(n + 1, sizeof(size_t));
                size_t n_next = 0, skip;
                bool decided = false;

                if (!to_next)
                        return -ENOMEM;
                /* r0 = access & bit; not asked for: skip the block */
                emit(&e, INSN(BPF_ALU | BPF_MOV | BPF_X, R0, R4, 0, 0));
                emit(&e, INSN(BPF_ALU | BPF_AND | BPF_K, R0, 0, 0, (int32_t) bit));
                skip = emit(&e, INSN(BPF_JMP | BPF_JEQ | BPF_K, R0, 0, 0, 0));
                to_next[n_next++] = skip;

                for (size_t i = n; i-- > 0 && !decided;) {
                        const struct zct_dev_rule *r = &rules[i];
                        int conds = (r->type != 'a') + (r->major != ZCT_DEV_ANY) + (r->minor != ZCT_DEV_ANY), k = 0;
                        size_t decide;

                        if (!(r->access & bit))
                                continue;
                        /* each test that fails jumps over the rest of this rule */
                        if (r->type != 'a') {
                                emit(&e, INSN(BPF_JMP | BPF_JNE | BPF_K, R3, 0, (int16_t) (conds - k),
                                              r->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK));
                                k++;
                        }
                        if (r->major != ZCT_DEV_ANY) {
                                emit(&e,
                                     INSN(BPF_JMP | BPF_JNE | BPF_K, R5, 0, (int16_t) (conds - k), (int32_t) r->major));
                                k++;
                        }
                        if (r->minor != ZCT_DEV_ANY) {
                                emit(&e,
                                     INSN(BPF_JMP | BPF_JNE | BPF_K, R6, 0, (int16_t) (conds - k), (int32_t) r->minor));
                                k++;
                        }
                        decide = emit(&e, INSN(BPF_JMP | BPF_JA, 0, 0, 0, 0));
                        if (r->allow)
                                to_next[n_next++] = decide;
                        else
                                to_deny[n_deny++] = decide;
                        /* a rule for every device ends the search: the earlier ones could not
                         * be reached for this access (and the verifier refuses dead code) */
                        decided = conds == 0;
                }
                /* no rule matched: deny */
                if (!decided)
                        to_deny[n_deny++] = emit(&e, INSN(BPF_JMP | BPF_JA, 0, 0, 0, 0));
                for (size_t j = 0; j < n_next; j++)
                        patch(&e, to_next[j], e.pc);
        }
        emit(&e, INSN(BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 1));
        emit(&e, INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
        if (n_deny > 0) {
                /* only when something jumps here: the verifier refuses unreachable code */
                deny = emit(&e, INSN(BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 0));
                emit(&e, INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
                for (size_t j = 0; j < n_deny; j++)
                        patch(&e, to_deny[j], deny);
        }
        if (e.overflow)
                return -E2BIG;
        return (int) e.pc;
}

static int sys_bpf(int cmd, union bpf_attr *attr) {
        long r = syscall(SYS_bpf, cmd, attr, sizeof(*attr));
        return r < 0 ? -errno : (int) r;
}

int zct_dev_program_load(const struct bpf_insn *prog, size_t len, char **ret_log) {
        /* the kernel only reads the license to decide on GPL-only helpers: this program calls
         * none */
        static const char license[] = "MIT";
        union bpf_attr attr;
        int r;

        memset(&attr, 0, sizeof(attr));
        attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
        attr.insns = (uint64_t) (uintptr_t) prog;
        attr.insn_cnt = (uint32_t) len;
        attr.license = (uint64_t) (uintptr_t) license;
        attr.expected_attach_type = BPF_CGROUP_DEVICE;
        /* the fd the kernel returns is O_CLOEXEC already */
        r = sys_bpf(BPF_PROG_LOAD, &attr);
        if (r < 0 && ret_log && (r == -EINVAL || r == -EACCES)) {
                /* again with the verifier's log, for the message only */
                size_t log_len = 16384;
                char *log = calloc(1, log_len);

                if (log) {
                        attr.log_level = 1;
                        attr.log_buf = (uint64_t) (uintptr_t) log;
                        attr.log_size = (uint32_t) log_len;
                        int fd = sys_bpf(BPF_PROG_LOAD, &attr);
                        if (fd >= 0)
                                close(fd);
                        *ret_log = log;
                }
        }
        return r;
}

int zct_dev_program_attach(int cgroup_fd, const struct bpf_insn *prog, size_t len, char **ret_log) {
        union bpf_attr attr;
        _cleanup_close_ int prog_fd = -EBADF;
        int r;

        prog_fd = zct_dev_program_load(prog, len, ret_log);
        if (prog_fd < 0)
                return prog_fd;
        memset(&attr, 0, sizeof(attr));
        attr.target_fd = (uint32_t) cgroup_fd;
        attr.attach_bpf_fd = (uint32_t) prog_fd;
        attr.attach_type = BPF_CGROUP_DEVICE;
        attr.attach_flags = BPF_F_ALLOW_MULTI;
        r = sys_bpf(BPF_PROG_ATTACH, &attr);
        return r < 0 ? r : 0;
}
