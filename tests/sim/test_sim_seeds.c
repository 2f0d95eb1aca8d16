/* SPDX-License-Identifier: MIT */
/*
 * The seeds' results, reproduced with the model and the seeds' method, each
 * asserted at the seed's own tolerance. Where the model does not reach a
 * figure, bench/model/README.md says so and why, and the test asserts the
 * model's documented value (to the tolerance given there) and the direction
 * of the paper's effect.
 *
 * scheduling-long-queues.txt: the Eagle preset, a closed queue of Q random
 * 4 KiB reads (each completion replaced by a new request arriving at that
 * completion), 100 x Q requests (at least 10000), utilization = fraction of time spent
 * transferring data. The paper's runs varied by 1-2% of the mean after 100
 * x Q requests: that is the tolerance wherever it gives a number without
 * one. ssd-schedulers-lba-bundling.txt: the block-mapped SSD with a 4 MiB
 * logical block. block-level-optimization-io-path.txt: the Cheetah 15K class
 * under Postmark as a file system sends it (postmark-fs).
 *
 * Every run is made once, up front, by as many threads as there are CPUs (at
 * most 4); the tests only look at the results. The runs at Q >= 500 take most
 * of the time and give the same numbers in every build, so a sanitizer build
 * leaves them out (the other pass checks them) and checks the rest.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <sweep/sim.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

struct spec {
	const char *dev, *sched, *pattern;
	uint64_t size;
	unsigned q;
	uint64_t n;
	uint64_t max_resp_ns;
	unsigned group, depth;
	int write_cache;
	int buffer_kib; /* -1: the preset's */
	bool heavy;     /* left out of a sanitizer build */
};

struct res {
	struct sweep_sim_stats st;
	double util, max_s, mibs, iops;
	bool done;
};

#define LQN(s, Q, N, ...) { .dev = "eagle", .sched = s, .size = 4096, .q = Q, .n = N, .buffer_kib = -1, __VA_ARGS__ }
/* 100 x Q requests, the paper's method, and at least 10000 (100 requests at Q = 1 vary by 3%) */
#define LQ(s, Q, ...) LQN(s, Q, 100ull * (Q) < 10000 ? 10000 : 100ull * (Q), __VA_ARGS__)
#define SSDB(s, pat, sz, Q, N, B) { .dev = "ssd-blockmap", .sched = s, .pattern = pat, .size = sz, .q = Q, .n = N, .buffer_kib = B }
#define SSD(s, pat, sz, Q, N) SSDB(s, pat, sz, Q, N, -1)
#define PMFS(s, D, wc) { .dev = "cheetah15k", .sched = s, .pattern = "postmark-fs", .q = 64, .n = 30000, .depth = D, .write_cache = wc, .buffer_kib = -1 }
#define WB SWEEP_SIM_WRITE_BACK
#define WT SWEEP_SIM_WRITE_THROUGH

enum {
	FCFS1, FCFS10, FCFS100, FCFS1000,
	SSF1, SSF10, SSF100, SSF1000,
	CSCAN1, CSCAN10, CSCAN100, CSCAN1000,
	STF1, STF10, STF100, STF500, STF1000, STF5000,
	GSTF1, GSTF10, GSTF100, GSTF1000,
	FRZ100, FRZ1000,
	WSTF1, WSTF10, WSTF100, WSTF1000, WSTF3S, STF3S,
	G1, G10, G42, G105, G420, G840,
	SEQ4M, RND4M, RND8M, RND2M, RND4K,
	PM_NOOP8, PM_DL8, PM_IRBW8, PM_RP8,
	PM_NOOP32, PM_DL32, PM_IRBW32, PM_RP32,
	PM_NOOP128, PM_DL128, PM_IRBW128, PM_RP128,
	NB_NOOP32, NB_DL32,
	WT_NOOP1, WT_DL1, WT_NOOP4, WT_DL4, WT_NOOP64, WT_DL64,
	WB_NOOP1, WB_DL1, WB_NOOP64, WB_DL64,
	NRUNS
};

