/* SPDX-License-Identifier: MIT */
/* Task events, through containerd's publish command. */
#include "publish.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "google/protobuf/any.pb-c.h"
#include "util.h"

extern char **environ;

static const char *publish_binary, *publish_address, *publish_ns;
static pthread_mutex_t publish_lock = PTHREAD_MUTEX_INITIALIZER;

void zs_publish_init(const char *binary, const char *address, const char *ns) {
        publish_binary = binary;
        publish_address = address;
        publish_ns = ns;
}

static int encode(const ProtobufCMessage *event, uint8_t **ret, size_t *ret_n) {
        Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
        _cleanup_free_ uint8_t *value = NULL, *buf = NULL;
        size_t n;

        value = malloc(protobuf_c_message_get_packed_size(event) + 1);
        if (!value)
                return -ENOMEM;
        any.value.len = protobuf_c_message_pack(event, value);
        any.value.data = value;
        any.type_url = (char *) event->descriptor->name;
        n = google__protobuf__any__get_packed_size(&any);
        buf = malloc(n + 1);
        if (!buf)
                return -ENOMEM;
        *ret_n = google__protobuf__any__pack(&any, buf);
        *ret = TAKE_PTR(buf);
        return 0;
}

static int write_all(int fd, const uint8_t *buf, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, buf, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                buf += k;
                n -= (size_t) k;
        }
        return 0;
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
        r = write_all(p[1], data, n);
        p[1] = safe_close(p[1]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (r < 0)
                return r;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPROTO;
}

int zs_publish(const char *topic, const ProtobufCMessage *event) {
        _cleanup_free_ uint8_t *data = NULL;
        size_t n;
        int r;

        if (!publish_binary || !*publish_binary)
                return 0;
        r = encode(event, &data, &n);
        if (r < 0)
                return r;
        pthread_mutex_lock(&publish_lock);
        r = run_publish(topic, data, n);
        pthread_mutex_unlock(&publish_lock);
        return r;
}
