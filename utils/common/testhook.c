/* SPDX-License-Identifier: MIT */
#include "testhook.h"

#if SWEEP_TEST_HOOKS
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void test_pause(const char *point, uint64_t n)
{
	static bool fired;
	const char *v = getenv("SWEEP_TEST_PAUSE");
	size_t l = strlen(point);

	if (fired || !v || strncmp(v, point, l) || (v[l] && v[l] != ':'))
		return;
	if (v[l] == ':' && n < strtoull(v + l + 1, NULL, 10))
		return;
	fired = true;
	fflush(stdout);
	fflush(stderr);
	raise(SIGSTOP);
}
#endif
