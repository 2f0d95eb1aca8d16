/* SPDX-License-Identifier: MIT */
/*
 * Stat a directory's entries in batches. The walk hands over names already
 * sorted by inode; with io_uring they are submitted together as
 * IORING_OP_STATX, so the filesystem sees the whole batch of inode-table
 * reads at once and the block layer can merge them. Without io_uring (or
 * with SWEEP_BACKEND=syscall) each is a plain fstatat() in the same order.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "walk_impl.h"

#if HAVE_LIBURING
#include <liburing.h>
#endif

/* Fewer requests than this are stat'ed with fstatat even on the io_uring backend. */
#define URING_MIN_BATCH 4

struct sweep__stat_batch {
	enum sweep_backend backend;
	bool every_uring;
	bool tell_cached;
	bool cached; /* the last run read nothing from the disk */
	unsigned depth;
#if HAVE_LIBURING
	struct io_uring ring;
	struct statx *stx; /* depth buffers */
#endif
};

struct sweep__stat_batch *sweep__stat_batch_new(enum sweep_backend backend, unsigned depth, bool every_uring,
						bool tell_cached)
{
	struct sweep__stat_batch *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->every_uring = every_uring;
	b->tell_cached = tell_cached;
	b->depth = depth ? depth : 64;
	b->backend = SWEEP_BACKEND_SYSCALL;
#if HAVE_LIBURING
	if (backend == SWEEP_BACKEND_URING) {
		b->stx = calloc(b->depth, sizeof(*b->stx));
		if (b->stx && io_uring_queue_init(b->depth, &b->ring, 0) == 0)
			b->backend = SWEEP_BACKEND_URING;
		else {
			/* The probe said yes but this ring failed (fd or memlock limits): fall back. */
			free(b->stx);
			b->stx = NULL;
		}
	}
#else
	(void)backend;
#endif
	return b;
}

struct sweep__stat_batch *sweep__stat_batch_free(struct sweep__stat_batch *b)
{
	if (!b)
		return NULL;
#if HAVE_LIBURING
	if (b->backend == SWEEP_BACKEND_URING) {
		io_uring_queue_exit(&b->ring);
		free(b->stx);
	}
#endif
	free(b);
	return NULL;
}

static void stat_one(int dirfd, struct sweep__stat_req *r)
{
	r->err = fstatat(dirfd, r->name, r->st, r->flags) < 0 ? -errno : 0;
}

#if HAVE_LIBURING
static void statx_to_stat(const struct statx *x, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(x->stx_dev_major, x->stx_dev_minor);
	st->st_ino = x->stx_ino;
	st->st_mode = x->stx_mode;
	st->st_nlink = x->stx_nlink;
	st->st_uid = x->stx_uid;
	st->st_gid = x->stx_gid;
	st->st_rdev = makedev(x->stx_rdev_major, x->stx_rdev_minor);
	st->st_size = (off_t)x->stx_size;
	st->st_blksize = x->stx_blksize;
	st->st_blocks = (blkcnt_t)x->stx_blocks;
	st->st_atim.tv_sec = x->stx_atime.tv_sec;
	st->st_atim.tv_nsec = x->stx_atime.tv_nsec;
	st->st_mtim.tv_sec = x->stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = x->stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = x->stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = x->stx_ctime.tv_nsec;
}

/* A fresh ring after a failure, so no half-submitted request lingers in it. */
static void reset_ring(struct sweep__stat_batch *b)
{
	io_uring_queue_exit(&b->ring);
	if (io_uring_queue_init(b->depth, &b->ring, 0) < 0) {
		free(b->stx);
		b->stx = NULL;
		b->backend = SWEEP_BACKEND_SYSCALL;
	}
}

/*
 * One submission of up to depth statx requests; waits for all of them.
 * Whatever io_uring could not do is done with fstatat, so a request never
 * comes back without an answer.
 */
static void run_uring(struct sweep__stat_batch *b, int dirfd, struct sweep__stat_req *reqs, size_t n)
{
	unsigned queued = 0, submitted = 0;
	for (size_t i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);
		if (!sqe)
			break;
		/* AT_NO_AUTOMOUNT: behave like fstatat, do not trigger automounts. */
		io_uring_prep_statx(sqe, dirfd, reqs[i].name, reqs[i].flags | AT_NO_AUTOMOUNT,
				    STATX_BASIC_STATS, &b->stx[i]);
		io_uring_sqe_set_data64(sqe, i);
		reqs[i].err = 1; /* pending */
		queued++;
	}
	int failed = 0;
	while (submitted < queued) {
		int ret = io_uring_submit(&b->ring);
		if (ret == -EINTR)
			continue;
		if (ret <= 0) {
			failed = 1;
			break;
		}
		submitted += (unsigned)ret;
	}
	for (unsigned done = 0; done < submitted;) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe(&b->ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			failed = 1;
			break;
		}
		size_t i = (size_t)io_uring_cqe_get_data64(cqe);
		if (cqe->res < 0)
			reqs[i].err = cqe->res;
		else {
			reqs[i].err = 0;
			statx_to_stat(&b->stx[i], reqs[i].st);
		}
		io_uring_cqe_seen(&b->ring, cqe);
		done++;
	}
	if (failed)
		reset_ring(b);
	for (size_t i = 0; i < n; i++)
		if (i >= queued || reqs[i].err == 1)
			stat_one(dirfd, &reqs[i]);
}
#endif

int sweep__stat_batch_run(struct sweep__stat_batch *b, int dirfd, struct sweep__stat_req *reqs, size_t n)
{
	/* The meter is read only where an answer is used: the io_uring switch, or the caller's question. */
	bool metered = b->tell_cached || (b->backend == SWEEP_BACKEND_URING && !b->every_uring && n >= URING_MIN_BATCH);
	int64_t reads = metered ? sweep__disk_reads_sampled() : -1;
	bool cold = reads < 0;

	for (size_t i = 0; i < n; i += b->depth) {
		size_t chunk = n - i < b->depth ? n - i : b->depth;
		size_t k = 0;
#if HAVE_LIBURING
		/*
		 * io_uring runs statx in a kernel worker thread: waking it costs
		 * more than a few fstatat() calls on cached inodes, and so few
		 * requests have nothing to merge. Small batches go the plain way;
		 * so does a batch whose inodes are cached (a warm tree: sweep-du
		 * on /usr/share took 1.6x GNU du's CPU time with every statx
		 * handed to a worker). The first few are stat'ed plainly: when
		 * they had to read the disk (sweep__disk_reads, no clock), the
		 * rest goes to io_uring together, as does every later chunk.
		 */
		if (b->backend == SWEEP_BACKEND_URING && chunk >= URING_MIN_BATCH) {
			if (!b->every_uring && !cold) {
				for (; k < URING_MIN_BATCH; k++)
					stat_one(dirfd, &reqs[i + k]);
				int64_t now = sweep__disk_reads_sampled();
				cold = now < 0 || now != reads;
			}
			if (b->every_uring || cold) {
				run_uring(b, dirfd, reqs + i + k, chunk - k);
				cold = true;
				continue;
			}
		}
#endif
		for (; k < chunk; k++)
			stat_one(dirfd, &reqs[i + k]);
	}
	if (!cold && b->tell_cached) {
		int64_t now = sweep__disk_reads_sampled();
		cold = now < 0 || now != reads;
	}
	b->cached = b->tell_cached && !cold;
	return 0;
}

bool sweep__stat_batch_cached(const struct sweep__stat_batch *b)
{
	return b && b->cached;
}
