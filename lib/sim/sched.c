/* SPDX-License-Identifier: MIT */
/*
 * Host schedulers. All of them see the same host queue: arrival-order
 * lists per direction (read/write) and the position-bucketed queue; each
 * policy is one pick function over it.
 *
 *  fcfs        arrival order, no merging (the seed's FCFS)
 *  noop        arrival order with back/front merging of adjacent requests
 *  ssf         shortest seek first (nearest cylinder)
 *  scan        elevator, reversing at the ends
 *  cscan       one-way elevator, one long seek back per sweep
 *  stf, sptf   shortest (positioning + transfer) time first
 *  gstf        STF inside a cylinder group, groups served in C-SCAN order
 *  gstf-freeze the seed's variant: a group's queue is frozen when its service
 *              starts; later arrivals in it wait for the next visit
 *  wstf        STF with the seed's aging: T * (M - E) / M
 *  deadline    Linux deadline: sorted batches, read/write expiry, reads preferred
 *  irbw-fifo   individual reads, writes bundled per logical block, FIFO
 *  irbw-fifo-rp  the same with read preference (a bundle yields once)
 *  bw, bw-ssf  the bandwidth class of userspace-io-scheduling-tar.txt §2:
 *              token buckets, per-stream rate and deadline, C-SCAN (bw) or
 *              SSF (bw-ssf) elevator, work conserving
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

const char *const sweep__sched_names[] = { "fcfs", "noop", "ssf", "scan", "cscan", "stf", "sptf", "gstf",
				    "wstf", "deadline", "irbw-fifo", "irbw-fifo-rp", "bw", "bw-ssf",
				    "gstf-freeze", NULL };

/* ---- the STF index ---- */

