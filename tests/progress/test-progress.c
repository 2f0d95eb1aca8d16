/*
 * The progress display (utils/common/progress.c) driven by a synthetic
 * timeline: the clock is the test's own, so an hour of copying takes no
 * time, and nothing here depends on how fast the machine is.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"
#include "progress.h"

#define MiB (1024.0 * 1024.0)

struct run {
	double t;       /* the clock */
	char *buf;      /* what was written */
	size_t len;
	FILE *out;
	struct progress *p;
};

static double fake_clock(void *ctx)
{
	return ((struct run *)ctx)->t;
}

/* A display with o's settings, writing to memory, on the run's clock. */
static void run_open(struct run *r, struct progress_opts o)
{
	memset(r, 0, sizeof(*r));
	r->out = open_memstream(&r->buf, &r->len);
	assert_non_null(r->out);
	o.on = true;
	o.out = r->out;
	o.clock = fake_clock;
	o.clock_ctx = r;
	r->p = progress_new(&o);
	assert_non_null(r->p);
}

static void run_start(struct run *r, int tty, double interval, unsigned width)
{
	run_open(r, (struct progress_opts){ .interval = interval, .tty = tty, .width = width, .utf8 = -1 });
}

static void run_end(struct run *r)
{
	fclose(r->out);
	free(r->buf);
}

/* The last line (ok: done, else stopped) holds want; the run ends. */
static void finish_with(struct run *r, bool ok, const char *want)
{
	r->p = progress_finish(r->p, ok);
	fflush(r->out);
	if (!strstr(r->buf, want))
		fail_msg("no '%s' in:\n%s", want, r->buf);
	run_end(r);
}

/* Lines of the output, "\r"-drawn pieces split too; the array and the copy are the caller's to free. */
static char **lines_of(const char *text, size_t *n, char **copy)
{
	char *s = strdup(text), *save = NULL, **v = NULL;
	size_t cap = 0;

	*n = 0;
	for (char *l = strtok_r(s, "\n\r", &save); l; l = strtok_r(NULL, "\n\r", &save)) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			v = realloc(v, cap * sizeof(*v));
			assert_non_null(v);
		}
		v[(*n)++] = l;
	}
	*copy = s;
	return v;
}

/* "h:mm:ss" in s (after prefix) as seconds; -1 when not there. */
static double hms_after(const char *s, const char *prefix)
{
	const char *at = strstr(s, prefix);
	unsigned h, m, sec;

	if (!at || sscanf(at + strlen(prefix), "%u:%u:%u", &h, &m, &sec) != 3)
		return -1;
	return h * 3600.0 + m * 60.0 + sec;
}

/*
 * An hour-long copy as a log sees it: a minute of walking (scanning lines),
 * then half an hour at 150 MiB/s and the rest at 50 MiB/s. Every 10 s a
 * full line; the time left it gives is the remaining bytes at the recent
 * rate (the average since the start would be far off after the change);
 * one summary with the exact numbers.
 */