static const struct spec specs[NRUNS] = {
	[FCFS1] = LQ("fcfs", 1), [FCFS10] = LQ("fcfs", 10), [FCFS100] = LQ("fcfs", 100), [FCFS1000] = LQ("fcfs", 1000, .heavy = true),
	[SSF1] = LQ("ssf", 1), [SSF10] = LQ("ssf", 10), [SSF100] = LQ("ssf", 100), [SSF1000] = LQ("ssf", 1000, .heavy = true),
	[CSCAN1] = LQ("cscan", 1), [CSCAN10] = LQ("cscan", 10), [CSCAN100] = LQ("cscan", 100),
	[CSCAN1000] = LQ("cscan", 1000, .heavy = true),
	[STF1] = LQ("stf", 1), [STF10] = LQ("stf", 10), [STF100] = LQ("stf", 100), [STF500] = LQ("stf", 500, .heavy = true),
	[STF1000] = LQ("stf", 1000, .heavy = true),
	/* the paper's "preliminary runs" at 5000: 20 x Q requests give the 100 x Q figure within 0.2 points */
	[STF5000] = LQN("stf", 5000, 100000, .heavy = true),
	[GSTF1] = LQ("gstf", 1), [GSTF10] = LQ("gstf", 10), [GSTF100] = LQ("gstf", 100), [GSTF1000] = LQ("gstf", 1000, .heavy = true),
	[FRZ100] = LQ("gstf-freeze", 100), [FRZ1000] = LQ("gstf-freeze", 1000, .heavy = true),
	[WSTF1] = LQ("wstf", 1), [WSTF10] = LQ("wstf", 10), [WSTF100] = LQ("wstf", 100), [WSTF1000] = LQ("wstf", 1000, .heavy = true),
	[WSTF3S] = LQN("wstf", 500, 50000, .max_resp_ns = 3000000000ull, .heavy = true),
	[STF3S] = LQN("stf", 500, 50000, .heavy = true),
	/* Figure 8: GSTF at Q = 1000 against its cylinder group size (840: the whole disk, STF) */
	[G1] = LQ("gstf", 1000, .group = 1, .heavy = true), [G10] = LQ("gstf", 1000, .group = 10, .heavy = true),
	[G42] = LQ("gstf", 1000, .group = 42, .heavy = true), [G105] = LQ("gstf", 1000, .group = 105, .heavy = true),
	[G420] = LQ("gstf", 1000, .group = 420, .heavy = true), [G840] = LQ("gstf", 1000, .group = 840, .heavy = true),
	[SEQ4M] = SSD("noop", "seqwrite", 4 << 20, 1, 200), [RND4M] = SSD("noop", "randwrite", 4 << 20, 1, 200),
	[RND8M] = SSD("noop", "randwrite", 8 << 20, 1, 100), [RND2M] = SSD("noop", "randwrite", 2 << 20, 1, 400),
	[RND4K] = SSD("noop", "randwrite", 4096, 1, 1000),
	[PM_NOOP8] = SSD("noop", "postmark", 0, 8, 20000), [PM_DL8] = SSD("deadline", "postmark", 0, 8, 20000),
	[PM_IRBW8] = SSD("irbw-fifo", "postmark", 0, 8, 20000), [PM_RP8] = SSD("irbw-fifo-rp", "postmark", 0, 8, 20000),
	[PM_NOOP32] = SSD("noop", "postmark", 0, 32, 20000), [PM_DL32] = SSD("deadline", "postmark", 0, 32, 20000),
	[PM_IRBW32] = SSD("irbw-fifo", "postmark", 0, 32, 20000), [PM_RP32] = SSD("irbw-fifo-rp", "postmark", 0, 32, 20000),
	[PM_NOOP128] = SSD("noop", "postmark", 0, 128, 20000), [PM_DL128] = SSD("deadline", "postmark", 0, 128, 20000),
	[PM_IRBW128] = SSD("irbw-fifo", "postmark", 0, 128, 20000),
	[PM_RP128] = SSD("irbw-fifo-rp", "postmark", 0, 128, 20000),
	[NB_NOOP32] = SSDB("noop", "postmark", 0, 32, 20000, 0),
	[NB_DL32] = SSDB("deadline", "postmark", 0, 32, 20000, 0),
	[WT_NOOP1] = PMFS("noop", 1, WT), [WT_DL1] = PMFS("deadline", 1, WT), [WT_NOOP4] = PMFS("noop", 4, WT),
	[WT_DL4] = PMFS("deadline", 4, WT), [WT_NOOP64] = PMFS("noop", 64, WT), [WT_DL64] = PMFS("deadline", 64, WT),
	[WB_NOOP1] = PMFS("noop", 1, WB), [WB_DL1] = PMFS("deadline", 1, WB), [WB_NOOP64] = PMFS("noop", 64, WB),
	[WB_DL64] = PMFS("deadline", 64, WB),
};

