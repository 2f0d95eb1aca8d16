/* SPDX-License-Identifier: MIT */
/*
 * The plan's files not located yet when a batch is sorted, by one raw sweep
 * over their inodes (cached by the walk by then) and one sorted sweep per
 * extent-tree level, on the plan's own engine, instead of an open + FIEMAP +
 * close each on threads, in no order. Those are the files whose first
 * extent lies in a tree block the walk did not read (SWEEP__PLAN_DEEP: the
 * walk reads inodes a directory at a time without their tree blocks, which
 * lie near each file's data, all over the disk), and on ext4 every file
 * added without the walk's hint (sweep-sync adds its files after comparing
 * them with the destination). On the fragmenting recipe's ext4 image,
 * sweep-sync's first copy read those tree blocks one FIEMAP at a time:
 * 7,000 seeks, 60.4 s of the HDD model against sweep-cp's 36.6 s. Not on
 * xfs unless the walk read raw there too (DEEP): xfs reads its metadata
 * through its own cache, so the engine's reads would be read twice.
 *
 * Only a sort key comes from the device, as for any hint: the reader opens
 * each file beneath its root and checks its identity. A hint that does not
 * agree with the entry (another inode, another size) leaves the entry
 * pending: the FIEMAP way locates it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plan.h"

/* Inodes whose hints are read at once (48 bytes each). */
#define DEEP_SLICE 65536u

struct sweep__plan_deep {
	struct sweep__metascan *m;
	uint64_t dev;
	bool tried; /* the engine was opened, or could not be */
};

void sweep__plan_deep_free(struct sweep__plan_deep *d)
{
	if (d) {
		sweep__metascan_free(d->m);
		free(d);
	}
}

static int cmp_by_ino(const void *a, const void *b)
{
	const struct sweep_plan_entry *x = *(struct sweep_plan_entry *const *)a;
	const struct sweep_plan_entry *y = *(struct sweep_plan_entry *const *)b;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

size_t sweep__plan_deep_locate(struct sweep__plan_deep **dp, int root_fd, struct sweep_plan_entry **v, size_t n)
{
	struct sweep__plan_deep *d = *dp;
	struct stat st;

	if (!d && !(d = *dp = calloc(1, sizeof(*d))))
		return 0;
	if (!d->tried) {
		d->tried = true;
		if (fstat(root_fd, &st) == 0 && sweep__metascan_open(root_fd, 0, &d->m) == 0)
			d->dev = (uint64_t)st.st_dev;
		else
			d->m = NULL;
	}
	if (!d->m || n == 0)
		return 0;
	/*
	 * This device's entries, by inode; on a format with a cache of its own
	 * (xfs) only those the walk located raw: the others' inodes would be
	 * read twice.
	 */
	bool all = !sweep__metascan_format_of(d->m)->own_cache;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool deep = (v[i]->flags & SWEEP__PLAN_DEEP) != 0;
		v[i]->flags &= ~SWEEP__PLAN_DEEP;
		if (v[i]->dev == d->dev && (all || deep))
			v[k++] = v[i];
	}
	n = k;
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_by_ino);
	/* A slice at a time, so that the hints cost a bounded buffer however large the batch. */
	uint64_t *inos = malloc(DEEP_SLICE * sizeof(*inos));
	struct sweep__inode_hint *h = malloc(DEEP_SLICE * sizeof(*h));
	size_t located = 0;
	for (size_t at = 0; inos && h && at < n; at += DEEP_SLICE) {
		size_t k = n - at < DEEP_SLICE ? n - at : DEEP_SLICE;
		for (size_t i = 0; i < k; i++)
			inos[i] = v[at + i]->ino;
		if (sweep__metascan_inodes(d->m, inos, k, h) <= 0)
			continue;
		for (size_t i = 0; i < k; i++) {
			struct sweep_plan_entry *e = v[at + i];
			bool unstated = (e->flags & SWEEP__PLAN_UNSTATED) != 0;
			if (!(h[i].flags & SWEEP__HINT_VALID) || !(h[i].flags & SWEEP__HINT_PHYS) || !S_ISREG(h[i].mode) ||
			    h[i].ino != e->ino || (!unstated && h[i].size != e->size))
				continue;
			e->phys = h[i].phys;
			if (unstated)
				e->size = h[i].size; /* for the batch's byte counts, as a walk's hint gives it; never output */
			e->flags &= ~SWEEP_PLAN_UNSIZED;
			e->flags &= ~SWEEP__PLAN_PENDING;
			sweep__plan_count(SWEEP__BY_DEEP);
			located++;
		}
	}
	free(inos);
	free(h);
	return located;
}
