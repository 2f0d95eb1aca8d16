/* SPDX-License-Identifier: MIT */
/* Library-internal declarations. Not installed. Unit tests may include it. */
#ifndef SWEEP_INTERNAL_H
#define SWEEP_INTERNAL_H

#include "config.h"
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <sweep.h>

/*
 * The one rule for every size-versioned struct a caller passes in (options,
 * ops tables): the caller sets .size to sizeof() as it was compiled.
 *  - A shorter struct (an older caller) is accepted when it holds at least
 *    min_size bytes; the fields it lacks read as zero.
 *  - A longer struct (a newer caller) is accepted only when every byte past
 *    what this library knows is zero (else -E2BIG), as openat2/clone3 do;
 *    one over a page is taken for a size never set (-E2BIG, not read).
 * Copies min(src_size, dst_size) bytes into dst, zeroes the rest, and sets
 * dst's size field (its first size_t) to dst_size. src NULL: dst all zero.
 * 0, -EINVAL (too short) or -E2BIG.
 */
int sweep__opts_copy(void *dst, size_t dst_size, const void *src, size_t min_size);
/*
 * The same rule for a struct the library fills (stats, info, fsinfo): the
 * caller sets .size as it was compiled; a shorter struct holding at least
 * min_size bytes gets the fields it has room for, a longer one is accepted
 * when the bytes past what this library knows are zero (they stay so), and
 * a size over a page is taken for one never set (-E2BIG). sweep__out_begin
 * checks ret (0, -EINVAL for NULL or too short, -E2BIG) and zeroes
 * scratch (full_size bytes) for the library to fill; sweep__out_put then
 * copies what fits into ret. ret's size, and anything past it, stay as
 * they were. Nothing is written on failure.
 */
int sweep__out_begin(void *scratch, size_t full_size, const void *ret, size_t min_size);
void sweep__out_put(void *ret, const void *full, size_t full_size);

/* Unknown bits in a flags word are refused: -EINVAL unless flags only holds bits of known. */
static inline int sweep__flags_check(unsigned flags, unsigned known)
{
	return (flags & ~known) ? -EINVAL : 0;
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t sweep__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* 1 when io_uring with openat/read/statx works in this process. */
int sweep__uring_usable(void);
/* 1 when that io_uring also has IORING_OP_OPENAT2 (the reader's beneath-root opens). */
int sweep__uring_has_openat2(void);

/*
 * Make room for need elements in the malloc'ed array *v of *cap elements of
 * size elem, doubling (from min_cap). 0, or -ENOMEM with the array untouched.
 */
static inline int sweep__grow(void *v, size_t *cap, size_t need, size_t elem, size_t min_cap)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : min_cap;
	while (c < need)
		c *= 2;
	void *p = realloc(*(void **)v, c * elem);
	if (!p)
		return -ENOMEM;
	*(void **)v = p;
	*cap = c;
	return 0;
}

/* --- open_beneath.c --- */
/*
 * Open rel below dirfd (AT_FDCWD: the current directory) without following
 * any symlink on the way or at the end, and without leaving dirfd's tree:
 * openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS), or
 * one component at a time with O_NOFOLLOW where openat2 is missing and for
 * names longer than PATH_MAX. O_NOFOLLOW|O_CLOEXEC are always added. A
 * symlink in the way gives -ELOOP, ".." -EXDEV. fd or -errno.
 */
int sweep__open_beneath(int dirfd, const char *rel, int flags, mode_t mode);
/* Whether openat2 is used (probed once); the io_uring reader asks before it queues OPENAT2. */
int sweep__openat2_usable(void);
/* Test hook: walk components even where openat2 works (1), or not (0). */
void sweep__open_beneath_force_components(int on);

/* A share of the open-file limit: RLIMIT_NOFILE / div, at most cap (cap where the limit is unknown or infinite). */
unsigned sweep__nofile_share(unsigned div, unsigned cap);
/*
 * A share of the descriptors still free now (the limit less those this
 * process holds): that / div, at most cap. What a run sizes a window of open
 * files by, so that the layers holding files at once (the walk, the reader,
 * the copy engine's writer) fit the limit together, however low it is.
 */
unsigned sweep__nofile_free(unsigned div, unsigned cap);

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
/* sweep_plan_add() by path (AT_FDCWD), following a final symlink when follow (SWEEP_PLAN_FOLLOW). */
int sweep__plan_add_path(struct sweep_plan *p, const char *path, const struct sweep_stat *st, bool follow,
			 uint64_t cookie);

