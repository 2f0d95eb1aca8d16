/* SPDX-License-Identifier: MIT */
/*
 * copy: regular files carried to the next flush. A batch read while the
 * walk still holds its directories (--batch, a low open-file limit: ulimit
 * -n 8 or 9) can leave a copy without the three descriptors it needs (the
 * source, its directory, the copy) even read again by itself once the
 * batch is done (copy_read.c, retry()). Such a copy is not an error yet:
 * nothing of it was made, and the walk gives its descriptors back when it
 * ends. So its queue item is kept, with the path and identity of its
 * source, and queued again at the next sweep_copy_flush() (the caller's
 * last one comes after the walk): read from its path then, the reader
 * checks it is still the same regular file (device, inode), as for any
 * file planned by path. Carried once only: failing again, it is reported.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "copy_internal.h"

struct carried {
	struct qitem q;   /* moved out of the queue: its names and its link node */
	char *path;       /* the source as it is opened by path */
	struct sweep_stat st; /* the identity it was planned with */
	enum sweep_copy_op err_op;
	int err;
};

bool sweep__carry(struct sweep_copy *c, const struct fcopy *f)
{
	const struct sweep_plan_entry *e = c->retry_entry;
	size_t idx = (size_t)(f->q - c->q);

	if (!e || e->cookie != idx || !e->ino || f->q->carried || f->placed || sweep__copy_stopped(c) ||
	    (f->err != -EMFILE && f->err != -ENFILE) ||
	    (f->err_op != SWEEP_COPY_OP_OPEN_SRC && f->err_op != SWEEP_COPY_OP_CREATE &&
	     f->err_op != SWEEP_COPY_OP_RENAME) ||
	    sweep__grow(&c->carry, &c->capcarry, c->ncarry + 1, sizeof(*c->carry), 16) < 0)
		return false;
	char *path = strdup(e->path);
	if (!path)
		return false;
	struct qitem *q = &c->q[idx];
	c->carry[c->ncarry++] = (struct carried){
		.q = *q, .path = path, .err_op = f->err_op, .err = f->err,
		.st = { .dev = e->dev, .ino = e->ino, .size = e->size, .blocks = (e->size + 511) / 512,
			.mode = S_IFREG, .ctime_sec = e->ctime_sec, .ctime_nsec = e->ctime_nsec },
	};
	/* The queue no longer owns them. */
	q->src = NULL;
	q->place = NULL;
	q->ln = NULL;
	return true;
}

/* Report k as it failed (and its other names with it), and let it go. */
static void give_up(struct sweep_copy *c, struct carried *k, enum sweep_copy_op op, int err)
{
	sweep__report(c, op, err, k->q.src, sweep__dst_show(c, k->q.dst), k->q.cookie);
	if (k->q.ln && k->q.ln->state == LN_PENDING)
		sweep__settle_links(c, k->q.ln, false, op, err);
	sweep__plan_item_free(&k->q);
	free(k->path);
}

void sweep__carry_requeue(struct sweep_copy *c)
{
	size_t n = c->ncarry;

	c->ncarry = 0; /* (a full batch read inside an add may carry none again: each is marked) */
	for (size_t i = 0; i < n; i++) {
		struct carried *k = &c->carry[i];
		if (sweep__copy_stopped(c) || sweep__grow(&c->q, &c->capq, c->nq + 1, sizeof(*c->q), 64) < 0) {
			give_up(c, k, k->err_op, sweep__copy_stopped(c) ? k->err : -ENOMEM);
			continue;
		}
		size_t idx = c->nq++;
		c->q[idx] = k->q;
		c->q[idx].retried = false; /* read again by itself if this batch runs out too, then reported */
		c->q[idx].carried = true;
		int rc = sweep_batch_add_path(c->batch, k->path, &k->st, 0, idx);
		if (rc < 0 && c->nq == idx + 1) {
			c->nq--; /* not added: the item is still this list's */
			give_up(c, k, SWEEP_COPY_OP_OPEN_SRC, rc);
			continue;
		}
		free(k->path);
		if (rc < 0 && !c->stop)
			c->stop = rc;
	}
}

void sweep__carry_free(struct sweep_copy *c)
{
	for (size_t i = 0; i < c->ncarry; i++)
		give_up(c, &c->carry[i], c->carry[i].err_op, c->carry[i].err);
	c->ncarry = 0;
	free(c->carry);
	c->carry = NULL;
	c->capcarry = 0;
}
