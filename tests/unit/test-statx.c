/* SPDX-License-Identifier: MIT */
/* Batched stat: io_uring statx and plain fstatat give what fstatat gives, in any batch size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "walk_impl.h"
#include "../common/backend.h"

static char dir[64];
static int dfd = -1;
#define NFILES 40

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/sweep-test-statx.XXXXXX");
	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < NFILES; i++) {
		char n[16];
		snprintf(n, sizeof(n), "f%d", i);
		int fd = openat(dfd, n, O_CREAT | O_WRONLY | O_CLOEXEC, 0640);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, dir, (size_t)i), i);
		close(fd);
	}
	assert_int_equal(symlinkat("f3", dfd, "link"), 0);
	assert_int_equal(symlinkat("missing", dfd, "dangling"), 0);
	assert_int_equal(mkdirat(dfd, "sub", 0750), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	close(dfd);
	return system(cmd);
}

static void same_stat(const struct stat *a, const struct stat *b)
{
	assert_int_equal(a->st_dev, b->st_dev);
	assert_int_equal(a->st_ino, b->st_ino);
	assert_int_equal(a->st_mode, b->st_mode);
	assert_int_equal(a->st_nlink, b->st_nlink);
	assert_int_equal(a->st_uid, b->st_uid);
	assert_int_equal(a->st_gid, b->st_gid);
	assert_int_equal(a->st_rdev, b->st_rdev);
	assert_int_equal(a->st_size, b->st_size);
	assert_int_equal(a->st_blocks, b->st_blocks);
	assert_int_equal(a->st_blksize, b->st_blksize);
	assert_int_equal(a->st_mtim.tv_sec, b->st_mtim.tv_sec);
	assert_int_equal(a->st_mtim.tv_nsec, b->st_mtim.tv_nsec);
	assert_int_equal(a->st_ctim.tv_sec, b->st_ctim.tv_sec);
	assert_int_equal(a->st_ctim.tv_nsec, b->st_ctim.tv_nsec);
}

static void run(enum sweep_backend be, unsigned depth, int flags, bool every_uring)
{
	enum { N = NFILES + 4 };
	char names[N][16];
	struct stat st[N];
	struct sweep__stat_req reqs[N];
	for (int i = 0; i < NFILES; i++)
		snprintf(names[i], sizeof(names[i]), "f%d", i);
	strcpy(names[NFILES], "link");
	strcpy(names[NFILES + 1], "dangling");
	strcpy(names[NFILES + 2], "sub");
	strcpy(names[NFILES + 3], "nope");
	for (int i = 0; i < N; i++)
		reqs[i] = (struct sweep__stat_req){ .name = names[i], .flags = flags, .st = &st[i], .err = 12345 };
	struct sweep__stat_batch *b = sweep__stat_batch_new(be, depth, every_uring, true);
	assert_non_null(b);
	assert_int_equal(sweep__stat_batch_run(b, dfd, reqs, N), 0);
	for (int i = 0; i < N; i++) {
		struct stat want;
		int err = fstatat(dfd, names[i], &want, flags) < 0 ? -errno : 0;
		assert_int_equal(reqs[i].err, err);
		if (!err)
			same_stat(&st[i], &want);
	}
	assert_null(sweep__stat_batch_free(b));
}

/*
 * "Cached" is whether the batch had to read the disk, never how long a call
 * took: files just made are in the cache, so a batch over them read
 * nothing; with the test hook forcing the meter, the answer follows it
 * whatever the machine's speed.
 */
static bool cached_run(enum sweep_backend be, bool every_uring, bool tell)
{
	enum { N = NFILES };
	char names[N][16];
	struct stat st[N];
	struct sweep__stat_req reqs[N];
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		reqs[i] = (struct sweep__stat_req){ .name = names[i], .flags = AT_SYMLINK_NOFOLLOW, .st = &st[i] };
	}
	struct sweep__stat_batch *b = sweep__stat_batch_new(be, 64, every_uring, tell);
	assert_non_null(b);
	assert_int_equal(sweep__stat_batch_run(b, dfd, reqs, N), 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(reqs[i].err, 0);
	bool c = sweep__stat_batch_cached(b);
	sweep__stat_batch_free(b);
	return c;
}

