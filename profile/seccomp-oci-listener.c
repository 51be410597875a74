/* SPDX-License-Identifier: MIT */
/*
 * Seccomp user notification in the OCI object (see seccomp-oci.h): SCMP_ACT_NOTIFY, listenerPath,
 * listenerMetadata and the listener's flags. Accepted only where the caller hands the filter's
 * listener to an agent (spec->listener: a container runtime); refused by name otherwise.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>

#include "seccomp-oci.h"
#include "util.h"

#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* SCMP_ACT_NOTIFY: only where the caller hands a listener to an agent (a container runtime), and
 * never as the default: every system call of the container's init between the filter's load and
 * its hand-over of the listener would wait for an agent that cannot have it yet (runc refuses it
 * too). */
int zp_oci_check_notify(struct zp_json_loader *l, const struct zp_oci_spec *s, const char *loc_a, bool is_default) {
        if (!s->listener)
                return zp_json_fail(
                        l, -EOPNOTSUPP, loc_a,
                        "SCMP_ACT_NOTIFY needs a seccomp user-notification listener, which zygote does not provide");
        if (is_default)
                return zp_json_fail(l, -EINVAL, loc_a,
                                    "SCMP_ACT_NOTIFY cannot be the default action: the container's init would wait "
                                    "on an agent for the very system calls that hand it the listener");
        return 0;
}

/* An SCMP_ACT_NOTIFY rule that applies: the filter gets a listener. The container's init hands
 * that listener over with sendmsg(2) right after the load, before any agent has it: a rule that
 * made sendmsg wait for the agent would never be answered (runc refuses write(2), its own
 * hand-over, for the same reason). */
int zp_oci_note_notify(struct zp_json_loader *l, struct zp_oci_spec *s, const struct zp_oci_rule *rule,
                       const char *loc) {
        char loc_n[PJ_LOC_MAX];

        for (size_t i = 0; i < rule->n_names; i++)
                if (streq(rule->names[i], "sendmsg")) {
                        zp_json_loc_key(loc_n, loc, "names");
                        return zp_json_fail(l, -EINVAL, loc_n,
                                            "SCMP_ACT_NOTIFY cannot apply to sendmsg: the container's init hands the "
                                            "listener to the runtime with it, before any agent could answer");
                }
        if (!s->notify) {
                s->notify = true;
                s->notify_rule = rule->json_index;
        }
        return 0;
}

int zp_oci_listener_flag(struct zp_json_loader *l, struct zp_oci_spec *s, const char *f, const char *loc) {
        if (s->listener && streq(f, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV")) {
                /* the kernel takes it only with a listener: checked once the rules are known */
                s->flags |= SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
                snprintf(s->wait_killable_loc, sizeof(s->wait_killable_loc), "%s", loc);
                return 1;
        }
        if (s->listener && streq(f, "SECCOMP_FILTER_FLAG_NEW_LISTENER"))
                return zp_json_fail(l, -EINVAL, loc,
                                    "SECCOMP_FILTER_FLAG_NEW_LISTENER is not an OCI flag: the runtime sets it "
                                    "itself when a rule's action is SCMP_ACT_NOTIFY");
        if (streq(f, "SECCOMP_FILTER_FLAG_NEW_LISTENER") || streq(f, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"))
                return zp_json_fail(l, -EOPNOTSUPP, loc,
                                    "%s needs a seccomp user-notification listener, which zygote does not provide", f);
        return 0;
}

int zp_oci_parse_listener_fields(struct zp_json_loader *l, json_object *o, const char *loc, struct zp_oci_spec *s) {
        char loc_k[PJ_LOC_MAX];
        const char *str[2];
        int r;

        for (size_t i = 0; i < 2; i++) {
                const char *key = i == 0 ? "listenerPath" : "listenerMetadata";
                r = zp_json_optional_string(l, o, loc, key, &str[i]);
                if (r < 0)
                        return r;
                /* without a listener, only an empty value is acceptable */
                if (!s->listener && str[i] && *str[i]) {
                        zp_json_loc_key(loc_k, loc, key);
                        return zp_json_fail(l, -EOPNOTSUPP, loc_k, "zygote has no seccomp user-notification listener");
                }
        }
        s->listener_path = str[0] && *str[0];
        if (s->listener && str[1] && *str[1] && !s->listener_path) {
                zp_json_loc_key(loc_k, loc, "listenerMetadata");
                return zp_json_fail(l, -EINVAL, loc_k, "set without listenerPath (the runtime spec forbids it)");
        }
        return 0;
}

/* Once the rules are known: a rule that notifies needs the agent's socket, and gives the filter a
 * listener (SECCOMP_FILTER_FLAG_NEW_LISTENER, what a compiled program carries to the runtime, from
 * zygoted's cache too). listenerPath without such a rule is ignored, as the spec says. */
int zp_oci_finish_listener(struct zp_json_loader *l, struct zp_oci_spec *s) {
        char loc_k[PJ_LOC_MAX];

        if ((s->flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) && !s->notify)
                return zp_json_fail(l, -EINVAL, s->wait_killable_loc,
                                    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV needs a rule whose action is "
                                    "SCMP_ACT_NOTIFY");
        if (!s->notify)
                return 0;
        if (!s->listener_path) {
                zp_json_loc_key(loc_k, s->loc, "listenerPath");
                return zp_json_fail(l, -EINVAL, loc_k,
                                    "missing: syscalls[%zu] uses SCMP_ACT_NOTIFY, whose listener goes to the agent "
                                    "listening there",
                                    s->notify_rule);
        }
        s->flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
        /* the kernel refuses TSYNC with a listener unless a thread that cannot sync fails the
         * call instead (libseccomp does the same) */
        if (s->flags & SECCOMP_FILTER_FLAG_TSYNC)
                s->flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
        return 0;
}
