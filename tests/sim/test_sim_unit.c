/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the model: each scheduler's choice on hand-made queues,
 * the position queue, the seek curves against their definitions, the zone
 * mapping, service times, caches, FTL merge and GC accounting, traces,
 * determinism and the API's error paths.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim_internal.h"

/* ---- scheduler fixtures ---- */

struct fx {
	struct sim_dev *dev;
	struct sched *s;
	struct sim_counters cnt;
	struct sim_req reqs[64];
	unsigned n;
};

static void fx_open(struct fx *f, const char *device, const char *sched, const struct sweep_sim_options *opts)
{
	struct sweep_sim_options o = { .size = sizeof(o) };
	if (opts)
		o = *opts;
	memset(f, 0, sizeof(*f));
	int err = sweep__hdd_new(device, &o, &f->dev);
	if (err == -EINVAL)
		err = sweep__ssd_new(device, &o, &f->dev);
	assert_int_equal(err, 0);
	f->dev->cnt = &f->cnt;
	assert_int_equal(sweep__sched_new(sched, &o, f->dev, &f->s), 0);
}

static void fx_close(struct fx *f)
{
	sweep__sched_free(f->s);
	f->dev->ops->destroy(f->dev);
}

static struct sim_req *fx_add(struct fx *f, uint64_t off, uint64_t len, int op, uint64_t t, uint32_t stream)
{
	assert_true(f->n < 64);
	struct sim_req *r = &f->reqs[f->n];
	memset(r, 0, sizeof(*r));
	r->r = (struct sweep_sim_request){ .time_ns = t, .offset = off, .length = len, .id = f->n, .op = (uint8_t)op,
					   .stream = stream };
	r->off = off;
	r->len = len;
	r->seq = f->n++;
	sweep__sched_add(f->s, r);
	return r;
}

/* Offset of (cylinder, head, sector) on the Eagle: 20 heads, 67 sectors per track. */
static uint64_t eagle_off(uint64_t cyl, uint64_t head, uint64_t sector)
{
	return ((cyl * 20 + head) * 67 + sector) * 512;
}

/* 4 KiB reads at sector 0 of head 0 of each cylinder, queued in that order at time 0 */
#define ADD_READS(f, ...) add_reads(f, (const uint64_t[]){ __VA_ARGS__ }, sizeof((uint64_t[]){ __VA_ARGS__ }) / 8)
static void add_reads(struct fx *f, const uint64_t *cyls, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fx_add(f, eagle_off(cyls[i], 0, 0), 4096, SWEEP_SIM_READ, 0, 0);
}

static uint64_t picked_cyl(struct fx *f, uint64_t now)
{
	struct sim_req *r = sweep__sched_pick(f->s, now);
	assert_non_null(r);
	return r->key;
}

/*
 * Reads at cylinders a (stream sa) and b (stream sb) of the Eagle queued at
 * 2^62 ns, the last dispatch at cylinder last: the cylinder picked at 2^62 ns
 * (a time limit added to such arrivals must not wrap around 2^64).
 */
static uint64_t picked_late(const struct sweep_sim_options *o, const char *sched, uint64_t last, uint64_t a,
			    uint32_t sa, uint64_t b, uint32_t sb)
{
	struct fx f;
	fx_open(&f, "eagle", sched, o);
	f.s->last_key = last;
	fx_add(&f, eagle_off(a, 0, 0), 4096, SWEEP_SIM_READ, 1ull << 62, sa);
	fx_add(&f, eagle_off(b, 0, 0), 4096, SWEEP_SIM_READ, 1ull << 62, sb);
	uint64_t cyl = picked_cyl(&f, 1ull << 62);
	fx_close(&f);
	return cyl;
}

static void test_fcfs(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f, "eagle", "fcfs", NULL);
	sweep__hdd_set_head(f.dev, 100, 0);
	fx_add(&f, eagle_off(500, 0, 0), 4096, SWEEP_SIM_READ, 0, 0);
	fx_add(&f, eagle_off(10, 0, 0), 4096, SWEEP_SIM_WRITE, 0, 0);
	fx_add(&f, eagle_off(300, 0, 0), 4096, SWEEP_SIM_READ, 0, 0);
	assert_int_equal(picked_cyl(&f, 0), 500);
	assert_int_equal(picked_cyl(&f, 0), 10);
	assert_int_equal(picked_cyl(&f, 0), 300);
	assert_null(sweep__sched_pick(f.s, 0));
	fx_close(&f);
}

static void test_noop_merges(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f, "eagle", "noop", NULL);
	uint64_t x = eagle_off(200, 3, 16);
	fx_add(&f, x, 4096, SWEEP_SIM_WRITE, 0, 0);
	fx_add(&f, x + 4096, 4096, SWEEP_SIM_WRITE, 0, 0); /* back merge */
	fx_add(&f, x - 4096, 4096, SWEEP_SIM_WRITE, 0, 0); /* front merge */
	fx_add(&f, x + 8192, 4096, SWEEP_SIM_READ, 0, 0);  /* adjacent, other direction: no */
	assert_int_equal(f.s->merges, 2);
	struct sim_req *r = sweep__sched_pick(f.s, 0);
	assert_ptr_equal(r, &f.reqs[0]);
	assert_int_equal(r->off, x - 4096);
	assert_int_equal(r->len, 12288);
	unsigned chain = 0;
	for (struct sim_req *m = r->merged; m; m = m->link)
		chain++;
	assert_int_equal(chain, 2);
	r = sweep__sched_pick(f.s, 0);
	assert_int_equal(r->r.op, SWEEP_SIM_READ);
	/* fcfs never merges */
	fx_close(&f);
	fx_open(&f, "eagle", "fcfs", NULL);
	fx_add(&f, x, 4096, SWEEP_SIM_WRITE, 0, 0);
	fx_add(&f, x + 4096, 4096, SWEEP_SIM_WRITE, 0, 0);
	assert_int_equal(f.s->merges, 0);
	fx_close(&f);
	/*
	 * noop merges "sequential requests only if they arrive one after the
	 * other" (block-level-optimization-io-path.txt §5): with a request of
	 * another stream between them, two halves of a file stay apart under
	 * noop and are merged by deadline.
	 */
	for (int k = 0; k < 2; k++) {
		fx_open(&f, "eagle", k ? "deadline" : "noop", NULL);
		fx_add(&f, x, 4096, SWEEP_SIM_WRITE, 0, 0);
		fx_add(&f, eagle_off(700, 0, 0), 4096, SWEEP_SIM_WRITE, 0, 1);
		fx_add(&f, x + 4096, 4096, SWEEP_SIM_WRITE, 0, 0);
		assert_int_equal(f.s->merges, (uint64_t)k);
		fx_close(&f);
	}
}

static void test_ssf(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f, "eagle", "ssf", NULL);
	sweep__hdd_set_head(f.dev, 100, 0);
	ADD_READS(&f, 50, 130, 90);
	assert_int_equal(picked_cyl(&f, 0), 90);
	sweep__hdd_set_head(f.dev, 90, 0);
	assert_int_equal(picked_cyl(&f, 0), 130); /* 40 either way: the tie goes up */
	sweep__hdd_set_head(f.dev, 130, 0);
	assert_int_equal(picked_cyl(&f, 0), 50);
	fx_close(&f);
}

static void test_scan(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f, "eagle", "scan", NULL);
	f.s->last_key = 100;
	ADD_READS(&f, 90, 130, 60);
	assert_int_equal(picked_cyl(&f, 0), 130);
	assert_int_equal(picked_cyl(&f, 0), 90); /* nothing further up: reverse */
	fx_add(&f, eagle_off(95, 0, 0), 4096, SWEEP_SIM_READ, 0, 0);
	assert_int_equal(picked_cyl(&f, 0), 60); /* still going down */
	assert_int_equal(picked_cyl(&f, 0), 95);
	fx_close(&f);
}

static void test_cscan(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f, "eagle", "cscan", NULL);
	f.s->last_key = 100;
	ADD_READS(&f, 90, 130, 60);
	assert_int_equal(picked_cyl(&f, 0), 130);
	assert_int_equal(picked_cyl(&f, 0), 60); /* wrap to the lowest */
	assert_int_equal(picked_cyl(&f, 0), 90);
	/* a request left in the cylinder just served is taken before moving on */
	f.s->last_key = 300;
	fx_add(&f, eagle_off(301, 0, 0), 4096, SWEEP_SIM_READ, 0, 0);
	fx_add(&f, eagle_off(300, 19, 60), 4096, SWEEP_SIM_READ, 0, 0);
	assert_int_equal(picked_cyl(&f, 0), 300);
	fx_close(&f);
}

/* Same cylinder but just missed (a turn away) versus the next cylinder with the sector coming up. */
static void stf_queue(struct fx *f)
{
	sweep__hdd_set_head(f->dev, 100, 0);
	fx_add(f, eagle_off(100, 0, 60), 4096, SWEEP_SIM_READ, 0, 0);
	/* seek(1) = 5.47 ms = 22 sectors of rotation: sector 25 is under the head 3 sectors later */
	fx_add(f, eagle_off(101, 0, 25), 4096, SWEEP_SIM_READ, 0, 0);
}

static void test_stf(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f, "eagle", "stf", NULL);
	stf_queue(&f);
	assert_int_equal(picked_cyl(&f, 0), 101);
	fx_close(&f);
	fx_open(&f, "eagle", "ssf", NULL);
	stf_queue(&f);
	assert_int_equal(picked_cyl(&f, 0), 100);
	fx_close(&f);
	fx_open(&f, "eagle", "sptf", NULL);
	stf_queue(&f);
	assert_int_equal(picked_cyl(&f, 0), 101);
	fx_close(&f);
}

static void test_gstf(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f, "eagle", "gstf", NULL); /* groups of 840/4 = 210 cylinders, as GSTF210 */
	assert_int_equal(f.s->group, 210);
	sweep__hdd_set_head(f.dev, 100, 0);
	ADD_READS(&f, 215, 10, 600);
	assert_int_equal(picked_cyl(&f, 0), 10); /* stays in its group though 215 is nearer */
	sweep__hdd_set_head(f.dev, 10, 0);
	assert_int_equal(picked_cyl(&f, 0), 215); /* group empty: the next group */
	sweep__hdd_set_head(f.dev, 215, 0);
	assert_int_equal(picked_cyl(&f, 0), 600);
	fx_close(&f);
}

static void wstf_queue(struct fx *f, uint64_t now)
{
	/* queued in arrival order, as the model queues them */
	sweep__hdd_set_head(f->dev, 100, 0);
	fx_add(f, eagle_off(700, 0, 30), 4096, SWEEP_SIM_READ, now - 950000000, 0); /* dear, 0.95 s old */
	fx_add(f, eagle_off(101, 0, 30), 4096, SWEEP_SIM_READ, now, 0);            /* cheap, new */
}

static void test_wstf(void **state)
{
	(void)state;
	struct sweep_sim_options o = { .size = sizeof(o),
				       .max_response_ns = NS_PER_S };
	uint64_t now = 2 * NS_PER_S;
	struct fx f;
	/* weight of the old one: (M - E) / M = 0.05, so its 40 ms positioning counts as 2 ms */
	fx_open(&f, "eagle", "wstf", &o);
	wstf_queue(&f, now);
	assert_int_equal(picked_cyl(&f, now), 700);
	fx_close(&f);
	fx_open(&f, "eagle", "stf", &o);
	wstf_queue(&f, now);
	assert_int_equal(picked_cyl(&f, now), 101);
	fx_close(&f);
	/* past M the weight is negative: the overdue request goes first whatever it costs */
	fx_open(&f, "eagle", "wstf", &o);
	sweep__hdd_set_head(f.dev, 100, 0);
	fx_add(&f, eagle_off(839, 0, 30), 4096, SWEEP_SIM_READ, 0, 0);
	fx_add(&f, eagle_off(100, 0, 20), 4096, SWEEP_SIM_READ, now, 0);
	assert_int_equal(picked_cyl(&f, now), 839);
	fx_close(&f);
	/* two overdue requests: chosen between by (aged) positioning time, not oldest first
	 * (issue 13 defect 2: oldest-first is FCFS, and at long queues it never recovers) */
	fx_open(&f, "eagle", "wstf", &o);
	sweep__hdd_set_head(f.dev, 100, 0);
	fx_add(&f, eagle_off(839, 0, 30), 4096, SWEEP_SIM_READ, 0, 0);           /* overdue by 1 s, far */
	fx_add(&f, eagle_off(101, 0, 30), 4096, SWEEP_SIM_READ, NS_PER_S / 2, 0); /* overdue by 0.5 s, near */
	fx_add(&f, eagle_off(100, 0, 20), 4096, SWEEP_SIM_READ, now, 0);         /* not overdue */
	assert_int_equal(picked_cyl(&f, now), 101);
	assert_int_equal(picked_cyl(&f, now), 839);
	assert_int_equal(picked_cyl(&f, now), 100);
	fx_close(&f);
}

static void test_deadline(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f, "eagle", "deadline", NULL);
	f.s->last_key = 250;
	ADD_READS(&f, 200, 300);
	fx_add(&f, eagle_off(260, 0, 0), 4096, SWEEP_SIM_WRITE, 0, 0);
	assert_int_equal(picked_cyl(&f, 0), 300); /* reads first, in sector order from the last one */
	assert_int_equal(picked_cyl(&f, 0), 200); /* end of the sweep: from the oldest read again */
	assert_int_equal(picked_cyl(&f, 0), 260);
	fx_close(&f);
	/* an expired read is served before the sorted order */
	fx_open(&f, "eagle", "deadline", NULL);
	f.s->last_key = 250;
	fx_add(&f, eagle_off(10, 0, 0), 4096, SWEEP_SIM_READ, 0, 0);
	fx_add(&f, eagle_off(300, 0, 0), 4096, SWEEP_SIM_READ, 550 * NS_PER_MS, 0);
	assert_int_equal(picked_cyl(&f, 600 * NS_PER_MS), 10);
	fx_close(&f);
	/* an expiry of 2^64-1 ns never expires (arrival + expiry wrapped around to an early deadline) */
	struct sweep_sim_options never = { .size = sizeof(never), .read_expire_ns = UINT64_MAX };
	assert_int_equal(picked_late(&never, "deadline", 250, 10, 0, 300, 0), 300);
	/* writes get a batch after two read batches (writes_starved = 2) */
	fx_open(&f, "eagle", "deadline", NULL);
	fx_add(&f, eagle_off(500, 0, 0), 4096, SWEEP_SIM_WRITE, 0, 0);
	for (unsigned i = 0; i < 40; i++)
		fx_add(&f, eagle_off(10 + i, 0, 0), 4096, SWEEP_SIM_READ, 0, 0);
	unsigned reads = 0;
	struct sim_req *r;
	while ((r = sweep__sched_pick(f.s, 0)) && r->r.op == SWEEP_SIM_READ)
		reads++;
	assert_non_null(r);
	assert_int_equal(reads, 32); /* two batches of 16 reads, then the starved write */
	fx_close(&f);
}

