/* SPDX-License-Identifier: MIT */
/* Text and JSON output of a run. Numbers only from the model: no wall-clock time, so runs repeat byte for byte. */
#include <inttypes.h>

#include "report.h"

void report_table_header(FILE *f)
{
	fprintf(f, "%-26s %9s %9s %6s %9s %9s %9s %9s %10s %8s %s\n", "device/sched", "requests", "busy_s",
		"util%", "MiB/s", "mean_ms", "p99_ms", "max_ms", "seeks", "WA", "merges s/p/f");
}

void report_table_row(FILE *f, const struct result *r)
{
	const struct sweep_sim_stats *s = &r->st;
	fprintf(f, "%-26s %9" PRIu64 " %9.3f %6.2f %9.3f %9.3f %9.3f %9.3f %10" PRIu64, r->label, s->requests,
		(double)s->busy_ns / 1e9, s->utilization * 100, s->throughput_mib_s, s->resp_mean_ms, s->resp_p99_ms,
		s->resp_max_ms, s->seek_count);
	if (r->info.kind == SWEEP_SIM_SSD)
		fprintf(f, " %8.3f %" PRIu64 "/%" PRIu64 "/%" PRIu64 "\n", s->write_amplification, s->merges_switch,
			s->merges_partial, s->merges_full);
	else
		fprintf(f, " %8s %s\n", "-", "-");
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void report_json(FILE *f, const struct result *r, const char *in)
{
	const struct sweep_sim_stats *s = &r->st;
	uint64_t last = s->last_finish_ns > s->end_ns ? s->last_finish_ns : s->end_ns; /* destages included */
	double span = s->requests ? (double)(last - s->first_arrival_ns) / 1e9 : 0.0;
	fprintf(f, "%s{\n%s  \"device\": ", in, in);
	json_str(f, r->info.device);
	fprintf(f, ",\n%s  \"sched\": ", in);
	json_str(f, r->info.sched);
	fprintf(f, ",\n%s  \"workload\": ", in);
	json_str(f, r->workload);
	fprintf(f, ",\n%s  \"mode\": ", in);
	json_str(f, r->mode);
	fprintf(f, ",\n%s  \"host_queue\": %u,\n", in, r->host_queue);
	fprintf(f, "%s  \"device_queue\": %u,\n", in, r->info.queue_depth);
	fprintf(f, "%s  \"seed\": %" PRIu64 ",\n", in, r->seed);
	fprintf(f, "%s  \"requests\": %" PRIu64 ",\n", in, s->requests);
	fprintf(f, "%s  \"reads\": %" PRIu64 ",\n", in, s->reads);
	fprintf(f, "%s  \"writes\": %" PRIu64 ",\n", in, s->writes);
	fprintf(f, "%s  \"flushes\": %" PRIu64 ",\n", in, s->flushes);
	fprintf(f, "%s  \"bytes\": %" PRIu64 ",\n", in, s->bytes_read + s->bytes_written);
	fprintf(f, "%s  \"elapsed_s\": %.9g,\n", in, span);
	fprintf(f, "%s  \"busy_s\": %.9g,\n", in, (double)s->busy_ns / 1e9);
	fprintf(f, "%s  \"utilization\": %.9g,\n", in, s->utilization);
	fprintf(f, "%s  \"throughput_mib_s\": %.9g,\n", in, s->throughput_mib_s);
	fprintf(f, "%s  \"iops\": %.9g,\n", in, span > 0 ? (double)s->requests / span : 0.0);
	fprintf(f, "%s  \"response_ms\": {\"mean\": %.6f, \"p50\": %.6f, \"p90\": %.6f, \"p99\": %.6f, \"max\": %.6f},\n",
		in, s->resp_mean_ms, s->resp_p50_ms, s->resp_p90_ms, s->resp_p99_ms, s->resp_max_ms);
	fprintf(f, "%s  \"seek_count\": %" PRIu64 ",\n", in, s->seek_count);
	fprintf(f, "%s  \"seek_distance_histogram\": [", in);
	const char *sep = "";
	for (unsigned b = 0; b < SWEEP_SIM_SEEK_BUCKETS; b++) {
		if (!s->seek_hist[b])
			continue;
		uint64_t lo = b ? 1ull << (b - 1) : 0, hi = b ? (1ull << b) - 1 : 0;
		if (b == SWEEP_SIM_SEEK_BUCKETS - 1)
			hi = UINT64_MAX;
		fprintf(f, "%s{\"from\": %" PRIu64 ", \"to\": %" PRIu64 ", \"count\": %" PRIu64 "}", sep, lo, hi,
			s->seek_hist[b]);
		sep = ", ";
	}
	fprintf(f, "],\n");
	fprintf(f, "%s  \"cache_hits\": %" PRIu64 ",\n", in, s->cache_hits);
	fprintf(f, "%s  \"host_merges\": %" PRIu64, in, s->host_merges);
	if (r->info.kind == SWEEP_SIM_SSD) {
		fprintf(f, ",\n%s  \"write_amplification\": %.9g,\n", in, s->write_amplification);
		fprintf(f, "%s  \"erases\": %" PRIu64 ",\n", in, s->erases);
		fprintf(f, "%s  \"merges\": {\"switch\": %" PRIu64 ", \"partial\": %" PRIu64 ", \"full\": %" PRIu64 "},\n",
			in, s->merges_switch, s->merges_partial, s->merges_full);
		fprintf(f, "%s  \"gc\": {\"runs\": %" PRIu64 ", \"pages_copied\": %" PRIu64 "},\n", in, s->gc_runs,
			s->gc_pages_copied);
		fprintf(f, "%s  \"host_pages_written\": %" PRIu64 ",\n", in, s->host_pages_written);
		fprintf(f, "%s  \"flash_pages_written\": %" PRIu64, in, s->flash_pages_written);
	}
	fprintf(f, "\n%s}", in);
}
