/* SPDX-License-Identifier: MIT */
/*
 * A one-line progress display for long runs (sweep-tar, sweep-cp,
 * sweep-sync): files and bytes done against the planned total, with the
 * rate, e.g.
 *
 *   sweep-tar: 1204/5311 files, 1.2 GiB/3.9 GiB (30%), 84.1 MiB/s
 *
 * It is shown only when the caller asked for it and stderr is a terminal,
 * and redrawn at most PROGRESS_HZ times a second, so calling progress_add()
 * for every buffer costs a clock read and nothing more. The planned totals
 * may grow while the run goes on (a walk discovers files as it plans them).
 *
 * Every function accepts NULL and then does nothing: progress_new() returns
 * NULL when the display is off, and callers need no checks of their own.
 */
#ifndef SWEEP_PROGRESS_H
#define SWEEP_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#define PROGRESS_HZ 4

struct progress;

/*
 * A display, or NULL when want is false, stderr is not a terminal, or
 * memory is short. The line starts with the program name from cli_init().
 */
struct progress *progress_new(bool want);
/* Stop the display (clears the line) and free it; returns NULL. */
struct progress *progress_free(struct progress *p);

/* Add to the planned totals. */
void progress_plan(struct progress *p, uint64_t files, uint64_t bytes);
/* Add to what is done, and redraw when the last redraw is old enough. */
void progress_add(struct progress *p, uint64_t files, uint64_t bytes);
/* Redraw now, whatever the time (e.g. after the last file). */
void progress_draw(struct progress *p);
/*
 * Erase the line so a message can be printed on a clean line; the next
 * progress_add() draws it again. Call before writing to stderr.
 */
void progress_clear(struct progress *p);

#endif
