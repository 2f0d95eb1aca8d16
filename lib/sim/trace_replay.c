/* SPDX-License-Identifier: MIT */
/*
 * Replaying a trace. OPEN and CLOSED go through sweep_sim_run; DEPEND keeps
 * a capture's dependency structure: a request issued right after another
 * completed (GNU tar reading one file after the other) is issued in the
 * model when that request completes in the model, plus the capture's own
 * gap between the two (the program's time, not the device's). So a trace
 * recorded on a fast device does not pile up in the host queue when it is
 * replayed on a slow one, and a reader at depth 1 stays at depth 1.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

static int src_trace(void *ctx, struct sweep_sim_request *r)
{
	return sweep_sim_trace_next(ctx, r);
}

/* kids[kid_at[i] .. kid_at[i + 1]): the requests i releases, in trace order. */
static int build_kids(struct sweep_sim_trace *t)
{
	if (t->kid_at)
		return 0;
	uint64_t *at = calloc(t->n + 1, sizeof(*at)), *kids = malloc((t->n ? t->n : 1) * sizeof(*kids));
	if (!at || !kids) {
		free(at);
		free(kids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].after != NONE64)
			at[t->v[i].after + 1]++;
	for (size_t i = 0; i < t->n; i++)
		at[i + 1] += at[i];
	uint64_t *fill = malloc((t->n ? t->n : 1) * sizeof(*fill));
	if (!fill) {
		free(at);
		free(kids);
		return -ENOMEM;
	}
	memcpy(fill, at, t->n * sizeof(*fill));
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].after != NONE64)
			kids[fill[t->v[i].after]++] = i;
	free(fill);
	t->kid_at = at;
	t->kids = kids;
	return 0;
}

static int64_t replay_depend(struct sweep_sim *s, struct sweep_sim_trace *t, const struct sweep_sim_run_options *o)
{
	int err = build_kids(t);
	if (err)
		return err;
	uint64_t base = sweep_sim_now(s), ev_t = 0;
	size_t root = 0;
	int64_t done = 0;
	struct sweep_sim_completion c[64];
	for (;;) {
		/* the requests that waited for nothing arrive at their own time */
		int ev = sweep_sim_next_event(s, &ev_t);
		for (; root < t->n; root++) {
			struct sweep_sim_request r = t->v[root].r;
			if (t->v[root].after != NONE64)
				continue;
			if (r.time_ns > SIM_TIME_MAX - base)
				return -EOVERFLOW;
			r.time_ns += base;
			if (ev && r.time_ns > ev_t)
				break;
			if (r.time_ns < sweep_sim_now(s))
				r.time_ns = sweep_sim_now(s);
			if ((err = sweep_sim_submit(s, &r)) < 0)
				return err;
			ev = sweep_sim_next_event(s, &ev_t);
		}
		if (ev <= 0)
			break;
		if ((err = sweep_sim_advance(s, ev_t)) < 0)
			return err;
		int n;
		while ((n = sweep_sim_poll(s, c, 64)) > 0) {
			for (int i = 0; i < n; i++) {
				if (o->on_complete)
					o->on_complete(o->ctx, &c[i]);
				if (c[i].id >= t->n)
					continue;
				/* its completion releases the requests that waited for it */
				for (uint64_t k = t->kid_at[c[i].id]; k < t->kid_at[c[i].id + 1]; k++) {
					struct sweep_sim_request r = t->v[t->kids[k]].r;
					uint64_t think = t->v[t->kids[k]].think;
					if (think > SIM_TIME_MAX - c[i].finish_ns)
						return -EOVERFLOW; /* past the model's clock (sim_internal.h) */
					r.time_ns = c[i].finish_ns + think;
					if ((err = sweep_sim_submit(s, &r)) < 0)
						return err;
				}
			}
			done += n;
		}
	}
	return done;
}

SWEEP_EXPORT int64_t sweep_sim_trace_replay(struct sweep_sim *s, struct sweep_sim_trace *t,
					    const struct sweep_sim_run_options *opts)
{
	struct sweep_sim_run_options o;
	if (!s || !t || !opts)
		return -EINVAL;
	int err = sweep__opts_copy(&o, sizeof(o), opts, SIM_MIN);
	if (err)
		return err;
	t->pos = 0;
	if (o.mode == SWEEP_SIM_DEPEND)
		return replay_depend(s, t, &o);
	return sweep_sim_run(s, src_trace, t, &o);
}
