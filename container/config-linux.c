/* SPDX-License-Identifier: MIT */
/*
 * config.json's fields beyond the sandbox's core: domainname, linux.personality,
 * linux.timeOffsets, process.scheduler, process.ioPriority, process.consoleSize and
 * process.apparmorProfile, each parsed into struct zct_oci or refused with the field's name; and
 * the fields zygote-runc does not apply (SELinux labels, other platforms' objects, newer runtime
 * features), refused by name rather than ignored: a container never runs without something its
 * config asked for.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>

#include "config-util.h"
#include "util.h"

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#ifndef SCHED_BATCH
#define SCHED_BATCH 3
#endif
#ifndef SCHED_IDLE
#define SCHED_IDLE 5
#endif

#define IOPRIO_CLASS_SHIFT 13

/* A member that holds something: present, not null, not an empty string, array or object. */
static bool set(json_object *v) {
        if (!v)
                return false;
        switch (json_object_get_type(v)) {
        case json_type_null:
                return false;
        case json_type_string:
                return json_object_get_string_len(v) > 0;
        case json_type_array:
                return json_object_array_length(v) > 0;
        case json_type_object:
                return json_object_object_length(v) > 0;
        default:
                return true;
        }
}

/* What zygote-runc cannot apply, each with the reason its refusal gives. */
static const struct {
        const char *parent; /* "" (the top), "process", "process.user", "linux" */
        const char *key;
        const char *why;
} refused[] = {
        { "", "solaris", "zygote-runc runs Linux containers" },
        { "", "windows", "zygote-runc runs Linux containers" },
        { "", "vm", "zygote-runc runs containers, not virtual machines" },
        { "", "zos", "zygote-runc runs Linux containers" },
        { "process", "selinuxLabel", "zygote-runc applies no SELinux label" },
        { "process", "commandLine", "a Windows field; use process.args" },
        { "process", "execCPUAffinity", "not implemented" },
        { "process.user", "username", "a Windows field; use process.user.uid" },
        { "linux", "mountLabel", "zygote-runc applies no SELinux label" },
        { "linux", "intelRdt", "zygote-runc has no Intel RDT support" },
        { "linux", "netDevices", "not implemented" },
};

static int check_refused(json_object *root, char **ret_error) {
        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                json_object *parent = root;

                if (streq(refused[i].parent, "process.user"))
                        parent = zct_get(zct_get(root, "process"), "user");
                else if (refused[i].parent[0])
                        parent = zct_get(root, refused[i].parent);
                if (set(zct_get(parent, refused[i].key)))
                        return zct_errorf(ret_error, -EOPNOTSUPP,
                                          "config.json: %s%s%s: not supported by zygote-runc (%s)", refused[i].parent,
                                          refused[i].parent[0] ? "." : "", refused[i].key, refused[i].why);
        }
        return 0;
}

/* linux.personality: the domains runc knows (LINUX, LINUX32); no flags. */
static int parse_personality(struct zct_oci *o, json_object *p, char **ret_error) {
        const char *domain = zct_get_str(p, "domain");

        o->personality = ZE_SB_NO_PERSONALITY;
        if (!p)
                return 0;
        if (set(zct_get(p, "flags")))
                return zct_errorf(ret_error, -EOPNOTSUPP,
                                  "config.json: linux.personality.flags: not supported by zygote-runc (as runc)");
        if (domain && streq(domain, "LINUX"))
                o->personality = PER_LINUX;
        else if (domain && streq(domain, "LINUX32"))
                o->personality = PER_LINUX32;
        else
                return zct_errorf(ret_error, -EINVAL,
                                  "config.json: linux.personality.domain: \"%s\" is not LINUX or LINUX32",
                                  domain ? domain : "");
        return 0;
}

/* linux.timeOffsets: "monotonic" and "boottime", as timens_offsets(5) takes them; only with a
 * new time namespace (it holds them). */
