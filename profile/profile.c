/* SPDX-License-Identifier: MIT */
/*
 * Profiles: the zygote profile around an OCI seccomp object (name, capabilities, access,
 * noNewPrivileges, "seccomp" inline or a path), or a plain Docker/OCI seccomp file as-is. See
 * profile.h for the contract. The work is shared out by role: profile-json.c reads the JSON and
 * words the errors, seccomp-oci.c maps the seccomp object to a spec, seccomp-compile.c compiles
 * and measures it, profile-set.c loads directories.
 */

#include "profile.h"

#include <ctype.h>
#include <grp.h>
#include <json-c/json.h>
#include <pwd.h>
#include <seccomp.h>
#include <stdio.h>

#include "profile-json.h"
#include "seccomp-compile.h"
#include "seccomp-oci.h"
#include "util.h"

/* ---------------------------------------------------------------------------------------------
 * Names: architectures, the libseccomp in use */

const char *zp_profile_arch_name(uint32_t arch) {
        return zp_oci_arch_to_name(arch);
}

void zp_profile_libseccomp_version(unsigned *ret_major, unsigned *ret_minor, unsigned *ret_micro) {
        const struct scmp_version *v = seccomp_version();

        *ret_major = v->major;
        *ret_minor = v->minor;
        *ret_micro = v->micro;
}

/* ---------------------------------------------------------------------------------------------
 * Profiles: the zygote wrapper around an OCI seccomp object, or a plain Docker/OCI file */

void zp_profile_free(struct zp_profile *p) {
        if (!p)
                return;
        free(p->name);
        free(p->path);
        free(p->bpf);
        free(p->access_uids);
        free(p->access_gids);
        free(p);
}

static void zp_profile_freep(struct zp_profile **p) {
        zp_profile_free(*p);
}

static void spec_donep(struct zp_oci_spec *s) {
        zp_oci_spec_done(s);
}

static bool profile_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > ZP_PROFILE_NAME_MAX || s[0] == '.' || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(isalnum((unsigned char) s[i]) || strchr("._-", s[i])))
                        return false;
        return true;
}

/* "dir/default.json" -> "default" */
static char *name_from_path(const char *path) {
        const char *base = strrchr(path, '/');
        size_t n;

        base = base ? base + 1 : path;
        n = strlen(base);
        if (n > 5 && streq(base + n - 5, ".json"))
                n -= 5;
        return strndup(base, n);
}

static int add_cap(struct zp_json_loader *l, const char *s, const char *loc, void *userdata) {
        uint64_t *caps = userdata;
        char q[PJ_QUOTE_MAX];
        unsigned cap;

        if (zp_cap_from_name(s, &cap) < 0)
                return zp_json_fail(l, -EINVAL, loc, "unknown capability %s", zp_json_quote(s, q));
        *caps |= UINT64_C(1) << cap;
        return 0;
}

static int lookup_id(bool user, const char *name, uint32_t *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 4096;

        for (;;) {
                struct passwd pw, *pwr = NULL;
                struct group gr, *grr = NULL;
                char *nbuf = realloc(buf, size);
                int e;

                if (!nbuf)
                        return -ENOMEM;
                buf = nbuf;
                e = user ? getpwnam_r(name, &pw, buf, size, &pwr) : getgrnam_r(name, &gr, buf, size, &grr);
                if (e == ERANGE && size < 1024 * 1024) {
                        size *= 2;
                        continue;
                }
                if (e != 0)
                        return -e;
                if (user ? !pwr : !grr)
                        return -ESRCH;
                *ret = user ? pwr->pw_uid : grr->gr_gid;
                return 0;
        }
}

