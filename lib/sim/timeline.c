/* SPDX-License-Identifier: MIT */
/*
 * A shared resource's bookings (an SSD channel, the host link): busy
 * intervals, sorted and disjoint. A new transfer takes the first gap long
 * enough at or after the time it is ready, so a request held up behind one
 * busy plane does not hold up later requests that could use the channel
 * before it (a single "free at" time did: issue 13).
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/*
 * At most this many bookings are kept (issue 27: a trace of whole-device
 * writes booked a channel interval per page into the future, and 200 of
 * them took 3.9 GB). Past it the smallest gaps are given up: the intervals
 * on both sides of each become one, so the resource looks busy a little
 * longer than it is, never less.
 */
#define TL_CAP 4096

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* About halve the bookings by filling the smaller half of the gaps between them (median of a sample). */
static void tl_coalesce(struct timeline *tl)
{
	size_t m = tl->n - tl->head;
	double gap[63];
	size_t k = 0;
	for (size_t i = 0; i + 1 < m && k < 63; i += (m - 1) / 63 + 1)
		gap[k++] = tl->iv[tl->head + i + 1].s - tl->iv[tl->head + i].e;
	qsort(gap, k, sizeof(*gap), cmp_double);
	double cut = gap[k / 2];
	size_t w = tl->head;
	for (size_t i = tl->head + 1; i < tl->n; i++) {
		if (tl->iv[i].s - tl->iv[w].e <= cut)
			tl->iv[w].e = tl->iv[i].e;
		else
			tl->iv[++w] = tl->iv[i];
	}
	tl->n = w + 1;
}

double sweep__tl_book(struct timeline *tl, double t, double d)
{
	/* first interval that ends after t */
	size_t lo = tl->head, hi = tl->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tl->iv[mid].e <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t i = lo;
	double at = t;
	while (i < tl->n && at + d > tl->iv[i].s) {
		if (tl->iv[i].e > at)
			at = tl->iv[i].e;
		i++;
	}
	/* [at, at + d) fits before interval i: join a neighbour it touches, else insert */
	if (i > tl->head && tl->iv[i - 1].e >= at) {
		tl->iv[i - 1].e = at + d;
		if (i < tl->n && tl->iv[i].s <= at + d) {
			tl->iv[i - 1].e = tl->iv[i].e;
			memmove(tl->iv + i, tl->iv + i + 1, (tl->n - i - 1) * sizeof(*tl->iv));
			tl->n--;
		}
		return at;
	}
	if (i < tl->n && tl->iv[i].s <= at + d) {
		tl->iv[i].s = at;
		return at;
	}
	if (sweep__grow(&tl->iv, &tl->cap, tl->n + 1, sizeof(*tl->iv), 16))
		return at; /* out of memory: the transfer still happens, unbooked */
	memmove(tl->iv + i + 1, tl->iv + i, (tl->n - i) * sizeof(*tl->iv));
	tl->iv[i] = (struct interval){ at, at + d };
	tl->n++;
	if (tl->n - tl->head > TL_CAP)
		tl_coalesce(tl);
	return at;
}

void sweep__tl_trim(struct timeline *tl, double t)
{
	while (tl->head < tl->n && tl->iv[tl->head].e <= t)
		tl->head++;
	if (tl->head > 64 && tl->head * 2 > tl->n) {
		memmove(tl->iv, tl->iv + tl->head, (tl->n - tl->head) * sizeof(*tl->iv));
		tl->n -= tl->head;
		tl->head = 0;
	}
}

void sweep__tl_fini(struct timeline *tl)
{
	free(tl->iv);
	memset(tl, 0, sizeof(*tl));
}
