/* SPDX-License-Identifier: MIT */
/*
 * Capability names <-> numbers through libcap; see caps.h.
 */

#include "caps.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>

int zp_cap_from_name(const char *name, unsigned *ret) {
        cap_value_t v;
        char *canon;
        bool same;

        /* libcap also takes lower case and bare numbers; Docker and OCI write "CAP_CHOWN" only. */
        if (!name || strncmp(name, "CAP_", 4) != 0 || strlen(name) > 64)
                return -EINVAL;
        for (const char *p = name; *p; p++)
                if (!(isupper((unsigned char) *p) || isdigit((unsigned char) *p) || *p == '_'))
                        return -EINVAL;
        if (cap_from_name(name, &v) < 0 || v < 0 || v > 63)
                return -EINVAL;
        canon = cap_to_name(v); /* "cap_chown" for a known capability, a number otherwise */
        if (!canon)
                return -ENOMEM;
        same = strcasecmp(canon, name) == 0;
        cap_free(canon);
        if (!same)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

int zp_cap_to_name(unsigned cap, char **ret) {
        char *s, *copy;

        if (cap > 63)
                return -EINVAL;
        s = cap_to_name((cap_value_t) cap);
        if (!s)
                return -ENOMEM;
        if (strncmp(s, "cap_", 4) != 0) {
                cap_free(s);
                return -EINVAL;
        }
        copy = strdup(s);
        cap_free(s);
        if (!copy)
                return -ENOMEM;
        for (char *p = copy; *p; p++)
                *p = (char) toupper((unsigned char) *p);
        *ret = copy;
        return 0;
}
