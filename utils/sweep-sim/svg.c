/* SPDX-License-Identifier: MIT */
/*
 * Plots written as SVG by hand (no plotting dependency): the head position
 * over time (like Figure 2 of userspace-io-scheduling-tar.txt), one panel
 * per run, and the response-time CDF of all runs on one log-scaled axis.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define W 860
#define PANEL_H 220
#define ML 70 /* margins */
#define MR 20
#define MT 30
#define MB 40
#define MAX_POINTS 20000

static const char *const colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
				      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf" };
#define NCOLORS (sizeof(colors) / sizeof(colors[0]))

static void text(FILE *f, double x, double y, const char *anchor, const char *s)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else
			fputc(*s, f);
	}
	fputs("</text>\n", f);
}

static void frame(FILE *f, double y0, double h, const char *title, const char *xlabel, const char *ylabel)
{
	fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", ML,
		y0, W - ML - MR, h);
	text(f, W / 2.0, y0 - 8, "middle", title);
	text(f, W / 2.0, y0 + h + 32, "middle", xlabel);
	fprintf(f, "<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">%s</text>\n",
		y0 + h / 2, y0 + h / 2, ylabel);
}

static void tick_x(FILE *f, double x, double ybase, const char *label)
{
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", x, ybase, x, ybase + 4);
	text(f, x, ybase + 16, "middle", label);
}

static void tick_y(FILE *f, double y, const char *label)
{
	fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>\n", ML - 4, y, ML, y);
	text(f, ML - 6, y + 4, "end", label);
}

static FILE *svg_open(const char *path, int height)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return NULL;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "font-family=\"sans-serif\" font-size=\"11\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		W, height);
	return f;
}

static int svg_close(FILE *f)
{
	fputs("</svg>\n", f);
	bool bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return -EIO;
	return 0;
}

int svg_head_position(const char *path, const struct result *const *runs, size_t nruns)
{
	int height = (int)nruns * (PANEL_H + MT + MB) + 10;
	FILE *f = svg_open(path, height);
	if (!f)
		return -errno;
	for (size_t i = 0; i < nruns; i++) {
		const struct result *r = runs[i];
		double y0 = (double)i * (PANEL_H + MT + MB) + MT, pw = W - ML - MR;
		uint64_t tmax = 1;
		for (size_t k = 0; k < r->ns; k++)
			if (r->s[k].finish_ns > tmax)
				tmax = r->s[k].finish_ns;
		char title[160], lab[64];
		snprintf(title, sizeof(title), "%s: head position over time (blue read, red write)", r->label);
		frame(f, y0, PANEL_H, title, "time (s)",
		      r->info.kind == SWEEP_SIM_HDD ? "cylinder" : "offset (MiB)");
		for (int t = 0; t <= 4; t++) {
			snprintf(lab, sizeof(lab), "%.3g", (double)tmax / 1e9 * t / 4);
			tick_x(f, ML + pw * t / 4, y0 + PANEL_H, lab);
			snprintf(lab, sizeof(lab), "%.0f", (double)r->info.positions * t / 4);
			tick_y(f, y0 + PANEL_H - PANEL_H * t / 4.0, lab);
		}
		size_t stride = r->ns / MAX_POINTS + 1;
		for (size_t k = 0; k < r->ns; k += stride) {
			const struct sample *s = &r->s[k];
			double x = ML + pw * (double)s->start_ns / (double)tmax;
			double y = y0 + PANEL_H - PANEL_H * (double)s->position / (double)(r->info.positions ? r->info.positions : 1);
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"1.5\" height=\"1.5\" fill=\"%s\"/>\n", x, y,
				s->op ? "#d62728" : "#1f77b4");
		}
	}
	return svg_close(f);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int svg_response_cdf(const char *path, const struct result *const *runs, size_t nruns)
{
	int height = PANEL_H * 2 + MT + MB + 16 * (int)nruns + 10;
	double h = PANEL_H * 2, pw = W - ML - MR, y0 = MT;
	/* log10 x axis over the range of all runs */
	double lo = INFINITY, hi = 0;
	for (size_t i = 0; i < nruns; i++)
		for (size_t k = 0; k < runs[i]->ns; k++) {
			double ms = (double)runs[i]->s[k].response_ns / 1e6;
			if (ms > 0 && ms < lo)
				lo = ms;
			if (ms > hi)
				hi = ms;
		}
	if (!(lo < hi)) {
		lo = 0.001;
		hi = 1000;
	}
	double l0 = floor(log10(lo)), l1 = ceil(log10(hi));
	if (l1 <= l0)
		l1 = l0 + 1;
	FILE *f = svg_open(path, height);
	if (!f)
		return -errno;
	frame(f, y0, h, "response time CDF", "response time (ms, log scale)", "fraction of requests");
	char lab[64];
	for (double d = l0; d <= l1; d++) {
		snprintf(lab, sizeof(lab), "%g", pow(10, d));
		tick_x(f, ML + pw * (d - l0) / (l1 - l0), y0 + h, lab);
	}
	for (int t = 0; t <= 4; t++) {
		snprintf(lab, sizeof(lab), "%.2f", t / 4.0);
		tick_y(f, y0 + h - h * t / 4.0, lab);
	}
	for (size_t i = 0; i < nruns; i++) {
		const struct result *r = runs[i];
		if (!r->ns)
			continue;
		uint64_t *v = malloc(r->ns * sizeof(*v));
		if (!v) {
			fclose(f);
			return -ENOMEM;
		}
		for (size_t k = 0; k < r->ns; k++)
			v[k] = r->s[k].response_ns;
		qsort(v, r->ns, sizeof(*v), cmp_u64);
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", colors[i % NCOLORS]);
		size_t steps = r->ns < 1000 ? r->ns : 1000;
		for (size_t j = 1; j <= steps; j++) {
			size_t k = (size_t)((double)j / (double)steps * (double)r->ns) - 1;
			double ms = (double)v[k] / 1e6;
			double lx = ms > 0 ? log10(ms) : l0;
			if (lx < l0)
				lx = l0;
			fprintf(f, "%.1f,%.1f ", ML + pw * (lx - l0) / (l1 - l0), y0 + h - h * (double)(k + 1) / (double)r->ns);
		}
		fputs("\"/>\n", f);
		free(v);
		double ly = y0 + h + MB + 14.0 * (double)i;
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>\n", ML, ly,
			ML + 20, ly, colors[i % NCOLORS]);
		text(f, ML + 26, ly + 4, "start", r->label);
	}
	return svg_close(f);
}
