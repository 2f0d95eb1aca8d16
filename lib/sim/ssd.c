/* SPDX-License-Identifier: MIT */
/*
 * The SSD: channels x dies x planes, each plane and each channel with its
 * own timeline, a host link, page read/program and block erase times, and
 * one of two FTLs:
 *
 *  - block-mapped with log blocks (BAST-like): a logical block is the
 *    super-block made of one physical block on every plane (the "logical
 *    block" of ssd-schedulers-lba-bundling.txt §2.2); writes go to a log
 *    block per logical block, merged by a switch merge (log written whole
 *    and in order), a partial merge (in order but short: the rest is copied
 *    in) or a full merge (out of order: everything copied to a new block);
 *  - page-mapped with greedy garbage collection per plane, in the
 *    background: a plane whose free blocks fall to GC_BG picks a victim and
 *    copies its valid pages (copy-back) and erases it one unit at a time,
 *    in the plane's idle time before host operations, which wait for at most
 *    the unit under way (reads and writes pre-empt GC); only a write that
 *    would take the last reserved block waits for GC to free one.
 *
 * A request is laid onto the timelines when the device accepts it, so its
 * completion time is known at once; up to `depth` requests overlap. Planes
 * serve their operations in order; channels and the host link are booked
 * (timeline.c), so a transfer uses the first gap it fits in.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define INV32 UINT32_MAX
/* Page map GC: starts in the background at GC_BG free blocks on a plane; a write that would
 * take the plane's last GC_RESERVE blocks waits for it (MQSim's two thresholds). */
#define GC_BG 4
#define GC_RESERVE 1

struct ssd_preset {
	const char *name;
	struct sweep_sim_ssd_params p;
};

/*
 * ssd-blockmap: a 2009 SATA-1 SSD like the Mtron of the seed: 32 planes
 * (4 channels x 4 dies x 2 planes) of 128 KiB blocks (64 pages of 2 KiB),
 * so one logical block is 4 MiB, SLC timings, 8 log blocks, no NCQ.
 * ssd-pagemap: a modern SATA SSD scaled to 16 GiB: 64 planes, 4 KiB pages,
 * 1 MiB blocks, 7% over-provisioning, greedy GC, NCQ 32, a 550 MB/s link.
 */
#define P(...) { sizeof(struct sweep_sim_ssd_params), __VA_ARGS__ }
static const struct ssd_preset presets[] = {
	{ "ssd-blockmap", P(16ull << 30, 4, 4, 2, 2048, 64, 0.0, 25, 250, 1500, 20, 150, 1, 8, 1) },
	{ "ssd-pagemap", P(16ull << 30, 8, 4, 2, 4096, 256, 0.07, 50, 500, 3000, 400, 550, 0, 0, 32) },
};
#undef P
#define NPRESETS (sizeof(presets) / sizeof(presets[0]))
const char *const sweep__ssd_preset_names[] = { "ssd-blockmap", "ssd-pagemap", NULL };

struct logblk {
	uint64_t lbn, wp, age;
	uint64_t *written; /* bitmap of logical page offsets held */
	bool used, inplace;
};

struct pplane {
	uint32_t *free;
	uint32_t nfree, active, wp;
	/* background GC: the victim being collected, copies left, erase to come */
	uint32_t gc_victim, gc_copies;
	bool gc_active;
};

struct ssd {
	struct sim_dev dev;
	struct sweep_sim_ssd_params p;
	unsigned P, C;
	uint64_t page, ppb;
	double t_read, t_prog, t_erase, t_chan, t_link; /* ns per op / per page on a bus */
	double *plane_free;
	struct timeline *chan, link;
	struct sim_req **out;
	unsigned nout;
	uint64_t busy_from;
	/* block map */
	uint64_t N, nlbn, age;
	int32_t *lbn_log;
	struct logblk *logs;
	unsigned nlog;
	/* page map */
	uint64_t L, Bp;
	uint32_t *map, *rmap, *valid;
	struct pplane *pl;
	uint64_t rr;
};

static struct ssd *S(const struct sim_dev *d)
{
	return (struct ssd *)d;
}

static double dmax(double a, double b)
{
	return a > b ? a : b;
}

/* ---- timelines ---- */

static void gc_run(struct ssd *s, unsigned p, double until);

