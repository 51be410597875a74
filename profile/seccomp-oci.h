/* SPDX-License-Identifier: MIT */
/*
 * The OCI `linux.seccomp` object (the schema Docker and Podman use) parsed into a plain spec:
 * defaultAction/defaultErrnoRet, architectures or archMap, flags, and syscalls with
 * names/action/errnoRet/args/includes/excludes. Only the mapping from JSON to the spec lives here;
 * seccomp-compile.c turns a spec into BPF.
 *
 * The whole object is validated, rules that end up excluded included, so that a profile fails or
 * loads the same way on every machine. includes/excludes are decided the way Docker does, against
 * the spec's inputs below.
 *
 * Internal to the profile module.
 */
#pragma once

#include <json-c/json.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile-json.h"
#include "profile-limits.h"

struct zp_oci_arg {
        unsigned index;
        enum scmp_compare op;
        uint64_t value, value_two;
};

struct zp_oci_rule {
        size_t json_index; /* position in "syscalls", for messages */
        uint32_t action;
        bool active;        /* includes/excludes let it in */
        const char **names; /* borrowed from the JSON tree, which outlives compilation */
        size_t n_names;
        struct zp_oci_arg args[ZP_PROFILE_MAX_ARGS];
        size_t n_args;
};

struct zp_oci_spec {
        /* Inputs, set before parsing: what includes/excludes are evaluated against. */
        uint64_t caps_keep;                  /* bounding set kept ("caps") */
        uint32_t native;                     /* seccomp_arch_native() ("arches") */
        unsigned kernel_major, kernel_minor; /* running kernel ("minKernel") */
        bool listener;                       /* the caller hands a listener to listenerPath's agent:
                                              * SCMP_ACT_NOTIFY and the listener fields allowed */

        /* Results. */
        const char *loc; /* "" for a plain file, "seccomp" for an inline object */
        uint32_t default_action;
        uint32_t arches[ZP_PROFILE_MAX_ARCHES]; /* native first */
        size_t n_arches;
        bool native_listed;                 /* the object names the native one ("architectures", archMap's entry):
                             * arches[0] is there either way (libseccomp's filter holds it) */
        unsigned flags;                     /* SECCOMP_FILTER_FLAG_*, NEW_LISTENER when a rule notifies */
        bool notify;                        /* an SCMP_ACT_NOTIFY rule applies */
        size_t notify_rule;                 /* the first one's index in "syscalls" */
        bool listener_path;                 /* a non-empty listenerPath */
        char wait_killable_loc[PJ_LOC_MAX]; /* where SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV was */
        struct zp_oci_rule *rules;
        size_t n_rules;
        size_t n_names;
};

/* Sets the inputs for this machine: native architecture and running kernel; caps_keep as given. */
void zp_oci_spec_init(struct zp_oci_spec *s, uint64_t caps_keep);

/* Parses the seccomp object o found at loc into s (initialized with zp_oci_spec_init). */
int zp_oci_parse_seccomp(struct zp_json_loader *l, json_object *o, const char *loc, struct zp_oci_spec *s);

/* Frees what parsing allocated; s can be parsed into again after zp_oci_spec_init. */
void zp_oci_spec_done(struct zp_oci_spec *s);

/* "SCMP_ARCH_X86_64" for an AUDIT_ARCH_* value, NULL when not one the OCI spec names. */
const char *zp_oci_arch_to_name(uint32_t arch);

/* "SCMP_CMP_EQ" to SCMP_CMP_EQ; -EINVAL for a name that is not an OCI operator. */
int zp_oci_op_from_name(const char *name, enum scmp_compare *ret);

/* ---- seccomp-oci-listener.c: SCMP_ACT_NOTIFY and the listener fields (spec->listener) ---- */

/* SCMP_ACT_NOTIFY named at loc_a: refused without spec->listener, and as the default action. */
int zp_oci_check_notify(struct zp_json_loader *l, const struct zp_oci_spec *s, const char *loc_a, bool is_default);

/* A rule at loc that notifies and applies: noted in s (notify, notify_rule); sendmsg refused. */
int zp_oci_note_notify(struct zp_json_loader *l, struct zp_oci_spec *s, const struct zp_oci_rule *rule,
                       const char *loc);

/* A flag of the listener's (NEW_LISTENER, WAIT_KILLABLE_RECV): 1 when taken, -errno when refused,
 * 0 for any other flag. */
int zp_oci_listener_flag(struct zp_json_loader *l, struct zp_oci_spec *s, const char *f, const char *loc);

/* listenerPath and listenerMetadata of o (at loc). */
int zp_oci_parse_listener_fields(struct zp_json_loader *l, json_object *o, const char *loc, struct zp_oci_spec *s);

/* After the rules: a notifying rule needs listenerPath and adds SECCOMP_FILTER_FLAG_NEW_LISTENER. */
int zp_oci_finish_listener(struct zp_json_loader *l, struct zp_oci_spec *s);
