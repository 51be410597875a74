/* SPDX-License-Identifier: MIT */
/*
 * The io.containers.trace-syscall annotation (podman's oci-seccomp-bpf-hook form,
 * "[if:INPUT;][of:]OUTPUT"): zygote-runc's own create records the container's system calls into
 * OUTPUT, an OCI seccomp profile (the union with INPUT when given, else with what OUTPUT held).
 *
 * It starts zygote-record's agent (record/zygote-record.c) in a session of its own, which prints
 * the socket it listens on, and makes the container's seccomp object a recording one
 * (record-agent.h: its allowing rules notify, listenerPath the agent's socket); the rest is the
 * runtime spec's seccomp agent interface (seccomp-listener.c). The agent writes OUTPUT once no
 * process of the container is left under the filter. Its socket is linked from the state
 * directory: exec finds it there (zct_record_join), and the agent serves the exec'd process's
 * listener too. zygoted's containers (a handoff) are recorded by zygoted's eBPF tracer
 * (daemon/container-record.c), or without it this same way (handoff->record_agent).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config-util.h"
#include "profile.h"
#include "record-agent.h"
#include "libcontainer.h"
#include "util.h"

int zct_record_annotation_parse(char *v, const char **in, const char **out) {
        *in = *out = NULL;
        for (char *tok = strtok(v, ";"); tok; tok = strtok(NULL, ";")) {
                if (strncmp(tok, "if:", 3) == 0)
                        *in = tok + 3;
                else
                        *out = strncmp(tok, "of:", 3) == 0 ? tok + 3 : tok;
        }
        return *out && (*out)[0] == '/' && (!*in || (*in)[0] == '/') ? 0 : -EINVAL;
}

/* zygote-record in zygote's libexec directory, else the build tree's (as zygoted falls back to
 * the source tree's profiles): this program runs from a sealed copy (sealed-copy.c), whose
 * /proc/self/exe says nothing of where it was installed. */
static int find_recorder(char buf[static PATH_MAX]) {
        snprintf(buf, PATH_MAX, "%s/zygote-record", ZYGOTE_LIBEXEC_DIR);
        if (access(buf, X_OK) == 0)
                return 0;
        snprintf(buf, PATH_MAX, "%s", ZYGOTE_BUILD_RECORDER);
        return access(buf, X_OK) == 0 ? 0 : -ENOENT;
}

/* Starts the agent, detached (its own session, not our child), and returns the socket it
 * listens on, from its first line. */
static int start_agent(const char *in, const char *out, char **ret_socket) {
        char recorder[PATH_MAX], line[PATH_MAX + 16];
        int p[2], status;
        pid_t pid;
        ssize_t n;
        size_t len = 0;

        if (find_recorder(recorder) < 0)
                return -ENOENT;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                close(p[0]);
                close(p[1]);
                return -errno;
        }
        if (pid == 0) {
                const char *argv[] = { recorder, "agent", "--out", out, "--socket", "", in ? "--in" : NULL, in, NULL };
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (setsid() < 0 || null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(null, 2) < 0)
                        _exit(1);
                if (fork() != 0)
                        _exit(0);
                execv(recorder, (char **) argv);
                _exit(127);
        }
        close(p[1]);
        (void) waitpid(pid, &status, 0);
        /* "ready SOCKET\n", once it listens; EOF: it failed */
        while (len < sizeof(line) - 1 && (n = read(p[0], line + len, sizeof(line) - 1 - len)) > 0) {
                len += (size_t) n;
                if (memchr(line, '\n', len))
                        break;
        }
        close(p[0]);
        line[len] = 0;
        if (strncmp(line, "ready ", 6) != 0 || !strchr(line, '\n'))
                return -EPROTO;
        *strchr(line, '\n') = 0;
        *ret_socket = strdup(line + 6);
        return *ret_socket ? 0 : -ENOMEM;
}

/* o's seccomp object made the recording one, with the agent at sock: compiled, and what the
 * runtime hands the listener to. */