static int parse_time_offsets(struct zct_oci *o, json_object *t, bool new_time_ns, char **ret_error) {
        char *text = NULL;
        size_t len = 0;
        FILE *f;

        if (!set(t))
                return 0;
        if (!new_time_ns)
                return zct_errorf(
                        ret_error, -EINVAL,
                        "config.json: linux.timeOffsets needs a new time namespace (linux.namespaces \"time\")");
        if (!json_object_is_type(t, json_type_object))
                return zct_errorf(ret_error, -EINVAL, "config.json: linux.timeOffsets is not an object");
        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        json_object_object_foreach(t, clock, v) {
                json_object *secs = zct_get(v, "secs"), *ns = zct_get(v, "nanosecs");
                int64_t n = ns ? json_object_get_int64(ns) : 0;

                if (!streq(clock, "monotonic") && !streq(clock, "boottime")) {
                        fclose(f);
                        free(text);
                        return zct_errorf(ret_error, -EINVAL,
                                          "config.json: linux.timeOffsets.%s: not a clock of a time namespace "
                                          "(monotonic, boottime)",
                                          clock);
                }
                if ((secs && !json_object_is_type(secs, json_type_int)) ||
                    (ns && !json_object_is_type(ns, json_type_int)) || n < 0 || n > 999999999) {
                        fclose(f);
                        free(text);
                        return zct_errorf(ret_error, -EINVAL, "config.json: linux.timeOffsets.%s: bad secs or nanosecs",
                                          clock);
                }
                fprintf(f, "%s %" PRId64 " %" PRId64 "\n", clock, secs ? json_object_get_int64(secs) : 0, n);
        }
        fclose(f);
        o->time_offsets = text;
        return 0;
}

static const struct {
        const char *name;
        uint32_t value;
} sched_policies[] = {
        { "SCHED_OTHER", SCHED_OTHER }, { "SCHED_FIFO", SCHED_FIFO }, { "SCHED_RR", SCHED_RR },
        { "SCHED_BATCH", SCHED_BATCH }, { "SCHED_IDLE", SCHED_IDLE }, { "SCHED_DEADLINE", SCHED_DEADLINE },
};