static void test_irbw_fifo(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f, "ssd-blockmap", "irbw-fifo", NULL);
	assert_int_equal(f.s->bundle, 4 * MIB);
	fx_add(&f, 1 * MIB, 4096, SWEEP_SIM_WRITE, 0, 0);   /* W1 bundle 0 */
	fx_add(&f, 100 * MIB, 4096, SWEEP_SIM_READ, 0, 0);  /* R1 */
	fx_add(&f, 8 * MIB, 4096, SWEEP_SIM_WRITE, 0, 0);   /* W2 bundle 2 */
	fx_add(&f, 0, 4096, SWEEP_SIM_WRITE, 0, 0);         /* W3 bundle 0 */
	struct sim_req *r = sweep__sched_pick(f.s, 0);
	assert_int_equal(r->off, 0); /* the oldest bundle, sorted: W3 then W1 */
	assert_int_equal(sweep__sched_pick(f.s, 0)->off, 1 * MIB);
	assert_int_equal(sweep__sched_pick(f.s, 0)->off, 100 * MIB);
	assert_int_equal(sweep__sched_pick(f.s, 0)->off, 8 * MIB);
	assert_null(sweep__sched_pick(f.s, 0));
	fx_close(&f);
}

static void test_irbw_fifo_rp(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f, "ssd-blockmap", "irbw-fifo-rp", NULL);
	fx_add(&f, 1 * MIB, 4096, SWEEP_SIM_WRITE, 0, 0);
	fx_add(&f, 8 * MIB, 4096, SWEEP_SIM_WRITE, 0, 0);
	fx_add(&f, 100 * MIB, 4096, SWEEP_SIM_READ, 0, 0);
	fx_add(&f, 200 * MIB, 4096, SWEEP_SIM_READ, 0, 0);
	assert_int_equal(sweep__sched_pick(f.s, 0)->off, 100 * MIB); /* bundle 0 yields to the reads queued */
	fx_add(&f, 300 * MIB, 4096, SWEEP_SIM_READ, 0, 0);      /* arrives after the yield */
	assert_int_equal(sweep__sched_pick(f.s, 0)->off, 200 * MIB);
	assert_int_equal(sweep__sched_pick(f.s, 0)->off, 1 * MIB);   /* only once: now bundle 0 */
	assert_int_equal(sweep__sched_pick(f.s, 0)->off, 300 * MIB); /* bundle 2 yields in turn */
	assert_int_equal(sweep__sched_pick(f.s, 0)->off, 8 * MIB);
	fx_close(&f);
}

static void test_bw(void **state)
{
	(void)state;
	struct sweep_sim_stream st[] = {
		{ .stream = 1, .rate_bps = 1000000, .bucket_bytes = 8192 },
		{ .stream = 2, .rate_bps = 1000000, .bucket_bytes = 8192, .deadline_ns = 10 * NS_PER_MS },
	};
	struct sweep_sim_options o = { .size = sizeof(o), .streams = st,
				       .nstreams = 1 };
	struct fx f;
	fx_open(&f, "eagle", "bw", &o);
	sweep__hdd_set_head(f.dev, 100, 0);
	f.s->last_key = 100;
	fx_add(&f, eagle_off(101, 0, 0), 4096, SWEEP_SIM_READ, 0, 0); /* best effort, right here */
	fx_add(&f, eagle_off(700, 0, 0), 4096, SWEEP_SIM_READ, 0, 1); /* reserved, far */
	fx_add(&f, eagle_off(710, 0, 0), 4096, SWEEP_SIM_READ, 0, 1);
	fx_add(&f, eagle_off(720, 0, 0), 4096, SWEEP_SIM_READ, 0, 1);
	assert_int_equal(picked_cyl(&f, 0), 700); /* reserved streams with tokens first */
	assert_int_equal(picked_cyl(&f, 0), 710); /* the bucket is now empty */
	assert_int_equal(picked_cyl(&f, 0), 101); /* so best effort goes */
	assert_int_equal(picked_cyl(&f, 0), 720); /* work conservation: nobody else waits */
	assert_true(f.s->streams[0].tokens >= -4096.0);
	fx_close(&f);

	/* a request past its stream's deadline beats the elevator order */
	o.streams = st;
	o.nstreams = 2;
	fx_open(&f, "eagle", "bw", &o);
	f.s->last_key = 100;
	fx_add(&f, eagle_off(120, 0, 0), 4096, SWEEP_SIM_READ, 15 * NS_PER_MS, 1);
	fx_add(&f, eagle_off(800, 0, 0), 4096, SWEEP_SIM_READ, 0, 2);
	assert_int_equal(picked_cyl(&f, 20 * NS_PER_MS), 800);
	fx_close(&f);
	/* a deadline of 2^64-1 ns is never past (it wrapped around to one in the past) */
	st[1].deadline_ns = UINT64_MAX;
	assert_int_equal(picked_late(&o, "bw", 100, 120, 1, 800, 2), 120);
	st[1].deadline_ns = 10 * NS_PER_MS;

	/* the SSF elevator takes the nearest eligible request, below the head too */
	o.nstreams = 1;
	fx_open(&f, "eagle", "bw-ssf", &o);
	sweep__hdd_set_head(f.dev, 100, 0);
	fx_add(&f, eagle_off(300, 0, 0), 4096, SWEEP_SIM_READ, 0, 1);
	fx_add(&f, eagle_off(90, 0, 0), 4096, SWEEP_SIM_READ, 0, 1);
	assert_int_equal(picked_cyl(&f, 0), 90);
	fx_close(&f);
}

/* ---- position queue ---- */

static void test_posq(void **state)
{
	(void)state;
	struct posq q;
	const uint64_t nkeys = 300000; /* several summary words */
	assert_int_equal(sweep__posq_init(&q, nkeys), 0);
	static struct sim_req r[500];
	static bool present[300000];
	uint64_t rng = 7;
	for (unsigned i = 0; i < 500; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].key = sim_rand_below(&rng, nkeys);
		sweep__posq_insert(&q, &r[i]);
		present[r[i].key] = true;
	}
	for (unsigned i = 0; i < 500; i += 3) { /* remove a third */
		sweep__posq_remove(&q, &r[i]);
		bool still = false;
		for (unsigned j = 0; j < 500; j++)
			if (j % 3 && r[j].key == r[i].key)
				still = true;
		present[r[i].key] = still;
	}
	for (unsigned t = 0; t < 2000; t++) {
		uint64_t k = sim_rand_below(&rng, nkeys);
		uint64_t up = NONE64, dn = NONE64;
		for (uint64_t x = k; x < nkeys; x++)
			if (present[x]) {
				up = x;
				break;
			}
		for (int64_t x = (int64_t)k; x >= 0; x--)
			if (present[x]) {
				dn = (uint64_t)x;
				break;
			}
		assert_int_equal(sweep__posq_next(&q, k), up);
		assert_int_equal(sweep__posq_prev(&q, k), dn);
	}
	sweep__posq_fini(&q);
}

/* ---- disk geometry and timing ---- */

static double mean_random_seek(const struct hdd_seek *s, uint64_t n)
{
	/* two independent uniform cylinders: P(d) = 2 (n - d) / n^2 for d > 0 */
	double sum = 0;
	for (uint64_t d = 1; d < n; d++)
		sum += 2.0 * (double)(n - d) / ((double)n * (double)n) * sweep__hdd_seek_ms(s, d);
	return sum;
}

static void check_curve(const char *preset, double single, double mean, double full)
{
	struct sweep_sim_options o = { .size = sizeof(o) };
	struct sim_dev *d;
	assert_int_equal(sweep__hdd_new(preset, &o, &d), 0);
	const struct hdd_seek *s = sweep__hdd_seek_of(d);
	uint64_t n = sweep__hdd_cylinders(d);
	assert_true(sweep__hdd_seek_ms(s, 0) == 0.0);
	assert_true(fabs(sweep__hdd_seek_ms(s, 1) - single) < 0.01);
	assert_true(fabs(mean_random_seek(s, n) - mean) < 0.05);
	assert_true(fabs(sweep__hdd_seek_ms(s, n - 1) - full) < 0.5);
	/* continuous at the knee and increasing everywhere */
	assert_true(fabs(sweep__hdd_seek_ms(s, s->boundary + 1) - sweep__hdd_seek_ms(s, s->boundary)) < 0.05);
	for (uint64_t x = 1; x < n; x += n / 97 + 1)
		assert_true(sweep__hdd_seek_ms(s, x + 1) >= sweep__hdd_seek_ms(s, x));
	d->ops->destroy(d);
}

static void test_seek_curves(void **state)
{
	(void)state;
	/* the Eagle: sqrt branch exactly as the seed writes it */
	struct sweep_sim_options o = { .size = sizeof(o) };
	struct sim_dev *d;
	assert_int_equal(sweep__hdd_new("eagle", &o, &d), 0);
	const struct hdd_seek *s = sweep__hdd_seek_of(d);
	for (uint64_t x = 1; x <= 239; x++)
		assert_true(fabs(sweep__hdd_seek_ms(s, x) - (4.6 + 0.87 * sqrt((double)x))) < 1e-12);
	assert_int_equal(s->boundary, 239);
	d->ops->destroy(d);
	check_curve("eagle", 4.6 + 0.87, 18.0, 31.4);
	check_curve("hdd7200", 1.0, 8.5, 14.7); /* Deskstar 7K500 and its family (hdd.c) */
	check_curve("hdd7200-2018", 0.23, 7.4, 12.8); /* Ultrastar DC HC310; full stroke assumed (hdd.c) */
	check_curve("cheetah15k", 0.2, 3.4, 7.0);
}

static void test_zone_map(void **state)
{
	(void)state;
	struct sweep_sim_options o = { .size = sizeof(o) };
	struct sim_dev *d;
	struct hdd_chs c;
	assert_int_equal(sweep__hdd_new("eagle", &o, &d), 0);
	assert_int_equal(d->capacity, 840ull * 20 * 67 * 512);
	assert_int_equal(sweep__hdd_map(d, 840ull * 20 * 67 - 1, &c), 0);
	assert_int_equal(c.cyl, 839);
	assert_int_equal(c.head, 19);
	assert_int_equal(c.sector, 66);
	assert_int_equal(sweep__hdd_map(d, 67 * 20 + 67 + 5, &c), 0);
	assert_true(c.cyl == 1 && c.head == 1 && c.sector == 5);
	assert_int_equal(sweep__hdd_map(d, 840ull * 20 * 67, &c), -ERANGE);
	d->ops->destroy(d);

	/* hdd7200: 30 zones of 3545 cylinders, 10 heads, 1242 down to 594 sectors per track */
	assert_int_equal(sweep__hdd_new("hdd7200", &o, &d), 0);
	assert_int_equal(sweep__hdd_map(d, 0, &c), 0);
	assert_true(c.cyl == 0 && c.head == 0 && c.sector == 0 && c.spt == 1242);
	assert_int_equal(sweep__hdd_map(d, 1242, &c), 0);
	assert_true(c.cyl == 0 && c.head == 1 && c.sector == 0);
	assert_int_equal(sweep__hdd_map(d, 10 * 1242, &c), 0);
	assert_true(c.cyl == 1 && c.head == 0);
	uint64_t zone1 = 3545ull * 10 * 1242;
	assert_int_equal(sweep__hdd_map(d, zone1 - 1, &c), 0);
	assert_true(c.cyl == 3544 && c.head == 9 && c.sector == 1241 && c.spt == 1242);
	assert_int_equal(sweep__hdd_map(d, zone1, &c), 0);
	assert_true(c.cyl == 3545 && c.head == 0 && c.sector == 0 && c.spt == 1242 - 648 / 29);
	uint64_t sectors = d->capacity / 512;
	assert_true(d->capacity > 500000000000ull && d->capacity < 500200000000ull); /* 500 GB */
	assert_int_equal(sweep__hdd_map(d, sectors - 1, &c), 0);
	assert_true(c.cyl == 106349 && c.head == 9 && c.sector == 593 && c.spt == 594);
	/* monotone: cylinders never go back as LBAs grow, tracks shrink inward */
	uint64_t last_cyl = 0, last_spt = 1242;
	for (uint64_t lba = 0; lba < sectors; lba += sectors / 1009) {
		assert_int_equal(sweep__hdd_map(d, lba, &c), 0);
		assert_true(c.cyl >= last_cyl && c.spt <= last_spt);
		last_cyl = c.cyl;
		last_spt = c.spt;
	}
	d->ops->destroy(d);
}

/* Run a request through the public API and return its completion. */
static struct sweep_sim_completion run_one(struct sweep_sim *sim, uint64_t t, uint64_t off, uint64_t len, int op)
{
	struct sweep_sim_request q = { .time_ns = t, .offset = off, .length = len, .op = (uint8_t)op };
	assert_int_equal(sweep_sim_submit(sim, &q), 0);
	uint64_t ev;
	struct sweep_sim_completion c;
	for (;;) {
		assert_int_equal(sweep_sim_next_event(sim, &ev), 1);
		assert_true(sweep_sim_advance(sim, ev) >= 0);
		if (sweep_sim_poll(sim, &c, 1) == 1)
			return c;
	}
}

