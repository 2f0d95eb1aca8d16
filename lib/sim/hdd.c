/* SPDX-License-Identifier: MIT */
/*
 * The disk: zoned geometry, Ruemmler-Wilkes seek curve, rotation, head and
 * cylinder switches, media transfer, a segmented cache with read-ahead,
 * write-back or write-through, and a tagged queue the drive reorders itself
 * (shortest positioning time first, as drives with NCQ/TCQ do).
 *
 * Time inside a service computation is kept in double nanoseconds from
 * its start and rounded once at the end (sim_time_after), so results are
 * identical run to run and a finish is never before its start.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define SECTOR 512ull
#define NSEG 16

struct hdd_preset {
	const char *name;
	struct sweep_sim_hdd_params p; /* seek times in ms */
};

/*
 * eagle: Fujitsu M2361A, Table 1 of scheduling-long-queues.txt: 840
 * cylinders, 20 tracks/cylinder, 67 sectors/track, 3600 rpm, 18 ms average
 * seek. The short-seek branch 4.6 + 0.87*sqrt(d) is the paper's (its SSF
 * estimate uses it); the text lost the long-seek branch past 239 cylinders,
 * so it is the straight line continuous at 239 whose mean over uniformly
 * random request pairs is the specified 18.0 ms (full stroke 31.4 ms).
 * No cache, no read-ahead, one request at a time, no command overhead: the
 * paper's simulator.
 *
 * hdd7200: 7200 rpm SATA drive: 8.33 ms/rev, 0.23 ms single-track, 7.4 ms
 * mean random seek, 15 ms full stroke (the curve is fitted to those three),
 * 16 zones from 1900 to 950 sectors/track, about 525 GB, NCQ 32,
 * write-back cache.
 *
 * cheetah15k: like the Seagate ST3146854LC of block-level-optimization:
 * 15k rpm, 8 heads, 146 GB-class, 3.4 ms mean read seek, 0.2 ms single
 * track, 7 ms full stroke, write-through (the paper's setting) and the
 * driver's default depth of 4 (the drive holds 64).
 */
#define P(...) { sizeof(struct sweep_sim_hdd_params), __VA_ARGS__ }
static const struct hdd_preset presets[] = {
	{ "eagle", P(840, 20, 67, 67, 1, 3600.0, 4.6, 0.87, 239, 12.714173778363481, 0.02232510387862169,
		     0.0, 0.0, 3.0, 0, 0, 0, 1) },
	{ "hdd7200", P(180000, 4, 1900, 950, 16, 7200.0, 0.19405798337504757, 0.03594201662495244, 18000,
		       3.9068659619975987, 6.162886481592898e-05, 0.5, 0.05, 300.0, 512, 8192, 1, 32) },
	{ "cheetah15k", P(50000, 8, 950, 550, 12, 15000.0, 0.1705507787374802, 0.029449221262519802, 5000,
			  1.7254607055410962, 1.0549289574709302e-04, 0.3, 0.05, 320.0, 256, 8192, 0, 4) },
};
#undef P
#define NPRESETS (sizeof(presets) / sizeof(presets[0]))
const char *const sweep__hdd_preset_names[] = { "eagle", "hdd7200", "cheetah15k", NULL };

struct zone {
	uint64_t first_cyl, cyls, spt, first_lba, nsect;
	double sector_ns;
};

struct seg {
	uint64_t start, end; /* sectors */
};

struct hdd {
	struct sim_dev dev;
	struct sweep_sim_hdd_params p;
	struct hdd_seek seek;
	struct zone *zones;
	uint64_t nzones, cylinders, sectors;
	double rev_ns, head_switch_ns, overhead_ns, bus_ns_per_byte;
	uint64_t readahead_sect, cache_bytes;
	bool readahead;
	/* mechanical state */
	uint64_t cyl, head;
	struct sim_req *cur;
	uint64_t free_at;
	/* drive queue (host tags and destages), acks of write-back writes */
	struct sim_req *q_head, *q_tail;
	unsigned tags;
	struct sim_req *ack_head;
	uint64_t dirty_bytes;
	/* cache */
	struct seg segs[NSEG];
	unsigned seg_next;
	bool ra_on;                  /* read-ahead running */
	uint64_t ra_start, ra_from, ra_limit; /* cached [ra_start, pos(t)), pos grows from ra_from */
	uint64_t ra_t0;
	double ra_sns;
};

