/* SPDX-License-Identifier: MIT */
/*
 * Recording a container through its runtime's seccomp agent interface (record-agent.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "record-agent.h"
#include "util.h"

#define REC_AGENT_MAX_MSG 65536
#define REC_AGENT_MAX_FDS 16

/* The calls a runtime hands the listener over with, before any agent has it: they keep their
 * allow (zygote-runc refuses a notifying sendmsg, runc a notifying write), and the agent adds
 * them to every recording since the runtime needs them. */
static const char *const unseen[] = { "sendmsg", "write" };

bool rec_agent_unseen(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(unseen); i++)
                if (streq(name, unseen[i]))
                        return true;
        return false;
}

const char *rec_agent_unseen_name(size_t i) {
        return i < ELEMENTSOF(unseen) ? unseen[i] : NULL;
}

static json_object *with_names(json_object *rule, json_object *names, const char *action) {
        json_object *r = json_object_new_object();

        json_object_object_foreach(rule, k, v) {
                if (streq(k, "names") || streq(k, "action"))
                        continue;
                json_object_object_add(r, k, json_object_get(v));
        }
        json_object_object_add(r, "names", names);
        json_object_object_add(r, "action", json_object_new_string(action));
        return r;
}

int rec_oci_recording(json_object *o, const char *socket_path, json_object **ret, char **ret_error) {
        const char *def = json_object_get_string(json_object_object_get(o, "defaultAction"));
        json_object *out, *in_rules = json_object_object_get(o, "syscalls"), *rules;

        if (in_rules && !json_object_is_type(in_rules, json_type_array)) {
                if (ret_error && asprintf(ret_error, "syscalls: not an array") < 0)
                        *ret_error = NULL;
                return -EINVAL;
        }

        if (!json_object_is_type(o, json_type_object) || !def || streq(def, "SCMP_ACT_ALLOW") ||
            streq(def, "SCMP_ACT_LOG")) {
                if (ret_error && asprintf(ret_error,
                                          "defaultAction %s: a recording needs an allow-list (a "
                                          "default that refuses), as Docker's profile is",
                                          def ?: "(none)") < 0)
                        *ret_error = NULL;
                return -EOPNOTSUPP;
        }
        out = json_object_new_object();
        rules = json_object_new_array();
        if (!out || !rules) {
                json_object_put(out);
                json_object_put(rules);
                return -ENOMEM;
        }
        json_object_object_foreach(o, k, v) {
                if (streq(k, "syscalls") || streq(k, "listenerPath") || streq(k, "listenerMetadata"))
                        continue;
                json_object_object_add(out, k, json_object_get(v));
        }
        for (size_t i = 0; in_rules && i < json_object_array_length(in_rules); i++) {
                json_object *rule = json_object_array_get_idx(in_rules, i), *names, *notify, *keep;
                const char *action = json_object_get_string(json_object_object_get(rule, "action"));

                names = json_object_object_get(rule, "names");
                if (!action || !streq(action, "SCMP_ACT_ALLOW") || !json_object_is_type(names, json_type_array)) {
                        json_object_array_add(rules, json_object_get(rule));
                        continue;
                }
                notify = json_object_new_array();
                keep = json_object_new_array();
                for (size_t n = 0; n < json_object_array_length(names); n++) {
                        json_object *name = json_object_array_get_idx(names, n);
                        const char *s = json_object_get_string(name);
                        json_object_array_add(s && rec_agent_unseen(s) ? keep : notify, json_object_get(name));
                }
                if (json_object_array_length(notify) > 0)
                        json_object_array_add(rules, with_names(rule, notify, "SCMP_ACT_NOTIFY"));
                else
                        json_object_put(notify);
                if (json_object_array_length(keep) > 0)
                        json_object_array_add(rules, with_names(rule, keep, "SCMP_ACT_ALLOW"));
                else
                        json_object_put(keep);
        }
        json_object_object_add(out, "syscalls", rules);
        json_object_object_add(out, "listenerPath", json_object_new_string(socket_path));
        *ret = out;
        return 0;
}

static void close_fds(const int *fds, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
}

int rec_agent_take(int lfd) {
        _cleanup_close_ int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

        if (c < 0)
                return -errno;
        return rec_agent_read(c);
}

int rec_agent_read(int c) {
        _cleanup_free_ char *buf = malloc(REC_AGENT_MAX_MSG + 1);
        struct iovec iov = { .iov_base = buf, .iov_len = REC_AGENT_MAX_MSG };
        union {
                struct cmsghdr h;
                char b[CMSG_SPACE(sizeof(int) * REC_AGENT_MAX_FDS)];
        } u;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b) };
        int fds[REC_AGENT_MAX_FDS], listener = -EPROTO;
        size_t n_fds = 0;
        json_object *state, *names;
        ssize_t n;

        if (!buf)
                return -ENOMEM;
        n = recvmsg(c, &msg, MSG_CMSG_CLOEXEC);
        if (n < 0)
                return -errno;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len >= CMSG_LEN(0)) {
                        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < k && n_fds < REC_AGENT_MAX_FDS; i++)
                                memcpy(&fds[n_fds++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
                }
        if (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) {
                close_fds(fds, n_fds);
                return -EPROTO;
        }
        buf[n] = 0;
        state = json_tokener_parse(buf);
        names = state ? json_object_object_get(state, "fds") : NULL;
        if (!json_object_is_type(names, json_type_array))
                names = NULL;
        for (size_t i = 0; names && i < json_object_array_length(names) && i < n_fds; i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(names, i));
                if (s && streq(s, "seccompFd") && listener < 0) {
                        listener = fds[i];
                        fds[i] = -1;
                }
        }
        json_object_put(state);
        close_fds(fds, n_fds);
        return listener;
}
