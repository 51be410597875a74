/* SPDX-License-Identifier: MIT */
/*
 * io.containers.trace-syscall (podman's oci-seccomp-bpf-hook form, "[if:/INPUT;][of:]/OUTPUT")
 * for zygoted's containers (container-record.h), as zygote-runc takes it for its own
 * (container/record-annotation.c), but recorded with zygoted's eBPF tracer (record-bpf.c): the
 * container's filter stays its config's, nothing is added to it.
 *
 * The tracer follows the container's worker from its fork (zygoted puts itself in the tracer's
 * map for that fork, so that the worker is followed before it runs), but a thread's calls count
 * only from the seccomp filter load that makes it the container's: what the container's runtime
 * does after (ids, capabilities, the wait for Start, the execve) is what the filter must allow,
 * what it does before (mounts, namespaces) is not the container's. The same span the runtime
 * spec's seccomp agent sees (zygote-runc's way). The recording ends at the init's exit (task.c),
 * and the file is written at Delete.
 *
 * Without the tracer, the container worker records it as zygote-runc's create does
 * (container/record-annotation.c, struct zct_handoff's record_agent): zygote-record's agent, in a
 * session of its own, is the listener of the container's filter made a recording one, and
 * writes the file once the container's last process (exec'd ones included) is gone.
 *
 * Who writes the file: zygoted, as root, at the path the bundle names. CreateContainer is for
 * root callers holding every capability in zygoted's namespaces (container.c's authorize): the
 * path is one such a caller may write itself, so the write gives it nothing it lacks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "call.h"
#include "container-record.h"
#include "daemon.h"
#include "libcontainer.h"
#include "log.h"
#include "record-bpf-read.h"
#include "record-json.h"
#include "task.h"
#include "util.h"
#include "zygote-protocol.h"

/* config.json read here, at most (the worker reads it again, with the container library's
 * own checks). */
#define CONFIG_MAX (4u * 1024u * 1024u)

static json_object *read_config(int bundle_fd) {
        _cleanup_close_ int fd = openat(bundle_fd, "config.json", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        _cleanup_free_ char *text = NULL;
        struct stat st;
        size_t len = 0;
        ssize_t n;

        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX)
                return NULL;
        text = malloc((size_t) st.st_size + 1);
        if (!text)
                return NULL;
        while (len < (size_t) st.st_size && (n = read(fd, text + len, (size_t) st.st_size - len)) > 0)
                len += (size_t) n;
        text[len] = 0;
        return json_tokener_parse(text);
}

int zd_container_record_parse(struct zd_call *call, int bundle_fd, char **ret_out, char **ret_in, bool *ret_agent) {
        json_object *config = read_config(bundle_fd), *annotations = NULL, *value = NULL;
        _cleanup_free_ char *v = NULL;
        const char *in, *out;

        *ret_out = *ret_in = NULL;
        *ret_agent = false;
        /* no config to read: the worker says what is wrong with it */
        if (!config || !json_object_object_get_ex(config, "annotations", &annotations) ||
            !json_object_object_get_ex(annotations, ZCT_TRACE_ANNOTATION, &value)) {
                json_object_put(config);
                return 0;
        }
        v = json_object_is_type(value, json_type_string) ? strdup(json_object_get_string(value)) : NULL;
        /* its calls count from its filter's load: a container without one would record nothing */
        json_object *linux_ = json_object_object_get(config, "linux");
        bool seccomp = json_object_object_get(linux_, "seccomp") != NULL;
        json_object_put(config);
        if (!v || zct_record_annotation_parse(v, &in, &out) < 0)
                return zd_call_invalid(call, "annotations." ZCT_TRACE_ANNOTATION);
        if (!seccomp)
                return zd_call_invalid(call, "linux.seccomp");
        /* no tracer (not loaded, or ZYGOTE_DISABLE_FEATURES=record_bpf, as for tasks): the worker
         * records as zygote-runc does, through zygote-record's agent */
        if (!call->d->recorder.skel) {
                *ret_agent = true;
                return 0;
        }
        *ret_out = strdup(out);
        *ret_in = in ? strdup(in) : NULL;
        if (!*ret_out || (in && !*ret_in)) {
                free(*ret_out);
                free(*ret_in);
                *ret_out = *ret_in = NULL;
                return -ENOMEM;
        }
        return 0;
}

int zd_container_record_before_fork(struct zd_call *call, struct zd_task *t, const struct zd_task *container) {
        int r;

        /* an exec joins its container's recording, while there is one (until the init's exit) */
        if (container && container->record_id != 0) {
                r = zd_recorder_follow(&call->d->recorder, getpid(), container->record_id);
                return r < 0 && r != -ESRCH
                               ? zd_call_failf(call, r, ZY_ERROR_RECORDING_UNAVAILABLE, "reason", strerror(-r))
                               : 0;
        }
        if (!t->record_out)
                return 0;
        /* zygoted is single-threaded: its pid is the thread that forks */
        r = zd_recorder_begin(&call->d->recorder, getpid(), t->account, ZD_RECORD_FROM_FILTER, t, &t->record_id);
        if (r == -EUSERS)
                return zd_call_limit(call, "recordings_per_user", ZD_RECORDINGS_PER_UID);
        if (r < 0)
                return zd_call_failf(call, r, ZY_ERROR_RECORDING_UNAVAILABLE, "reason",
                                     r == -EAGAIN ? "64 recordings under way" : strerror(-r));
        return 0;
}

void zd_container_record_after_fork(struct zd_daemon *d, struct zd_task *t, const struct zd_task *container) {
        if (t->record_id != 0 || (container && container->record_id != 0))
                zd_recorder_forget(&d->recorder, getpid());
}

void zd_container_record_write(struct zd_daemon *d, struct zd_task *t) {
        _cleanup_free_ char *err = NULL;
        const char *incomplete = NULL;
        struct rec_set set;
        bool found = false;
        int r;

        if (!t->record_out || !t->record)
                return; /* never started, or no record: nothing ran to be recorded */
        rec_set_init(&set);
        r = rec_json_read_file(t->record_in ? t->record_in : t->record_out, &set, &found, &err);
        if (r >= 0 && t->record_in && !found)
                r = -ENOENT;
        if (r >= 0)
                r = rec_bpf_parse(t->record, &set, &incomplete);
        if (r >= 0)
                r = rec_json_write_file(t->record_out, &set, NULL);
        if (r < 0)
                zd_log(LOG_WARNING, "container %s: %s not written: %s", t->id, t->record_out, err ? err : strerror(-r));
        else
                zd_log(LOG_INFO, "container %s: %zu system calls %s %s%s%s", t->id, set.n_calls,
                       found ? "merged into" : "recorded in", t->record_out, incomplete ? "; incomplete: " : "",
                       incomplete ? incomplete : "");
        rec_set_done(&set);
}
