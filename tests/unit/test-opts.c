/*
 * The one rule for size-versioned structs (lib/common/internal.h sweep__opts_copy),
 * through every public function that takes one: a shorter (older) struct is
 * accepted with its missing fields zero, a longer (newer) one only when its
 * extra bytes are zero (-E2BIG otherwise), unknown flag bits are refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "../common/backend.h"

/* A caller built against a newer header: the struct, then fields this library does not know. */
#define NEWER(type) struct { type o; uint64_t extra[2]; }

static void test_plan(void **state)
{
	(void)state;
	struct sweep_plan *p = NULL;
	struct sweep_plan_opts old = { .size = offsetof(struct sweep_plan_opts, max_entries) };
	assert_int_equal(sweep_plan_new(&old, &p), 0);
	p = sweep_plan_free(p);
	NEWER(struct sweep_plan_opts) big = { .o.size = sizeof(big) };
	assert_int_equal(sweep_plan_new(&big.o, &p), 0);
	p = sweep_plan_free(p);
	big.extra[1] = 1;
	assert_int_equal(sweep_plan_new(&big.o, &p), -E2BIG);
	struct sweep_plan_opts bad = { .size = sizeof(bad), .flags = 0x80000000u };
	assert_int_equal(sweep_plan_new(&bad, &p), -EINVAL);
	struct sweep_plan_opts tiny = { .size = 4 };
	assert_int_equal(sweep_plan_new(&tiny, &p), -EINVAL);
	assert_null(p);
}

static void test_reader(void **state)
{
	(void)state;
	struct sweep_reader *r = NULL;
	struct sweep_reader_opts old = { .size = offsetof(struct sweep_reader_opts, queue_depth) };
	assert_int_equal(sweep_reader_new(&old, &r), 0);
	r = sweep_reader_free(r);
	NEWER(struct sweep_reader_opts) big = { .o.size = sizeof(big) };
	assert_int_equal(sweep_reader_new(&big.o, &r), 0);
	big.extra[0] = 7;
	r = sweep_reader_free(r);
	assert_int_equal(sweep_reader_new(&big.o, &r), -E2BIG);
	struct sweep_reader_opts bad = { .size = sizeof(bad), .flags = 0x1000u };
	assert_int_equal(sweep_reader_new(&bad, &r), -EINVAL);
	/* the stats: a shorter struct gets the fields it has */
	assert_int_equal(sweep_reader_new(NULL, &r), 0);
	struct sweep_read_stats st;
	memset(&st, 0xff, sizeof(st));
	st.size = offsetof(struct sweep_read_stats, failed);
	assert_int_equal(sweep_reader_stats(r, &st), 0);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.failed, UINT64_MAX); /* not written: past its size */
	sweep_reader_free(r);
}

static void test_walk(void **state)
{
	(void)state;
	const char *roots[1] = { "/nonexistent-sweep-opts-test" };
	struct sweep_walk_opts old = { .size = offsetof(struct sweep_walk_opts, ctx) + sizeof(void *) };
	assert_int_equal(sweep_walk(roots, 1, &old), 1); /* one error: the root is missing */
	NEWER(struct sweep_walk_opts) big = { .o.size = sizeof(big) };
	assert_int_equal(sweep_walk(roots, 1, &big.o), 1);
	big.extra[1] = 9;
	assert_int_equal(sweep_walk(roots, 1, &big.o), -E2BIG);
	struct sweep_walk_opts bad = { .size = sizeof(bad), .flags = 0x4000u };
	assert_int_equal(sweep_walk(roots, 1, &bad), -EINVAL);
}

static void test_copy(void **state)
{
	(void)state;
	struct sweep_copy *c = NULL;
	struct sweep_copy_opts old = { .size = offsetof(struct sweep_copy_opts, reflink) };
	assert_int_equal(sweep_copy_new(&old, &c), 0);
	c = sweep_copy_free(c);
	NEWER(struct sweep_copy_opts) big = { .o.size = sizeof(big) };
	assert_int_equal(sweep_copy_new(&big.o, &c), 0);
	c = sweep_copy_free(c);
	big.extra[0] = 1;
	assert_int_equal(sweep_copy_new(&big.o, &c), -E2BIG);
	struct sweep_copy_opts bad = { .size = sizeof(bad), .flags = 0x80000u };
	assert_int_equal(sweep_copy_new(&bad, &c), -EINVAL);
	struct sweep_copy_opts badp = { .size = sizeof(badp), .preserve = 0x20u };
	assert_int_equal(sweep_copy_new(&badp, &c), -EINVAL);
	assert_null(c);
}

int main(void)
{
	skip_unless_backend_usable();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_copy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
