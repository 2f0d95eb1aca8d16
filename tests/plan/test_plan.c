/* SPDX-License-Identifier: MIT */
/* plan: sort orders, the stable tie-break, flush bounds, memory per entry. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "plan.h"

static struct sweep_stat fake_st(uint64_t dev, uint64_t ino, uint64_t size)
{
	struct sweep_stat st;

	memset(&st, 0, sizeof(st));
	st.dev = dev;
	st.ino = ino;
	st.size = size;
	st.mode = S_IFREG | 0644;
	return st;
}

static struct sweep_plan *new_plan(enum sweep_order order, size_t max_entries, size_t max_bytes)
{
	struct sweep_plan_opts o = { .size = sizeof(o), .order = order,
				     .max_entries = max_entries, .max_bytes = max_bytes };
	struct sweep_plan *p = NULL;

	assert_int_equal(sweep_plan_new(&o, &p), 0);
	assert_non_null(p);
	return p;
}

static void add(struct sweep_plan *p, const char *path, uint64_t ino, uint64_t phys, uint64_t cookie)
{
	struct sweep_stat st = fake_st(1, ino, 100);
	int rc = sweep_plan_add_located(p, path, &st, phys, cookie);

	assert_true(rc == 0 || rc == 1);
}

/* The cookies of the plan in its current order must be want[0..n). */
static void expect_cookies(struct sweep_plan *p, const uint64_t *want, size_t n)
{
	assert_int_equal(sweep_plan_count(p), n);
	for (size_t i = 0; i < n; i++) {
		const struct sweep_plan_entry *e = sweep_plan_entry(p, i);
		assert_non_null(e);
		if (e->cookie != want[i])
			fail_msg("position %zu: cookie %llu, want %llu (%s)", i, (unsigned long long)e->cookie,
				 (unsigned long long)want[i], e->path);
	}
	assert_null(sweep_plan_entry(p, n));
}

static void test_physical_order(void **state)
{
	(void)state;
	struct sweep_plan *p = new_plan(SWEEP_ORDER_PHYSICAL, 0, 0);

	add(p, "a", 50, 8192, 0);
	add(p, "b", 10, SWEEP_NO_PHYS, 1); /* unknown: after located ones, by inode */
	add(p, "c", 40, 4096, 2);
	add(p, "d", 5, SWEEP_NO_PHYS, 3);
	add(p, "e", 30, 8192, 4);  /* same block as "a": inode breaks the tie */
	add(p, "f", 30, 8192, 5);  /* same block and inode as "e" (a hard link): order added */
	add(p, "g", 1, 0, 6);
	assert_int_equal(sweep_plan_sort(p), 0);
	const uint64_t want[] = { 6, 2, 4, 5, 0, 3, 1 };
	expect_cookies(p, want, 7);
	assert_int_equal(sweep_plan_order(p), SWEEP_ORDER_PHYSICAL);
	sweep_plan_free(p);
}

static void test_physical_devices(void **state)
{
	(void)state;
	struct sweep_plan *p = new_plan(SWEEP_ORDER_PHYSICAL, 0, 0);
	struct sweep_stat a = fake_st(2, 1, 10), b = fake_st(1, 2, 10), c = fake_st(1, 3, 10);

	/* Offsets on different devices do not compare: one device after the other. */
	assert_int_equal(sweep_plan_add_located(p, "dev2", &a, 0, 0), 0);
	assert_int_equal(sweep_plan_add_located(p, "dev1-far", &b, 1 << 30, 1), 0);
	assert_int_equal(sweep_plan_add_located(p, "dev1-near", &c, 4096, 2), 0);
	sweep_plan_sort(p);
	const uint64_t want[] = { 2, 1, 0 };
	expect_cookies(p, want, 3);
	sweep_plan_free(p);
}

static void test_inode_order(void **state)
{
	(void)state;
	struct sweep_plan *p = new_plan(SWEEP_ORDER_INODE, 0, 0);

	add(p, "x", 9, 0, 0);
	add(p, "y", 3, 999999, 1);
	add(p, "z", 9, 0, 2);
	add(p, "w", 1, 5, 3);
	sweep_plan_sort(p);
	const uint64_t want[] = { 3, 1, 0, 2 };
	expect_cookies(p, want, 4);
	sweep_plan_free(p);
}

