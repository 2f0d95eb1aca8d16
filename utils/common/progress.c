/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"

struct progress {
	uint64_t plan_files, plan_bytes;
	uint64_t done_files, done_bytes;
	double start, last_draw;
	bool shown; /* a line is on screen and must be erased before other output */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "812 B", "1.5 KiB", "3.9 GiB": short enough that the line fits 80 columns. */
static void human(char *buf, size_t len, double v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f %s", v, units[u]);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
}

struct progress *progress_new(bool want)
{
	struct progress *p;

	if (!want || !isatty(STDERR_FILENO))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->start = now();
	p->last_draw = p->start;
	return p;
}

struct progress *progress_free(struct progress *p)
{
	if (p) {
		progress_clear(p);
		free(p);
	}
	return NULL;
}

void progress_plan(struct progress *p, uint64_t files, uint64_t bytes)
{
	if (!p)
		return;
	p->plan_files += files;
	p->plan_bytes += bytes;
}

void progress_draw(struct progress *p)
{
	char done[32], total[32], rate[32];
	double t, elapsed;
	unsigned pct;

	if (!p)
		return;
	t = now();
	elapsed = t - p->start;
	human(done, sizeof(done), (double)p->done_bytes);
	human(total, sizeof(total), (double)p->plan_bytes);
	human(rate, sizeof(rate), elapsed > 0 ? (double)p->done_bytes / elapsed : 0);
	/* Bytes dominate the run time, so the percentage follows bytes. */
	pct = p->plan_bytes ? (unsigned)(100.0 * (double)p->done_bytes / (double)p->plan_bytes) : 0;
	if (pct > 100)
		pct = 100;
	fflush(stdout);
	fprintf(stderr, "\r%s: %llu/%llu files, %s/%s (%u%%), %s/s\033[K", cli_prog(),
		(unsigned long long)p->done_files, (unsigned long long)p->plan_files, done, total,
		pct, rate);
	fflush(stderr);
	p->shown = true;
	p->last_draw = t;
}

void progress_add(struct progress *p, uint64_t files, uint64_t bytes)
{
	if (!p)
		return;
	p->done_files += files;
	p->done_bytes += bytes;
	/* Also after progress_clear(): a run that prints a message per file must
	 * not turn into a redraw per file. Runs shorter than one period never draw. */
	if (now() - p->last_draw >= 1.0 / PROGRESS_HZ)
		progress_draw(p);
}

void progress_clear(struct progress *p)
{
	if (!p || !p->shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->shown = false;
}
