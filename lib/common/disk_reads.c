/* SPDX-License-Identifier: MIT */
/*
 * Whether a piece of work had to read the disk, without a clock.
 *
 * The walk keys a directory by its first block only where the tree is
 * cold, and hands a batch of stats to io_uring only where they wait for the
 * disk. It used to tell by timing each fstatat() (under 5 us: "from the
 * inode cache"); on a faster CPU a cold inode read from the loop device's
 * cache took less than that, and a cold tree was walked as a warm one.
 * Task I/O accounting answers the real question instead: the calling
 * thread's block input count (getrusage RUSAGE_THREAD ru_inblock, which is
 * its read_bytes / 512) grows when it submits a read bio (an inode table
 * block, a directory block), whatever the CPU, and stays put when the
 * inode, dentry or buffer cache answered. getrusage is one cheap syscall;
 * reading /proc/thread-self/io each time cost about as much as the stats.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "internal.h"

/* Answers in a row with the count unchanged before the gate starts sampling, and how often it asks then. */
#define READS_STREAK 32
#define READS_SAMPLE 32

#if SWEEP_TEST_HOOKS
/*
 * SWEEP_TEST_DISK_READS=always: every call reports new reads (every tree
 * cold); =never: none (every tree warm). Lets tests run the whole suite
 * with the decision forced either way.
 */
static int forced(int64_t *ret)
{
	static uint64_t calls;
	const char *v = getenv("SWEEP_TEST_DISK_READS");
	if (!v)
		return 0;
	if (strcmp(v, "always") == 0)
		*ret = (int64_t)__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	else if (strcmp(v, "never") == 0)
		*ret = 0;
	else
		return 0;
	return 1;
}
#endif

/*
 * Without task I/O accounting (CONFIG_TASK_IO_ACCOUNTING) ru_inblock is
 * always 0, which would call every tree warm; the kernel has /proc/self/io
 * exactly when it keeps the count.
 */
static int accounting(void)
{
	static int known; /* 0 unknown, 1 yes, -1 no */
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
	if (k == 0) {
		k = access("/proc/self/io", R_OK) == 0 ? 1 : -1;
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k > 0;
}

void sweep__reads_gate_init(struct sweep__reads_gate *g)
{
	*g = (struct sweep__reads_gate){ .last = -1 };
}

int64_t sweep__reads_gate_ask(struct sweep__reads_gate *g, int64_t (*count)(void))
{
	if (g->streak >= READS_STREAK && ++g->skipped < READS_SAMPLE)
		return g->last;
	g->skipped = 0;
	int64_t now = count();
	if (now < 0 || now != g->last)
		g->streak = 0;
	else if (g->streak < READS_STREAK)
		g->streak++;
	g->last = now;
	return now;
}

int64_t sweep__disk_reads_sampled(void)
{
	static __thread struct sweep__reads_gate g = { .last = -1 };
#if SWEEP_TEST_HOOKS
	/* Forced answers are every call's own. */
	if (getenv("SWEEP_TEST_DISK_READS"))
		return sweep__disk_reads();
#endif
	return sweep__reads_gate_ask(&g, sweep__disk_reads);
}

int64_t sweep__disk_reads(void)
{
#if SWEEP_TEST_HOOKS
	int64_t f;
	if (forced(&f))
		return f;
#endif
	if (!accounting())
		return -EOPNOTSUPP;
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return -errno;
	return (int64_t)ru.ru_inblock;
}