static void test_name_order(void **state)
{
	(void)state;
	struct sweep_plan *p = new_plan(SWEEP_ORDER_NAME, 0, 0);

	add(p, "b/\xff", 1, 0, 0); /* bytewise: 0xff sorts after every ASCII byte */
	add(p, "b/a", 2, 0, 1);
	add(p, "B", 3, 0, 2);
	add(p, "a b", 4, 0, 3);
	add(p, "a", 6, 0, 4);
	add(p, "a", 5, 0, 5); /* same name twice: inode decides */
	sweep_plan_sort(p);
	const uint64_t want[] = { 2, 5, 4, 3, 1, 0 };
	expect_cookies(p, want, 6);
	sweep_plan_free(p);
}

static void test_none_order(void **state)
{
	(void)state;
	struct sweep_plan *p = new_plan(SWEEP_ORDER_NONE, 0, 0);
	uint64_t want[50];

	for (unsigned i = 0; i < 50; i++) {
		char name[16];
		snprintf(name, sizeof(name), "f%u", 49 - i);
		add(p, name, 1000 - i, i * 7 % 13, i);
		want[i] = i;
	}
	sweep_plan_sort(p);
	expect_cookies(p, want, 50);
	sweep_plan_free(p);
}

/* Random keys in quantity, with many ties: the result must be sorted and stable. */
static void test_many_sorted_stable(void **state)
{
	(void)state;
	struct sweep_plan *p = new_plan(SWEEP_ORDER_PHYSICAL, 0, 0);
	const size_t n = 5000;
	unsigned seed = 12345;

	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		uint64_t phys = (seed >> 16) % 64 == 0 ? SWEEP_NO_PHYS : ((seed >> 16) % 200) * 4096;
		seed = seed * 1103515245u + 12345u;
		add(p, "same/path", (seed >> 16) % 50, phys, i);
	}
	sweep_plan_sort(p);
	assert_int_equal(sweep_plan_count(p), n);
	for (size_t i = 1; i < n; i++) {
		const struct sweep_plan_entry *a = sweep_plan_entry(p, i - 1), *b = sweep_plan_entry(p, i);
		assert_true(a->phys <= b->phys);
		if (a->phys == b->phys) {
			assert_true(a->ino <= b->ino);
			if (a->ino == b->ino)
				assert_true(a->cookie < b->cookie);
		}
	}
	sweep_plan_free(p);
}

static void test_entry_bound(void **state)
{
	(void)state;
	struct sweep_plan *p = new_plan(SWEEP_ORDER_INODE, 3, 0);
	struct sweep_stat st = fake_st(1, 7, 1);

	assert_int_equal(sweep_plan_add_located(p, "1", &st, 0, 0), 0);
	assert_int_equal(sweep_plan_add_located(p, "2", &st, 0, 1), 0);
	assert_int_equal(sweep_plan_add_located(p, "3", &st, 0, 2), 1);
	assert_int_equal(sweep_plan_count(p), 3);
	/* The caller flushes: sort, read, clear. The next batch starts empty and keeps the bound. */
	sweep_plan_sort(p);
	sweep_plan_clear(p);
	assert_int_equal(sweep_plan_count(p), 0);
	assert_int_equal(sweep_plan_memory(p), 0);
	assert_null(sweep_plan_entry(p, 0));
	assert_int_equal(sweep_plan_add_located(p, "4", &st, 0, 3), 0);
	assert_int_equal(sweep_plan_add_located(p, "5", &st, 0, 4), 0);
	assert_int_equal(sweep_plan_add_located(p, "6", &st, 0, 5), 1);
	sweep_plan_sort(p);
	const uint64_t want[] = { 3, 4, 5 };
	expect_cookies(p, want, 3);
	assert_string_equal(sweep_plan_entry(p, 0)->path, "4");
	sweep_plan_free(p);
}

