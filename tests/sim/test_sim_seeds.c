/* SPDX-License-Identifier: MIT */
/*
 * The seeds' results, reproduced with the model and the seeds' method.
 *
 * scheduling-long-queues.txt: the Eagle preset, a closed queue of Q random
 * 4 KiB reads (each completion replaced by a new request, arriving at that
 * completion), 100 x Q requests, utilization = fraction of time spent
 * transferring data. ssd-schedulers-lba-bundling.txt: the block-mapped SSD
 * with a 4 MiB logical block.
 *
 * Each check states its tolerance. The numbers printed are the ones
 * bench/model/README.md tabulates next to the papers'.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <sweep/sim.h>

struct res {
	double util, max_s, mibs;
	struct sweep_sim_stats st;
};

static int src(void *ctx, struct sweep_sim_request *r)
{
	return sweep_sim_synth_next(ctx, r);
}

static struct res run(const char *dev, const char *sched, const char *pattern, uint64_t size, unsigned q,
		      uint64_t n, uint64_t max_resp_ns)
{
	struct sweep_sim_options o = { .size = sizeof(o), .device = dev, .sched = sched, .max_response_ns = max_resp_ns, .seed = 1 };
	struct sweep_sim *sim;
	assert_int_equal(sweep_sim_new(&o, &sim), 0);
	struct sweep_sim_info info = { .size = sizeof(info) };
	sweep_sim_get_info(sim, &info);
	struct sweep_sim_synth_options so = { .size = sizeof(so), .pattern = pattern, .request_size = size,
					      .capacity = info.capacity, .requests = n, .seed = 1 };
	struct sweep_sim_synth *g;
	assert_int_equal(sweep_sim_synth_new(&so, &g), 0);
	struct sweep_sim_run_options ro = { .size = sizeof(ro), .mode = SWEEP_SIM_CLOSED, .depth = q };
	assert_int_equal(sweep_sim_run(sim, src, g, &ro), (int64_t)n);
	struct res r = { 0 };
	r.st.size = sizeof(r.st);
	assert_int_equal(sweep_sim_get_stats(sim, &r.st), 0);
	r.util = r.st.utilization;
	r.max_s = r.st.resp_max_ms / 1000;
	r.mibs = r.st.throughput_mib_s;
	sweep_sim_synth_free(g);
	sweep_sim_free(sim);
	return r;
}

static double iops(const struct res *r)
{
	return (double)r->st.requests / ((double)(r->st.last_finish_ns - r->st.first_arrival_ns) / 1e9);
}

static struct res run_depth(const char *sched, unsigned depth)
{
	struct sweep_sim_options o = { .size = sizeof(o), .device = "cheetah15k", .sched = sched, .queue_depth = depth };
	struct sweep_sim *sim;
	assert_int_equal(sweep_sim_new(&o, &sim), 0);
	struct sweep_sim_info info = { .size = sizeof(info) };
	sweep_sim_get_info(sim, &info);
	struct sweep_sim_synth_options so = { .size = sizeof(so), .pattern = "randread", .capacity = info.capacity,
					      .requests = 6400, .seed = 1 };
	struct sweep_sim_synth *g;
	assert_int_equal(sweep_sim_synth_new(&so, &g), 0);
	struct sweep_sim_run_options ro = { .size = sizeof(ro), .mode = SWEEP_SIM_CLOSED, .depth = 64 };
	assert_int_equal(sweep_sim_run(sim, src, g, &ro), 6400);
	struct res r = { 0 };
	r.st.size = sizeof(r.st);
	sweep_sim_get_stats(sim, &r.st);
	sweep_sim_synth_free(g);
	sweep_sim_free(sim);
	return r;
}

static struct res eagle(const char *sched, unsigned q)
{
	struct res r = run("eagle", sched, NULL, 4096, q, 100ull * q, 0);
	print_message("eagle %-6s Q=%-5u utilization %6.2f%%  max response %8.3f s\n", sched, q, r.util * 100,
		      r.max_s);
	return r;
}

static const unsigned Qs[] = { 1, 10, 100, 1000 };
#define NQ (sizeof(Qs) / sizeof(Qs[0]))

static void test_fcfs_seven_percent(void **state)
{
	(void)state;
	/* 2 ms transfer / (18 ms seek + 8.3 ms half turn + 2 ms) = 7.07%, whatever Q is */
	double lo = 1, hi = 0;
	for (size_t i = 0; i < NQ; i++) {
		double u = eagle("fcfs", Qs[i]).util;
		assert_true(fabs(u - 0.0707) < 0.005);
		lo = fmin(lo, u);
		hi = fmax(hi, u);
	}
	assert_true(hi - lo < 0.003);
}

