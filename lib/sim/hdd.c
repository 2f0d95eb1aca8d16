/* SPDX-License-Identifier: MIT */
/*
 * The disk: zoned geometry with track and cylinder skew, Ruemmler-Wilkes
 * seek curve, rotation, media transfer, a segmented cache with read-ahead,
 * write-back or write-through, a host interface (bus) shared by every
 * cache transfer, and a tagged queue the drive reorders itself (shortest
 * positioning time first, as drives with NCQ/TCQ do).
 *
 * Where a sector is on the platter, and when it passes under the head, come
 * from one function: the stream clock T(lba), the time a transfer that never
 * stops would reach the sector, counting every track and cylinder skew on
 * the way. The skew of a boundary is the switch time rounded up to whole
 * sectors, so a long transfer goes on without losing a turn, and the angle
 * of sector x is T(x) modulo one revolution: the head's position after any
 * transfer and the rotational position the next request is scheduled from
 * always agree (issue 32: they did not after a track switch, and the next
 * request waited nearly a whole turn).
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
/* A destage grows by coalescing contiguous writes up to this size. */
#define DESTAGE_MAX (4 * MIB)
/* Dirty extents the write cache holds when the parameters do not say. */
#define CACHE_SEGMENTS 64
/*
 * The drive's own queue ages its commands: one that has waited this long is
 * served next, whatever its position (drives bound the starvation of their
 * shortest-positioning-time order; the bound is the model's choice).
 */