/* A page programmed on plane p once its data has crossed the channel; the program's end. */
static double page_program(struct ssd *s, unsigned p, double ready)
{
	double bus = sweep__tl_book(&s->chan[p % s->C], ready, s->t_chan);
	gc_run(s, p, bus + s->t_chan);
	double start = dmax(bus + s->t_chan, s->plane_free[p]);
	s->plane_free[p] = start + s->t_prog;
	s->dev.cnt->flash_pages_written++;
	return s->plane_free[p];
}

/* A page read on plane p from t; when its data has crossed the channel. */
static double page_read(struct ssd *s, unsigned p, double t)
{
	gc_run(s, p, t);
	double start = dmax(t, s->plane_free[p]);
	s->plane_free[p] = start + s->t_read;
	double bus = sweep__tl_book(&s->chan[p % s->C], s->plane_free[p], s->t_chan);
	s->dev.cnt->flash_pages_read++;
	return bus + s->t_chan;
}

/*
 * n page copies for a block-map merge on plane p: without copy-back (the
 * controllers of that FTL's time), each page crosses the channel twice,
 * out to the controller and back.
 */
static void plane_copies(struct ssd *s, unsigned p, double t, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		double r = dmax(t, s->plane_free[p]) + s->t_read;
		double out = sweep__tl_book(&s->chan[p % s->C], r, s->t_chan);
		double back = sweep__tl_book(&s->chan[p % s->C], out + s->t_chan, s->t_chan);
		s->plane_free[p] = back + s->t_chan + s->t_prog;
	}
	s->dev.cnt->flash_pages_read += n;
	s->dev.cnt->flash_pages_written += n;
}

static void plane_erase(struct ssd *s, unsigned p, double t)
{
	s->plane_free[p] = dmax(t, s->plane_free[p]) + s->t_erase;
	s->dev.cnt->erases++;
}

/* ---- block-mapped FTL ---- */

/* How many of the logical offsets [k0, N) live on plane p (offset k is on plane k % P). */
static uint64_t offsets_on_plane(const struct ssd *s, uint64_t k0, unsigned p)
{
	uint64_t first = k0 + ((p + s->P - k0 % s->P) % s->P);
	return first >= s->N ? 0 : (s->N - 1 - first) / s->P + 1;
}

static void merge(struct ssd *s, struct logblk *l, double t)
{
	struct sim_counters *c = s->dev.cnt;
	if (l->inplace && l->wp == s->N) {
		/* switch: the log block becomes the data block; the old one is erased */
		for (unsigned p = 0; p < s->P; p++)
			plane_erase(s, p, t);
		c->merges_switch++;
	} else if (l->inplace) {
		/* partial: copy the tail the log block lacks from the data block */
		for (unsigned p = 0; p < s->P; p++) {
			plane_copies(s, p, t, offsets_on_plane(s, l->wp, p));
			plane_erase(s, p, t);
		}
		c->merges_partial++;
	} else {
		/* full: every valid page to a fresh block; data and log blocks erased */
		for (unsigned p = 0; p < s->P; p++) {
			plane_copies(s, p, t, offsets_on_plane(s, 0, p));
			plane_erase(s, p, t);
			plane_erase(s, p, t);
		}
		c->merges_full++;
	}
	s->lbn_log[l->lbn] = -1;
	l->used = false;
}

static struct logblk *alloc_log(struct ssd *s, uint64_t lbn, double t)
{
	struct logblk *l = NULL;
	for (unsigned i = 0; i < s->nlog; i++)
		if (!s->logs[i].used) {
			l = &s->logs[i];
			break;
		}
	if (!l) {
		/* no free log block: merge the oldest one */
		l = &s->logs[0];
		for (unsigned i = 1; i < s->nlog; i++)
			if (s->logs[i].age < l->age)
				l = &s->logs[i];
		merge(s, l, t);
	}
	l->used = true;
	l->inplace = true;
	l->lbn = lbn;
	l->wp = 0;
	l->age = s->age++;
	memset(l->written, 0, (s->N + 63) / 64 * 8);
	s->lbn_log[lbn] = (int32_t)(l - s->logs);
	return l;
}

static double bm_write(struct ssd *s, uint64_t lpn, double ready)
{
	uint64_t lbn = lpn / s->N, off = lpn % s->N;
	struct logblk *l = s->lbn_log[lbn] >= 0 ? &s->logs[s->lbn_log[lbn]] : alloc_log(s, lbn, ready);
	if (l->inplace && off != l->wp)
		l->inplace = false;
	double end = page_program(s, (unsigned)(l->wp % s->P), ready);
	l->written[off / 64] |= 1ull << (off % 64);
	if (++l->wp == s->N)
		merge(s, l, end);
	return end;
}