static void test_ssf_cscan(void **state)
{
	(void)state;
	struct res ssf[NQ], cscan[NQ];
	for (size_t i = 0; i < NQ; i++) {
		ssf[i] = eagle("ssf", Qs[i]);
		cscan[i] = eagle("cscan", Qs[i]);
	}
	/* Q = 1 is FCFS for every policy */
	assert_true(fabs(ssf[0].util - 0.0707) < 0.005 && fabs(cscan[0].util - 0.0707) < 0.005);
	for (size_t i = 1; i < NQ; i++) {
		/* close to each other (within 5%) and rising with Q */
		assert_true(fabs(ssf[i].util - cscan[i].util) / cscan[i].util < 0.05);
		assert_true(ssf[i].util > ssf[i - 1].util && cscan[i].util > cscan[i - 1].util);
	}
	/* C-SCAN's maximum response well below SSF's: at most 3/4 of it at long queues */
	assert_true(cscan[2].max_s < 0.75 * ssf[2].max_s);
	assert_true(cscan[3].max_s < 0.75 * ssf[3].max_s);
}

static void test_stf_gstf_wstf(void **state)
{
	(void)state;
	struct res ssf = eagle("ssf", 1000), cscan = eagle("cscan", 1000);
	struct res stf100 = eagle("stf", 100), stf500 = eagle("stf", 500), stf = eagle("stf", 1000);
	struct res cscan100 = eagle("cscan", 100), ssf100 = eagle("ssf", 100);
	/* STF above both seek-only policies (by 10% or more) and still rising at Q = 1000 */
	assert_true(stf100.util > 1.1 * fmax(ssf100.util, cscan100.util));
	assert_true(stf.util > 1.1 * fmax(ssf.util, cscan.util));
	assert_true(stf.util > 1.05 * stf500.util);
	assert_true(stf.util > 3.0 * 0.0707); /* "nearly four times" FCFS */

	/* GSTF (4 groups of 210 cylinders, the seed's GSTF210) between C-SCAN and STF */
	struct res gstf100 = eagle("gstf", 100), gstf = eagle("gstf", 1000);
	assert_true(gstf100.util > cscan100.util && gstf100.util < stf100.util);
	assert_true(gstf.util > cscan.util && gstf.util < stf.util);
	assert_true(gstf.max_s < stf.max_s);

	/* WSTF with M = 30 s: within 5% of STF, maximum response bounded by M */
	struct res wstf100 = eagle("wstf", 100), wstf = eagle("wstf", 1000);
	assert_true(wstf100.util > 0.95 * stf100.util);
	assert_true(wstf.util > 0.95 * stf.util);
	assert_true(wstf.max_s <= 30.0);
	assert_true(stf.max_s > 30.0); /* STF does starve requests here, so the bound does work */
	/* a tighter M that still exceeds the mean response (8 s here) binds and holds;
	 * below the mean no order can keep it (Little's law), as the seed's footnote implies */
	struct res w15 = run("eagle", "wstf", NULL, 4096, 1000, 100000, 15000000000ull);
	print_message("eagle wstf(M=15s) Q=1000 utilization %6.2f%%  max response %8.3f s\n", w15.util * 100,
		      w15.max_s);
	assert_true(w15.max_s <= 15.0);
	assert_true(w15.util > 0.7 * stf.util);
}

/*
 * Issue 13 defect 2: once requests pass M, WSTF must not fall back to FCFS.
 * M = 3 s below STF's mean response at Q = 500 (about 4.5 s): every request
 * ends up overdue. Serving the overdue oldest-first gave FCFS's 7.05%; chosen
 * by positioning time among themselves they keep 18%. Tolerances: above
 * twice FCFS's 7.07% and above 60% of STF; the maximum stays under 4 M.
 */
