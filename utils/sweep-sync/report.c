/* SPDX-License-Identifier: MIT */
/*
 * What sweep-sync prints about the run, in rsync's formats: numbers as
 * rsync's -h levels write them, the closing totals (-v), the --stats
 * block and the --progress / --info=progress2 lines.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "progress.h"
#include "sync.h"

/* Four buffers in turn, as rsync's do_big_num: one printf may use several. */
static char *next_buf(void)
{
	static char bufs[4][64];
	static unsigned n;

	n = (n + 1) % 4;
	return bufs[n];
}

/* n with a ',' every three digits. */
static const char *comma_num(uint64_t n)
{
	char digits[24], *buf = next_buf();
	int len = snprintf(digits, sizeof(digits), "%" PRIu64, n), k = 0;

	for (int i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k] = 0;
	return buf;
}

const char *report_num(const struct sync_ctx *c, uint64_t n)
{
	int h = c->o.human;

	if (h > 1) {
		double mult = h == 2 ? 1000 : 1024, d = (double)n;
		const char *units = "KMGTP";
		int u = 0;

		if (d >= mult) {
			d /= mult;
			while (d >= mult && u < 4) {
				d /= mult;
				u++;
			}
			char *buf = next_buf();
			snprintf(buf, 64, "%.2f%c", d, units[u]);
			return buf;
		}
	}
	return comma_num(n);
}

/* A double with digits decimals and grouped thousands (rsync's comma_dnum), or in units with -h. */
static const char *report_dnum(const struct sync_ctx *c, double d, int digits)
{
	char *buf;
	uint64_t whole;
	double frac;

	if (c->o.human > 1 && d >= (c->o.human == 2 ? 1000 : 1024))
		return report_num(c, (uint64_t)d);
	whole = (uint64_t)d;
	frac = d - (double)whole;
	/* comma_num's buffer is another of the ring's; formatted here first so that no snprintf reads the ring it writes */
	char text[64];
	if (digits == 2)
		snprintf(text, sizeof(text), "%s.%02u", comma_num(whole), (unsigned)(frac * 100) % 100);
	else
		snprintf(text, sizeof(text), "%s.%03u", comma_num(whole), (unsigned)(frac * 1000) % 1000);
	buf = next_buf();
	memcpy(buf, text, sizeof(text));
	return buf;
}

