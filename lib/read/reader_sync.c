/* SPDX-License-Identifier: MIT */
/*
 * reader backend: plain system calls, for kernels or sandboxes without
 * io_uring. Each request is carried out as it is submitted (openat,
 * pread) and its completion queued for the core. The device still sees
 * more than one file at a time: every file in the core's window is opened
 * ahead of delivery and asked for with posix_fadvise(WILLNEED), so the
 * kernel reads the next few files while the current one is delivered.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "reader_impl.h"

#define WILLNEED_MAX (8u << 20) /* read-ahead asked for per file: the start of a large file is enough */

struct sync_state {
	struct rd_req *done_head, *done_tail;
};

static int s_start(struct sweep_reader *r)
{
	struct sync_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	r->be_state = st;
	return 0;
}

static void s_stop(struct sweep_reader *r)
{
	free(r->be_state);
	r->be_state = NULL;
}

static void complete(struct sweep_reader *r, struct rd_req *q, int res)
{
	struct sync_state *st = r->be_state;

	q->res = res;
	q->done_next = NULL;
	if (st->done_tail)
		st->done_tail->done_next = q;
	else
		st->done_head = q;
	st->done_tail = q;
}

static int s_submit_open(struct sweep_reader *r, struct rd_req *q, int flags)
{
	complete(r, q, sweep__plan_open_entry(r->plan, q->slot->f.entry, flags));
	return 0;
}

static int s_submit_read(struct sweep_reader *r, struct rd_req *q)
{
	ssize_t n = pread(q->slot->f.fd, q->buf + q->got, q->len - q->got, (off_t)(q->off + q->got));

	complete(r, q, n < 0 ? -errno : (int)n);
	return 0;
}

static void s_opened(struct sweep_reader *r, struct rd_slot *s)
{
	uint64_t len = s->f.st.size;

	(void)r;
	if (len > WILLNEED_MAX)
		len = WILLNEED_MAX;
	if (len > 0)
		(void)posix_fadvise(s->f.fd, 0, (off_t)len, POSIX_FADV_WILLNEED);
}

static int s_flush(struct sweep_reader *r)
{
	(void)r;
	return 0;
}

static int s_reap(struct sweep_reader *r, struct rd_req **out, unsigned max, bool wait)
{
	struct sync_state *st = r->be_state;
	unsigned n = 0;

	(void)wait; /* everything submitted has already completed */
	while (n < max && st->done_head) {
		out[n++] = st->done_head;
		st->done_head = st->done_head->done_next;
	}
	if (!st->done_head)
		st->done_tail = NULL;
	return (int)n;
}

const struct rd_backend sweep__rd_sync = {
	.name = "syscall",
	.start = s_start,
	.stop = s_stop,
	.submit_open = s_submit_open,
	.submit_read = s_submit_read,
	.opened = s_opened,
	.flush = s_flush,
	.reap = s_reap,
};
