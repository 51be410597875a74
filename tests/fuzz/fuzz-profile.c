/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the profile parser and compiler (zp_profile_load_buffer_with, as zygoted's
 * profiles and as a container's object with its listener): whatever the bytes, no crash, no leak,
 * no undefined behaviour, and either a profile or an error message.
 *
 * The profile's path names a directory that does not exist, so a "seccomp" reference to another
 * file fails with ENOENT and the fuzzer never reads the filesystem.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpf.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void load(const uint8_t *data, size_t size, const struct zp_profile_options *opts) {
        struct zp_profile *p = NULL;
        char *error = NULL;
        int r;

        r = zp_profile_load_buffer_with("/nonexistent-zygote-fuzz/fuzz.json", (const char *) data, size, opts, &p,
                                        &error);
        if (r < 0) {
                /* Every failure explains itself, and names the file. */
                if (!error || strncmp(error, "/nonexistent-zygote-fuzz/", 25) != 0)
                        abort();
                free(error);
                return;
        }
        /* Every success is a program the kernel would take, with its facts filled in; a listener
         * only where the caller hands it over (a container runtime's load). */
        if (error || !p || !p->name || zp_bpf_check(p->bpf, p->bpf_len) < 0 || p->longest_path == 0 ||
            p->longest_path > p->bpf_len || strlen(p->hash) != 64 || p->n_arches == 0 ||
            ((p->filter_flags & (1U << 3) /* NEW_LISTENER */) && !opts->listener))
                abort();
        zp_profile_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* as zygoted's profiles load, and as a container's config.json does (SCMP_ACT_NOTIFY,
         * runc's -ENOSYS stub) */
        load(data, size, &(const struct zp_profile_options){ .listener = false });
        load(data, size, &(const struct zp_profile_options){ .listener = true, .enosys_newer = true });
        return 0;
}
