/* SPDX-License-Identifier: MIT */
/*
 * What a task's scope takes of its caller's unit (scope.c asks, this file decides): the slice,
 * which is the unit's own "Slice" property as its manager says it, and every limit and access
 * rule of the unit's cgroup context, copied as the manager reported them, or a refusal.
 *
 * The security argument. A task in a scope of its own is no longer counted in its caller's unit,
 * so what confined the caller there must confine it again: the slice's limits (the scope goes
 * into the same slice, found by the manager from the caller's cgroup, never parsed from a path
 * that a delegate may have shaped), and the unit's own (copied below, each one a copy, not a
 * share: see docs/SECURITY.md). What cannot be carried is refused, never dropped:
 * - a unit setting a property of the refused table (enforced per cgroup, and a scope has no
 *   such property to set);
 * - a caller whose cgroup is below its unit's own (a subtree delegated to the unit: what its
 *   delegate set there, device programs, pids.max of a container, is unknown to the manager).
 * Protections (MemoryMin, MemoryLow and their defaults, ManagedOOMPreference) are dropped on
 * purpose: a copy would protect each task as much as the whole unit was, which is more than the
 * caller had; without them the task is protected less, never more.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "scope-unit.h"
#include "util.h"

/* Cgroup-context properties, copied as read (the manager reports them in the form it takes). */
static const char *const copied[] = {
        "CPUAccounting",
        "CPUWeight",
        "StartupCPUWeight",
        "CPUShares",
        "StartupCPUShares",
        "CPUQuotaPerSecUSec",
        "CPUQuotaPeriodUSec",
        "AllowedCPUs",
        "StartupAllowedCPUs",
        "AllowedMemoryNodes",
        "StartupAllowedMemoryNodes",
        "IOAccounting",
        "IOWeight",
        "StartupIOWeight",
        "IODeviceWeight",
        "IOReadBandwidthMax",
        "IOWriteBandwidthMax",
        "IOReadIOPSMax",
        "IOWriteIOPSMax",
        "IODeviceLatencyTargetUSec",
        "BlockIOAccounting",
        "BlockIOWeight",
        "StartupBlockIOWeight",
        "BlockIODeviceWeight",
        "BlockIOReadBandwidth",
        "BlockIOWriteBandwidth",
        "MemoryAccounting",
        "MemoryHigh",
        "MemoryMax",
        "MemorySwapMax",
        "MemoryZSwapMax",
        "MemoryLimit",
        "StartupMemoryHigh",
        "StartupMemoryMax",
        "StartupMemorySwapMax",
        "StartupMemoryZSwapMax",
        "TasksAccounting",
        "TasksMax",
        "DevicePolicy",
        "DeviceAllow",
        "IPAccounting",
        "IPAddressAllow",
        "IPAddressDeny",
        "IPIngressFilterPath",
        "IPEgressFilterPath",
        "BPFProgram",
        "SocketBindAllow",
        "SocketBindDeny",
        "RestrictNetworkInterfaces",
        "NFTSet",
        "ManagedOOMSwap",
        "ManagedOOMMemoryPressure",
        "ManagedOOMMemoryPressureLimit",
        NULL,
};

/* Set on the unit, enforced through its cgroup, and not a property a scope has: refused when
 * set. RestrictFileSystems= is an execution setting that the BPF LSM applies by cgroup. */
static const char *const refused[] = {
        "RestrictFileSystems",
        NULL,
};

/* Copied within one manager, refused when set on another manager's unit: a user's manager has no
 * privilege for the BPF programs of devices, addresses, binds and interfaces, and no io or cpuset
 * controller delegated to it (user@.service delegates pids, memory and cpu): set there, they would
 * not hold. */
static const char *const foreign_refused[] = {
        "AllowedCPUs",
        "StartupAllowedCPUs",
        "AllowedMemoryNodes",
        "StartupAllowedMemoryNodes",
        "IOWeight",
        "StartupIOWeight",
        "IODeviceWeight",
        "IOReadBandwidthMax",
        "IOWriteBandwidthMax",
        "IOReadIOPSMax",
        "IOWriteIOPSMax",
        "IODeviceLatencyTargetUSec",
        "BlockIOWeight",
        "StartupBlockIOWeight",
        "BlockIODeviceWeight",
        "BlockIOReadBandwidth",
        "BlockIOWriteBandwidth",
        "DevicePolicy",
        "DeviceAllow",
        "IPAddressAllow",
        "IPAddressDeny",
        "IPIngressFilterPath",
        "IPEgressFilterPath",
        "BPFProgram",
        "SocketBindAllow",
        "SocketBindDeny",
        "RestrictNetworkInterfaces",
        "NFTSet",
        NULL,
};