static int parse_access(struct zp_json_loader *l, json_object *o, const char *loc, struct zp_profile *p) {
        static const char *const keys[] = { "users", "groups", NULL };
        char loc_k[PJ_LOC_MAX], loc_i[PJ_LOC_MAX], q[PJ_QUOTE_MAX];
        int r;

        r = zp_json_object(l, o, loc, keys);
        if (r < 0)
                return r;
        p->access_all = false;

        for (int which = 0; which < 2; which++) {
                bool user = which == 0;
                json_object *v;
                uint32_t *ids;
                size_t n;

                r = zp_json_optional_array(l, o, loc, user ? "users" : "groups", ZP_PROFILE_MAX_ACCESS, loc_k, &v, &n);
                if (r < 0)
                        return r;
                if (!v)
                        continue;
                ids = calloc(n ? n : 1, sizeof(uint32_t));
                if (!ids)
                        return -ENOMEM;
                if (user)
                        p->access_uids = ids, p->n_access_uids = n;
                else
                        p->access_gids = ids, p->n_access_gids = n;

                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        zp_json_loc_index(loc_i, loc_k, i);
                        if (json_object_is_type(e, json_type_int)) {
                                uint64_t id;
                                /* (uid_t) -1 means "no change" to setresuid: never a real id. */
                                r = zp_json_get_uint(l, e, loc_i, UINT32_MAX - 1, &id);
                                if (r < 0)
                                        return r;
                                ids[i] = (uint32_t) id;
                        } else if (json_object_is_type(e, json_type_string)) {
                                const char *name;
                                r = zp_json_get_string(l, e, loc_i, &name);
                                if (r < 0)
                                        return r;
                                r = lookup_id(user, name, &ids[i]);
                                if (r == -ENOMEM)
                                        return r;
                                if (r < 0)
                                        return zp_json_fail(l, -ESRCH, loc_i, "unknown %s %s", user ? "user" : "group",
                                                            zp_json_quote(name, q));
                        } else
                                return zp_json_fail(l, -EINVAL, loc_i, "expected a name or a number, got %s",
                                                    json_type_to_name(json_object_get_type(e)));
                }
        }
        return 0;
}

static int load_referenced(struct zp_json_loader *l, json_object *v, const char *loc, char **ret_path,
                           json_object **ret_root) {
        _cleanup_free_ char *dir = NULL, *full = NULL, *data = NULL;
        char q[PJ_QUOTE_MAX];
        const char *rel, *slash;
        size_t size;
        int r;

        r = zp_json_get_string(l, v, loc, &rel);
        if (r < 0)
                return r;
        if (!*rel)
                return zp_json_fail(l, -EINVAL, loc, "empty path");
        if (rel[0] == '/')
                return zp_json_fail(l, -EINVAL, loc, "%s: the path must be relative to the profile's directory",
                                    zp_json_quote(rel, q));
        slash = strrchr(l->path, '/');
        if (slash)
                r = asprintf(&dir, "%.*s", (int) (slash - l->path), l->path);
        else
                r = asprintf(&dir, ".");
        if (r < 0 || asprintf(&full, "%s/%s", dir, rel) < 0)
                return -ENOMEM;
        /* Beneath the profile's directory only: whoever may write a profile must not make the
         * daemon read any file it can ("../../../../etc/shadow") and show parts of it in its
         * messages. */
        r = zp_json_read_file_beneath(*dir ? dir : "/", rel, &data, &size);
        if (r == -EXDEV)
                return zp_json_fail(l, -EINVAL, loc, "%s: the path leaves the profile's directory",
                                    zp_json_quote(rel, q));
        if (r < 0)
                return zp_json_fail(l, r, loc, "cannot read %s: %s", full, strerror(-r));

        l->file = full; /* messages now name the referenced file */
        r = zp_json_parse(l, data, size, ret_root);
        if (r >= 0 && zp_json_field(*ret_root, "seccomp"))
                r = zp_json_fail(l, -EINVAL, NULL,
                                 "is a zygote profile; \"seccomp\" must name a Docker/OCI seccomp file");
        if (r < 0) {
                l->file = l->path;
                return r;
        }
        *ret_path = TAKE_PTR(full);
        return 0;
}

/* A plain Docker/OCI seccomp file: named after its file, with Docker's default capabilities. */
static int load_plain(struct zp_json_loader *l, json_object *root, struct zp_profile *p, struct zp_oci_spec *spec,
                      bool listener) {
        static const char *const docker_caps[] = { ZP_DOCKER_DEFAULT_CAPS };
        char q[PJ_QUOTE_MAX];
        int r;

        p->name = name_from_path(p->path);
        if (!p->name)
                return -ENOMEM;
        if (!profile_name_valid(p->name))
                return zp_json_fail(l, -EINVAL, NULL, "%s is not a valid profile name (from the file name)",
                                    zp_json_quote(p->name, q));
        for (size_t i = 0; i < ELEMENTSOF(docker_caps); i++) {
                unsigned cap;
                r = zp_cap_from_name(docker_caps[i], &cap);
                if (r < 0)
                        return r;
                p->caps_keep |= UINT64_C(1) << cap;
        }
        zp_oci_spec_init(spec, p->caps_keep);
        spec->listener = listener;
        return zp_oci_parse_seccomp(l, root, "", spec);
}

