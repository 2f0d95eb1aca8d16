/* SPDX-License-Identifier: MIT */
/*
 * Every disk at once (SWEEP_READ_BY_DEVICE, DESIGN §3c): a plan sorted into
 * groups (plan_group.c), each the files of disks no other group's files
 * share, is read by one reader per group, all in flight together; the
 * first group on the caller's thread, the others on threads of their own.
 *
 * The caller still sees each file whole, begin to end, and never two
 * callbacks at once: a reader delivers only while it holds the baton. It
 * takes the baton at a file's begin (or at end, for a file that could not
 * be opened), keeps it while it has files ready, and lets it go between
 * two files when it is about to wait for its disk, or when others are
 * waiting and it has delivered its share (QUANTUM_FILES or QUANTUM_BYTES)
 * since it took it. Waiting readers get the baton in the order they asked
 * for it: the files of the disks come out as the disks deliver them. A
 * reader waiting for the baton stops submitting, but what it has in flight
 * completes, and on a disk its prefetch thread (reader_prefetch.c) keeps
 * asking the disk for the data ahead: the page cache holds it until the
 * baton comes.
 *
 * A callback's negative return stops every reader (each stops at its next
 * callback, or at once where it waits for the baton); the first such value
 * is what the run returns, as a reader's own failure (-ENOMEM) is.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reader_impl.h"

#define QUANTUM_FILES 64u
#define QUANTUM_BYTES (8u << 20)

struct baton {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int holder;             /* lane holding it, -1: none */
	uint64_t next, serving; /* tickets: the order lanes asked in */
	unsigned waiting;       /* lanes waiting for it (read without the lock as a hint) */
	int stop;               /* the first negative value that stopped the run, 0 while running */
	const struct sweep_read_ops *ops;
	void *ctx;
};

struct lane {
	struct baton *b;
	int id;
	struct sweep_reader *r;
	struct sweep__read_part part;
	bool held, in_file, started;
	unsigned files;  /* delivered since it took the baton */
	uint64_t bytes;
	int rc;
	pthread_t tid;
};

static uint64_t lanes_run; /* readers run side by side in this process (tests) */

uint64_t sweep__reader_lanes_run(void)
{
	return __atomic_load_n(&lanes_run, __ATOMIC_RELAXED);
}

bool sweep__by_device_env_off(void)
{
	const char *v = getenv("SWEEP_BY_DEVICE");
	return v && (!strcasecmp(v, "off") || !strcmp(v, "0") || !strcasecmp(v, "no"));
}