static void test_byte_bound(void **state)
{
	(void)state;
	const size_t limit = 64 * 1024;
	struct sweep_plan *p = new_plan(SWEEP_ORDER_PHYSICAL, 0, limit);
	struct sweep_stat st = fake_st(1, 1, 1);
	char path[128];
	size_t added = 0, batches = 0, total = 0;

	/* Flush whenever told to: every batch is within the bound plus the one entry that crossed it. */
	for (unsigned i = 0; i < 3000; i++) {
		snprintf(path, sizeof(path), "some/directory/name/file-%06u.txt", i);
		int rc = sweep_plan_add_located(p, path, &st, 4096u * (3000 - i), i);
		assert_true(rc == 0 || rc == 1);
		added++;
		if (rc == 1) {
			assert_true(sweep_plan_memory(p) >= limit);
			assert_true(sweep_plan_memory(p) < limit + 256);
			sweep_plan_sort(p);
			/* sorted within the batch */
			for (size_t k = 1; k < sweep_plan_count(p); k++)
				assert_true(sweep_plan_entry(p, k - 1)->phys < sweep_plan_entry(p, k)->phys);
			total += sweep_plan_count(p);
			batches++;
			sweep_plan_clear(p);
		} else {
			assert_true(sweep_plan_memory(p) < limit);
		}
	}
	total += sweep_plan_count(p);
	assert_int_equal(total, added);
	assert_true(batches >= 3);
	sweep_plan_free(p);
}

/* Pointers from sweep_plan_entry() stay valid while more files are added. */
static void test_entry_pointers_stable(void **state)
{
	(void)state;
	struct sweep_plan *p = new_plan(SWEEP_ORDER_NONE, 0, 0);
	struct sweep_stat st = fake_st(1, 1, 1);
	const struct sweep_plan_entry *first;

	assert_int_equal(sweep_plan_add_located(p, "first", &st, 0, 0), 0);
	first = sweep_plan_entry(p, 0);
	for (unsigned i = 1; i < 5000; i++)
		assert_int_equal(sweep_plan_add_located(p, "more", &st, 0, i), 0);
	assert_ptr_equal(first, sweep_plan_entry(p, 0));
	assert_string_equal(first->path, "first");
	sweep_plan_free(p);
}

/* Memory per entry with paths of a realistic length (the measured value is printed). */
static void test_bytes_per_entry(void **state)
{
	(void)state;
	struct sweep_plan *p = new_plan(SWEEP_ORDER_PHYSICAL, 0, 0);
	struct sweep_stat st = fake_st(1, 1, 1);
	char path[128];
	size_t pathbytes = 0;
	const unsigned n = 20000;

	for (unsigned i = 0; i < n; i++) {
		/* 55-byte paths: about the mean of /usr/share on Debian */
		snprintf(path, sizeof(path), "/usr/share/doc/package-%05u/examples/file-%05u.txt", i / 10, i);
		pathbytes += strlen(path) + 1;
		assert_int_equal(sweep_plan_add_located(p, path, &st, i, i), 0);
	}
	size_t per = sweep_plan_memory(p) / n;
	print_message("plan: %zu bytes per entry with %zu-byte paths\n", per, pathbytes / n);
	assert_true(per <= 200);
	/* and the accounting is honest: at least the entry, its index and its path */
	assert_true(sweep_plan_memory(p) >= n * (sizeof(struct sweep_plan_entry) + 4) + pathbytes);
	sweep_plan_free(p);
}

static void test_args(void **state)
{
	(void)state;
	struct sweep_plan *p = NULL;
	struct sweep_plan_opts bad = { .size = 4 };
	struct sweep_plan_opts badorder = { .size = sizeof(badorder), .order = 99 };
	struct sweep_stat st = fake_st(1, 1, 1);

	assert_int_equal(sweep_plan_new(&bad, &p), -EINVAL);
	assert_int_equal(sweep_plan_new(&badorder, &p), -EINVAL);
	assert_null(p);
	assert_int_equal(sweep_plan_new(NULL, &p), 0); /* NULL options: AUTO, no bounds */
	assert_int_equal(sweep_plan_add_located(p, NULL, &st, 0, 0), -EINVAL);
	assert_int_equal(sweep_plan_add_located(p, "x", NULL, 0, 0), -EINVAL);
	assert_int_equal(sweep_plan_count(p), 0);
	assert_null(sweep_plan_free(p));
	assert_null(sweep_plan_free(NULL));
}

