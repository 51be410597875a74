/* SPDX-License-Identifier: MIT */
/*
 * container/cgroup-freezer.c alone: the v1 freezer's freeze over a fake freezer.state that stays
 * FREEZING as long as a test wants (as a loaded kernel leaves it): retried with runc's thaws and
 * pauses, bounded, and never left half frozen when it gives up or fails.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cgroup-freezer.h"

struct fake {
        int freezing_reads;  /* reads that answer FREEZING before FROZEN (-1: forever) */
        bool until_thawed;   /* FREEZING until a thaw was written (tasks caught mid-fork) */
        int fail_write_at;   /* the n-th FROZEN write fails (0: none) */
        int fail_read_errno; /* every read fails with it (0: none) */
        bool reads_thawed;   /* someone else thaws: every read answers THAWED */
        int frozen_writes, thawed_writes, reads;
        bool last_frozen;    /* what was written last */
        bool thawed_between; /* a thaw was written since the first FROZEN */
        unsigned long paused_usec;
};

static int fake_write(void *userdata, bool frozen) {
        struct fake *f = userdata;

        if (frozen && ++f->frozen_writes == f->fail_write_at)
                return -EIO;
        if (!frozen) {
                f->thawed_writes++;
                f->thawed_between = f->frozen_writes > 0;
        }
        f->last_frozen = frozen;
        return 0;
}

static int fake_read(void *userdata) {
        struct fake *f = userdata;

        f->reads++;
        if (f->fail_read_errno)
                return -f->fail_read_errno;
        if (f->reads_thawed)
                return ZCT_FREEZER_THAWED;
        if (f->until_thawed)
                return f->thawed_between ? ZCT_FREEZER_FROZEN : ZCT_FREEZER_FREEZING;
        if (f->freezing_reads < 0 || f->reads <= f->freezing_reads)
                return ZCT_FREEZER_FREEZING;
        return ZCT_FREEZER_FROZEN;
}

static void fake_pause(void *userdata, unsigned usec) {
        ((struct fake *) userdata)->paused_usec += usec;
}

static int freeze(struct fake *f) {
        return zct_freezer_v1_freeze(&(const struct zct_freezer_io){
                .write = fake_write, .read = fake_read, .pause = fake_pause, .userdata = f });
}

static void test_frozen_at_once(void **state) {
        struct fake f = { 0 };

        assert_int_equal(freeze(&f), 0);
        assert_int_equal(f.frozen_writes, 1);
        assert_int_equal(f.thawed_writes, 0);
        assert_true(f.last_frozen);
        assert_int_equal(f.paused_usec, 0);
}

static void test_freezing_for_a_while_is_retried(void **state) {
        /* FREEZING for 120 reads (longer than the old loop's yields took on a loaded machine) */
        struct fake f = { .freezing_reads = 120 };

        assert_int_equal(freeze(&f), 0);
        assert_int_equal(f.frozen_writes, 121);
        assert_true(f.last_frozen);
        /* runc's rhythm: a thaw and 10 ms every 50th try, 10 us before every 25th read */
        assert_int_equal(f.thawed_writes, 2);
        assert_int_equal(f.paused_usec, 2 * 10000 + 4 * 10);
}

static void test_freezing_until_a_thaw(void **state) {
        /* tasks caught mid-fork freeze only once thawed and frozen again: the 50th try does it */
        struct fake f = { .until_thawed = true };

        assert_int_equal(freeze(&f), 0);
        assert_int_equal(f.frozen_writes, 50);
        assert_int_equal(f.thawed_writes, 1);
        assert_true(f.last_frozen);
}

static void test_stuck_gives_up_thawed(void **state) {
        struct fake f = { .freezing_reads = -1 };

        assert_int_equal(freeze(&f), -EBUSY);
        assert_int_equal(f.frozen_writes, ZCT_FREEZER_V1_TRIES);
        /* bounded: about 0.2 s of pauses in all */
        assert_true(f.paused_usec <= 250000);
        /* and not left FREEZING: thawed last */
        assert_false(f.last_frozen);
}

static void test_failures_thaw(void **state) {
        struct fake w = { .freezing_reads = -1, .fail_write_at = 3 }, r = { .fail_read_errno = EACCES },
                    t = { .reads_thawed = true };

        assert_int_equal(freeze(&w), -EIO);
        assert_int_equal(w.frozen_writes, 3);
        assert_false(w.last_frozen);
        assert_int_equal(freeze(&r), -EACCES);
        assert_false(r.last_frozen);
        /* thawed by someone else meanwhile: not ours to fight, said as it is */
        assert_int_equal(freeze(&t), -EAGAIN);
        assert_int_equal(t.frozen_writes, 1);
        assert_false(t.last_frozen);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_frozen_at_once),        cmocka_unit_test(test_freezing_for_a_while_is_retried),
                cmocka_unit_test(test_freezing_until_a_thaw), cmocka_unit_test(test_stuck_gives_up_thawed),
                cmocka_unit_test(test_failures_thaw),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
