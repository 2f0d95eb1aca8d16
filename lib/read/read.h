/* SPDX-License-Identifier: MIT */
/*
 * The read layer (lib/read/: the reader and the batch loop), for the layers
 * above it and for tests. The reader's own workings are in reader_impl.h.
 * Internal to libsweep.
 */
#ifndef SWEEP_READ_LAYER_H
#define SWEEP_READ_LAYER_H

#include "plan.h"

/* reader_prefetch.c: pieces the reader's physical-order prefetch asked for in this process (for tests). */
uint64_t sweep__reader_prefetch_pieces(void);
/* reader_multi.c: readers run side by side, one per disk (SWEEP_READ_BY_DEVICE), in this process (for tests). */
uint64_t sweep__reader_lanes_run(void);
/* reader.c: the ring size of the last run any reader of this process set up (for tests). */
size_t sweep__reader_last_ring(void);

#endif
