/* SPDX-License-Identifier: MIT */
/* batch: add, and when full sort, read and clear (see include/sweep/batch.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

#define DEFAULT_FILES 4096

struct sweep_batch {
	struct sweep_batch_opts o;
	struct sweep_read_ops ops;
	bool have_ops;
	struct sweep_plan *plan;
	struct sweep_reader *reader;
	struct sweep_batch_stats stats;
	int stop; /* the first negative value a batch ended with: nothing more is read */
};

SWEEP_EXPORT int sweep_batch_new(const struct sweep_batch_opts *opts, struct sweep_batch **ret)
{
	struct sweep_batch *b;
	int rc;

	if (!ret)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	rc = sweep__opts_copy(&b->o, sizeof(b->o), opts, offsetof(struct sweep_batch_opts, order) + sizeof(b->o.order));
	if (rc == 0 && b->o.ops)
		rc = sweep__opts_copy(&b->ops, sizeof(b->ops), b->o.ops,
				      offsetof(struct sweep_read_ops, data) + sizeof(b->ops.data));
	b->have_ops = b->o.ops != NULL;
	if (rc == 0) {
		struct sweep_plan_opts po = {
			.size = sizeof(po),
			.order = b->o.order,
			.max_entries = b->o.max_files ? b->o.max_files : DEFAULT_FILES,
			.max_bytes = b->o.max_bytes,
			.flags = b->o.plan_flags,
		};
		struct sweep_reader_opts ro = {
			.size = sizeof(ro),
			.backend = b->o.backend,
			.queue_depth = b->o.queue_depth,
			.buffer_size = b->o.buffer_size,
			.max_buffered = b->o.max_buffered,
			.flags = b->o.read_flags,
		};
		rc = sweep_plan_new(&po, &b->plan);
		/* A batch is sorted before anyone looks at a location: locate it all at once then. */
		sweep__plan_defer_locate(b->plan, true);
		if (rc == 0)
			rc = sweep_reader_new(&ro, &b->reader);
	}
	if (rc < 0) {
		sweep_batch_free(b);
		return rc;
	}
	b->stats.read.size = sizeof(b->stats.read);
	*ret = b;
	return 0;
}

SWEEP_EXPORT struct sweep_batch *sweep_batch_free(struct sweep_batch *b)
{
	if (b) {
		sweep_plan_free(b->plan);
		sweep_reader_free(b->reader);
		free(b);
	}
	return NULL;
}

SWEEP_EXPORT int sweep_batch_flush(struct sweep_batch *b)
{
	int rc = 0;

	if (!b)
		return -EINVAL;
	if (b->stop)
		return b->stop;
	if (sweep_plan_count(b->plan) == 0)
		return 0;
	size_t mem = sweep_plan_memory(b->plan);
	b->stats.batches++;
	b->stats.plan_memory_sum += mem;
	if (mem > b->stats.plan_memory_peak)
		b->stats.plan_memory_peak = mem;
	if (b->o.on_sort)
		rc = b->o.on_sort(b->plan, b->o.ctx);
	if (rc == 0)
		rc = sweep_plan_sort(b->plan);
	if (rc == 0 && b->o.on_batch)
		rc = b->o.on_batch(b->plan, b->o.ctx);
	if (rc == 0 && b->have_ops)
		rc = sweep_reader_run(b->reader, b->plan, &b->ops, b->o.ctx);
	else if (rc == SWEEP_BATCH_NO_READ)
		rc = 0;
	if (b->o.on_batch_end) {
		int e = b->o.on_batch_end(b->plan, rc, b->o.ctx);
		if (e < 0 && rc >= 0)
			rc = e;
	}
	sweep_plan_clear(b->plan);
	if (rc < 0)
		b->stop = rc;
	return rc < 0 ? rc : 0;
}

/* After an add: the plan said the batch is full (1), or the add failed (<0). */
static int added(struct sweep_batch *b, int rc)
{
	if (rc < 0)
		return rc;
	b->stats.files++;
	return rc == 1 ? sweep_batch_flush(b) : 0;
}

SWEEP_EXPORT int sweep_batch_add_entry(struct sweep_batch *b, const struct sweep_entry *e, uint64_t cookie)
{
	if (!b || !e)
		return -EINVAL;
	if (b->stop)
		return b->stop;
	return added(b, sweep_plan_add_entry(b->plan, e, cookie));
}

SWEEP_EXPORT int sweep_batch_add_beneath(struct sweep_batch *b, int root_fd, const char *rel, const char *path,
					 const struct sweep_stat *st, uint64_t cookie)
{
	if (!b || !st)
		return -EINVAL;
	if (b->stop)
		return b->stop;
	return added(b, sweep_plan_add_beneath(b->plan, root_fd, rel, path, st, cookie));
}

SWEEP_EXPORT int sweep_batch_add_path(struct sweep_batch *b, const char *path, const struct sweep_stat *st,
				      int follow, uint64_t cookie)
{
	if (!b || !st)
		return -EINVAL;
	if (b->stop)
		return b->stop;
	return added(b, sweep__plan_add_path(b->plan, path, st, follow != 0, cookie));
}

SWEEP_EXPORT int sweep_batch_stats(const struct sweep_batch *b, struct sweep_batch_stats *ret)
{
	struct sweep_batch_stats s;
	int rc = b ? sweep__out_begin(&s, sizeof(s), ret, sizeof(size_t)) : -EINVAL;

	if (rc < 0)
		return rc;
	s = b->stats;
	sweep_reader_stats(b->reader, &s.read);
	sweep__out_put(ret, &s, sizeof(s));
	return 0;
}

SWEEP_EXPORT enum sweep_backend sweep_batch_backend(const struct sweep_batch *b)
{
	return sweep_reader_backend(b ? b->reader : NULL);
}