static struct res results[NRUNS];
static int run_error;

static int src(void *ctx, struct sweep_sim_request *r)
{
	return sweep_sim_synth_next(ctx, r);
}

/* One run; 0 or -errno (the tests then fail on it). */
static int run(const struct spec *p, struct res *r)
{
	struct sweep_sim_ssd_params sp = { .size = sizeof(sp) };
	struct sweep_sim_options o = { .size = sizeof(o), .device = p->dev, .sched = p->sched,
				       .max_response_ns = p->max_resp_ns, .group_cylinders = p->group,
				       .queue_depth = p->depth, .write_cache = p->write_cache, .seed = 1 };
	if (p->buffer_kib >= 0) {
		if (sweep_sim_preset_ssd(p->dev, &sp) < 0)
			return -1;
		sp.buffer_kib = (uint64_t)p->buffer_kib;
		o.ssd = &sp;
	}
	struct sweep_sim *sim;
	int err = sweep_sim_new(&o, &sim);
	if (err)
		return err;
	struct sweep_sim_info info = { .size = sizeof(info) };
	sweep_sim_get_info(sim, &info);
	struct sweep_sim_synth_options so = { .size = sizeof(so), .pattern = p->pattern, .request_size = p->size,
					      .capacity = info.capacity, .requests = p->n, .seed = 1 };
	struct sweep_sim_synth *g;
	if ((err = sweep_sim_synth_new(&so, &g))) {
		sweep_sim_free(sim);
		return err;
	}
	struct sweep_sim_run_options ro = { .size = sizeof(ro), .mode = SWEEP_SIM_CLOSED, .depth = p->q };
	int64_t n = sweep_sim_run(sim, src, g, &ro);
	r->st.size = sizeof(r->st);
	sweep_sim_get_stats(sim, &r->st);
	sweep_sim_synth_free(g);
	sweep_sim_free(sim);
	if (n != (int64_t)p->n)
		return n < 0 ? (int)n : -1;
	uint64_t last = r->st.last_finish_ns > r->st.end_ns ? r->st.last_finish_ns : r->st.end_ns;
	r->util = r->st.utilization;
	r->max_s = r->st.resp_max_ms / 1000;
	r->mibs = r->st.throughput_mib_s;
	r->iops = (double)r->st.requests / ((double)(last - r->st.first_arrival_ns) / 1e9);
	r->done = true;
	return 0;
}

/* The runs, taken by the workers in turn. */
static pthread_mutex_t next_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned next_run;

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&next_lock);
		unsigned i = next_run++;
		pthread_mutex_unlock(&next_lock);
		if (i >= NRUNS)
			return NULL;
		if (SANITIZED && specs[i].heavy)
			continue;
		if (run(&specs[i], &results[i]) < 0) {
			pthread_mutex_lock(&next_lock);
			run_error = 1;
			pthread_mutex_unlock(&next_lock);
		}
	}
}

/* A run's result; a heavy one in a sanitizer build skips the calling test. */
static const struct res *R(unsigned i)
{
	assert_int_equal(run_error, 0);
	if (SANITIZED && specs[i].heavy)
		skip();
	assert_true(results[i].done);
	return &results[i];
}