/* --- extent (extent.c) --- */
/* The ioctl that extent.c issues (FIEMAP, FIBMAP, FIGETBSZ); same contract as ioctl(2). */
typedef int (*sweep__ioctl_fn)(int fd, unsigned long request, void *arg);
/* Replace it (NULL restores the real ioctl); returns the previous hook. Unit tests feed fake replies. */
sweep__ioctl_fn sweep__extent_set_ioctl(sweep__ioctl_fn fn);
/*
 * Whether the data of the first size bytes of the file at fd is all in the
 * page cache (of a sparse file: its data regions, the holes are never
 * read): 1 yes, 0 no, -errno when it cannot be told (cachestat refused, as
 * it is for files the caller neither owns nor may write; no cachestat and
 * not the owner). A size of 0 is cached. No I/O, nothing read.
 */
int sweep__data_cached(int fd, uint64_t size);
/* The cachestat(2) that call makes: pages of fd cached in [off, off + len). 0 or -errno (-ENOSYS: none). */
typedef int (*sweep__cachestat_fn)(int fd, uint64_t off, uint64_t len, uint64_t *ret_pages);
/* Replace it (NULL restores the real one); returns the previous hook. Unit tests reach the fallback. */
sweep__cachestat_fn sweep__extent_set_cachestat(sweep__cachestat_fn fn);

/* --- fsinfo (fsinfo.c) --- */
/* Read sysfs under root instead of /sys (NULL restores it). For unit tests. */
void sweep__fsinfo_set_sysroot(const char *root);
/* The disk under block device dev and whether it is rotational: 1, 0, or -1 (unknown, disk ""). */
int sweep__fsinfo_disk(uint64_t dev, char *disk, size_t disk_size);
/* Where sysfs is ("/sys" unless a test moved it). */
const char *sweep__sysroot(void);
/* A small text file, trailing newlines and blanks cut: 0 or -errno. */
int sweep__read_small(const char *path, char *buf, size_t size);
/* strlcpy: src cut to fit size (size > 0). */
void sweep__copy_name(char *dst, size_t size, const char *src);

/* --- block devices (bdev.c) --- */
/*
 * Open block device bdev (MAJ:MIN) with open(2) flags (O_CLOEXEC,
 * O_NOCTTY and O_NOFOLLOW added): the node sysfs names (under
 * sweep__sysroot()), checked to be that very device. fd, or -ENODEV when
 * there is none, or the -errno of the open (-EACCES, -EPERM).
 */
int sweep__bdev_open(uint64_t bdev, int flags);

/* --- device class (devclass.c) --- */
/*
 * Fill fi's device_* and probe_* fields for a filesystem on block device
 * bdev (0: none) whose disk has the given rotational flag (1, 0, -1).
 */
void sweep__device_decide(uint64_t bdev, int rotational, struct sweep_fsinfo *fi);
/*
 * The profile of a device of class cls (AUTO: nothing known) under a
 * filesystem of the given policy, the environment's overrides applied: the
 * one place that says what each class does.
 */
void sweep__profile_decide(enum sweep_device_class cls, enum sweep_order policy, struct sweep_profile *p);
/* The profile of a device nothing is known of (its filesystem could not be described). */
void sweep__profile_unknown(struct sweep_profile *p);
/* Whether fi's class was decided under another request (sweep_device_force, SWEEP_DEVICE) than stands now. */
bool sweep__device_stale(const struct sweep_fsinfo *fi);
/* 1 and the class when the caller (sweep_device_force) or SWEEP_DEVICE asks for one, else 0. */
int sweep__device_requested(enum sweep_device_class *ret_class, enum sweep_device_reason *ret_reason);
/* Tests: keep the cache across runs in dir instead of /run/sweep ("" none; NULL restores). */
void sweep__device_set_cache_dir(const char *dir);
/* Tests: how many times this process opened a device to time it. */
unsigned sweep__device_probes(void);
/* Tests: forget what this process measured. */
void sweep__device_forget(void);

/* --- disk_reads.c --- */
/*
 * The calling thread's count of block reads so far (in 512-byte units): it
 * moves exactly when this thread had to read a disk. -errno when the kernel
 * keeps no count (then treat work as having read).
 */
int64_t sweep__disk_reads(void);

/* --- batched stat (statx_batch.c) --- */
struct sweep__stat_req {
	const char *name; /* relative to the batch's dirfd */
	int flags;        /* AT_SYMLINK_NOFOLLOW or 0 */
	struct stat *st;  /* filled on success */
	int err;          /* 0 or -errno */
};
struct sweep__stat_batch;
/*
 * backend must be resolved (URING or SYSCALL); depth = requests per
 * submission. every_uring: with URING, every batch goes to io_uring (the
 * caller asked for it by name); otherwise inodes that are cached are
 * stat'ed with plain calls (statx_batch.c). tell_cached: the caller asks
 * sweep__stat_batch_cached() after each run (else it is always false and
 * costs nothing).
 */
struct sweep__stat_batch *sweep__stat_batch_new(enum sweep_backend backend, unsigned depth, bool every_uring,
						bool tell_cached);
