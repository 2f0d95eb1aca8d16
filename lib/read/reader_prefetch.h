/* SPDX-License-Identifier: MIT */
/*
 * The disk's physical-order prefetch (HDD class): a thread of the reader's
 * that asks the device for the data of the files ahead, a group at a time,
 * every extent of the group in ascending physical order. reader_prefetch.c
 * says why and how; the reader only reads what the thread has asked for.
 */
#ifndef SWEEP_READER_PREFETCH_H
#define SWEEP_READER_PREFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sweep/plan.h>
#include <sweep/reader.h>

struct sweep__pf;

typedef void (*sweep__pf_log_fn)(void *ctx, const struct sweep_file *f, uint64_t phys, uint64_t off, uint64_t len);

struct sweep__pf_opts {
	const struct sweep_plan *plan;
	size_t first;         /* the first file of the plan to ask for (a reader of one group: its own) */
	size_t n;             /* files of the plan: [first, n) are asked for */
	unsigned share;       /* readers prefetching at once (one per disk): the default group is divided (0: 1) */
	uint64_t group_max;   /* bytes per group at most (0: from the memory available) */
	bool noatime;         /* open with O_NOATIME where permitted */
	/* the reader's ops->read_after_begin, or NULL: a file it holds back is not asked for either */
	bool (*after_begin)(const struct sweep_file *f, void *ctx);
	void *ctx;
	sweep__pf_log_fn log; /* test hook: every WILLNEED, in issue order, on the thread */
	void *log_ctx;
};

/* Start the thread; -errno (then the reader reads without it). */
int sweep__pf_start(const struct sweep__pf_opts *o, struct sweep__pf **ret);

/*
 * Whether bytes [off, ...) of file index may be read now: files before the
 * frontier wholly, the frontier's file below *ret_end (set; UINT64_MAX: all).
 * wait: block until it may (or the thread has stopped).
 */
bool sweep__pf_allows(struct sweep__pf *pf, size_t index, uint64_t off, uint64_t *ret_end, bool wait);

/* The reader has delivered files [0, head): the thread may go on that far ahead. */
void sweep__pf_delivered(struct sweep__pf *pf, size_t head);

/* Stop the thread (waits for the WILLNEED in progress) and free; NULL-safe. */
void sweep__pf_stop(struct sweep__pf *pf);

#endif