/* |a / b - 1| <= tol */
static bool near(double a, double b, double tol)
{
	return fabs(a / b - 1) <= tol;
}

static void show(const char *what, unsigned i)
{
	if (SANITIZED && specs[i].heavy)
		return;
	const struct res *r = &results[i];
	print_message("%-26s %s/%s Q=%u: %7.3f%% util, %9.3f MiB/s, %8.0f IOPS, max %9.3f s\n", what, specs[i].dev,
		      specs[i].sched, specs[i].q, r->util * 100, r->mibs, r->iops, r->max_s);
}

/* ---- scheduling-long-queues.txt ---- */

#define FCFS_UTIL (2.0 / (2.0 + 8.3 + 18.0)) /* 7.07% */

static void test_fcfs_seven_percent(void **state)
{
	(void)state;
	/* 2 ms transfer / (18 ms seek + 8.3 ms half turn + 2 ms): independent of Q, within 2% */
	const unsigned runs[] = { FCFS1, FCFS10, FCFS100 };
	for (size_t i = 0; i < 3; i++) {
		show("FCFS", runs[i]);
		assert_true(near(R(runs[i])->util, FCFS_UTIL, 0.02));
	}
	show("FCFS", FCFS1000);
	assert_true(near(R(FCFS1000)->util, FCFS_UTIL, 0.02));
}

static void test_q1_is_fcfs(void **state)
{
	(void)state;
	/* "any of the algorithms with queue length of 1 should equal FCFS": bit for bit */
	const unsigned runs[] = { SSF1, CSCAN1, STF1, GSTF1, WSTF1 };
	for (size_t i = 0; i < 5; i++)
		assert_true(R(runs[i])->util == R(FCFS1)->util);
}

static void test_ssf_cscan(void **state)
{
	(void)state;
	/* SSF at Q = 100: "8.3 + 4.6 + .87 * sqrt(8.3) or 15.4 ms" an I/O, "approximately" (its footnote 3:
	 * the time of an average seek stands for the average time): within 10% */
	show("SSF", SSF100);
	double io_ms = 2.0 / R(SSF100)->util;
	print_message("SSF Q=100: %.2f ms an I/O (paper 15.4)\n", io_ms);
	assert_true(near(io_ms, 15.4, 0.10));
	/* C-SCAN "essentially identical" to SSF: within 2%; both rising with Q */
	const unsigned ssf[] = { SSF10, SSF100, SSF1000 }, cscan[] = { CSCAN10, CSCAN100, CSCAN1000 };
	for (size_t i = 0; i < 3; i++) {
		show("C-SCAN", cscan[i]);
		assert_true(near(R(cscan[i])->util, R(ssf[i])->util, 0.02));
		if (i)
			assert_true(R(ssf[i])->util > R(ssf[i - 1])->util && R(cscan[i])->util > R(cscan[i - 1])->util);
	}
	/* C-SCAN "substantially improves the maximum observed response time": under 3/4 of SSF's */
	assert_true(R(CSCAN100)->max_s < 0.75 * R(SSF100)->max_s);
	assert_true(R(CSCAN1000)->max_s < 0.75 * R(SSF1000)->max_s);
}

static void test_stf(void **state)
{
	(void)state;
	/* STF above SSF and C-SCAN, more so as Q grows */
	assert_true(R(STF100)->util > 1.1 * fmax(R(SSF100)->util, R(CSCAN100)->util));
	show("STF", STF500);
	show("STF", STF1000);
	show("STF", STF5000);
	assert_true(R(STF1000)->util > 1.3 * fmax(R(SSF1000)->util, R(CSCAN1000)->util));
	/* "at queue length of 1000, STF utilization is still rising" (beyond the 2% noise) */
	assert_true(R(STF1000)->util > 1.02 * R(STF500)->util);
	/* "nearly four times" FCFS, and "less than 40%" up to Q = 1000 */
	double x = R(STF1000)->util / R(FCFS1000)->util;
	assert_true(x >= 3.5 && x < 4.0);
	assert_true(R(STF1000)->util < 0.40);
	/* "preliminary runs at queue lengths of 5000 have utilizations of 40%": within 5% */
	assert_true(near(R(STF5000)->util, 0.40, 0.05));
	/* STF starves requests (Fig. 7): far past the 30 s WSTF bounds */
	assert_true(R(STF1000)->max_s > 10 * 30.0);
}

