/* SPDX-License-Identifier: MIT */
/* Aggregate statistics: counts, response-time percentiles, seek histogram, FTL counters. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

void sweep__sim_count_seek(struct sim_counters *c, uint64_t dist)
{
	unsigned b = dist ? 64u - (unsigned)__builtin_clzll(dist) : 0;
	if (b >= SWEEP_SIM_SEEK_BUCKETS)
		b = SWEEP_SIM_SEEK_BUCKETS - 1;
	c->seek_hist[b]++;
	if (dist)
		c->seek_count++;
}

int sweep__stats_record(struct sim_stats *st, const struct sim_req *r)
{
	if (st->nresp == st->cap) {
		uint64_t ncap = st->cap ? st->cap * 2 : 4096;
		uint64_t *n = realloc(st->resp, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		st->resp = n;
		st->cap = ncap;
	}
	uint64_t resp = r->finish - r->r.time_ns;
	st->resp[st->nresp++] = resp;
	st->resp_sum += resp;
	if (resp > st->resp_max)
		st->resp_max = resp;
	if (!st->requests || r->r.time_ns < st->first_arrival)
		st->first_arrival = r->r.time_ns;
	if (r->finish > st->last_finish)
		st->last_finish = r->finish;
	st->requests++;
	if (r->r.op == SWEEP_SIM_FLUSH) {
		st->flushes++;
	} else if (r->r.op == SWEEP_SIM_WRITE) {
		st->writes++;
		st->bytes_written += r->r.length;
	} else {
		st->reads++;
		st->bytes_read += r->r.length;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static double pct_ms(const uint64_t *v, uint64_t n, double p)
{
	if (!n)
		return 0;
	uint64_t rank = (uint64_t)((p / 100.0) * (double)n + 0.999999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return (double)v[rank - 1] / 1e6;
}

void sweep__stats_fill(const struct sim_stats *st, const struct sim_counters *c, uint64_t busy_ns, uint64_t end_ns,
		       struct sweep_sim_stats *out)
{
	struct sweep_sim_stats s = { .size = sizeof(s) };
	s.requests = st->requests;
	s.reads = st->reads;
	s.writes = st->writes;
	s.bytes_read = st->bytes_read;
	s.bytes_written = st->bytes_written;
	s.first_arrival_ns = st->first_arrival;
	s.last_finish_ns = st->last_finish;
	s.busy_ns = busy_ns;
	s.transfer_ns = c->transfer_ns;
	s.flushes = st->flushes;
	s.end_ns = end_ns;
	/* the window ends when the device is done, not at the last acknowledgement (issue 32) */
	uint64_t last = st->last_finish > end_ns ? st->last_finish : end_ns;
	uint64_t span = st->requests && last > st->first_arrival ? last - st->first_arrival : 0;
	if (span) {
		s.utilization = (double)c->transfer_ns / (double)span;
		s.throughput_mib_s = (double)(st->bytes_read + st->bytes_written) / (double)MIB /
				     ((double)span / 1e9);
	}
	if (st->nresp) {
		s.resp_mean_ms = (double)(st->resp_sum / st->nresp) / 1e6;
		s.resp_max_ms = (double)st->resp_max / 1e6;
		uint64_t *v = malloc(st->nresp * sizeof(*v));
		if (v) {
			memcpy(v, st->resp, st->nresp * sizeof(*v));
			qsort(v, st->nresp, sizeof(*v), cmp_u64);
			s.resp_p50_ms = pct_ms(v, st->nresp, 50);
			s.resp_p90_ms = pct_ms(v, st->nresp, 90);
			s.resp_p99_ms = pct_ms(v, st->nresp, 99);
			free(v);
		}
	}
	s.seek_count = c->seek_count;
	memcpy(s.seek_hist, c->seek_hist, sizeof(s.seek_hist));
	s.cache_hits = c->cache_hits;
	/* the SSD counters are the same run of uint64_t in both structs */
	_Static_assert(offsetof(struct sweep_sim_stats, gc_pages_copied) -
				       offsetof(struct sweep_sim_stats, host_pages_written) ==
			       offsetof(struct sim_counters, gc_pages_copied) -
				       offsetof(struct sim_counters, host_pages_written),
		       "SSD counters out of step");
	memcpy(&s.host_pages_written, &c->host_pages_written,
	       offsetof(struct sim_counters, gc_pages_copied) + sizeof(uint64_t) -
		       offsetof(struct sim_counters, host_pages_written));
	if (c->host_pages_written)
		s.write_amplification = (double)c->flash_pages_written / (double)c->host_pages_written;
	*out = s;
}

void sweep__stats_fini(struct sim_stats *st)
{
	free(st->resp);
	memset(st, 0, sizeof(*st));
}
