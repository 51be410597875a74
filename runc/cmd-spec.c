/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc spec: writes runc's default config.json (config.c's) into a bundle.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "util.h"
#include "verbs.h"

int zrc_cmd_spec(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_opt o[] = { { "bundle", 'b', true }, { "rootless", 0, false } };
        int k = zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), NULL);
        const char *bundle = o[0].value;
        _cleanup_free_ char *path = NULL;
        json_object *spec;
        int r;

        if (k < 0)
                return 1;
        spec = zct_oci_default_spec(o[1].value != NULL);
        if (!spec || asprintf(&path, "%s/config.json", bundle ? bundle : ".") < 0)
                return zct_error(c, "out of memory");
        if (access(path, F_OK) == 0) {
                json_object_put(spec);
                return zct_error(c, "File %s exists. Remove it first", path);
        }
        r = json_object_to_file_ext(path, spec,
                                    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
        json_object_put(spec);
        return r < 0 ? zct_error(c, "writing %s: %s", path, zct_errstr(errno)) : 0;
}