static void stop_all(struct baton *b, int rc)
{
	pthread_mutex_lock(&b->mu);
	if (!b->stop)
		b->stop = rc;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

/* Take the baton, in turn. 0, or the value that stopped the run. */
static int take(struct lane *l)
{
	struct baton *b = l->b;
	int rc;

	if (l->held)
		return 0;
	pthread_mutex_lock(&b->mu);
	uint64_t ticket = b->next++;
	__atomic_add_fetch(&b->waiting, 1, __ATOMIC_RELAXED);
	while (!b->stop && (b->holder != -1 || b->serving != ticket))
		pthread_cond_wait(&b->cv, &b->mu);
	__atomic_sub_fetch(&b->waiting, 1, __ATOMIC_RELAXED);
	rc = b->stop;
	if (!rc) {
		b->holder = l->id;
		b->serving++;
		l->held = true;
		l->files = 0;
		l->bytes = 0;
	}
	pthread_mutex_unlock(&b->mu);
	return rc;
}

static void give(struct lane *l)
{
	struct baton *b = l->b;

	if (!l->held)
		return;
	pthread_mutex_lock(&b->mu);
	b->holder = -1;
	l->held = false;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

static int stopped(struct lane *l)
{
	return __atomic_load_n(&l->b->stop, __ATOMIC_RELAXED);
}

/* The caller's callback returned rc: a negative one stops every lane. */
static int result(struct lane *l, int rc)
{
	if (rc < 0)
		stop_all(l->b, rc);
	return rc;
}

/* Before a begin or an end: the baton, unless the run was stopped. */
static int enter(struct lane *l)
{
	int rc = take(l);
	return rc < 0 ? rc : stopped(l);
}

static int lane_begin(const struct sweep_file *f, void *arg)
{
	struct lane *l = arg;
	int rc = enter(l);

	if (rc < 0)
		return rc;
	l->in_file = true;
	return result(l, l->b->ops->begin ? l->b->ops->begin(f, l->b->ctx) : 0);
}

static int lane_data(const struct sweep_file *f, uint64_t off, const void *buf, size_t len, void *arg)
{
	struct lane *l = arg;
	int rc = stopped(l);

	if (rc < 0)
		return rc;
	l->bytes += len;
	return result(l, l->b->ops->data(f, off, buf, len, l->b->ctx));
}

static int lane_end(const struct sweep_file *f, int status, void *arg)
{
	struct lane *l = arg;
	int rc = enter(l);

	if (rc < 0)
		return rc;
	rc = result(l, l->b->ops->end ? l->b->ops->end(f, status, l->b->ctx) : 0);
	l->in_file = false;
	/* Its share delivered while others wait: their turn (between two files only). */
	if (++l->files >= QUANTUM_FILES || l->bytes >= QUANTUM_BYTES)
		if (__atomic_load_n(&l->b->waiting, __ATOMIC_RELAXED))
			give(l);
	return rc;
}

/* The reader is about to wait for its disk, between two files: let the others deliver meanwhile. */
static void lane_idle(void *arg)
{
	struct lane *l = arg;

	if (!l->in_file)
		give(l);
}

/* Without the baton: it only looks (sweep_read_ops). */
static bool lane_read_after_begin(const struct sweep_file *f, void *arg)
{
	struct lane *l = arg;

	return l->b->ops->read_after_begin && l->b->ops->read_after_begin(f, l->b->ctx);
}

static const struct sweep_read_ops lane_ops = {
	.size = sizeof(struct sweep_read_ops),
	.begin = lane_begin,
	.data = lane_data,
	.end = lane_end,
	.read_after_begin = lane_read_after_begin,
};

static void lane_run(struct lane *l, const struct sweep_plan *p)
{
	l->rc = sweep__reader_run_part(l->r, p, &l->part, &lane_ops, l);
	if (l->rc < 0)
		stop_all(l->b, l->rc); /* the reader's own failure (-ENOMEM): the others stop too */
	give(l);
}

struct lane_arg {
	struct lane *l;
	const struct sweep_plan *p;
};

static void *lane_main(void *arg)
{
	struct lane_arg *a = arg;
	lane_run(a->l, a->p);
	free(a);
	return NULL;
}

int sweep__reader_run_groups(struct sweep_reader *r, const struct sweep_plan *p, const struct sweep__plan_group *g,
			     size_t ng, const struct sweep_read_ops *ops, void *ctx)
{
	struct baton b = { .holder = -1, .ops = ops, .ctx = ctx };
	struct lane *lanes = calloc(ng, sizeof(*lanes));
	int rc = 0;

	if (!lanes)
		return -ENOMEM;
	pthread_mutex_init(&b.mu, NULL);
	pthread_cond_init(&b.cv, NULL);
	for (size_t i = 0; i < ng; i++) {
		struct lane *l = &lanes[i];
		l->b = &b;
		l->id = (int)i;
		l->part = (struct sweep__read_part){ .first = g[i].first, .end = g[i].end, .members = g[i].members,
						     .share = (unsigned)ng, .idle = lane_idle, .idle_arg = l };
		/* The first group is read by the caller's reader, the others by readers of their own. */
		if (i == 0) {
			l->r = r;
		} else if ((rc = sweep_reader_new(&r->opts, &l->r)) < 0) {
			goto out;
		} else {
			sweep__reader_copy_hooks(l->r, r);
		}
	}
	for (size_t i = 1; i < ng; i++) {
		struct lane_arg *a = malloc(sizeof(*a));
		if (a) {
			*a = (struct lane_arg){ .l = &lanes[i], .p = p };
			lanes[i].started = sweep__thread_start(&lanes[i].tid, lane_main, a) == 0;
			if (!lanes[i].started)
				free(a);
		}
	}
	lanes[0].started = true;
	unsigned at_once = 0;
	for (size_t i = 0; i < ng; i++)
		at_once += lanes[i].started;
	__atomic_add_fetch(&lanes_run, at_once, __ATOMIC_RELAXED);
	lane_run(&lanes[0], p);
	for (size_t i = 1; i < ng; i++)
		if (lanes[i].started)
			pthread_join(lanes[i].tid, NULL);
	/* A thread that could not be made: its group now, after the others. */
	for (size_t i = 1; i < ng; i++)
		if (!lanes[i].started && !b.stop)
			lane_run(&lanes[i], p);
	rc = b.stop;
	for (size_t i = 0; i < ng && rc == 0; i++)
		if (lanes[i].rc < 0)
			rc = lanes[i].rc;
	if (at_once > r->stats.devices)
		r->stats.devices = at_once;
out:
	for (size_t i = 1; i < ng; i++) {
		if (lanes[i].r) {
			sweep__reader_add_stats(r, lanes[i].r);
			sweep_reader_free(lanes[i].r);
		}
	}
	pthread_cond_destroy(&b.cv);
	pthread_mutex_destroy(&b.mu);
	free(lanes);
	return rc;
}
