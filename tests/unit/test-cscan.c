/* SPDX-License-Identifier: MIT */
/* The walk's C-SCAN queue: ascending from the head, wrapping once per sweep. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "walk_impl.h"
#include "../common/backend.h"

static uint64_t pop_key(struct sweep__cscan *q)
{
	void *item;
	uint64_t key;
	assert_int_equal(sweep__cscan_pop(q, &item, &key), 1);
	assert_int_equal((uint64_t)(uintptr_t)item, key);
	return key;
}

static void push(struct sweep__cscan *q, uint64_t key)
{
	assert_int_equal(sweep__cscan_push(q, key, (void *)(uintptr_t)key), 0);
}

static void test_ascending_first_sweep(void **state)
{
	(void)state;
	struct sweep__cscan *q = sweep__cscan_new();
	push(q, 50);
	push(q, 10);
	push(q, 30);
	assert_int_equal(sweep__cscan_len(q), 3);
	assert_int_equal(pop_key(q), 10);
	assert_int_equal(pop_key(q), 30);
	assert_int_equal(pop_key(q), 50);
	void *item = (void *)1;
	assert_int_equal(sweep__cscan_pop(q, &item, NULL), 0);
	assert_ptr_equal(item, (void *)1); /* untouched when empty */
	assert_int_equal(sweep__cscan_sweeps(q), 0);
	sweep__cscan_free(q);
}

/* Keys found behind the head wait for the next sweep; keys ahead are served in this one. */
static void test_wrap(void **state)
{
	(void)state;
	struct sweep__cscan *q = sweep__cscan_new();
	push(q, 100);
	push(q, 300);
	assert_int_equal(pop_key(q), 100);
	push(q, 50);  /* behind: next sweep */
	push(q, 200); /* ahead: this sweep */
	push(q, 100); /* at the head: this sweep */
	assert_int_equal(pop_key(q), 100);
	assert_int_equal(pop_key(q), 200);
	push(q, 150); /* behind now */
	push(q, 250);
	assert_int_equal(pop_key(q), 250);
	assert_int_equal(pop_key(q), 300);
	assert_int_equal(sweep__cscan_sweeps(q), 0);
	/* Wrap: the next sweep starts from the lowest waiting key. */
	assert_int_equal(pop_key(q), 50);
	assert_int_equal(sweep__cscan_sweeps(q), 1);
	push(q, 10); /* behind 50: a third sweep */
	assert_int_equal(pop_key(q), 150);
	assert_int_equal(pop_key(q), 10);
	assert_int_equal(sweep__cscan_sweeps(q), 2);
	assert_int_equal(sweep__cscan_len(q), 0);
	sweep__cscan_free(q);
}

/* Equal keys come out in the order they went in (deterministic walks). */
static void test_ties_fifo(void **state)
{
	(void)state;
	struct sweep__cscan *q = sweep__cscan_new();
	int a, b, c;
	assert_int_equal(sweep__cscan_push(q, 7, &a), 0);
	assert_int_equal(sweep__cscan_push(q, 7, &b), 0);
	assert_int_equal(sweep__cscan_push(q, 7, &c), 0);
	void *item;
	assert_int_equal(sweep__cscan_pop(q, &item, NULL), 1);
	assert_ptr_equal(item, &a);
	assert_int_equal(sweep__cscan_pop(q, &item, NULL), 1);
	assert_ptr_equal(item, &b);
	assert_int_equal(sweep__cscan_pop(q, &item, NULL), 1);
	assert_ptr_equal(item, &c);
	sweep__cscan_free(q);
}

/*
 * Random pushes and pops against the definition: every pop takes the
 * smallest waiting key at or above the head; only when there is none does
 * it wrap, to the smallest key of all.
 */
static void test_random_against_model(void **state)
{
	(void)state;
	enum { N = 5000 };
	uint64_t *model = calloc(N, sizeof(*model));
	size_t n = 0, pushed = 0, popped = 0;
	uint64_t head = 0, wraps = 0;
	struct sweep__cscan *q = sweep__cscan_new();
	srand(12345);
	while (popped < N) {
		if (pushed < N && (n == 0 || rand() % 3 != 0)) {
			uint64_t k = (uint64_t)(rand() % 1000);
			push(q, k);
			model[n++] = k;
			pushed++;
			continue;
		}
		size_t best = SIZE_MAX, low = SIZE_MAX;
		for (size_t i = 0; i < n; i++) {
			if (model[i] >= head && (best == SIZE_MAX || model[i] < model[best]))
				best = i;
			if (low == SIZE_MAX || model[i] < model[low])
				low = i;
		}
		if (best == SIZE_MAX) {
			best = low;
			wraps++;
		}
		uint64_t want = model[best];
		model[best] = model[--n];
		assert_int_equal(pop_key(q), want);
		head = want;
		popped++;
	}
	assert_int_equal(sweep__cscan_len(q), 0);
	assert_int_equal(sweep__cscan_sweeps(q), wraps);
	assert_true(wraps > 0); /* the test did exercise the wrap */
	sweep__cscan_free(q);
	free(model);
}

static void test_free_null(void **state)
{
	(void)state;
	assert_null(sweep__cscan_free(NULL));
}

int main(void)
{
	skip_unless_backend_usable();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ascending_first_sweep),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_ties_fifo),
		cmocka_unit_test(test_random_against_model),
		cmocka_unit_test(test_free_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