static void test_hour_in_a_log(void **state)
{
	(void)state;
	struct run r;
	const double step = 0.125; /* exact in binary: the lines fall every 10 s to the step */
	const uint64_t files = 4800, dirs = 480;
	uint64_t total = 0, done = 0, fdone = 0;

	run_start(&r, -1, 0, 0);
	/* the walk: 60 s, a directory and 10 files (of 75 MiB each) every 0.125 s */
	for (int i = 0; i < 480; i++) {
		r.t += step;
		progress_dirs(r.p, 1);
		progress_plan(r.p, 10, (uint64_t)(10 * 75 * MiB));
		total += (uint64_t)(10 * 75 * MiB);
	}
	progress_walk_done(r.p);
	/* 360000 MiB: 270000 at 150 MiB/s (1800 s), then 90000 at 50 MiB/s (1800 s) */
	double t_change = r.t + 1800;
	while (done < total) {
		r.t += step;
		uint64_t b = (uint64_t)((r.t <= t_change + 1e-9 ? 150 : 50) * MiB * step);
		if (b > total - done)
			b = total - done;
		done += b;
		/* a file ends every 75 MiB */
		uint64_t f = (uint64_t)((double)done / (75 * MiB)) - fdone;
		fdone += f;
		progress_add(r.p, f, b);
	}
	assert_int_equal(fdone, files);
	r.p = progress_finish(r.p, true);
	fflush(r.out);

	size_t n;
	char *copy;
	char **l = lines_of(r.buf, &n, &copy);
	/* 3660 s at a line every 10 s, and the summary */
	assert_int_equal(n, 367);
	size_t scanning = 0, eta_checked = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		double at = hms_after(l[i], "sweep-progress: [");
		assert_true(at >= 0);
		assert_true(strchr(l[i], '\r') == NULL);
		if (strstr(l[i], "scanning: ")) {
			unsigned long long d, f;
			assert_true(at <= 60);
			assert_int_equal(sscanf(strstr(l[i], "scanning: "), "scanning: %llu dirs, %llu files", &d, &f), 2);
			/* drawn by the directory's count, before its files' */
			assert_int_equal(d, (unsigned long long)(at * 8));
			assert_int_equal(f + 10, 10 * d);
			scanning++;
			continue;
		}
		/* a known total: a percentage, no ">=" */
		assert_non_null(strstr(l[i], "%)"));
		assert_null(strstr(l[i], ">="));
		double eta = hms_after(l[i], "ETA ");
		/* the truth at this line: the bytes left at the rate of the moment */
		double rate = at <= t_change ? 150 * MiB : 50 * MiB;
		double left_mib = at <= t_change ? 360000 - 150 * (at - 60) : 90000 - 50 * (at - t_change);
		double truth = left_mib * MiB / rate;
		/* a minute after the start and after the change (6 time constants), within 1% or 2 s */
		if (at >= 120 && (at <= t_change || at >= t_change + 60) && truth > 0) {
			double tol = truth / 100 > 2 ? truth / 100 : 2;
			if (eta < truth - tol || eta > truth + tol)
				fail_msg("at %.0f s: ETA %.0f s, expected %.0f s: %s", at, eta, truth, l[i]);
			eta_checked++;
			/* the rate shown is the recent one */
			if (at <= t_change || at >= t_change + 120)
				assert_non_null(strstr(l[i], at <= t_change ? ", 150.0 MiB/s" : ", 50.0 MiB/s"));
		}
	}
	assert_int_equal(scanning, 6);
	assert_true(eta_checked > 300);
	/* the summary: exact, and the run's elapsed time */
	char want[256];
	snprintf(want, sizeof(want), "sweep-progress: done: %llu dirs, %llu files, %llu bytes (351.6 GiB) in 1:01:00, ",
		 (unsigned long long)dirs, (unsigned long long)files, (unsigned long long)total);
	if (strncmp(l[n - 1], want, strlen(want)))
		fail_msg("summary: %s\nexpected: %s", l[n - 1], want);
	free(l);
	free(copy);
	run_end(&r);
}

/* The same hour on a terminal: a line redrawn in place at most 4 times a second, within the width. */
static void test_terminal(void **state)
{
	(void)state;
	struct run r;
	size_t redraws = 0;

	run_start(&r, 1, 0, 200);
	progress_plan(r.p, 100, (uint64_t)(3600 * 10 * MiB));
	progress_walk_done(r.p);
	for (int i = 0; i < 3600 * 64; i++) { /* 3600 s, a count every 1/64 s (exact in binary), 10 MiB/s */
		r.t += 1.0 / 64;
		progress_add(r.p, i % 2304 == 2303, (uint64_t)(10 * MiB / 64));
		if (i == 1800 * 64) {
			/* half way: a message gets a clean line, the next count draws again */
			progress_clear(r.p);
			fputs("a message\n", r.out);
		}
	}
	r.p = progress_finish(r.p, true);
	fflush(r.out);
	for (const char *s = r.buf; (s = strchr(s, '\r')); s++)
		redraws++;
	/* 4 a second for 3600 s, and the erasures (the message's, the summary's) */
	assert_int_equal(redraws, 14402);
	assert_non_null(strstr(r.buf, "\r\033[Ka message\n"));
	size_t n;
	char *copy;
	char **l = lines_of(r.buf, &n, &copy);
	int with_eta = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(l[i], "\033[K", 3))
			l[i] += 3;
		if (!*l[i] || !strcmp(l[i], "a message") || strstr(l[i], ": done: "))
			continue;
		if (strstr(l[i], "ETA 0:") || strstr(l[i], "ETA 1:"))
			with_eta++;
	}
	assert_true(with_eta >= 14399);
	/* half way through, 30 minutes left */
	char *mid = strstr(r.buf, "a message\n");
	assert_non_null(mid);
	double eta = hms_after(mid, "ETA ");
	assert_true(eta >= 1798 && eta <= 1802);
	/* the last thing: the summary on a line of its own */
	assert_non_null(strstr(r.buf, "\r\033[Ksweep-progress: done: 100 files, 37748736000 bytes (35.2 GiB) in 1:00:00, 10.0 MiB/s\n"));
	free(l);
	free(copy);
	run_end(&r);
}