static bool in(const char *const *table, const char *name) {
        for (const char *const *p = table; *p; p++)
                if (strcmp(*p, name) == 0)
                        return true;
        return false;
}

/* Whether a value (the variant, entered) sets anything: a non-empty list, a true flag or a
 * non-empty string anywhere in it. Leaves the message past the value. */
static int value_sets(sd_bus_message *m, bool *ret) {
        char type;
        const char *contents;
        int r;

        *ret = false;
        for (;;) {
                r = sd_bus_message_peek_type(m, &type, &contents);
                if (r <= 0)
                        return r;
                if (type == SD_BUS_TYPE_ARRAY) {
                        r = sd_bus_message_enter_container(m, type, contents);
                        if (r < 0)
                                return r;
                        /* every element skipped: an array is left only at its end */
                        while ((r = sd_bus_message_at_end(m, false)) == 0) {
                                *ret = true;
                                r = sd_bus_message_skip(m, NULL);
                                if (r < 0)
                                        return r;
                        }
                        if (r >= 0)
                                r = sd_bus_message_exit_container(m);
                        if (r < 0)
                                return r;
                } else if (type == SD_BUS_TYPE_STRUCT || type == SD_BUS_TYPE_VARIANT) {
                        bool inner;
                        r = sd_bus_message_enter_container(m, type, contents);
                        if (r >= 0)
                                r = value_sets(m, &inner);
                        if (r >= 0)
                                r = sd_bus_message_exit_container(m);
                        if (r < 0)
                                return r;
                        *ret = *ret || inner;
                } else if (type == SD_BUS_TYPE_BOOLEAN) {
                        int b;
                        r = sd_bus_message_read_basic(m, type, &b);
                        if (r < 0)
                                return r;
                        *ret = *ret || b;
                } else if (type == SD_BUS_TYPE_STRING) {
                        const char *s;
                        r = sd_bus_message_read_basic(m, type, &s);
                        if (r < 0)
                                return r;
                        *ret = *ret || *s;
                } else {
                        r = sd_bus_message_skip(m, NULL);
                        if (r < 0)
                                return r;
                }
        }
}

/* Whether a value (the variant, entered, of signature contents) is what the manager reports for
 * a setting left unset: infinity, 0 (a "u" limit), "" or "auto", nothing listed or switched on.
 * Such a value is not copied: the scope's own default is the same, or stricter (TasksMax), and a
 * manager that no longer takes a setting (cgroup v1's) still takes the call. */
static int value_is_unset(sd_bus_message *m, const char *contents, bool *ret) {
        bool set;
        int r;

        if (strcmp(contents, "t") == 0) {
                uint64_t v;
                r = sd_bus_message_read_basic(m, 't', &v);
                *ret = v == UINT64_MAX;
        } else if (strcmp(contents, "u") == 0) {
                uint32_t v;
                r = sd_bus_message_read_basic(m, 'u', &v);
                *ret = v == 0;
        } else if (strcmp(contents, "s") == 0) {
                const char *v = NULL;
                r = sd_bus_message_read_basic(m, 's', &v);
                *ret = r >= 0 && (!*v || strcmp(v, "auto") == 0);
        } else {
                r = value_sets(m, &set);
                *ret = !set;
        }
        return r < 0 ? r : 0;
}

