/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <langinfo.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"

#define SAMPLE_PERIOD 0.5   /* seconds between the rate's samples */
#define MIN_INTERVAL 0.1    /* --progress=SECONDS: at least this (a line per count would flood a log and slow the run) */
#define MAX_INTERVAL 86400  /* and at most a day */

struct progress {
	struct progress_opts o;
	bool tty;      /* a line is redrawn in place (else full lines) */
	bool stdout_tty; /* standard output is a terminal (progress_clear_for) */
	double period; /* seconds between draws */
	const char *ge;
	uint64_t plan_files, plan_bytes, done_files, done_bytes, dirs, others;
	uint64_t scan_files, scan_bytes;
	int64_t unsized;
	uint64_t planning; /* progress_planning(): files of the batch being sorted, until something is done */
	bool walk_done;
	double start, last_draw;
	bool shown;    /* the terminal line is on screen and must be erased before other output */
	/* The rate: samples every SAMPLE_PERIOD, averaged with weights falling off as exp(-age / PROGRESS_TAU). */
	double s_time;
	uint64_t s_files, s_bytes;
	bool active;   /* something was done: the samples count from here (the walk before is not in the rate) */
	double last_read; /* the clock at the last count */
	double rate, file_rate, weight; /* weighted sums; weight corrects for the short history at the start */
	/* progress_first_name(): open addressing, (dev, ino) pairs, 0/0 empty */
	uint64_t *names;
	size_t names_cap, names_n;
};

static double mono_clock(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#if SWEEP_TEST_HOOKS
/*
 * SWEEP_TEST_CLOCK=step:S: a clock that starts at 0 and moves S seconds at
 * every reading, so a test sees periodic lines from a run of any length on
 * any machine, as many as the run counts, never as many as it took time.
 */
static double step_clock(void *ctx)
{
	static double t;
	double *step = ctx;

	t += *step;
	return t;
}

static void test_clock(struct progress_opts *o)
{
	static double step;
	const char *v = getenv("SWEEP_TEST_CLOCK");
	char *end;

	if (o->clock || !v || strncmp(v, "step:", 5))
		return;
	step = strtod(v + 5, &end);
	if (end == v + 5 || *end || !(step > 0))
		return;
	o->clock = step_clock;
	o->clock_ctx = &step;
}
#else
static void test_clock(struct progress_opts *o)
{
	(void)o;
}
#endif

int progress_parse(const char *arg, struct progress_opts *o)
{
	char *end;
	double v;

	o->on = true;
	o->interval = 0;
	if (!arg)
		return 0;
	errno = 0;
	v = strtod(arg, &end);
	/* Digits and a point only: no "inf", "nan", hex or exponent surprises. */
	if (!*arg || *end || errno || !(v >= MIN_INTERVAL) || v > MAX_INTERVAL ||
	    strspn(arg, "0123456789.") != strlen(arg)) {
		cli_msg("invalid --progress argument %s (seconds between lines, from %g to %d)", cli_quote(arg),
			MIN_INTERVAL, MAX_INTERVAL);
		return -EINVAL;
	}
	o->interval = v;
	return 0;
}

void progress_human(char *buf, size_t len, double v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	/* 1023.96 KiB would print as "1024.0 KiB": say 1.0 MiB, as the next unit does */
	if (u > 0 && v >= 1023.95 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f %s", v, units[u]);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
}

void progress_hms(char *buf, size_t len, double s)
{
	/* Under 0, or past what any run lasts (and what an unsigned holds): unknown. */
	if (!(s >= 0) || s > 99999.0 * 3600) {
		snprintf(buf, len, "--:--:--");
		return;
	}
	unsigned long t = (unsigned long)(s + 0.5);
	snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
}

static bool locale_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);

	return cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
}

struct progress *progress_new(const struct progress_opts *o)
{
	struct progress *p;
	bool tty;

	if (!o || !o->on)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->o = *o;
	if (!p->o.out)
		p->o.out = stderr;
	test_clock(&p->o);
	if (!p->o.clock)
		p->o.clock = mono_clock;
	tty = p->o.tty ? p->o.tty > 0 : isatty(fileno(p->o.out)) == 1;
	if (p->o.tty_only && !tty)
		return progress_free(p);
	/* A line drawn over itself only on a terminal, and only when no interval was asked for. */
	p->tty = tty && !(p->o.interval > 0);
	p->stdout_tty = isatty(STDOUT_FILENO) == 1;
	p->period = p->tty ? 1.0 / PROGRESS_HZ : p->o.interval > 0 ? p->o.interval : PROGRESS_LOG_INTERVAL;
	p->ge = (p->o.utf8 ? p->o.utf8 > 0 : locale_utf8()) ? "\xe2\x89\xa5" : ">=";
	p->start = p->o.clock(p->o.clock_ctx);
	p->last_draw = p->start;
	p->s_time = p->start;
	p->last_read = p->start;
	return p;
}