static struct hdd *H(const struct sim_dev *d)
{
	return (struct hdd *)d;
}

double sweep__hdd_seek_ms(const struct hdd_seek *s, uint64_t dist)
{
	if (dist == 0)
		return 0.0;
	if (dist <= s->boundary)
		return s->a + s->b * sqrt((double)dist);
	return s->c + s->e * (double)dist;
}

const struct hdd_seek *sweep__hdd_seek_of(const struct sim_dev *d)
{
	return &H(d)->seek;
}

uint64_t sweep__hdd_cylinders(const struct sim_dev *d)
{
	return H(d)->cylinders;
}

void sweep__hdd_set_head(struct sim_dev *d, uint64_t cyl, uint64_t head)
{
	H(d)->cyl = cyl;
	H(d)->head = head;
}

static const struct zone *zone_of_lba(const struct hdd *h, uint64_t lba)
{
	for (uint64_t z = 0; z + 1 < h->nzones; z++)
		if (lba < h->zones[z + 1].first_lba)
			return &h->zones[z];
	return &h->zones[h->nzones - 1];
}

int sweep__hdd_map(const struct sim_dev *d, uint64_t lba, struct hdd_chs *ret)
{
	const struct hdd *h = H(d);
	if (lba >= h->sectors)
		return -ERANGE;
	const struct zone *z = zone_of_lba(h, lba);
	uint64_t in = lba - z->first_lba;
	uint64_t per_cyl = z->spt * h->p.heads;
	ret->cyl = z->first_cyl + in / per_cyl;
	ret->head = (in % per_cyl) / z->spt;
	ret->sector = in % z->spt;
	ret->spt = z->spt;
	return 0;
}

static double seek_ns(const struct hdd *h, uint64_t from, uint64_t to)
{
	return sweep__hdd_seek_ms(&h->seek, from > to ? from - to : to - from) * 1e6;
}

/* Where the read-ahead has got to at time t. */
static uint64_t ra_pos(const struct hdd *h, uint64_t t)
{
	if (!h->ra_on)
		return 0;
	if (t <= h->ra_t0)
		return h->ra_from;
	double n = (double)(t - h->ra_t0) / h->ra_sns + 1e-3; /* times are rounded to 1 ns */
	uint64_t pos = h->ra_from + (uint64_t)n;
	return pos < h->ra_limit ? pos : h->ra_limit;
}

struct service {
	bool hit;
	uint64_t finish, transfer_ns, dist, end_cyl, end_head;
	bool mechanical;
	uint64_t ra_extend; /* streaming hit: new read-ahead limit */
};

static bool covers(const struct sim_req *r, uint64_t a, uint64_t b)
{
	return r && r->internal && r->off / SECTOR <= a && (r->off + r->len) / SECTOR >= b;
}

static bool dirty_covers(const struct hdd *h, uint64_t a, uint64_t b)
{
	if (covers(h->cur, a, b))
		return true;
	for (const struct sim_req *r = h->q_head; r; r = r->link)
		if (covers(r, a, b))
			return true;
	return false;
}

