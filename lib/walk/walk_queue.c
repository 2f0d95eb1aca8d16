/* SPDX-License-Identifier: MIT */
/*
 * The C-SCAN elevator of the walk (seed: userspace-io-scheduling-tar §3,
 * Listing 1). Directories are discovered while the walk runs, so they cannot
 * be pre-sorted: each one waits here under a key (inode number or first
 * physical block). The queue serves keys in ascending order from the last key
 * served; a key found below that position waits for the next sweep, so the
 * head moves one way and wraps once per sweep instead of seeking back.
 *
 * Two binary min-heaps: the current sweep and the next one. Ties keep their
 * insertion order (seq), so the walk is deterministic.
 */
#include <errno.h>
#include <stdlib.h>

#include "walk_impl.h"

struct node {
	uint64_t key;
	uint64_t seq;
	void *item;
};

struct heap {
	struct node *v;
	size_t n, cap;
};

struct sweep__cscan {
	struct heap cur, next;
	uint64_t pos;    /* last key served */
	uint64_t seq;
	uint64_t sweeps; /* wraps so far */
};

static int less(const struct node *a, const struct node *b)
{
	return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static int heap_push(struct heap *h, struct node nd)
{
	if (sweep__grow(&h->v, &h->cap, h->n + 1, sizeof(*h->v), 64) < 0)
		return -ENOMEM;
	size_t i = h->n++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!less(&nd, &h->v[p]))
			break;
		h->v[i] = h->v[p];
		i = p;
	}
	h->v[i] = nd;
	return 0;
}

static struct node heap_pop(struct heap *h)
{
	struct node top = h->v[0], last = h->v[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && less(&h->v[c + 1], &h->v[c]))
			c++;
		if (!less(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

struct sweep__cscan *sweep__cscan_new(void)
{
	return calloc(1, sizeof(struct sweep__cscan));
}

struct sweep__cscan *sweep__cscan_free(struct sweep__cscan *q)
{
	if (q) {
		free(q->cur.v);
		free(q->next.v);
		free(q);
	}
	return NULL;
}

int sweep__cscan_push(struct sweep__cscan *q, uint64_t key, void *item)
{
	struct node nd = { .key = key, .seq = q->seq++, .item = item };
	/* Behind the head: wait for the next sweep rather than seek back. */
	return heap_push(key >= q->pos ? &q->cur : &q->next, nd);
}

int sweep__cscan_pop(struct sweep__cscan *q, void **ret_item, uint64_t *ret_key)
{
	if (q->cur.n == 0) {
		if (q->next.n == 0)
			return 0;
		struct heap t = q->cur;
		q->cur = q->next;
		q->next = t;
		q->sweeps++;
	}
	struct node nd = heap_pop(&q->cur);
	q->pos = nd.key;
	*ret_item = nd.item;
	if (ret_key)
		*ret_key = nd.key;
	return 1;
}

size_t sweep__cscan_peek(struct sweep__cscan *q, void **items, size_t max)
{
	struct node taken[64];
	size_t n = 0;
	if (max > sizeof(taken) / sizeof(taken[0]))
		max = sizeof(taken) / sizeof(taken[0]);
	/* Taken off in order and put back: the same nodes (key and seq), so pop's order is unchanged. */
	while (n < max && q->cur.n > 0)
		taken[n++] = heap_pop(&q->cur);
	for (size_t i = 0; i < n; i++) {
		items[i] = taken[i].item;
		heap_push(&q->cur, taken[i]); /* cannot fail: the room was there */
	}
	return n;
}

size_t sweep__cscan_len(const struct sweep__cscan *q)
{
	return q->cur.n + q->next.n;
}

uint64_t sweep__cscan_sweeps(const struct sweep__cscan *q)
{
	return q->sweeps;
}
