/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4), small and dependency-free: zygote hashes every compiled BPF program so
 * that `launchctl status` and `zygoted --check-profile` can say which filter a profile carries.
 * Not constant-time and not meant for secrets; it only names content.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define ZY_SHA256_DIGEST_SIZE 32

struct zy_sha256 {
        uint32_t h[8];
        uint64_t total;    /* bytes hashed so far */
        uint8_t buf[64];   /* pending partial block */
        size_t n_buf;
};

void zy_sha256_init(struct zy_sha256 *s);
void zy_sha256_update(struct zy_sha256 *s, const void *data, size_t size);
void zy_sha256_final(struct zy_sha256 *s, uint8_t digest[ZY_SHA256_DIGEST_SIZE]);

/* One-shot helpers. out gets 64 lowercase hex digits and a NUL. */
void zy_sha256(const void *data, size_t size, uint8_t digest[ZY_SHA256_DIGEST_SIZE]);
void zy_sha256_hex(const void *data, size_t size, char out[2 * ZY_SHA256_DIGEST_SIZE + 1]);