/* The time to serve r starting at t from the current head state. */
static void service(const struct hdd *h, uint64_t t, const struct sim_req *r, struct service *s)
{
	uint64_t a = r->off / SECTOR, n = (r->len + SECTOR - 1) / SECTOR, b = a + n;
	const struct zone *z0 = zone_of_lba(h, a);
	*s = (struct service){ .end_cyl = h->cyl, .end_head = h->head };
	double media = (double)n * z0->sector_ns;
	double bus = (double)r->len * h->bus_ns_per_byte;

	if (r->r.op == SWEEP_SIM_READ && !r->internal) {
		for (unsigned i = 0; i < NSEG; i++) {
			if (h->segs[i].end > h->segs[i].start && h->segs[i].start <= a && b <= h->segs[i].end)
				goto bus_hit;
		}
		if (h->ra_on && a >= h->ra_start) {
			uint64_t pos = ra_pos(h, t);
			if (b <= pos) {
				/* a sequential reader keeps the read-ahead going */
				s->ra_extend = b + h->readahead_sect;
				goto bus_hit;
			}
			/*
			 * The read-ahead will reach a: the head is already past it, or
			 * still reading towards it. A drive serves such a read from the
			 * stream instead of stopping, seeking and waiting a turn (a
			 * reader that skips one free block must not pay a revolution).
			 * Past ra_limit the stream goes on only while it is still
			 * running; once stopped, the rest needs the media again.
			 */
			if (a < h->ra_limit && (b <= h->ra_limit || pos < h->ra_limit)) {
				/* the drive is still reading towards b: stream (times from t) */
				double at = (h->ra_t0 >= t ? (double)(h->ra_t0 - t) : -(double)(t - h->ra_t0)) +
					    (double)(b - h->ra_from) * h->ra_sns;
				s->hit = true;
				s->finish = sim_time_after(t, fmax(h->overhead_ns + bus, at));
				s->transfer_ns = (uint64_t)llround(media);
				s->ra_extend = b + h->readahead_sect;
				return;
			}
		}
		if (h->dev.write_back && dirty_covers(h, a, b))
			goto bus_hit;
	}

	struct hdd_chs c;
	sweep__hdd_map(&h->dev, a, &c);
	s->mechanical = true;
	s->dist = c.cyl > h->cyl ? c.cyl - h->cyl : h->cyl - c.cyl;
	double pos_t = r->internal ? 0.0 : h->overhead_ns; /* destages need no host command */
	if (s->dist)
		pos_t += seek_ns(h, h->cyl, c.cyl);
	else if (c.head != h->head)
		pos_t += h->head_switch_ns;
	/* rotational latency: wait for sector c.sector to come under the head */
	double at = (double)t + pos_t;
	double frac = fmod(at, h->rev_ns) / h->rev_ns;
	double wait = (double)c.sector - frac * (double)c.spt;
	if (wait < -1e-3) /* just missed it: a whole turn (1 ns rounding is not a miss) */
		wait += (double)c.spt;
	else if (wait < 0)
		wait = 0;
	double sns = h->rev_ns / (double)c.spt;
	double time = pos_t + wait * sns;
	/* transfer, switching heads/cylinders at track ends (skewed tracks: no extra rotation) */
	uint64_t lba = a, left = n;
	double xfer = 0;
	for (;;) {
		uint64_t take = c.spt - c.sector;
		if (take > left)
			take = left;
		xfer += (double)take * sns;
		left -= take;
		lba += take;
		s->end_cyl = c.cyl;
		s->end_head = c.head;
		if (!left || sweep__hdd_map(&h->dev, lba, &c) < 0)
			break;
		time += c.cyl != s->end_cyl ? fmax(seek_ns(h, s->end_cyl, c.cyl), h->head_switch_ns)
					    : h->head_switch_ns;
		sns = h->rev_ns / (double)c.spt;
	}
	time += xfer;
	s->finish = sim_time_after(t, time);
	s->transfer_ns = (uint64_t)llround(xfer);
	return;

bus_hit:
	s->hit = true;
	s->mechanical = false;
	s->finish = sim_time_after(t, h->overhead_ns + bus);
	s->transfer_ns = (uint64_t)llround(media);
}

static uint64_t hdd_key(const struct sim_dev *d, uint64_t offset)
{
	struct hdd_chs c;
	const struct hdd *h = H(d);
	if (sweep__hdd_map(d, offset / SECTOR, &c) < 0)
		return h->cylinders - 1;
	return c.cyl;
}

static uint64_t hdd_head_key(const struct sim_dev *d)
{
	return H(d)->cyl;
}

static uint64_t hdd_min_time(const struct sim_dev *d, uint64_t dist)
{
	return (uint64_t)(sweep__hdd_seek_ms(&H(d)->seek, dist) * 1e6);
}

static uint64_t hdd_estimate(struct sim_dev *d, uint64_t now, const struct sim_req *r, uint64_t *xfer)
{
	struct hdd *h = H(d);
	uint64_t t = h->cur && h->free_at > now ? h->free_at : now;
	struct service s;
	service(h, t, r, &s);
	*xfer = s.transfer_ns < s.finish - now ? s.transfer_ns : s.finish - now;
	return s.finish - now;
}