static void test_wstf_overdue(void **state)
{
	(void)state;
	struct res stf = run("eagle", "stf", NULL, 4096, 500, 50000, 3 * 1000000000ull);
	struct res w = run("eagle", "wstf", NULL, 4096, 500, 50000, 3 * 1000000000ull);
	print_message("eagle Q=500 M=3 s: stf %.2f%% (max %.1f s), wstf %.2f%% (max %.1f s)\n", stf.util * 100, stf.max_s,
		      w.util * 100, w.max_s);
	assert_true(w.util > 2 * 0.0707);
	assert_true(w.util > 0.6 * stf.util);
	assert_true(w.max_s < 12.0 && w.max_s < stf.max_s);
}

static void test_ssd_bundles(void **state)
{
	(void)state;
	/* block-mapped SSD, 4 MiB logical block: random bundle-sized aligned writes reach
	 * sequential write throughput (within 10%); random 4 KiB writes are far below (< 1/10) */
	struct res seq = run("ssd-blockmap", "noop", "seqwrite", 4 << 20, 1, 200, 0);
	struct res rnd = run("ssd-blockmap", "noop", "randwrite", 4 << 20, 1, 200, 0);
	struct res r4k = run("ssd-blockmap", "noop", "randwrite", 4096, 1, 1000, 0);
	struct res r2m = run("ssd-blockmap", "noop", "randwrite", 2 << 20, 1, 400, 0);
	print_message("ssd-blockmap seqwrite 4M %.1f MiB/s, randwrite 4M %.1f, 2M %.1f, 4K %.2f MiB/s\n", seq.mibs,
		      rnd.mibs, r2m.mibs, r4k.mibs);
	assert_true(fabs(rnd.mibs / seq.mibs - 1.0) <= 0.10);
	assert_true(r4k.mibs < seq.mibs / 10);
	/* the mechanism: bundle writes are all switch merges, 4 KiB ones full merges */
	assert_true(rnd.st.merges_switch > 0 && rnd.st.merges_partial + rnd.st.merges_full == 0);
	assert_true(r4k.st.merges_full > r4k.st.merges_switch + r4k.st.merges_partial);
	assert_true(r2m.st.merges_partial + r2m.st.merges_full > 0);
}

static void test_irbw(void **state)
{
	(void)state;
	/* a Postmark-like read/write mix, 32 outstanding: IRBW-FIFO-RP beats noop (by 10% or more) */
	struct res noop = run("ssd-blockmap", "noop", "postmark", 0, 32, 20000, 0);
	struct res irbw = run("ssd-blockmap", "irbw-fifo", "postmark", 0, 32, 20000, 0);
	struct res rp = run("ssd-blockmap", "irbw-fifo-rp", "postmark", 0, 32, 20000, 0);
	print_message("ssd-blockmap postmark Q=32: noop %.2f MiB/s, irbw-fifo %.2f, irbw-fifo-rp %.2f\n", noop.mibs,
		      irbw.mibs, rp.mibs);
	assert_true(rp.mibs > 1.1 * noop.mibs);
	assert_true(irbw.mibs > noop.mibs);
	assert_true(rp.st.write_amplification < noop.st.write_amplification);
}

static void test_disk_queue_depth(void **state)
{
	(void)state;
	/* block-level-optimization-io-path.txt: when the disk queue holds every outstanding request,
	 * the drive's own scheduling closes the gap between host schedulers (cheetah15k, 64 random
	 * 4 KiB reads outstanding). Tolerances: a gap of 50% or more at depth 1, under 2% at depth 64. */
	struct res n1 = run_depth("noop", 1), d1 = run_depth("deadline", 1);
	struct res n64 = run_depth("noop", 64), d64 = run_depth("deadline", 64);
	print_message("cheetah15k Q=64 randread: depth 1 noop %.0f IOPS deadline %.0f; depth 64 noop %.0f deadline %.0f\n",
		      iops(&n1), iops(&d1), iops(&n64), iops(&d64));
	assert_true(iops(&d1) > 1.5 * iops(&n1));
	assert_true(fabs(iops(&d64) - iops(&n64)) < 0.02 * iops(&n64));
	assert_true(iops(&n64) > 2.5 * iops(&n1)); /* and FCFS gains the most from depth */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fcfs_seven_percent),
		cmocka_unit_test(test_ssf_cscan),
		cmocka_unit_test(test_stf_gstf_wstf),
		cmocka_unit_test(test_wstf_overdue),
		cmocka_unit_test(test_ssd_bundles),
		cmocka_unit_test(test_irbw),
		cmocka_unit_test(test_disk_queue_depth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
