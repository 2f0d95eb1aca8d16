/* SPDX-License-Identifier: MIT */
/*
 * The event loop: arrivals (a heap ordered by time, then submission),
 * device events, host dispatch into the device queue, completions.
 *
 * Dispatch at an instant waits until the caller moves the clock past it
 * (or asks for the next event), and first moves every arrival due by then
 * into the host queue, so whatever the caller submits at the instant of a
 * completion competes with the requests already queued: the seed's closed
 * queue keeps exactly Q requests to choose from.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

struct sweep_sim {
	struct sim_dev *dev;
	struct sched *sched;
	struct sim_counters cnt;
	struct sim_stats st;
	uint64_t now, seq, busy_ns, seed;
	uint64_t busy_end; /* the end of the device's last busy period: its last work, destages included */
	bool dispatch_pending;
	struct sim_req **heap;
	size_t nheap, capheap;
	struct sweep_sim_completion *out;
	size_t out_head, out_n, out_cap;
	struct sim_req *free_list;
	struct slab *slabs;
	const char *sched_name;
};

/* Requests come from slabs owned by the model, so freeing it mid-run frees them all. */
#define SLAB_REQS 1024
struct slab {
	struct slab *next;
	struct sim_req r[SLAB_REQS];
};

static struct sim_req *req_alloc(struct sweep_sim *s)
{
	if (!s->free_list) {
		struct slab *sl = malloc(sizeof(*sl));
		if (!sl)
			return NULL;
		sl->next = s->slabs;
		s->slabs = sl;
		for (size_t i = 0; i < SLAB_REQS; i++) {
			sl->r[i].link = s->free_list;
			s->free_list = &sl->r[i];
		}
	}
	struct sim_req *r = s->free_list;
	s->free_list = r->link;
	return r;
}

SWEEP_EXPORT const char *sweep_sim_device_name(unsigned index)
{
	unsigned i = 0;
	for (const char *const *n = sweep__hdd_preset_names; *n; n++, i++)
		if (i == index)
			return *n;
	for (const char *const *n = sweep__ssd_preset_names; *n; n++, i++)
		if (i == index)
			return *n;
	return NULL;
}

SWEEP_EXPORT const char *sweep_sim_sched_name(unsigned index)
{
	for (unsigned i = 0; sweep__sched_names[i]; i++)
		if (i == index)
			return sweep__sched_names[i];
	return NULL;
}

void sweep__dev_done(struct sim_dev *d, struct sim_req *r)
{
	sim_list_append(&d->done_head, &d->done_tail, r);
}

SWEEP_EXPORT int sweep_sim_new(const struct sweep_sim_options *opts, struct sweep_sim **ret_sim)
{
	struct sweep_sim_options o;
	if (!ret_sim)
		return -EINVAL;
	int err = sweep__opts_copy(&o, sizeof(o), opts, SIM_MIN);
	if (err)
		return err;
	const char *dev = o.device ? o.device : "hdd7200";
	const char *sch = o.sched ? o.sched : "fcfs";
	if ((o.nstreams && !o.streams) || o.queue_depth > SWEEP_SIM_MAX_QUEUE_DEPTH)
		return -EINVAL;
	struct sweep_sim *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (o.hdd && o.ssd)
		err = -EINVAL;
	else if (o.hdd)
		err = sweep__hdd_new(o.device ? dev : "custom-hdd", &o, &s->dev);
	else if (o.ssd)
		err = sweep__ssd_new(o.device ? dev : "custom-ssd", &o, &s->dev);
	else if ((err = sweep__hdd_new(dev, &o, &s->dev)) == -EINVAL)
		err = sweep__ssd_new(dev, &o, &s->dev);
	if (!err) {
		s->dev->cnt = &s->cnt;
		err = sweep__sched_new(sch, &o, s->dev, &s->sched);
	}
	if (err) {
		sweep_sim_free(s);
		return err;
	}
	for (unsigned i = 0; sweep__sched_names[i]; i++)
		if (strcmp(sweep__sched_names[i], sch) == 0)
			s->sched_name = sweep__sched_names[i];
	s->seed = o.seed;
	*ret_sim = s;
	return 0;
}