/* Requests of bucket b starting in sectors [a, e): sweep__stf_consider each. */
static void consider_range(struct sim_dev *d, const struct sbucket *b, uint64_t a, uint64_t e, struct stf_ctx *c)
{
	for (uint32_t i = sweep__sbucket_first(b, a * SECTOR); i < b->n && b->v[i]->off < e * SECTOR; i++)
		sweep__stf_consider(d, c, b->v[i]);
}

/*
 * STF inside one cylinder, by rotational position. On arrival (after the
 * seek, at the earliest) the head is over sector theta of every track of the
 * cylinder; on each track the candidates are taken in the order their first
 * sector comes under the head, and a track is left once that wait alone
 * cannot beat the best so far (the transfer only adds). Cached data can
 * beat any position, so the requests inside the read-ahead window and the
 * cache segments are looked at first. (Reads of dirty write-back data are
 * hits too, but are looked at only when few destages are queued: with many,
 * such a read may wait for its turn by position.)
 */
static void hdd_bucket_search(struct sim_dev *d, uint64_t key, const struct sbucket *b, struct stf_ctx *c)
{
	struct hdd *h = H(d);
	if (!b->n)
		return;
	if (b->n <= 8) {
		for (uint32_t i = 0; i < b->n; i++)
			sweep__stf_consider(d, c, b->v[i]);
		return;
	}
	/* the cylinder's zone and sector range */
	const struct zone *z = &h->zones[h->nzones - 1];
	for (uint64_t i = 0; i < h->nzones; i++)
		if (key < h->zones[i].first_cyl + h->zones[i].cyls) {
			z = &h->zones[i];
			break;
		}
	uint64_t spt = z->spt, cyl_a = z->first_lba + (key - z->first_cyl) * h->p.heads * spt;
	uint64_t cyl_e = cyl_a + h->p.heads * spt;
	/* cached data first */
	if (h->ra_on && h->ra_start < cyl_e && h->ra_limit > cyl_a)
		consider_range(d, b, h->ra_start > cyl_a ? h->ra_start : cyl_a, h->ra_limit, c);
	for (unsigned i = 0; i < NSEG; i++)
		if (h->segs[i].end > h->segs[i].start && h->segs[i].start < cyl_e && h->segs[i].end > cyl_a)
			consider_range(d, b, h->segs[i].start > cyl_a ? h->segs[i].start : cyl_a, h->segs[i].end, c);
	if (d->write_back) {
		unsigned nq = 0;
		for (const struct sim_req *r = h->q_head; r && nq <= 32; r = r->link)
			nq++;
		for (const struct sim_req *r = h->q_head; nq <= 32 && r; r = r->link)
			if (r->internal && r->off / SECTOR < cyl_e && (r->off + r->len) / SECTOR > cyl_a)
				consider_range(d, b, r->off / SECTOR > cyl_a ? r->off / SECTOR : cyl_a,
					       (r->off + r->len) / SECTOR, c);
	}
	/* then by rotational position: the earliest arrival is after the command and the seek */
	uint64_t t0 = h->cur && h->free_at > c->now ? h->free_at : c->now;
	uint64_t dist = key > h->cyl ? key - h->cyl : h->cyl - key;
	double pos = h->overhead_ns + (dist ? seek_ns(h, h->cyl, key) : 0.0);
	double sns = h->rev_ns / (double)spt;
	double theta = fmod((double)t0 + pos, h->rev_ns) / h->rev_ns * (double)spt; /* sector under the head */
	double wlb = c->weighted ? c->wmin : 1.0;
	uint64_t s0 = (uint64_t)ceil(theta - 1e-3); /* the first sector not yet passed */
	if (s0 > spt)
		s0 = spt;
	for (uint64_t hd = 0; hd < h->p.heads; hd++) {
		uint64_t ta = cyl_a + hd * spt, te = ta + spt;
		/* sectors s0.. first, then the wrap 0..s0: waits in increasing order */
		for (int pass = 0; pass < 2; pass++) {
			uint64_t a = pass ? ta : ta + s0, e = pass ? ta + s0 : te;
			for (uint32_t i = sweep__sbucket_first(b, a * SECTOR); i < b->n && b->v[i]->off < e * SECTOR; i++) {
				double w = (double)(b->v[i]->off / SECTOR - ta) - theta;
				if (w < -1e-3)
					w += (double)spt;
				else if (w < 0)
					w = 0;
				if (c->best && (pos + w * sns) * wlb > c->bt)
					break;
				sweep__stf_consider(d, c, b->v[i]);
			}
		}
	}
}