static unsigned bm_plane(const struct ssd *s, uint64_t lpn)
{
	return (unsigned)(lpn % s->N % s->P);
}

/* ---- page-mapped FTL ---- */

static uint64_t blk_of(const struct ssd *s, uint64_t ppn)
{
	return ppn / s->ppb;
}

static void pm_take_free(struct ssd *s, unsigned p)
{
	struct pplane *pl = &s->pl[p];
	pl->active = pl->free[--pl->nfree];
	pl->wp = 0;
}

static uint32_t pm_place(struct ssd *s, unsigned p, uint32_t lpn)
{
	struct pplane *pl = &s->pl[p];
	uint32_t ppn = (uint32_t)(((uint64_t)p * s->Bp + pl->active) * s->ppb + pl->wp++);
	s->map[lpn] = ppn;
	s->rmap[ppn] = lpn;
	s->valid[blk_of(s, ppn)]++;
	return ppn;
}

/*
 * Pick plane p's victim (greedy: the fewest valid pages) and move its valid
 * pages in the mapping now; the copies and the erase take plane time later,
 * unit by unit (gc_run). false when nothing can be reclaimed.
 */
static bool gc_pick(struct ssd *s, unsigned p)
{
	struct pplane *pl = &s->pl[p];
	struct sim_counters *c = s->dev.cnt;
	uint64_t base = (uint64_t)p * s->Bp, victim = NONE64;
	uint32_t best = UINT32_MAX;
	for (uint64_t b = 0; b < s->Bp; b++) {
		if (b == pl->active || s->valid[base + b] >= best)
			continue;
		bool isfree = false;
		for (uint32_t i = 0; i < pl->nfree && !isfree; i++)
			isfree = pl->free[i] == b;
		if (isfree)
			continue;
		best = s->valid[base + b];
		victim = b;
	}
	if (victim == NONE64 || best == s->ppb || (best > s->ppb - pl->wp && !pl->nfree))
		return false; /* nothing to reclaim, or nowhere to put it */
	uint32_t moved = 0;
	for (uint64_t i = 0; i < s->ppb; i++) {
		uint64_t ppn = (base + victim) * s->ppb + i;
		uint32_t lpn = s->rmap[ppn];
		if (lpn == INV32)
			continue;
		s->rmap[ppn] = INV32;
		s->valid[base + victim]--;
		if (pl->wp == s->ppb)
			pm_take_free(s, p);
		pm_place(s, p, lpn);
		moved++;
	}
	pl->gc_victim = (uint32_t)victim;
	pl->gc_copies = moved;
	pl->gc_active = true;
	/* the work is committed: counted now */
	c->gc_runs++;
	c->gc_pages_copied += moved;
	c->flash_pages_read += moved;
	c->flash_pages_written += moved;
	c->erases++;
	return true;
}

/* One unit of plane p's GC from its free time: a page copy, or the erase that frees the victim. */
static void gc_unit(struct ssd *s, unsigned p)
{
	struct pplane *pl = &s->pl[p];
	if (pl->gc_copies) {
		s->plane_free[p] += s->t_read + s->t_prog;
		pl->gc_copies--;
		return;
	}
	s->plane_free[p] += s->t_erase;
	pl->free[pl->nfree++] = pl->gc_victim;
	pl->gc_active = false;
}

/* Background GC on plane p: every unit that can start before `until` in the plane's idle time. */
static void gc_run(struct ssd *s, unsigned p, double until)
{
	struct pplane *pl;
	if (s->p.blockmap)
		return;
	pl = &s->pl[p];
	while (s->plane_free[p] < until) {
		if (!pl->gc_active && (pl->nfree > GC_BG || !gc_pick(s, p)))
			return;
		gc_unit(s, p);
	}
}

/* Foreground GC: the writer waits until plane p has a block beyond the reserve (or nothing is reclaimable). */
static void gc_reserve(struct ssd *s, unsigned p, double t)
{
	struct pplane *pl = &s->pl[p];
	if (s->plane_free[p] < t)
		s->plane_free[p] = t;
	while (pl->nfree <= GC_RESERVE) {
		if (!pl->gc_active && !gc_pick(s, p))
			return;
		gc_unit(s, p);
	}
}

