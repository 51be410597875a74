/* SPDX-License-Identifier: MIT */
/*
 * libzygote's internals shared by its source files (not installed).
 */
#pragma once

#include <stdlib.h>
#include <string.h>

#include "zygote.h"
#include "../daemon/util.h"

/* The shared library exports only what zygote.h declares; every definition of a public
 * function carries this (the library is built with -fvisibility=hidden). */
#ifndef _public_
#define _public_ __attribute__((visibility("default")))
#endif

/* util.h may define it (a macro) or not yet; either way one definition. */
#ifndef streq
#define streq(a, b) (strcmp((a), (b)) == 0)
#endif

static inline void *lzy_mfree(void *p) {
        free(p);
        return NULL;
}

static inline void lzy_json_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}

/* Parses text[0..len) as exactly one JSON object. -EBADMSG otherwise. */
int zy_json_parse(const char *text, size_t len, json_object **ret);

static inline void zy_reply_freep(struct zy_reply **r) {
        zy_reply_free(*r);
}