static bool hdd_can_accept(const struct sim_dev *d)
{
	return H(d)->tags < d->depth;
}

static void q_append(struct hdd *h, struct sim_req *r)
{
	r->link = NULL;
	if (h->q_tail)
		h->q_tail->link = r;
	else
		h->q_head = r;
	h->q_tail = r;
}

static void ack_insert(struct hdd *h, struct sim_req *r)
{
	struct sim_req **pp = &h->ack_head;
	while (*pp && ((*pp)->finish < r->finish || ((*pp)->finish == r->finish && (*pp)->seq < r->seq)))
		pp = &(*pp)->link;
	r->link = *pp;
	*pp = r;
}

static void drop_overlapping(struct hdd *h, uint64_t a, uint64_t b, uint64_t now)
{
	for (unsigned i = 0; i < NSEG; i++)
		if (h->segs[i].start < b && a < h->segs[i].end)
			h->segs[i] = (struct seg){ 0, 0 };
	if (h->ra_on && h->ra_start < b && a < ra_pos(h, now) + 1)
		h->ra_on = false;
}

static void hdd_accept(struct sim_dev *d, uint64_t now, struct sim_req *r)
{
	struct hdd *h = H(d);
	if (r->r.op == SWEEP_SIM_WRITE) {
		drop_overlapping(h, r->off / SECTOR, (r->off + r->len + SECTOR - 1) / SECTOR, now);
		if (d->write_back && h->dirty_bytes + r->len <= h->cache_bytes) {
			/* acknowledged once in the cache; a private copy is destaged later,
			 * coalesced with the dirty data it continues */
			struct sim_req *t = h->q_tail, *w = NULL;
			if (t && t->internal && t->off + t->len == r->off && t->len < 4 * MIB) {
				t->len += r->len;
				w = t;
			} else if ((w = calloc(1, sizeof(*w)))) {
				*w = *r;
				w->internal = true;
				w->merged = NULL;
				q_append(h, w);
			}
			if (w) {
				h->dirty_bytes += r->len;
				r->start = now;
				r->finish = sim_time_after(now, h->overhead_ns + (double)r->len * h->bus_ns_per_byte);
				ack_insert(h, r);
				return;
			}
		}
	}
	h->tags++;
	q_append(h, r);
}

/* Stop the read-ahead at t: what it read stays cached, the head is where it stopped. */
static void ra_stop(struct hdd *h, uint64_t t)
{
	if (!h->ra_on)
		return;
	uint64_t pos = ra_pos(h, t);
	h->segs[h->seg_next] = (struct seg){ h->ra_start, pos };
	h->seg_next = (h->seg_next + 1) % NSEG;
	struct hdd_chs c;
	if (pos > h->ra_from && sweep__hdd_map(&h->dev, pos - 1, &c) == 0) {
		h->cyl = c.cyl;
		h->head = c.head;
	}
	h->ra_on = false;
}