double report_now(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static double since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

/* "Number of files: 11 (reg: 7, dir: 4)" */
static void counts(const struct sync_ctx *c, const char *what, const uint64_t v[5])
{
	static const char *const labels[] = { "reg", "dir", "link", "dev", "special" };
	uint64_t total = v[0] + v[1] + v[2] + v[3] + v[4];
	const char *pre = " (";

	printf("%s: %s", what, comma_num(total));
	for (int j = 0; total && j < 5; j++) {
		if (!v[j])
			continue;
		printf("%s%s: %s", pre, labels[j], comma_num(v[j]));
		pre = ", ";
	}
	puts(total ? ")" : "");
	(void)c;
}

int report_type(mode_t m)
{
	return S_ISREG(m) ? 0 : S_ISDIR(m) ? 1 : S_ISLNK(m) ? 2 : (S_ISCHR(m) || S_ISBLK(m)) ? 3 : 4;
}

/*
 * rsync's closing lines: --stats's block (stats >= 2), then (stats >= 1)
 * "sent ... received ... bytes/sec" and "total size is ... speedup is".
 * What rsync counts of its protocol (file list size, bytes on the wire)
 * has no counterpart in a local sweep-sync: "sent" is the file data
 * written, nothing comes back, and the file list is not sent anywhere.
 * Over a remote shell "sent" and "received" are the bytes on the wire, as
 * the client sees them, as rsync counts them.
 */
void report_summary(const struct sync_ctx *c, const struct timespec *start)
{
	const struct sync_stats *s = &c->stats;
	double secs = since(start);
	uint64_t sent = c->sent, received = 0;

	if (c->remote)
		remote_wire_counts(c, &sent, &received);

	if (c->o.stats >= 2) {
		putchar('\n');
		counts(c, "Number of files", s->files);
		counts(c, "Number of created files", s->created);
		counts(c, "Number of deleted files", s->deleted);
		printf("Number of regular files transferred: %s\n", comma_num(s->xferred));
		printf("Total file size: %s bytes\n", report_num(c, c->total_size));
		printf("Total transferred file size: %s bytes\n", report_num(c, s->xferred_size));
		printf("Literal data: %s bytes\n", report_num(c, c->sent));
		printf("Matched data: %s bytes\n", report_num(c, 0));
		printf("File list size: %s\n", report_num(c, 0));
		printf("File list generation time: %s seconds\n", report_dnum(c, s->scan_secs, 3));
		printf("File list transfer time: %s seconds\n", report_dnum(c, 0, 3));
		printf("Total bytes sent: %s\n", report_num(c, sent));
		printf("Total bytes received: %s\n", report_num(c, received));
	}
	if (c->o.stats >= 1) {
		char *rate = strdup(report_dnum(c, secs > 0 ? (double)(sent + received) / secs : 0, 2));
		char *speed = strdup(sent + received ? report_dnum(c, (double)c->total_size / (double)(sent + received), 2) : "inf");
		char *snum = strdup(report_num(c, sent)), *rnum = strdup(report_num(c, received));

		putchar('\n');
		printf("sent %s bytes  received %s bytes  %s bytes/sec\n", snum ? snum : "?", rnum ? rnum : "?", rate ? rate : "?");
		printf("total size is %s  speedup is %s%s\n", report_num(c, c->total_size), speed ? speed : "?",
		       c->o.dry_run ? " (DRY RUN)" : "");
		/* rsync logs these lines as they are printed */
		synclog_text("sent %s bytes  received %s bytes  %s bytes/sec", snum ? snum : "?", rnum ? rnum : "?",
			     rate ? rate : "?");
		synclog_text("total size is %s  speedup is %s%s", report_num(c, c->total_size), speed ? speed : "?",
			     c->o.dry_run ? " (DRY RUN)" : "");
		free(rate);
		free(speed);
		free(snum);
		free(rnum);
	} else if (synclog_on()) {
		/* without them rsync's log still gets the totals, in one line */
		char *snum = strdup(report_num(c, sent)), *rnum = strdup(report_num(c, received));

		synclog_text("sent %s bytes  received %s bytes  total size %s", snum ? snum : "?", rnum ? rnum : "?",
			     report_num(c, c->total_size));
		free(snum);
		free(rnum);
	}
}

/*
 * rsync's progress line: "\r%15s %3d%% %7.2f%s %s (xfr#N, to-chk=R/T)".
 * done of size bytes at rate (bytes a second); the time is what is left
 * (interim lines) or what it took (the last line of a file, or
 * progress2's lines).
 */
static void progress_line(const struct sync_ctx *c, uint64_t done, uint64_t size, double rate, double secs,
			  const char *eol)
{
	const char *units = "kB/s";
	char rem[32];
	int pct = done == size || !size ? 100 : (int)(100.0 * (double)done / (double)size);

	rate /= 1024.0;
	if (rate > 1024.0 * 1024.0) {
		rate /= 1024.0 * 1024.0;
		units = "GB/s";
	} else if (rate > 1024.0) {
		rate /= 1024.0;
		units = "MB/s";
	}
	if (secs < 0 || secs > 9999.0 * 3600.0)
		snprintf(rem, sizeof(rem), "  ??:??:??");
	else
		snprintf(rem, sizeof(rem), "%4u:%02u:%02u", (unsigned)(secs / 3600.0), (unsigned)(secs / 60.0) % 60,
			 (unsigned)secs % 60);
	printf("\r%15s %3d%% %7.2f%s %s%s", report_num(c, done), pct, rate, units, rem, eol);
}

/* --progress: a file is written (idx: its node; bytes, and the seconds it took). */
void report_file_done(struct sync_ctx *c, size_t idx, uint64_t bytes, double secs)
{
	char eol[96];

	c->stats.xferred++;
	if (c->o.progress < 1)
		return;
	progress_clear(c->prog);
	if (c->o.progress == 1) {
		if (!c->o.itemize && c->o.name_level < 1)
			printf("%s\n", c->list.v[idx].rel);
		snprintf(eol, sizeof(eol), " (xfr#%" PRIu64 ", to-chk=%" PRIu64 "/%" PRIu64 ")\n", c->stats.xferred,
			 c->src_total - c->src_index[idx] - 1, c->src_total);
		progress_line(c, bytes, bytes, secs > 0 ? (double)bytes / secs : 0, secs, eol);
	} else {
		report_progress2(c);
	}
	fflush(stdout);
}

/* --info=progress2: one line for the whole transfer, redrawn in place. */
void report_progress2(struct sync_ctx *c)
{
	char eol[96];
	double secs = since(&c->start);
	size_t next = c->out.next < c->list.n ? c->out.next : 0;
	uint64_t chk = c->src_index && c->out.next < c->list.n ? c->src_total - c->src_index[next] : 0;

	if (c->o.progress != 2)
		return;
	c->last_progress = report_now();
	snprintf(eol, sizeof(eol), " (xfr#%" PRIu64 ", to-chk=%" PRIu64 "/%" PRIu64 ")", c->stats.xferred, chk,
		 c->src_total);
	progress_line(c, c->sent, c->total_size, secs > 0 ? (double)c->sent / secs : 0, secs, eol);
	fflush(stdout);
}