static double pm_write(struct ssd *s, uint64_t lpn, double ready)
{
	uint32_t old = s->map[lpn];
	if (old != INV32) {
		s->rmap[old] = INV32;
		s->valid[blk_of(s, old)]--;
	}
	/* dynamic allocation: stripe writes over the planes */
	unsigned p = (unsigned)(s->rr++ % s->P);
	struct pplane *pl = &s->pl[p];
	if (pl->wp == s->ppb) {
		gc_run(s, p, ready);
		if (pl->nfree <= GC_RESERVE)
			gc_reserve(s, p, ready);
		if (pl->wp == s->ppb && pl->nfree) /* GC may have left room in the active block */
			pm_take_free(s, p);
	}
	pm_place(s, p, (uint32_t)lpn);
	return page_program(s, p, ready);
}

static unsigned pm_plane(const struct ssd *s, uint64_t lpn)
{
	return (unsigned)(s->map[lpn] / s->ppb / s->Bp);
}

/* ---- device ---- */

static uint64_t ssd_key(const struct sim_dev *d, uint64_t offset)
{
	uint64_t k = offset / MIB;
	return k < d->nkeys ? k : d->nkeys - 1;
}

static uint64_t ssd_head_key(const struct sim_dev *d)
{
	(void)d;
	return 0;
}

static uint64_t ssd_min_time(const struct sim_dev *d, uint64_t dist)
{
	(void)d;
	(void)dist;
	return 0;
}

static uint64_t ssd_estimate(struct sim_dev *d, uint64_t now, const struct sim_req *r, uint64_t *xfer)
{
	const struct ssd *s = S(d);
	double pages = (double)((r->len + s->page - 1) / s->page);
	double t = r->r.op == SWEEP_SIM_READ ? s->t_read : s->t_prog;
	(void)now;
	*xfer = (uint64_t)(pages * s->t_link);
	return (uint64_t)(t + pages * s->t_link);
}

static bool ssd_can_accept(const struct sim_dev *d)
{
	return S(d)->nout < d->depth;
}

/* The plane that holds logical page lpn now, or -1 when it holds nothing (never written). */
static int held_on(const struct ssd *s, uint64_t lpn)
{
	if (s->p.blockmap)
		return (int)bm_plane(s, lpn);
	return s->map[lpn] == INV32 ? -1 : (int)pm_plane(s, lpn);
}

static void ssd_accept(struct sim_dev *d, uint64_t now, struct sim_req *r)
{
	struct ssd *s = S(d);
	double t = (double)now, fin = t, link = t;
	r->start = now;
	if (r->r.op == SWEEP_SIM_FLUSH) {
		/* no volatile write cache in this model: nothing to write back */
		r->finish = now + 1;
		s->out[s->nout++] = r;
		return;
	}
	uint64_t first = r->off / s->page, last = (r->off + r->len - 1) / s->page;
	uint64_t end = r->off + r->len;
	sweep__tl_trim(&s->link, t);
	for (unsigned c = 0; c < s->C; c++)
		sweep__tl_trim(&s->chan[c], t);
	for (uint64_t lpn = first; lpn <= last; lpn++) {
		/* the host link carries the request's bytes of this page, not a whole page */
		uint64_t pa = lpn * s->page, pe = pa + s->page;
		uint64_t bytes = (end < pe ? end : pe) - (r->off > pa ? r->off : pa);
		double xfer = s->t_link * (double)bytes / (double)s->page;
		if (r->r.op == SWEEP_SIM_WRITE) {
			/* pages stream in over the host link, in order */
			link = sweep__tl_book(&s->link, link, xfer) + xfer;
			double ready = link;
			int old = bytes < s->page ? held_on(s, lpn) : -1;
			if (old >= 0) /* part of a page: the rest of it is read first (read-modify-write) */
				ready = dmax(ready, page_read(s, (unsigned)old, t));
			d->cnt->host_pages_written++;
			double e = s->p.blockmap ? bm_write(s, lpn, ready) : pm_write(s, lpn, ready);
			fin = dmax(fin, e);
		} else {
			unsigned p = s->p.blockmap ? bm_plane(s, lpn) : pm_plane(s, lpn);
			double ready = page_read(s, p, t);
			link = sweep__tl_book(&s->link, dmax(link, ready), xfer) + xfer;
			fin = dmax(fin, link);
		}
		d->cnt->transfer_ns += (uint64_t)xfer;
	}
	r->finish = sim_time_after(now, fin - t);
	if (r->finish <= now)
		r->finish = now + 1;
	s->out[s->nout++] = r;
}