static void hdd_kick(struct sim_dev *d, uint64_t now)
{
	struct hdd *h = H(d);
	if (h->cur || !h->q_head)
		return;
	/* the drive's choice: FCFS with one tag, else shortest positioning time */
	struct sim_req *best = h->q_head, *bprev = NULL;
	if (h->q_head->link) {
		uint64_t bt = NONE64;
		for (struct sim_req *p = NULL, *r = h->q_head; r; p = r, r = r->link) {
			struct service s;
			service(h, now, r, &s);
			if (s.finish < bt) {
				bt = s.finish;
				best = r;
				bprev = p;
			}
		}
	}
	if (bprev)
		bprev->link = best->link;
	else
		h->q_head = best->link;
	if (h->q_tail == best)
		h->q_tail = bprev;
	best->link = NULL;

	struct service s;
	service(h, now, best, &s);
	if (s.mechanical) {
		ra_stop(h, now);
		service(h, now, best, &s); /* the head may have moved with the read-ahead */
		sweep__sim_count_seek(d->cnt, s.dist);
		h->cyl = s.end_cyl;
		h->head = s.end_head;
	} else {
		d->cnt->cache_hits++;
		best->hit = true;
		uint64_t lim = s.ra_extend < h->sectors ? s.ra_extend : h->sectors;
		if (lim > h->ra_limit)
			h->ra_limit = lim;
	}
	d->cnt->transfer_ns += s.transfer_ns;
	best->start = now;
	best->finish = s.finish;
	h->cur = best;
	h->free_at = s.finish;
	if (s.mechanical && best->r.op == SWEEP_SIM_READ && !best->internal) {
		uint64_t a = best->off / SECTOR, b = (best->off + best->len + SECTOR - 1) / SECTOR;
		if (h->readahead) {
			h->ra_on = true;
			h->ra_start = a;
			h->ra_from = b;
			h->ra_t0 = s.finish;
			h->ra_limit = b + h->readahead_sect < h->sectors ? b + h->readahead_sect : h->sectors;
			h->ra_sns = zone_of_lba(h, b < h->sectors ? b : a)->sector_ns;
		} else if (h->cache_bytes) {
			h->segs[h->seg_next] = (struct seg){ a, b };
			h->seg_next = (h->seg_next + 1) % NSEG;
		}
	}
}

static uint64_t hdd_next_event(const struct sim_dev *d)
{
	const struct hdd *h = H(d);
	uint64_t t = h->cur ? h->free_at : NONE64;
	if (h->ack_head && h->ack_head->finish < t)
		t = h->ack_head->finish;
	return t;
}

static void hdd_process(struct sim_dev *d, uint64_t now)
{
	struct hdd *h = H(d);
	while (h->ack_head && h->ack_head->finish <= now) {
		struct sim_req *r = h->ack_head;
		h->ack_head = r->link;
		sweep__dev_done(d, r);
	}
	if (h->cur && h->free_at <= now) {
		struct sim_req *r = h->cur;
		h->cur = NULL;
		if (r->internal) {
			/* destaged: the data stays in the cache, clean */
			h->segs[h->seg_next] = (struct seg){ r->off / SECTOR, (r->off + r->len) / SECTOR };
			h->seg_next = (h->seg_next + 1) % NSEG;
			h->dirty_bytes -= r->len;
			free(r);
		} else {
			h->tags--;
			sweep__dev_done(d, r);
		}
	}
}

static bool hdd_busy(const struct sim_dev *d)
{
	const struct hdd *h = H(d);
	return h->cur || h->q_head || h->ack_head;
}

static void hdd_destroy(struct sim_dev *d)
{
	struct hdd *h = H(d);
	/* only the drive's private destage copies belong to it */
	for (struct sim_req *r = h->q_head, *n; r; r = n) {
		n = r->link;
		if (r->internal)
			free(r);
	}
	if (h->cur && h->cur->internal)
		free(h->cur);
	free(h->zones);
	free(h);
}

static const struct sim_dev_ops hdd_ops = {
	.key = hdd_key,
	.head_key = hdd_head_key,
	.min_time = hdd_min_time,
	.estimate = hdd_estimate,
	.can_accept = hdd_can_accept,
	.accept = hdd_accept,
	.kick = hdd_kick,
	.next_event = hdd_next_event,
	.process = hdd_process,
	.busy = hdd_busy,
	.destroy = hdd_destroy,
	.bucket_search = hdd_bucket_search,
};

SWEEP_EXPORT int sweep_sim_preset_hdd(const char *name, struct sweep_sim_hdd_params *ret)
{
	struct sweep_sim_hdd_params p;
	int i = preset_find(presets, NPRESETS, sizeof(presets[0]), name);
	int err = i < 0 ? -EINVAL : sim_out_begin(&p, sizeof(p), ret);
	if (err)
		return err;
	p = presets[i].p;
	sim_out_end(ret, &p, sizeof(p));
	return 0;
}