static struct sweep_sim *new_sim(const char *dev, const char *sched, int wc, int ra, unsigned depth)
{
	struct sweep_sim_options o = { .size = sizeof(o), .device = dev, .sched = sched, .write_cache = wc,
				       .readahead = ra, .queue_depth = depth };
	struct sweep_sim *sim = NULL;
	assert_int_equal(sweep_sim_new(&o, &sim), 0);
	return sim;
}

static void test_service_time(void **state)
{
	(void)state;
	struct sweep_sim *sim = new_sim("eagle", "fcfs", 0, 0, 0);
	const double rev = 60e9 / 3600, sect = rev / 67;
	/*
	 * From cylinder 0 at t=0 to (400, 3, 10): seek, wait for sector 10, 8
	 * sectors. Each cylinder is skewed by the 5.47 ms cylinder switch rounded
	 * up to 22 sectors (the Eagle switches heads for free), so sector 10 of
	 * any track of cylinder 400 passes under the head at (400 * 22 + 10) mod 67.
	 */
	double seek = (12.714173778363481 + 0.02232510387862169 * 400) * 1e6;
	double frac = fmod(seek, rev) / rev * 67;
	double wait = fmod(400.0 * 22 + 10, 67) - frac;
	if (wait < 0)
		wait += 67;
	double expect = seek + wait * sect + 8 * sect;
	struct sweep_sim_completion c = run_one(sim, 0, eagle_off(400, 3, 10), 4096, SWEEP_SIM_READ);
	assert_true(fabs((double)c.finish_ns - expect) < 2.0);
	assert_int_equal(c.position, 400);
	/* the next 4 KiB on the same track, asked for at once: no seek, no wait */
	uint64_t t = c.finish_ns;
	c = run_one(sim, t, eagle_off(400, 3, 18), 4096, SWEEP_SIM_READ);
	assert_true(fabs((double)(c.finish_ns - t) - 8 * sect) < 2.0);
	/* across the end of the track: a head switch costs nothing on the Eagle, transfer only */
	t = c.finish_ns;
	c = run_one(sim, t, eagle_off(400, 3, 26), 47 * 512, SWEEP_SIM_READ); /* 41 sectors, then 6 on head 4 */
	assert_true(fabs((double)(c.finish_ns - t) - 47 * sect) < 2.0);
	t = c.finish_ns;
	c = run_one(sim, t, eagle_off(400, 4, 6), 8 * 512, SWEEP_SIM_READ);
	assert_true(fabs((double)(c.finish_ns - t) - 8 * sect) < 2.0);
	/*
	 * Issue 32 defect 3: across the end of a cylinder the transfer waits the
	 * cylinder skew (22 sectors), and the head is then where the next sector
	 * comes under it: a read of the next 4 KiB asked for at once waits for
	 * nothing. (The head's angle after a switch used to disagree with the
	 * angle the next request was scheduled from: it waited 44 sectors.)
	 */
	t = c.finish_ns;
	/* from sector 14 of (400, 4): 45 sectors to sector 59 of (400, 19), 8 of it, the skew, 8 of (401, 0) */
	c = run_one(sim, t, eagle_off(400, 19, 59), 16 * 512, SWEEP_SIM_READ);
	assert_true(fabs((double)(c.finish_ns - t) - (45 + 8 + 22 + 8) * sect) < 2.0);
	t = c.finish_ns;
	c = run_one(sim, t, eagle_off(401, 0, 8), 4096, SWEEP_SIM_READ);
	assert_true(fabs((double)(c.finish_ns - t) - 8 * sect) < 2.0);
	struct sweep_sim_stats st = { .size = sizeof(st) };
	assert_int_equal(sweep_sim_get_stats(sim, &st), 0);
	assert_int_equal(st.requests, 6);
	assert_int_equal(st.seek_count, 1); /* streaming onto cylinder 401 is no seek */
	assert_int_equal(st.seek_hist[9], 1); /* 400 is in [256, 512) */
	assert_int_equal(st.seek_hist[0], 5);
	sweep_sim_free(sim);
}

static void test_write_cache(void **state)
{
	(void)state;
	/* write-back: acknowledged from the cache; a read of the same data is a cache hit */
	struct sweep_sim *sim = new_sim("hdd7200", "fcfs", SWEEP_SIM_WRITE_BACK, SWEEP_SIM_OFF, 1);
	uint64_t off = 123456789ull * 4096 % (400ull << 30);
	struct sweep_sim_completion c = run_one(sim, 0, off, 4096, SWEEP_SIM_WRITE);
	assert_true(c.finish_ns < 200000); /* < 0.2 ms: no seek, no rotation */
	c = run_one(sim, c.finish_ns, off, 4096, SWEEP_SIM_READ);
	assert_int_equal(c.cache_hit, 1);
	sweep_sim_free(sim);
	/* write-through: the same write waits for the platter */
	sim = new_sim("hdd7200", "fcfs", SWEEP_SIM_WRITE_THROUGH, SWEEP_SIM_OFF, 1);
	c = run_one(sim, 0, off, 4096, SWEEP_SIM_WRITE);
	assert_true(c.finish_ns > 2000000);
	assert_int_equal(c.cache_hit, 0);
	sweep_sim_free(sim);
}

static int src_gen(void *ctx, struct sweep_sim_request *r)
{
	return sweep_sim_synth_next(ctx, r);
}

/* Closed run of a synthetic pattern; fills st. */
static void synth_run(struct sweep_sim *sim, const char *pattern, uint64_t size, uint64_t n, unsigned q,
		      uint64_t seed, struct sweep_sim_stats *st)
{
	struct sweep_sim_info info = { .size = sizeof(info) };
	assert_int_equal(sweep_sim_get_info(sim, &info), 0);
	struct sweep_sim_synth_options so = { .size = sizeof(so), .pattern = pattern, .request_size = size,
					      .capacity = info.capacity, .requests = n, .seed = seed };
	struct sweep_sim_synth *g;
	assert_int_equal(sweep_sim_synth_new(&so, &g), 0);
	struct sweep_sim_run_options ro = { .size = sizeof(ro), .mode = SWEEP_SIM_CLOSED, .depth = q };
	assert_int_equal(sweep_sim_run(sim, src_gen, g, &ro), (int64_t)n);
	sweep_sim_synth_free(g);
	st->size = sizeof(*st);
	assert_int_equal(sweep_sim_get_stats(sim, st), 0);
}

static void test_readahead_and_ncq(void **state)
{
	(void)state;
	struct sweep_sim_stats on, off;
	struct sweep_sim *sim = new_sim("hdd7200", "fcfs", 0, SWEEP_SIM_ON, 0);
	synth_run(sim, "seqread", 65536, 2000, 1, 1, &on);
	sweep_sim_free(sim);
	sim = new_sim("hdd7200", "fcfs", 0, SWEEP_SIM_OFF, 0);
	synth_run(sim, "seqread", 65536, 2000, 1, 1, &off);
	sweep_sim_free(sim);
	/*
	 * With read-ahead one request at a time streams at the sustained media
	 * rate Hitachi gives for zone 0 of the Deskstar 7K500, 64.8 MB/s (its
	 * instantaneous 76.3 MB/s less the head and cylinder switches), within
	 * 1%; the platter transfers data 64.8 / 76.3 of the time.
	 */
	assert_true(fabs(on.throughput_mib_s * 1.048576 / 64.8 - 1) < 0.01);
	assert_true(fabs(on.utilization - 64.8 / 76.3) < 0.01);
	assert_true(on.cache_hits > 1900);
	assert_true(off.utilization < 0.5 * on.utilization);

	/* the drive's own reordering: 32 tags beat one, FCFS above them both */
	struct sweep_sim_stats d1, d32;
	sim = new_sim("hdd7200", "fcfs", 0, 0, 1);
	synth_run(sim, "randread", 4096, 3200, 32, 5, &d1);
	sweep_sim_free(sim);
	sim = new_sim("hdd7200", "fcfs", 0, 0, 32);
	synth_run(sim, "randread", 4096, 3200, 32, 5, &d32);
	sweep_sim_free(sim);
	assert_true(d32.throughput_mib_s > 1.8 * d1.throughput_mib_s);
}

/*
 * A reader that skips a little between files (4 KiB read, 1 KiB gap, one
 * request at a time) rides the read-ahead stream: no request may wait for a
 * whole revolution, and without read-ahead nearly every one does (the gap
 * passes under the head in less than the 0.05 ms command overhead).
 */
static void test_readahead_gap(void **state)
{
	(void)state;
	const uint64_t rev_ns = 8333333; /* hdd7200: 7200 rpm */
	for (int ra = 0; ra < 2; ra++) {
		struct sweep_sim *sim = new_sim("hdd7200", "fcfs", 0, ra ? SWEEP_SIM_ON : SWEEP_SIM_OFF, 1);
		uint64_t t = 0, slow = 0;
		t = run_one(sim, t, 0, 4096, SWEEP_SIM_READ).finish_ns; /* position the head */
		for (uint64_t i = 1; i <= 200; i++) {
			struct sweep_sim_completion c = run_one(sim, t, i * 5120, 4096, SWEEP_SIM_READ);
			if (c.finish_ns - c.start_ns > rev_ns / 2)
				slow++;
			t = c.finish_ns;
		}
		if (ra)
			assert_int_equal(slow, 0);
		else
			assert_true(slow > 150);
		sweep_sim_free(sim);
	}
}

/* ---- SSD ---- */

/* The block-mapped SSD's FTL (log blocks, merges) under no write buffer: the preset's, buffer_kib = 0. */
static struct sweep_sim *blockmap_unbuffered(uint64_t logical_block)
{
	struct sweep_sim_ssd_params sp = { .size = sizeof(sp) };
	assert_int_equal(sweep_sim_preset_ssd("ssd-blockmap", &sp), 0);
	sp.buffer_kib = 0;
	struct sweep_sim_options o = { .size = sizeof(o), .device = "ssd-blockmap", .ssd = &sp,
				       .logical_block_bytes = logical_block };
	struct sweep_sim *sim = NULL;
	assert_int_equal(sweep_sim_new(&o, &sim), 0);
	return sim;
}

static void test_blockmap_merges(void **state)
{
	(void)state;
	struct sweep_sim *sim = blockmap_unbuffered(0);
	struct sweep_sim_info info = { .size = sizeof(info) };
	sweep_sim_get_info(sim, &info);
	const uint64_t LB = 4 * MIB, N = LB / 2048, P = 32;
	assert_int_equal(info.logical_block_bytes, LB);
	uint64_t t = 0;
	/* 1. a whole logical block in order: switch merge */
	t = run_one(sim, t, 0, LB, SWEEP_SIM_WRITE).finish_ns;
	/* 2. the first half of block 1 in order, 3. block 2 out of order */
	t = run_one(sim, t, LB, LB / 2, SWEEP_SIM_WRITE).finish_ns;
	t = run_one(sim, t, 2 * LB + 8192, 4096, SWEEP_SIM_WRITE).finish_ns;
	t = run_one(sim, t, 2 * LB, 4096, SWEEP_SIM_WRITE).finish_ns;
	/* 4. six more log blocks fill the pool of eight */
	for (uint64_t b = 3; b <= 8; b++)
		t = run_one(sim, t, b * LB, 4096, SWEEP_SIM_WRITE).finish_ns;
	struct sweep_sim_stats st = { .size = sizeof(st) };
	sweep_sim_get_stats(sim, &st);
	assert_int_equal(st.merges_switch, 1);
	assert_int_equal(st.merges_partial + st.merges_full, 0);
	/* 5. block 9 evicts block 1's log: partial merge; 6. block 10 evicts block 2's: full merge */
	t = run_one(sim, t, 9 * LB, 4096, SWEEP_SIM_WRITE).finish_ns;
	t = run_one(sim, t, 10 * LB, 4096, SWEEP_SIM_WRITE).finish_ns;
	sweep_sim_get_stats(sim, &st);
	assert_int_equal(st.merges_switch, 1);
	assert_int_equal(st.merges_partial, 1);
	assert_int_equal(st.merges_full, 1);
	uint64_t host = N + N / 2 + 2 + 2 + 6 * 2 + 2 + 2;
	assert_int_equal(st.host_pages_written, host);
	assert_int_equal(st.flash_pages_written, host + N / 2 + N); /* partial copies half, full all */
	assert_int_equal(st.erases, P + P + 2 * P);
	assert_true(fabs(st.write_amplification - (double)(host + N / 2 + N) / (double)host) < 1e-9);
	sweep_sim_free(sim);

	/* a smaller logical block through the options */
	sim = blockmap_unbuffered(MIB);
	sweep_sim_get_info(sim, &info);
	assert_int_equal(info.logical_block_bytes, MIB);
	run_one(sim, 0, 5 * MIB, MIB, SWEEP_SIM_WRITE);
	sweep_sim_get_stats(sim, &st);
	assert_int_equal(st.merges_switch, 1);
	sweep_sim_free(sim);
	struct sweep_sim_options o = { .size = sizeof(o), .device = "ssd-blockmap", .logical_block_bytes = 1000000 };
	assert_int_equal(sweep_sim_new(&o, &sim), -EINVAL); /* not a multiple of planes x page */

	/*
	 * The preset's 16 MiB DRAM write buffer (BPLRU): the same writes stay in
	 * DRAM (each acknowledged at link speed); a flush writes every logical
	 * block back whole, its missing pages read first (page padding), so each
	 * is a switch merge whatever order the pages came in.
	 */
	sim = new_sim("ssd-blockmap", "fcfs", 0, 0, 0);
	t = 0;
	struct sweep_sim_completion c = run_one(sim, t, 0, LB, SWEEP_SIM_WRITE);
	assert_true(c.finish_ns - c.arrival_ns < 30000000); /* 4 MiB over the 150 MB/s link: 28 ms */
	t = run_one(sim, c.finish_ns, LB, LB / 2, SWEEP_SIM_WRITE).finish_ns;
	t = run_one(sim, t, 2 * LB + 8192, 4096, SWEEP_SIM_WRITE).finish_ns;
	t = run_one(sim, t, 2 * LB, 4096, SWEEP_SIM_WRITE).finish_ns;
	for (uint64_t b = 3; b <= 8; b++)
		t = run_one(sim, t, b * LB, 4096, SWEEP_SIM_WRITE).finish_ns;
	sweep_sim_get_stats(sim, &st);
	assert_int_equal(st.flash_pages_written, 0);
	c = run_one(sim, t, 0, 0, SWEEP_SIM_FLUSH);
	sweep_sim_get_stats(sim, &st);
	host = N + N / 2 + 2 + 2 + 6 * 2;
	assert_int_equal(st.host_pages_written, host);
	assert_int_equal(st.merges_switch, 9);
	assert_int_equal(st.merges_partial + st.merges_full, 0);
	assert_int_equal(st.flash_pages_written, 9 * N);
	assert_int_equal(st.flash_pages_read, 9 * N - host); /* the padding */
	assert_int_equal(st.erases, 9 * P);
	assert_true(c.finish_ns - c.arrival_ns > 9 * N / P * 250000); /* 9 blocks programmed, 250 us a page */
	sweep_sim_free(sim);
}