static void ssd_kick(struct sim_dev *d, uint64_t now)
{
	(void)d;
	(void)now;
}

static uint64_t ssd_next_event(const struct sim_dev *d)
{
	const struct ssd *s = S(d);
	uint64_t t = NONE64;
	for (unsigned i = 0; i < s->nout; i++)
		if (s->out[i]->finish < t)
			t = s->out[i]->finish;
	return t;
}

static void ssd_process(struct sim_dev *d, uint64_t now)
{
	struct ssd *s = S(d);
	for (;;) {
		/* complete in (finish, submission) order */
		int best = -1;
		for (unsigned i = 0; i < s->nout; i++) {
			struct sim_req *r = s->out[i];
			if (r->finish > now)
				continue;
			if (best < 0 || r->finish < s->out[best]->finish ||
			    (r->finish == s->out[best]->finish && r->seq < s->out[best]->seq))
				best = (int)i;
		}
		if (best < 0)
			break;
		struct sim_req *r = s->out[best];
		s->out[best] = s->out[--s->nout];
		sweep__dev_done(d, r);
	}
}

static bool ssd_busy(const struct sim_dev *d)
{
	return S(d)->nout > 0;
}

static void ssd_destroy(struct sim_dev *d)
{
	struct ssd *s = S(d);
	if (s->logs)
		for (unsigned i = 0; i < s->nlog; i++)
			free(s->logs[i].written);
	free(s->logs);
	free(s->lbn_log);
	if (s->pl)
		for (unsigned p = 0; p < s->P; p++)
			free(s->pl[p].free);
	free(s->pl);
	free(s->map);
	free(s->rmap);
	free(s->valid);
	free(s->plane_free);
	if (s->chan)
		for (unsigned c = 0; c < s->C; c++)
			sweep__tl_fini(&s->chan[c]);
	free(s->chan);
	sweep__tl_fini(&s->link);
	free(s->out);
	free(s);
}

static const struct sim_dev_ops ssd_ops = {
	.key = ssd_key,
	.head_key = ssd_head_key,
	.min_time = ssd_min_time,
	.estimate = ssd_estimate,
	.can_accept = ssd_can_accept,
	.accept = ssd_accept,
	.kick = ssd_kick,
	.next_event = ssd_next_event,
	.process = ssd_process,
	.busy = ssd_busy,
	.destroy = ssd_destroy,
	.flat = true,
};

static int blockmap_init(struct ssd *s)
{
	s->N = (uint64_t)s->P * s->ppb;
	s->nlbn = s->dev.capacity / (s->N * s->page);
	s->dev.capacity = s->nlbn * s->N * s->page;
	s->dev.logical_block = s->N * s->page;
	s->lbn_log = malloc(s->nlbn * sizeof(*s->lbn_log));
	s->nlog = s->p.log_blocks;
	s->logs = calloc(s->nlog, sizeof(*s->logs));
	if (!s->lbn_log || !s->logs)
		return -ENOMEM;
	for (uint64_t i = 0; i < s->nlbn; i++)
		s->lbn_log[i] = -1;
	for (unsigned i = 0; i < s->nlog; i++) {
		s->logs[i].written = calloc((s->N + 63) / 64, 8);
		if (!s->logs[i].written)
			return -ENOMEM;
	}
	return 0;
}

static int pagemap_init(struct ssd *s)
{
	s->L = s->dev.capacity / s->page;
	uint64_t phys = (uint64_t)ceil((double)s->L * (1.0 + s->p.op));
	s->Bp = (phys + (uint64_t)s->P * s->ppb - 1) / ((uint64_t)s->P * s->ppb) + GC_BG + 2;
	uint64_t nppn = (uint64_t)s->P * s->Bp * s->ppb;
	if (nppn >= INV32)
		return -EINVAL;
	s->map = malloc(s->L * sizeof(uint32_t));
	s->rmap = malloc(nppn * sizeof(uint32_t));
	s->valid = calloc((uint64_t)s->P * s->Bp, sizeof(uint32_t));
	s->pl = calloc(s->P, sizeof(*s->pl));
	if (!s->map || !s->rmap || !s->valid || !s->pl)
		return -ENOMEM;
	memset(s->rmap, 0xff, nppn * sizeof(uint32_t));
	for (unsigned p = 0; p < s->P; p++) {
		struct pplane *pl = &s->pl[p];
		pl->free = malloc(s->Bp * sizeof(uint32_t));
		if (!pl->free)
			return -ENOMEM;
		/* a stack: block 0 is taken first */
		for (uint64_t b = 0; b < s->Bp; b++)
			pl->free[b] = (uint32_t)(s->Bp - 1 - b);
		pl->nfree = (uint32_t)s->Bp;
		pm_take_free(s, p);
	}
	/* the drive starts full: every logical page written once, striped */
	for (uint64_t lpn = 0; lpn < s->L; lpn++) {
		unsigned p = (unsigned)(lpn % s->P);
		if (s->pl[p].wp == s->ppb)
			pm_take_free(s, p);
		pm_place(s, p, (uint32_t)lpn);
	}
	s->rr = 0;
	return 0;
}

