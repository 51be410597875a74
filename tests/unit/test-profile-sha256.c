/* SPDX-License-Identifier: MIT */
/* common/sha256.c against the FIPS 180-2 examples and the padding boundaries. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sha256.h"
#include "testutil.h"

static void hex_of(const char *data, size_t size, char out[65]) {
        zc_sha256_hex(data, size, out);
}

/* FIPS 180-2, appendix B.1, B.2, B.3 (and the empty message). */
static void test_fips_vectors(void **state) {
        char hex[65];
        char *million;

        hex_of("abc", 3, hex);
        assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

        hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
        assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

        million = malloc(1000000);
        assert_non_null(million);
        memset(million, 'a', 1000000);
        hex_of(million, 1000000, hex);
        assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
        free(million);

        hex_of("", 0, hex);
        assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

/* Lengths around the 56-byte padding limit and the 64-byte block (digests from Python hashlib). */
static void test_padding_boundaries(void **state) {
        static const struct {
                size_t n;
                const char *hex;
        } v[] = {
                { 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
                { 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
                { 57, "f13b2d724659eb3bf47f2dd6af1accc87b81f09f59f2b75e5c0bed6589dfe8c6" },
                { 63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34" },
                { 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
                { 65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0" },
                { 119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb" },
                { 120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c" },
                { 127, "c57e9278af78fa3cab38667bef4ce29d783787a2f731d4e12200270f0c32320a" },
                { 128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e" },
                { 129, "c12cb024a2e5551cca0e08fce8f1c5e314555cc3fef6329ee994a3db752166ae" },
        };
        char buf[129], hex[65];

        memset(buf, 'a', sizeof(buf));
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                hex_of(buf, v[i].n, hex);
                assert_string_equal(hex, v[i].hex);
        }
}

/* Feeding the same bytes in uneven pieces gives the one-shot digest. */
static void test_incremental(void **state) {
        static const size_t pieces[] = { 1, 63, 64, 65, 0, 7, 128, 3, 1000 };
        uint8_t data[4096], one[32], inc[32];
        struct zc_sha256 s;
        size_t off = 0;

        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (uint8_t) (i * 131 + 7);
        zc_sha256(data, sizeof(data), one);

        zc_sha256_init(&s);
        for (size_t i = 0; off < sizeof(data); i = (i + 1) % (sizeof(pieces) / sizeof(pieces[0]))) {
                size_t n = pieces[i];
                if (n > sizeof(data) - off)
                        n = sizeof(data) - off;
                zc_sha256_update(&s, data + off, n);
                off += n;
        }
        zc_sha256_final(&s, inc);
        assert_memory_equal(one, inc, sizeof(one));

        /* And a different byte changes it. */
        data[100] ^= 1;
        zc_sha256(data, sizeof(data), inc);
        assert_memory_not_equal(one, inc, sizeof(one));
}

TU_MAIN(cmocka_unit_test(test_fips_vectors), cmocka_unit_test(test_padding_boundaries),
        cmocka_unit_test(test_incremental))
