/* SPDX-License-Identifier: MIT */
/*
 * The plan's radix sort (lib/common/key_sort.c) against qsort with the plan's
 * comparison, (primary, secondary, insertion order): sorted by the
 * secondary key and then, stably, by the primary, as sweep_plan_sort does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"

struct want {
	uint64_t k1, k2;
	uint32_t idx;
};

static int cmp_want(const void *va, const void *vb)
{
	const struct want *a = va, *b = vb;
	if (a->k1 != b->k1)
		return a->k1 < b->k1 ? -1 : 1;
	if (a->k2 != b->k2)
		return a->k2 < b->k2 ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64*: reproducible, no libc state */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* n records whose keys are drawn by pick(); sorted both ways, they must agree record for record. */
static void check(size_t n, uint64_t seed, uint64_t (*pick)(uint64_t *, int))
{
	struct sweep__key_rec *v = calloc(n ? n : 1, sizeof(*v));
	struct want *want = calloc(n ? n : 1, sizeof(*want));
	assert_non_null(v);
	assert_non_null(want);
	for (size_t i = 0; i < n; i++) {
		want[i] = (struct want){ .k1 = pick(&seed, 1), .k2 = pick(&seed, 2), .idx = (uint32_t)i };
		v[i] = (struct sweep__key_rec){ .key = want[i].k2, .idx = (uint32_t)i };
	}
	assert_int_equal(sweep__key_sort(v, n), 0);
	for (size_t i = 0; i < n; i++)
		v[i].key = want[v[i].idx].k1;
	assert_int_equal(sweep__key_sort(v, n), 0);
	qsort(want, n, sizeof(*want), cmp_want);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v[i].idx, want[i].idx);
		assert_true(v[i].key == want[i].k1);
	}
	free(v);
	free(want);
}

static uint64_t full(uint64_t *s, int k)
{
	(void)k;
	return rnd(s);
}

/* Few distinct values: most of the order is the tie-breaks. */
static uint64_t dupes(uint64_t *s, int k)
{
	return rnd(s) % (k == 1 ? 7 : 3);
}

/* Block addresses and inode numbers as a plan has them: small, high bytes zero, "no location" at the top. */
static uint64_t plan_like(uint64_t *s, int k)
{
	uint64_t r = rnd(s);
	if (k == 1)
		return r % 50 == 0 ? UINT64_MAX : (r >> 8) % (8ull << 30);
	return (r >> 8) % 1200000;
}

static uint64_t same(uint64_t *s, int k)
{
	(void)s;
	return k == 1 ? 0x0123456789abcdefull : 42;
}

static void test_agrees_with_qsort(void **state)
{
	(void)state;
	uint64_t (*picks[])(uint64_t *, int) = { full, dupes, plan_like, same };
	size_t sizes[] = { 0, 1, 2, 3, 255, 256, 257, 1000, 65537 };
	for (size_t p = 0; p < sizeof(picks) / sizeof(*picks); p++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++)
			check(sizes[i], 0x9e3779b97f4a7c15ull + p * 31 + i, picks[p]);
}

/* Keys already in order and in reverse order: both common in a walk's batches. */
static void test_sorted_and_reversed(void **state)
{
	(void)state;
	size_t n = 5000;
	struct sweep__key_rec *v = calloc(n, sizeof(*v));
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = (struct sweep__key_rec){ .key = (n - i) * 4096, .idx = (uint32_t)i };
	assert_int_equal(sweep__key_sort(v, n), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(v[i].idx, n - 1 - i);
	assert_int_equal(sweep__key_sort(v, n), 0); /* sorted input stays as it is */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(v[i].idx, n - 1 - i);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agrees_with_qsort),
		cmocka_unit_test(test_sorted_and_reversed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
