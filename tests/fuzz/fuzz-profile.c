/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the profile parser and compiler (zp_profile_load_buffer): whatever the
 * bytes, no crash, no leak, no undefined behaviour, and either a profile or an error message.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct zp_profile *p = NULL;
        char *error = NULL;
        int r;

        r = zp_profile_load_buffer("/nonexistent-zygote-fuzz/fuzz.json", (const char *) data, size, &p, &error);
        if (r < 0) {
                /* Every failure explains itself, and names the file. */
                if (!error || strncmp(error, "/nonexistent-zygote-fuzz/", 25) != 0)
                        abort();
                free(error);
                return 0;
        }
        /* Every success is a program the kernel would take, with its facts filled in. */
        if (error || !p || !p->name || zp_bpf_check(p->bpf, p->bpf_len) < 0 || p->longest_path == 0 ||
            p->longest_path > p->bpf_len || strlen(p->hash) != 64 || p->n_arches == 0)
                abort();
        zp_profile_free(p);
        return 0;
}
