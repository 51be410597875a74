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

#include "caps.h"
#include "profile-limits.h"

/* Docker's 14 default capabilities, the bounding set kept for a plain Docker/OCI file. */
#define ZP_DOCKER_DEFAULT_CAPS \
        "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID", \
                "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", \
                "CAP_AUDIT_WRITE"

struct zp_profile {
        char *name; /* "default"; a plain Docker/OCI file is named after its file (no .json) */
        char *path; /* the file it came from */

        struct sock_filter *bpf; /* compiled program for the native architecture's kernel */
        size_t bpf_len;          /* instructions */
        unsigned filter_flags;   /* SECCOMP_FILTER_FLAG_* from the "flags" field; NEW_LISTENER: notifies */

        uint64_t caps_keep; /* bounding set to keep, bit n = capability n */
        bool no_new_privs;  /* default true */
        /* "noNewPrivsCallers": "allow" admits a caller that has no_new_privs, whose Landlock
         * domain (if any) cannot be read nor carried; default "refuse" (docs/SECURITY.md). */
        bool nnp_callers_allow;

        bool access_all; /* no "access" restriction */
        uid_t *access_uids;
        size_t n_access_uids;
        gid_t *access_gids;
        size_t n_access_gids;

        unsigned skipped_syscalls; /* names unknown to the installed libseccomp (as runc does) */
        unsigned longest_path;     /* longest BPF path, in instructions, over every syscall nr */
        char hash[65];             /* sha256 of the BPF program, lowercase hex */

        /* Architectures compiled into the program (AUDIT_ARCH_* values, native first). */
        uint32_t arches[ZP_PROFILE_MAX_ARCHES];
        size_t n_arches;
        unsigned n_rules;      /* libseccomp rules added (after includes/excludes, per name) */
        uint64_t compile_nsec; /* time spent in libseccomp (rules, layout, export) */

        /* Whether the filter lets zygote's worker finish its setup after inheriting it (the
         * `inherit` tier). When false, worker_setup_blocked names the first syscall refused. */
        bool worker_setup_ok;
        const char *worker_setup_blocked; /* static string, or NULL */
        /* Whether it also lets the worker take a caller's scheduling (child.h, step 0c): when
         * false, a caller scheduled otherwise than zygoted gets its worker from the load tier. */
        bool worker_sched_ok;
        /* Whether it lets the reference make workers sharing its memory (clone with
         * ZE_NOCOPY_CLONE_FLAGS, child.h): when false, its reference forks every worker. */
        bool worker_nocopy_ok;
};

/* Loads and compiles one file. On failure returns a negative errno (-EINVAL for bad content;
 * more precisely -ERANGE for a number out of range, -E2BIG/-EFBIG beyond a limit, -EOPNOTSUPP for
 * what zygote lacks such as SCMP_ACT_NOTIFY, -ESRCH for an unknown user or group in "access") and,
 * when ret_error is not NULL, a malloc'd message naming file and JSON location. */
int zp_profile_load_file(const char *path, struct zp_profile **ret, char **ret_error);

/* Same, from a buffer; path is used for the profile name (and for relative "seccomp" paths of a
 * zygote profile) and in messages. Used by the fuzzer and unit tests. */
int zp_profile_load_buffer(const char *path, const char *data, size_t size, struct zp_profile **ret, char **ret_error);

void zp_profile_free(struct zp_profile *p);

/* Whether a caller with these credentials may use the profile ("access" list). Root always may. */
bool zp_profile_allows(const struct zp_profile *p, uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups);

/* A set of profiles loaded from directories: every *.json file, in name order; a later
 * directory's profile replaces an earlier one of the same name. A file that fails is left out
 * whole and reported through on_error; the others still load. */
struct zp_profile_set {
        struct zp_profile **items;
        size_t n;
};

typedef void (*zp_profile_error_fn)(const char *message, void *userdata);

int zp_profile_set_load(const char *const *dirs, size_t n_dirs, struct zp_profile_set *ret,
                        zp_profile_error_fn on_error, void *userdata);
void zp_profile_set_clear(struct zp_profile_set *set);
const struct zp_profile *zp_profile_set_find(const struct zp_profile_set *set, const char *name);

/* How to compile; NULL means the defaults. Only measurements and tests change them. */
struct zp_profile_options {
        /* libseccomp SCMP_FLTATR_CTL_OPTIMIZE: 2 (default) = binary tree sorted by syscall
         * number, zygote's layout; 1 = libseccomp's default linear layout (Docker's). */
        unsigned optimize;
        /* A plain OCI object of a container whose runtime hands the filter's listener to
         * "listenerPath" (zygote-runc, GetFilter): SCMP_ACT_NOTIFY is compiled, and a rule that
         * applies adds SECCOMP_FILTER_FLAG_NEW_LISTENER to filter_flags. Otherwise (a zygote
         * profile, a task's filter) SCMP_ACT_NOTIFY and the listener fields are refused. */
        bool listener;
        /* Compiled as runc 1.1 compiles a container's object (zygote-runc, GetFilter): a system
         * call newer than every one it names answers ENOSYS instead of the default action, so
         * that a newer libc falls back to what the profile knows (seccomp-enosys.c). The
         * defaults (NULL options: zygoted's profiles) have it too, so that a container's object
         * and a profile written from it compile to one program (the clone tier for containers,
         * daemon/container-filter.c) and a task gets what a container under the same JSON gets. */
        bool enosys_newer;
};

int zp_profile_load_file_with(const char *path, const struct zp_profile_options *opts, struct zp_profile **ret,
                              char **ret_error);
int zp_profile_load_buffer_with(const char *path, const char *data, size_t size, const struct zp_profile_options *opts,
                                struct zp_profile **ret, char **ret_error);

/* Canonical OCI name of an AUDIT_ARCH_* value ("SCMP_ARCH_X86_64"); NULL for one it does not name. */
const char *zp_profile_arch_name(uint32_t arch);

/* Version of the libseccomp that compiles profiles (and decides which names it knows). */
void zp_profile_libseccomp_version(unsigned *ret_major, unsigned *ret_minor, unsigned *ret_micro);
