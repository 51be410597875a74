/* SPDX-License-Identifier: MIT */
/*
 * Profiles: load a profile file (a plain Docker/OCI seccomp JSON file, or a zygote profile that
 * wraps one) and compile it once into a seccomp BPF program with libseccomp's binary-tree layout.
 *
 * Library code: never logs, never exits; returns 0 or a negative errno, and on bad input fills
 * *ret_error with one precise message that names the file and the JSON location, e.g.
 *   profiles/x.json: syscalls[3].action: unknown action "SCMP_ACT_FOO"
 */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Docker's 14 default capabilities, the bounding set kept for a plain Docker/OCI file. */
#define ZY_DOCKER_DEFAULT_CAPS                                                          \
        "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",       \
                "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", \
                "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"

struct zy_profile {
        char *name;   /* "default"; a plain Docker/OCI file is named after its file (no .json) */
        char *path;   /* the file it came from */

        struct sock_filter *bpf; /* compiled program for the native architecture's kernel */
        size_t bpf_len;          /* instructions */
        unsigned filter_flags;   /* SECCOMP_FILTER_FLAG_* from the "flags" field */

        uint64_t caps_keep;  /* bounding set to keep, bit n = capability n */
        bool no_new_privs;   /* default true */

        bool access_all;     /* no "access" restriction */
        uid_t *access_uids;
        size_t n_access_uids;
        gid_t *access_gids;
        size_t n_access_gids;

        unsigned skipped_syscalls; /* names unknown to the installed libseccomp (as runc does) */
        unsigned longest_path;     /* longest BPF path, in instructions, over every syscall nr */
        char hash[65];             /* sha256 of the BPF program, lowercase hex */
};

/* Loads and compiles one file. On failure returns a negative errno (-EINVAL for bad content)
 * and, when ret_error is not NULL, a malloc'd message naming file and JSON location. */
int zy_profile_load_file(const char *path, struct zy_profile **ret, char **ret_error);

/* Same, from a buffer; path is used for the profile name (and for relative "seccomp" paths of a
 * zygote profile) and in messages. Used by the fuzzer and unit tests. */
int zy_profile_load_buffer(const char *path, const char *data, size_t size, struct zy_profile **ret,
                           char **ret_error);

void zy_profile_free(struct zy_profile *p);

/* Whether a caller with these credentials may use the profile ("access" list). Root always may. */
bool zy_profile_allows(const struct zy_profile *p, uid_t uid, gid_t gid, const gid_t *groups,
                       size_t n_groups);

/* A set of profiles loaded from directories: every *.json file, in name order; a later
 * directory's profile replaces an earlier one of the same name. A file that fails is left out
 * whole and reported through on_error; the others still load. */
struct zy_profile_set {
        struct zy_profile **items;
        size_t n;
};

typedef void (*zy_profile_error_fn)(const char *message, void *userdata);

int zy_profile_set_load(const char *const *dirs, size_t n_dirs, struct zy_profile_set *ret,
                        zy_profile_error_fn on_error, void *userdata);
void zy_profile_set_clear(struct zy_profile_set *set);
const struct zy_profile *zy_profile_set_find(const struct zy_profile_set *set, const char *name);

/* Capability names <-> numbers (libcap); -EINVAL for an unknown name. */
int zy_cap_from_name(const char *name, unsigned *ret);