static void test_pagemap_gc(void **state)
{
	(void)state;
	struct sweep_sim_stats st;
	struct sweep_sim *sim = new_sim("ssd-pagemap", "noop", 0, 0, 0);
	/* random 4 KiB overwrites of a full drive use up the 7% spare, then GC runs */
	synth_run(sim, "randwrite", 4096, 450000, 32, 3, &st);
	assert_true(st.gc_runs > 0);
	assert_int_equal(st.erases, st.gc_runs); /* one victim block erased per GC */
	assert_int_equal(st.flash_pages_written, st.host_pages_written + st.gc_pages_copied);
	assert_true(st.write_amplification > 1.0);
	assert_int_equal(st.merges_switch + st.merges_partial + st.merges_full, 0);
	sweep_sim_free(sim);
}

/*
 * Issue 13 defect 3: page-map GC ran synchronously until a plane had three
 * free blocks (seconds of plane time at once), and channels and the host
 * link were single "free at" times, so one collecting plane held up every
 * later request. A 256 MiB page-mapped SSD, 4 KiB requests at 200 IOPS, half
 * random writes: once GC runs, no read may wait for more than the GC unit
 * under way on its plane (an erase, 3 ms, plus its own read), where it
 * waited for seconds.
 */
static const char *write_tmp(const char *name, const char *text);

struct reads_max {
	uint64_t n, max_ns;
};

static void on_read(void *ctx, const struct sweep_sim_completion *c)
{
	struct reads_max *m = ctx;
	if (c->op == SWEEP_SIM_READ) {
		m->n++;
		if (c->finish_ns - c->arrival_ns > m->max_ns)
			m->max_ns = c->finish_ns - c->arrival_ns;
	}
}

static void test_background_gc(void **state)
{
	(void)state;
	static char text[40000 * 40];
	size_t len = 0;
	uint64_t rng = 13, t_us = 0;
	for (unsigned i = 0; i < 40000; i++) {
		t_us += 1 + sim_rand_below(&rng, 10000); /* 5 ms apart on average */
		uint64_t page = sim_rand_below(&rng, (256ull << 20) / 4096);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%.3f 0 %llu 8 %d\n", (double)t_us / 1000.0,
					(unsigned long long)page * 8, (int)(sim_rand(&rng) & 1));
	}
	struct sweep_sim_trace *tr;
	assert_int_equal(sweep_sim_trace_load(write_tmp("gc.disksim", text), "disksim", &tr), 0);
	struct sweep_sim_ssd_params sp = { .size = sizeof(sp) };
	assert_int_equal(sweep_sim_preset_ssd("ssd-pagemap", &sp), 0);
	sp.capacity = 256ull << 20;
	sp.pages_per_block = 32; /* 128 KiB blocks: the 7% spare is a few blocks a plane, as on a big drive */
	struct sweep_sim_options o = { .size = sizeof(o), .ssd = &sp, .sched = "noop" };
	struct sweep_sim *sim;
	assert_int_equal(sweep_sim_new(&o, &sim), 0);
	struct reads_max m = { 0, 0 };
	struct sweep_sim_run_options ro = { .size = sizeof(ro), .mode = SWEEP_SIM_OPEN, .on_complete = on_read,
					    .ctx = &m };
	assert_int_equal(sweep_sim_trace_replay(sim, tr, &ro), 40000);
	struct sweep_sim_stats st = { .size = sizeof(st) };
	sweep_sim_get_stats(sim, &st);
	print_message("256 MiB pagemap, 200 IOPS half writes: %llu GC runs, %llu pages copied, read max %.3f ms\n",
		      (unsigned long long)st.gc_runs, (unsigned long long)st.gc_pages_copied, (double)m.max_ns / 1e6);
	assert_true(st.gc_runs > 100 && st.gc_pages_copied > 1000);
	assert_true(m.n > 19000);
	assert_true(m.max_ns < 5 * NS_PER_MS); /* erase 3 ms + read 50 us + transfers */
	assert_int_equal(st.flash_pages_written, st.host_pages_written + st.gc_pages_copied);
	sweep_sim_free(sim);
	sweep_sim_trace_free(tr);
}

/* ---- determinism ---- */

struct collect {
	uint64_t hash, n;
};

static void on_c(void *ctx, const struct sweep_sim_completion *c)
{
	struct collect *k = ctx;
	const unsigned char *p = (const unsigned char *)c;
	/* FNV-1a over the fields (no padding bytes) */
	uint64_t v[] = { c->id, c->offset, c->length, c->arrival_ns, c->dispatch_ns, c->start_ns, c->finish_ns,
			 c->position, c->stream, c->op, c->cache_hit };
	(void)p;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		k->hash ^= v[i];
		k->hash *= 0x100000001b3ull;
	}
	k->n++;
}

static struct collect det_run(const char *dev, const char *sched, const char *pattern, uint64_t seed)
{
	struct sweep_sim *sim = new_sim(dev, sched, 0, 0, 0);
	struct sweep_sim_info info = { .size = sizeof(info) };
	sweep_sim_get_info(sim, &info);
	struct sweep_sim_synth_options so = { .size = sizeof(so), .pattern = pattern, .capacity = info.capacity,
					      .requests = 3000, .seed = seed };
	struct sweep_sim_synth *g;
	assert_int_equal(sweep_sim_synth_new(&so, &g), 0);
	struct collect k = { .hash = 0xcbf29ce484222325ull };
	struct sweep_sim_run_options ro = { .size = sizeof(ro), .mode = SWEEP_SIM_CLOSED, .depth = 16,
					    .on_complete = on_c, .ctx = &k };
	assert_int_equal(sweep_sim_run(sim, src_gen, g, &ro), 3000);
	sweep_sim_synth_free(g);
	sweep_sim_free(sim);
	return k;
}

static void test_determinism(void **state)
{
	(void)state;
	const char *cases[][3] = { { "eagle", "stf", "random4k" }, { "hdd7200", "wstf", "postmark" },
				   { "ssd-blockmap", "irbw-fifo-rp", "postmark" }, { "ssd-pagemap", "deadline", "randwrite" } };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct collect a = det_run(cases[i][0], cases[i][1], cases[i][2], 42);
		struct collect b = det_run(cases[i][0], cases[i][1], cases[i][2], 42);
		struct collect c = det_run(cases[i][0], cases[i][1], cases[i][2], 43);
		assert_int_equal(a.n, 3000);
		assert_int_equal(a.hash, b.hash);
		assert_true(a.hash != c.hash);
	}
}

/* No global state: the same runs in two threads at once give the single-threaded results. */
struct thread_job {
	const char *dev, *sched, *pattern;
	struct collect out;
};

static void *thread_run(void *p)
{
	struct thread_job *j = p;
	j->out = det_run(j->dev, j->sched, j->pattern, 7);
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	struct thread_job jobs[] = { { "eagle", "wstf", "random4k", { 0, 0 } },
				     { "ssd-blockmap", "irbw-fifo-rp", "postmark", { 0, 0 } },
				     { "eagle", "wstf", "random4k", { 0, 0 } } };
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, thread_run, &jobs[i]), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	assert_int_equal(jobs[0].out.hash, jobs[2].out.hash);
	assert_int_equal(jobs[0].out.hash, det_run("eagle", "wstf", "random4k", 7).hash);
	assert_int_equal(jobs[1].out.hash, det_run("ssd-blockmap", "irbw-fifo-rp", "postmark", 7).hash);
}

/* ---- traces ---- */

static char tmpdir[64];

static const char *write_tmp(const char *name, const char *text)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void check_trace(const char *name, const char *text, const char *fmt, const char *want_fmt, uint64_t n,
			uint64_t off1, uint64_t len1, int op1, uint64_t t1, unsigned depth)
{
	struct sweep_sim_trace *t;
	assert_int_equal(sweep_sim_trace_load(write_tmp(name, text), fmt, &t), 0);
	struct sweep_sim_trace_info ti = { .size = sizeof(ti) };
	assert_int_equal(sweep_sim_trace_get_info(t, &ti), 0);
	assert_string_equal(ti.format, want_fmt);
	assert_int_equal(ti.requests, n);
	assert_int_equal(ti.depth, depth);
	struct sweep_sim_request r;
	assert_int_equal(sweep_sim_trace_next(t, &r), 1);
	assert_int_equal(r.time_ns, 0);
	assert_int_equal(sweep_sim_trace_next(t, &r), 1); /* the second request */
	assert_int_equal(r.offset, off1);
	assert_int_equal(r.length, len1);
	assert_int_equal(r.op, op1);
	assert_int_equal(r.time_ns, t1);
	sweep_sim_trace_free(t);
}

static void test_traces(void **state)
{
	(void)state;
	check_trace("t.tracefs",
		    "# tracer: nop\n#\n"
		    "              dd-2170    [001] .....   512.100000: block_rq_issue: 7,0 R 4096 () 2048 + 8 [dd]\n"
		    "              dd-2170    [001] .....   512.100500: block_rq_issue: 7,0 WS 8192 () 4096 + 16 [dd]\n"
		    "          <idle>-0       [001] ..s1.   512.101000: block_rq_complete: 7,0 R () 2048 + 8 [0]\n"
		    "     kworker/1:1-50      [001] .....   512.102000: block_rq_issue: 8,0 R 4096 () 99 + 8 [x]\n"
		    "          <idle>-0       [001] ..s1.   512.103000: block_rq_complete: 7,0 WS () 4096 + 16 [0]\n"
		    "     jbd2-300    [000] .....   512.104000: block_rq_issue: 7,0 FWS 0 () 0 + 0 [jbd2]\n",
		    "auto", "tracefs", 4, 4096 * 512, 8192, SWEEP_SIM_WRITE, 500000, 2);
	/* the device filter keeps 7,0 only */
	check_trace("t2.tracefs",
		    "   dd-1 [0] ..... 1.000000: block_rq_issue: 8,0 R 4096 () 99 + 8 [x]\n"
		    "   dd-1 [0] ..... 1.000001: block_rq_issue: 7,0 R 4096 () 8 + 8 [dd]\n"
		    "   dd-1 [0] ..... 1.000002: block_rq_issue: 7,0 R 4096 () 16 + 8 [dd]\n",
		    "tracefs@7,0", "tracefs", 2, 16 * 512, 4096, SWEEP_SIM_READ, 1000, 2);
	check_trace("t.blkparse",
		    "  8,0    3        1     0.000000000  4162  Q  RS 1234 + 8 [cat]\n"
		    "  8,0    3        2     0.000001000  4162  D  RS 1234 + 8 [cat]\n"
		    "  8,0    3        3     0.000002000  4162  Q   W 5000 + 16 [cat]\n"
		    "  8,0    3        4     0.000003000  4162  D   W 5000 + 16 [cat]\n"
		    "  8,0    3        5     0.000500000     0  C  RS 1234 + 8 [0]\n"
		    "  8,0    3        6     0.000600000     0  C   W 5000 + 16 [0]\n"
		    "CPU3 (8,0):\n Reads Queued:           1,        4KiB\n",
		    NULL, "blkparse", 2, 5000 * 512, 16 * 512, SWEEP_SIM_WRITE, 2000, 2);
	check_trace("t.disksim", "0.000 0 100 8 1\n1.500 0 200 16 0\n", "auto", "disksim", 2, 200 * 512, 16 * 512,
		    SWEEP_SIM_WRITE, 1500000, 1);
	check_trace("t.spc", "0,20941264,8192,W,0.551706\n1,20939840,4096,r,0.554041\n", NULL, "spc", 2,
		    20939840ull * 512, 4096, SWEEP_SIM_READ, 2335000, 1);
	check_trace("t.msr",
		    "128166372003061629,hm,0,Write,3221225472,4096,1000\n"
		    "128166372003071629,hm,0,Read,1048576,65536,2000\n",
		    "auto", "msr", 2, 1048576, 65536, SWEEP_SIM_READ, 1000000, 1);
	check_trace("t.plan", "# sweep-trace 1\n# op offset_bytes length_bytes ino\nR 1052672 4096 12\nR 8192 12288 13 x\n",
		    "auto", "plan", 2, 8192, 12288, SWEEP_SIM_READ, 0, 1);

	struct sweep_sim_trace *t = NULL;
	assert_int_equal(sweep_sim_trace_load(write_tmp("bad", "hello world\n"), NULL, &t), -EBADMSG);
	assert_null(t);
	assert_int_equal(sweep_sim_trace_load(write_tmp("empty", "# nothing\n"), NULL, &t), -ENODATA);
	assert_int_equal(sweep_sim_trace_load("/nonexistent/trace", NULL, &t), -ENOENT);
	assert_int_equal(sweep_sim_trace_load(write_tmp("x", "R 0 4096 1\n"), "nosuch", &t), -EINVAL);
	assert_null(t);

	/*
	 * A completion timed before the issue it completes is refused, in both
	 * captures that pair them. The blkparse trace is the fuzz input kept in
	 * data/fuzz/blkparse/completion-before-issue: each completion at 0 s
	 * made the next issue wait 5e9 s after it, and the model's clock ran
	 * past 2^63 ns on the third request (test_time_limits).
	 */
	const char *const early[][3] = {
		{ "blkparse",
		  "  8,0 0 1 5000000000.000000000 1 D R 0 + 8 [dd]\n"
		  "  8,0 0 2 0.000000000 1 C R 0 + 8 [dd]\n"
		  "  8,0 0 3 5000000000.000000000 1 D R 64 + 8 [dd]\n",
		  "completion of sector 0 at 0.000000000 s, before its issue at 5000000000.000000000 s" },
		{ "tracefs",
		  "  dd-1 [000] ..... 2.500000: block_rq_issue: 7,0 R 4096 () 8 + 8 [dd]\n"
		  "  <idle>-0 [000] ..s.. 2.499999: block_rq_complete: 7,0 R () 8 + 8 [0]\n",
		  "completion of sector 8 at 2.499999000 s, before its issue at 2.500000000 s" },
	};
	for (size_t i = 0; i < sizeof(early) / sizeof(early[0]); i++) {
		struct sweep_sim_trace_options to = { .size = sizeof(to), .format = early[i][0] };
		struct sweep_sim_trace_error te = { .size = sizeof(te) };
		assert_int_equal(sweep_sim_trace_open(write_tmp("early", early[i][1]), &to, &t, &te), -EBADMSG);
		assert_null(t);
		assert_int_equal(te.line, 2);
		assert_string_equal(te.message, early[i][2]);
	}
	/* a completion at the instant of its issue is fine */
	assert_int_equal(sweep_sim_trace_load(write_tmp("same", "  8,0 0 1 1.0 1 D R 0 + 8 [dd]\n"
								"  8,0 0 2 1.0 1 C R 0 + 8 [dd]\n"
								"  8,0 0 3 1.5 1 D R 64 + 8 [dd]\n"),
					      "blkparse", &t),
			 0);
	struct sweep_sim_trace_info ti = { .size = sizeof(ti) };
	assert_int_equal(sweep_sim_trace_get_info(t, &ti), 0);
	assert_int_equal(ti.dependent, 1);
	sweep_sim_trace_free(t);
}

