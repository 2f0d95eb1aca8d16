/* SPDX-License-Identifier: MIT */
/*
 * reader backend: io_uring. Opens and reads are queued as IORING_OP_OPENAT
 * and IORING_OP_READ (READ_FIXED when the buffer ring is registered) in the
 * order the core submits them, i.e. plan order; the kernel completes them
 * in whatever order the device finishes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "reader_impl.h"

#if HAVE_LIBURING
#include <liburing.h>

struct uring_state {
	struct io_uring ring;
	bool fixed; /* the buffer ring is registered as fixed buffer 0 */
};

static int u_start(struct sweep_reader *r)
{
	struct uring_state *st = calloc(1, sizeof(*st));
	unsigned entries = 8;
	int rc;

	if (!st)
		return -ENOMEM;
	/* Every open and read in flight fits in the queue at once, so a submission never waits for room. */
	while (entries < r->depth + r->window && entries < 4096)
		entries *= 2;
	rc = io_uring_queue_init(entries, &st->ring, 0);
	if (rc < 0) {
		free(st);
		return rc;
	}
	if (r->opts.flags & SWEEP_READ_REGISTERED) {
		struct iovec iov = { .iov_base = r->ring, .iov_len = r->ring_size };
		/* Pinning can be refused (RLIMIT_MEMLOCK): plain reads still work. */
		st->fixed = io_uring_register_buffers(&st->ring, &iov, 1) == 0;
	}
	r->be_state = st;
	return 0;
}

static void u_stop(struct sweep_reader *r)
{
	struct uring_state *st = r->be_state;

	if (!st)
		return;
	if (st->fixed)
		io_uring_unregister_buffers(&st->ring);
	io_uring_queue_exit(&st->ring);
	free(st);
	r->be_state = NULL;
}

static struct io_uring_sqe *get_sqe(struct uring_state *st)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&st->ring);

	if (!sqe) {
		io_uring_submit(&st->ring);
		sqe = io_uring_get_sqe(&st->ring);
	}
	return sqe;
}

static int u_submit_open(struct sweep_reader *r, struct rd_req *q, int flags)
{
	struct uring_state *st = r->be_state;
	struct io_uring_sqe *sqe = get_sqe(st);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_openat(sqe, AT_FDCWD, q->slot->f.entry->path, flags, 0);
	io_uring_sqe_set_data(sqe, q);
	return 0;
}

static int u_submit_read(struct sweep_reader *r, struct rd_req *q)
{
	struct uring_state *st = r->be_state;
	struct io_uring_sqe *sqe = get_sqe(st);

	if (!sqe)
		return -EBUSY;
	if (st->fixed)
		io_uring_prep_read_fixed(sqe, q->slot->f.fd, q->buf + q->got, q->len - q->got,
					 q->off + q->got, 0);
	else
		io_uring_prep_read(sqe, q->slot->f.fd, q->buf + q->got, q->len - q->got, q->off + q->got);
	io_uring_sqe_set_data(sqe, q);
	return 0;
}

static int u_flush(struct sweep_reader *r)
{
	struct uring_state *st = r->be_state;
	int rc = io_uring_submit(&st->ring);

	return rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY ? rc : 0;
}

static int u_reap(struct sweep_reader *r, struct rd_req **out, unsigned max, bool wait)
{
	struct uring_state *st = r->be_state;
	struct io_uring_cqe *cqes[64];
	unsigned n;

	if (max > 64)
		max = 64;
	n = io_uring_peek_batch_cqe(&st->ring, cqes, max);
	while (n == 0 && wait) {
		struct io_uring_cqe *cqe;
		int rc = io_uring_submit_and_wait(&st->ring, 1);
		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY)
			return rc;
		rc = io_uring_peek_cqe(&st->ring, &cqe);
		if (rc < 0 && rc != -EAGAIN && rc != -EINTR)
			return rc;
		n = io_uring_peek_batch_cqe(&st->ring, cqes, max);
	}
	for (unsigned i = 0; i < n; i++) {
		out[i] = io_uring_cqe_get_data(cqes[i]);
		out[i]->res = cqes[i]->res;
	}
	io_uring_cq_advance(&st->ring, n);
	return (int)n;
}

const struct rd_backend sweep__rd_uring = {
	.name = "uring",
	.start = u_start,
	.stop = u_stop,
	.submit_open = u_submit_open,
	.submit_read = u_submit_read,
	.flush = u_flush,
	.reap = u_reap,
};
#endif