#define DRIVE_MAX_WAIT_NS (500 * NS_PER_MS)

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
 * hdd7200: the Hitachi Deskstar 7K500 (HDS725050KLA360, 500 GB, 2005), a
 * 7200 rpm SATA drive of the kind the seeds measured. From Hitachi's
 * specification of the drive (Table 10, data transfer speed): 30 zones;
 * zone 0 reads 76.3 MB/s instantaneous (1242 sectors a track at 7200 rpm)
 * and 64.8 MB/s sustained, zone 29 36.5 MB/s (594 sectors) and 31.0 MB/s;
 * 300 MB/s from the buffer to a SATA host. From its product data: 5
 * platters, 10 heads, 16 MB cache, NCQ, 8.5 ms average read seek. The
 * specification defines the sustained rate as one cylinder's data over
 * (heads - 1) head switches, one cylinder change and one turn per head;
 * both zones give 14.8 ms of switching a cylinder, so a head switch and a
 * cylinder change are 1.48 ms each (the split is ours; the sum is
 * Hitachi's). What the sources at hand do not give for this model, taken
 * from the same maker's 7200 rpm specifications of the time: 1.0 ms single
 * track seek (Travelstar 7K320, read) and 14.7 ms full stroke (Deskstar
 * 75GXP, whose average is also 8.5 ms). The seek curve is fitted to 1.0 /
 * 8.5 / 14.7 ms (the mean over all seek distances, weighted as Hitachi
 * weights it) with its knee at 20000 cylinders. 106350 cylinders of equal
 * zones make 500.1 GB. Command overhead (0.05 ms) and read-ahead (512 KiB)
 * are not published; they stay the model's.
 *
 * hdd7200-2018: the Western Digital (HGST) Ultrastar DC HC310
 * (HUS726T6TALE6L4, 6 TB, SATA, 2018), a drive of the last decade: the
 * transfer rate tripled while the arm and the spindle barely changed. From
 * WD's OEM specification of the drive (Hard Disk Drive Specifications,
 * Ultrastar DC HC310, 3.5 inch Serial ATA, revision 1.4, 18 September
 * 2018; Tables 5 to 7): 7.4 ms average read seek (weighted over all seek
 * pairs, as Hitachi weights it), 0.23 ms single track read seek, 7200 rpm
 * (4.16 ms average latency). From WD's data sheet of the family: 255 MB/s
 * sustained (6 TB model, outer zone), 256 MB cache, SATA 6 Gb/s (600 MB/s),
 * NCQ 32. The capacity is the IDEMA count of a 6 TB drive, 11721045168
 * sectors. Not published in what we could read, and so assumed: the inner
 * zone sustains 0.48 of the outer (122 MB/s; the ratio of the Deskstar
 * 7K500's zone 29 to zone 0, 31.0/64.8, and of the Seagate Constellation
 * ES.3's 83 to 175 MB/s); 8 heads (4 platters of 1.5 TB); a 1.0 ms head
 * switch, which with 8 heads makes the outer zone's sustained rate
 * 255 MB/s at 4649 sectors a track (285.6 MB/s instantaneous) and the inner
 * zone's 122.4 MB/s at 2231; 12.8 ms full stroke (7.4 ms times the 7K500
 * family's 14.7/8.5) and the knee at 80000 of 425854 cylinders (the same
 * fraction as hdd7200's); 30 zones. The seek curve is fitted to 0.23 / 7.4
 * / 12.8 ms as hdd7200's is. 425854 cylinders of equal zones make
 * 11721053232 sectors (6.0012 TB, 8064 more than the drive has). Command
 * overhead (0.05 ms) and read-ahead (512 KiB) stay the model's, as for
 * hdd7200.
 *
 * cheetah15k: like the Seagate ST3146854LC of block-level-optimization:
 * 15k rpm, 8 heads, 146 GB-class, 3.4 ms mean read seek, 0.2 ms single
 * track, 7 ms full stroke, write-through (the paper's setting) and the
 * driver's default depth of 4 (the drive holds 64).
 */
#define P(...) { sizeof(struct sweep_sim_hdd_params), __VA_ARGS__ }
static const struct hdd_preset presets[] = {
	{ "eagle", P(840, 20, 67, 67, 1, 3600.0, 4.6, 0.87, 239, 12.714173778363481, 0.02232510387862169,
		     0.0, 0.0, 3.0, 0, 0, 0, 1, 0) },
	{ "hdd7200", P(106350, 10, 1242, 594, 30, 7200.0, 0.95164110166505633, 0.048358898334943667, 20000,
		       6.1902844119217644, 8.0016883920659663e-05, 1.48, 0.05, 300.0, 512, 16384, 1, 32, 0) },
	{ "hdd7200-2018", P(425854, 8, 4649, 2231, 30, 7200.0, 0.20636707202582596, 0.023632927974174035, 80000,
			    5.5238915037119956, 1.7085962753081474e-05, 1.0, 0.05, 600.0, 512, 262144, 1, 32, 0) },
	{ "cheetah15k", P(50000, 8, 950, 550, 12, 15000.0, 0.1705507787374802, 0.029449221262519802, 5000,
			  1.7254607055410962, 1.0549289574709302e-04, 0.3, 0.05, 320.0, 256, 8192, 0, 4, 0) },
};
#undef P
#define NPRESETS (sizeof(presets) / sizeof(presets[0]))
const char *const sweep__hdd_preset_names[] = { "eagle", "hdd7200", "hdd7200-2018", "cheetah15k", NULL };

struct zone {
	uint64_t first_cyl, cyls, spt, first_lba, nsect;
	double sector_ns;
	double head_skew_ns, cyl_skew_ns; /* whole sectors covering a head switch, a cylinder change */
	double track_ns, cyl_ns;          /* stream time of a track and the head skew after it; of a cylinder */
	double t0;                        /* the stream clock at the zone's first sector */
	/* the same in whole sectors, for the angle: a track and its skew, a cylinder, t0 modulo a turn */
	uint64_t track_sect, cyl_sect;
	double t0_phase;
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
	unsigned cache_segments;
	bool readahead;
	/* mechanical state */
	uint64_t cyl, head;
	struct sim_req *cur;
	uint64_t free_at;
	/* the host interface: every cache transfer (write acks, read hits) takes it in turn */
	uint64_t bus_free;
	/* drive queue (host tags and destages); acks of write-back writes by time */
	struct sim_req *q_head, *q_tail;
	unsigned tags; /* host commands the drive holds, until their completion */
	struct sim_req *ack_head;
	/* write-back: writes waiting for room in the cache, the destage a write may extend, flushes */
	struct sim_req *pend_head, *pend_tail, *last_dirty, *flush_head;
	uint64_t dirty_bytes;
	unsigned dirty_extents;
	/* cache */
	struct seg segs[NSEG];
	unsigned seg_next;
	bool ra_on;                  /* read-ahead running */
	uint64_t ra_start, ra_from, ra_limit; /* cached [ra_start, pos(t)), pos grows from ra_from */
	uint64_t ra_t0;              /* the head finished sector ra_from - 1 at ra_t0 ... */
	double ra_base;              /* ... which is stream clock ra_base */
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

/* The last zone z for which starts(z, key) holds (zones are in order; the first always qualifies). */
static const struct zone *zone_search(const struct hdd *h, bool (*starts)(const struct zone *, const void *),
				      const void *key)
{
	uint64_t lo = 0, hi = h->nzones - 1;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		if (starts(&h->zones[mid], key))
			lo = mid;
		else
			hi = mid - 1;
	}
	return &h->zones[lo];
}

static bool starts_by_lba(const struct zone *z, const void *lba)
{
	return z->first_lba <= *(const uint64_t *)lba;
}

static bool starts_by_time(const struct zone *z, const void *tau)
{
	return z->t0 <= *(const double *)tau;
}

static const struct zone *zone_of_lba(const struct hdd *h, uint64_t lba)
{
	return zone_search(h, starts_by_lba, &lba);
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

/* ---- the stream clock ---- */

/* T(lba): when a transfer that never stopped would start sector lba (ns, from the first sector). */
static double stream_at(const struct hdd *h, uint64_t lba)
{
	const struct zone *z = zone_of_lba(h, lba);
	uint64_t in = lba - z->first_lba, per_cyl = z->spt * h->p.heads;
	uint64_t c = in / per_cyl, r = in % per_cyl;
	return z->t0 + (double)c * z->cyl_ns + (double)(r / z->spt) * z->track_ns + (double)(r % z->spt) * z->sector_ns;
}

/*
 * Where sector lba is on the platter: T(lba) modulo a turn, in ns. Inside a
 * zone T - t0 is a whole number of sectors, so the angle comes from an
 * integer remainder (fmod of the clock's large values was a quarter of the
 * model's time).
 */
static double angle_of(const struct hdd *h, uint64_t lba)
{
	const struct zone *z = zone_of_lba(h, lba);
	uint64_t in = lba - z->first_lba, per_cyl = z->spt * h->p.heads;
	uint64_t c = in / per_cyl, r = in % per_cyl;
	uint64_t k = ((c % z->spt) * (z->cyl_sect % z->spt) + (r / z->spt) * z->track_sect + r % z->spt) % z->spt;
	double a = z->t0_phase + (double)k * z->sector_ns;
	return a >= h->rev_ns ? a - h->rev_ns : a;
}

/* When such a transfer would have finished sector lba. */
static double stream_end(const struct hdd *h, uint64_t lba)
{
	return stream_at(h, lba) + zone_of_lba(h, lba)->sector_ns;
}

/* The first sector such a transfer has not finished by stream time tau (h->sectors past the end). */
static uint64_t stream_done(const struct hdd *h, double tau)
{
	const struct zone *z = zone_search(h, starts_by_time, &tau);
	if (tau < z->t0)
		return z->first_lba;
	double local = tau - z->t0 + 1e-3 * z->sector_ns; /* times are rounded to 1 ns */
	uint64_t per_cyl = z->spt * h->p.heads;
	double c = floor(local / z->cyl_ns);
	if (c >= (double)z->cyls)
		return z->first_lba + z->nsect;
	local -= c * z->cyl_ns;
	double hd = floor(local / z->track_ns);
	if (hd >= (double)h->p.heads)
		return z->first_lba + ((uint64_t)c + 1) * per_cyl;
	local -= hd * z->track_ns;
	double s = floor(local / z->sector_ns);
	if (s > (double)z->spt)
		s = (double)z->spt; /* in the skew after the track */
	return z->first_lba + (uint64_t)c * per_cyl + (uint64_t)hd * z->spt + (uint64_t)s;
}

/* Media time of sectors [a, b): the data alone, zone by zone. */
static double media_ns(const struct hdd *h, uint64_t a, uint64_t b)
{
	double t = 0;
	while (a < b) {
		const struct zone *z = zone_of_lba(h, a);
		uint64_t e = z->first_lba + z->nsect < b ? z->first_lba + z->nsect : b;
		t += (double)(e - a) * z->sector_ns;
		a = e;
	}
	return t;
}

/* Where the platter is at time t + off: 0 <= phase < one revolution (exact for any t below 2^64). */
static double phase(const struct hdd *h, uint64_t t, double off)
{
	double p = t < (1ull << 52) ? fmod((double)t, h->rev_ns) : (double)fmodl((long double)t, (long double)h->rev_ns);
	p = fmod(p + off, h->rev_ns);
	return p < 0 ? p + h->rev_ns : p;
}

/*
 * Rotational wait from phase ph until the sector at angle `at` comes under
 * the head. A sector missed by less than a rounding error (times are whole ns)
 * is not missed: the wait is then slightly negative, which puts the finish
 * back in step with the platter (clamping it to 0 let a sequential stream
 * drift 0.16 ns a request until it missed a whole turn).
 */
static double rot_wait(const struct hdd *h, double ph, double at, double sector_ns)
{
	double w = at - ph;
	if (w < -1e-3 * sector_ns)
		w += h->rev_ns;
	return w;
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
	uint64_t pos = stream_done(h, h->ra_base + (double)(t - h->ra_t0));
	return pos < h->ra_limit ? pos : h->ra_limit;
}

/* When the read-ahead will have read sector b - 1 (ns after t, negative if already). */
static double ra_reach(const struct hdd *h, uint64_t t, uint64_t b)
{
	double since = h->ra_t0 >= t ? (double)(h->ra_t0 - t) : -(double)(t - h->ra_t0);
	return since + (stream_end(h, b - 1) - h->ra_base);
}

/*
 * The first sector of a stream still in the cache when the read-ahead has
 * got to pos: no more than the cache holds lies behind it (a stream's whole
 * length stayed cached, so reading 512 MiB again on a 256 MB drive came
 * back at the interface rate).
 */
static uint64_t kept_from(const struct hdd *h, uint64_t start, uint64_t pos)
{
	uint64_t cache = h->cache_bytes / SECTOR;
	return pos > start && pos - start > cache ? pos - cache : start;
}

/* Remember [a, b) as a cache segment, no more of it than the cache holds. */
static void seg_add(struct hdd *h, uint64_t a, uint64_t b)
{
	h->segs[h->seg_next] = (struct seg){ kept_from(h, a, b), b };
	h->seg_next = (h->seg_next + 1) % NSEG;
}

/*
 * Whether the cache still holds [a, b) in a segment, the read-ahead being at
 * pos. The cache is used newest first: what the running stream has read,
 * then the segments from the last one made; a segment keeps only the tail
 * the cache has room left for. (Each segment once counted whole: a dd over
 * 512 MiB, repeated, came back at the interface rate on a 256 MB drive.)
 */
static bool seg_holds(const struct hdd *h, uint64_t pos, uint64_t a, uint64_t b)
{
	uint64_t room = h->cache_bytes / SECTOR;
	if (h->ra_on)
		room -= pos - kept_from(h, h->ra_start, pos);
	for (unsigned k = 1; k <= NSEG && room; k++) {
		const struct seg *g = &h->segs[(h->seg_next + NSEG - k) % NSEG];
		if (g->end <= g->start)
			continue;
		uint64_t keep = g->end - g->start < room ? g->end - g->start : room;
		if (g->end - keep <= a && b <= g->end)
			return true;
		room -= keep;
	}
	return false;
}

struct service {
	bool hit;
	uint64_t finish, transfer_ns, dist, end_cyl, end_head;
	double access; /* ns from the start until the first sector is under the head (mechanical) */
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

/* A transfer over the host interface from t: when the bus is free, the command, then the data. */
static double bus_after(const struct hdd *h, uint64_t t, uint64_t bytes)
{
	double wait = h->bus_free > t ? (double)(h->bus_free - t) : 0.0;
	return wait + h->overhead_ns + (double)bytes * h->bus_ns_per_byte;
}

/*
 * The time to serve r starting at t from the current head state. cmd_at:
 * when the command reached the drive; its processing (the command overhead)
 * overlaps whatever the drive did meanwhile, so a command queued behind
 * another starts moving the head as soon as that one ends.
 */
static void service(const struct hdd *h, uint64_t t, uint64_t cmd_at, const struct sim_req *r, struct service *s)
{
	uint64_t a = r->off / SECTOR, n = (r->len + SECTOR - 1) / SECTOR, b = a + n;
	*s = (struct service){ .end_cyl = h->cyl, .end_head = h->head };
	if (!n) { /* a flush of a clean cache: the command alone */
		s->finish = sim_time_after(t, bus_after(h, t, 0));
		return;
	}
	double media = media_ns(h, a, b);

	if (r->r.op == SWEEP_SIM_READ && !r->internal) {
		uint64_t pos = ra_pos(h, t);
		if (seg_holds(h, pos, a, b))
			goto bus_hit;
		if (h->ra_on && a >= kept_from(h, h->ra_start, pos)) {
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
				s->hit = true;
				s->finish = sim_time_after(t, fmax(bus_after(h, t, r->len), ra_reach(h, t, b)));
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
	double pos_t = 0; /* destages need no host command */
	if (!r->internal)
		pos_t = cmd_at > t ? (double)(cmd_at - t) + h->overhead_ns : fmax(0.0, h->overhead_ns - (double)(t - cmd_at));
	if (s->dist)
		pos_t += seek_ns(h, h->cyl, c.cyl);
	else if (c.head != h->head)
		pos_t += h->head_switch_ns;
	/* rotational latency: wait for sector a to come under the head, then stream to the end of b - 1 */
	double Ta = stream_at(h, a);
	double wait = rot_wait(h, phase(h, t, pos_t), angle_of(h, a), zone_of_lba(h, a)->sector_ns);
	double xfer = stream_end(h, b - 1) - Ta;
	struct hdd_chs e;
	if (sweep__hdd_map(&h->dev, b - 1, &e) == 0) {
		s->end_cyl = e.cyl;
		s->end_head = e.head;
	}
	s->finish = sim_time_after(t, pos_t + wait + xfer);
	s->access = pos_t + wait;
	s->transfer_ns = (uint64_t)llround(media);
	return;

bus_hit:
	s->hit = true;
	s->mechanical = false;
	s->finish = sim_time_after(t, bus_after(h, t, r->len));
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
	service(h, t, now, r, &s); /* a host request would reach the drive now */
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
 * seek, at the earliest) the platter is at one phase; on each track the
 * candidates are taken in the order their first sector comes under the
 * head, and a track is left once that wait alone cannot beat the best so
 * far (the transfer only adds). Cached data can beat any position, so the
 * requests inside the read-ahead window and the cache segments are looked
 * at first. (Reads of dirty write-back data are hits too, but are looked at
 * only when few destages are queued: with many, such a read may wait for
 * its turn by position.)
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
	double ph = phase(h, t0, pos);
	double sns = z->sector_ns;
	double wlb = c->weighted ? c->wmin : 1.0;
	for (uint64_t hd = 0; hd < h->p.heads; hd++) {
		uint64_t ta = cyl_a + hd * spt, te = ta + spt;
		/* the sector under the head on this track (each track has its own skew) */
		double theta = fmod(ph - angle_of(h, ta) + h->rev_ns, h->rev_ns) / sns;
		uint64_t s0 = (uint64_t)ceil(theta - 1e-3); /* the first sector not yet passed */
		if (s0 > spt)
			s0 = spt;
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
	/* a flush is not queued: the drive takes nothing else until it is done (ATA FLUSH CACHE) */
	return H(d)->tags < d->depth && !H(d)->flush_head;
}

static void q_append(struct hdd *h, struct sim_req *r)
{
	sim_list_append(&h->q_head, &h->q_tail, r);
}

static void ack_insert(struct hdd *h, struct sim_req *r)
{
	struct sim_req **pp = &h->ack_head;
	while (*pp && ((*pp)->finish < r->finish || ((*pp)->finish == r->finish && (*pp)->seq < r->seq)))
		pp = &(*pp)->link;
	r->link = *pp;
	*pp = r;
}

/* Complete r from the cache: its command and `bytes` of data over the bus, after what is already on it. */
static void ack_bus(struct hdd *h, uint64_t now, struct sim_req *r, uint64_t bytes)
{
	r->start = h->bus_free > now ? h->bus_free : now;
	r->finish = sim_time_after(now, bus_after(h, now, bytes));
	h->bus_free = r->finish;
	ack_insert(h, r);
}

static void drop_overlapping(struct hdd *h, uint64_t a, uint64_t b, uint64_t now)
{
	for (unsigned i = 0; i < NSEG; i++)
		if (h->segs[i].start < b && a < h->segs[i].end)
			h->segs[i] = (struct seg){ 0, 0 };
	if (h->ra_on && h->ra_start < b && a < ra_pos(h, now) + 1)
		h->ra_on = false;
}

/*
 * Write-back: writes enter the cache in the order they came while it has
 * room (bytes, and extents: a write that continues the latest destage
 * extends it, any other takes an extent), each acknowledged once its data
 * has crossed the bus; the rest wait, holding their tags, for destages to
 * free room. So the host never writes faster than the bus, nor for long
 * faster than the platter.
 */
static void admit_writes(struct hdd *h, uint64_t now)
{
	while (h->pend_head) {
		struct sim_req *r = h->pend_head, *w = h->last_dirty;
		bool extend = w && w->off + w->len == r->off && w->len + r->len <= DESTAGE_MAX;
		if (h->dirty_bytes + r->len > h->cache_bytes || (!extend && h->dirty_extents >= h->cache_segments))
			break;
		h->pend_head = r->link;
		if (!h->pend_head)
			h->pend_tail = NULL;
		if (extend) {
			w->len += r->len;
		} else if ((w = calloc(1, sizeof(*w)))) {
			/* the drive's private copy, destaged later (and freed by the drive) */
			*w = *r;
			w->internal = true;
			w->merged = NULL;
			q_append(h, w);
			h->last_dirty = w;
			h->dirty_extents++;
		} else {
			q_append(h, r); /* out of memory: written through */
			continue;
		}
		h->dirty_bytes += r->len;
		ack_bus(h, now, r, r->len);
	}
	if (!h->dirty_bytes && !h->pend_head) {
		/* the cache is clean: every waiting flush is done */
		while (h->flush_head) {
			struct sim_req *f = h->flush_head;
			h->flush_head = f->link;
			ack_bus(h, now, f, 0);
		}
	}
}

static void hdd_accept(struct sim_dev *d, uint64_t now, struct sim_req *r)
{
	struct hdd *h = H(d);
	h->tags++;
	if (r->r.op == SWEEP_SIM_FLUSH) {
		r->link = h->flush_head;
		h->flush_head = r; /* at most one: the drive takes nothing while a flush waits */
		admit_writes(h, now);
		return;
	}
	if (r->r.op == SWEEP_SIM_WRITE) {
		drop_overlapping(h, r->off / SECTOR, (r->off + r->len + SECTOR - 1) / SECTOR, now);
		if (d->write_back && r->len <= h->cache_bytes) {
			sim_list_append(&h->pend_head, &h->pend_tail, r);
			admit_writes(h, now);
			return;
		}
	}
	q_append(h, r);
}

/* Stop the read-ahead at t: what it read stays cached, the head is where it stopped. */
static void ra_stop(struct hdd *h, uint64_t t)
{
	if (!h->ra_on)
		return;
	uint64_t pos = ra_pos(h, t);
	seg_add(h, h->ra_start, pos);
	struct hdd_chs c;
	if (pos > h->ra_from && sweep__hdd_map(&h->dev, pos - 1, &c) == 0) {
		h->cyl = c.cyl;
		h->head = c.head;
	}
	h->ra_on = false;
}

/* When a queued command reached the drive (destages: always ready). */
static uint64_t cmd_time(const struct sim_req *r)
{
	return r->internal ? 0 : r->dispatch;
}

static void hdd_kick(struct sim_dev *d, uint64_t now)
{
	struct hdd *h = H(d);
	if (h->cur || !h->q_head)
		return;
	/* the drive's choice: FCFS with one tag, else the oldest command past the age limit, else
	 * shortest positioning time */
	struct sim_req *best = h->q_head, *bprev = NULL, *old = NULL, *oprev = NULL;
	for (struct sim_req *p = NULL, *r = h->q_head; r && h->q_head->link; p = r, r = r->link)
		if (!r->internal && now - r->dispatch >= DRIVE_MAX_WAIT_NS && (!old || r->dispatch < old->dispatch)) {
			old = r;
			oprev = p;
		}
	if (old) {
		best = old;
		bprev = oprev;
	} else if (h->q_head->link) {
		/* by positioning time alone, as drives do: a transfer that crosses a track is no dearer to start
		 * (ranked by its finish, the next piece of a sequential stream lost to one a turn away) */
		double bt = INFINITY;
		for (struct sim_req *p = NULL, *r = h->q_head; r; p = r, r = r->link) {
			struct service s;
			service(h, now, cmd_time(r), r, &s);
			double key = s.mechanical ? s.access : -1.0; /* cache hits first */
			if (key < bt) {
				bt = key;
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
	if (best == h->last_dirty)
		h->last_dirty = NULL; /* being written: later writes start a new extent */

	struct service s;
	service(h, now, cmd_time(best), best, &s);
	if (s.mechanical) {
		ra_stop(h, now);
		service(h, now, cmd_time(best), best, &s); /* the head may have moved with the read-ahead */
		sweep__sim_count_seek(d->cnt, s.dist);
		h->cyl = s.end_cyl;
		h->head = s.end_head;
	} else {
		d->cnt->cache_hits++;
		best->hit = true;
		h->bus_free = s.finish;
		uint64_t lim = s.ra_extend < h->sectors ? s.ra_extend : h->sectors;
		if (lim > h->ra_limit)
			h->ra_limit = lim;
	}
	/* data moved in this service's time: never more than the time it took (utilization <= 100%) */
	d->cnt->transfer_ns += s.transfer_ns < s.finish - now ? s.transfer_ns : s.finish - now;
	best->start = now;
	best->finish = s.finish;
	h->cur = best;
	h->free_at = s.finish;
	if (s.mechanical && best->r.op == SWEEP_SIM_READ && !best->internal) {
		uint64_t a = best->off / SECTOR, b = (best->off + best->len + SECTOR - 1) / SECTOR;
		if (h->readahead && b < h->sectors) {
			h->ra_on = true;
			h->ra_start = a;
			h->ra_from = b;
			h->ra_t0 = s.finish;
			h->ra_base = stream_end(h, b - 1);
			h->ra_limit = b + h->readahead_sect < h->sectors ? b + h->readahead_sect : h->sectors;
		} else if (h->cache_bytes) {
			seg_add(h, a, b);
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
		h->tags--;
		sweep__dev_done(d, r);
	}
	if (h->cur && h->free_at <= now) {
		struct sim_req *r = h->cur;
		h->cur = NULL;
		if (r->internal) {
			/* destaged: the data stays in the cache, clean; room for waiting writes */
			seg_add(h, r->off / SECTOR, (r->off + r->len) / SECTOR);
			h->dirty_bytes -= r->len;
			h->dirty_extents--;
			free(r);
			admit_writes(h, now);
		} else {
			h->tags--;
			sweep__dev_done(d, r);
		}
	}
}

static bool hdd_busy(const struct sim_dev *d)
{
	const struct hdd *h = H(d);
	return h->cur || h->q_head || h->ack_head || h->pend_head || h->flush_head;
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
	int err = i < 0 ? -EINVAL : sweep__out_begin(&p, sizeof(p), ret, SIM_MIN);
	if (err)
		return err;
	p = presets[i].p;
	sweep__out_put(ret, &p, sizeof(p));
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
	       p->readahead_kib <= (1u << 20) && p->cache_kib <= (1u << 24) && p->depth <= SWEEP_SIM_MAX_QUEUE_DEPTH &&
	       p->cache_segments <= 65536;
}

/* The zone table and the stream clock: each zone's skews, and where its first sector is on the clock. */
static void build_zones(struct hdd *h)
{
	const struct sweep_sim_hdd_params *p = &h->p;
	double cyl_switch = fmax(sweep__hdd_seek_ms(&h->seek, 1) * 1e6, h->head_switch_ns);
	uint64_t cyl = 0, lba = 0;
	double t = 0;
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
		/* a skew is the switch rounded up to whole sectors: no turn is lost streaming across it */
		zn->head_skew_ns = ceil(h->head_switch_ns / zn->sector_ns - 1e-9) * zn->sector_ns;
		zn->cyl_skew_ns = ceil(cyl_switch / zn->sector_ns - 1e-9) * zn->sector_ns;
		zn->track_ns = h->rev_ns + zn->head_skew_ns;
		zn->cyl_ns = (double)p->heads * h->rev_ns + (double)(p->heads - 1) * zn->head_skew_ns + zn->cyl_skew_ns;
		zn->t0 = t;
		uint64_t hs = (uint64_t)llround(zn->head_skew_ns / zn->sector_ns);
		uint64_t cs = (uint64_t)llround(zn->cyl_skew_ns / zn->sector_ns);
		zn->track_sect = zn->spt + hs;
		zn->cyl_sect = p->heads * zn->spt + (p->heads - 1) * hs + cs;
		zn->t0_phase = fmod(t, h->rev_ns);
		t += (double)zn->cyls * zn->cyl_ns; /* the last cylinder's skew leads into the next zone */
		cyl += zn->cyls;
		lba += zn->nsect;
	}
	h->sectors = lba;
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
	h->head_switch_ns = p->head_switch_ms * 1e6;
	h->overhead_ns = p->overhead_ms * 1e6;
	h->bus_ns_per_byte = 1e9 / (p->bus_mb_s * 1e6);
	build_zones(h);
	h->cache_bytes = p->cache_kib * 1024;
	h->cache_segments = p->cache_segments ? p->cache_segments : CACHE_SEGMENTS;
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