static int src_trace(void *ctx, struct sweep_sim_request *r)
{
	return sweep_sim_trace_next(ctx, r);
}

static void test_open_replay(void **state)
{
	(void)state;
	/* three reads 100 ms apart on an idle disk: each waits for nothing but itself */
	struct sweep_sim_trace *t;
	assert_int_equal(sweep_sim_trace_load(write_tmp("o.disksim", "0 0 1000 8 1\n100 0 900000 8 1\n200 0 5000 8 1\n"),
					      "disksim", &t), 0);
	struct sweep_sim *sim = new_sim("eagle", "fcfs", 0, 0, 0);
	struct sweep_sim_run_options ro = { .size = sizeof(ro), .mode = SWEEP_SIM_OPEN };
	assert_int_equal(sweep_sim_run(sim, src_trace, t, &ro), 3);
	struct sweep_sim_stats st = { .size = sizeof(st) };
	sweep_sim_get_stats(sim, &st);
	assert_true(st.resp_max_ms < 60.0); /* one seek + one turn at most */
	assert_true(st.last_finish_ns > 200 * NS_PER_MS);
	assert_true(st.busy_ns < 150 * NS_PER_MS);
	sweep_sim_free(sim);
	sweep_sim_trace_free(t);
}

/*
 * Issue 13 defect 5: a reader at depth 1 captured on a fast device (50 us a
 * request, 10 us between a completion and the next issue). Replayed at the
 * capture's times on the Eagle the requests pile up in the host queue and
 * the schedulers differ; replayed by dependency each request is issued when
 * the one before completes in the model, plus the 10 us: never queued, so
 * every scheduler gives the same result.
 */
struct dep_check {
	uint64_t n, queued, last_finish, gap_bad;
};

static void on_dep(void *ctx, const struct sweep_sim_completion *c)
{
	struct dep_check *k = ctx;
	if (c->dispatch_ns != c->arrival_ns)
		k->queued++;
	if (k->n && c->arrival_ns != k->last_finish + 10000)
		k->gap_bad++;
	k->last_finish = c->finish_ns;
	k->n++;
}

static void test_depend_replay(void **state)
{
	(void)state;
	static char text[400 * 2 * 120];
	size_t len = 0;
	uint64_t t = 1000000000, rng = 5;
	for (unsigned i = 0; i < 400; i++) {
		uint64_t sec = sim_rand_below(&rng, 100000) * 8; /* on the Eagle (nothing wraps around) */
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"  tar-9 [000] ..... %llu.%06llu: block_rq_issue: 7,1 R 4096 () %llu + 8 [tar]\n",
					(unsigned long long)(t / 1000000000), (unsigned long long)(t % 1000000000 / 1000),
					(unsigned long long)sec);
		t += 50000;
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"  <idle>-0 [000] ..s.. %llu.%06llu: block_rq_complete: 7,1 R () %llu + 8 [0]\n",
					(unsigned long long)(t / 1000000000), (unsigned long long)(t % 1000000000 / 1000),
					(unsigned long long)sec);
		t += 10000;
	}
	struct sweep_sim_trace *tr;
	assert_int_equal(sweep_sim_trace_load(write_tmp("dep.tracefs", text), NULL, &tr), 0);
	struct sweep_sim_trace_info ti = { .size = sizeof(ti) };
	assert_int_equal(sweep_sim_trace_get_info(tr, &ti), 0);
	assert_int_equal(ti.dependent, 1);
	assert_int_equal(ti.depth, 1);
	double mean[2][2];
	const char *sch[] = { "fcfs", "deadline" };
	for (int mode = 0; mode < 2; mode++)
		for (int i = 0; i < 2; i++) {
			struct sweep_sim_options o = { .size = sizeof(o), .device = "eagle", .sched = sch[i] };
			struct sweep_sim *sim;
			assert_int_equal(sweep_sim_new(&o, &sim), 0);
			struct dep_check k = { 0, 0, 0, 0 };
			struct sweep_sim_run_options ro = { .size = sizeof(ro), .mode = mode ? SWEEP_SIM_DEPEND : SWEEP_SIM_OPEN,
							    .on_complete = on_dep, .ctx = &k };
			assert_int_equal(sweep_sim_trace_replay(sim, tr, &ro), 400);
			struct sweep_sim_stats st = { .size = sizeof(st) };
			sweep_sim_get_stats(sim, &st);
			mean[mode][i] = st.resp_mean_ms;
			if (mode) {
				assert_int_equal(k.queued, 0);  /* depth 1: nothing ever waits in the host queue */
				assert_int_equal(k.gap_bad, 0); /* each issued 10 us after the one before completed */
			} else {
				assert_true(k.queued > 300);
			}
			sweep_sim_free(sim);
		}
	print_message("depth-1 capture on the Eagle: open fcfs %.1f ms deadline %.1f ms; depend fcfs %.1f deadline %.1f\n",
		      mean[0][0], mean[0][1], mean[1][0], mean[1][1]);
	assert_true(mean[0][1] < 0.8 * mean[0][0]); /* open: the pile-up lets deadline sort */
	assert_true(mean[1][0] == mean[1][1]);
	sweep_sim_trace_free(tr);
}

/*
 * The model's clock ends at 2^63 - 1 ns. A completion is never before its
 * arrival and no time wraps: the fuzz target's "completion before arrival"
 * was a dependent replay whose gaps added up past 2^63 ns, where the disk's
 * finish (llround of a double) saturated to 2^63; and below that, a double
 * holds no odd ns past 2^53, so a disk finish rounded to one came out before
 * its start when the service took less than the rounding.
 */
struct arrival_check {
	uint64_t n, early;
};

static void on_arrival_check(void *ctx, const struct sweep_sim_completion *c)
{
	struct arrival_check *k = ctx;
	k->n++;
	if (c->finish_ns < c->arrival_ns)
		k->early++;
}

static void test_time_limits(void **state)
{
	(void)state;
	const uint64_t tmax = (uint64_t)INT64_MAX;
	struct sweep_sim_completion c;
	uint64_t t;

	/* a cache hit served in 0.004 ns at 2^62 + 5 ns: it finishes at its arrival, not 5 ns before */
	struct sweep_sim_hdd_params hp = { .size = sizeof(hp) };
	assert_int_equal(sweep_sim_preset_hdd("cheetah15k", &hp), 0);
	hp.overhead_ms = 0;
	hp.bus_mb_s = 1e9;
	struct sweep_sim_options o = { .size = sizeof(o), .hdd = &hp, .sched = "fcfs" };
	struct sweep_sim *sim;
	assert_int_equal(sweep_sim_new(&o, &sim), 0);
	struct sweep_sim_request r = { .time_ns = 1ull << 62, .offset = 1 << 20, .length = 4096, .id = 1 };
	assert_int_equal(sweep_sim_submit(sim, &r), 0);
	while (sweep_sim_next_event(sim, &t) == 1)
		assert_true(sweep_sim_advance(sim, t) >= 0);
	assert_int_equal(sweep_sim_poll(sim, &c, 1), 1);
	assert_false(c.cache_hit);
	r.time_ns = ((c.finish_ns >> 10) + 2) << 10 | 5; /* 5 ns past a double's 1024 ns step */
	r.id = 2;
	assert_int_equal(sweep_sim_submit(sim, &r), 0);
	while (sweep_sim_next_event(sim, &t) == 1)
		assert_true(sweep_sim_advance(sim, t) >= 0);
	assert_int_equal(sweep_sim_poll(sim, &c, 1), 1);
	assert_true(c.cache_hit);
	assert_int_equal(c.arrival_ns, r.time_ns);
	assert_int_equal(c.finish_ns, r.time_ns);
	sweep_sim_free(sim);

	/* arrivals past the clock's end are refused; a service that would end past it is -EOVERFLOW */
	sim = new_sim("cheetah15k", "fcfs", 0, 0, 0);
	r = (struct sweep_sim_request){ .time_ns = tmax + 4097, .length = 4096 };
	assert_int_equal(sweep_sim_submit(sim, &r), -EINVAL);
	r.time_ns = tmax - 1000;
	assert_int_equal(sweep_sim_submit(sim, &r), 0);
	assert_int_equal(sweep_sim_next_event(sim, &t), 1);
	assert_int_equal(sweep_sim_advance(sim, t), 0); /* the arrival */
	assert_int_equal(sweep_sim_next_event(sim, &t), 1);
	assert_true(t > tmax);
	assert_int_equal(sweep_sim_advance(sim, t), -EOVERFLOW);
	assert_int_equal(sweep_sim_poll(sim, &c, 1), 0);
	sweep_sim_free(sim);

	/* a dependent replay whose gaps pass the clock's end: -EOVERFLOW, no completion before its arrival */
	static char chain[] = "  8,0 0 1 0.0 1 D R 0 + 8 [dd]\n"
			      "  8,0 0 2 0.1 1 C R 0 + 8 [dd]\n"
			      "  8,0 0 3 0.2 1 D R 64 + 8 [dd]\n"
			      "  8,0 0 4 0.3 1 C R 64 + 8 [dd]\n"
			      "  8,0 0 5 0.4 1 D R 128 + 8 [dd]\n";
	FILE *fp = fmemopen(chain, strlen(chain), "r");
	assert_non_null(fp);
	struct sweep_sim_trace_options to = { .size = sizeof(to), .format = "blkparse" };
	struct sweep_sim_trace *tr;
	assert_int_equal(sweep__sim_trace_read(fp, &to, &tr, NULL), 0);
	fclose(fp);
	assert_int_equal(tr->n, 3);
	assert_true(tr->dependent && tr->v[1].after == 0 && tr->v[2].after == 1);
	tr->v[1].think = tr->v[2].think = 5000000000ull * NS_PER_S; /* what the completions at 0 s made */
	sim = new_sim("cheetah15k", "fcfs", 0, 0, 0);
	struct arrival_check k = { 0, 0 };
	struct sweep_sim_run_options ro = { .size = sizeof(ro), .mode = SWEEP_SIM_DEPEND,
					    .on_complete = on_arrival_check, .ctx = &k };
	assert_int_equal(sweep_sim_trace_replay(sim, tr, &ro), -EOVERFLOW);
	assert_int_equal(k.n, 2);
	assert_int_equal(k.early, 0);
	sweep_sim_free(sim);
	sweep_sim_trace_free(tr);
}

/* ---- devices from parameters ---- */