/* Totals that can still grow are lower bounds: ">=" (or "≥"), no percentage. */
static void test_open_total(void **state)
{
	(void)state;
	struct run r;

	run_start(&r, -1, 1, 0);
	progress_plan(r.p, 10, 1000);
	r.t = 0.5;
	progress_dirs(r.p, 2);
	r.t = 1;
	progress_dirs(r.p, 1);
	assert_non_null(strstr(r.buf, "sweep-progress: [0:00:01] scanning: 3 dirs, 10 files, 1000 B\n"));
	/* a batch is read while the walk goes on */
	r.t = 2;
	progress_add(r.p, 4, 500);
	assert_non_null(strstr(r.buf, "[0:00:02] 4/>=10 files, 500 B/>=1000 B, 500 B/s, ETA >=0:00:01\n"));
	assert_null(strstr(r.buf, "%"));
	/* the walk is over, but two files' sizes are not known yet */
	progress_walk_done(r.p);
	progress_unsized(r.p, 2);
	r.t = 3;
	progress_add(r.p, 1, 100);
	assert_non_null(strstr(r.buf, "[0:00:03] 5/>=10 files, 600 B/>=1000 B, "));
	/* known: one was bigger than planned, one was gone */
	progress_unsized(r.p, -2);
	progress_replan(r.p, 0, 300);
	progress_replan(r.p, -1, -100);
	r.t = 4;
	progress_add(r.p, 1, 100);
	assert_non_null(strstr(r.buf, "[0:00:04] 6/9 files, 700 B/1.2 KiB (58%), "));
	/* never below nothing */
	progress_replan(r.p, -100, -1000000);
	r.t = 5;
	progress_add(r.p, 0, 0);
	assert_non_null(strstr(r.buf, "[0:00:05] 6/6 files, 700 B/700 B (100%), "));
	finish_with(&r, false, "sweep-progress: stopped: 3 dirs, 6 files, 700 bytes (700 B) in 0:00:05, 140 B/s\n");

	/* a walk whose files are planned later (sweep-sync): the scanning line counts what it met */
	run_start(&r, -1, 1, 0);
	progress_dirs(r.p, 1);
	progress_scanned(r.p, 5, 5000);
	progress_plan(r.p, 1, 10);
	r.t = 1;
	progress_scanned(r.p, 1, 1000);
	assert_non_null(strstr(r.buf, "[0:00:01] scanning: 1 dirs, 6 files, 5.9 KiB\n"));
	finish_with(&r, true, "done: 1 dirs, 0 files, 0 bytes (0 B) in 0:00:01, 0 B/s\n");

	/* in a UTF-8 locale, "≥" */
	run_open(&r, (struct progress_opts){ .interval = 1, .tty = -1, .utf8 = 1 });
	progress_plan(r.p, 2, 2048);
	r.t = 1;
	progress_add(r.p, 1, 1024);
	progress_others(r.p, 3);
	assert_non_null(strstr(r.buf, "1/\xe2\x89\xa5" "2 files, 1.0 KiB/\xe2\x89\xa5" "2.0 KiB, "));
	finish_with(&r, true, "done: 1 files, 3 others, 1024 bytes");
}

/* What a terminal of width columns shows after one count (plan: 2 files of 1 KiB, "≥" in the line). */
static char *drawn_at_width(unsigned width, int counts)
{
	struct run r;

	run_open(&r, (struct progress_opts){ .tty = 1, .width = width, .utf8 = 1 });
	progress_plan(r.p, 2, 2048);
	for (int i = 1; i <= counts; i++) {
		r.t = i * 0.25;
		progress_add(r.p, 0, 100);
	}
	r.p = progress_free(r.p);
	fclose(r.out);
	return r.buf;
}

