/* SPDX-License-Identifier: MIT */
/*
 * batch: the plan-and-read loop every tool needs, once. Files are added as
 * they are met (from a walk, beneath a root, or by path); when the plan
 * reaches its bound it is sorted, read with the caller's read ops
 * (sweep_reader_run), and cleared, by itself; sweep_batch_flush() does the
 * same for what is left. Hooks around each batch let a caller export it
 * (trace), show it, or tidy up its own per-file state.
 */
#ifndef SWEEP_BATCH_H
#define SWEEP_BATCH_H

#include <sweep/common.h>
#include <sweep/plan.h>
#include <sweep/reader.h>
#include <sweep/walk.h>

#ifdef __cplusplus
extern "C" {
#endif

/* on_batch may return this: do not read this batch (it is cleared unread, e.g. a plan-only listing). */
#define SWEEP_BATCH_NO_READ 1

struct sweep_batch_opts {
	size_t size;                /* sizeof(struct sweep_batch_opts) */
	enum sweep_order order;     /* plan order, AUTO = the filesystem's policy */
	size_t max_files;           /* files per batch, 0 = 4096 */
	size_t max_bytes;           /* plan memory per batch, 0 = no bound */
	unsigned plan_flags;        /* SWEEP_PLAN_* */
	enum sweep_backend backend; /* the reader's */
	unsigned queue_depth;       /* 0 = the device profile's */
	size_t buffer_size;         /* 0 = default */
	size_t max_buffered;        /* 0 = default */
	unsigned read_flags;        /* SWEEP_READ_* */
	const struct sweep_read_ops *ops; /* NULL: batches are never read (on_batch sees them) */
	/* A batch, sorted, is about to be read: <0 stops everything, SWEEP_BATCH_NO_READ skips the read. */
	int (*on_batch)(const struct sweep_plan *p, void *ctx);
	/* A batch was read (status: sweep_reader_run's result) and is about to be cleared. <0 stops. */
	int (*on_batch_end)(const struct sweep_plan *p, int status, void *ctx);
	void *ctx;
	/*
	 * A batch is about to be sorted (which may first locate each file on
	 * its disk: the long part of a batch on a disk), unsorted: progress
	 * can say so. <0 stops everything.
	 */
	int (*on_sort)(const struct sweep_plan *p, void *ctx);
};

struct sweep_batch_stats {
	size_t size;              /* sizeof(struct sweep_batch_stats), set by the caller */
	uint64_t files;           /* files added */
	uint64_t batches;         /* batches sorted (read or not) */
	uint64_t plan_memory_sum; /* plan memory of each batch, summed (divide by files for bytes per file) */
	uint64_t plan_memory_peak;
	struct sweep_read_stats read; /* the reader's totals (read.size is set) */
};

struct sweep_batch;

SWEEP_EXPORT int sweep_batch_new(const struct sweep_batch_opts *opts, struct sweep_batch **ret);
/* Frees without flushing. NULL-safe; returns NULL. */
SWEEP_EXPORT struct sweep_batch *sweep_batch_free(struct sweep_batch *b);

/*
 * Add a regular file; a full batch is sorted and read at once. 0, the
 * negative value that stopped a batch (a callback's, or the reader's), or
 * -errno (nothing added).
 */
SWEEP_EXPORT int sweep_batch_add_entry(struct sweep_batch *b, const struct sweep_entry *e, uint64_t cookie);
SWEEP_EXPORT int sweep_batch_add_beneath(struct sweep_batch *b, int root_fd, const char *rel, const char *path,
					 const struct sweep_stat *st, uint64_t cookie);
/* By path, as it stands (its last component followed only when follow). */
SWEEP_EXPORT int sweep_batch_add_path(struct sweep_batch *b, const char *path, const struct sweep_stat *st,
				      int follow, uint64_t cookie);
/* Sort and read what is queued now. 0 or the negative value that stopped it. */
SWEEP_EXPORT int sweep_batch_flush(struct sweep_batch *b);
SWEEP_EXPORT int sweep_batch_stats(const struct sweep_batch *b, struct sweep_batch_stats *ret);
/* The reader's backend (URING or SYSCALL). */
SWEEP_EXPORT enum sweep_backend sweep_batch_backend(const struct sweep_batch *b);

#ifdef __cplusplus
}
#endif
#endif