static void test_params(void **state)
{
	(void)state;
	struct sweep_sim_hdd_params hp = { .size = sizeof(hp) };
	struct sweep_sim_ssd_params sp = { .size = sizeof(sp) };
	assert_int_equal(sweep_sim_preset_hdd("eagle", &hp), 0);
	assert_true(hp.cylinders == 840 && hp.heads == 20 && hp.spt_outer == 67 && hp.rpm == 3600.0);
	assert_int_equal(sweep_sim_preset_hdd("ssd-pagemap", &hp), -EINVAL);
	assert_int_equal(sweep_sim_preset_ssd("eagle", &sp), -EINVAL);
	assert_int_equal(sweep_sim_preset_ssd("ssd-blockmap", &sp), 0);
	assert_true(sp.blockmap == 1 && sp.page == 2048 && sp.log_blocks == 8);

	/* the Eagle spun twice as fast: FCFS utilization = 1 / (18 + 4.17 + 1) ms as the seed's formula says */
	hp.rpm = 7200;
	struct sweep_sim_options o = { .size = sizeof(o), .sched = "fcfs",
				       .hdd = &hp };
	struct sweep_sim *sim;
	assert_int_equal(sweep_sim_new(&o, &sim), 0);
	struct sweep_sim_info info = { .size = sizeof(info) };
	sweep_sim_get_info(sim, &info);
	assert_string_equal(info.device, "custom-hdd");
	struct sweep_sim_stats st;
	synth_run(sim, NULL, 4096, 4000, 1, 1, &st);
	assert_true(fabs(st.utilization - 1.0 / (18.0 + 60000.0 / 7200 / 2 + 1.0)) < 0.002);
	sweep_sim_free(sim);

	/* an SSD with twice the channel rate writes sequentially about twice as fast (bus-bound) */
	struct sweep_sim_stats a, b;
	o.hdd = NULL;
	o.ssd = &sp;
	o.device = "slow";
	assert_int_equal(sweep_sim_new(&o, &sim), 0);
	sweep_sim_get_info(sim, &info);
	assert_string_equal(info.device, "slow");
	synth_run(sim, "seqwrite", 4 << 20, 50, 1, 1, &a);
	sweep_sim_free(sim);
	sp.chan_mb_s *= 2;
	assert_int_equal(sweep_sim_new(&o, &sim), 0);
	synth_run(sim, "seqwrite", 4 << 20, 50, 1, 1, &b);
	sweep_sim_free(sim);
	assert_true(b.throughput_mib_s > 1.7 * a.throughput_mib_s);

	/* out of range */
	sp.page = 1000;
	assert_int_equal(sweep_sim_new(&o, &sim), -EINVAL);
	sp.page = 2048;
	o.hdd = &hp;
	assert_int_equal(sweep_sim_new(&o, &sim), -EINVAL); /* both kinds */
	o.ssd = NULL;
	hp.spt_inner = hp.spt_outer + 1;
	assert_int_equal(sweep_sim_new(&o, &sim), -EINVAL);
}

/* ---- API ---- */

static void test_api(void **state)
{
	(void)state;
	struct sweep_sim *sim = (struct sweep_sim *)0x1;
	struct sweep_sim_options o = { .size = sizeof(o), .device = "floppy" };
	assert_int_equal(sweep_sim_new(&o, &sim), -EINVAL);
	assert_ptr_equal(sim, (struct sweep_sim *)0x1); /* untouched on failure */
	o.device = "eagle";
	o.sched = "elevator-music";
	assert_int_equal(sweep_sim_new(&o, &sim), -EINVAL);
	o.sched = "bw";
	struct sweep_sim_stream bad = { .stream = 1 }; /* no rate */
	o.streams = &bad;
	o.nstreams = 1;
	assert_int_equal(sweep_sim_new(&o, &sim), -EINVAL);
	assert_null(sweep_sim_free(NULL));
	assert_null(sweep_sim_trace_free(NULL));
	assert_null(sweep_sim_synth_free(NULL));
	/* NULL options: the defaults */
	assert_int_equal(sweep_sim_new(NULL, &sim), 0);
	struct sweep_sim_info info = { .size = sizeof(info) };
	assert_int_equal(sweep_sim_get_info(sim, &info), 0);
	assert_string_equal(info.device, "hdd7200");
	assert_string_equal(info.sched, "fcfs");
	assert_int_equal(info.write_back, 1); /* a zeroed struct means the preset's choices */
	assert_int_equal(info.queue_depth, 32);
	uint64_t ev = 77;
	assert_int_equal(sweep_sim_next_event(sim, &ev), 0);
	assert_int_equal(ev, 77);
	struct sweep_sim_request r = { .time_ns = 1000, .offset = 0, .length = 4096 };
	assert_int_equal(sweep_sim_submit(sim, &r), 0);
	assert_int_equal(sweep_sim_advance(sim, 5000), 0);
	assert_int_equal(sweep_sim_now(sim), 5000);
	r.time_ns = 10; /* in the past */
	assert_int_equal(sweep_sim_submit(sim, &r), -EINVAL);
	r.time_ns = 6000;
	r.length = 0;
	assert_int_equal(sweep_sim_submit(sim, &r), -EINVAL);
	assert_int_equal(sweep_sim_advance(sim, 10), -EINVAL);
	/* freeing with work in flight releases it */
	r.length = 4096;
	assert_int_equal(sweep_sim_submit(sim, &r), 0);
	sweep_sim_free(sim);
	/* names */
	assert_string_equal(sweep_sim_device_name(0), "eagle");
	assert_string_equal(sweep_sim_device_name(2), "hdd7200-2018");
	assert_string_equal(sweep_sim_device_name(5), "ssd-pagemap");
	assert_null(sweep_sim_device_name(6));
	assert_string_equal(sweep_sim_sched_name(0), "fcfs");
	unsigned n = 0;
	while (sweep_sim_sched_name(n))
		n++;
	assert_int_equal(n, 15);
	struct sweep_sim_synth *g = (struct sweep_sim_synth *)0x1;
	struct sweep_sim_synth_options so = { .size = sizeof(so), .pattern = "zigzag", .capacity = 1 << 30 };
	assert_int_equal(sweep_sim_synth_new(&so, &g), -EINVAL);
	assert_ptr_equal(g, (struct sweep_sim_synth *)0x1);
}

/* ---- issue 32: statistics within physics, the write path, the edges ---- */

/* A closed run of a pattern on a preset; returns the stats, the completions in *ret_c (caller frees) */
struct crec {
	struct sweep_sim_completion *v;
	size_t n, cap;
};

static void on_crec(void *ctx, const struct sweep_sim_completion *c)
{
	struct crec *k = ctx;
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 1024;
		k->v = realloc(k->v, k->cap * sizeof(*k->v));
		assert_non_null(k->v);
	}
	k->v[k->n++] = *c;
}

static struct sweep_sim_stats run_pattern(const char *dev, const char *sched, int wc, const char *pattern,
					  uint64_t size, unsigned q, uint64_t n, struct crec *rec)
{
	struct sweep_sim *sim = new_sim(dev, sched, wc, 0, 0);
	struct sweep_sim_info info = { .size = sizeof(info) };
	assert_int_equal(sweep_sim_get_info(sim, &info), 0);
	struct sweep_sim_synth_options so = { .size = sizeof(so), .pattern = pattern, .request_size = size,
					      .capacity = info.capacity, .requests = n, .seed = 1 };
	struct sweep_sim_synth *g;
	assert_int_equal(sweep_sim_synth_new(&so, &g), 0);
	struct sweep_sim_run_options ro = { .size = sizeof(ro), .mode = SWEEP_SIM_CLOSED, .depth = q,
					    .on_complete = rec ? on_crec : NULL, .ctx = rec };
	assert_int_equal(sweep_sim_run(sim, src_gen, g, &ro), (int64_t)n);
	struct sweep_sim_stats st = { .size = sizeof(st) };
	assert_int_equal(sweep_sim_get_stats(sim, &st), 0);
	sweep_sim_synth_free(g);
	sweep_sim_free(sim);
	return st;
}

/* hdd7200's fastest media rate: zone 0, 1242 sectors a turn at 7200 rpm (76.3 MB/s), in MiB/s */
#define HDD7200_MEDIA_MIB_S (1242.0 * 512 * 120 / MIB)
/* and its sustained rate there, head and cylinder switches included (Hitachi: 64.8 MB/s) */
#define HDD7200_SUSTAINED_MIB_S (64.8e6 / MIB)

/* Sequential 1 MiB reads from off, one at a time: bytes/s from the first read's end to the last's. */
static double seq_rate(const char *dev, uint64_t off, unsigned n)
{
	struct sweep_sim *sim = new_sim(dev, "fcfs", 0, 0, 1);
	uint64_t t = 0, first = 0;
	for (unsigned i = 0; i < n; i++) {
		struct sweep_sim_completion c = run_one(sim, t, off + i * MIB, MIB, SWEEP_SIM_READ);
		if (!i)
			first = c.finish_ns;
		t = c.finish_ns;
	}
	sweep_sim_free(sim);
	return (double)(n - 1) * MIB / ((double)(t - first) / 1e9);
}

/*
 * hdd7200-2018 against the figures of the drive it models (hdd.c: the
 * Ultrastar DC HC310 6 TB), on the model's own output, not the clock:
 * sequential reads sustain the published 255 MB/s at the start of the
 * drive and the assumed 122 MB/s (0.48 of it) at its end, within 2%;
 * random 4 KiB reads, one at a time over the whole drive, take the
 * published average read seek plus half a turn (7.4 + 4.17 ms), within 5%
 * (the model adds the 0.05 ms command overhead and the sectors' transfer,
 * and a uniform LBA is not a uniform cylinder: outer cylinders hold more,
 * so random seeks are a little shorter than the published average).
 */
static void test_hdd7200_2018_datasheet(void **state)
{
	(void)state;
	const double outer = 255e6, inner = 0.48 * 255e6, random_ms = 7.4 + 60e3 / 7200 / 2;
	struct sweep_sim *sim = new_sim("hdd7200-2018", "fcfs", 0, 0, 1);
	struct sweep_sim_info info = { .size = sizeof(info) };
	assert_int_equal(sweep_sim_get_info(sim, &info), 0);
	sweep_sim_free(sim);
	assert_true(info.capacity >= 6001175126016ull && info.capacity < 6001200000000ull); /* 6 TB (IDEMA) */

	double r_out = seq_rate("hdd7200-2018", 0, 128);
	double r_in = seq_rate("hdd7200-2018", (info.capacity - 128 * MIB) / 4096 * 4096, 128);
	print_message("hdd7200-2018 seqread 1 MiB: outer %.1f MB/s (datasheet 255), inner %.1f MB/s (assumed 122.4)\n",
		      r_out / 1e6, r_in / 1e6);
	assert_true(fabs(r_out / outer - 1) < 0.02);
	assert_true(fabs(r_in / inner - 1) < 0.02);

	struct sweep_sim_stats st = run_pattern("hdd7200-2018", "fcfs", 0, "randread", 4096, 1, 4000, NULL);
	print_message("hdd7200-2018 randread 4 KiB Q=1: %.2f ms mean (datasheet 7.4 + 4.17)\n", st.resp_mean_ms);
	assert_true(fabs(st.resp_mean_ms / random_ms - 1) < 0.05);

	/* beside the 2005 drive: nearly as slow to position, over three times the rate */
	double r_old = seq_rate("hdd7200", 0, 64);
	struct sweep_sim_stats old = run_pattern("hdd7200", "fcfs", 0, "randread", 4096, 1, 1000, NULL);
	print_message("hdd7200: seqread %.1f MB/s, randread %.2f ms\n", r_old / 1e6, old.resp_mean_ms);
	assert_true(r_out > 3 * r_old);
	assert_true(st.resp_mean_ms < old.resp_mean_ms && st.resp_mean_ms > 0.75 * old.resp_mean_ms);
}

/*
 * A drive keeps no more of what it read than its cache holds, newest first:
 * after 512 MiB read in one stream the last MiB is still a cache hit and the
 * first is not, and reading the 512 MiB again and again runs at the media's
 * rate, not the interface's, on the 256 MB hdd7200-2018 as on the 16 MB
 * hdd7200 (the stream stayed cached whole, so a second dd over an emulated
 * disk ran at 500 MB/s).
 */
static void test_stream_cache_bound(void **state)
{
	(void)state;
	const char *devs[] = { "hdd7200-2018", "hdd7200" };
	const unsigned n = 512;
	for (size_t k = 0; k < 2; k++) {
		struct sweep_sim *sim = new_sim(devs[k], "fcfs", 0, 0, 1);
		uint64_t t = 0;
		double rate[3];
		for (unsigned pass = 0; pass < 3; pass++) {
			uint64_t t0 = t;
			for (unsigned i = 0; i < n; i++)
				t = run_one(sim, t, i * MIB, MIB, SWEEP_SIM_READ).finish_ns;
			rate[pass] = (double)n * MIB / ((double)(t - t0) / 1e9);
			if (!pass) {
				struct sweep_sim_completion last = run_one(sim, t, (n - 1) * MIB, MIB, SWEEP_SIM_READ);
				assert_int_equal(last.cache_hit, 1);
				/* long after the stream stopped, too */
				struct sweep_sim_completion first = run_one(sim, last.finish_ns + 1000000000, 0, MIB, SWEEP_SIM_READ);
				assert_int_equal(first.cache_hit, 0);
				/* media time (under 300 MB/s), not the bus (600 MB/s at most) */
				assert_true(first.finish_ns - first.start_ns > MIB * 1000 / 300);
				t = first.finish_ns + 1000000000;
			}
		}
		print_message("%s: 512 MiB read three times: %.1f, %.1f, %.1f MB/s\n", devs[k], rate[0] / 1e6,
			      rate[1] / 1e6, rate[2] / 1e6);
		assert_true(rate[1] < 1.05 * rate[0] && rate[2] < 1.05 * rate[0]);
		sweep_sim_free(sim);
	}
}

static int cmp_finish(const void *a, const void *b)
{
	const struct sweep_sim_completion *x = a, *y = b;
	return x->finish_ns < y->finish_ns ? -1 : x->finish_ns > y->finish_ns;
}

/*
 * Defect 1: write-back statistics exceeded physics (64 KiB random writes at
 * Q = 32: 5,820 MiB/s at 7,071% utilization; 4 KiB: 498,736 IOPS). Acks of
 * cached writes now take the bus one after the other, and the statistics
 * window runs until the drive has destaged everything.
 */
static void test_write_back_physics(void **state)
{
	(void)state;
	struct crec rec = { 0 };
	struct sweep_sim_stats st = run_pattern("hdd7200", "fcfs", 0, "randwrite", 65536, 32, 100, &rec);
	assert_true(st.utilization > 0 && st.utilization <= 1.0);
	assert_true(st.throughput_mib_s <= HDD7200_MEDIA_MIB_S);
	assert_true(st.end_ns >= st.last_finish_ns); /* the destages end after the last ack */
	/* no two acks share the bus: each 64 KiB ack takes the command overhead and 65536 B at 300 MB/s */
	qsort(rec.v, rec.n, sizeof(*rec.v), cmp_finish);
	for (size_t i = 1; i < rec.n; i++)
		assert_true(rec.v[i].finish_ns - rec.v[i - 1].finish_ns >= 50000 + 65536 / 300 * 1000 - 1);
	free(rec.v);
	st = run_pattern("hdd7200", "fcfs", 0, "randwrite", 4096, 32, 2000, NULL);
	double span_s = (double)(st.end_ns - st.first_arrival_ns) / 1e9;
	assert_true(st.utilization <= 1.0);
	assert_true((double)st.requests / span_s < 1000); /* random 4 KiB writes reach the platter at disk speed */
	/* whatever the request size, utilization stays at or under 100% (1 GiB reads gave 100.03%) */
	const char *devs[] = { "hdd7200", "cheetah15k", "ssd-pagemap", "ssd-blockmap" };
	for (size_t i = 0; i < 4; i++) {
		st = run_pattern(devs[i], "fcfs", 0, "seqread", 1ull << 30, 1, 2, NULL);
		assert_true(st.utilization > 0.5 && st.utilization <= 1.0);
	}
}

