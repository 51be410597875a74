/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4), small and dependency-free: zygote hashes every compiled BPF program so
 * that `launchctl status` and `zygoted --check-profile` can say which filter a profile carries.
 * Not constant-time and not meant for secrets; it only names content.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define ZC_SHA256_DIGEST_SIZE 32

struct zc_sha256 {
        uint32_t h[8];
        uint64_t total;  /* bytes hashed so far */
        uint8_t buf[64]; /* pending partial block */
        size_t n_buf;
};

void zc_sha256_init(struct zc_sha256 *s);
void zc_sha256_update(struct zc_sha256 *s, const void *data, size_t size);
void zc_sha256_final(struct zc_sha256 *s, uint8_t digest[ZC_SHA256_DIGEST_SIZE]);

/* One-shot helpers. out gets 64 lowercase hex digits and a NUL. */
void zc_sha256(const void *data, size_t size, uint8_t digest[ZC_SHA256_DIGEST_SIZE]);
void zc_sha256_hex(const void *data, size_t size, char out[2 * ZC_SHA256_DIGEST_SIZE + 1]);
