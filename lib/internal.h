/* SPDX-License-Identifier: MIT */
/* Library-internal declarations. Not installed. Unit tests may include it. */
#ifndef SWEEP_INTERNAL_H
#define SWEEP_INTERNAL_H

#include "config.h"
#include <sweep.h>

/* 1 when io_uring with openat/read/statx works in this process. */
int sweep__uring_usable(void);

#endif
