/* SPDX-License-Identifier: MIT */
/*
 * libzygote's messages (libzygote-message.c): a call's JSON, a reply's fields. Not installed.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Parses text[0..len) as exactly one JSON object. -EBADMSG otherwise. */
int lzy_json_parse(const char *text, size_t len, json_object **ret);

/* A call {"method", "parameters", "more"/"oneway" from flags (ZY_CALL_*)}; the call takes its
 * own reference to parameters (NULL: none). */
int lzy_call_new(const char *method, json_object *parameters, unsigned flags, json_object **ret);

/* One reply's text: its parameters (an empty object when it has none), its error name (NULL when
 * none, else malloc'd) and "continues". -EBADMSG for a reply that breaks the protocol. */
int lzy_reply_parse(const char *text, size_t len, json_object **ret_params, char **ret_error, bool *ret_continues);