static void test_gstf(void **state)
{
	(void)state;
	/* GSTF210 "has utilization close to STF" (within 10%) and a maximum "close to" C-SCAN's (within 25%) */
	show("GSTF", GSTF100);
	show("GSTF", GSTF1000);
	assert_true(R(GSTF100)->util > R(CSCAN100)->util && R(GSTF100)->util < R(STF100)->util);
	assert_true(R(GSTF1000)->util > 0.9 * R(STF1000)->util && R(GSTF1000)->util < R(STF1000)->util);
	assert_true(near(R(GSTF1000)->max_s, R(CSCAN1000)->max_s, 0.25));
	/*
	 * The freeze variant: "3%-4% lower disk utilizations and 15%-25% lower
	 * maximum response times". At Q = 100 both hold; at Q = 1000 the
	 * maximum holds and the utilization is 4.8% lower (README: within 0.5).
	 */
	show("GSTF freeze", FRZ100);
	show("GSTF freeze", FRZ1000);
	double du100 = 1 - R(FRZ100)->util / R(GSTF100)->util, dm100 = 1 - R(FRZ100)->max_s / R(GSTF100)->max_s;
	double du1000 = 1 - R(FRZ1000)->util / R(GSTF1000)->util, dm1000 = 1 - R(FRZ1000)->max_s / R(GSTF1000)->max_s;
	print_message("freeze vs GSTF: Q=100 %.1f%% lower util, %.1f%% lower max; Q=1000 %.1f%%, %.1f%%\n", du100 * 100,
		      dm100 * 100, du1000 * 100, dm1000 * 100);
	assert_true(du100 >= 0.03 && du100 <= 0.04 && dm100 >= 0.15 && dm100 <= 0.25);
	assert_true(fabs(du1000 - 0.048) <= 0.005 && dm1000 >= 0.15 && dm1000 <= 0.25);
}

static void test_gstf_group_size(void **state)
{
	(void)state;
	/*
	 * Figure 8, Q = 1000: "as the cylinder group size increases, the
	 * utilization of GSTF increases", and at 840 "GSTF is the same (by
	 * definition) as STF", whose maximum response is far above the rest.
	 * (The paper's early dip in the maximum is inside the model's run to
	 * run spread of the maximum, README.)
	 */
	const unsigned g[] = { G1, G10, G42, G105, G420, G840 };
	for (size_t i = 0; i < 6; i++) {
		show("GSTF group", g[i]);
		if (i)
			assert_true(R(g[i])->util > 0.99 * R(g[i - 1])->util); /* rising, within the 1% noise */
	}
	assert_true(R(G105)->util > 1.1 * R(G1)->util);
	assert_true(R(G840)->util == R(STF1000)->util && R(G840)->max_s == R(STF1000)->max_s);
	for (size_t i = 0; i < 5; i++)
		assert_true(R(G840)->max_s > 5 * R(g[i])->max_s);
}

static void test_wstf(void **state)
{
	(void)state;
	/* "within 1-2% of the STF I/O" and "no I/O response time is allowed to take more than 30 seconds" */
	show("WSTF", WSTF10);
	show("WSTF", WSTF100);
	show("WSTF", WSTF1000);
	assert_true(R(WSTF10)->util >= 0.98 * R(STF10)->util);
	assert_true(R(WSTF100)->util >= 0.98 * R(STF100)->util);
	assert_true(R(WSTF100)->max_s <= 30.0 && R(WSTF1000)->max_s <= 30.0);
	/* at Q = 1000 the model's WSTF is 3.5% below STF (README: within 0.5 point), still under it */
	double below = 1 - R(WSTF1000)->util / R(STF1000)->util;
	print_message("WSTF Q=1000: %.2f%% below STF\n", below * 100);
	assert_true(fabs(below - 0.035) <= 0.005);
}

