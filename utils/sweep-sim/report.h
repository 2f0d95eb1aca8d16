/* SPDX-License-Identifier: MIT */
/* sweep-sim: one run's result, printed as a table row or a JSON object, and plotted. */
#ifndef SWEEP_SIM_REPORT_H
#define SWEEP_SIM_REPORT_H

#include <stdio.h>
#include <sweep/sim.h>

/* What happened to one request, kept for the plots. */
struct sample {
	uint64_t start_ns, finish_ns, response_ns, position;
	uint8_t op;
};

struct result {
	char label[96];    /* "device/sched" */
	const char *workload; /* pattern name or trace path */
	const char *mode;  /* "open" or "closed" */
	unsigned host_queue; /* closed: outstanding requests */
	uint64_t seed;
	struct sweep_sim_info info;
	struct sweep_sim_stats st;
	struct sample *s;
	size_t ns, cap;
};

void report_table_header(FILE *f);
void report_table_row(FILE *f, const struct result *r);
void report_json(FILE *f, const struct result *r, const char *indent);

/* SVG plots; 0 or -errno. */
int svg_head_position(const char *path, const struct result *const *runs, size_t nruns);
int svg_response_cdf(const char *path, const struct result *const *runs, size_t nruns);

#endif