/* Appends the property at props (its name read, its variant next) to out, unless unset. */
static int copy_property(sd_bus_message *props, const char *name, sd_bus_message *out, struct zd_scope_unit *u) {
        const char *contents;
        bool unset;
        int r = sd_bus_message_peek_type(props, NULL, &contents);

        if (r >= 0)
                r = sd_bus_message_enter_container(props, SD_BUS_TYPE_VARIANT, contents);
        if (r >= 0)
                r = value_is_unset(props, contents, &unset);
        if (r >= 0)
                r = sd_bus_message_exit_container(props);
        if (r < 0 || unset)
                return r;
        /* back to the start of this "{sv}", past its name, for the copy */
        r = sd_bus_message_rewind(props, false);
        if (r >= 0)
                r = sd_bus_message_skip(props, "s");
        if (r >= 0)
                r = sd_bus_message_open_container(out, SD_BUS_TYPE_STRUCT, "sv");
        if (r >= 0)
                r = sd_bus_message_append_basic(out, SD_BUS_TYPE_STRING, name);
        if (r >= 0)
                r = sd_bus_message_copy(out, props, false);
        if (r >= 0)
                r = sd_bus_message_close_container(out);
        if (r >= 0)
                u->n_copied++;
        return r;
}

/* Reads a string property's value (the variant, not entered) into buf; "" when another type. */
static int read_string(sd_bus_message *m, char *buf, size_t size) {
        const char *s = NULL;
        int r = sd_bus_message_enter_container(m, SD_BUS_TYPE_VARIANT, "s");

        if (r == 0 || r == -ENXIO)
                return sd_bus_message_skip(m, "v"); /* not a string: not ours */
        if (r < 0)
                return r;
        r = sd_bus_message_read_basic(m, SD_BUS_TYPE_STRING, &s);
        if (r < 0)
                return r;
        snprintf(buf, size, "%s", s);
        return sd_bus_message_exit_container(m);
}

/* One "{sv}" of the unit's properties: copied into out, noted, checked or skipped. */
static int one_property(sd_bus_message *props, sd_bus_message *out, struct zd_scope_unit *u) {
        const char *name;
        int r = sd_bus_message_read_basic(props, SD_BUS_TYPE_STRING, &name);

        if (r < 0)
                return r;
        if (strcmp(name, "Id") == 0)
                return read_string(props, u->id, sizeof(u->id));
        if (strcmp(name, "Slice") == 0)
                return read_string(props, u->slice, sizeof(u->slice));
        if (strcmp(name, "ControlGroup") == 0)
                return read_string(props, u->cgroup, sizeof(u->cgroup));
        if (in(copied, name) && !(u->foreign && in(foreign_refused, name)))
                return copy_property(props, name, out, u);
        if (in(refused, name) || in(copied, name)) {
                const char *contents = NULL;
                bool set, unset;
                r = sd_bus_message_peek_type(props, NULL, &contents);
                if (r >= 0)
                        r = sd_bus_message_enter_container(props, SD_BUS_TYPE_VARIANT, contents);
                /* one not copied here (another manager's) is refused as copying would copy it */
                if (r >= 0 && in(copied, name)) {
                        r = value_is_unset(props, contents, &unset);
                        set = !unset;
                } else if (r >= 0)
                        r = value_sets(props, &set);
                if (r >= 0)
                        r = sd_bus_message_exit_container(props);
                if (r < 0)
                        return r;
                if (set && !u->refused[0])
                        snprintf(u->refused, sizeof(u->refused), "%s", name);
                return 0;
        }
        return sd_bus_message_skip(props, "v");
}

/* Whether cgroup is the unit's own cgroup: equal, after the trailing slashes. */
static bool same_cgroup(const char *a, const char *b) {
        size_t na = strlen(a), nb = strlen(b);

        while (na > 1 && a[na - 1] == '/')
                na--;
        while (nb > 1 && b[nb - 1] == '/')
                nb--;
        return na == nb && strncmp(a, b, na) == 0;
}

