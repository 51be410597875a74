/* SPDX-License-Identifier: MIT */
/*
 * zygote-bench: measures, prints raw samples as JSON. See bench.h and docs/BENCHMARKS.md.
 *
 *   zygote-bench spawn --tier NAME=SOCKET... --profile FILE --oci FILE [--rounds N] [--warmup N]
 *                      [--max-seconds S]
 *   zygote-bench throughput --tier NAME=SOCKET... [--clients 1,4,16] [--rounds N] [--tasks N]
 *   zygote-bench cpu --tier NAME=SOCKET... --pid NAME=PID... [--threads 1,16] [--spawns N] [--rounds N]
 *   zygote-bench syscall --profile FILE [--rounds N] [--batches N] [--calls N]
 *   zygote-bench hops --tier NAME=SOCKET... [--rounds N] [--warmup N] [--handshake]
 *   zygote-bench compile PROFILE OUT.bpf
 *   zygote-bench same-profile PROFILE OCI.json
 *   zygote-bench status SOCKET
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zygote.h>

#include "bench.h"
#include "util.h"

int64_t bench_now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int bench_read_file(const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, cap = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        for (;;) {
                if (cap - size < 4096) {
                        size_t ncap = cap ? cap * 2 : 65536;
                        if (ncap > (64u << 20))
                                return -EFBIG;
                        char *n = realloc(buf, ncap + 1);
                        if (!n)
                                return -ENOMEM;
                        buf = n;
                        cap = ncap;
                }
                ssize_t k = read(fd, buf + size, cap - size);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                size += (size_t) k;
        }
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int bench_json_file(const char *path, json_object **ret) {
        _cleanup_free_ char *text = NULL;
        size_t size;
        int r;

        r = bench_read_file(path, &text, &size);
        if (r < 0) {
                fprintf(stderr, "zygote-bench: %s: %s\n", path, strerror(-r));
                return r;
        }
        json_tokener *tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        json_object *o = json_tokener_parse_ex(tok, text, (int) size);
        enum json_tokener_error e = json_tokener_get_error(tok);
        json_tokener_free(tok);
        if (!o || e != json_tokener_success) {
                fprintf(stderr, "zygote-bench: %s: not JSON: %s\n", path, json_tokener_error_desc(e));
                json_object_put(o);
                return -EINVAL;
        }
        *ret = o;
        return 0;
}

uint64_t bench_rand(uint64_t *state) {
        uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *state = x;
        return x;
}

void bench_shuffle(unsigned *order, size_t n, uint64_t *state) {
        for (size_t i = n; i > 1; i--) {
                size_t j = (size_t) (bench_rand(state) % i);
                unsigned t = order[i - 1];
                order[i - 1] = order[j];
                order[j] = t;
        }
}

void bench_push(json_object *array, double v) {
        /* Three decimals (ns for a value in us) is the clock's resolution: print no more. */
        char text[64];
        snprintf(text, sizeof(text), "%.3f", v);
        json_object_array_add(array, json_object_new_double_s(v, text));
}

pid_t bench_fork_measure(int p[2]) {
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid > 0)
                p[1] = safe_close(p[1]);
        return pid;
}

int bench_wait(pid_t pid, int *ret_status) {
        int st;

        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return negative_errno();
        if (ret_status)
                *ret_status = st;
        return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -ECHILD;
}

int bench_print(json_object *obj) {
        const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s || puts(s) < 0 || fflush(stdout) != 0)
                return -EIO;
        return 0;
}

int bench_devnull_stdio(const char *tool, posix_spawn_file_actions_t *fa) {
        int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

        if (fd < 0) {
                int r = -errno;

                fprintf(stderr, "%s: /dev/null: %s\n", tool, strerror(-r));
                return r;
        }
        posix_spawn_file_actions_init(fa);
        for (int i = 0; i < 3; i++)
                posix_spawn_file_actions_adddup2(fa, fd, i);
        return fd;
}

int bench_connect(const char *tool, const char *tier, const char *socket, struct zy_conn **ret) {
        int r = zy_connect(socket, ret);

        if (r < 0)
                fprintf(stderr, "%s: %s: connect %s: %s\n", tool, tier, socket, strerror(-r));
        return r;
}

int bench_split_pair(const char *arg, char **ret_name, const char **ret_value) {
        const char *eq = strchr(arg, '=');
        if (!eq || eq == arg || !eq[1])
                return -EINVAL;
        char *name = strndup(arg, (size_t) (eq - arg));
        if (!name)
                return -ENOMEM;
        *ret_name = name;
        *ret_value = eq + 1;
        return 0;
}

static void usage(FILE *f) {
        fputs("usage: zygote-bench spawn --tier NAME=SOCKET... --profile FILE --oci FILE [--rounds N] [--warmup N]\n"
              "                          [--max-seconds S]\n"
              "       zygote-bench throughput --tier NAME=SOCKET... [--clients 1,4,16] [--rounds N] [--tasks N]\n"
              "       zygote-bench cpu --tier NAME=SOCKET... --pid NAME=PID... [--threads 1,16] [--spawns N]\n"
              "       zygote-bench syscall --profile FILE [--rounds N] [--batches N] [--calls N]\n"
              "       zygote-bench hops --tier NAME=SOCKET... [--rounds N] [--warmup N] [--handshake]\n"
              "       zygote-bench compile PROFILE OUT.bpf\n"
              "       zygote-bench same-profile PROFILE OCI.json\n"
              "       zygote-bench status SOCKET\n"
              "Prints one JSON object with raw samples on stdout; tests/bench/run.sh is the front end.\n",
              f);
}

int main(int argc, char **argv) {
        static const struct {
                const char *name;
                int (*fn)(int argc, char **argv);
        } cmds[] = {
                { "spawn", bench_cmd_spawn },     { "throughput", bench_cmd_throughput },
                { "cpu", bench_cmd_cpu },         { "syscall", bench_cmd_syscall },
                { "compile", bench_cmd_compile }, { "same-profile", bench_cmd_same_profile },
                { "status", bench_cmd_status },   { "hops", bench_cmd_hops },
        };

        if (argc < 2) {
                usage(stderr);
                return 2;
        }
        if (streq(argv[1], "-h") || streq(argv[1], "--help")) {
                usage(stdout);
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(cmds); i++)
                if (streq(argv[1], cmds[i].name))
                        return cmds[i].fn(argc - 1, argv + 1);
        fprintf(stderr, "zygote-bench: unknown subcommand '%s'\n", argv[1]);
        usage(stderr);
        return 2;
}