/*
 * Defect 2: sequential writes collapsed as the queue deepened (FCFS on
 * hdd7200: 61.4 / 37.1 / 1.92 / 3.20 / 29.5 MiB/s at Q = 1 / 2 / 4 / 8 / 32).
 * A write-back drive writes a sequential stream at its sustained media rate
 * at every depth, and so does a write-through drive once writes are queued
 * behind each other (the command overhead overlaps the previous write).
 */
static void test_seq_write_depth(void **state)
{
	(void)state;
	const unsigned qs[] = { 1, 2, 4, 8, 32 };
	const char *sch[] = { "fcfs", "cscan" };
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < 5; i++) {
			struct sweep_sim_stats st = run_pattern("hdd7200", sch[k], 0, "seqwrite", 4096, qs[i], 20000, NULL);
			print_message("hdd7200 %s seqwrite 4K Q=%u: %.2f MiB/s\n", sch[k], qs[i], st.throughput_mib_s);
			assert_true(fabs(st.throughput_mib_s / HDD7200_SUSTAINED_MIB_S - 1) < 0.02);
		}
	/* write-through within 3%: the drive's shortest-positioning-time order skips the first write (its
	 * sector passed while the command was decoded) and comes back to it when it has aged 500 ms */
	for (size_t i = 1; i < 5; i++) {
		struct sweep_sim_stats st =
			run_pattern("hdd7200", "fcfs", SWEEP_SIM_WRITE_THROUGH, "seqwrite", 65536, qs[i], 4000, NULL);
		print_message("hdd7200 write-through seqwrite 64K Q=%u: %.2f MiB/s\n", qs[i], st.throughput_mib_s);
		assert_true(fabs(st.throughput_mib_s / HDD7200_SUSTAINED_MIB_S - 1) < 0.03);
	}
	/* one write-through write at a time loses a turn each: the drive gets the next command too late */
	struct sweep_sim_stats st = run_pattern("hdd7200", "fcfs", SWEEP_SIM_WRITE_THROUGH, "seqwrite", 65536, 1, 500, NULL);
	assert_true(st.throughput_mib_s < 0.2 * HDD7200_SUSTAINED_MIB_S);
}

/*
 * Defect 3: write-back destage did not stream (64 KiB sequential writes
 * 46-55 MiB/s against 111 for reads; at 1 MiB write-back equalled
 * write-through). Destages coalesce and follow each other without losing a
 * turn, at the rate reads stream at.
 */
static void test_destage_streams(void **state)
{
	(void)state;
	const uint64_t sizes[] = { 65536, 1 << 20 };
	for (size_t i = 0; i < 2; i++) {
		uint64_t n = (256ull << 20) / sizes[i];
		struct sweep_sim_stats w = run_pattern("hdd7200", "fcfs", 0, "seqwrite", sizes[i], 1, n, NULL);
		struct sweep_sim_stats r = run_pattern("hdd7200", "fcfs", 0, "seqread", sizes[i], 1, n, NULL);
		struct sweep_sim_stats wt =
			run_pattern("hdd7200", "fcfs", SWEEP_SIM_WRITE_THROUGH, "seqwrite", sizes[i], 1, n, NULL);
		print_message("hdd7200 %llu KiB: write-back %.2f, read %.2f, write-through %.2f MiB/s\n",
			      (unsigned long long)sizes[i] / 1024, w.throughput_mib_s, r.throughput_mib_s,
			      wt.throughput_mib_s);
		assert_true(fabs(w.throughput_mib_s / r.throughput_mib_s - 1) < 0.01);
		assert_true(fabs(w.throughput_mib_s / HDD7200_SUSTAINED_MIB_S - 1) < 0.01);
		assert_true(w.throughput_mib_s > 1.4 * wt.throughput_mib_s);
	}
}

/* Defect 4: the edges are errors or modelled, never passed over. */
static void test_edges(void **state)
{
	(void)state;
	const char *devs[] = { "hdd7200", "ssd-pagemap" };
	for (size_t i = 0; i < 2; i++) {
		struct sweep_sim *sim = new_sim(devs[i], "fcfs", 0, 0, 0);
		struct sweep_sim_info info = { .size = sizeof(info) };
		assert_int_equal(sweep_sim_get_info(sim, &info), 0);
		struct sweep_sim_request r = { .offset = 1ull << 50, .length = 4096, .op = SWEEP_SIM_READ };
		assert_int_equal(sweep_sim_submit(sim, &r), -ERANGE); /* 1 PB: used to wrap around */
		r.offset = info.capacity - 4096;
		r.length = 8192;
		r.op = SWEEP_SIM_WRITE;
		assert_int_equal(sweep_sim_submit(sim, &r), -ERANGE); /* crosses the end: used to be cut short */
		r.length = 4096;
		assert_int_equal(sweep_sim_submit(sim, &r), 0); /* the last 4 KiB are fine */
		r.length = 0;
		assert_int_equal(sweep_sim_submit(sim, &r), -EINVAL); /* a write of nothing */
		r.op = SWEEP_SIM_FLUSH;
		assert_int_equal(sweep_sim_submit(sim, &r), 0);
		r.length = 512;
		assert_int_equal(sweep_sim_submit(sim, &r), -EINVAL); /* a flush moves no data */
		r.op = 3;
		assert_int_equal(sweep_sim_submit(sim, &r), -EINVAL);
		uint64_t ev;
		while (sweep_sim_next_event(sim, &ev) == 1)
			assert_true(sweep_sim_advance(sim, ev) >= 0);
		struct sweep_sim_completion c[4];
		assert_int_equal(sweep_sim_poll(sim, c, 4), 2);
		struct sweep_sim_stats st = { .size = sizeof(st) };
		assert_int_equal(sweep_sim_get_stats(sim, &st), 0);
		assert_true(st.requests == 2 && st.writes == 1 && st.flushes == 1 && st.bytes_written == 4096);
		sweep_sim_free(sim);
	}
	/* a 512-byte SSD write reads the rest of its page first (read-modify-write): it takes a page read
	 * longer than a whole page's write (50 us on ssd-pagemap) */
	uint64_t t[2];
	for (int k = 0; k < 2; k++) {
		struct sweep_sim *sim = new_sim("ssd-pagemap", "fcfs", 0, 0, 0);
		struct sweep_sim_completion c = run_one(sim, 0, 1 << 20, k ? 512 : 4096, SWEEP_SIM_WRITE);
		t[k] = c.finish_ns - c.arrival_ns;
		struct sweep_sim_stats st = { .size = sizeof(st) };
		assert_int_equal(sweep_sim_get_stats(sim, &st), 0);
		assert_int_equal(st.flash_pages_read, (uint64_t)k);
		sweep_sim_free(sim);
	}
	assert_true(t[1] > t[0] + 45000);
	/* and so do the ends of a request long enough to be laid out in bulk (64 MiB from byte 512) */
	struct sweep_sim *sim = new_sim("ssd-pagemap", "fcfs", 0, 0, 0);
	run_one(sim, 0, 512, 64 * MIB, SWEEP_SIM_WRITE);
	struct sweep_sim_stats st = { .size = sizeof(st) };
	assert_int_equal(sweep_sim_get_stats(sim, &st), 0);
	assert_int_equal(st.flash_pages_read, 2);
	assert_int_equal(st.host_pages_written, 64 * MIB / 4096 + 1);
	sweep_sim_free(sim);
}

/*
 * A flush (SWEEP_SIM_FLUSH) completes when every write acknowledged before
 * it is on the platter: on a write-back disk after the last destage, on a
 * write-through disk at once; the drive takes no command meanwhile.
 */
static void test_flush(void **state)
{
	(void)state;
	for (int wc = 0; wc < 2; wc++) {
		struct sweep_sim *sim = new_sim("hdd7200", "fcfs", wc ? SWEEP_SIM_WRITE_THROUGH : SWEEP_SIM_WRITE_BACK, 0, 0);
		uint64_t last_write = 0;
		for (unsigned i = 0; i < 8; i++) {
			struct sweep_sim_request r = { .offset = (uint64_t)i * (7ull << 30), .length = 65536,
						       .op = SWEEP_SIM_WRITE, .id = i };
			assert_int_equal(sweep_sim_submit(sim, &r), 0);
		}
		struct sweep_sim_request f = { .op = SWEEP_SIM_FLUSH, .id = 100 };
		assert_int_equal(sweep_sim_submit(sim, &f), 0);
		struct sweep_sim_request rd = { .offset = 1ull << 30, .length = 4096, .id = 200 };
		assert_int_equal(sweep_sim_submit(sim, &rd), 0);
		uint64_t ev, fin[3] = { 0 }, read_dispatch = 0;
		while (sweep_sim_next_event(sim, &ev) == 1) {
			assert_true(sweep_sim_advance(sim, ev) >= 0);
			struct sweep_sim_completion c;
			while (sweep_sim_poll(sim, &c, 1) == 1) {
				if (c.id < 8 && c.finish_ns > last_write)
					last_write = c.finish_ns;
				fin[c.id == 100 ? 1 : c.id == 200 ? 2 : 0] = c.finish_ns;
				if (c.id == 200)
					read_dispatch = c.dispatch_ns;
			}
		}
		struct sweep_sim_stats st = { .size = sizeof(st) };
		assert_int_equal(sweep_sim_get_stats(sim, &st), 0);
		if (!wc) {
			assert_true(last_write < 3000000); /* acknowledged from the cache, one after the other */
			assert_true(fin[1] > 20000000); /* the flush waited for the destages: 8 seeks' worth */
			/* and the drive took the read only once the cache was clean (the flush's ack follows) */
			assert_true(read_dispatch + 100000 >= fin[1] && read_dispatch < fin[1]);
		} else {
			assert_true(fin[1] < last_write + 200000); /* nothing was dirty */
		}
		assert_true(fin[2] > fin[1]); /* the read came after the flush it was queued behind */
		sweep_sim_free(sim);
	}
}

/*
 * The online use of sweep_sim_submit(3) (ONLINE USE), as an emulated disk
 * runs it: requests submitted when they arrive, the clock moved to each
 * arrival and each reported event, completions answered when polled. With
 * a clock that wakes exactly when asked, every request is answered at the
 * time the model completes it, and the model completes each one exactly as
 * an open replay of the same arrivals does.
 */
struct online_src {
	struct sweep_sim_request *v;
	size_t n, pos;
};

static int online_next(void *ctx, struct sweep_sim_request *r)
{
	struct online_src *o = ctx;
	if (o->pos == o->n)
		return 0;
	*r = o->v[o->pos++];
	return 1;
}

static void test_online(void **state)
{
	(void)state;
	enum { N = 3000 };
	static struct sweep_sim_request arr[N];
	static uint64_t answered[N], finish[N];
	uint64_t rng = 11, t = 0;
	for (unsigned i = 0; i < N; i++) {
		t += 1 + sim_rand_below(&rng, 16000000); /* about 125 requests a second, some bursts */
		uint64_t roll = sim_rand_below(&rng, 16);
		arr[i] = (struct sweep_sim_request){ .time_ns = t, .id = i, .length = 4096 << sim_rand_below(&rng, 5),
						     .op = roll < 7 ? SWEEP_SIM_READ : roll < 15 ? SWEEP_SIM_WRITE : SWEEP_SIM_FLUSH };
		arr[i].offset = sim_rand_below(&rng, 1u << 18) * 65536; /* inside both 16 GiB and 500 GB */
		if (arr[i].op == SWEEP_SIM_FLUSH)
			arr[i].offset = arr[i].length = 0;
	}
	for (int dev = 0; dev < 2; dev++) {
		const char *name = dev ? "ssd-pagemap" : "hdd7200";
		/* the emulator's loop, on a clock that jumps to each wake-up */
		struct sweep_sim *sim = new_sim(name, "deadline", 0, 0, 0);
		uint64_t now = 0, timer = NONE64;
		size_t next = 0, done = 0;
		while (done < N) {
			bool arrival = next < N && arr[next].time_ns <= timer;
			now = arrival ? arr[next].time_ns : timer; /* sleep until a request or the timer */
			assert_true(sweep_sim_advance(sim, now) >= 0);
			struct sweep_sim_completion c;
			while (sweep_sim_poll(sim, &c, 1) == 1) {
				answered[c.id] = now;
				finish[c.id] = c.finish_ns;
				done++;
			}
			if (arrival)
				assert_int_equal(sweep_sim_submit(sim, &arr[next++]), 0);
			uint64_t ev;
			timer = NONE64;
			if (sweep_sim_next_event(sim, &ev) == 1) {
				assert_true(ev >= now);
				timer = ev; /* ev == now: due at once, the loop comes straight back */
			}
		}
		sweep_sim_free(sim);
		/* the same arrivals replayed open */
		sim = new_sim(name, "deadline", 0, 0, 0);
		struct online_src src = { arr, N, 0 };
		struct crec rec = { 0 };
		struct sweep_sim_run_options ro = { .size = sizeof(ro), .mode = SWEEP_SIM_OPEN, .on_complete = on_crec,
						    .ctx = &rec };
		assert_int_equal(sweep_sim_run(sim, online_next, &src, &ro), N);
		assert_int_equal(rec.n, N);
		unsigned flushes = 0;
		for (size_t i = 0; i < rec.n; i++) {
			uint64_t id = rec.v[i].id;
			assert_int_equal(rec.v[i].finish_ns, finish[id]);
			assert_int_equal(answered[id], finish[id]);
			flushes += rec.v[i].op == SWEEP_SIM_FLUSH;
		}
		assert_true(flushes > 100);
		free(rec.v);
		sweep_sim_free(sim);
	}
}

