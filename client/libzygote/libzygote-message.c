/* SPDX-License-Identifier: MIT */
/*
 * libzygote's messages, apart from the connection that carries them: a call's JSON object, one
 * reply's text parsed into its fields, and the daemon's error names mapped to errnos. Pure
 * functions: no socket, no state.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>

#include "libzygote-message.h"
#include "zygote-private.h"
#include "util.h"

int lzy_json_parse(const char *text, size_t len, json_object **ret) {
        json_tokener *tok;
        json_object *o;
        enum json_tokener_error e;

        if (len > INT_MAX)
                return -EMSGSIZE;
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, text, (int) len);
        e = json_tokener_get_error(tok);
        /* All of the text must be one value: a complete value followed by garbage, or a value
         * still incomplete when the text ends, is malformed. */
        if (!o || e != json_tokener_success || json_tokener_get_parse_end(tok) != len) {
                json_tokener_free(tok);
                if (o)
                        json_object_put(o);
                return -EBADMSG;
        }
        json_tokener_free(tok);
        if (!json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return -EBADMSG;
        }
        *ret = o;
        return 0;
}

int lzy_call_new(const char *method, json_object *parameters, unsigned flags, json_object **ret) {
        _cleanup_(lzy_json_putp) json_object *call = NULL;

        call = json_object_new_object();
        if (!call)
                return -ENOMEM;
        if (json_object_object_add(call, "method", json_object_new_string(method)) < 0)
                return -ENOMEM;
        if (parameters) {
                /* json_object_object_add() takes a reference; the caller keeps its own. */
                json_object_get(parameters);
                if (json_object_object_add(call, "parameters", parameters) < 0) {
                        json_object_put(parameters);
                        return -ENOMEM;
                }
        }
        if (flags & ZY_CALL_MORE && json_object_object_add(call, "more", json_object_new_boolean(1)) < 0)
                return -ENOMEM;
        if (flags & ZY_CALL_ONEWAY && json_object_object_add(call, "oneway", json_object_new_boolean(1)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(call);
        return 0;
}

int lzy_reply_parse(const char *text, size_t len, json_object **ret_params, char **ret_error, bool *ret_continues) {
        _cleanup_(lzy_json_putp) json_object *o = NULL;
        json_object *params = NULL, *err = NULL, *cont = NULL;
        _cleanup_free_ char *error = NULL;
        int r;

        r = lzy_json_parse(text, len, &o);
        if (r < 0)
                return r;
        if (json_object_object_get_ex(o, "parameters", &params) && !json_object_is_type(params, json_type_null) &&
            !json_object_is_type(params, json_type_object))
                return -EBADMSG;
        if (json_object_object_get_ex(o, "error", &err)) {
                if (!json_object_is_type(err, json_type_string) || json_object_get_string_len(err) == 0)
                        return -EBADMSG;
                error = strdup(json_object_get_string(err));
                if (!error)
                        return -ENOMEM;
        }
        if (json_object_object_get_ex(o, "continues", &cont) && !json_object_is_type(cont, json_type_boolean))
                return -EBADMSG;

        if (params && json_object_is_type(params, json_type_object))
                json_object_get(params);
        else {
                params = json_object_new_object();
                if (!params)
                        return -ENOMEM;
        }
        *ret_params = params;
        *ret_error = TAKE_PTR(error);
        *ret_continues = cont && json_object_get_boolean(cont);
        return 0;
}

static const struct {
        const char *name;
        int error;
} error_table[] = {
        { ZY_ERROR_NO_SUCH_TASK, ESRCH },
        { ZY_ERROR_NO_SUCH_PROFILE, ENOENT },
        { ZY_ERROR_NO_SUCH_FILTER, ENOENT },
        { ZY_ERROR_PERMISSION_DENIED, EPERM },
        { ZY_ERROR_TASK_EXISTS, EEXIST },
        { ZY_ERROR_INVALID_STATE, EBUSY },
        { ZY_ERROR_SPAWN_FAILED, ECHILD },
        { ZY_ERROR_CALLER_CONFINED, EACCES },
        { ZY_ERROR_LIMIT_EXCEEDED, E2BIG },
        { ZY_ERROR_INVALID_PARAMETER, EINVAL },
        { ZY_ERROR_METHOD_NOT_FOUND, EOPNOTSUPP },
        { ZY_ERROR_METHOD_NOT_IMPLEMENTED, EOPNOTSUPP },
        { ZY_ERROR_INTERFACE_NOT_FOUND, EOPNOTSUPP },
        { ZY_ERROR_VARLINK_PERMISSION_DENIED, EPERM },
        { ZY_ERROR_EXPECTED_MORE, EBADRQC },
};

/* Limits on things in use that free up over time, where retrying later may succeed (the names
 * zygoted uses, see LimitExceeded in io.zygote.Launcher.varlink); any other limit is on the size
 * of the request itself ("message", "fds"), which a retry does not change. */
static const char *const transient_limits[] = {
        "tasks",
        "tasks_per_user",
        "connections",
        "connections_per_user",
        "subscribers",
        "subscribers_per_user",
        "argv_bytes_per_user",
        "memory",
        "compile_time_per_user",
        "compile_time_users",
};

_public_ int zy_error_to_errno(const char *error_name, const char *limit) {
        if (!error_name)
                return -EINVAL;
        if (streq(error_name, ZY_ERROR_LIMIT_EXCEEDED) && limit)
                for (size_t i = 0; i < ELEMENTSOF(transient_limits); i++)
                        if (streq(limit, transient_limits[i]))
                                return -EAGAIN;
        for (size_t i = 0; i < ELEMENTSOF(error_table); i++)
                if (streq(error_name, error_table[i].name))
                        return -error_table[i].error;
        return -EREMOTEIO;
}