struct sweep__stat_batch *sweep__stat_batch_free(struct sweep__stat_batch *b);
/* Stat reqs[0..n) relative to dirfd, in the order given; fills each req's err/st. */
int sweep__stat_batch_run(struct sweep__stat_batch *b, int dirfd, struct sweep__stat_req *reqs, size_t n);
/* Whether the last run read nothing from the disk (and sent nothing to io_uring): the inodes were cached. tell_cached only. */
bool sweep__stat_batch_cached(const struct sweep__stat_batch *b);

/* --- C-SCAN queue (walk_queue.c) --- */
/* Items are served in ascending key from the last key served; keys below it wait for the next sweep. */
struct sweep__cscan;
struct sweep__cscan *sweep__cscan_new(void);
struct sweep__cscan *sweep__cscan_free(struct sweep__cscan *q);
int sweep__cscan_push(struct sweep__cscan *q, uint64_t key, void *item);
/* 1 and *ret_item (and *ret_key if non-NULL) when an item was taken, 0 when empty. */
int sweep__cscan_pop(struct sweep__cscan *q, void **ret_item, uint64_t *ret_key);
size_t sweep__cscan_len(const struct sweep__cscan *q);
/* How many times the queue wrapped to a new sweep. */
uint64_t sweep__cscan_sweeps(const struct sweep__cscan *q);

/*
 * walk_meta.c, for plan.c: what the walk knows of an entry beyond struct
 * sweep_entry, which points at it (sweep_entry.hint) while it is handed out.
 */
struct walk;
struct frame;
struct sweep_entry_hint {
	bool stated;    /* the walk stat'ed it: entry->st is the filesystem's answer */
	bool have_hint; /* a raw inode hint agreed with the walk: phys and size are sort keys, never output */
	bool deep;      /* it agreed, but the first extent is in a tree block not read yet (SWEEP__HINT_DEEP) */
	/*
	 * Not read: the inode lies in tables the walk's engine (on device dev)
	 * has in the cache. A plan that locates it at sort time by its own
	 * raw sweep on that device leaves it so; any other use asks for it
	 * now (sweep__walk_entry_hint_now), through the walk's own state below.
	 */
	bool lazy;
	/* Not stat'ed, and its raw inode gives its size (in size): SWEEP_WALK_HINT_FILES's files, sized without a stat. */
	bool have_size;
	uint64_t dev;
	uint64_t phys, size;
	/* Where the walk holds the entry (listing entry i of frame f, stat'ed as st): for a lazy hint's read. */
	struct walk *w;
	struct frame *f;
	size_t i;
	const struct stat *st;
};
/* eh (an entry's hint), its inode read now if it was lazy: the same hint, no longer lazy. During the callback only. */
const struct sweep_entry_hint *sweep__walk_entry_hint_now(const struct sweep_entry_hint *eh);

/* Counts over every walk and plan of the process, for tests and measurements. */
struct sweep__walk_meta_stats {
	uint64_t dirs_prefetched, prefetch_bytes, prefetch_requests;
	uint64_t hints_asked, hints_valid, hints_offered, dir_keys;
	uint64_t bulkstat_inodes; /* inodes an xfs bulkstat sweep read ahead of the walk */
	uint64_t table_bytes;     /* inode table bytes an ext4 sweep read ahead of the walk */
	uint64_t plan_hinted;  /* files the plan placed by their hint, without opening them */
	uint64_t plan_located; /* files the plan opened for FIEMAP */
	uint64_t plan_deep;    /* files the plan located by a raw sweep of their extent-tree blocks (plan_deep.c) */
	uint64_t plan_sized;   /* files the plan took unlocated and unstated, sized by their hint (SWEEP_WALK_HINT_FILES) */
};
void sweep__walk_meta_totals(struct sweep__walk_meta_stats *ret);
enum sweep__located_by { SWEEP__BY_HINT, SWEEP__BY_FIEMAP, SWEEP__BY_DEEP, SWEEP__SIZED_BY_HINT };
void sweep__plan_count(enum sweep__located_by how);

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
/* reader_prefetch.c: pieces the reader's physical-order prefetch asked for in this process (for tests). */
uint64_t sweep__reader_prefetch_pieces(void);

/* walk_ahead.c: directories the walk's read-ahead threads loaded in this process (for tests). */
uint64_t sweep__walk_ahead_loaded(void);
/* walk.c: directories the walk opened for FIEMAP to key them in this process (for tests). */
uint64_t sweep__walk_dir_fiemaps(void);

/* key_sort.c: a stable radix sort of (key, index) records by key; ties keep their order. -ENOMEM, else 0. */
struct __attribute__((packed)) sweep__key_rec {
	uint64_t key;
	uint32_t idx;
};
int sweep__key_sort(struct sweep__key_rec *v, size_t n);
/* Whether n records are worth the radix sort's buffer (else qsort). */
bool sweep__key_sort_pays(size_t n);

#endif
