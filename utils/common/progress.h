/* SPDX-License-Identifier: MIT */
/*
 * Progress for long runs (sweep-tar, sweep-cp, sweep-sync, sweep-du,
 * sweep-plan), the same in every tool.
 *
 * What is counted (each tool's man page says the same):
 *   files   regular files, by name: every name met counts, so a file with
 *           two hard links counts twice;
 *   bytes   the regular files' data, each file's size (holes included),
 *           counted once for a file however many names it has, wherever
 *           the tool handles the data once (sweep-plan --read reads every
 *           name, so it counts every name);
 *   dirs    directories met by the walk;
 *   others  symlinks, devices, FIFOs and sockets.
 *
 * What is shown, on stderr:
 *   - while the walk runs and nothing is done yet:
 *       sweep-tar: scanning: 1204 dirs, 53110 files, 3.9 GiB
 *   - while a batch of files is sorted, which on a disk first locates
 *     each file (open and FIEMAP; minutes for a large batch), one line at
 *     once when it begins:
 *       sweep-tar: planning 53110 files
 *   - then files and bytes done against the planned totals, the recent
 *     rate and the time left:
 *       sweep-tar: 1204/5311 files, 1.2 GiB/3.9 GiB (30%), 84.1 MiB/s, ETA 0:00:32
 *     A total that can still grow (the walk goes on, or some planned
 *     files' sizes are not known yet) is shown as ">=" ("≥" in a UTF-8
 *     locale), without a percentage, and so is the time left.
 *   - on a terminal (and no interval asked for): that line, redrawn at
 *     most PROGRESS_HZ times a second; elsewhere, or with --progress=SECONDS,
 *     a full line every SECONDS (PROGRESS_LOG_INTERVAL by default), with the
 *     time since the start: "sweep-tar: [0:01:10] 1204/5311 files, ...".
 *   - at the end (progress_finish()), one summary line with exact numbers
 *     (dirs and others left out when there were none):
 *       sweep-tar: done: 1204 dirs, 5311 files, 17 others, 4190208234 bytes (3.9 GiB) in 0:02:01, 33.0 MiB/s
 *
 * The rate is an exponentially weighted average of the last PROGRESS_TAU
 * seconds or so (the walk, before anything moved, is not in it), and the
 * time left is the remaining planned bytes at that rate (files, when no
 * bytes remain).
 *
 * Counting costs a clock read, no more: the display is redrawn from the
 * counting calls themselves (the caller's thread; nothing runs beside it).
 * Every function accepts NULL and then does nothing: progress_new()
 * returns NULL when the display is off, and callers need no checks.
 */
#ifndef SWEEP_PROGRESS_H
#define SWEEP_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PROGRESS_HZ 4             /* terminal redraws a second, at most */
#define PROGRESS_LOG_INTERVAL 10  /* seconds between full lines where stderr is no terminal */
#define PROGRESS_TAU 10           /* seconds: time constant of the rate's average */

/* What a formatter is asked to write. */
enum progress_kind {
	PROGRESS_REDRAW,  /* the terminal line (drawn over the last one) */
	PROGRESS_LINE,    /* a full line for a log */
	PROGRESS_SUMMARY, /* the last line */
};

/* Everything a line can say, for the default line and for a caller's own format (rsync's, sweep-sync). */
struct progress_view {
	enum progress_kind kind;
	uint64_t files, bytes;           /* done */
	uint64_t plan_files, plan_bytes; /* planned so far */
	uint64_t dirs, others;
	uint64_t scan_files, scan_bytes; /* what the scanning line counts: progress_scanned(), else the planned */
	bool scanning;    /* the walk runs and nothing is done yet */
	uint64_t planning; /* files of the batch being sorted (progress_planning()), 0 when none */
	bool open_total;  /* the planned totals can still grow */
	bool ok;          /* PROGRESS_SUMMARY: the run ended as planned (else it was stopped) */
	double elapsed;   /* seconds since progress_new() */
	double rate;      /* bytes a second, recent; 0 until measured */
	double file_rate; /* files a second, recent */
	double eta;       /* seconds left, < 0 when unknown (a lower bound when open_total) */
	const char *ge;   /* ">=" or "≥", as the locale allows */
};

/* Write the line (no "\r", no newline) into buf; the length written, as snprintf. */
typedef int (*progress_format_fn)(char *buf, size_t len, const struct progress_view *v, void *ctx);

