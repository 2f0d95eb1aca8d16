/* SPDX-License-Identifier: MIT */
/*
 * The plan layer (lib/plan/), for the layers above it (the reader, the
 * batch) and between plan.c and plan_deep.c. Internal to libsweep.
 */
#ifndef SWEEP_PLAN_LAYER_H
#define SWEEP_PLAN_LAYER_H

#include "walk.h"

/* --- plan (plan.c) --- */
/*
 * Open the file of a plan entry for reading the way the plan says it is
 * reached (beneath its root, or by path), adding O_NOFOLLOW unless the entry
 * was planned following a symlink. fd or -errno. The identity check is the
 * caller's.
 */
int sweep__plan_open_entry(const struct sweep_plan *p, const struct sweep_plan_entry *e, int flags);
/* The identity check: st (fstat of what was opened) is the regular file e planned (same device and inode, where known). */
bool sweep__plan_entry_is(const struct sweep_plan_entry *e, const struct sweep_stat *st);
/*
 * A group of a sorted plan (plan_group.c, DESIGN §3c): the files of a set
 * of disks that no other group's files share, read by a reader of its own
 * side by side with the other groups' readers.
 */
struct sweep__plan_group {
	size_t first, end; /* positions [first, end) in the plan's read order */
	uint32_t spindle;  /* names it (sweep__plan_group_name); UINT32_MAX: none */
	unsigned members;  /* disks answering its reads at once (a striped or mirrored set: all of them) */
};
/*
 * The groups of the plan's last sort, in read order: several when its files
 * lie on independent disks, one (the whole batch) otherwise, and for a
 * caller's NAME or NONE order; 0 when the plan is empty. Valid until the
 * plan is sorted again or cleared.
 */
size_t sweep__plan_groups(const struct sweep_plan *p, const struct sweep__plan_group **ret);
/* The name of a group's device ("sdb", "md0", "loop3"), "" when it has none. */
const char *sweep__plan_group_name(const struct sweep_plan *p, const struct sweep__plan_group *g);
/* sweep_plan_add() by path (AT_FDCWD), following a final symlink when follow (SWEEP_PLAN_FOLLOW). */
int sweep__plan_add_path(struct sweep_plan *p, const char *path, const struct sweep_stat *st, bool follow,
			 uint64_t cookie);

/*
 * sweep_plan_entry.flags, internal: planned without a stat (size from a hint
 * or unknown, no ctime), so the reader has nothing from planning time to
 * compare the file it opened with; it still checks identity (dev, ino, type).
 */
#define SWEEP__PLAN_UNSTATED 0x80000000u
/* sweep_plan_entry.flags, internal: not located yet; sweep_plan_sort() locates it (and clears this). */
#define SWEEP__PLAN_PENDING 0x40000000u
/* sweep_plan_entry.flags, internal, with PENDING: its raw inode agreed, its first extent is in a tree block. */
#define SWEEP__PLAN_DEEP 0x20000000u
/*
 * plan_deep.c: locate the DEEP entries v[0..n) (any order; reordered) by a
 * raw sweep on the plan's engine *dp (opened on root_fd's filesystem at the
 * first call, freed with sweep__plan_deep_free). Entries located lose
 * PENDING; the count of them.
 */
struct sweep__plan_deep;
size_t sweep__plan_deep_locate(struct sweep__plan_deep **dp, int root_fd, struct sweep_plan_entry **v, size_t n);
void sweep__plan_deep_free(struct sweep__plan_deep *d);
/*
 * Let the plan locate files reached beneath a root when it sorts, several at
 * a time, instead of one by one as they are added: for callers that sort
 * before they look at an entry's location (sweep_batch does).
 */
void sweep__plan_defer_locate(struct sweep_plan *p, bool on);
/* The profile of device dev, which files of the plan lie on (NULL: none do). */
const struct sweep_profile *sweep__plan_profile(const struct sweep_plan *p, uint64_t dev);
/* Whether the last sweep_plan_sort() found the batch in the page cache (SWEEP_PLAN_CACHE_CHECK). */
bool sweep__plan_cached(const struct sweep_plan *p);
/*
 * Whether the last sweep_plan_sort() found the batch's data in the page
 * cache: cached, or a sample of a batch with nothing to locate was
 * (SWEEP_PLAN_CACHE_CHECK). It only sizes the reader's ring.
 */
bool sweep__plan_warm(const struct sweep_plan *p);

/* Counts over every plan of the process, for tests and measurements. */
struct sweep__plan_stats {
	uint64_t hinted;  /* files placed by their walk hint, without opening them */
	uint64_t located; /* files opened for FIEMAP */
	uint64_t deep;    /* files located by a raw sweep of their extent-tree blocks (plan_deep.c) */
	uint64_t sized;   /* files taken unlocated and unstated, sized by their hint (SWEEP_WALK_HINT_FILES) */
};
void sweep__plan_totals(struct sweep__plan_stats *ret);
enum sweep__located_by { SWEEP__BY_HINT, SWEEP__BY_FIEMAP, SWEEP__BY_DEEP, SWEEP__SIZED_BY_HINT };
void sweep__plan_count(enum sweep__located_by how);

#endif
