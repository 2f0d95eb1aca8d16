/* SPDX-License-Identifier: MIT */
/*
 * reader: reads the files of a plan with io_uring (open, read submitted in
 * plan order with a bounded queue depth) or, as a fallback, with plain
 * syscalls and posix_fadvise(WILLNEED) read-ahead. Whatever order the
 * device completes in, the caller sees files strictly in plan order, each
 * whole: begin, its data in ascending offsets, end.
 */
#ifndef SWEEP_READER_H
#define SWEEP_READER_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sweep/common.h>
#include <sweep/extent.h>
#include <sweep/plan.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sweep_reader_opts.flags */
#define SWEEP_READ_SPARSE  0x1u /* skip holes (SEEK_DATA/SEEK_HOLE); data_map lists the data regions (one: blocks cover the size) */
#define SWEEP_READ_NOATIME 0x2u /* open with O_NOATIME where permitted */
#define SWEEP_READ_REGISTERED 0x4u /* io_uring: register the read buffers (fixed buffers) where permitted */
/*
 * Read each file to its end, as cp and cat do, whatever its size said (a
 * file in /proc says 0, one in /sys 4096; a file may grow while it is read):
 * data past st.size is delivered too, and end() finds the length read in
 * sweep_file.length. A file that grew or shrank while it was read is still
 * reported (SWEEP_READ_GREW, _SHRANK); an end sooner or later than st.size
 * alone, its size unchanged, is not. It costs no request for most files
 * (the last read asks for one byte more), one for an empty file, a file
 * ending in a hole, and one whose last read filled its buffer.
 */
#define SWEEP_READ_TO_EOF 0x8u
/*
 * Read every independent disk of the plan at once, a reader each (files on
 * separate disks, a btrfs filesystem's devices, an LVM volume's disks):
 * each file is still delivered whole, begin to end, and each disk's files
 * in plan order, but the files of different disks interleave as the disks
 * deliver them. The callbacks run on the reader's threads, one at a time,
 * never two at once (sweep_reader_run(3)).
 */
#define SWEEP_READ_BY_DEVICE 0x10u

/*
 * Positive end() statuses: the file was delivered but is not what was
 * planned. Changes while the file was read are reported first; otherwise
 * the size from open is compared with the entry's, so a file that grew or
 * shrank between planning and reading is reported too (a change of its
 * metadata alone before the open is not: st comes from the open file).
 */
#define SWEEP_READ_SHRANK  1 /* EOF before st.st_size bytes (fewer bytes delivered), or smaller than planned */
#define SWEEP_READ_GREW    2 /* data past st.st_size (only st.st_size bytes delivered), or larger than planned */
#define SWEEP_READ_CHANGED 3 /* size held but ctime moved while the file was read, or between its open and the fstat st comes from */

/* begin() may return this: deliver no data for this file (the caller used fd itself). */
#define SWEEP_READ_SKIP 16

struct sweep_reader_opts {
	size_t size;                /* sizeof(struct sweep_reader_opts) */
	enum sweep_backend backend; /* AUTO: SWEEP_BACKEND env, then io_uring probe */
	unsigned queue_depth;       /* reads in flight, 0 = the device profile's (HDD class 128, SSD 64) */
	size_t buffer_size;         /* bytes per read request, 0 = default (1 MiB) */
	size_t max_buffered;        /* bytes held for in-order delivery, 0 = default */
	unsigned flags;             /* SWEEP_READ_* */
};

/* The file being delivered; valid from begin() to end(). */
struct sweep_file {
	const struct sweep_plan_entry *entry;
	int fd;                           /* open read-only; the caller must not close it */
	struct sweep_stat st;             /* fstat right after open: the size that will be delivered */
	const struct sweep_extent *data_map; /* SWEEP_READ_SPARSE: data regions (logical, length), else NULL */
	size_t data_map_len;
	/*
	 * In end(): the file's length as read. With SWEEP_READ_TO_EOF, where its
	 * end was found (less where it shrank below that meanwhile); else
	 * st.size, or where reading stopped short.
	 */
	uint64_t length;
};

struct sweep_read_ops {
	size_t size; /* sizeof(struct sweep_read_ops) */
	/* File opened. <0 stops the run, SWEEP_READ_SKIP delivers no data. Optional. */
	int (*begin)(const struct sweep_file *f, void *ctx);
	/* Next piece of the file, offsets ascending; <0 stops the run. */
	int (*data)(const struct sweep_file *f, uint64_t offset, const void *buf, size_t len, void *ctx);
	/*
	 * Always called once per entry, in plan order. status: 0, a
	 * SWEEP_READ_* value above, or -errno; then f->fd is -1 and begin was
	 * not called when the file could not be opened: -ENOENT when it
	 * vanished, -ESTALE when what stands at its path now is not the
	 * planned file (another inode or type, a symlink, or a directory on
	 * the way replaced) -- nothing of it was delivered. <0 from end()
	 * stops the run.
	 */
	int (*end)(const struct sweep_file *f, int status, void *ctx);
	/*
	 * Optional: true holds a file's reads until its begin() has returned,
	 * for a caller whose begin may make them unneeded (a clone of the
	 * file: SWEEP_READ_SKIP), so that nothing is read ahead for nothing:
	 * neither by the reader nor by a disk's prefetch. Asked with f->entry
	 * set, and f->fd -1 and f->st zero where it is asked ahead of the
	 * open. The opens of later files still go ahead; their reads wait
	 * behind this one's, in plan order. It may run on a thread of the
	 * reader's while other callbacks run: it must only look.
	 */
	bool (*read_after_begin)(const struct sweep_file *f, void *ctx);
};

struct sweep_read_stats {
	size_t size;       /* sizeof(struct sweep_read_stats), set by the caller */
	uint64_t files;    /* entries ended */
	uint64_t bytes;    /* data bytes delivered */
	uint64_t failed;   /* ended with -errno */
	uint64_t changed;  /* ended with a positive status */
	uint64_t requests; /* read requests submitted */
	uint64_t devices;  /* readers one run had at once: one per independent disk with SWEEP_READ_BY_DEVICE, else 1 */
};

struct sweep_reader;

SWEEP_EXPORT int sweep_reader_new(const struct sweep_reader_opts *opts, struct sweep_reader **ret);
SWEEP_EXPORT struct sweep_reader *sweep_reader_free(struct sweep_reader *r);
/* The backend actually in use (URING or SYSCALL). */
SWEEP_EXPORT enum sweep_backend sweep_reader_backend(const struct sweep_reader *r);
/*
 * Read every entry of p in its current order. Returns 0 when every entry
 * was delivered (per-file problems are reported through end() only), or
 * the negative value a callback returned, or -errno when reading could not
 * go on at all.
 */
SWEEP_EXPORT int sweep_reader_run(struct sweep_reader *r, const struct sweep_plan *p,
				  const struct sweep_read_ops *ops, void *ctx);
/* Totals since the reader was created, into ret (ret->size set by the caller; a shorter struct gets its fields). 0 or -EINVAL. */
SWEEP_EXPORT int sweep_reader_stats(const struct sweep_reader *r, struct sweep_read_stats *ret);

#ifdef __cplusplus
}
#endif
#endif
