/* SPDX-License-Identifier: MIT */
/*
 * copy, stage 4 of 4 (settle): a finished copy reported on the caller's
 * thread, in the order its source was read: the metadata steps that
 * failed, then the copy failed, or changed while read, or done; then the
 * other names of its inode linked to it (or failed with it). A copy that
 * failed only for want of a descriptor is kept to be read again once the
 * batch is done (copy_read.c), the first time.
 */
#include <errno.h>
#include <stdlib.h>

#include "copy_internal.h"

/*
 * Failed for want of a descriptor (its open, its copy's, or the directory
 * its copy was to be named in: nothing of it is in place then, and a named
 * temporary is removed as the copy is closed), and not read again yet.
 */
static bool out_of_fds(const struct sweep_copy *c, const struct fcopy *f)
{
	return (f->err == -EMFILE || f->err == -ENFILE) &&
	       (f->err_op == SWEEP_COPY_OP_OPEN_SRC || f->err_op == SWEEP_COPY_OP_CREATE ||
		f->err_op == SWEEP_COPY_OP_RENAME) && !f->q->retried &&
	       f->q >= c->q && f->q < c->q + c->nq && !f->placed;
}

void sweep__settle_links(struct sweep_copy *c, struct lnode *n, bool ok, enum sweep_copy_op op, int err)
{
	n->state = ok ? LN_DONE : LN_FAILED;
	for (size_t i = 0; i < n->nfol; i++) {
		struct follower *f = &n->fol[i];
		if (ok) {
			/*
			 * Out of descriptors (a low open-file limit, the batch's
			 * files holding the rest): linked once the batch is read.
			 */
			int rc = sweep__make_link_or_defer(c, n->dst, f->src, f->dst, &f->st, f->cookie);
			if ((rc == -EMFILE || rc == -ENFILE) &&
			    sweep__grow(&c->late, &c->caplate, c->nlate + 1, sizeof(*c->late), 16) == 0) {
				c->late[c->nlate++] = (struct late_link){ .f = *f, .target = n->dst };
				continue; /* its names are the list's now */
			}
			if (rc == -EMFILE || rc == -ENFILE) /* no memory to defer it: as it failed */
				sweep__make_link(c, n->dst, f->src, f->dst, &f->st, f->cookie);
		} else {
			sweep__report(c, op, err, f->src, sweep__dst_show(c, f->dst), f->cookie);
		}
		free(f->src);
	}
	free(n->fol);
	n->fol = NULL;
	n->nfol = n->capfol = 0;
}

void sweep__settle_late_links(struct sweep_copy *c)
{
	for (size_t i = 0; i < c->nlate; i++) {
		struct late_link *l = &c->late[i];
		if (sweep__copy_stopped(c))
			sweep__report(c, SWEEP_COPY_OP_LINK, -ECANCELED, l->f.src, sweep__dst_show(c, l->f.dst), l->f.cookie);
		else
			sweep__make_link(c, l->target, l->f.src, l->f.dst, &l->f.st, l->f.cookie);
		free(l->f.src);
	}
	c->nlate = 0;
}

void sweep__settle_file(struct sweep_copy *c, const struct fcopy *f)
{
	const struct qitem *q = f->q;

	if (f->step_rc < 0 && !c->stop)
		c->stop = f->step_rc;
	if (out_of_fds(c, f) && !sweep__copy_stopped(c) &&
	    sweep__grow(&c->retry, &c->capretry, c->nretry + 1, sizeof(*c->retry), 16) == 0) {
		c->retry[c->nretry++] = (size_t)(q - c->q);
		return;
	}
	if (sweep__carry(c, f))
		return;
	c->stats.bytes += f->bytes;
	for (size_t i = 0; i < f->nmfail; i++)
		sweep__report_meta(c, f->mfail[i].op, f->mfail[i].err, q->src, sweep__dst_show(c, q->dst), q->cookie);
	if (f->err) {
		sweep__report(c, f->err_op, f->err, q->src, sweep__dst_show(c, q->dst), q->cookie);
		if (q->ln)
			sweep__settle_links(c, q->ln, false, f->err_op, f->err);
	} else if (f->placed || !sweep__copy_stopped(c)) {
		/* (A copy in place is reported even when the run stopped meanwhile: the writer thread may be ahead.) */
		if (f->status > 0)
			sweep__report(c, SWEEP_COPY_OP_CHANGED, 0, q->src, sweep__dst_show(c, q->dst), q->cookie);
		/* Done: the file was opened, and what was copied is what it said (st). */
		char *bk = sweep__dest_backup_show(c, q->dst, f->backup);
		sweep__report_done_backup(c, q->src, sweep__dst_show(c, q->dst), &f->st, f->how, f->bytes, q->cookie,
					  q->existed, bk);
		free(bk);
		if (q->ln && !sweep__copy_stopped(c))
			sweep__settle_links(c, q->ln, true, 0, 0);
	}
}