/* The columns a line takes (UTF-8: continuation bytes take none). */
static size_t columns(const char *s, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

/* The longest prefix of s[0..n) that fits in cols columns, cut between characters. */
static size_t fit(const char *s, size_t n, size_t cols)
{
	size_t c = 0, i = 0;

	for (; i < n; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && c++ == cols)
			break;
	}
	return i;
}

static unsigned term_width(const struct progress *p)
{
	struct winsize ws;

	if (p->o.width)
		return p->o.width;
	if (ioctl(fileno(p->o.out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* Take a sample of the rate when the last one is SAMPLE_PERIOD old. */
static void sample(struct progress *p, double t)
{
	double dt = t - p->s_time;

	if (!p->active || dt < SAMPLE_PERIOD)
		return;
	/*
	 * Each sample's rate goes in with the weight an exponential average
	 * of time constant PROGRESS_TAU gives dt seconds; the weight sum
	 * divides it out, so the first samples are not taken for a rate that
	 * climbs from 0.
	 */
	uint64_t db = p->done_bytes - p->s_bytes, df = p->done_files - p->s_files;
	double a = 1 - exp(-dt / PROGRESS_TAU);
	p->rate += a * ((double)db / dt - p->rate);
	p->file_rate += a * ((double)df / dt - p->file_rate);
	p->weight += a * (1 - p->weight);
	p->s_time = t;
	p->s_bytes = p->done_bytes;
	p->s_files = p->done_files;
}

static void view(const struct progress *p, struct progress_view *v, enum progress_kind kind, double t)
{
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->files = p->done_files;
	v->bytes = p->done_bytes;
	v->plan_files = p->plan_files > p->done_files ? p->plan_files : p->done_files;
	v->plan_bytes = p->plan_bytes > p->done_bytes ? p->plan_bytes : p->done_bytes;
	v->dirs = p->dirs;
	v->others = p->others;
	v->scan_files = p->scan_files || p->scan_bytes ? p->scan_files : v->plan_files;
	v->scan_bytes = p->scan_files || p->scan_bytes ? p->scan_bytes : v->plan_bytes;
	v->open_total = !p->walk_done || p->unsized > 0;
	v->scanning = !p->walk_done && !p->done_files && !p->done_bytes;
	v->planning = p->planning;
	v->elapsed = t - p->start;
	v->rate = p->weight > 0 ? p->rate / p->weight : 0;
	v->file_rate = p->weight > 0 ? p->file_rate / p->weight : 0;
	v->eta = -1;
	if (v->plan_bytes > v->bytes && v->rate > 0)
		v->eta = (double)(v->plan_bytes - v->bytes) / v->rate;
	else if (v->plan_bytes == v->bytes && v->plan_files > v->files && v->file_rate > 0)
		v->eta = (double)(v->plan_files - v->files) / v->file_rate;
	else if (v->plan_bytes == v->bytes && v->plan_files == v->files)
		v->eta = 0;
	v->ge = p->ge;
}

/* The line of the header, for any kind. */
static int default_format(char *buf, size_t len, const struct progress_view *v, void *ctx)
{
	char done[32], total[32], rate[32], eta[32], el[32];
	const char *ge = v->open_total ? v->ge : "";
	int n = 0;

	(void)ctx;
	progress_human(done, sizeof(done), (double)v->bytes);
	progress_human(total, sizeof(total), (double)v->plan_bytes);
	progress_human(rate, sizeof(rate), v->rate);
	progress_hms(el, sizeof(el), v->elapsed);
	if (v->kind == PROGRESS_SUMMARY) {
		char avg[32];
		progress_human(avg, sizeof(avg), v->elapsed > 0 ? (double)v->bytes / v->elapsed : 0);
		/* dirs and others when there were any (sweep-sync counts neither) */
		n = snprintf(buf, len, "%s: %s: ", cli_prog(), v->ok ? "done" : "stopped");
		if (v->dirs && n >= 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, "%llu dirs, ", (unsigned long long)v->dirs);
		if (n >= 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, "%llu files, ", (unsigned long long)v->files);
		if (v->others && n >= 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, "%llu others, ", (unsigned long long)v->others);
		if (n >= 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, "%llu bytes (%s) in %s, %s/s", (unsigned long long)v->bytes,
				      done, el, avg);
		return n;
	}
	if (v->kind == PROGRESS_LINE)
		n = snprintf(buf, len, "%s: [%s] ", cli_prog(), el);
	else
		n = snprintf(buf, len, "%s: ", cli_prog());
	if (n < 0 || (size_t)n >= len)
		return n;
	if (v->planning) {
		n += snprintf(buf + n, len - (size_t)n, "planning %llu files", (unsigned long long)v->planning);
		return n;
	}
	if (v->scanning) {
		char scanned[32];
		n += snprintf(buf + n, len - (size_t)n, "scanning: %llu dirs, %llu files", (unsigned long long)v->dirs,
			      (unsigned long long)v->scan_files);
		/* bytes only when the walk learns them (not when it leaves files unstated) */
		progress_human(scanned, sizeof(scanned), (double)v->scan_bytes);
		if (v->scan_bytes && n >= 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, ", %s", scanned);
		return n;
	}
	progress_hms(eta, sizeof(eta), v->eta);
	n += snprintf(buf + n, len - (size_t)n, "%llu/%s%llu files, %s/%s%s", (unsigned long long)v->files, ge,
		      (unsigned long long)v->plan_files, done, ge, total);
	/* A share of a total that can grow means nothing: none shown then. */
	if (!v->open_total && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " (%u%%)",
			      v->plan_bytes ? (unsigned)(100.0 * (double)v->bytes / (double)v->plan_bytes)
			      : v->plan_files ? (unsigned)(100.0 * (double)v->files / (double)v->plan_files) : 100);
	if (n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", %s/s, ETA %s%s", rate, v->eta >= 0 ? ge : "", eta);
	return n;
}

static void emit(struct progress *p, enum progress_kind kind, double t, bool ok)
{
	struct progress_view v;
	char buf[512];
	int n;

	view(p, &v, kind, t);
	v.ok = ok;
	n = (p->o.format ? p->o.format : default_format)(buf, sizeof(buf), &v, p->o.format ? p->o.format_ctx : NULL);
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
	/* stdout first: a listing on stdout and this on stderr may share a terminal or a log */
	fflush(stdout);
	if (kind == PROGRESS_REDRAW) {
		unsigned w = term_width(p);
		/* One column short of the width: a line that wraps cannot be drawn over by "\r". */
		if (w > 1 && columns(buf, len) > w - 1)
			len = fit(buf, len, w - 1);
		fprintf(p->o.out, "\r%.*s\033[K", (int)len, buf);
		p->shown = true;
	} else {
		if (p->shown)
			fputs("\r\033[K", p->o.out);
		p->shown = false;
		fprintf(p->o.out, "%.*s\n", (int)len, buf);
	}
	fflush(p->o.out);
	p->last_draw = t;
}

/* After a count: sample the rate, and draw when the last draw is a period old. */
static void tick(struct progress *p)
{
	double t = p->o.clock(p->o.clock_ctx);

	p->last_read = t;
	sample(p, t);
	/* Also after progress_clear(): a run that prints a message per file must not redraw per file. */
	if (t - p->last_draw >= p->period)
		emit(p, p->tty ? PROGRESS_REDRAW : PROGRESS_LINE, t, true);
}

void progress_dirs(struct progress *p, uint64_t n)
{
	if (!p)
		return;
	p->dirs += n;
	tick(p);
}

void progress_others(struct progress *p, uint64_t n)
{
	if (!p)
		return;
	p->others += n;
	tick(p);
}

void progress_plan(struct progress *p, uint64_t files, uint64_t bytes)
{
	if (!p)
		return;
	p->plan_files += files;
	p->plan_bytes += bytes;
	tick(p);
}

void progress_scanned(struct progress *p, uint64_t files, uint64_t bytes)
{
	if (!p)
		return;
	p->scan_files += files;
	p->scan_bytes += bytes;
	tick(p);
}

static uint64_t plus(uint64_t v, int64_t d)
{
	if (d < 0 && (uint64_t)-(d + 1) >= v)
		return 0;
	return v + (uint64_t)d;
}

void progress_replan(struct progress *p, int64_t files, int64_t bytes)
{
	if (!p)
		return;
	p->plan_files = plus(p->plan_files, files);
	p->plan_bytes = plus(p->plan_bytes, bytes);
}

void progress_unsized(struct progress *p, int64_t n)
{
	if (p)
		p->unsized += n;
}

void progress_planning(struct progress *p, uint64_t files)
{
	if (!p || !files)
		return;
	p->planning = files;
	/* Shown at once, in either form: nothing else is drawn until the batch is sorted. */
	double t = p->o.clock(p->o.clock_ctx);
	p->last_read = t;
	emit(p, p->tty ? PROGRESS_REDRAW : PROGRESS_LINE, t, true);
}

void progress_walk_done(struct progress *p)
{
	if (p)
		p->walk_done = true;
}

void progress_done_all(struct progress *p)
{
	if (!p)
		return;
	p->done_files = p->plan_files > p->done_files ? p->plan_files : p->done_files;
	p->done_bytes = p->plan_bytes > p->done_bytes ? p->plan_bytes : p->done_bytes;
}

void progress_add(struct progress *p, uint64_t files, uint64_t bytes)
{
	if (!p)
		return;
	if (!p->active && (files || bytes)) {
		/*
		 * The first thing done: the rate counts from the last count
		 * before it (the walk's), the time this work can have taken,
		 * not from the start, nor from the walk's last sample.
		 */
		p->active = true;
		p->s_time = p->last_read;
		p->s_bytes = p->done_bytes;
		p->s_files = p->done_files;
	}
	if (files || bytes)
		p->planning = 0; /* the batch is being read: the usual line again */
	p->done_files += files;
	p->done_bytes += bytes;
	tick(p);
}

void progress_copy_done(struct progress *p, const struct sweep_copy_done *d)
{
	uint64_t size;

	if (!p)
		return;
	size = d->st->size;
	switch (d->how) {
	case SWEEP_COPY_HOW_DATA:
	case SWEEP_COPY_HOW_CLONE:
	case SWEEP_COPY_HOW_RANGE:
		/* A file counts whole once done: its holes were planned but never written. */
		progress_add(p, 1, size > d->bytes ? size - d->bytes : 0);
		break;
	case SWEEP_COPY_HOW_LINK:
		/* Another name of a file copied already (never planned): a file, no data. */
		if (S_ISREG(d->st->mode)) {
			progress_plan(p, 1, 0);
			progress_add(p, 1, 0);
		} else {
			progress_others(p, 1);
		}
		break;
	case SWEEP_COPY_HOW_DIR:
		progress_dirs(p, 1);
		break;
	case SWEEP_COPY_HOW_SYMLINK:
	case SWEEP_COPY_HOW_SPECIAL:
		progress_others(p, 1);
		break;
	case SWEEP_COPY_HOW_SKIPPED:
		break;
	}
}

void progress_clear(struct progress *p)
{
	if (!p || !p->shown)
		return;
	fputs("\r\033[K", p->o.out);
	fflush(p->o.out);
	p->shown = false;
}

void progress_clear_for(struct progress *p, FILE *f)
{
	if (p && (f == p->o.out || (f == stdout && p->stdout_tty)))
		progress_clear(p);
}

struct progress *progress_free(struct progress *p)
{
	if (p) {
		progress_clear(p);
		free(p->names);
		free(p);
	}
	return NULL;
}

struct progress *progress_finish(struct progress *p, bool ok)
{
	if (!p)
		return NULL;
	emit(p, PROGRESS_SUMMARY, p->o.clock(p->o.clock_ctx), ok);
	return progress_free(p);
}

static size_t name_slot(const uint64_t *t, size_t cap, uint64_t dev, uint64_t ino)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^ (ino * 0xc2b2ae3d27d4eb4full);
	size_t i = (size_t)(h ^ (h >> 29)) & (cap - 1);

	while ((t[2 * i] || t[2 * i + 1]) && (t[2 * i] != dev || t[2 * i + 1] != ino))
		i = (i + 1) & (cap - 1);
	return i;
}

bool progress_first_name(struct progress *p, uint64_t dev, uint64_t ino)
{
	size_t i;

	if (!p || (!dev && !ino))
		return true;
	if (2 * (p->names_n + 1) > p->names_cap) {
		size_t cap = p->names_cap ? 2 * p->names_cap : 256;
		uint64_t *t = calloc(cap, 2 * sizeof(*t));
		if (!t)
			return true;
		for (size_t k = 0; k < p->names_cap; k++)
			if (p->names[2 * k] || p->names[2 * k + 1]) {
				size_t j = name_slot(t, cap, p->names[2 * k], p->names[2 * k + 1]);
				t[2 * j] = p->names[2 * k];
				t[2 * j + 1] = p->names[2 * k + 1];
			}
		free(p->names);
		p->names = t;
		p->names_cap = cap;
	}
	i = name_slot(p->names, p->names_cap, dev, ino);
	if (p->names[2 * i] == dev && p->names[2 * i + 1] == ino)
		return false;
	p->names[2 * i] = dev;
	p->names[2 * i + 1] = ino;
	p->names_n++;
	return true;
}
