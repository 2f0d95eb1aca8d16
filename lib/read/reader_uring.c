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
	bool openat2; /* IORING_OP_OPENAT2 and openat2 resolve flags work here */
	/* Opens done synchronously (no OPENAT2 in this kernel's io_uring): completed at submission. */
	struct rd_req *done_head, *done_tail;
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
	st->openat2 = sweep__uring_has_openat2() && sweep__openat2_usable();
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

static void complete_now(struct uring_state *st, struct rd_req *q, int res)
{
	q->res = res;
	q->done_next = NULL;
	if (st->done_tail)
		st->done_tail->done_next = q;
	else
		st->done_head = q;
	st->done_tail = q;
}

/*
 * An entry with a root is opened beneath it with OPENAT2 and the same
 * resolve flags as sweep__open_beneath(); where this kernel's io_uring has
 * no OPENAT2 (or openat2 is filtered), synchronously by the component walk.
 * An entry without a root is opened by its path, not following a final
 * symlink unless it was planned following one.
 */
static int u_submit_open(struct sweep_reader *r, struct rd_req *q, int flags)
{
	struct uring_state *st = r->be_state;
	struct rd_slot *s = q->slot;
	const struct sweep_plan_entry *e = s->f.entry;
	struct io_uring_sqe *sqe;

	if (e->root != SWEEP_PLAN_NO_ROOT && !st->openat2) {
		complete_now(st, q, sweep__plan_open_entry(r->plan, e, flags));
		return 0;
	}
	sqe = get_sqe(st);
	if (!sqe)
		return -EBUSY;
	if (e->root != SWEEP_PLAN_NO_ROOT) {
		s->how = (struct open_how){
			.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		io_uring_prep_openat2(sqe, sweep_plan_root_fd(r->plan, e->root), e->path + e->rel, &s->how);
	} else {
		io_uring_prep_openat(sqe, AT_FDCWD, e->path,
				     flags | O_CLOEXEC | ((e->flags & SWEEP_PLAN_FOLLOW) ? 0 : O_NOFOLLOW), 0);
	}
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

	unsigned local = 0;

	while (local < max && st->done_head) {
		out[local++] = st->done_head;
		st->done_head = st->done_head->done_next;
	}
	if (!st->done_head)
		st->done_tail = NULL;
	if (local)
		wait = false; /* something to hand back already: only collect what is there */
	out += local;
	max -= local;
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
	return (int)(n + local);
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