/* A terminal narrower than the line: cut one column short of the width, between characters. */
static void test_width(void **state)
{
	(void)state;
	char *b;

	/* "sweep-progress: 0/≥2 fi" is 23 columns and 25 bytes; the next character would be the 24th column */
	b = drawn_at_width(24, 8);
	assert_non_null(strstr(b, "\rsweep-progress: 0/\xe2\x89\xa5" "2 fi\033[K"));
	free(b);
	/* 18 columns end before "≥" (three bytes, one column): no byte of it is left */
	b = drawn_at_width(19, 1);
	assert_non_null(strstr(b, "\rsweep-progress: 0/\033[K"));
	free(b);
	/* 19 columns hold it whole */
	b = drawn_at_width(20, 1);
	assert_non_null(strstr(b, "\rsweep-progress: 0/\xe2\x89\xa5\033[K"));
	free(b);
}

/* A stall: one line when counting resumes (not one per interval missed), and the rate falls. */
static void test_stall(void **state)
{
	(void)state;
	struct run r;

	run_start(&r, -1, 10, 0);
	progress_plan(r.p, 2, (uint64_t)(200 * MiB));
	progress_walk_done(r.p);
	for (int i = 0; i < 80; i++) {
		r.t += 0.125;
		progress_add(r.p, 0, (uint64_t)MiB); /* 8 MiB/s */
	}
	assert_non_null(strstr(r.buf, "[0:00:10] 0/2 files, 80.0 MiB/200.0 MiB (40%), 8.0 MiB/s, ETA 0:00:15\n"));
	r.t += 100;
	progress_add(r.p, 1, (uint64_t)MiB);
	size_t n;
	char *copy;
	char **l = lines_of(r.buf, &n, &copy);
	assert_int_equal(n, 2);
	/* 1 MiB in 100 s: the rate is what the last 100 s gave, about 10 KiB/s, so 119 MiB take over 3 hours */
	const char *head = "sweep-progress: [0:01:50] 1/2 files, 81.0 MiB/200.0 MiB (40%), ";
	double kib;
	unsigned h;
	assert_int_equal(strncmp(l[1], head, strlen(head)), 0);
	assert_int_equal(sscanf(l[1] + strlen(head), "%lf KiB/s, ETA %u:", &kib, &h), 2);
	assert_true(kib > 10 && kib < 11);
	assert_int_equal(h, 3);
	free(l);
	free(copy);
	r.p = progress_free(r.p);
	fflush(r.out);
	assert_null(strstr(r.buf, "done:")); /* free gives no summary */
	run_end(&r);
}

/* A caller's own format (sweep-sync's rsync lines): it gets every number, the module does the rest. */
static int my_format(char *buf, size_t len, const struct progress_view *v, void *ctx)
{
	int *calls = ctx;

	(*calls)++;
	return snprintf(buf, len, "k=%d f=%llu/%llu b=%llu/%llu d=%llu o=%llu s=%d open=%d ok=%d rate=%.0f eta=%.0f",
			(int)v->kind, (unsigned long long)v->files, (unsigned long long)v->plan_files,
			(unsigned long long)v->bytes, (unsigned long long)v->plan_bytes, (unsigned long long)v->dirs,
			(unsigned long long)v->others, v->scanning, v->open_total, v->ok, v->rate, v->eta);
}

static void test_format_hook(void **state)
{
	(void)state;
	struct run r;
	int calls = 0;

	run_open(&r, (struct progress_opts){ .tty = 1, .width = 200, .format = my_format, .format_ctx = &calls });
	progress_dirs(r.p, 1);
	progress_plan(r.p, 3, 3000);
	r.t = 0.25;
	progress_others(r.p, 1);
	assert_non_null(strstr(r.buf, "\rk=0 f=0/3 b=0/3000 d=1 o=1 s=1 open=1 ok=1 rate=0 eta=-1\033[K"));
	progress_walk_done(r.p);
	for (int i = 0; i < 24; i++) { /* 1000 B/s from 0.25 s on: the rate does not count the walk before */
		r.t += 0.125;
		progress_add(r.p, i % 8 == 7, 125);
	}
	r.p = progress_finish(r.p, true);
	fflush(r.out);
	assert_non_null(strstr(r.buf, "\rk=0 f=2/3 b=2250/3000 d=1 o=1 s=0 open=0 ok=1 rate=1000 eta=1\033[K"));
	assert_non_null(strstr(r.buf, "\r\033[Kk=2 f=3/3 b=3000/3000 d=1 o=1 s=0 open=0 ok=1 rate=1000 eta=0\n"));
	assert_true(calls >= 10);
	run_end(&r);
}

