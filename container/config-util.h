/* SPDX-License-Identifier: MIT */
/*
 * The parts of config.json's reader (config*.c) share: JSON access that tolerates absent and
 * mistyped members, errors with a message, paths. Private to zygote-runc.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "libcontainer.h"

/* A line for o->notes (what the config asks for and the runtime accepts and ignores, as runc
 * does): 0, or -ENOMEM. */
__attribute__((format(printf, 2, 3))) int zct_oci_note(struct zct_oci *o, const char *fmt, ...);
/* Sets *ret_error (when not NULL) to the formatted message; returns r. */
__attribute__((format(printf, 3, 4))) int zct_errorf(char **ret_error, int r, const char *fmt, ...);
/* o[key], or NULL when o is not an object or has no such member. */
json_object *zct_get(json_object *o, const char *key);
/* o[key] when it is a string, else NULL. */
const char *zct_get_str(json_object *o, const char *key);
/* The length of an array, 0 for anything else (NULL too). */
size_t zct_array_len(json_object *a);
/* A NULL-terminated string array of a JSON array of strings, pointing into the JSON. */
int zct_str_array(json_object *a, const char *what, char ***ret, char **ret_error);
/* a/b with b's leading slashes dropped (malloc'd), or NULL. */
char *zct_join_path(const char *a, const char *b);
/* Reads a JSON object from path. */
int zct_read_json(const char *path, json_object **ret, char **ret_error);

/* config-process.c: process (args, env, user, capabilities, rlimits, ...) */
int zct_oci_parse_process(struct zct_oci *o, json_object *p, char **ret_error);
/* config-mount.c: mounts and rootfsPropagation; devices (the defaults, then the config's) and the
 * default /dev symlinks */
int zct_oci_parse_mounts(struct zct_oci *o, json_object *linux_, bool v2_only, char **ret_error);
int zct_oci_parse_devices(struct zct_oci *o, json_object *linux_, char **ret_error);
/* config-linux.c: process.scheduler, ioPriority, consoleSize; domainname, linux.personality,
 * linux.timeOffsets (new_time_ns: the config makes a time namespace); the fields zygote-runc does
 * not apply, refused by name */
int zct_oci_parse_process_extra(struct zct_oci *o, json_object *p, char **ret_error);
int zct_oci_parse_linux_extra(struct zct_oci *o, json_object *linux_, bool new_time_ns, char **ret_error);
/* idmap-mount.c: mounts[idx]'s uidMappings, gidMappings, idmap and ridmap into o->idmaps, sm
 * marked premade (a bind only; both mappings or neither; neither takes the container's user
 * namespace, which it must have); zct_oci_idmaps_free() closes the trees and frees them. */
int zct_oci_parse_mount_idmap(struct zct_oci *o, json_object *m, size_t idx, struct ze_sb_mount *sm, char **ret_error);
void zct_oci_idmaps_free(struct zct_oci *o);
/* config-mempolicy.c: linux.memoryPolicy into o->mempolicy, checked as runc 1.3 checks it */
int zct_oci_parse_mempolicy(struct zct_oci *o, json_object *linux_, char **ret_error);
/* A node list ("0-3,7", "" for none) as set_mempolicy(2) takes it: the mask and its maxnode (0
 * for none). -EINVAL for anything else, -ERANGE for a node past the mask. */
int zct_mempolicy_parse_nodes(const char *list, uint64_t mask[static ZE_SB_NUMA_WORDS], unsigned long *ret_maxnode);
