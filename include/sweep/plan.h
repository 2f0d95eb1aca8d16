/* SPDX-License-Identifier: MIT */
/*
 * plan: a batch of files sorted into one sweep. Memory is bounded: the
 * caller sets limits, sweep_plan_add() says when the batch is full, and the
 * caller then sorts, reads and clears it.
 */
#ifndef SWEEP_PLAN_H
#define SWEEP_PLAN_H

#include <sys/stat.h>
#include <sweep/common.h>
#include <sweep/extent.h>
#include <sweep/walk.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sweep_plan_opts.flags */
#define SWEEP_PLAN_EXTENTS 0x1u /* keep every extent of each file (for trace export), not only the first */
#define SWEEP_PLAN_LOCATE  0x2u /* look each file's first byte up in every order (to show or count it); the
				   order alone still decides the sort */
/*
 * In physical order, a batch whose files are located when it is sorted (a
 * sweep_batch's) is first sampled: when its data is already in the page
 * cache it is not located but sorted by inode (physical order saves no
 * seek there). A batch not in the cache is planned as without the flag.
 */
#define SWEEP_PLAN_CACHE_CHECK 0x4u

/* sweep_plan_entry.root when the path is opened as it stands (no root to resolve it beneath). */
#define SWEEP_PLAN_NO_ROOT UINT32_MAX
/* Roots one batch can hold (each is a descriptor): at this many, sweep_plan_add* says the batch is full. */
#define SWEEP_PLAN_MAX_ROOTS 64

/* sweep_plan_entry.flags */
#define SWEEP_PLAN_FOLLOW 0x1u /* a symlink stands at path and was followed when planned: open following it */
/*
 * size is not known (0): the file was planned without a stat
 * (SWEEP_WALK_NO_STAT_FILES) and neither a raw inode nor locating it gave
 * its size; the reader's fstat will. For a caller's byte totals.
 */
#define SWEEP_PLAN_UNSIZED 0x2u

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
	/*
	 * How the reader reaches the file again. With a root, path + rel is
	 * opened beneath sweep_plan_root_fd(root) without following any
	 * symlink; without one (SWEEP_PLAN_NO_ROOT), path is opened as it
	 * stands, not following a final symlink unless SWEEP_PLAN_FOLLOW.
	 * Either way the reader checks dev, ino and type before it delivers.
	 */
	uint32_t root;
	uint32_t rel;            /* offset in path of the part below the root */
	uint32_t flags;          /* SWEEP_PLAN_FOLLOW, SWEEP_PLAN_UNSIZED */
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
				const char *path, const struct sweep_stat *st, uint64_t cookie);
/*
 * Add a regular file met by sweep_walk(): it is planned below the entry's
 * walk root (root_fd, rel), so the reader reopens it beneath that root and
 * never through a symlink swapped in later; a root itself, and entries of
 * a SWEEP_WALK_FOLLOW walk, are planned by path. The location comes from
 * the entry's dirfd. Same returns as sweep_plan_add(); 1 also when the
 * batch holds SWEEP_PLAN_MAX_ROOTS roots, -ENOBUFS when a new root would
 * not fit (the caller did not flush on 1).
 */
SWEEP_EXPORT int sweep_plan_add_entry(struct sweep_plan *p, const struct sweep_entry *e, uint64_t cookie);
/*
 * Add the regular file rel below the directory root_fd (the plan keeps a
 * duplicate of root_fd until it is cleared; roots are told apart by device
 * and inode). path is what the caller sees. Same returns as
 * sweep_plan_add_entry().
 */
SWEEP_EXPORT int sweep_plan_add_beneath(struct sweep_plan *p, int root_fd, const char *rel, const char *path,
					const struct sweep_stat *st, uint64_t cookie);
/* The descriptor of a root of the current batch (O_PATH directory), -1 when out of range. */
SWEEP_EXPORT int sweep_plan_root_fd(const struct sweep_plan *p, uint32_t root);

/* Add a file whose location the caller already knows (phys may be SWEEP_NO_PHYS). Same returns. */
SWEEP_EXPORT int sweep_plan_add_located(struct sweep_plan *p, const char *path, const struct sweep_stat *st,
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
