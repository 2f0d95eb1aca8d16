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
 *    in front of it an optional DRAM write buffer (BPLRU, below) that hands
 *    it only whole logical blocks;
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
 * (timeline.c), so a transfer uses the first gap it fits in. Block-sized
 * work (merges, buffer write-back) and requests of more than BULK_PAGES are
 * laid out in aggregate (bulk_ops), so no request costs more than its
 * page count in FTL updates.
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
 * so one logical block is 4 MiB, SLC timings, 8 log blocks, no NCQ, and a
 * 16 MiB DRAM write buffer (its Figure 1 shows an SDRAM buffer; the size is
 * the model's: with it the host schedulers differ by the few per cent the
 * seed measured, without it by up to 5x, bench/model/README.md).
 * ssd-pagemap: a modern SATA SSD scaled to 16 GiB: 64 planes, 4 KiB pages,
 * 1 MiB blocks, 7% over-provisioning, greedy GC, NCQ 32, a 550 MB/s link.
 */
#define P(...) { sizeof(struct sweep_sim_ssd_params), __VA_ARGS__ }
static const struct ssd_preset presets[] = {
	{ "ssd-blockmap", P(16ull << 30, 4, 4, 2, 2048, 64, 0.0, 25, 250, 1500, 20, 150, 1, 8, 1, 16384) },
	{ "ssd-pagemap", P(16ull << 30, 8, 4, 2, 4096, 256, 0.07, 50, 500, 3000, 400, 550, 0, 0, 32, 0) },
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

/* A logical block's pages in the DRAM write buffer, in LRU order (head: most recent). */
struct wbuf_blk {
	uint64_t lbn, n;
	uint64_t *held; /* bitmap of logical page offsets */
	struct wbuf_blk *prev, *next;
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
	/* block map's write buffer: pages held and room, per logical block, LRU list, background write-back */
	uint64_t buf_pages, buf_used;
	struct wbuf_blk **buf_of;
	struct wbuf_blk *lru_head, *lru_tail;
	uint64_t idle_since, bg_end; /* the device went idle / its background write-back ends */
	bool bg_pending;             /* a write-back is due BUF_IDLE_NS after idle_since */
	uint64_t *scratch; /* 4 * P counters for bulk layouts: a request's, then an eviction's */
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
	if (!n)
		return;
	/* in one booking of the channel (a merge is block-sized work: issue 27): n pages out and back */
	double start = dmax(t, s->plane_free[p]);
	double at = sweep__tl_book(&s->chan[p % s->C], start + s->t_read, 2.0 * (double)n * s->t_chan);
	s->plane_free[p] = dmax(start + (double)n * (s->t_read + s->t_prog), at + 2.0 * (double)n * s->t_chan + s->t_prog);
	s->dev.cnt->flash_pages_read += n;
	s->dev.cnt->flash_pages_written += n;
}

/*
 * Work spread over the planes from t, laid out in aggregate: plane p reads
 * reads[p] pages out to the controller and programs progs[p] pages that
 * come from it, back to back; each channel carries its planes' pages in one
 * booking. When one resource is the bottleneck, as in block-sized work, the
 * end is close to that of laying each page out (a few per cent; issue 27:
 * that took minutes for whole-device requests). Returns when it is all done.
 */
static double bulk_ops(struct ssd *s, double t, const uint64_t *reads, const uint64_t *progs)
{
	double end = t;
	for (unsigned c = 0; c < s->C; c++) {
		uint64_t pages = 0, nr = 0;
		for (unsigned p = c; p < s->P; p += s->C) {
			pages += reads[p] + progs[p];
			nr += reads[p];
		}
		if (!pages)
			continue;
		double chan_start = sweep__tl_book(&s->chan[c], t + (nr ? s->t_read : 0.0), (double)pages * s->t_chan);
		double chan_end = chan_start + (double)pages * s->t_chan;
		for (unsigned p = c; p < s->P; p += s->C) {
			if (!reads[p] && !progs[p])
				continue;
			double start = dmax(t, s->plane_free[p]);
			double pe = start + (double)reads[p] * s->t_read + (double)progs[p] * s->t_prog;
			if (progs[p]) /* the last page is programmed once it has crossed the channel */
				pe = dmax(pe, chan_end + s->t_prog);
			s->plane_free[p] = pe;
			end = dmax(end, pe);
			s->dev.cnt->flash_pages_read += reads[p];
			s->dev.cnt->flash_pages_written += progs[p];
		}
		end = dmax(end, chan_end);
	}
	return end;
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

/*
 * The block map's DRAM write buffer, managed as BPLRU (Kim and Ahn, cited by
 * ssd-schedulers-lba-bundling.txt): writes are acknowledged once in DRAM;
 * when it is full, the least recently written logical block leaves whole,
 * its missing pages read from flash first (page padding), so flash only ever
 * sees a logical block written in order (a switch merge). The order of the
 * host's writes inside the buffer's reach no longer matters to the FTL.
 */
#define BUF_IDLE_NS (10 * NS_PER_MS) /* idle time after which the buffer is written back */

static bool buf_has(const struct ssd *s, uint64_t lpn)
{
	if (!s->buf_of)
		return false;
	const struct wbuf_blk *b = s->buf_of[lpn / s->N];
	uint64_t off = lpn % s->N;
	return b && (b->held[off / 64] >> (off % 64) & 1);
}

static void lru_unlink(struct ssd *s, struct wbuf_blk *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		s->lru_head = b->next;
	if (b->next)
		b->next->prev = b->prev;
	else
		s->lru_tail = b->prev;
	b->prev = b->next = NULL;
}

static void lru_front(struct ssd *s, struct wbuf_blk *b)
{
	b->next = s->lru_head;
	if (s->lru_head)
		s->lru_head->prev = b;
	s->lru_head = b;
	if (!s->lru_tail)
		s->lru_tail = b;
}

/* Write the logical block holding the most pages (the least recently written of those) back from t:
 * when its room is free. */
static double buf_evict(struct ssd *s, double t)
{
	struct wbuf_blk *b = s->lru_tail;
	for (struct wbuf_blk *x = s->lru_tail; x; x = x->prev)
		if (x->n > b->n)
			b = x;
	lru_unlink(s, b);
	s->buf_of[b->lbn] = NULL;
	if (s->lbn_log[b->lbn] >= 0) /* a log block of older writes first becomes the data block */
		merge(s, &s->logs[s->lbn_log[b->lbn]], t);
	/* every page of the block on its plane, the missing ones read first (padding), in one layout */
	uint64_t *reads = s->scratch + 2 * s->P, *progs = s->scratch + 3 * s->P;
	memset(reads, 0, 2 * s->P * sizeof(*s->scratch));
	for (uint64_t off = 0; off < s->N; off++) {
		unsigned p = (unsigned)(off % s->P);
		progs[p]++;
		if (!(b->held[off / 64] >> (off % 64) & 1))
			reads[p]++;
	}
	double end = bulk_ops(s, t, reads, progs);
	for (unsigned p = 0; p < s->P; p++)
		plane_erase(s, p, end); /* the old data block */
	s->dev.cnt->merges_switch++;
	s->buf_used -= b->n;
	free(b->held);
	free(b);
	return end;
}

/* Logical page lpn into the buffer, its data there at `ready`; when it is held (room made first). */
static double buf_write(struct ssd *s, uint64_t lpn, double ready)
{
	uint64_t lbn = lpn / s->N, off = lpn % s->N;
	struct wbuf_blk *b = s->buf_of[lbn];
	if (b && (b->held[off / 64] >> (off % 64) & 1)) {
		lru_unlink(s, b); /* overwritten in DRAM */
		lru_front(s, b);
		return ready;
	}
	double at = ready;
	while (s->buf_used + 1 > s->buf_pages)
		at = dmax(at, buf_evict(s, ready));
	b = s->buf_of[lbn];
	if (!b) {
		b = calloc(1, sizeof(*b));
		uint64_t *held = b ? calloc((s->N + 63) / 64, sizeof(uint64_t)) : NULL;
		if (!held) { /* out of memory: straight to the FTL */
			free(b);
			return bm_write(s, lpn, ready);
		}
		b->held = held;
		b->lbn = lbn;
		s->buf_of[lbn] = b;
	} else {
		lru_unlink(s, b);
	}
	lru_front(s, b);
	b->held[off / 64] |= 1ull << (off % 64);
	b->n++;
	s->buf_used++;
	return at;
}

/* Everything in the buffer written back from t; when that ends. */
static double buf_flush(struct ssd *s, double t)
{
	double end = t;
	while (s->lru_tail)
		end = dmax(end, buf_evict(s, t));
	return end;
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

/* The page map's side of a write of lpn from `ready` (GC made room first): the plane it goes to. */
static unsigned pm_map_write(struct ssd *s, uint64_t lpn, double ready)
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
	return p;
}

static double pm_write(struct ssd *s, uint64_t lpn, double ready)
{
	return page_program(s, pm_map_write(s, lpn, ready), ready);
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

/*
 * A request of more pages than this is laid out in aggregate (bulk_ops): the
 * FTL still sees every page, but the host link, the channels and the planes
 * are booked once each, so its cost no longer grows with page-by-page
 * bookings (1,000 whole-device reads took minutes).
 */
#define BULK_PAGES 4096

/* Pages [first, last] of r from t, in aggregate; when they are done. */
static double bulk_request(struct ssd *s, const struct sim_req *r, double t, uint64_t first, uint64_t last)
{
	uint64_t *reads = s->scratch, *progs = s->scratch + s->P;
	memset(s->scratch, 0, 2 * s->P * sizeof(*s->scratch));
	double bytes = (double)r->len, xfer = s->t_link * bytes / (double)s->page;
	s->dev.cnt->transfer_ns += (uint64_t)xfer;
	if (r->r.op == SWEEP_SIM_WRITE) {
		/* the data streams in over the link; the flash works from the first page on */
		double link = sweep__tl_book(&s->link, t, xfer);
		double fin = link + xfer, ready = link + s->t_link;
		s->dev.cnt->host_pages_written += last - first + 1;
		/* a first or last page written in part is read first (read-modify-write) */
		uint64_t ends[2] = { first, last };
		for (int e = 0; e < 2; e++) {
			uint64_t pa = ends[e] * s->page;
			bool part = e ? r->off + r->len < pa + s->page : r->off > pa;
			int old = part && !buf_has(s, ends[e]) ? held_on(s, ends[e]) : -1;
			if (old >= 0)
				reads[old]++;
		}
		for (uint64_t lpn = first; lpn <= last; lpn++) {
			if (s->buf_of)
				fin = dmax(fin, buf_write(s, lpn, ready)); /* evictions lay themselves out */
			else if (s->p.blockmap)
				fin = dmax(fin, bm_write(s, lpn, ready));
			else
				progs[pm_map_write(s, lpn, ready)]++;
		}
		return dmax(fin, bulk_ops(s, ready, reads, progs) + s->t_link);
	}
	/* reads: from DRAM or from each page's plane, then over the link */
	uint64_t n = last - first + 1;
	if (s->p.blockmap) {
		/* logical page lpn is on plane lpn % P: counted, less the pages the buffer holds */
		for (unsigned p = 0; p < s->P; p++)
			reads[p] = n / s->P + ((p + s->P - first % s->P) % s->P < n % s->P);
		for (const struct wbuf_blk *b = s->lru_head; b; b = b->next)
			for (uint64_t off = 0; off < s->N; off++) {
				uint64_t lpn = b->lbn * s->N + off;
				if (lpn >= first && lpn <= last && (b->held[off / 64] >> (off % 64) & 1))
					reads[lpn % s->P]--;
			}
	} else {
		/* where the page map put them: one page of each 4096th of the range, at a random place in it
		 * (a fixed stride would alias with the stripes), scaled */
		uint64_t k = 0, rng = first ^ (last << 20);
		for (; k < 4096; k++)
			reads[pm_plane(s, first + k * n / 4096 + sim_rand_below(&rng, n / 4096))]++;
		uint64_t total = 0;
		for (unsigned p = 0; p < s->P; p++)
			total += reads[p] = reads[p] * n / k;
		reads[0] += n - total; /* what the rounding left */
	}
	double flash = bulk_ops(s, t, reads, progs);
	double link = sweep__tl_book(&s->link, t + s->t_read + s->t_chan, xfer);
	return dmax(link + xfer, flash + s->t_link);
}

static void ssd_accept(struct sim_dev *d, uint64_t now, struct sim_req *r)
{
	struct ssd *s = S(d);
	double t = (double)now, fin = t, link = t;
	r->start = now;
	s->bg_pending = false; /* busy again: the idle write-back waits for the next idle time */
	if (r->r.op == SWEEP_SIM_FLUSH) {
		/* the write buffer (if any) goes to flash; nothing else is volatile */
		fin = s->buf_of ? buf_flush(s, t) : t;
		r->finish = sim_time_after(now, fin - t);
		if (r->finish <= now)
			r->finish = now + 1;
		s->out[s->nout++] = r;
		return;
	}
	uint64_t first = r->off / s->page, last = (r->off + r->len - 1) / s->page;
	uint64_t end = r->off + r->len;
	sweep__tl_trim(&s->link, t);
	for (unsigned c = 0; c < s->C; c++)
		sweep__tl_trim(&s->chan[c], t);
	if (last - first + 1 > BULK_PAGES) {
		fin = bulk_request(s, r, t, first, last);
		first = last + 1; /* done */
	}
	for (uint64_t lpn = first; lpn <= last; lpn++) {
		/* the host link carries the request's bytes of this page, not a whole page */
		uint64_t pa = lpn * s->page, pe = pa + s->page;
		uint64_t bytes = (end < pe ? end : pe) - (r->off > pa ? r->off : pa);
		double xfer = s->t_link * (double)bytes / (double)s->page;
		if (r->r.op == SWEEP_SIM_WRITE) {
			/* pages stream in over the host link, in order */
			link = sweep__tl_book(&s->link, link, xfer) + xfer;
			double ready = link;
			int old = bytes < s->page && !buf_has(s, lpn) ? held_on(s, lpn) : -1;
			if (old >= 0) /* part of a page: the rest of it is read first (read-modify-write) */
				ready = dmax(ready, page_read(s, (unsigned)old, t));
			d->cnt->host_pages_written++;
			double e = s->buf_of ? buf_write(s, lpn, ready)
				   : s->p.blockmap ? bm_write(s, lpn, ready) : pm_write(s, lpn, ready);
			fin = dmax(fin, e);
		} else {
			unsigned p = s->p.blockmap ? bm_plane(s, lpn) : pm_plane(s, lpn);
			double ready = buf_has(s, lpn) ? t : page_read(s, p, t); /* from DRAM, or from flash */
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
	/* background write-back of the buffer: it starts after an idle while, and ends */
	if (s->bg_pending && s->idle_since + BUF_IDLE_NS < t)
		t = s->idle_since + BUF_IDLE_NS;
	if (s->bg_end && s->bg_end < t)
		t = s->bg_end;
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
	if (s->bg_end && s->bg_end <= now)
		s->bg_end = 0;
	if (s->bg_pending && s->idle_since + BUF_IDLE_NS <= now) {
		/* idle long enough: the buffer goes to flash, as drives do in their idle time */
		s->bg_pending = false;
		uint64_t end = sim_time_after(now, buf_flush(s, (double)now) - (double)now);
		s->bg_end = end > now ? end : 0;
	}
	if (!s->nout && s->lru_head && !s->bg_pending && !s->bg_end) {
		s->bg_pending = true;
		s->idle_since = now;
	}
}

static bool ssd_busy(const struct sim_dev *d)
{
	const struct ssd *s = S(d);
	return s->nout > 0 || s->bg_end;
}

static void ssd_destroy(struct sim_dev *d)
{
	struct ssd *s = S(d);
	if (s->logs)
		for (unsigned i = 0; i < s->nlog; i++)
			free(s->logs[i].written);
	for (struct wbuf_blk *b = s->lru_head, *n; b; b = n) {
		n = b->next;
		free(b->held);
		free(b);
	}
	free(s->buf_of);
	free(s->scratch);
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
	if (s->p.buffer_kib) {
		s->buf_pages = s->p.buffer_kib * 1024 / s->page;
		s->buf_of = calloc(s->nlbn, sizeof(*s->buf_of));
		if (!s->buf_of)
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
	       p->log_blocks <= 65536 && p->depth <= SWEEP_SIM_MAX_QUEUE_DEPTH &&
	       (p->blockmap ? !p->buffer_kib || (p->buffer_kib <= (1u << 24) && p->buffer_kib * 1024 >= p->page)
			    : !p->buffer_kib);
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
	s->scratch = calloc(4 * (size_t)s->P, sizeof(*s->scratch));
	s->chan = calloc(s->C, sizeof(*s->chan));
	s->out = calloc(d->depth, sizeof(*s->out));
	int err = -ENOMEM;
	if (s->plane_free && s->chan && s->out && s->scratch)
		err = p->blockmap ? blockmap_init(s) : pagemap_init(s);
	if (err < 0) {
		ssd_destroy(d);
		return err;
	}
	d->nkeys = (d->capacity + MIB - 1) / MIB;
	*ret = d;
	return 0;
}