static const struct {
        const char *name;
        uint64_t value;
} sched_flags[] = {
        { "SCHED_FLAG_RESET_ON_FORK", 0x01 },  { "SCHED_FLAG_RECLAIM", 0x02 },
        { "SCHED_FLAG_DL_OVERRUN", 0x04 },     { "SCHED_FLAG_KEEP_POLICY", 0x08 },
        { "SCHED_FLAG_KEEP_PARAMS", 0x10 },    { "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
        { "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
};

/* process.scheduler, applied by the runtime to the process before it runs (sched_setattr). */
static int parse_scheduler(struct zct_oci *o, json_object *s, char **ret_error) {
        const char *policy = zct_get_str(s, "policy");
        json_object *v = zct_get(s, "flags");
        size_t k;

        if (!s)
                return 0;
        for (k = 0; k < ELEMENTSOF(sched_policies); k++)
                if (policy && streq(policy, sched_policies[k].name))
                        break;
        if (k == ELEMENTSOF(sched_policies))
                return zct_errorf(ret_error, -EINVAL, "config.json: process.scheduler.policy: unknown policy \"%s\"",
                                  policy ? policy : "");
        o->sched = (struct zct_sched){
                .policy = sched_policies[k].value,
                .nice = (int32_t) json_object_get_int(zct_get(s, "nice")),
                .priority = (uint32_t) json_object_get_int(zct_get(s, "priority")),
                .runtime = json_object_get_uint64(zct_get(s, "runtime")),
                .deadline = json_object_get_uint64(zct_get(s, "deadline")),
                .period = json_object_get_uint64(zct_get(s, "period")),
        };
        if (o->sched.nice < -20 || o->sched.nice > 19)
                return zct_errorf(ret_error, -EINVAL, "config.json: process.scheduler.nice must be -20 to 19");
        for (size_t i = 0; i < zct_array_len(v); i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(v, i));

                for (k = 0; k < ELEMENTSOF(sched_flags); k++)
                        if (name && streq(name, sched_flags[k].name))
                                break;
                if (k == ELEMENTSOF(sched_flags))
                        return zct_errorf(ret_error, -EINVAL,
                                          "config.json: process.scheduler.flags[%zu]: unknown flag \"%s\"", i,
                                          name ? name : "");
                o->sched.flags |= sched_flags[k].value;
        }
        o->has_sched = true;
        return 0;
}

/* process.ioPriority, applied by the runtime to the process before it runs (ioprio_set). */
static int parse_io_priority(struct zct_oci *o, json_object *p, char **ret_error) {
        static const char *const classes[] = { "IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE", "IOPRIO_CLASS_IDLE" };
        const char *class = zct_get_str(p, "class");
        int64_t prio = json_object_get_int64(zct_get(p, "priority"));
        size_t k;

        o->ioprio = -1;
        if (!p)
                return 0;
        for (k = 0; k < ELEMENTSOF(classes); k++)
                if (class && streq(class, classes[k]))
                        break;
        if (k == ELEMENTSOF(classes))
                return zct_errorf(ret_error, -EINVAL,
                                  "config.json: process.ioPriority.class: unknown class \"%s\" (IOPRIO_CLASS_RT, "
                                  "IOPRIO_CLASS_BE, IOPRIO_CLASS_IDLE)",
                                  class ? class : "");
        if (prio < 0 || prio > 7)
                return zct_errorf(ret_error, -EINVAL, "config.json: process.ioPriority.priority must be 0 to 7");
        o->ioprio = (int) ((k + 1) << IOPRIO_CLASS_SHIFT) | (int) prio;
        return 0;
}

/* process.consoleSize: the terminal's size from the start. */
static int parse_console_size(struct zct_oci *o, json_object *p, char **ret_error) {
        json_object *cs = zct_get(p, "consoleSize");
        int64_t h = json_object_get_int64(zct_get(cs, "height")), w = json_object_get_int64(zct_get(cs, "width"));

        if (!cs)
                return 0;
        if (h < 0 || h > 65535 || w < 0 || w > 65535)
                return zct_errorf(ret_error, -EINVAL, "config.json: process.consoleSize: bad height or width");
        o->console_rows = (unsigned short) h;
        o->console_cols = (unsigned short) w;
        return 0;
}

/* An AppArmor profile name as the kernel takes it after "exec ": printable, one line. */
#define ZCT_APPARMOR_NAME_MAX 1024

int zct_oci_set_apparmor(struct zct_oci *o, const char *profile, const char *what, char **ret_error) {
        free(o->apparmor_exec);
        o->apparmor_exec = NULL;
        if (!profile || !*profile)
                return 0;
        if (strlen(profile) > ZCT_APPARMOR_NAME_MAX)
                return zct_errorf(ret_error, -ENAMETOOLONG, "%s: longer than %d characters", what,
                                  ZCT_APPARMOR_NAME_MAX);
        for (const char *c = profile; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        return zct_errorf(ret_error, -EINVAL,
                                          "%s: a control character (newline, tab, ...) in the profile name", what);
        if (asprintf(&o->apparmor_exec, "exec %s", profile) < 0) {
                o->apparmor_exec = NULL;
                return -ENOMEM;
        }
        return 0;
}

static int parse_apparmor(struct zct_oci *o, json_object *p, char **ret_error) {
        json_object *v = zct_get(p, "apparmorProfile");

        if (v && !json_object_is_type(v, json_type_string) && !json_object_is_type(v, json_type_null))
                return zct_errorf(ret_error, -EINVAL, "config.json: process.apparmorProfile must be a string");
        return zct_oci_set_apparmor(o, v ? json_object_get_string(v) : NULL, "config.json: process.apparmorProfile",
                                    ret_error);
}

int zct_oci_parse_process_extra(struct zct_oci *o, json_object *p, char **ret_error) {
        int r;

        r = parse_apparmor(o, p, ret_error);
        if (r >= 0)
                r = parse_scheduler(o, zct_get(p, "scheduler"), ret_error);
        if (r >= 0)
                r = parse_io_priority(o, zct_get(p, "ioPriority"), ret_error);
        if (r >= 0)
                r = parse_console_size(o, p, ret_error);
        return r;
}

int zct_oci_parse_linux_extra(struct zct_oci *o, json_object *linux_, bool new_time_ns, char **ret_error) {
        int r;

        r = check_refused(o->root, ret_error);
        if (r < 0)
                return r;
        o->domainname = zct_get_str(o->root, "domainname");
        if (o->domainname && !*o->domainname)
                o->domainname = NULL;
        if (o->domainname && !o->uts_ns)
                /* as hostname: it would rename the host's */
                return zct_errorf(ret_error, -EINVAL,
                                  "config.json: domainname needs a uts namespace (linux.namespaces \"uts\")");
        r = parse_personality(o, zct_get(linux_, "personality"), ret_error);
        if (r >= 0)
                r = parse_time_offsets(o, zct_get(linux_, "timeOffsets"), new_time_ns, ret_error);
        return r;
}
