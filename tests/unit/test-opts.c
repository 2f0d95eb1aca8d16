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

/*
 * The same rule for what the library fills, through every function that
 * fills a sized struct: a shorter struct gets the fields it has room for
 * (nothing past its size is written), a longer one is filled when its tail
 * is zero (which stays zero) and refused otherwise, a size never set (over
 * a page) is refused, and the caller's size is never rewritten.
 */
typedef int (*fill_fn)(void *obj, void *ret);
static int fill_reader(void *o, void *r) { return sweep_reader_stats(o, r); }
static int fill_batch(void *o, void *r) { return sweep_batch_stats(o, r); }
static int fill_copy(void *o, void *r) { return sweep_copy_stats(o, r); }
static int fill_fsinfo(void *o, void *r) { (void)o; return sweep_fsinfo_path("/proc", r); }

static void out_rule(fill_fn fill, void *obj, size_t full, size_t shorter)
{
	unsigned char buf[1024];
	size_t n;
	assert_true(full + 16 <= sizeof(buf) && shorter < full);

	/* exactly this library's size */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &full, sizeof(full));
	assert_int_equal(fill(obj, buf), 0);
	memcpy(&n, buf, sizeof(n));
	assert_int_equal(n, full);
	/* shorter: past its size, nothing written; its size kept */
	memset(buf, 0xa5, sizeof(buf));
	memcpy(buf, &shorter, sizeof(shorter));
	assert_int_equal(fill(obj, buf), 0);
	memcpy(&n, buf, sizeof(n));
	assert_int_equal(n, shorter);
	for (size_t i = shorter; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xa5);
	/* longer with a zero tail: filled, the tail and the size as they were */
	size_t longer = full + 16;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &longer, sizeof(longer));
	assert_int_equal(fill(obj, buf), 0);
	memcpy(&n, buf, sizeof(n));
	assert_int_equal(n, longer);
	for (size_t i = full; i < longer; i++)
		assert_int_equal(buf[i], 0);
	/* longer with something in the tail: refused, nothing written */
	buf[full + 3] = 1;
	memset(buf + sizeof(size_t), 0x77, full - sizeof(size_t));
	assert_int_equal(fill(obj, buf), -E2BIG);
	for (size_t i = sizeof(size_t); i < full; i++)
		assert_int_equal(buf[i], 0x77);
	/* a size never set */
	size_t junk = (size_t)1 << 40;
	memcpy(buf, &junk, sizeof(junk));
	assert_int_equal(fill(obj, buf), -E2BIG);
	/* no size at all */
	assert_int_equal(fill(obj, NULL), -EINVAL);
}

static void test_filled(void **state)
{
	(void)state;
	struct sweep_reader *r = NULL;
	struct sweep_batch *b = NULL;
	struct sweep_copy *c = NULL;
	struct sweep_batch_opts bo = { .size = sizeof(bo) };
	struct sweep_copy_opts co = { .size = sizeof(co) };

	assert_int_equal(sweep_reader_new(NULL, &r), 0);
	assert_int_equal(sweep_batch_new(&bo, &b), 0);
	assert_int_equal(sweep_copy_new(&co, &c), 0);
	out_rule(fill_reader, r, sizeof(struct sweep_read_stats), offsetof(struct sweep_read_stats, failed));
	out_rule(fill_batch, b, sizeof(struct sweep_batch_stats), offsetof(struct sweep_batch_stats, plan_memory_sum));
	out_rule(fill_copy, c, sizeof(struct sweep_copy_stats), offsetof(struct sweep_copy_stats, bytes));
	out_rule(fill_fsinfo, NULL, sizeof(struct sweep_fsinfo), offsetof(struct sweep_fsinfo, profile));
	sweep_copy_free(c);
	sweep_batch_free(b);
	sweep_reader_free(r);
}

int main(void)
{
	skip_unless_backend_usable();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_filled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
