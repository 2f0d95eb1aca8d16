/* SPDX-License-Identifier: MIT */
/*
 * The model against the real clock. Model time is real time since the
 * start times the speed factor. A request enters the model when it
 * arrives (sweep_sim_submit at the model's present), so requests that
 * arrive together queue in the model's host queue and the drive's tagged
 * queue, which reorders them as NCQ does; one thread sleeps until the
 * real time of the model's next event, moves the model's clock there
 * (sweep_sim_advance) and answers what completed (sweep_sim_poll). An
 * answer is never early: it waits for the model's time and for the
 * backing file, whichever is later.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "emu.h"

uint64_t emu_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t model_now(const struct emu *e)
{
	uint64_t r = emu_now_ns();
	return r > e->t0 ? (uint64_t)((double)(r - e->t0) * e->speed) : 0;
}

/* The real time of model time m, rounded up: waiting until then never answers early. */
static uint64_t real_at(const struct emu *e, uint64_t m)
{
	double d = (double)m / e->speed;
	uint64_t ns = (uint64_t)d;
	return e->t0 + ns + ((double)ns < d);
}

/* ---- answers ---- */

static void reply(struct emu_req *r)
{
	int err = r->done < 0 ? (int)-r->done : 0;
	if (err)
		fuse_reply_err(r->req, err);
	else if (r->op == EMU_READ)
		fuse_reply_buf(r->req, r->buf, (size_t)r->done);
	else if (r->op == EMU_WRITE)
		fuse_reply_write(r->req, (size_t)r->done);
	else
		fuse_reply_err(r->req, 0);
	free(r->buf);
	free(r);
}

void emu_part_done(struct emu *e, struct emu_req *r, bool model)
{
	if (__atomic_sub_fetch(&r->parts, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	uint64_t now = emu_now_ns();
	pthread_mutex_lock(&e->lock);
	if (r->done < 0)
		e->st.errors++;
	if (r->op != EMU_FLUSH && !model)
		e->st.late_backing++; /* the backing file ended after the model's time */
	else if (now > r->due_ns) {
		uint64_t lag = now - r->due_ns;
		e->st.lag_sum_ns += lag;
		if (lag > e->st.lag_max_ns)
			e->st.lag_max_ns = lag;
		if (lag >= 1000000)
			e->st.lagged++;
	}
	pthread_mutex_unlock(&e->lock);
	reply(r);
}

/* ---- submissions ---- */

int emu_submit(struct emu *e, struct emu_req *r)
{
	static const uint8_t ops[] = { [EMU_READ] = SWEEP_SIM_READ, [EMU_WRITE] = SWEEP_SIM_WRITE,
				       [EMU_FLUSH] = SWEEP_SIM_FLUSH };
	pthread_mutex_lock(&e->lock);
	uint64_t now = model_now(e), sim_now = sweep_sim_now(e->sim);
	struct sweep_sim_request q = {
		.time_ns = now > sim_now ? now : sim_now,
		.offset = r->offset,
		.length = r->len,
		.id = (uint64_t)(uintptr_t)r,
		.op = ops[r->op],
	};
	int err = sweep_sim_submit(e->sim, &q);
	if (!err) {
		if (r->op == EMU_WRITE) {
			e->st.writes++;
			e->st.write_bytes += r->len;
		} else if (r->op == EMU_READ) {
			e->st.reads++;
			e->st.read_bytes += r->len;
		} else {
			e->st.flushes++;
		}
		pthread_cond_signal(&e->wake); /* its completion may be the next event */
	}
	pthread_mutex_unlock(&e->lock);
	return err;
}

/* ---- the clock thread ---- */

#define POLL_BATCH 64

static void *clock_main(void *arg)
{
	struct emu *e = arg;
	struct sweep_sim_completion c[POLL_BATCH];
	struct emu_req *done[POLL_BATCH];
	/* wake on time: the default 50 us of timer slack would be 200 us of model time at 4x */
	prctl(PR_SET_TIMERSLACK, 1UL);
	pthread_mutex_lock(&e->lock);
	while (!e->stopping) {
		uint64_t t;
		if (sweep_sim_next_event(e->sim, &t) <= 0) {
			pthread_cond_wait(&e->wake, &e->lock);
			continue;
		}
		uint64_t now = model_now(e);
		if (t > now) {
			uint64_t at = real_at(e, t);
			struct timespec ts = { .tv_sec = (time_t)(at / 1000000000ull), .tv_nsec = (long)(at % 1000000000ull) };
			pthread_cond_timedwait(&e->wake, &e->lock, &ts);
			continue;
		}
		int n = sweep_sim_advance(e->sim, now);
		if (n < 0) {
			/* only past 2^63 ns of model time: nothing sensible is left to do */
			fprintf(stderr, "emudisk: the model stopped: %s\n", strerror(-n));
			abort();
		}
		while ((n = sweep_sim_poll(e->sim, c, POLL_BATCH)) > 0) {
			for (int i = 0; i < n; i++) {
				done[i] = (struct emu_req *)(uintptr_t)c[i].id;
				done[i]->due_ns = real_at(e, c[i].finish_ns);
			}
			pthread_mutex_unlock(&e->lock);
			for (int i = 0; i < n; i++)
				emu_part_done(e, done[i], true);
			pthread_mutex_lock(&e->lock);
		}
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

int emu_clock_start(struct emu *e)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int err = pthread_cond_init(&e->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		return -err;
	pthread_mutex_init(&e->lock, NULL);
	e->t0 = emu_now_ns();
	err = pthread_create(&e->thread, NULL, clock_main, e);
	return -err;
}

void emu_clock_stop(struct emu *e)
{
	pthread_mutex_lock(&e->lock);
	e->stopping = true;
	pthread_cond_signal(&e->wake);
	pthread_mutex_unlock(&e->lock);
	pthread_join(e->thread, NULL);
	/* what the model still holds (the session ended under it): answered into the void, freed */
	struct sweep_sim_completion c;
	uint64_t t;
	while (sweep_sim_next_event(e->sim, &t) > 0 && sweep_sim_advance(e->sim, t) >= 0)
		while (sweep_sim_poll(e->sim, &c, 1) == 1)
			emu_part_done(e, (struct emu_req *)(uintptr_t)c.id, true);
}