static int use_recording(const struct zct_ctx *c, struct zct_oci *o, json_object *seccomp, const char *sock) {
        json_object *linux_ = zct_get(o->root, "linux"), *rec = NULL;
        _cleanup_free_ char *err = NULL;
        struct zp_profile *p = NULL;
        int r;

        r = rec_oci_recording(seccomp, sock, &rec, &err);
        if (r < 0)
                return zct_error(c, "annotation %s: %s", ZCT_TRACE_ANNOTATION, err ? err : zct_errstr(-r)), r;
        /* the recording object replaces the container's, and is what gets compiled */
        json_object_object_add(linux_, "seccomp", rec);
        r = zct_runc_filter_load(c, "config.json", rec, &p, o->seccomp_source, sizeof(o->seccomp_source), &err);
        if (r < 0)
                return zct_error(c, "annotation %s: linux.seccomp: %s", ZCT_TRACE_ANNOTATION,
                                 err ? err : zct_errstr(-r)),
                       r;
        zp_profile_free(o->seccomp);
        o->seccomp = p;
        o->listener_path = zct_get_str(rec, "listenerPath");
        o->listener_metadata = NULL;
        return 0;
}

int zct_record_annotation(const struct zct_ctx *c, struct zct_oci *o, const char *state_dir) {
        const char *value = zct_get_str(zct_get(o->root, "annotations"), ZCT_TRACE_ANNOTATION), *in, *out;
        json_object *seccomp = zct_get(zct_get(o->root, "linux"), "seccomp");
        _cleanup_free_ char *v = NULL, *sock = NULL, *link = NULL;
        int r;

        if (!value)
                return 0;
        v = strdup(value);
        if (!v)
                return -ENOMEM;
        if (zct_record_annotation_parse(v, &in, &out) < 0)
                return zct_error(c, "annotation %s: \"%s\" is not [if:/INPUT;][of:]/OUTPUT", ZCT_TRACE_ANNOTATION,
                                 value),
                       -EINVAL;
        if (!seccomp)
                return zct_error(c, "annotation %s: the container has no linux.seccomp to record with",
                                 ZCT_TRACE_ANNOTATION),
                       -EINVAL;
        r = start_agent(in, out, &sock);
        if (r < 0)
                return zct_error(c, "annotation %s: cannot start zygote-record's agent: %s", ZCT_TRACE_ANNOTATION,
                                 zct_errstr(-r)),
                       r;
        /* where an exec into the container finds the agent (zct_record_join) */
        if (asprintf(&link, "%s/" ZCT_RECORD_AGENT_LINK, state_dir) < 0)
                return -ENOMEM;
        if (symlink(sock, link) < 0)
                return zct_error(c, "annotation %s: %s: %s", ZCT_TRACE_ANNOTATION, link, zct_errstr(errno)), -errno;
        return use_recording(c, o, seccomp, sock);
}

int zct_record_join(const struct zct_ctx *c, struct zct_oci *o, const char *state_dir) {
        json_object *seccomp = zct_get(zct_get(o->root, "linux"), "seccomp");
        _cleanup_free_ char *link = NULL;
        char sock[PATH_MAX];
        ssize_t n;

        if (!zct_get_str(zct_get(o->root, "annotations"), ZCT_TRACE_ANNOTATION) || !seccomp)
                return 0;
        if (asprintf(&link, "%s/" ZCT_RECORD_AGENT_LINK, state_dir) < 0)
                return -ENOMEM;
        n = readlink(link, sock, sizeof(sock) - 1);
        /* no agent: recorded by zygoted's tracer (daemon/container-record.c), or not at all */
        if (n < 0 && errno == ENOENT)
                return 0;
        if (n < 0)
                return zct_error(c, "annotation %s: %s: %s", ZCT_TRACE_ANNOTATION, link, zct_errstr(errno)), -errno;
        sock[n] = 0;
        return use_recording(c, o, seccomp, sock);
}