/* sweep_plan_add on real files: AUTO resolves, PHYSICAL looks locations up, EXTENTS keeps them. */
static void test_add_real_files(void **state)
{
	(void)state;
	char dir[] = "/tmp/sweep-plan-test.XXXXXX";
	struct sweep_plan_opts o = { .size = sizeof(o), .order = SWEEP_ORDER_AUTO, .flags = SWEEP_PLAN_EXTENTS };
	struct sweep_plan *p = NULL;
	char buf[8192];
	int dfd;

	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof(name), "f%d", i);
		int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, buf, (size_t)(i * 2000)), i * 2000);
		fsync(fd); /* give delayed allocation a location */
		close(fd);
	}
	assert_int_equal(sweep_plan_new(&o, &p), 0);
	for (int i = 0; i < 4; i++) {
		char name[8], path[64];
		struct stat raw;
		struct sweep_stat st;
		snprintf(name, sizeof(name), "f%d", i);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		assert_int_equal(fstatat(dfd, name, &raw, 0), 0);
		sweep_stat_from_stat(&st, &raw);
		assert_int_equal(sweep_plan_add(p, dfd, name, path, &st, (uint64_t)i), 0);
	}
	/* the missing file is still planned (the reader will report it) */
	struct sweep_stat gone = fake_st(1, 999999, 5);
	assert_int_equal(sweep_plan_add(p, dfd, "missing", "missing", &gone, 9), 0);
	assert_int_not_equal(sweep_plan_order(p), SWEEP_ORDER_AUTO);
	assert_int_equal(sweep_plan_sort(p), 0);
	assert_int_equal(sweep_plan_count(p), 5);
	for (size_t i = 0; i < 5; i++) {
		const struct sweep_plan_entry *e = sweep_plan_entry(p, i);
		if (e->cookie == 9 || e->cookie == 0) {
			assert_int_equal(e->phys, SWEEP_NO_PHYS); /* missing, and empty */
			continue;
		}
		int fd = openat(dfd, e->path + strlen(dir) + 1, O_RDONLY | O_CLOEXEC);
		uint64_t first;
		assert_true(fd >= 0);
		if (sweep_extent_first(fd, &first) == 0) {
			assert_int_equal(e->phys, first);
			assert_true(e->nextents >= 1);
			assert_int_equal(e->extents[0].physical, first);
		}
		close(fd);
	}
	sweep_plan_free(p);
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof(name), "f%d", i);
		unlinkat(dfd, name, 0);
	}
	close(dfd);
	rmdir(dir);
}

/* n files of a few KiB each, name%d, in directory dir (made); their paths into paths[] */
static void make_files(char *dir, const char *name, int n, char paths[][128])
{
	char buf[3000];

	assert_non_null(mkdtemp(dir));
	memset(buf, 'y', sizeof(buf));
	for (int i = 0; i < n; i++) {
		snprintf(paths[i], 128, "%.64s/%.40s%d", dir, name, i);
		int fd = open(paths[i], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, buf, sizeof(buf) - (size_t)i), (ssize_t)(sizeof(buf) - (size_t)i));
		fsync(fd);
		close(fd);
	}
}

/*
 * A plan over two devices keeps each one's profile: a disk-class ext4 (or
 * any filesystem with locations) sorted by first block, tmpfs (no device:
 * nothing to sort) as added, one device after the other; the reader asks
 * the plan for each device's profile.
 */
