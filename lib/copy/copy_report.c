/* SPDX-License-Identifier: MIT */
/*
 * copy: the caller's callbacks (on_error, on_done, on_step, on_bytes) and
 * the run's stop state. A callback's negative value stops the run; so does
 * the caller's cancel flag. Everything here is called on the caller's
 * thread, except sweep__report_step_raw(), which the writer thread calls
 * for SWEEP_COPY_STEP_WRITTEN (the point between completing a copy and
 * naming it can only be the thread's); on_step calls never overlap.
 */
#include <errno.h>

#include "copy_internal.h"

int sweep__copy_stopped(struct sweep_copy *c)
{
	if (!c->stop && c->o.cancel && *c->o.cancel)
		c->stop = -ECANCELED;
	return c->stop;
}

static void stop_on(struct sweep_copy *c, int rc)
{
	if (rc < 0 && !c->stop)
		c->stop = rc;
}

int sweep__report(struct sweep_copy *c, enum sweep_copy_op op, int err, const char *src, const char *dst,
		  uint64_t cookie)
{
	struct sweep_copy_error ce = { .op = op, .err = err, .src = src, .dst = dst, .cookie = cookie };

	if (op != SWEEP_COPY_OP_CHANGED)
		c->stats.errors++;
	if (c->o.on_error)
		stop_on(c, c->o.on_error(&ce, c->o.ctx));
	return err ? err : -EINVAL;
}

void sweep__report_meta(struct sweep_copy *c, enum sweep_copy_meta op, int err, const char *src, const char *dst,
			uint64_t cookie)
{
	struct sweep_copy_error ce = { .op = SWEEP_COPY_OP_META, .meta = op, .err = err, .src = src, .dst = dst,
				       .cookie = cookie };

	c->stats.errors++;
	if (c->o.on_error)
		stop_on(c, c->o.on_error(&ce, c->o.ctx));
}

void sweep__report_done(struct sweep_copy *c, const char *src, const char *dst, const struct sweep_stat *st,
			enum sweep_copy_how how, uint64_t bytes, uint64_t cookie, bool existed)
{
	sweep__report_done_backup(c, src, dst, st, how, bytes, cookie, existed, NULL);
}

void sweep__report_done_backup(struct sweep_copy *c, const char *src, const char *dst, const struct sweep_stat *st,
			       enum sweep_copy_how how, uint64_t bytes, uint64_t cookie, bool existed,
			       const char *backup)
{
	struct sweep_copy_done d = { .src = src, .dst = dst, .st = st, .how = how, .bytes = bytes, .cookie = cookie,
				     .existed = existed, .backup = backup };

	switch (how) {
	case SWEEP_COPY_HOW_DATA:
	case SWEEP_COPY_HOW_CLONE:
	case SWEEP_COPY_HOW_RANGE:
		c->stats.files++;
		break;
	case SWEEP_COPY_HOW_DIR:
		c->stats.dirs++;
		break;
	case SWEEP_COPY_HOW_SKIPPED:
		c->stats.skipped++;
		break;
	default:
		c->stats.others++;
	}
	if (how == SWEEP_COPY_HOW_CLONE)
		c->stats.cloned++;
	if (how == SWEEP_COPY_HOW_RANGE)
		c->stats.ranged++;
	if (c->o.on_done)
		stop_on(c, c->o.on_done(&d, c->o.ctx));
}

int sweep__report_step_raw(struct sweep_copy *c, enum sweep_copy_step step, const char *src, const char *dst,
			   uint64_t cookie)
{
	if (!c->o.on_step)
		return 0;
	pthread_mutex_lock(&c->step_mu);
	int rc = c->o.on_step(step, src, dst, cookie, c->o.ctx);
	pthread_mutex_unlock(&c->step_mu);
	return rc;
}

int sweep__report_step(struct sweep_copy *c, enum sweep_copy_step step, const char *src, const char *dst,
		       uint64_t cookie)
{
	stop_on(c, sweep__report_step_raw(c, step, src, dst, cookie));
	return sweep__copy_stopped(c);
}

void sweep__report_bytes(struct sweep_copy *c, uint64_t n)
{
	if (n && c->o.on_bytes)
		c->o.on_bytes(n, c->o.ctx);
}

struct meta_ctx {
	struct sweep_copy *c;
	const char *src, *dst;
	uint64_t cookie;
};

static void meta_failed(enum sweep_copy_meta op, int err, void *ctx)
{
	struct meta_ctx *m = ctx;

	sweep__report_meta(m->c, op, err, m->src, m->dst, m->cookie);
}

void sweep__report_apply_meta(struct sweep_copy *c, const struct meta_ref *src, const struct meta_ref *dst,
			      const struct sweep_stat *st, unsigned what, const char *src_name, const char *dst_name,
			      uint64_t cookie)
{
	struct meta_ctx m = { .c = c, .src = src_name, .dst = dst_name, .cookie = cookie };

	if (what)
		sweep__meta_copy(src, dst, st, what, &c->o, meta_failed, &m);
}