SWEEP_EXPORT int sweep_sim_preset_ssd(const char *name, struct sweep_sim_ssd_params *ret)
{
	struct sweep_sim_ssd_params p;
	int i = preset_find(presets, NPRESETS, sizeof(presets[0]), name);
	int err = i < 0 ? -EINVAL : sweep__out_begin(&p, sizeof(p), ret, SIM_MIN);
	if (err)
		return err;
	p = presets[i].p;
	sweep__out_put(ret, &p, sizeof(p));
	return 0;
}

static bool ssd_params_ok(const struct sweep_sim_ssd_params *p)
{
	uint64_t planes = (uint64_t)p->channels * p->dies * p->planes;
	const double v[] = { p->read_us, p->prog_us, p->erase_us, p->chan_mb_s, p->link_mb_s };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!isfinite(v[i]) || v[i] <= 0 || v[i] > 1e9)
			return false;
	/* the page count stays under 2^32 (pagemap_init checks it with the spare), the log pool small */
	return p->channels && p->dies && p->planes && planes <= 4096 && p->page >= 512 && p->page % 512 == 0 &&
	       p->page <= (1u << 20) && p->pages_per_block && p->pages_per_block <= 4096 &&
	       p->capacity / p->page < (1ull << 32) && p->capacity >= planes * p->pages_per_block * p->page &&
	       isfinite(p->op) && p->op >= 0 && p->op <= 4 && (!p->blockmap || p->log_blocks) &&
	       p->log_blocks <= 65536 && p->depth <= SWEEP_SIM_MAX_QUEUE_DEPTH;
}

/* The device named `preset`, or built from o->ssd when given. */
int sweep__ssd_new(const char *preset, const struct sweep_sim_options *o, struct sim_dev **ret)
{
	struct sweep_sim_ssd_params given;
	const struct sweep_sim_ssd_params *p = o->ssd;
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
	if (!p || !ssd_params_ok(p))
		return -EINVAL;
	struct ssd *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->p = *p;
	s->P = p->channels * p->dies * p->planes;
	s->C = p->channels;
	s->page = p->page;
	s->ppb = p->pages_per_block;
	if (p->blockmap && o->logical_block_bytes) {
		/* the bundle size is set through the pages per physical block */
		uint64_t per = (uint64_t)s->P * s->page;
		if (o->logical_block_bytes % per || o->logical_block_bytes / per > 4096) {
			free(s);
			return -EINVAL;
		}
		s->ppb = o->logical_block_bytes / per;
	}
	s->t_read = p->read_us * 1e3;
	s->t_prog = p->prog_us * 1e3;
	s->t_erase = p->erase_us * 1e3;
	s->t_chan = (double)s->page / (p->chan_mb_s * 1e6) * 1e9;
	s->t_link = (double)s->page / (p->link_mb_s * 1e6) * 1e9;

	struct sim_dev *d = &s->dev;
	d->ops = &ssd_ops;
	d->name = name;
	d->kind = SWEEP_SIM_SSD;
	d->capacity = p->capacity;
	d->depth = o->queue_depth ? o->queue_depth : p->depth ? p->depth : 1;
	s->plane_free = calloc(s->P, sizeof(double));
	s->chan = calloc(s->C, sizeof(*s->chan));
	s->out = calloc(d->depth, sizeof(*s->out));
	int err = -ENOMEM;
	if (s->plane_free && s->chan && s->out)
		err = p->blockmap ? blockmap_init(s) : pagemap_init(s);
	if (err < 0) {
		ssd_destroy(d);
		return err;
	}
	d->nkeys = (d->capacity + MIB - 1) / MIB;
	*ret = d;
	return 0;
}
