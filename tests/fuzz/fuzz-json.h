/* SPDX-License-Identifier: MIT */
/*
 * The fuzzers' reading of their input as one JSON document (fuzz-devices, fuzz-record).
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

/* The input parsed as JSON, or NULL where it is not (or no tokener could be made): the caller
 * owns it. */
static inline json_object *fuzz_json(const uint8_t *data, size_t size) {
        struct json_tokener *tok = json_tokener_new();
        json_object *o;

        if (!tok)
                return NULL;
        o = json_tokener_parse_ex(tok, (const char *) data, (int) (size > INT32_MAX ? INT32_MAX : size));
        json_tokener_free(tok);
        return o;
}
