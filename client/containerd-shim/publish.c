/* SPDX-License-Identifier: MIT */
/* Task events: Forward on containerd's ttrpc events service, else its publish command. */
#include "publish.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "github.com/containerd/containerd/api/services/ttrpc/events/v1/events.pb-c.h"
#include "fd-util.h"
#include "google/protobuf/any.pb-c.h"
#include "ttrpc.h"
#include "util.h"

#define EVENTS_SERVICE "containerd.services.events.ttrpc.v1.Events"
/* how long containerd may take to take one event */
#define FORWARD_TIMEOUT_SEC 5

extern char **environ;

static const char *publish_ttrpc, *publish_binary, *publish_address, *publish_ns;
static pthread_mutex_t publish_lock = PTHREAD_MUTEX_INITIALIZER;
/* the connection to the events service, under publish_lock */
static int events_fd = -EBADF;
static uint32_t events_stream = 1;

void zs_publish_init(const char *ttrpc_address, const char *binary, const char *address, const char *ns) {
        publish_ttrpc = ttrpc_address;
        publish_binary = binary;
        publish_address = address;
        publish_ns = ns;
}

/* The event as an Any; any->value.data is malloc'd. */
static int to_any(const ProtobufCMessage *event, Google__Protobuf__Any *any) {
        uint8_t *value = malloc(protobuf_c_message_get_packed_size(event) + 1);

        if (!value)
                return -ENOMEM;
        google__protobuf__any__init(any);
        any->value.len = protobuf_c_message_pack(event, value);
        any->value.data = value;
        any->type_url = (char *) event->descriptor->name;
        return 0;
}

static int pack(const ProtobufCMessage *m, uint8_t **ret, size_t *ret_n) {
        uint8_t *buf = malloc(protobuf_c_message_get_packed_size(m) + 1);

        if (!buf)
                return -ENOMEM;
        *ret_n = protobuf_c_message_pack(m, buf);
        *ret = buf;
        return 0;
}

static int connect_events(void) {
        struct sockaddr_un sa;
        struct timeval tv = { .tv_sec = FORWARD_TIMEOUT_SEC };
        _cleanup_close_ int fd = -EBADF;
        int r = zc_sockaddr_un(publish_ttrpc, &sa);

        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* a containerd that does not read must not hold the shim's calls for ever */
        if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        return TAKE_FD(fd);
}

/* One Forward call; a connection that failed is dropped (the next call makes a new one). */
static int forward(const char *topic, Google__Protobuf__Any *any) {
        Containerd__Services__Events__Ttrpc__V1__ForwardRequest fr =
                CONTAINERD__SERVICES__EVENTS__TTRPC__V1__FORWARD_REQUEST__INIT;
        Containerd__Services__Events__Ttrpc__V1__Envelope env = CONTAINERD__SERVICES__EVENTS__TTRPC__V1__ENVELOPE__INIT;
        Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
        _cleanup_free_ uint8_t *buf = NULL;
        struct timespec now;
        size_t n;
        int r;

        clock_gettime(CLOCK_REALTIME, &now);
        ts.seconds = now.tv_sec;
        ts.nanos = (int32_t) now.tv_nsec;
        env.timestamp = &ts;
        env.namespace_ = (char *) publish_ns;
        env.topic = (char *) topic;
        env.event = any;
        fr.envelope = &env;
        r = pack(&fr.base, &buf, &n);
        if (r < 0)
                return r;
        if (events_fd < 0) {
                events_fd = connect_events();
                if (events_fd < 0)
                        return events_fd;
        }
        r = zs_ttrpc_call(events_fd, events_stream, EVENTS_SERVICE, "Forward", buf, n, NULL);
        events_stream += 2;
        if (r < 0)
                events_fd = safe_close(events_fd);
        return r < 0 ? r : r == ZS_CODE_OK ? 0 : -EPROTO;
}

static int run_publish(const char *topic, const uint8_t *data, size_t n) {
        const char *argv[] = { publish_binary, "--address",   publish_address, "publish", "--topic",
                               topic,          "--namespace", publish_ns,      NULL };
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int r, status;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, p[0], 0);
        r = -posix_spawn(&pid, publish_binary, &fa, NULL, (char *const *) argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r < 0)
                return r;
        p[0] = safe_close(p[0]);
        r = zc_write_all(p[1], data, n);
        p[1] = safe_close(p[1]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (r < 0)
                return r;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPROTO;
}

static int publish_locked(const char *topic, Google__Protobuf__Any *any) {
        _cleanup_free_ uint8_t *data = NULL;
        size_t n;
        int r = -ENOTCONN;

        if (publish_ttrpc && *publish_ttrpc) {
                r = forward(topic, any);
                /* a connection containerd closed since the last event: once more on a new one */
                if (r == -EPIPE || r == -ECONNRESET)
                        r = forward(topic, any);
                if (r >= 0)
                        return 0;
        }
        if (!publish_binary || !*publish_binary)
                return r;
        r = pack(&any->base, &data, &n);
        if (r < 0)
                return r;
        return run_publish(topic, data, n);
}

int zs_publish(const char *topic, const ProtobufCMessage *event) {
        Google__Protobuf__Any any;
        int r;

        if ((!publish_ttrpc || !*publish_ttrpc) && (!publish_binary || !*publish_binary))
                return 0;
        r = to_any(event, &any);
        if (r < 0)
                return r;
        pthread_mutex_lock(&publish_lock);
        r = publish_locked(topic, &any);
        pthread_mutex_unlock(&publish_lock);
        free(any.value.data);
        return r;
}
