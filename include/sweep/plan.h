/* SPDX-License-Identifier: MIT */
/*
 * plan: a batch of files sorted into one sweep. Memory is bounded: the
 * caller sets limits, sweep_plan_add() says when the batch is full, and the
 * caller then sorts, reads and clears it (the seed's flush()).
 */
#ifndef SWEEP_PLAN_H
#define SWEEP_PLAN_H

#include <sys/stat.h>
#include <sweep/common.h>
#include <sweep/extent.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sweep_plan_opts.flags */
#define SWEEP_PLAN_EXTENTS 0x1u /* keep every extent of each file (for trace export), not only the first */

struct sweep_plan_opts {
	size_t size;            /* sizeof(struct sweep_plan_opts) */
	enum sweep_order order; /* AUTO = PHYSICAL where the filesystem allows it, else INODE */
	size_t max_entries;     /* flush bound on entries, 0 = none */
	size_t max_bytes;       /* flush bound on memory used by the plan, 0 = none */
	unsigned flags;
};

/* One planned file. Read-only for the caller; valid until the plan is cleared. */
struct sweep_plan_entry {
	const char *path;        /* NUL-terminated path to open */
	uint64_t dev;
	uint64_t ino;
	uint64_t size;           /* st_size when planned */
	uint64_t phys;           /* first physical byte, SWEEP_NO_PHYS when unknown */
	int64_t ctime_sec;       /* st_ctim when planned: the reader uses it to see changes */
	uint32_t ctime_nsec;
	uint32_t nextents;       /* number of extents in extents[] (SWEEP_PLAN_EXTENTS), else 0 */
	const struct sweep_extent *extents;
	uint64_t cookie;         /* the caller's value from sweep_plan_add() */
};

struct sweep_plan;

SWEEP_EXPORT int sweep_plan_new(const struct sweep_plan_opts *opts, struct sweep_plan **ret);
SWEEP_EXPORT struct sweep_plan *sweep_plan_free(struct sweep_plan *p);

/*
 * Add a regular file. With PHYSICAL order its location is looked up by
 * opening name relative to dirfd (O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC,
 * O_NOATIME when allowed); path is what the reader will later open and what
 * the caller sees. A file whose location cannot be learned is still added,
 * with phys = SWEEP_NO_PHYS. Returns 0 when the batch has room for more, 1
 * when it reached a bound (sort, read, then sweep_plan_clear()), -errno on
 * failure (nothing added).
 */
SWEEP_EXPORT int sweep_plan_add(struct sweep_plan *p, int dirfd, const char *name,
				const char *path, const struct stat *st, uint64_t cookie);
/* Add a file whose location the caller already knows (phys may be SWEEP_NO_PHYS). Same returns. */
SWEEP_EXPORT int sweep_plan_add_located(struct sweep_plan *p, const char *path, const struct stat *st,
					uint64_t phys, uint64_t cookie);

/* Sort the batch into its read order (stable: ties broken by inode, then by order added). */
SWEEP_EXPORT int sweep_plan_sort(struct sweep_plan *p);
SWEEP_EXPORT size_t sweep_plan_count(const struct sweep_plan *p);
/* Entry i in the current order, NULL when out of range. */
SWEEP_EXPORT const struct sweep_plan_entry *sweep_plan_entry(const struct sweep_plan *p, size_t i);
/* Drop every entry, keep the options and the allocated arenas for reuse. */
SWEEP_EXPORT void sweep_plan_clear(struct sweep_plan *p);
/* Bytes of memory the current batch uses (entries, paths, extents). */
SWEEP_EXPORT size_t sweep_plan_memory(const struct sweep_plan *p);
/* The order the plan actually sorts by (AUTO resolved once a file was added). */
SWEEP_EXPORT enum sweep_order sweep_plan_order(const struct sweep_plan *p);

#ifdef __cplusplus
}
#endif
#endif