/*
 * Issue 27: a timeline keeps at most 4096 bookings. Past that it gives up
 * its smallest gaps, so a resource may look busy a little longer than it
 * is, never shorter: every booking lies inside the busy intervals, and none
 * of them overlap.
 */
static void test_timeline_cap(void **state)
{
	(void)state;
	struct timeline tl = { 0 };
	uint64_t rng = 3;
	double t = 0, booked = 0;
	static double s0[100000];
	for (unsigned i = 0; i < 100000; i++) {
		t += (double)(1 + sim_rand_below(&rng, 1000)); /* gaps of 1-1000 ns between 5-ns transfers */
		s0[i] = sweep__tl_book(&tl, t, 5);
		assert_true(s0[i] >= t);
		booked += 5;
		assert_true(tl.n - tl.head <= 4096);
	}
	double busy = 0;
	for (size_t i = tl.head; i < tl.n; i++) {
		assert_true(tl.iv[i].e > tl.iv[i].s);
		if (i > tl.head)
			assert_true(tl.iv[i].s > tl.iv[i - 1].e); /* disjoint */
		busy += tl.iv[i].e - tl.iv[i].s;
	}
	assert_true(busy >= booked);
	for (unsigned i = 0; i < 100000; i += 997) { /* each booking inside some interval */
		size_t k = tl.head;
		while (k < tl.n && tl.iv[k].e < s0[i] + 5)
			k++;
		assert_true(k < tl.n && tl.iv[k].s <= s0[i]);
	}
	sweep__tl_fini(&tl);
}

/* ---- issue 13 defect 1: the closed queue keeps Q requests to choose from ---- */

/*
 * sim.h's contract: a request submitted at the instant of a completion
 * competes with the ones already queued. SSF with one tag: R1 (cylinder 10)
 * and R2 (cylinder 800) at time 0; R1 goes first; at its completion R3
 * (cylinder 12) arrives and must win over R2. Before the fix the model
 * dispatched R2 before R3 reached the queue, so every Q behaved as Q - 1.
 */
static void test_closed_queue_instant(void **state)
{
	(void)state;
	struct sweep_sim_options o = { .size = sizeof(o), .device = "eagle", .sched = "ssf" };
	struct sweep_sim *sim;
	assert_int_equal(sweep_sim_new(&o, &sim), 0);
	struct sweep_sim_request r1 = { .offset = eagle_off(10, 0, 0), .length = 4096, .id = 1 };
	struct sweep_sim_request r2 = { .offset = eagle_off(800, 0, 0), .length = 4096, .id = 2 };
	assert_int_equal(sweep_sim_submit(sim, &r1), 0);
	assert_int_equal(sweep_sim_submit(sim, &r2), 0);
	uint64_t order[3], n = 0, t;
	struct sweep_sim_completion c;
	while (n < 3 && sweep_sim_next_event(sim, &t) == 1) {
		assert_true(sweep_sim_advance(sim, t) >= 0);
		while (sweep_sim_poll(sim, &c, 1) == 1) {
			order[n++] = c.id;
			if (c.id == 1) {
				struct sweep_sim_request r3 = { .time_ns = c.finish_ns, .offset = eagle_off(12, 0, 0),
								.length = 4096, .id = 3 };
				assert_int_equal(sweep_sim_submit(sim, &r3), 0);
			}
		}
	}
	assert_int_equal(n, 3);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 3);
	assert_int_equal(order[2], 2);
	sweep_sim_free(sim);
	/* and so at Q = 2 the policies differ (FCFS < SSF < STF), where they used to be identical */
	double u[3];
	const char *sch[] = { "fcfs", "ssf", "stf" };
	for (int i = 0; i < 3; i++) {
		struct sweep_sim_options oq = { .size = sizeof(oq), .device = "eagle", .sched = sch[i] };
		assert_int_equal(sweep_sim_new(&oq, &sim), 0);
		struct sweep_sim_stats st;
		synth_run(sim, NULL, 4096, 20000, 2, 1, &st);
		u[i] = st.utilization;
		sweep_sim_free(sim);
	}
	print_message("eagle Q=2: fcfs %.2f%% ssf %.2f%% stf %.2f%%\n", u[0] * 100, u[1] * 100, u[2] * 100);
	assert_true(u[1] > 1.05 * u[0] && u[2] > 1.03 * u[1]);
}

/* ---- issue 13 defect 4: STF decisions stay cheap on clustered queues and SSDs ---- */

static double evals_per_decision(const char *dev, const char *sched, const char *pattern, unsigned q, uint64_t n)
{
	struct sweep_sim_options o = { .size = sizeof(o), .device = dev, .sched = sched };
	struct sweep_sim *sim;
	assert_int_equal(sweep_sim_new(&o, &sim), 0);
	struct sweep_sim_stats st;
	synth_run(sim, pattern, 4096, n, q, 1, &st);
	uint64_t dec, ev;
	sweep__sim_stf_cost(sim, &dec, &ev);
	sweep_sim_free(sim);
	assert_true(dec > 0);
	print_message("%s %s %s Q=%u: %.1f estimates per decision\n", dev, sched, pattern, q, (double)ev / (double)dec);
	return (double)ev / (double)dec;
}

/*
 * The cost of a decision in estimates (a machine-independent count): a
 * Postmark mix keeps every request inside a 64 MiB file set, a few
 * cylinders, where the seek bound prunes nothing; before the rotational
 * index a decision at Q = 20000 estimated the whole queue. On an SSD
 * nothing depends on position, so STF must not scan at all.
 */
static void test_stf_index(void **state)
{
	(void)state;
	double small = evals_per_decision("hdd7200", "stf", "postmark", 100, 10000);
	double big = evals_per_decision("hdd7200", "stf", "postmark", 8000, 16000);
	assert_true(big < 0.05 * 8000 && big < 20 * small); /* the whole queue was 8000 */
	assert_true(evals_per_decision("eagle", "stf", "random4k", 2000, 6000) < 300);
	assert_true(evals_per_decision("eagle", "gstf", "random4k", 2000, 6000) < 300);
	assert_true(evals_per_decision("ssd-blockmap", "stf", "postmark", 2000, 6000) <= 2.0);
	assert_true(evals_per_decision("ssd-pagemap", "wstf", "randread", 2000, 6000) <= 2.0);
}

/* ---- the size-versioned struct rule (lib/common/internal.h), on every sim struct ---- */

/* A caller built against a newer header: the struct followed by 16 more bytes. */
#define LONGER(type) struct { type s; unsigned char tail[16]; }

static void test_struct_rule(void **state)
{
	(void)state;
	struct sweep_sim *sim;
	/* options: a prefix (an older caller) reads the rest as zero */
	struct sweep_sim_options o = { .size = offsetof(struct sweep_sim_options, sched), .device = "eagle",
				       .sched = "stf" };
	assert_int_equal(sweep_sim_new(&o, &sim), 0);
	struct sweep_sim_info info = { .size = sizeof(info) };
	assert_int_equal(sweep_sim_get_info(sim, &info), 0);
	assert_string_equal(info.device, "eagle");
	assert_string_equal(info.sched, "fcfs"); /* past the prefix: the default */
	sweep_sim_free(sim);
	o.size = sizeof(size_t) - 1;
	assert_int_equal(sweep_sim_new(&o, &sim), -EINVAL);
	/* longer: zero tail accepted, non-zero tail refused */
	LONGER(struct sweep_sim_options) lo;
	memset(&lo, 0, sizeof(lo));
	lo.s = (struct sweep_sim_options){ .size = sizeof(lo), .device = "eagle" };
	assert_int_equal(sweep_sim_new(&lo.s, &sim), 0);
	sweep_sim_free(sim);
	lo.tail[15] = 1;
	sim = (struct sweep_sim *)0x1;
	assert_int_equal(sweep_sim_new(&lo.s, &sim), -E2BIG);
	assert_ptr_equal(sim, (struct sweep_sim *)0x1);

	/* device parameters inside the options follow it too */
	LONGER(struct sweep_sim_hdd_params) hp;
	memset(&hp, 0, sizeof(hp));
	hp.s.size = sizeof(hp.s);
	assert_int_equal(sweep_sim_preset_hdd("eagle", &hp.s), 0);
	hp.s.size = sizeof(hp);
	struct sweep_sim_options oh = { .size = sizeof(oh), .hdd = &hp.s };
	assert_int_equal(sweep_sim_new(&oh, &sim), 0);
	sweep_sim_free(sim);
	hp.tail[0] = 7;
	assert_int_equal(sweep_sim_new(&oh, &sim), -E2BIG);
	LONGER(struct sweep_sim_ssd_params) sp;
	memset(&sp, 0xee, sizeof(sp));
	sp.s.size = sizeof(sp);
	assert_int_equal(sweep_sim_preset_ssd("ssd-pagemap", &sp.s), -E2BIG); /* output: the same check */
	memset(sp.tail, 0, sizeof(sp.tail));
	assert_int_equal(sweep_sim_preset_ssd("ssd-pagemap", &sp.s), 0);
	assert_int_equal(sp.s.size, sizeof(sp)); /* the caller's size stays */
	assert_int_equal(sp.s.page, 4096);

	/* outputs: a prefix gets only what it holds, the bytes after it are not written */
	assert_int_equal(sweep_sim_new(NULL, &sim), 0);
	struct sweep_sim_request r = { .length = 4096 };
	assert_int_equal(sweep_sim_submit(sim, &r), 0);
	uint64_t t;
	while (sweep_sim_next_event(sim, &t) == 1)
		assert_true(sweep_sim_advance(sim, t) >= 0);
	struct sweep_sim_stats st;
	memset(&st, 0xab, sizeof(st));
	st.size = offsetof(struct sweep_sim_stats, reads);
	assert_int_equal(sweep_sim_get_stats(sim, &st), 0);
	assert_int_equal(st.requests, 1);
	assert_int_equal(st.reads, 0xababababababababull);
	LONGER(struct sweep_sim_stats) ls;
	memset(&ls, 0, sizeof(ls));
	ls.s.size = sizeof(ls);
	assert_int_equal(sweep_sim_get_stats(sim, &ls.s), 0);
	assert_int_equal(ls.s.reads, 1);
	ls.tail[3] = 1;
	assert_int_equal(sweep_sim_get_stats(sim, &ls.s), -E2BIG);
	LONGER(struct sweep_sim_info) li;
	memset(&li, 0, sizeof(li));
	li.s.size = sizeof(li);
	assert_int_equal(sweep_sim_get_info(sim, &li.s), 0);
	li.tail[0] = 1;
	assert_int_equal(sweep_sim_get_info(sim, &li.s), -E2BIG);
	sweep_sim_free(sim);

	/* synth and run options */
	struct sweep_sim_synth *g;
	LONGER(struct sweep_sim_synth_options) so;
	memset(&so, 0, sizeof(so));
	so.s = (struct sweep_sim_synth_options){ .size = sizeof(so), .capacity = 1 << 30, .requests = 10 };
	assert_int_equal(sweep_sim_synth_new(&so.s, &g), 0);
	so.tail[1] = 1;
	struct sweep_sim_synth *g2 = (struct sweep_sim_synth *)0x1;
	assert_int_equal(sweep_sim_synth_new(&so.s, &g2), -E2BIG);
	assert_ptr_equal(g2, (struct sweep_sim_synth *)0x1);
	assert_int_equal(sweep_sim_new(NULL, &sim), 0);
	LONGER(struct sweep_sim_run_options) ro;
	memset(&ro, 0, sizeof(ro));
	ro.s = (struct sweep_sim_run_options){ .size = sizeof(ro), .mode = SWEEP_SIM_CLOSED };
	ro.tail[9] = 1;
	assert_int_equal(sweep_sim_run(sim, src_gen, g, &ro.s), -E2BIG);
	ro.tail[9] = 0;
	ro.s.size = offsetof(struct sweep_sim_run_options, depth); /* no depth: 1 */
	assert_int_equal(sweep_sim_run(sim, src_gen, g, &ro.s), 10);
	sweep_sim_free(sim);
	sweep_sim_synth_free(g);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/sweep-sim-unit-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fcfs),
		cmocka_unit_test(test_noop_merges),
		cmocka_unit_test(test_ssf),
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_cscan),
		cmocka_unit_test(test_stf),
		cmocka_unit_test(test_gstf),
		cmocka_unit_test(test_wstf),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_irbw_fifo),
		cmocka_unit_test(test_irbw_fifo_rp),
		cmocka_unit_test(test_bw),
		cmocka_unit_test(test_posq),
		cmocka_unit_test(test_seek_curves),
		cmocka_unit_test(test_zone_map),
		cmocka_unit_test(test_service_time),
		cmocka_unit_test(test_write_cache),
		cmocka_unit_test(test_readahead_and_ncq),
		cmocka_unit_test(test_readahead_gap),
		cmocka_unit_test(test_blockmap_merges),
		cmocka_unit_test(test_pagemap_gc),
		cmocka_unit_test(test_background_gc),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_traces),
		cmocka_unit_test(test_open_replay),
		cmocka_unit_test(test_depend_replay),
		cmocka_unit_test(test_time_limits),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_api),
		cmocka_unit_test(test_struct_rule),
		cmocka_unit_test(test_closed_queue_instant),
		cmocka_unit_test(test_stf_index),
		cmocka_unit_test(test_write_back_physics),
		cmocka_unit_test(test_hdd7200_2018_datasheet),
		cmocka_unit_test(test_stream_cache_bound),
		cmocka_unit_test(test_seq_write_depth),
		cmocka_unit_test(test_destage_streams),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_flush),
		cmocka_unit_test(test_online),
		cmocka_unit_test(test_timeline_cap),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