/*
 * Issue 13 defect 2: once requests pass M, WSTF must not fall back to FCFS.
 * M = 3 s below STF's mean response at Q = 500 (4.5 s): every request ends
 * up overdue. Oldest-first gave FCFS's 7.05%; chosen by positioning time
 * among themselves the model keeps its documented utilization and a
 * maximum a fraction of STF's (README: within 2%).
 */
static void test_wstf_overdue(void **state)
{
	(void)state;
	show("WSTF M=3 s", WSTF3S);
	show("STF", STF3S);
	assert_true(R(WSTF3S)->util > 2 * FCFS_UTIL);
	assert_true(near(R(WSTF3S)->util, 0.181, 0.02));
	assert_true(R(WSTF3S)->max_s < 0.1 * R(STF3S)->max_s);
}

/* ---- ssd-schedulers-lba-bundling.txt ---- */

static void test_ssd_bundles(void **state)
{
	(void)state;
	const unsigned runs[] = { SEQ4M, RND4M, RND8M, RND2M, RND4K };
	for (size_t i = 0; i < 5; i++)
		show("bundles", runs[i]);
	double seq = R(SEQ4M)->mibs;
	/* "the random write throughput matches exactly to that of the sequential one when the bundle size
	 * is 4MB on the MTRON", "and does not improve any further with larger bundle sizes": within 1% */
	assert_true(near(R(RND4M)->mibs, seq, 0.01));
	assert_true(near(R(RND8M)->mibs, seq, 0.01));
	/* smaller bundles fall short (the seed's figure has no number in its text): the model's 2 MiB
	 * bundle and 4 KiB writes, README within 2% and 10% */
	print_message("2 MiB bundles %.1f%% of sequential, 4 KiB %.3f MiB/s\n", R(RND2M)->mibs / seq * 100, R(RND4K)->mibs);
	assert_true(R(RND2M)->mibs < 0.5 * seq && near(R(RND2M)->mibs, 25.2, 0.02));
	assert_true(R(RND4K)->mibs < seq / 100 && near(R(RND4K)->mibs, 0.041, 0.10));
	/* the mechanism: a bundle fills its logical block (no page padding, no copy), a 4 KiB write
	 * costs a logical block's worth of padding and programs */
	assert_true(R(RND4M)->st.write_amplification == 1.0 && R(RND4M)->st.flash_pages_read == 0);
	assert_true(R(RND4K)->st.write_amplification > 500);
}

static void test_irbw(void **state)
{
	(void)state;
	const unsigned noop[] = { PM_NOOP8, PM_NOOP32, PM_NOOP128 }, dl[] = { PM_DL8, PM_DL32, PM_DL128 };
	const unsigned irbw[] = { PM_IRBW8, PM_IRBW32, PM_IRBW128 }, rp[] = { PM_RP8, PM_RP32, PM_RP128 };
	for (size_t i = 0; i < 3; i++) {
		double n = R(noop[i])->mibs;
		print_message("ssd-blockmap postmark Q=%u: noop %.3f MiB/s, deadline %+.1f%%, irbw-fifo %+.1f%%, "
			      "irbw-fifo-rp %+.1f%% (vs deadline %+.1f%%)\n",
			      specs[noop[i]].q, n, (R(dl[i])->mibs / n - 1) * 100, (R(irbw[i])->mibs / n - 1) * 100,
			      (R(rp[i])->mibs / n - 1) * 100, (R(rp[i])->mibs / R(dl[i])->mibs - 1) * 100);
		/* the host schedulers differ by "a few %" (the seed's IRBW-FIFO: 1-3% over noop) */
		assert_true(fabs(R(dl[i])->mibs / n - 1) < 0.03);
		assert_true(R(irbw[i])->mibs / n - 1 > -0.01 && R(irbw[i])->mibs / n - 1 < 0.03);
		/* read preference is not what makes the difference here (README: the seed's +15% over
		 * deadline comes from synchronous reads, which a closed queue does not have): within 2% */
		assert_true(fabs(R(rp[i])->mibs / R(dl[i])->mibs - 1) < 0.02);
	}
	/* IRBW-FIFO over noop in the seed's band at the deeper queues */
	assert_true(R(PM_IRBW32)->mibs / R(PM_NOOP32)->mibs - 1 >= 0.01);
	assert_true(R(PM_IRBW128)->mibs / R(PM_NOOP128)->mibs - 1 >= 0.01);
	/* why the model's differences were 5x: without the device's write buffer the order of the
	 * host's writes decides the FTL's merges (README) */
	double x = R(NB_DL32)->mibs / R(NB_NOOP32)->mibs;
	print_message("without the write buffer, Q=32: deadline %.2fx noop\n", x);
	assert_true(x > 1.5);
	assert_true(R(NB_NOOP32)->st.write_amplification > 50 * R(PM_NOOP32)->st.write_amplification);
}