int zd_scope_unit_copy(sd_bus_message *props, const char *caller_cgroup, bool foreign, sd_bus_message *out,
                       struct zd_scope_unit *u, char *why, size_t why_size) {
        int r;

        *u = (struct zd_scope_unit){ .foreign = foreign };
        r = sd_bus_message_enter_container(props, SD_BUS_TYPE_ARRAY, "{sv}");
        if (r < 0)
                return r;
        for (;;) {
                r = sd_bus_message_enter_container(props, SD_BUS_TYPE_DICT_ENTRY, "sv");
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                r = one_property(props, out, u);
                if (r >= 0)
                        r = sd_bus_message_exit_container(props);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_exit_container(props);
        if (r < 0)
                return r;

        /* every unit but the root slice is in a slice: without it the scope would go to the
         * manager's default one, out of the slices that limit the caller */
        if (!u->id[0] || !u->cgroup[0] || (!u->slice[0] && strcmp(u->id, "-.slice") != 0)) {
                snprintf(why, why_size, "the service manager did not say which unit holds cgroup %s, or its slice",
                         caller_cgroup);
                return -ESRCH;
        }
        if (u->refused[0]) {
                snprintf(why, why_size,
                         "the caller's unit %s sets %s=, which a scope unit %s cannot carry: a detached task would "
                         "lose it",
                         u->id, u->refused, u->foreign ? "of zygoted's manager, not the unit's," : "");
                return -EPERM;
        }
        if (!same_cgroup(caller_cgroup, u->cgroup)) {
                snprintf(why, why_size,
                         "the caller's cgroup %s is below its unit %s's own (%s), in a subtree delegated to it: its "
                         "delegate's limits there cannot be carried",
                         caller_cgroup, u->id, u->cgroup);
                return -EPERM;
        }
        return 0;
}

int zd_scope_unit_slice_name(const struct zd_scope_unit *u, char *buf, size_t size) {
        const char *parent = u->slice[0] && !u->foreign ? u->slice : "-.slice";
        size_t plen, n = 0;
        char out[256];
        int w;

        if (!u->foreign && strlen(u->id) > 6 && strcmp(u->id + strlen(u->id) - 6, ".slice") == 0)
                parent = u->id; /* the root slice: what limits it limits its subtree */
        plen = strcmp(parent, "-.slice") == 0 ? 0 : strlen(parent) - 6;
        w = snprintf(out, sizeof(out), "%.*s%szygote-", (int) plen, parent, plen ? "-" : "");
        if (w < 0 || (size_t) w >= sizeof(out))
                return -ENAMETOOLONG;
        n = (size_t) w;
        for (const char *c = u->id; *c; c++) {
                bool keep = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                            *c == ':' || *c == '_' || (*c == '.' && c != u->id);
                w = keep ? snprintf(out + n, sizeof(out) - n, "%c", *c)
                         : snprintf(out + n, sizeof(out) - n, "\\x%02x", (unsigned char) *c);
                if (w < 0 || (size_t) w >= sizeof(out) - n)
                        return -ENAMETOOLONG;
                n += (size_t) w;
        }
        /* a unit's name is at most 255 characters, its suffix included */
        if (n + 6 > 255 || n + 7 > size)
                return -ENAMETOOLONG;
        memcpy(buf, out, n);
        memcpy(buf + n, ".slice", 7);
        return 0;
}

/* zygoted's own cgroup, as the hierarchy that names units has it (name=systemd on a v1 or hybrid
 * host, else the unified one). */
static int own_cgroup(char *buf, size_t size) {
        _cleanup_close_ int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
        char text[8192], *save = NULL;
        const char *unified = NULL;
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = read(fd, text, sizeof(text) - 1);
        if (n < 0)
                return -errno;
        text[n] = 0;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *path = strchr(line, ':');
                path = path ? strchr(path + 1, ':') : NULL;
                if (path && strstr(line, ":name=systemd:")) {
                        snprintf(buf, size, "%s", path + 1);
                        return 0;
                }
                if (path && strncmp(line, "0::", 3) == 0)
                        unified = path + 1;
        }
        if (!unified)
                return -ENOENT;
        snprintf(buf, size, "%s", unified);
        return 0;
}

int zd_scope_unit_foreign_below(const struct zd_scope_unit *u, char *why, size_t size) {
        char own[4096];
        size_t n = strlen(u->cgroup);
        const char *slash = strrchr(u->cgroup, '/');
        int r = own_cgroup(own, sizeof(own));

        if (r < 0) {
                snprintf(why, size, "zygoted's own cgroup could not be read: %s", strerror(-r));
                return r;
        }
        n = slash ? (size_t) (slash - u->cgroup) : n;
        if (!slash || (n > 0 && (strncmp(own, u->cgroup, n) != 0 || own[n] != '/'))) {
                snprintf(why, size,
                         "zygoted (in %.300s) is not below the slice of the caller's unit %s (%.*s): its limits "
                         "would not count a task of zygoted's manager",
                         own, u->id, (int) n, u->cgroup);
                return -EPERM;
        }
        return 0;
}