/* "noNewPrivsCallers": "refuse" (the default) or "allow". */
static int parse_nnp_callers(struct zp_json_loader *l, json_object *v, const char *loc, struct zp_profile *p) {
        char q[PJ_QUOTE_MAX];
        const char *s;
        int r;

        r = zp_json_get_string(l, v, loc, &s);
        if (r < 0)
                return r;
        if (!streq(s, "allow") && !streq(s, "refuse"))
                return zp_json_fail(l, -EINVAL, loc, "%s is not \"allow\" or \"refuse\"", zp_json_quote(s, q));
        p->nnp_callers_allow = streq(s, "allow");
        return 0;
}

/* A zygote profile: name, capabilities, noNewPrivileges, noNewPrivsCallers, access, and "seccomp", an inline OCI
 * object or the path of a Docker/OCI file next to the profile (then *ret_ref_root holds the
 * tree the spec borrows from, and l->file names that file until the caller resets it). */
static int load_wrapped(struct zp_json_loader *l, json_object *root, struct zp_profile *p, struct zp_oci_spec *spec,
                        char **ret_ref_path, json_object **ret_ref_root) {
        static const char *const keys[] = { "name",   "seccomp", "capabilities",      "noNewPrivileges",
                                            "access", "comment", "noNewPrivsCallers", NULL };
        char loc[PJ_LOC_MAX], q[PJ_QUOTE_MAX];
        json_object *v;
        const char *s;
        int r;

        r = zp_json_object(l, root, "", keys);
        if (r < 0)
                return r;

        r = zp_json_require_string(l, root, "", "name", loc, &s);
        if (r < 0)
                return r;
        if (!profile_name_valid(s))
                return zp_json_fail(
                        l, -EINVAL, loc,
                        "%s is not a valid profile name (1-%d of A-Z a-z 0-9 . _ -, not starting with . or -)",
                        zp_json_quote(s, q), ZP_PROFILE_NAME_MAX);
        p->name = strdup(s);
        if (!p->name)
                return -ENOMEM;

        r = zp_json_optional_string(l, root, "", "comment", &s);
        if (r < 0)
                return r;

        /* Capabilities first: includes/excludes in the seccomp part are evaluated against them. */
        if (!zp_json_field(root, "capabilities"))
                return zp_json_fail(l, -EINVAL, NULL,
                                    "missing \"capabilities\" (the bounding set to keep; [] keeps none)");
        r = zp_json_string_array(l, root, "", "capabilities", ZP_PROFILE_MAX_LIST, add_cap, &p->caps_keep, NULL);
        if (r < 0)
                return r;

        v = zp_json_field(root, "noNewPrivileges");
        if (v) {
                r = zp_json_get_bool(l, v, "noNewPrivileges", &p->no_new_privs);
                if (r < 0)
                        return r;
        }

        v = zp_json_field(root, "noNewPrivsCallers");
        if (v) {
                r = parse_nnp_callers(l, v, "noNewPrivsCallers", p);
                if (r < 0)
                        return r;
        }

        v = zp_json_field(root, "access");
        if (v) {
                r = parse_access(l, v, "access", p);
                if (r < 0)
                        return r;
        }

        zp_oci_spec_init(spec, p->caps_keep);
        v = zp_json_field(root, "seccomp");
        if (!json_object_is_type(v, json_type_string))
                return zp_oci_parse_seccomp(l, v, "seccomp", spec);
        r = load_referenced(l, v, "seccomp", ret_ref_path, ret_ref_root);
        if (r < 0)
                return r;
        return zp_oci_parse_seccomp(l, *ret_ref_root, "", spec);
}

