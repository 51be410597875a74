/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for zygote-runc's device rules (container/cgroup-devices.c): the bytes are
 * config.json's linux.resources.devices. Whatever they are: no crash, no leak, no undefined
 * behaviour; a refusal explains itself; an accepted list starts with "deny all", holds only
 * valid rules, and becomes a program that fits its bound and whose jumps stay inside it, and v1
 * lines the kernel could parse.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-devices.h"
#include "fuzz-json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_program(const struct zct_dev_rule *rules, size_t n) {
        size_t max = zct_dev_program_max(n);
        struct bpf_insn *prog = calloc(max, sizeof(*prog));
        int len;

        if (!prog)
                abort();
        len = zct_dev_program(rules, n, prog, max);
        if (len <= 0 || (size_t) len > max || prog[len - 1].code != (BPF_JMP | BPF_EXIT))
                abort();
        for (int pc = 0; pc < len; pc++) {
                uint8_t code = prog[pc].code;

                if (BPF_CLASS(code) == BPF_JMP && BPF_OP(code) != BPF_EXIT &&
                    (prog[pc].off < 0 || pc + 1 + prog[pc].off >= len))
                        abort();
        }
        free(prog);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct zct_dev_rule *rules = NULL;
        json_object *o = fuzz_json(data, size);
        char *error = NULL;
        size_t n = 0;
        int r;

        if (!o)
                return 0;
        r = zct_dev_rules_from_json(o, &rules, &n, &error);
        json_object_put(o);
        if (r < 0) {
                if (!error || !strstr(error, "linux.resources.devices") || rules)
                        abort();
                free(error);
                return 0;
        }
        if (error || n < 2 || rules[0].allow || rules[0].type != 'a')
                abort();
        for (size_t i = 0; i < n; i++) {
                const struct zct_dev_rule *d = &rules[i];
                char line[64];

                if ((d->type != 'a' && d->type != 'c' && d->type != 'b') || d->access == 0 || d->access > ZCT_DEV_ALL ||
                    d->major < -1 || d->major > INT32_MAX || d->minor < -1 || d->minor > INT32_MAX ||
                    (d->type == 'a' && (d->major != ZCT_DEV_ANY || d->minor != ZCT_DEV_ANY)))
                        abort();
                zct_dev_rule_v1_line(d, line, sizeof(line));
                if (line[0] != d->type)
                        abort();
        }
        r = zct_dev_rules_check_v1(rules, n, &error);
        if ((r < 0) != (error != NULL) || (r < 0 && r != -EINVAL))
                abort();
        free(error);
        check_program(rules, n);
        free(rules);
        return 0;
}
