/* SPDX-License-Identifier: MIT */
/*
 * For the C tests run once per backend (SWEEP_BACKEND=uring|syscall in their
 * environment): where io_uring is refused, the uring variant would silently
 * test the syscall path again, so it reports a skip (exit 77) instead.
 */
#ifndef SWEEP_TEST_BACKEND_H
#define SWEEP_TEST_BACKEND_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sweep.h>

static inline void skip_unless_backend_usable(void)
{
	const char *b = getenv("SWEEP_BACKEND");

	if (b && !strcmp(b, "uring") && sweep_backend_resolve(SWEEP_BACKEND_URING) != SWEEP_BACKEND_URING) {
		printf("SKIP: io_uring is not available here\n");
		exit(77);
	}
}

#endif
