/* SPDX-License-Identifier: MIT */
/*
 * The device cgroup of a container: OCI linux.resources.devices rules, the list a container gets
 * (deny everything, the config's rules, then runc's default allows), the cgroup v1 lines and the
 * cgroup v2 eBPF program (BPF_PROG_TYPE_CGROUP_DEVICE) that enforce it.
 *
 * Meaning of a list, on both versions: for each kind of access a request asks for (mknod, read,
 * write), the last rule that matches the device and names that access decides; no such rule
 * denies. A request is allowed when every access it asks for is. The program generator is pure,
 * so that a unit test can run what it emits; loading and attaching are the only system calls.
 */
#pragma once

#include <json-c/json.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* access bits: the kernel's BPF_DEVCG_ACC_* values, also used for v1 */
#define ZCT_DEV_MKNOD BPF_DEVCG_ACC_MKNOD
#define ZCT_DEV_READ BPF_DEVCG_ACC_READ
#define ZCT_DEV_WRITE BPF_DEVCG_ACC_WRITE
#define ZCT_DEV_ALL (ZCT_DEV_MKNOD | ZCT_DEV_READ | ZCT_DEV_WRITE)
#define ZCT_DEV_ANY (-1)              /* major or minor wildcard */
#define ZCT_DEV_MAX_CONFIG_RULES 1024 /* keeps every jump of the program within 16 bits */

struct zct_dev_rule {
        bool allow;
        char type;     /* 'a' (every device; major and minor are then ZCT_DEV_ANY), 'c', 'b' */
        int64_t major; /* ZCT_DEV_ANY or 0..INT32_MAX */
        int64_t minor;
        unsigned access; /* ZCT_DEV_* bits, never 0 */
};

/* The container's list from linux.resources.devices (NULL: none given): "deny all", the config's
 * rules in order, then the allows every container gets (runc's and crun's: mknod of any char or
 * block device, and rwm on null, zero, full, random, urandom, tty, console, ptmx and the pts).
 * Bad input is -EINVAL with a message naming the rule. */
int zct_dev_rules_from_json(json_object *devices, struct zct_dev_rule **ret, size_t *ret_n, char **ret_error);

/* Whether req (a single device and access) is allowed by the list, by the meaning above. */
bool zct_dev_rules_allow(const struct zct_dev_rule *rules, size_t n, char type, uint32_t major, uint32_t minor,
                         unsigned access);

/* cgroup v1 applies each line as the kernel's own model: a deny only takes access away from an
 * earlier allow of the very same type:major:minor. A list where a deny would cut into a wider
 * earlier allow (allow c *:* then deny c 1:1) would leave more open on v1 than it says: refused
 * with -EINVAL and a message. */
int zct_dev_rules_check_v1(const struct zct_dev_rule *rules, size_t n, char **ret_error);
/* The devices.allow / devices.deny line of a rule ("c 1:3 rwm", "b 7:* r", "a"). */
void zct_dev_rule_v1_line(const struct zct_dev_rule *rule, char *buf, size_t len);

/* Upper bound of the program's length for n rules. */
size_t zct_dev_program_max(size_t n);
/* Writes the BPF_PROG_TYPE_CGROUP_DEVICE program of the list to prog (room for len
 * instructions): returns its length, or -E2BIG. It returns 1 to allow, 0 to deny. */
int zct_dev_program(const struct zct_dev_rule *rules, size_t n, struct bpf_insn *prog, size_t len);

/* Loads prog with bpf(2) as a BPF_PROG_TYPE_CGROUP_DEVICE program: its fd (O_CLOEXEC), or -errno;
 * *ret_log (optional) gets the verifier's words when the load fails with EINVAL or EACCES. */
int zct_dev_program_load(const struct bpf_insn *prog, size_t len, char **ret_log);
/* Loads prog (zct_dev_program_load) and attaches it (BPF_F_ALLOW_MULTI, so that the programs of the
 * ancestors keep applying) to the cgroup v2 directory cgroup_fd. The attachment lives as long
 * as the cgroup; nothing is left to close. Returns 0 or -errno; *ret_log as the load's. */
int zct_dev_program_attach(int cgroup_fd, const struct bpf_insn *prog, size_t len, char **ret_log);