static bool hdd_params_ok(const struct sweep_sim_hdd_params *p)
{
	/* bounded so that the position index and the zone table stay small (memory) */
	const double ms[] = { p->seek_a_ms, p->seek_b_ms, p->seek_c_ms, p->seek_e_ms, p->head_switch_ms, p->overhead_ms };
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		if (!isfinite(ms[i]) || ms[i] < 0 || ms[i] > 1e6)
			return false;
	return p->cylinders && p->cylinders <= (1u << 24) && p->heads && p->heads <= 1024 && p->spt_inner &&
	       p->spt_inner <= p->spt_outer && p->spt_outer <= (1u << 20) && p->zones && p->zones <= p->cylinders &&
	       isfinite(p->rpm) && p->rpm >= 1 && p->rpm <= 1e6 && isfinite(p->bus_mb_s) && p->bus_mb_s > 0 &&
	       p->readahead_kib <= (1u << 20) && p->cache_kib <= (1u << 24) && p->depth <= SWEEP_SIM_MAX_QUEUE_DEPTH;
}

/* The device named `preset`, or built from o->hdd when given. */
int sweep__hdd_new(const char *preset, const struct sweep_sim_options *o, struct sim_dev **ret)
{
	struct sweep_sim_hdd_params given;
	const struct sweep_sim_hdd_params *p = o->hdd;
	const char *name = preset;
	int i = p ? -1 : preset_find(presets, NPRESETS, sizeof(presets[0]), preset);
	if (i >= 0) {
		p = &presets[i].p;
		name = presets[i].name;
	} else if (p) {
		int err = sweep__opts_copy(&given, sizeof(given), p, SIM_MIN);
		if (err)
			return err;
		p = &given;
	}
	if (!p || !hdd_params_ok(p))
		return -EINVAL;
	struct hdd *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->zones = calloc(p->zones, sizeof(*h->zones));
	if (!h->zones) {
		free(h);
		return -ENOMEM;
	}
	h->p = *p;
	h->seek = (struct hdd_seek){ p->seek_a_ms, p->seek_b_ms, p->seek_boundary, p->seek_c_ms, p->seek_e_ms };
	h->nzones = p->zones;
	h->cylinders = p->cylinders;
	h->rev_ns = 60e9 / p->rpm;
	uint64_t cyl = 0, lba = 0;
	for (uint64_t z = 0; z < p->zones; z++) {
		struct zone *zn = &h->zones[z];
		zn->first_cyl = cyl;
		zn->cyls = z + 1 < p->zones ? p->cylinders / p->zones : p->cylinders - cyl;
		/* sectors per track fall linearly from the outer zone to the inner one */
		zn->spt = p->zones > 1 ? p->spt_outer - (p->spt_outer - p->spt_inner) * z / (p->zones - 1)
				       : p->spt_outer;
		zn->first_lba = lba;
		zn->nsect = zn->cyls * p->heads * zn->spt;
		zn->sector_ns = h->rev_ns / (double)zn->spt;
		cyl += zn->cyls;
		lba += zn->nsect;
	}
	h->sectors = lba;
	h->head_switch_ns = p->head_switch_ms * 1e6;
	h->overhead_ns = p->overhead_ms * 1e6;
	h->bus_ns_per_byte = 1e9 / (p->bus_mb_s * 1e6);
	h->cache_bytes = p->cache_kib * 1024;
	h->readahead_sect = p->readahead_kib * 1024 / SECTOR;
	h->readahead = o->readahead ? o->readahead == SWEEP_SIM_ON : p->readahead_kib > 0;
	if (h->readahead && !h->readahead_sect)
		h->readahead_sect = 256; /* 128 KiB when forced on for a preset without one */
	if (!h->cache_bytes && (o->write_cache == SWEEP_SIM_WRITE_BACK || h->readahead))
		h->cache_bytes = 1024 * 1024; /* a small buffer when asked for on the Eagle */

	struct sim_dev *d = &h->dev;
	d->ops = &hdd_ops;
	d->name = name;
	d->kind = SWEEP_SIM_HDD;
	d->capacity = h->sectors * SECTOR;
	d->nkeys = p->cylinders;
	d->depth = o->queue_depth ? o->queue_depth : p->depth ? p->depth : 1;
	d->write_back = o->write_cache ? o->write_cache == SWEEP_SIM_WRITE_BACK : p->write_back;
	*ret = d;
	return 0;
}
