/* SPDX-License-Identifier: MIT */
/*
 * The common layer (lib/common/): what every other layer rests on. Not
 * installed. Each layer folder has a header of its own for the layers above
 * it, each including the one below (lib/meson.build lists the order):
 *   common/internal.h <- device/device.h <- metascan/metascan.h
 *     <- walk/walk.h <- plan/plan.h <- read/read.h <- copy/copy_internal.h
 * (the model, lib/sim, rests on this one alone). Unit tests
 * include the header of the layer they test.
 */
#ifndef SWEEP_INTERNAL_H
#define SWEEP_INTERNAL_H

#include "config.h"
#include <errno.h>
#include <pthread.h>
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

/* --- chmod_nofollow.c --- */
/* fchmodat(dirfd, name, mode, AT_SYMLINK_NOFOLLOW) without a descriptor where the kernel allows (fchmodat2). 0 or -errno. */
int sweep__chmod_nofollow(int dirfd, const char *name, mode_t mode);

/* A share of the open-file limit: RLIMIT_NOFILE / div, at most cap (cap where the limit is unknown or infinite). */
unsigned sweep__nofile_share(unsigned div, unsigned cap);
/*
 * A share of the descriptors still free now (the limit less those this
 * process holds): that / div, at most cap. What a run sizes a window of open
 * files by, so that the layers holding files at once (the walk, the reader,
 * the copy engine's writer) fit the limit together, however low it is.
 */
unsigned sweep__nofile_free(unsigned div, unsigned cap);

/* --- disk_reads.c --- */
/*
 * The calling thread's count of block reads so far (in 512-byte units): it
 * moves exactly when this thread had to read a disk. -errno when the kernel
 * keeps no count (then treat work as having read).
 */
int64_t sweep__disk_reads(void);
/*
 * The same, for questions asked per directory (disk_reads.c): after a long
 * run of answers with the count unchanged, the kernel is asked only now and
 * then, and the last count given between; a count that moved brings back
 * asking every time. Per thread.
 */
int64_t sweep__disk_reads_sampled(void);
/* The sampling itself, over any counter (tests drive it with their own). */
struct sweep__reads_gate {
	int64_t last;
	unsigned streak, skipped;
};
void sweep__reads_gate_init(struct sweep__reads_gate *g);
int64_t sweep__reads_gate_ask(struct sweep__reads_gate *g, int64_t (*count)(void));

/* key_sort.c: a stable radix sort of (key, index) records by key; ties keep their order. -ENOMEM, else 0. */
struct __attribute__((packed)) sweep__key_rec {
	uint64_t key;
	uint32_t idx;
};
int sweep__key_sort(struct sweep__key_rec *v, size_t n);
/* Whether n records are worth the radix sort's buffer (else qsort). */
bool sweep__key_sort_pays(size_t n);

/*
 * Starts fn(arg) on a new thread with every signal blocked, so that signals
 * stay the caller's (lib/common/thread_start.c). 0 or -errno.
 */
int sweep__thread_start(pthread_t *tid, void *(*fn)(void *), void *arg);

#endif
