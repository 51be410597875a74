/* SPDX-License-Identifier: MIT */
/* The fake zygoted of the libzygote tests: the fixture (a connection on a socketpair) and the daemon's end. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd-util.h"
#include "testutil.h"
#include "zygote.h"

struct fixture {
        zy_conn *c;
        int srv; /* the fake daemon's end */
        int open_fds_before;
};

int setup(void **state);

int teardown(void **state);

/* A test against the fake daemon: *state is the fixture setup() made. */
#define fake_test(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* Sends one message (text + NUL) with fds on its first byte. */
void srv_send(int fd, const char *json, const int *fds, size_t n_fds);

void srv_sendf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct request {
        json_object *msg;
        json_object *params; /* borrowed from msg; NULL when absent */
        const char *method;
        int fds[80];
        size_t n_fds;
};

/* Reads the next message the library sent, one byte per read so that nothing of the next
 * message is taken; checks its framing (fds only with the first byte, one NUL at the end). */
void srv_recv(int fd, struct request *req);

void request_done(struct request *req);

void srv_expect_nothing(int fd);

/* Parameter checks. */
json_object *param(struct request *req, const char *key, json_type type);

void assert_param_string(struct request *req, const char *key, const char *value);

void assert_no_param(struct request *req, const char *key);

void assert_method(struct request *req, const char *method);

/* Receives the next call and checks its method and (unless NULL) its "id". */
void expect_call(int fd, const char *method, const char *id);

/* State of id, answered by the fake daemon with reply: the task it returns (to be freed). */
struct zy_task_info *state_answered(struct fixture *f, const char *id, const char *reply);

bool same_file(int a, int b);

bool is_cloexec(int fd);

/* A thread that writes a buffer one byte per write (fds on the first one), so that the library
 * sees the reply in as many pieces as the scheduler makes. */
struct dribble {
        int fd;
        const char *data;
        size_t len;
        int pass_fd;
        size_t chunk;
};

void *dribble_thread(void *p);
