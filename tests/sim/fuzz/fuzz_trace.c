/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for one trace format (FUZZ_FORMAT, set at build time):
 * the input is read as a trace of that format, as sweep_sim_trace_open
 * reads a file, and whatever loads is replayed through a small model in
 * the trace's own mode, so that the values a reader lets through are
 * exercised by the model too. Built with clang -fsanitize=fuzzer,address,
 * undefined by tests/sim/meson.build; see tests/sim/README.
 */
#include <stdint.h>
#include <stdio.h>

#include "sim_internal.h"

#ifndef FUZZ_FORMAT
#error "build with -DFUZZ_FORMAT=\"tracefs\" (or another format)"
#endif

/* Stop after this many completions: a fuzz input may hold thousands of requests. */
#define MAX_COMPLETIONS 256

struct budget {
	unsigned left;
};

static void on_complete(void *ctx, const struct sweep_sim_completion *c)
{
	struct budget *b = ctx;
	if (c->finish_ns < c->arrival_ns)
		__builtin_trap(); /* the model must never finish a request before it arrived */
	if (b->left)
		b->left--;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *fp = fmemopen((void *)data, size, "r");
	if (!fp)
		return 0;
	/* a small device, so that capacity checks and wrapping are reached */
	struct sweep_sim_trace_options o = { .size = sizeof(o), .format = FUZZ_FORMAT, .capacity = 64ull << 20,
					     .max_requests = 4096, .flags = size % 2 ? SWEEP_SIM_TRACE_NO_WRAP : 0 };
	struct sweep_sim_trace *t = NULL;
	struct sweep_sim_trace_error e = { .size = sizeof(e) };
	int err = sweep__sim_trace_read(fp, &o, &t, &e);
	fclose(fp);
	if (err) {
		if (t || e.message[sizeof(e.message) - 1])
			__builtin_trap(); /* failure leaves the trace untouched, the message terminated */
		return 0;
	}
	struct sweep_sim_trace_info ti = { .size = sizeof(ti) };
	if (sweep_sim_trace_get_info(t, &ti) || !ti.requests || ti.requests > 4096)
		__builtin_trap();
	if (ti.requests <= MAX_COMPLETIONS) {
		struct sweep_sim_hdd_params hp = { .size = sizeof(hp) };
		sweep_sim_preset_hdd("cheetah15k", &hp);
		hp.cylinders = 64; /* 64 cylinders: about 150 MiB, a small position index */
		const char *sched[] = { "stf", "wstf", "deadline", "noop" };
		struct sweep_sim_options so = { .size = sizeof(so), .hdd = &hp, .sched = sched[size % 4] };
		struct sweep_sim *sim;
		if (sweep_sim_new(&so, &sim) == 0) {
			struct budget b = { MAX_COMPLETIONS };
			struct sweep_sim_run_options ro = { .size = sizeof(ro), .on_complete = on_complete, .ctx = &b,
							    .depth = ti.depth,
							    .mode = ti.dependent ? SWEEP_SIM_DEPEND
								    : ti.timed   ? SWEEP_SIM_OPEN
										 : SWEEP_SIM_CLOSED };
			int64_t n = sweep_sim_trace_replay(sim, t, &ro);
			if (n != (int64_t)ti.requests)
				__builtin_trap(); /* every request of a loaded trace completes */
			sweep_sim_free(sim);
		}
	}
	sweep_sim_trace_free(t);
	return 0;
}