/* ---- block-level-optimization-io-path.txt ---- */

static void test_disk_queue_depth(void **state)
{
	(void)state;
	const unsigned runs[] = { WT_NOOP1, WT_DL1, WT_NOOP4, WT_DL4, WT_NOOP64, WT_DL64,
				  WB_NOOP1, WB_DL1, WB_NOOP64, WB_DL64 };
	for (size_t i = 0; i < 10; i++)
		print_message("cheetah15k postmark-fs %s depth %2u %s: %6.0f IOPS\n",
			      specs[runs[i]].write_cache == WT ? "write-through" : "write-back", specs[runs[i]].depth,
			      specs[runs[i]].sched, R(runs[i])->iops);
	/* write-through: No-Op gains "more than 6 times" from the disk's queue */
	assert_true(R(WT_NOOP64)->iops > 6 * R(WT_NOOP1)->iops);
	/* when the disk queue holds every outstanding request, the gap between host schedulers closes:
	 * within 2% */
	assert_true(near(R(WT_NOOP64)->iops, R(WT_DL64)->iops, 0.02));
	/* No-Op far behind at the driver's default depth of 4 ("as low as one fourth of the best");
	 * the model: half (README, within 5%) */
	assert_true(near(R(WT_NOOP4)->iops / R(WT_DL4)->iops, 0.52, 0.05));
	/* the seed's seek-based schedulers gain about 30% from depth; the model's deadline gains 3.8x
	 * (README: the drive's rotational ordering on a small working set, within 10%) */
	assert_true(near(R(WT_DL64)->iops / R(WT_DL1)->iops, 3.8, 0.10));
	/* write-through with a deep queue "performs comparably" with write-back: within 10% */
	assert_true(near(R(WT_DL64)->iops, R(WB_DL64)->iops, 0.10));
	/* not reproduced: the seed's write-back drive is best at depth 1; the model's gains with depth
	 * (README: the drives' queue-full handling), by its documented 2.0-2.5x */
	assert_true(R(WB_DL64)->iops / R(WB_DL1)->iops > 1.8 && R(WB_NOOP64)->iops / R(WB_NOOP1)->iops < 2.8);
}

int main(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nthreads = cpus < 1 ? 1 : cpus > 4 ? 4 : (unsigned)cpus;
	pthread_t th[4];
	for (unsigned i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fcfs_seven_percent),
		cmocka_unit_test(test_q1_is_fcfs),
		cmocka_unit_test(test_ssf_cscan),
		cmocka_unit_test(test_stf),
		cmocka_unit_test(test_gstf),
		cmocka_unit_test(test_gstf_group_size),
		cmocka_unit_test(test_wstf),
		cmocka_unit_test(test_wstf_overdue),
		cmocka_unit_test(test_ssd_bundles),
		cmocka_unit_test(test_irbw),
		cmocka_unit_test(test_disk_queue_depth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
