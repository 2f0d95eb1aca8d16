/* SPDX-License-Identifier: MIT */
/*
 * plan_group.c: a batch sorted across devices into groups, one per set of
 * disks that can be read at once (DESIGN §3c). Used by plan.c; the reader
 * asks the plan for the groups (sweep__plan_groups in internal.h).
 */
#ifndef SWEEP_PLAN_GROUP_H
#define SWEEP_PLAN_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sweep__devmap;
struct sweep__spindles;

/* Where one entry sorts: (group of spindle, k1, k2, k3, idx). */
struct sweep__sort_key {
	uint64_t k0;      /* set by sweep__grouping_sort: the group of spindle (the caller's where spindle is UINT32_MAX) */
	uint64_t k1;      /* the spindle again (offsets compare on one spindle only), or a device (inode order) */
	uint64_t k2;      /* the offset on the spindle, or the inode, or the insertion index */
	uint64_t k3;      /* the inode, as the tie-break of offsets */
	uint32_t spindle; /* the spindle the entry's group is decided by (UINT32_MAX: a group of its own) */
	uint32_t idx;     /* the entry's insertion index; keys[i].idx == i */
};

struct sweep__grouping;

struct sweep__grouping *sweep__grouping_new(void);
struct sweep__grouping *sweep__grouping_free(struct sweep__grouping *g);
/*
 * The map of device dev, made from fd (an open file on that filesystem)
 * the first time it is asked for with fd >= 0. *ret_known: whether the
 * device was met before (or now); the map itself may be NULL when it could
 * not be made.
 */
const struct sweep__devmap *sweep__grouping_map(struct sweep__grouping *g, uint64_t dev, int fd, bool *ret_known);
/* The spindles of the maps made so far (names, members). */
const struct sweep__spindles *sweep__grouping_spindles(const struct sweep__grouping *g);
/*
 * Sort keys[0..n) (k0 filled here from the spindles' groups among those the
 * keys name) into order[0..n), entry indexes, and record the groups: runs of
 * one k0. 0 or -ENOMEM (then no groups are recorded).
 */
int sweep__grouping_sort(struct sweep__grouping *g, struct sweep__sort_key *keys, size_t n, uint32_t *order);
/* The groups of the last sort (see sweep__plan_group in internal.h). */
struct sweep__plan_group;
size_t sweep__grouping_groups(const struct sweep__grouping *g, const struct sweep__plan_group **ret);
void sweep__grouping_clear(struct sweep__grouping *g);

#endif