static int load_buffer(const char *path, const char *data, size_t size, const struct zp_profile_options *opts,
                       struct zp_profile **ret, struct zp_json_loader *l) {
        _cleanup_(zp_profile_freep) struct zp_profile *p = NULL;
        _cleanup_(json_object_putp) json_object *root = NULL, *ref_root = NULL;
        _cleanup_(spec_donep) struct zp_oci_spec spec = {};
        _cleanup_free_ char *ref_path = NULL;
        unsigned optimize = opts && opts->optimize ? opts->optimize : 2;
        bool plain, wrapped;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->path = strdup(path);
        if (!p->path)
                return -ENOMEM;
        p->no_new_privs = true;
        p->access_all = true;

        r = zp_json_parse(l, data, size, &root);
        if (r < 0)
                return r;

        plain = zp_json_field(root, "defaultAction") || zp_json_field(root, "syscalls");
        wrapped = zp_json_field(root, "seccomp");
        if (plain && wrapped)
                return zp_json_fail(l, -EINVAL, NULL,
                                    "both \"seccomp\" (zygote profile) and \"defaultAction\"/\"syscalls\" (Docker/OCI "
                                    "file) at top level");
        if (!plain && !wrapped)
                return zp_json_fail(l, -EINVAL, NULL,
                                    "neither a Docker/OCI seccomp file (\"defaultAction\", \"syscalls\") nor a zygote "
                                    "profile (\"seccomp\")");
        r = plain ? load_plain(l, root, p, &spec, opts && opts->listener)
                  : load_wrapped(l, root, p, &spec, &ref_path, &ref_root);
        if (r < 0)
                return r;

        r = zp_seccomp_compile(l, &spec, optimize, p);
        if (r < 0)
                return r;
        if (!opts || opts->enosys_newer) {
                r = zp_seccomp_enosys_stub(&spec, p);
                if (r < 0)
                        return zp_json_fail(l, r, NULL, "the -ENOSYS stub: %s", strerror(-r));
        }
        l->file = l->path;

        r = zp_seccomp_measure(p);
        if (r < 0)
                return zp_json_fail(l, r, NULL, "measuring the program failed: %s", strerror(-r));

        *ret = TAKE_PTR(p);
        return 0;
}
int zp_profile_load_buffer_with(const char *path, const char *data, size_t size, const struct zp_profile_options *opts,
                                struct zp_profile **ret, char **ret_error) {
        struct zp_json_loader l = { .path = path, .file = path };
        int r;

        if (!path || (!data && size > 0) || !ret)
                return -EINVAL;
        if (opts && opts->optimize > 2)
                return -EINVAL;
        r = load_buffer(path, data ? data : "", size, opts, ret, &l);
        if (r < 0 && !l.error) {
                /* A failure that is not about the content (memory, I/O): still name the file. */
                if (asprintf(&l.error, "%s: %s", path, strerror(-r)) < 0)
                        l.error = NULL;
        }
        if (r < 0 && ret_error)
                *ret_error = TAKE_PTR(l.error);
        free(l.error);
        return r;
}

int zp_profile_load_buffer(const char *path, const char *data, size_t size, struct zp_profile **ret, char **ret_error) {
        return zp_profile_load_buffer_with(path, data, size, NULL, ret, ret_error);
}

int zp_profile_load_file_with(const char *path, const struct zp_profile_options *opts, struct zp_profile **ret,
                              char **ret_error) {
        _cleanup_free_ char *data = NULL;
        size_t size;
        int r;

        if (!path || !ret)
                return -EINVAL;
        r = zp_json_read_file(path, &data, &size);
        if (r < 0) {
                if (ret_error) {
                        if (r == -EFBIG)
                                r = asprintf(ret_error, "%s: more than the %d bytes allowed", path,
                                             ZP_PROFILE_MAX_FILE_SIZE) < 0
                                            ? -ENOMEM
                                            : r;
                        else if (r == -EBADFD)
                                r = asprintf(ret_error, "%s: not a regular file", path) < 0 ? -ENOMEM : r;
                        else {
                                int e = r;
                                r = asprintf(ret_error, "%s: %s", path, strerror(-e)) < 0 ? -ENOMEM : e;
                        }
                }
                return r;
        }
        return zp_profile_load_buffer_with(path, data, size, opts, ret, ret_error);
}

int zp_profile_load_file(const char *path, struct zp_profile **ret, char **ret_error) {
        return zp_profile_load_file_with(path, NULL, ret, ret_error);
}

bool zp_profile_allows(const struct zp_profile *p, uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups) {
        if (!p)
                return false;
        if (uid == 0 || p->access_all)
                return true;
        for (size_t i = 0; i < p->n_access_uids; i++)
                if (p->access_uids[i] == uid)
                        return true;
        for (size_t i = 0; i < p->n_access_gids; i++) {
                if (p->access_gids[i] == gid)
                        return true;
                for (size_t j = 0; j < n_groups; j++)
                        if (groups && p->access_gids[i] == groups[j])
                                return true;
        }
        return false;
}
