/* SPDX-License-Identifier: MIT */
/* record/record-hold.c: which calls the listener holds (those that end the process's other
 * threads, while another thread runs), and when it lets them go (no other thread running, no
 * notification waiting). Runs in this process: its own threads are the "other threads". */

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>
#include <stdatomic.h>

#include "record-hold.h"
#include "testutil.h"

struct answered {
        unsigned n;
        uint64_t id;
        int error, listener;
};

static int note(int listener, uint64_t id, int error, void *u) {
        struct answered *a = u;

        a->n++;
        a->id = id;
        a->error = error;
        a->listener = listener;
        return 0;
}

static struct seccomp_notif notif(const char *name, pid_t pid, uint64_t id) {
        struct seccomp_notif n = { .id = id, .pid = (uint32_t) pid };

        n.data.arch = seccomp_arch_native();
        n.data.nr = seccomp_syscall_resolve_name(name);
        assert_true(n.data.nr >= 0);
        return n;
}

/* An atomic, not a volatile: gcc 12 with -fsanitize=bool (the asan lane) hoisted the volatile's
 * load out of the loop, and the spinner never stopped. */
static atomic_bool spin = true;

static void *spinner(void *arg) {
        (void) arg;
        while (atomic_load(&spin))
                ;
        return NULL;
}

static void test_what_is_held(void **state) {
        struct rec_hold h = {};
        int p[2];
        pthread_t t;

        (void) state;
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        /* one thread: nothing to wait for */
        struct seccomp_notif n = notif("exit_group", getpid(), 1);
        assert_false(rec_hold_take(&h, p[0], &n, 0));
        atomic_store(&spin, true);
        assert_int_equal(pthread_create(&t, NULL, spinner, NULL), 0);
        /* a thread out of the listener's sight (pid 0), a call that ends only itself: not held */
        n = notif("exit_group", 0, 2);
        assert_false(rec_hold_take(&h, p[0], &n, 0));
        n = notif("exit", getpid(), 3);
        assert_false(rec_hold_take(&h, p[0], &n, 0));
        n = notif("getpid", getpid(), 4);
        assert_false(rec_hold_take(&h, p[0], &n, 0));
        assert_int_equal(h.n, 0);
        assert_int_equal(rec_hold_timeout(&h), -1);
        /* exit_group, execve, execveat with another thread: held */
        n = notif("execve", getpid(), 5);
        assert_true(rec_hold_take(&h, p[0], &n, 0));
        n = notif("execveat", getpid(), 6);
        assert_true(rec_hold_take(&h, p[0], &n, 0));
        assert_int_equal(h.n, 2);
        assert_int_equal(rec_hold_timeout(&h), REC_HOLD_POLL_MS);
        atomic_store(&spin, false);
        assert_int_equal(pthread_join(t, NULL), 0);
        rec_hold_done(&h);
        close(p[0]);
        close(p[1]);
}

static void test_let_go_when_settled(void **state) {
        struct rec_hold h = {};
        struct answered a = {};
        int p[2];
        pthread_t t;

        (void) state;
        assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
        atomic_store(&spin, true);
        assert_int_equal(pthread_create(&t, NULL, spinner, NULL), 0);
        struct seccomp_notif n = notif("exit_group", getpid(), 42);
        assert_true(rec_hold_take(&h, p[0], &n, -ENOSYS));
        /* the other thread runs: kept, however often asked (well within REC_HOLD_MAX_MS) */
        for (int i = 0; i < 20; i++)
                assert_int_equal(rec_hold_release(&h, note, &a), 0);
        assert_int_equal(a.n, 0);
        assert_int_equal(h.n, 1);
        /* it has ended (gone, or a zombie: not running); a notification waits: read first */
        atomic_store(&spin, false);
        assert_int_equal(pthread_join(t, NULL), 0);
        assert_int_equal(write(p[1], "x", 1), 1);
        assert_int_equal(rec_hold_release(&h, note, &a), 0);
        assert_int_equal(a.n, 0);
        /* none waits: answered, once, as decided */
        char c;
        assert_int_equal(read(p[0], &c, 1), 1);
        assert_int_equal(rec_hold_release(&h, note, &a), 0);
        assert_int_equal(a.n, 1);
        assert_true(a.id == 42 && a.error == -ENOSYS && a.listener == p[0]);
        assert_int_equal(h.n, 0);
        assert_int_equal(rec_hold_release(&h, note, &a), 0);
        assert_int_equal(a.n, 1);
        rec_hold_done(&h);
        close(p[0]);
        close(p[1]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                tu_test(test_what_is_held),
                tu_test(test_let_go_when_settled),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