SWEEP_EXPORT struct sweep_sim *sweep_sim_free(struct sweep_sim *s)
{
	if (!s)
		return NULL;
	if (s->dev)
		s->dev->ops->destroy(s->dev);
	sweep__sched_free(s->sched);
	/* requests still queued, in flight or merged go with their slabs */
	for (struct slab *sl = s->slabs, *n; sl; sl = n) {
		n = sl->next;
		free(sl);
	}
	free(s->heap);
	free(s->out);
	sweep__stats_fini(&s->st);
	free(s);
	return NULL;
}

/* ---- arrival heap ---- */

static bool before(const struct sim_req *a, const struct sim_req *b)
{
	return a->r.time_ns < b->r.time_ns || (a->r.time_ns == b->r.time_ns && a->seq < b->seq);
}

static int heap_push(struct sweep_sim *s, struct sim_req *r)
{
	if (s->nheap == s->capheap) {
		size_t n = s->capheap ? s->capheap * 2 : 64;
		struct sim_req **h = realloc(s->heap, n * sizeof(*h));
		if (!h)
			return -ENOMEM;
		s->heap = h;
		s->capheap = n;
	}
	size_t i = s->nheap++;
	while (i && before(r, s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = r;
	return 0;
}

static struct sim_req *heap_pop(struct sweep_sim *s)
{
	struct sim_req *top = s->heap[0], *last = s->heap[--s->nheap];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && before(s->heap[c + 1], s->heap[c]))
			c++;
		if (!before(s->heap[c], last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

SWEEP_EXPORT int sweep_sim_submit(struct sweep_sim *s, const struct sweep_sim_request *req)
{
	if (!s || !req || req->op > SWEEP_SIM_FLUSH || req->time_ns < s->now || req->time_ns > SIM_TIME_MAX ||
	    (req->op == SWEEP_SIM_FLUSH) != !req->length)
		return -EINVAL;
	/* nothing wraps or is cut short: a request that does not fit is the caller's error (issue 32) */
	uint64_t cap = s->dev->capacity;
	if (req->op != SWEEP_SIM_FLUSH && (req->offset >= cap || req->length > cap - req->offset))
		return -ERANGE;
	struct sim_req *r = req_alloc(s);
	if (!r)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	r->r = *req;
	if (req->op == SWEEP_SIM_FLUSH)
		r->r.offset = 0;
	/* the device works in 512-byte sectors: a request covers the sectors it touches */
	r->off = r->r.offset & ~511ull;
	r->len = r->r.offset + r->r.length - r->off;
	r->seq = s->seq++;
	int err = heap_push(s, r);
	if (err) {
		r->link = s->free_list;
		s->free_list = r;
		return err;
	}
	return 0;
}

/* ---- completions ---- */

static int out_push(struct sweep_sim *s, const struct sim_req *head, const struct sim_req *r)
{
	if (s->out_head + s->out_n == s->out_cap) {
		if (s->out_head) {
			memmove(s->out, s->out + s->out_head, s->out_n * sizeof(*s->out));
			s->out_head = 0;
		} else {
			size_t n = s->out_cap ? s->out_cap * 2 : 256;
			struct sweep_sim_completion *o = realloc(s->out, n * sizeof(*o));
			if (!o)
				return -ENOMEM;
			s->out = o;
			s->out_cap = n;
		}
	}
	s->out[s->out_head + s->out_n++] = (struct sweep_sim_completion){
		.id = r->r.id,
		.offset = r->r.offset,
		.length = r->r.length,
		.arrival_ns = r->r.time_ns,
		.dispatch_ns = head->dispatch,
		.start_ns = head->start,
		.finish_ns = head->finish,
		.position = s->dev->ops->key(s->dev, r->off),
		.stream = r->r.stream,
		.op = r->r.op,
		.cache_hit = head->hit,
	};
	return 0;
}

static int collect(struct sweep_sim *s)
{
	struct sim_dev *d = s->dev;
	int err = 0;
	while (d->done_head) {
		struct sim_req *r = d->done_head;
		d->done_head = r->link;
		if (!d->done_head)
			d->done_tail = NULL;
		/* the request and everything merged into it finish together */
		struct sim_req *m = r->merged;
		r->merged = NULL;
		for (struct sim_req *x = r; x;) {
			struct sim_req *next = x == r ? m : x->link;
			x->dispatch = r->dispatch;
			x->start = r->start;
			x->finish = r->finish;
			x->hit = r->hit;
			if (!err)
				err = sweep__stats_record(&s->st, x);
			if (!err)
				err = out_push(s, r, x);
			if (x != r) {
				x->link = s->free_list;
				s->free_list = x;
			}
			x = next;
		}
		r->link = s->free_list;
		s->free_list = r;
	}
	return err;
}

/* Arrivals due by now join the host queue. */
static void admit(struct sweep_sim *s)
{
	while (s->nheap && s->heap[0]->r.time_ns <= s->now)
		sweep__sched_add(s->sched, heap_pop(s));
}

static void dispatch(struct sweep_sim *s)
{
	s->dispatch_pending = false;
	struct sim_dev *d = s->dev;
	/* what the caller submitted at this instant competes with what was queued (sim.h) */
	admit(s);
	while (d->ops->can_accept(d)) {
		struct sim_req *r = sweep__sched_pick(s->sched, s->now);
		if (!r)
			break;
		r->dispatch = s->now;
		d->ops->accept(d, s->now, r);
	}
	d->ops->kick(d, s->now);
}

static uint64_t next_time(const struct sweep_sim *s)
{
	uint64_t t = s->dev->ops->next_event(s->dev);
	if (s->nheap && s->heap[0]->r.time_ns < t)
		t = s->heap[0]->r.time_ns;
	return t != NONE64 && t < s->now ? s->now : t;
}

SWEEP_EXPORT int sweep_sim_next_event(struct sweep_sim *s, uint64_t *ret_ns)
{
	if (!s)
		return -EINVAL;
	if (s->dispatch_pending)
		dispatch(s);
	uint64_t t = next_time(s);
	if (t == NONE64)
		return 0;
	if (ret_ns)
		*ret_ns = t;
	return 1;
}

/* The clock stops at SIM_TIME_MAX: an event past it (a finish beyond the clock's end) is -EOVERFLOW. */
SWEEP_EXPORT int sweep_sim_advance(struct sweep_sim *s, uint64_t until)
{
	if (!s || until < s->now)
		return -EINVAL;
	if (until > SIM_TIME_MAX)
		return -EOVERFLOW;
	if (s->dispatch_pending)
		dispatch(s);
	for (;;) {
		uint64_t t = next_time(s);
		if (t == NONE64 || t > until)
			break;
		if (s->dev->ops->busy(s->dev)) {
			s->busy_ns += t - s->now;
			s->busy_end = t;
		}
		s->now = t;
		admit(s);
		s->dev->ops->process(s->dev, t);
		int err = collect(s);
		if (err)
			return err;
		if (t < until)
			dispatch(s);
		else
			s->dispatch_pending = true;
	}
	if (s->dev->ops->busy(s->dev))
		s->busy_ns += until - s->now;
	s->now = until;
	return (int)(s->out_n < (size_t)INT32_MAX ? s->out_n : INT32_MAX);
}

SWEEP_EXPORT int sweep_sim_poll(struct sweep_sim *s, struct sweep_sim_completion *out, unsigned max)
{
	if (!s || (!out && max))
		return -EINVAL;
	unsigned n = 0;
	while (n < max && s->out_n) {
		out[n++] = s->out[s->out_head++];
		s->out_n--;
	}
	if (!s->out_n)
		s->out_head = 0;
	return (int)n;
}

SWEEP_EXPORT uint64_t sweep_sim_now(const struct sweep_sim *s)
{
	return s ? s->now : 0;
}

SWEEP_EXPORT int sweep_sim_get_stats(const struct sweep_sim *s, struct sweep_sim_stats *ret)
{
	struct sweep_sim_stats st;
	int err = s ? sweep__out_begin(&st, sizeof(st), ret, SIM_MIN) : -EINVAL;
	if (err)
		return err;
	sweep__stats_fill(&s->st, &s->cnt, s->busy_ns, s->busy_end, &st);
	st.host_merges = s->sched->merges;
	sweep__out_put(ret, &st, sizeof(st));
	return 0;
}

SWEEP_EXPORT int sweep_sim_get_info(const struct sweep_sim *s, struct sweep_sim_info *ret)
{
	struct sweep_sim_info i;
	int err = s ? sweep__out_begin(&i, sizeof(i), ret, SIM_MIN) : -EINVAL;
	if (err)
		return err;
	i = (struct sweep_sim_info){
		.device = s->dev->name,
		.sched = s->sched_name,
		.kind = s->dev->kind,
		.capacity = s->dev->capacity,
		.positions = s->dev->nkeys,
		.queue_depth = s->dev->depth,
		.write_back = s->dev->write_back,
		.logical_block_bytes = s->dev->logical_block,
	};
	sweep__out_put(ret, &i, sizeof(i));
	return 0;
}

void sweep__sim_stf_cost(const struct sweep_sim *s, uint64_t *decisions, uint64_t *evals)
{
	*decisions = s->sched->decisions;
	*evals = s->sched->evals;
}

/* ---- replay ---- */

static int64_t drain_completions(struct sweep_sim *s, const struct sweep_sim_run_options *o)
{
	struct sweep_sim_completion c[64];
	int64_t total = 0;
	int n;
	while ((n = sweep_sim_poll(s, c, 64)) > 0) {
		for (int i = 0; i < n; i++)
			if (o->on_complete)
				o->on_complete(o->ctx, &c[i]);
		total += n;
	}
	return total;
}

/* Keep one request from the source at hand: 1 when *have, 0 at its end, or -errno. */
static int pull(sweep_sim_source_fn source, void *ctx, struct sweep_sim_request *req, bool *have, bool *eof)
{
	if (*have || *eof)
		return *have;
	int rc = source(ctx, req);
	if (rc < 0)
		return rc;
	*have = rc > 0;
	*eof = rc == 0;
	return *have;
}

SWEEP_EXPORT int64_t sweep_sim_run(struct sweep_sim *s, sweep_sim_source_fn source, void *ctx,
				   const struct sweep_sim_run_options *opts)
{
	struct sweep_sim_run_options ro;
	if (!s || !source || !opts)
		return -EINVAL;
	int err = sweep__opts_copy(&ro, sizeof(ro), opts, SIM_MIN);
	if (err)
		return err;
	opts = &ro;
	if (opts->mode != SWEEP_SIM_OPEN && opts->mode != SWEEP_SIM_CLOSED)
		return -EINVAL;
	if (opts->depth > SWEEP_SIM_MAX_DEPTH) /* every outstanding request is memory */
		return -EINVAL;
	struct sweep_sim_request req;
	int64_t done = 0, outstanding = 0;
	int rc;
	bool eof = false, have = false;
	uint64_t t, last = s->now;
	unsigned depth = opts->depth ? opts->depth : 1;
	for (;;) {
		if (opts->mode == SWEEP_SIM_CLOSED) {
			/* keep `depth` requests outstanding; new ones arrive now */
			while (outstanding < depth && (rc = pull(source, ctx, &req, &have, &eof)) != 0) {
				if (rc < 0)
					return rc;
				req.time_ns = s->now;
				if ((rc = sweep_sim_submit(s, &req)) < 0)
					return rc;
				have = false;
				outstanding++;
			}
		} else {
			/* submit every request due no later than the next event */
			int ev = sweep_sim_next_event(s, &t);
			while ((rc = pull(source, ctx, &req, &have, &eof)) != 0) {
				if (rc < 0)
					return rc;
				if (req.time_ns < last) /* traces are not always sorted */
					req.time_ns = last;
				last = req.time_ns;
				if (ev && req.time_ns > t)
					break;
				if (req.time_ns < s->now)
					req.time_ns = s->now;
				if ((rc = sweep_sim_submit(s, &req)) < 0)
					return rc;
				have = false;
				ev = sweep_sim_next_event(s, &t);
			}
		}
		rc = sweep_sim_next_event(s, &t);
		if (rc <= 0)
			break;
		if ((rc = sweep_sim_advance(s, t)) < 0)
			return rc;
		int64_t n = drain_completions(s, opts);
		done += n;
		outstanding -= n;
	}
	return done;
}
