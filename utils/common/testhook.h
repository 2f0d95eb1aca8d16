/* SPDX-License-Identifier: MIT */
/*
 * Test hooks: pause a tool between its phases so a test can change the
 * tree (swap a directory for a symlink, replace a file) or kill the run at
 * a known point, without timing guesses.
 *
 * Compiled in only when the build was configured with -Dtest_hooks=true
 * (the test build); in any other build test_pause() does nothing, so a
 * shipped binary cannot be steered by its environment.
 *
 * SWEEP_TEST_PAUSE=POINT or POINT:N stops the process with SIGSTOP the
 * first time test_pause(POINT, n) is called with n >= N (N defaults to 0).
 * The test sees the process stopped (ps state T), does its work, and sends
 * SIGCONT. Points: "walk" (the tree is walked or scanned, nothing read
 * yet), "plan" (a batch is about to be read; in sweep-cp n counts
 * batches), "read" (a source file is open
 * and checked; n counts files), "write" (a copy is complete and about to be
 * put in place; n counts files), "bytes" (n data bytes were written),
 * "delete" (deletions are about to start), "extract" (sweep-tar -x: -C is
 * open and a member is about to be written; n counts members), "xdirs"
 * (sweep-tar -x: the directories' metadata is about to be set).
 */
#ifndef SWEEP_TESTHOOK_H
#define SWEEP_TESTHOOK_H

#include <stdbool.h>
#include <stdint.h>

#if SWEEP_TEST_HOOKS
void test_pause(const char *point, uint64_t n);
#else
static inline void test_pause(const char *point, uint64_t n)
{
	(void)point;
	(void)n;
}
#endif

#endif