struct progress_opts {
	bool on;          /* asked for (--progress); false: progress_new() returns NULL */
	bool tty_only;    /* shown only on a terminal (sweep-du without --progress) */
	double interval;  /* --progress=SECONDS: full lines this often, even on a terminal; 0 = by where it goes */
	/* The rest is for tests and for callers with a format of their own; zero is the default. */
	FILE *out;        /* NULL: stderr */
	int tty;          /* 0: ask isatty(); 1: a terminal; -1: not a terminal */
	unsigned width;   /* terminal columns, 0: ask the terminal */
	int utf8;         /* 0: ask the locale; 1: "≥"; -1: ">=" */
	/* Seconds from any fixed origin; NULL: CLOCK_MONOTONIC (SWEEP_TEST_CLOCK in test builds, progress.c). */
	double (*clock)(void *ctx);
	void *clock_ctx;
	progress_format_fn format; /* NULL: the line shown above */
	void *format_ctx;
};

struct progress;

/*
 * --progress[=SECONDS] (arg NULL for the bare option): sets o->on and
 * o->interval. On a bad argument (not a number of seconds, digits and a
 * point) says "prog: invalid --progress argument 'x' ..." and returns
 * -EINVAL; the tool then exits as on any usage error. From 0.1 to 86400 s.
 */
int progress_parse(const char *arg, struct progress_opts *o);

/* A display, or NULL when it is off (see progress_opts) or memory is short. */
struct progress *progress_new(const struct progress_opts *o);
/* Erase the line and free, without a summary (progress_finish() gives one); returns NULL. */
struct progress *progress_free(struct progress *p);
/*
 * The summary line (ok false: the run was stopped, "stopped:" in place of
 * "done:"), then free; returns NULL.
 */
struct progress *progress_finish(struct progress *p, bool ok);

/* The walk met directories, or entries that are neither directories nor regular files. */
void progress_dirs(struct progress *p, uint64_t n);
void progress_others(struct progress *p, uint64_t n);
/* Add to the planned totals. */
void progress_plan(struct progress *p, uint64_t files, uint64_t bytes);
/*
 * Regular files a walk met whose work is decided later (sweep-sync's
 * source list: only what changed is planned). The scanning line counts
 * these when there are any, else the planned files.
 */
void progress_scanned(struct progress *p, uint64_t files, uint64_t bytes);
/*
 * Correct the planned totals: a file's size at open differs from the
 * planned one, a planned file was not read after all (gone, refused, or
 * a hard link to data already counted). The totals never go below 0.
 */
void progress_replan(struct progress *p, int64_t files, int64_t bytes);
/*
 * Planned files whose sizes are not known yet (+n as planned, -n as they
 * become known): while any are, the byte total is shown as a lower bound.
 */
void progress_unsized(struct progress *p, int64_t n);
/*
 * A batch of files is about to be sorted (a batch's on_sort): shown at once
 * as "planning N files", in the terminal and the log form, until something
 * is done (progress_add()). 0 files: nothing.
 */
void progress_planning(struct progress *p, uint64_t files);
/* The walk is over: the totals grow no more (but by progress_unsized files). */
void progress_walk_done(struct progress *p);
/* Everything planned is done: for a tool whose work is the walk (sweep-du), before progress_finish(). */
void progress_done_all(struct progress *p);
/* Add to what is done, and redraw when the last one is old enough. */
void progress_add(struct progress *p, uint64_t files, uint64_t bytes);
/*
 * Erase the terminal line so a message can be printed on a clean line; the
 * next count draws it again. Call before writing to stderr.
 */
void progress_clear(struct progress *p);
/*
 * The same before a line on f: erased when f is where the display goes, or
 * standard output on a terminal (most likely the same one); left alone
 * when f goes elsewhere (a listing redirected to a file), so it does not
 * blink at every line.
 */
void progress_clear_for(struct progress *p, FILE *f);

struct sweep_copy_done;
/*
 * What the copy engine made (sweep-cp, sweep-sync), counted as above: a
 * file copied with its size (its holes, never written, included), another
 * name of one as a file without bytes, directories, the rest as others.
 * Regular files must have been planned (the engine's on_plan); a hard link
 * is planned here.
 */
void progress_copy_done(struct progress *p, const struct sweep_copy_done *d);

/*
 * A set of (dev, ino) pairs, for a caller that meets every name of a file
 * but counts its bytes once (sweep-du): true the first time a pair is
 * seen, and when memory is short.
 */
bool progress_first_name(struct progress *p, uint64_t dev, uint64_t ino);

/* Helpers for formats: "812 B", "1.5 KiB"; "1:02:03" (or "--:--:--" for < 0). */
void progress_human(char *buf, size_t len, double bytes);
void progress_hms(char *buf, size_t len, double seconds);

#endif