static void test_cached(void **state)
{
	(void)state;
	enum sweep_backend be = sweep_backend_resolve(SWEEP_BACKEND_AUTO);
	unsetenv("SWEEP_TEST_DISK_READS"); /* the real signal first, whatever the suite forces */
	if (access("/proc/self/io", R_OK) == 0) {
		assert_true(sweep__disk_reads() >= 0);
		assert_true(cached_run(be, false, true));
	} else {
		/* No count kept: unknown is never taken for cached. */
		assert_true(sweep__disk_reads() < 0);
		assert_false(cached_run(be, false, true));
	}
	/* Not asked: never cached. Everything through io_uring: never cached. */
	assert_false(cached_run(be, false, false));
	if (be == SWEEP_BACKEND_URING)
		assert_false(cached_run(be, true, true));
#if SWEEP_TEST_HOOKS
	setenv("SWEEP_TEST_DISK_READS", "always", 1);
	assert_false(cached_run(be, false, true));
	setenv("SWEEP_TEST_DISK_READS", "never", 1);
	assert_true(cached_run(be, false, true));
	unsetenv("SWEEP_TEST_DISK_READS");
#endif
}

/* A counter the test moves by hand, and how often the gate read it. */
static int64_t fake_reads, fake_asked;
static int64_t fake_count(void)
{
	fake_asked++;
	return fake_reads;
}

/*
 * The per-directory meter: every question reaches the counter until it has
 * stood still for a while; then only some do, and the first that sees it
 * move makes every question reach it again.
 */
static void test_reads_gate(void **state)
{
	(void)state;
	struct sweep__reads_gate g;
	sweep__reads_gate_init(&g);
	fake_reads = 7;
	fake_asked = 0;
	/* Moving every time: every answer is asked, and is the new count. */
	for (int i = 0; i < 100; i++) {
		fake_reads++;
		assert_int_equal(sweep__reads_gate_ask(&g, fake_count), fake_reads);
	}
	assert_int_equal(fake_asked, 100);
	/* Standing still: after a streak, most answers are the last count, not asked. */
	fake_asked = 0;
	for (int i = 0; i < 1000; i++)
		assert_int_equal(sweep__reads_gate_ask(&g, fake_count), fake_reads);
	assert_true(fake_asked < 200);
	assert_true(fake_asked > 10); /* still sampled */
	/* It moves: within a sample's distance an answer shows it, and asking is exact again. */
	int64_t moved_to = ++fake_reads;
	int k = 0;
	while (sweep__reads_gate_ask(&g, fake_count) != moved_to)
		assert_true(++k < 100);
	fake_asked = 0;
	for (int i = 0; i < 10; i++) {
		fake_reads++;
		assert_int_equal(sweep__reads_gate_ask(&g, fake_count), fake_reads);
	}
	assert_int_equal(fake_asked, 10);
	/* No count kept (-errno): never taken for standing still. */
	sweep__reads_gate_init(&g);
	fake_reads = -EOPNOTSUPP;
	fake_asked = 0;
	for (int i = 0; i < 200; i++)
		assert_true(sweep__reads_gate_ask(&g, fake_count) < 0);
	assert_int_equal(fake_asked, 200);
}

static void test_backends(void **state)
{
	(void)state;
	enum sweep_backend be = sweep_backend_resolve(SWEEP_BACKEND_AUTO);
	static const unsigned depths[] = { 1, 3, 64, 0 };
	/* every request through io_uring, and cached inodes with plain calls: the same answers */
	for (size_t d = 0; d < 4; d++)
		for (int every = 0; every < 2; every++) {
			run(be, depths[d], AT_SYMLINK_NOFOLLOW, every);
			run(be, depths[d], 0, every);
		}
	assert_null(sweep__stat_batch_free(NULL));
}

int main(void)
{
	skip_unless_backend_usable();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_backends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cached, setup, teardown),
		cmocka_unit_test(test_reads_gate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