static void test_parse(void **state)
{
	(void)state;
	struct progress_opts o;
	static const char *const good[] = { "1", "0.5", "30", "86400", "007", "0.1" };
	static const double val[] = { 1, 0.5, 30, 86400, 7, 0.1 };
	static const char *const bad[] = { "0", "0.0", "-1", "abc", "", "1e3", "inf", "nan", "86401", "1s", " 1", "0x10",
					   "0.09", "0.0001", "1.5.2" };

	memset(&o, 0, sizeof(o));
	assert_int_equal(progress_parse(NULL, &o), 0);
	assert_true(o.on);
	assert_true(o.interval == 0);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		memset(&o, 0, sizeof(o));
		assert_int_equal(progress_parse(good[i], &o), 0);
		assert_true(o.on && o.interval == val[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&o, 0, sizeof(o));
		assert_int_equal(progress_parse(bad[i], &o), -EINVAL);
	}
	/* off: no display at all, and every call takes NULL */
	memset(&o, 0, sizeof(o));
	assert_null(progress_new(&o));
	assert_null(progress_new(NULL));
	progress_add(NULL, 1, 1);
	progress_plan(NULL, 1, 1);
	progress_replan(NULL, 1, 1);
	progress_unsized(NULL, 1);
	progress_dirs(NULL, 1);
	progress_others(NULL, 1);
	progress_walk_done(NULL);
	progress_clear(NULL);
	assert_true(progress_first_name(NULL, 1, 2));
	assert_null(progress_finish(NULL, true));
	assert_null(progress_free(NULL));
	/* tty_only, not a terminal: off */
	o.on = o.tty_only = true;
	o.tty = -1;
	assert_null(progress_new(&o));
}

static void test_first_name(void **state)
{
	(void)state;
	struct run r;

	run_start(&r, -1, 0, 0);
	for (uint64_t i = 1; i < 20000; i++)
		assert_true(progress_first_name(r.p, i % 3, i));
	for (uint64_t i = 1; i < 20000; i += 7)
		assert_false(progress_first_name(r.p, i % 3, i));
	assert_true(progress_first_name(r.p, 1, 0)); /* (1, 0) is a pair like any other */
	assert_false(progress_first_name(r.p, 1, 0));
	r.p = progress_free(r.p);
	run_end(&r);
}

static void test_human(void **state)
{
	(void)state;
	char b[32];

	progress_human(b, sizeof(b), 0);
	assert_string_equal(b, "0 B");
	progress_human(b, sizeof(b), 1023);
	assert_string_equal(b, "1023 B");
	progress_human(b, sizeof(b), 1024);
	assert_string_equal(b, "1.0 KiB");
	progress_human(b, sizeof(b), 1024 * 1024 - 1);
	assert_string_equal(b, "1.0 MiB");
	progress_human(b, sizeof(b), 1.5 * 1024 * 1024 * 1024);
	assert_string_equal(b, "1.5 GiB");
	progress_hms(b, sizeof(b), 3661.4);
	assert_string_equal(b, "1:01:01");
	progress_hms(b, sizeof(b), -1);
	assert_string_equal(b, "--:--:--");
	progress_hms(b, sizeof(b), 1e300);
	assert_string_equal(b, "--:--:--");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hour_in_a_log),
		cmocka_unit_test(test_terminal),
		cmocka_unit_test(test_open_total),
		cmocka_unit_test(test_width),
		cmocka_unit_test(test_stall),
		cmocka_unit_test(test_format_hook),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_first_name),
		cmocka_unit_test(test_human),
	};

	cli_init("sweep-progress");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