static void test_devices_profiles(void **state)
{
	(void)state;
	const char *build = getenv("BUILD_ROOT");
	char disk[256], mem[] = "/dev/shm/sweep-plan-devs.XXXXXX";
	char dpaths[8][128], mpaths[8][128];
	struct sweep_fsinfo dfi = { .size = sizeof(dfi) }, mfi = { .size = sizeof(mfi) };

	assert_int_equal(sweep_device_force(SWEEP_DEVICE_HDD), 0);
	snprintf(disk, sizeof(disk), "%s/sweep-plan-devs.XXXXXX", build ? build : ".");
	if (sweep_fsinfo_path(build ? build : ".", &dfi) < 0 || dfi.profile.plan_order != SWEEP_ORDER_PHYSICAL ||
	    sweep_fsinfo_path("/dev/shm", &mfi) < 0 || strcmp(mfi.fs_name, "tmpfs") != 0) {
		assert_int_equal(sweep_device_force(SWEEP_DEVICE_AUTO), 0);
		skip(); /* needs a filesystem with locations and a tmpfs */
	}
	make_files(disk, "d", 8, dpaths);
	make_files(mem, "m", 8, mpaths);
	struct sweep_plan *p = new_plan(SWEEP_ORDER_AUTO, 0, 0);
	for (int i = 0; i < 8; i++) {
		struct stat raw;
		struct sweep_stat st;
		assert_int_equal(stat(mpaths[7 - i], &raw), 0);
		sweep_stat_from_stat(&st, &raw);
		assert_int_equal(sweep_plan_add(p, AT_FDCWD, mpaths[7 - i], mpaths[7 - i], &st, 100 + (uint64_t)(7 - i)), 0);
		assert_int_equal(stat(dpaths[i], &raw), 0);
		sweep_stat_from_stat(&st, &raw);
		assert_int_equal(sweep_plan_add(p, AT_FDCWD, dpaths[i], dpaths[i], &st, (uint64_t)i), 0);
	}
	assert_int_equal(sweep_plan_order(p), SWEEP_ORDER_NONE); /* the first file's device: tmpfs */
	const struct sweep_profile *dp = sweep__plan_profile(p, dfi.dev), *mp = sweep__plan_profile(p, mfi.dev);
	assert_non_null(dp);
	assert_non_null(mp);
	assert_int_equal(dp->plan_order, SWEEP_ORDER_PHYSICAL);
	assert_int_equal(dp->prefetch, 1);
	assert_int_equal(mp->plan_order, SWEEP_ORDER_NONE);
	assert_int_equal(mp->queue_depth, 128); /* the class is forced: a disk's queue, but nothing to sort */
	assert_null(sweep__plan_profile(p, 12345));
	assert_int_equal(sweep_plan_sort(p), 0);

	/* one device after the other; the disk's files by first block, tmpfs's as added (cookies 107 .. 100) */
	size_t switches = 0;
	uint64_t last_phys = 0, next_mem = 107;
	for (size_t i = 0; i < 16; i++) {
		const struct sweep_plan_entry *e = sweep_plan_entry(p, i);
		if (i && e->dev != sweep_plan_entry(p, i - 1)->dev)
			switches++;
		if (e->dev == mfi.dev) {
			assert_int_equal(e->cookie, next_mem--);
			assert_int_equal(e->phys, SWEEP_NO_PHYS); /* not looked up */
		} else {
			assert_int_equal(e->dev, dfi.dev);
			assert_true(e->phys != SWEEP_NO_PHYS && e->phys >= last_phys);
			last_phys = e->phys;
		}
	}
	assert_int_equal(switches, 1);
	sweep_plan_free(p);
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_AUTO), 0);
	for (int i = 0; i < 8; i++) {
		unlink(dpaths[i]);
		unlink(mpaths[i]);
	}
	rmdir(disk);
	rmdir(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_physical_order),
		cmocka_unit_test(test_physical_devices),
		cmocka_unit_test(test_inode_order),
		cmocka_unit_test(test_name_order),
		cmocka_unit_test(test_none_order),
		cmocka_unit_test(test_many_sorted_stable),
		cmocka_unit_test(test_entry_bound),
		cmocka_unit_test(test_byte_bound),
		cmocka_unit_test(test_entry_pointers_stable),
		cmocka_unit_test(test_bytes_per_entry),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_add_real_files),
		cmocka_unit_test(test_devices_profiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
