/* SPDX-License-Identifier: MIT */
/*
 * Requests bucketed by position (cylinder on a disk). Each bucket is a FIFO
 * list; a two-level bitmap finds the next non-empty bucket in either
 * direction in a few word scans, so SSF, SCAN, C-SCAN and the pruned STF
 * search stay cheap at queue lengths of thousands.
 */
#include <errno.h>
#include <stdlib.h>

#include "sim_internal.h"

int sweep__posq_init(struct posq *q, uint64_t nkeys)
{
	*q = (struct posq){ .nkeys = nkeys ? nkeys : 1 };
	q->nwords0 = (q->nkeys + 63) / 64;
	q->nwords1 = (q->nwords0 + 63) / 64;
	q->head = calloc(q->nkeys, sizeof(*q->head));
	q->tail = calloc(q->nkeys, sizeof(*q->tail));
	q->bits0 = calloc(q->nwords0, sizeof(uint64_t));
	q->bits1 = calloc(q->nwords1, sizeof(uint64_t));
	if (!q->head || !q->tail || !q->bits0 || !q->bits1) {
		sweep__posq_fini(q);
		return -ENOMEM;
	}
	return 0;
}

void sweep__posq_fini(struct posq *q)
{
	free(q->head);
	free(q->tail);
	free(q->bits0);
	free(q->bits1);
	*q = (struct posq){ 0 };
}

void sweep__posq_insert(struct posq *q, struct sim_req *r)
{
	uint64_t k = r->key;
	r->pnext = NULL;
	r->pprev = q->tail[k];
	if (q->tail[k])
		q->tail[k]->pnext = r;
	else
		q->head[k] = r;
	q->tail[k] = r;
	q->bits0[k / 64] |= 1ull << (k % 64);
	q->bits1[k / 4096] |= 1ull << ((k / 64) % 64);
	q->count++;
}

void sweep__posq_remove(struct posq *q, struct sim_req *r)
{
	uint64_t k = r->key;
	if (r->pprev)
		r->pprev->pnext = r->pnext;
	else
		q->head[k] = r->pnext;
	if (r->pnext)
		r->pnext->pprev = r->pprev;
	else
		q->tail[k] = r->pprev;
	r->pprev = r->pnext = NULL;
	if (!q->head[k]) {
		q->bits0[k / 64] &= ~(1ull << (k % 64));
		if (!q->bits0[k / 64])
			q->bits1[k / 4096] &= ~(1ull << ((k / 64) % 64));
	}
	q->count--;
}

uint64_t sweep__posq_next(const struct posq *q, uint64_t key)
{
	if (key >= q->nkeys || !q->count)
		return NONE64;
	uint64_t w = key / 64;
	uint64_t m = q->bits0[w] & (~0ull << (key % 64));
	if (m)
		return w * 64 + (uint64_t)__builtin_ctzll(m);
	/* next non-empty word after w, through the summary */
	uint64_t w1 = (w + 1) / 64, bit = (w + 1) % 64;
	while (w1 < q->nwords1) {
		uint64_t s = bit < 64 ? q->bits1[w1] & (~0ull << bit) : 0;
		if (s) {
			uint64_t w0 = w1 * 64 + (uint64_t)__builtin_ctzll(s);
			return w0 * 64 + (uint64_t)__builtin_ctzll(q->bits0[w0]);
		}
		w1++;
		bit = 0;
	}
	return NONE64;
}

uint64_t sweep__posq_prev(const struct posq *q, uint64_t key)
{
	if (!q->count)
		return NONE64;
	if (key >= q->nkeys)
		key = q->nkeys - 1;
	uint64_t w = key / 64;
	uint64_t sh = 63 - key % 64;
	uint64_t m = q->bits0[w] & (~0ull >> sh);
	if (m)
		return w * 64 + 63 - (uint64_t)__builtin_clzll(m);
	if (w == 0)
		return NONE64;
	/* previous non-empty word before w */
	int64_t w1 = (int64_t)((w - 1) / 64);
	uint64_t top = (w - 1) % 64;
	while (w1 >= 0) {
		uint64_t s = q->bits1[w1] & (~0ull >> (63 - top));
		if (s) {
			uint64_t w0 = (uint64_t)w1 * 64 + 63 - (uint64_t)__builtin_clzll(s);
			return w0 * 64 + 63 - (uint64_t)__builtin_clzll(q->bits0[w0]);
		}
		w1--;
		top = 63;
	}
	return NONE64;
}