/* Position of (off, seq) in a bucket sorted by offset, then submission. */
static uint32_t sb_lower(const struct sbucket *b, uint64_t off, uint64_t seq)
{
	uint32_t lo = 0, hi = (uint32_t)b->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct sim_req *x = b->v[mid];
		if (x->off < off || (x->off == off && x->seq < seq))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint32_t sweep__sbucket_first(const struct sbucket *b, uint64_t off)
{
	return sb_lower(b, off, 0);
}

static bool heap_less(const struct sim_req *a, const struct sim_req *b)
{
	return a->hkey < b->hkey || (a->hkey == b->hkey && a->seq < b->seq);
}

static void heap_set(struct sim_req **h, size_t i, struct sim_req *r)
{
	h[i] = r;
	r->hidx = (uint32_t)i;
}

static void heap_sift(struct sim_req **h, size_t n, size_t i)
{
	struct sim_req *r = h[i];
	while (i && heap_less(r, h[(i - 1) / 2])) {
		heap_set(h, i, h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && heap_less(h[c + 1], h[c]))
			c++;
		if (!heap_less(h[c], r))
			break;
		heap_set(h, i, h[c]);
		i = c;
	}
	heap_set(h, i, r);
}

/* Keep the index in step with the queue. Allocation failures leave it off (s->sorted NULL): slower, still right. */
static void index_add(struct sched *s, struct sim_req *r)
{
	if (s->sorted) {
		struct sbucket *b = &s->sorted[r->key];
		if (sweep__grow(&b->v, &b->cap, b->n + 1, sizeof(*b->v), 4) == 0) {
			uint32_t i = sb_lower(b, r->off, r->seq);
			memmove(b->v + i + 1, b->v + i, (b->n - i) * sizeof(*b->v));
			b->v[i] = r;
			b->n++;
		}
	}
	if (s->flat_index) {
		/* a flat device's estimate does not change with time or position: keyed once */
		uint64_t xfer;
		r->hkey = s->dev->ops->estimate(s->dev, 0, r, &xfer);
		int op = r->r.op;
		if (sweep__grow(&s->heap[op], &s->capheap[op], s->nheap[op] + 1, sizeof(*s->heap[op]), 64) == 0) {
			heap_set(s->heap[op], s->nheap[op]++, r);
			heap_sift(s->heap[op], s->nheap[op], s->nheap[op] - 1);
		}
	}
}

static void index_remove(struct sched *s, struct sim_req *r)
{
	if (s->sorted) {
		struct sbucket *b = &s->sorted[r->key];
		uint32_t i = sb_lower(b, r->off, r->seq);
		if (i < b->n && b->v[i] == r) {
			memmove(b->v + i, b->v + i + 1, (b->n - i - 1) * sizeof(*b->v));
			b->n--;
		}
	}
	int op = r->r.op;
	if (s->nheap[op] && r->hidx < s->nheap[op] && s->heap[op][r->hidx] == r) {
		struct sim_req *last = s->heap[op][--s->nheap[op]];
		if (last != r) {
			heap_set(s->heap[op], r->hidx, last);
			heap_sift(s->heap[op], s->nheap[op], last->hidx);
		}
	}
}

/* ---- the host queue ---- */

static void fifo_unlink(struct hq *q, struct sim_req *r)
{
	int op = r->r.op;
	if (r->fprev)
		r->fprev->fnext = r->fnext;
	else
		q->fhead[op] = r->fnext;
	if (r->fnext)
		r->fnext->fprev = r->fprev;
	else
		q->ftail[op] = r->fprev;
	r->fprev = r->fnext = NULL;
}

static void hq_remove(struct sched *s, struct sim_req *r)
{
	if (s->last_in == r)
		s->last_in = NULL; /* dispatched: nothing merges into it any more */
	index_remove(s, r);
	fifo_unlink(&s->q, r);
	sweep__posq_remove(&s->q.pos, r);
	s->q.count--;
	s->q.count_op[r->r.op]--;
}

/* Merge r into x (adjacent, same direction, room left): true when done. */
static bool merge_into(struct sched *s, struct sim_req *x, struct sim_req *r)
{
	struct sim_dev *d = s->dev;
	if (x->r.op != r->r.op || x->len + r->len > s->max_merge)
		return false;
	if (x->off + x->len == r->off) {
		x->len += r->len; /* back merge */
	} else if (r->off + r->len == x->off) {
		x->off = r->off; /* front merge: the start moves, so may the bucket */
		x->len += r->len;
		uint64_t nk = d->ops->key(d, x->off);
		if (nk != x->key) {
			sweep__posq_remove(&s->q.pos, x);
			x->key = nk;
			sweep__posq_insert(&s->q.pos, x);
		}
	} else {
		return false;
	}
	r->link = x->merged;
	x->merged = r;
	s->merges++;
	return true;
}

/* Merge r into a queued neighbour of the same direction. */
static bool try_merge(struct sched *s, struct sim_req *r)
{
	struct sim_dev *d = s->dev;
	if (s->ops->pick_one_merge) {
		/* noop: only into what the submission just before it went into, "sequential requests only
		 * if they arrive one after the other" (block-level-optimization-io-path.txt §5) */
		struct sim_req *x = s->last_in;
		bool ok = x && s->last_in_seq + 1 == r->seq && merge_into(s, x, r);
		s->last_in_seq = r->seq;
		s->last_in = ok ? x : r;
		return ok;
	}
	uint64_t lo = d->ops->key(d, r->off > s->max_merge ? r->off - s->max_merge : 0);
	uint64_t hi = d->ops->key(d, r->off + r->len);
	for (uint64_t k = sweep__posq_next(&s->q.pos, lo); k != NONE64 && k <= hi; k = sweep__posq_next(&s->q.pos, k + 1)) {
		for (struct sim_req *x = s->q.pos.head[k]; x; x = x->pnext)
			if (merge_into(s, x, r))
				return true;
	}
	return false;
}

void sweep__sched_add(struct sched *s, struct sim_req *r)
{
	r->key = s->dev->ops->key(s->dev, r->off);
	if (r->r.op == SWEEP_SIM_FLUSH) {
		/* flushes bypass the elevator, in arrival order, each behind what was submitted before it */
		sim_list_append(&s->flush_head, &s->flush_tail, r);
		return;
	}
	if (s->ops->merges && try_merge(s, r))
		return;
	struct hq *q = &s->q;
	int op = r->r.op;
	r->fnext = NULL;
	r->fprev = q->ftail[op];
	if (q->ftail[op])
		q->ftail[op]->fnext = r;
	else
		q->fhead[op] = r;
	q->ftail[op] = r;
	sweep__posq_insert(&q->pos, r);
	q->count++;
	q->count_op[op]++;
	if (r->seq > s->max_seq || s->max_seq == NONE64)
		s->max_seq = r->seq;
	index_add(s, r);
}

static struct sim_req *oldest(const struct sched *s)
{
	struct sim_req *a = s->q.fhead[0], *b = s->q.fhead[1];
	if (!a)
		return b;
	if (!b)
		return a;
	return a->seq < b->seq ? a : b;
}

static uint64_t dist(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* ---- seek-ordered policies ---- */

/*
 * The elevators continue from the bucket of the last request they sent,
 * not from where its transfer left the head: a 4 KiB read that crosses
 * into the next cylinder must not make the sweep skip the rest of its own
 * cylinder (those requests would wait a whole extra sweep).
 */

static struct sim_req *pick_fcfs(struct sched *s, uint64_t now)
{
	(void)now;
	return oldest(s);
}

static struct sim_req *pick_ssf(struct sched *s, uint64_t now)
{
	(void)now;
	uint64_t h = s->dev->ops->head_key(s->dev);
	uint64_t up = sweep__posq_next(&s->q.pos, h), dn = sweep__posq_prev(&s->q.pos, h);
	uint64_t k = up;
	if (up == NONE64 || (dn != NONE64 && dist(dn, h) < dist(up, h)))
		k = dn;
	return k == NONE64 ? NULL : s->q.pos.head[k];
}

static struct sim_req *pick_scan(struct sched *s, uint64_t now)
{
	(void)now;
	uint64_t h = s->last_key, k;
	if (s->dir >= 0) {
		k = sweep__posq_next(&s->q.pos, h);
		if (k == NONE64) {
			s->dir = -1;
			k = sweep__posq_prev(&s->q.pos, h);
		}
	} else {
		k = sweep__posq_prev(&s->q.pos, h);
		if (k == NONE64) {
			s->dir = 1;
			k = sweep__posq_next(&s->q.pos, h);
		}
	}
	return k == NONE64 ? NULL : s->q.pos.head[k];
}

static struct sim_req *pick_cscan(struct sched *s, uint64_t now)
{
	(void)now;
	uint64_t k = sweep__posq_next(&s->q.pos, s->last_key);
	if (k == NONE64)
		k = sweep__posq_next(&s->q.pos, 0);
	return k == NONE64 ? NULL : s->q.pos.head[k];
}

/* ---- time-ordered policies ---- */

/*
 * WSTF past M: the paper's weight (M - E) / M would turn negative. Serving
 * the overdue oldest-first is FCFS, which at long queues never recovers
 * (every request ends up overdue: issue 13). So the overdue requests (the
 * heads of the arrival lists) are chosen among themselves by positioning
 * time, still aged: weighted by M / E, the longer overdue the cheaper.
 */
static struct sim_req *overdue_pick(struct sched *s, uint64_t now)
{
	struct sim_dev *d = s->dev;
	double M = (double)s->max_resp, bt = 0;
	struct sim_req *best = NULL;
	for (int op = 0; op < 2; op++)
		for (struct sim_req *r = s->q.fhead[op]; r && now - r->r.time_ns >= s->max_resp; r = r->fnext) {
			uint64_t xfer;
			double t = (double)d->ops->estimate(d, now, r, &xfer) - (double)xfer;
			t *= M / (double)(now - r->r.time_ns);
			if (!best || t < bt || (t == bt && r->seq < best->seq)) {
				best = r;
				bt = t;
			}
		}
	return best;
}

void sweep__stf_consider(struct sim_dev *d, struct stf_ctx *c, struct sim_req *r)
{
	if (r->seq > c->max_seq)
		return; /* GSTF freeze: arrived after its group was frozen */
	uint64_t xfer;
	double t = (double)d->ops->estimate(d, c->now, r, &xfer);
	c->evals++;
	if (c->weighted) /* age the positioning time; the transfer is owed whatever the order */
		t = (t - (double)xfer) * (c->M - (double)(c->now - r->r.time_ns)) / c->M;
	if (!c->best || t < c->bt || (t == c->bt && r->seq < c->best->seq)) {
		c->best = r;
		c->bt = t;
	}
}

/*
 * The request with the smallest (weighted) service time among buckets
 * [kmin, kmax], searched outward from the head. A bucket d away cannot
 * beat min_time(d) * wmin, so the search stops there: at long queues it
 * looks at a handful of cylinders, not the whole queue. Inside a bucket the
 * disk searches by rotational position (bucket_search), so that a queue
 * clustered on a few cylinders costs a few estimates, not one per request.
 * On a flat device (SSD) time does not depend on position: STF is the
 * smallest request (a heap per direction) and WSTF the oldest of each
 * direction, since the weighted part is the direction's own access time.
 */
static struct sim_req *stf_search(struct sched *s, uint64_t now, uint64_t kmin, uint64_t kmax, bool weighted,
				  uint64_t max_seq)
{
	struct sim_dev *d = s->dev;
	const struct posq *pq = &s->q.pos;
	struct stf_ctx c = { .now = now, .weighted = weighted, .M = (double)s->max_resp, .wmin = 1.0,
			     .max_seq = max_seq };
	s->decisions++;
	if (weighted) {
		/* past M the weight would turn negative and favour the dearest request */
		struct sim_req *o = oldest(s);
		double e = o ? (double)(now - o->r.time_ns) : 0;
		if (e >= c.M)
			return overdue_pick(s, now);
		c.wmin = (c.M - e) / c.M;
	}
	bool whole = kmin == 0 && kmax == d->nkeys - 1;
	if (d->ops->flat && whole && max_seq == NONE64) {
		for (int op = 0; op < 2; op++) {
			struct sim_req *r = weighted ? s->q.fhead[op] : s->nheap[op] ? s->heap[op][0] : NULL;
			if (r)
				sweep__stf_consider(d, &c, r);
		}
		if (c.best || (!s->nheap[0] && !s->nheap[1]) || weighted) {
			s->evals += c.evals;
			return c.best;
		}
	}
	uint64_t h = d->ops->head_key(d);
	uint64_t start = h < kmin ? kmin : h > kmax ? kmax : h;
	uint64_t hi = sweep__posq_next(pq, start), lo = start ? sweep__posq_prev(pq, start - 1) : NONE64;
	if (hi != NONE64 && hi > kmax)
		hi = NONE64;
	if (lo != NONE64 && lo < kmin)
		lo = NONE64;
	while (hi != NONE64 || lo != NONE64) {
		bool up = lo == NONE64 || (hi != NONE64 && dist(hi, h) <= dist(lo, h));
		uint64_t k = up ? hi : lo;
		double seek = (double)d->ops->min_time(d, dist(k, h));
		if (c.best && seek * c.wmin > c.bt)
			break;
		if (s->sorted && d->ops->bucket_search) {
			d->ops->bucket_search(d, k, &s->sorted[k], &c);
		} else {
			for (struct sim_req *r = pq->head[k]; r; r = r->pnext) {
				if (weighted && c.best && seek * (c.M - (double)(now - r->r.time_ns)) / c.M > c.bt)
					continue; /* cannot win: skip the costly estimate */
				sweep__stf_consider(d, &c, r);
			}
		}
		if (up) {
			hi = sweep__posq_next(pq, k + 1);
			if (hi != NONE64 && hi > kmax)
				hi = NONE64;
		} else {
			lo = k ? sweep__posq_prev(pq, k - 1) : NONE64;
			if (lo != NONE64 && lo < kmin)
				lo = NONE64;
		}
	}
	s->evals += c.evals;
	return c.best;
}

static struct sim_req *pick_stf(struct sched *s, uint64_t now)
{
	return stf_search(s, now, 0, s->dev->nkeys - 1, false, NONE64);
}

static struct sim_req *pick_wstf(struct sched *s, uint64_t now)
{
	return stf_search(s, now, 0, s->dev->nkeys - 1, true, NONE64);
}

static struct sim_req *pick_gstf(struct sched *s, uint64_t now)
{
	uint64_t G = s->group, n = s->dev->nkeys;
	uint64_t g = s->dev->ops->head_key(s->dev) / G;
	uint64_t k = sweep__posq_next(&s->q.pos, g * G);
	if (k == NONE64 || k / G != g) {
		/* this group is empty: on to the next one with work, wrapping */
		if (k == NONE64)
			k = sweep__posq_next(&s->q.pos, 0);
		if (k == NONE64)
			return NULL;
		g = k / G;
	}
	uint64_t hi = (g + 1) * G - 1;
	return stf_search(s, now, g * G, hi < n ? hi : n - 1, false, NONE64);
}

/* Requests queued in buckets [lo, hi] up to submission max_seq. */
static uint64_t count_group(const struct sched *s, uint64_t lo, uint64_t hi, uint64_t max_seq)
{
	uint64_t n = 0;
	for (uint64_t k = sweep__posq_next(&s->q.pos, lo); k != NONE64 && k <= hi; k = sweep__posq_next(&s->q.pos, k + 1))
		for (const struct sim_req *r = s->q.pos.head[k]; r; r = r->pnext)
			n += r->seq <= max_seq;
	return n;
}

/*
 * GSTF with the seed's freeze: when the service of a group starts, the
 * requests queued in it then are all served (STF among them) before the
 * head moves on to the next group with work, in C-SCAN order; what arrives
 * in the group meanwhile waits for the next visit.
 */
static struct sim_req *pick_gstf_freeze(struct sched *s, uint64_t now)
{
	uint64_t G = s->group, n = s->dev->nkeys;
	if (!s->frozen_left) {
		uint64_t from = s->frozen ? (s->frozen_group + 1) * G : s->dev->ops->head_key(s->dev) / G * G;
		uint64_t k = from < n ? sweep__posq_next(&s->q.pos, from) : NONE64;
		if (k == NONE64)
			k = sweep__posq_next(&s->q.pos, 0);
		if (k == NONE64)
			return NULL;
		s->frozen = true;
		s->frozen_group = k / G;
		s->frozen_seq = s->max_seq;
		uint64_t hi = (s->frozen_group + 1) * G - 1;
		s->frozen_left = count_group(s, s->frozen_group * G, hi < n ? hi : n - 1, s->frozen_seq);
	}
	uint64_t hi = (s->frozen_group + 1) * G - 1;
	struct sim_req *r = stf_search(s, now, s->frozen_group * G, hi < n ? hi : n - 1, false, s->frozen_seq);
	if (r)
		s->frozen_left--;
	else
		s->frozen_left = 0;
	return r;
}

/* ---- deadline ---- */

/* First request of direction op at or after bucket key (one-way, no wrap). */
static struct sim_req *next_of_op(struct sched *s, uint64_t key, int op)
{
	for (uint64_t k = sweep__posq_next(&s->q.pos, key); k != NONE64; k = sweep__posq_next(&s->q.pos, k + 1))
		for (struct sim_req *r = s->q.pos.head[k]; r; r = r->pnext)
			if (r->r.op == op)
				return r;
	return NULL;
}

static struct sim_req *pick_deadline(struct sched *s, uint64_t now)
{
	struct sim_req *r = NULL;
	if (s->batch_left > 0 && s->q.count_op[s->batch_op]) {
		r = next_of_op(s, s->last_key, s->batch_op);
		if (r)
			s->batch_left--;
	}
	if (!r) {
		int op;
		if (s->q.count_op[SWEEP_SIM_READ] &&
		    (!s->q.count_op[SWEEP_SIM_WRITE] || s->writes_starved < 2)) {
			op = SWEEP_SIM_READ;
			if (s->q.count_op[SWEEP_SIM_WRITE])
				s->writes_starved++;
		} else {
			op = SWEEP_SIM_WRITE;
			s->writes_starved = 0;
		}
		struct sim_req *head = s->q.fhead[op];
		if (!head)
			return NULL;
		uint64_t expire = op == SWEEP_SIM_READ ? s->read_expire : s->write_expire;
		if (head->r.time_ns <= now && now - head->r.time_ns >= expire) /* no wrap with a huge expiry */
			r = head;
		else if (!(r = next_of_op(s, s->last_key, op)))
			r = head; /* end of the sweep: start again from the oldest */
		s->batch_op = op;
		s->batch_left = 15; /* fifo_batch = 16 */
	}
	s->last_key = r->key;
	return r;
}

/* ---- IRBW-FIFO(-RP) ---- */

static int cmp_off(const void *a, const void *b)
{
	const struct sim_req *x = *(const struct sim_req *const *)a, *y = *(const struct sim_req *const *)b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Take every queued write of bundle b out of the queue, in offset order, as the drain list. */
static struct sim_req *start_bundle(struct sched *s, uint64_t b)
{
	struct sim_dev *d = s->dev;
	uint64_t lo = b * s->bundle, hi = lo + s->bundle;
	size_t n = 0, cap = 16;
	struct sim_req **v = malloc(cap * sizeof(*v));
	if (!v)
		return s->q.fhead[SWEEP_SIM_WRITE]; /* degrade to plain FIFO */
	for (uint64_t k = sweep__posq_next(&s->q.pos, d->ops->key(d, lo)); k != NONE64 && k <= d->ops->key(d, hi - 1);
	     k = sweep__posq_next(&s->q.pos, k + 1)) {
		for (struct sim_req *r = s->q.pos.head[k]; r; r = r->pnext) {
			if (r->r.op != SWEEP_SIM_WRITE || r->off / s->bundle != b)
				continue;
			if (n == cap) {
				struct sim_req **nv = realloc(v, 2 * cap * sizeof(*v));
				if (!nv)
					break;
				v = nv;
				cap *= 2;
			}
			v[n++] = r;
		}
	}
	qsort(v, n, sizeof(*v), cmp_off);
	for (size_t i = 0; i < n; i++) {
		hq_remove(s, v[i]);
		v[i]->link = i + 1 < n ? v[i + 1] : NULL;
	}
	struct sim_req *first = n ? v[0] : NULL;
	free(v);
	s->drain = first ? first->link : NULL;
	s->yielded_bundle = 0;
	return first;
}

static struct sim_req *pick_irbw(struct sched *s, uint64_t now)
{
	(void)now;
	struct sim_req *rd = s->q.fhead[SWEEP_SIM_READ], *wr = s->q.fhead[SWEEP_SIM_WRITE];
	if (!wr)
		return rd;
	uint64_t b = wr->off / s->bundle;
	if (rd) {
		if (!s->rp) {
			if (rd->seq < wr->seq)
				return rd;
		} else if (s->yielded_bundle != b + 1) {
			/* the oldest bundle yields to the reads queued now, once */
			s->yielded_bundle = b + 1;
			s->yield_seq = s->q.ftail[SWEEP_SIM_READ]->seq;
			return rd;
		} else if (rd->seq <= s->yield_seq) {
			return rd;
		}
	}
	return start_bundle(s, b);
}

/* ---- bandwidth class ---- */

static struct bw_stream *bw_find(struct sched *s, uint32_t id)
{
	for (size_t i = 0; i < s->nstreams; i++)
		if (s->streams[i].id == id)
			return &s->streams[i];
	return NULL;
}

enum { BW_ELIGIBLE, BW_BE, BW_ANY_RESERVED };

static bool bw_match(struct sched *s, const struct sim_req *r, int cls)
{
	struct bw_stream *st = bw_find(s, r->r.stream);
	switch (cls) {
	case BW_ELIGIBLE:
		return st && st->tokens > 0;
	case BW_BE:
		return !st;
	default:
		return st != NULL;
	}
}

static struct sim_req *bucket_match(struct sched *s, uint64_t k, int cls)
{
	for (struct sim_req *r = s->q.pos.head[k]; r; r = r->pnext)
		if (bw_match(s, r, cls))
			return r;
	return NULL;
}

/* The elevator over the requests of one class: C-SCAN (wrapping) or SSF. */
static struct sim_req *bw_elevator(struct sched *s, int cls)
{
	const struct posq *pq = &s->q.pos;
	uint64_t h = s->dev->ops->head_key(s->dev);
	struct sim_req *r;
	if (!s->elevator_ssf) {
		for (uint64_t k = sweep__posq_next(pq, h); k != NONE64; k = sweep__posq_next(pq, k + 1))
			if ((r = bucket_match(s, k, cls)))
				return r;
		for (uint64_t k = sweep__posq_next(pq, 0); k != NONE64 && k < h; k = sweep__posq_next(pq, k + 1))
			if ((r = bucket_match(s, k, cls)))
				return r;
		return NULL;
	}
	uint64_t hi = sweep__posq_next(pq, h), lo = h ? sweep__posq_prev(pq, h - 1) : NONE64;
	while (hi != NONE64 || lo != NONE64) {
		bool up = lo == NONE64 || (hi != NONE64 && dist(hi, h) <= dist(lo, h));
		uint64_t k = up ? hi : lo;
		if ((r = bucket_match(s, k, cls)))
			return r;
		if (up)
			hi = sweep__posq_next(pq, k + 1);
		else
			lo = k ? sweep__posq_prev(pq, k - 1) : NONE64;
	}
	return NULL;
}

static struct sim_req *pick_bw(struct sched *s, uint64_t now)
{
	for (size_t i = 0; i < s->nstreams; i++) {
		struct bw_stream *st = &s->streams[i];
		st->tokens += st->rate * (double)(now - st->last);
		if (st->tokens > st->bucket)
			st->tokens = st->bucket;
		st->last = now;
	}
	/* a reserved stream with tokens whose request is past its deadline goes first (EDF) */
	struct sim_req *edf = NULL;
	uint64_t edl = NONE64;
	for (int op = 0; op < 2; op++)
		for (struct sim_req *r = s->q.fhead[op]; r; r = r->fnext) {
			struct bw_stream *st = bw_find(s, r->r.stream);
			if (!st || st->tokens <= 0 || !st->deadline)
				continue;
			uint64_t dl = st->deadline < NONE64 - r->r.time_ns ? r->r.time_ns + st->deadline : NONE64;
			if (dl <= now && (dl < edl || (dl == edl && r->seq < edf->seq))) {
				edf = r;
				edl = dl;
			}
		}
	struct sim_req *r = edf;
	if (!r)
		r = bw_elevator(s, BW_ELIGIBLE);
	if (!r)
		r = bw_elevator(s, BW_BE);
	if (!r) /* work conservation: nobody else waits, reserved streams may overdraw */
		r = bw_elevator(s, BW_ANY_RESERVED);
	if (r) {
		struct bw_stream *st = bw_find(s, r->r.stream);
		if (st) {
			st->tokens -= (double)r->len;
			if (st->tokens < -st->bucket / 2)
				st->tokens = -st->bucket / 2;
		}
	}
	return r;
}

/* ---- table ---- */

static const struct sched_ops ops_table[] = {
	{ "fcfs", false, pick_fcfs, false },
	{ "noop", true, pick_fcfs, true },
	{ "ssf", false, pick_ssf, false },
	{ "scan", false, pick_scan, false },
	{ "cscan", false, pick_cscan, false },
	{ "stf", false, pick_stf, false },
	{ "sptf", false, pick_stf, false },
	{ "gstf", false, pick_gstf, false },
	{ "wstf", false, pick_wstf, false },
	{ "deadline", true, pick_deadline, false },
	{ "irbw-fifo", true, pick_irbw, false },
	{ "irbw-fifo-rp", true, pick_irbw, false },
	{ "bw", true, pick_bw, false },
	{ "bw-ssf", true, pick_bw, false },
	{ "gstf-freeze", false, pick_gstf_freeze, false },
};

struct sim_req *sweep__sched_pick(struct sched *s, uint64_t now)
{
	struct sim_req *r, *o = oldest(s);
	if (s->flush_head && !s->drain && (!o || o->seq > s->flush_head->seq)) {
		/* a flush goes down once everything submitted before it has */
		r = s->flush_head;
		s->flush_head = r->link;
		if (!s->flush_head)
			s->flush_tail = NULL;
		r->link = NULL;
		return r;
	}
	if (s->drain) {
		r = s->drain;
		s->drain = r->link;
		r->link = NULL;
		return r;
	}
	if (!s->q.count)
		return NULL;
	r = s->ops->pick(s, now);
	if (r && (r->fprev || r->fnext || s->q.fhead[r->r.op] == r))
		hq_remove(s, r); /* still queued (start_bundle removes its own) */
	if (r) {
		r->link = NULL;
		s->last_key = r->key;
	}
	return r;
}

int sweep__sched_new(const char *name, const struct sweep_sim_options *o, struct sim_dev *dev, struct sched **ret)
{
	const struct sched_ops *ops = NULL;
	for (size_t i = 0; i < sizeof(ops_table) / sizeof(ops_table[0]); i++)
		if (strcmp(ops_table[i].name, name) == 0)
			ops = &ops_table[i];
	if (!ops)
		return -EINVAL;
	struct sched *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ops = ops;
	s->dev = dev;
	s->dir = 1;
	s->max_merge = o->max_merge_bytes ? o->max_merge_bytes : 512 * 1024;
	s->group = o->group_cylinders ? o->group_cylinders : (dev->nkeys + 3) / 4;
	s->max_resp = o->max_response_ns ? o->max_response_ns : 30 * NS_PER_S;
	s->read_expire = o->read_expire_ns ? o->read_expire_ns : 500 * NS_PER_MS;
	s->write_expire = o->write_expire_ns ? o->write_expire_ns : 5 * NS_PER_S;
	s->bundle = o->bundle_bytes ? o->bundle_bytes : dev->logical_block ? dev->logical_block : 4 * MIB;
	s->rp = strcmp(name, "irbw-fifo-rp") == 0;
	s->elevator_ssf = strcmp(name, "bw-ssf") == 0 || o->elevator_ssf;
	s->max_seq = NONE64;
	int err = sweep__posq_init(&s->q.pos, dev->nkeys);
	bool timed = ops->pick == pick_stf || ops->pick == pick_wstf || ops->pick == pick_gstf ||
		     ops->pick == pick_gstf_freeze;
	if (!err && timed && dev->ops->bucket_search)
		s->sorted = calloc(dev->nkeys, sizeof(*s->sorted)); /* NULL: no index, the plain search */
	s->flat_index = timed && dev->ops->flat;
	if (!err && o->nstreams) {
		s->streams = calloc(o->nstreams, sizeof(*s->streams));
		if (!s->streams)
			err = -ENOMEM;
		for (size_t i = 0; !err && i < o->nstreams; i++) {
			const struct sweep_sim_stream *in = &o->streams[i];
			if (!in->rate_bps) {
				err = -EINVAL;
				break;
			}
			struct bw_stream *st = &s->streams[i];
			st->id = in->stream;
			st->rate = (double)in->rate_bps / 1e9;
			st->bucket = in->bucket_bytes ? (double)in->bucket_bytes : (double)in->rate_bps;
			st->tokens = st->bucket;
			st->deadline = in->deadline_ns;
		}
		s->nstreams = o->nstreams;
	}
	if (err) {
		sweep__sched_free(s);
		return err;
	}
	*ret = s;
	return 0;
}

void sweep__sched_free(struct sched *s)
{
	if (!s)
		return;
	if (s->sorted) /* the device may be gone already: its size is in the posq */
		for (uint64_t k = 0; k < s->q.pos.nkeys; k++)
			free(s->sorted[k].v);
	free(s->sorted);
	sweep__posq_fini(&s->q.pos);
	free(s->heap[0]);
	free(s->heap[1]);
	free(s->streams);
	free(s);
}
