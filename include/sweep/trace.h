/* SPDX-License-Identifier: MIT */
/*
 * trace: export a plan as a request trace the model can replay (no root
 * needed). Text format "sweep-trace 1", documented in sweep-trace(5):
 *
 *   # sweep-trace 1
 *   # op offset_bytes length_bytes ino
 *   R 1052672 4096 1234
 *
 * One data line per extent (per file when only the first block is known),
 * in plan order. Lines starting with '#' are comments. Files with no known
 * location are written as comments ("# nophys <length> <ino>").
 */
#ifndef SWEEP_TRACE_H
#define SWEEP_TRACE_H

#include <sweep/common.h>
#include <sweep/plan.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SWEEP_TRACE_HEADER 0x1u /* write the "# sweep-trace 1" header first */

/* Append the plan's requests to fd. Returns the number of data lines written or -errno. */
SWEEP_EXPORT int sweep_trace_write(const struct sweep_plan *p, int fd, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
