/* SPDX-License-Identifier: MIT */
/*
 * extent.c through a fake ioctl: FIEMAP replies paged by fm_start, every
 * flag, broken replies, and the FIBMAP fallback when FIEMAP fails. Plus
 * sweep_data_map on a real sparse file, and sweep__data_cached (page cache
 * residency) on a real file, through cachestat and through its fallback.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "device.h"
#include "../common/backend.h"

/* ---- the fake ---- */

#define MAXEXT 512
static struct fiemap_extent script[MAXEXT];
static size_t nscript;
static int fiemap_errno;        /* nonzero: FIEMAP fails with it */
static int fibmap_errno;        /* nonzero: FIBMAP fails with it */
static int fiemap_overreport;   /* reply claims more extents than fit */
static int fiemap_broken_pager; /* ignores fm_start and never says LAST */
static int fiemap_calls, fibmap_calls;
static int saw_sync_flag;
static uint32_t fibmap_map[64]; /* logical block -> physical block (0 = hole) */

static int fake_ioctl(int fd, unsigned long req, void *arg)
{
	(void)fd;
	if (req == FS_IOC_FIEMAP) {
		struct fiemap *fm = arg;
		fiemap_calls++;
		if (fm->fm_flags & FIEMAP_FLAG_SYNC)
			saw_sync_flag = 1;
		if (fiemap_errno) {
			errno = fiemap_errno;
			return -1;
		}
		unsigned out = 0;
		for (size_t i = 0; i < nscript && out < fm->fm_extent_count; i++) {
			const struct fiemap_extent *e = &script[i];
			if (e->fe_logical + e->fe_length <= fm->fm_start && !fiemap_broken_pager)
				continue;
			fm->fm_extents[out] = *e;
			if (i == nscript - 1 && !fiemap_broken_pager)
				fm->fm_extents[out].fe_flags |= FIEMAP_EXTENT_LAST;
			out++;
		}
		fm->fm_mapped_extents = fiemap_overreport ? fm->fm_extent_count + 100 : out;
		return 0;
	}
	if (req == FIBMAP) {
		int *blk = arg;
		fibmap_calls++;
		if (fibmap_errno) {
			errno = fibmap_errno;
			return -1;
		}
		*blk = (*blk >= 0 && *blk < 64) ? (int)fibmap_map[*blk] : 0;
		return 0;
	}
	if (req == FIGETBSZ) {
		*(int *)arg = 4096;
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

static int tmpfd = -1;

static int setup(void **state)
{
	(void)state;
	nscript = 0;
	fiemap_errno = fibmap_errno = fiemap_overreport = fiemap_broken_pager = 0;
	fiemap_calls = fibmap_calls = saw_sync_flag = 0;
	memset(fibmap_map, 0, sizeof(fibmap_map));
	char name[] = "/tmp/sweep-test-extent.XXXXXX";
	tmpfd = mkstemp(name);
	assert_true(tmpfd >= 0);
	unlink(name);
	sweep__extent_set_ioctl(fake_ioctl);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sweep__extent_set_ioctl(NULL);
	close(tmpfd);
	return 0;
}

static void add(uint64_t logical, uint64_t physical, uint64_t length, uint32_t flags)
{
	script[nscript++] = (struct fiemap_extent){
		.fe_logical = logical, .fe_physical = physical, .fe_length = length, .fe_flags = flags
	};
}

/* ---- FIEMAP ---- */

/* 200 extents need several pages (extent.c asks for 64 at a time). */
static void test_paged(void **state)
{
	(void)state;
	for (uint64_t i = 0; i < 200; i++)
		add(i * 8192, 1000000 + i * 16384, 4096, 0);
	struct sweep_extent *ext = NULL;
	size_t n = 0;
	enum sweep_extent_source src = 0;
	assert_int_equal(sweep_extents_get(tmpfd, &ext, &n, &src), 0);
	assert_int_equal(src, SWEEP_EXTENT_FIEMAP);
	assert_int_equal(n, 200);
	assert_true(fiemap_calls >= 4);
	assert_false(saw_sync_flag);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(ext[i].logical, i * 8192);
		assert_int_equal(ext[i].physical, 1000000 + i * 16384);
		assert_int_equal(ext[i].length, 4096);
		assert_int_equal(ext[i].flags, i == 199 ? SWEEP_EXTENT_LAST : 0);
	}
	free(ext);
}

/* Each flag that means "no usable location" is mapped to NOLOC; others keep the location. */
static void test_flags(void **state)
{
	(void)state;
	static const uint32_t noloc[] = { FIEMAP_EXTENT_UNKNOWN, FIEMAP_EXTENT_DELALLOC, FIEMAP_EXTENT_ENCODED,
					  FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_NOT_ALIGNED,
					  FIEMAP_EXTENT_NOT_ALIGNED, FIEMAP_EXTENT_UNWRITTEN,
					  FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC };
	size_t k = sizeof(noloc) / sizeof(noloc[0]);
	for (size_t i = 0; i < k; i++)
		add(i * 4096, 4096 * (100 + i), 4096, noloc[i]);
	add(k * 4096, 777 * 4096, 4096, FIEMAP_EXTENT_SHARED);
	add((k + 1) * 4096, 900 * 4096, 4096, FIEMAP_EXTENT_MERGED);
	struct sweep_extent *ext;
	size_t n;
	assert_int_equal(sweep_extents_get(tmpfd, &ext, &n, NULL), 0);
	assert_int_equal(n, k + 2);
	for (size_t i = 0; i < k; i++) {
		assert_int_equal(ext[i].physical, SWEEP_NO_PHYS);
		assert_true(ext[i].flags & SWEEP_EXTENT_NOLOC);
	}
	assert_int_equal(ext[k].physical, 777 * 4096);
	assert_int_equal(ext[k].flags, SWEEP_EXTENT_SHARED);
	assert_int_equal(ext[k + 1].physical, 900 * 4096);
	assert_int_equal(ext[k + 1].flags, SWEEP_EXTENT_LAST);
	free(ext);

	/* The first located extent is the first one without such a flag. */
	uint64_t phys = 0;
	assert_int_equal(sweep_extent_first(tmpfd, &phys), 0);
	assert_int_equal(phys, 777 * 4096);
}

/* extent_first pages on when the first page holds only unlocated extents. */
static void test_first_pages_past_delalloc(void **state)
{
	(void)state;
	for (uint64_t i = 0; i < 100; i++)
		add(i * 4096, 0, 4096, FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN);
	add(100 * 4096, 5 * 4096, 4096, 0);
	uint64_t phys = 0;
	assert_int_equal(sweep_extent_first(tmpfd, &phys), 0);
	assert_int_equal(phys, 5 * 4096);
	assert_true(fiemap_calls > 1);
	assert_false(saw_sync_flag);
}

static void test_first_nodata(void **state)
{
	(void)state;
	uint64_t phys = 42;
	/* No extents at all (empty file). */
	assert_int_equal(sweep_extent_first(tmpfd, &phys), -ENODATA);
	struct sweep_extent *ext = (void *)1;
	size_t n = 7;
	assert_int_equal(sweep_extents_get(tmpfd, &ext, &n, NULL), 0);
	assert_int_equal(n, 0);
	free(ext);
	/* Only inline data. */
	add(0, 0, 60, FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_NOT_ALIGNED);
	assert_int_equal(sweep_extent_first(tmpfd, &phys), -ENODATA);
	assert_int_equal(phys, 42); /* untouched on failure */
}

/* A reply that claims more extents than the buffer holds must not overrun it. */
static void test_broken_reply(void **state)
{
	(void)state;
	add(0, 4096, 4096, 0);
	fiemap_overreport = 1;
	struct sweep_extent *ext;
	size_t n;
	assert_int_equal(sweep_extents_get(tmpfd, &ext, &n, NULL), 0);
	assert_true(n >= 1);
	assert_int_equal(ext[0].physical, 4096);
	free(ext);
}

/* A filesystem that ignores fm_start and never says LAST: the pager must stop, not loop. */
static void test_no_progress(void **state)
{
	(void)state;
	fiemap_broken_pager = 1;
	add(0, 4096, 4096, 0);
	add(4096, 8192, 4096, 0);
	struct sweep_extent *ext;
	size_t n;
	assert_int_equal(sweep_extents_get(tmpfd, &ext, &n, NULL), 0);
	assert_true(fiemap_calls <= 3);
	assert_true(n >= 2);
	free(ext);
	/* A zero-length extent is no progress either. */
	nscript = 0;
	fiemap_calls = 0;
	add(0, 4096, 0, 0);
	assert_int_equal(sweep_extents_get(tmpfd, &ext, &n, NULL), 0);
	assert_true(fiemap_calls <= 2);
	free(ext);
}

/* ---- FIBMAP fallback ---- */

static void test_fibmap_fallback(void **state)
{
	(void)state;
	static const int errs[] = { EOPNOTSUPP, ENOTTY, EINVAL, EIO };
	for (size_t t = 0; t < sizeof(errs) / sizeof(errs[0]); t++) {
		fiemap_errno = errs[t];
		/* 6 blocks, last partial: 0-1 contiguous at 100-101, hole at 2, 3-4 at 50-51, 5 at 300 */
		assert_int_equal(ftruncate(tmpfd, 5 * 4096 + 100), 0);
		/* real data at 0 too, so SEEK_DATA (which extent_first asks first) agrees with the fake map */
		assert_int_equal(pwrite(tmpfd, "d", 1, 0), 1);
		memset(fibmap_map, 0, sizeof(fibmap_map));
		fibmap_map[0] = 100;
		fibmap_map[1] = 101;
		fibmap_map[3] = 50;
		fibmap_map[4] = 51;
		fibmap_map[5] = 300;
		struct sweep_extent *ext;
		size_t n;
		enum sweep_extent_source src = 0;
		assert_int_equal(sweep_extents_get(tmpfd, &ext, &n, &src), 0);
		assert_int_equal(src, SWEEP_EXTENT_FIBMAP);
		assert_int_equal(n, 3);
		assert_int_equal(ext[0].logical, 0);
		assert_int_equal(ext[0].physical, 100 * 4096);
		assert_int_equal(ext[0].length, 2 * 4096);
		assert_int_equal(ext[1].logical, 3 * 4096);
		assert_int_equal(ext[1].physical, 50 * 4096);
		assert_int_equal(ext[1].length, 2 * 4096);
		assert_int_equal(ext[2].logical, 5 * 4096);
		assert_int_equal(ext[2].physical, 300 * 4096);
		assert_int_equal(ext[2].length, 100); /* trimmed to the size */
		assert_int_equal(ext[2].flags, SWEEP_EXTENT_LAST);
		free(ext);
		uint64_t phys;
		assert_int_equal(sweep_extent_first(tmpfd, &phys), 0);
		assert_int_equal(phys, 100 * 4096);
	}
}

/* FIBMAP on a file that is all hole: no data, found without asking block by block. */
static void test_fibmap_all_hole(void **state)
{
	(void)state;
	fiemap_errno = EOPNOTSUPP;
	assert_int_equal(ftruncate(tmpfd, 1 << 30), 0);
	uint64_t phys = 7;
	assert_int_equal(sweep_extent_first(tmpfd, &phys), -ENODATA);
	assert_int_equal(phys, 7);
	assert_true(fibmap_calls < 10);
}

/* Neither works: -EOPNOTSUPP and the out-parameters stay as they were. */
static void test_neither(void **state)
{
	(void)state;
	assert_int_equal(ftruncate(tmpfd, 8192), 0);
	assert_int_equal(pwrite(tmpfd, "d", 1, 0), 1); /* has data: FIBMAP must be asked */
	fiemap_errno = EOPNOTSUPP;
	fibmap_errno = EPERM; /* no CAP_SYS_RAWIO */
	struct sweep_extent *ext = (void *)1;
	size_t n = 99;
	enum sweep_extent_source src = 77;
	assert_int_equal(sweep_extents_get(tmpfd, &ext, &n, &src), -EOPNOTSUPP);
	assert_ptr_equal(ext, (void *)1);
	assert_int_equal(n, 99);
	assert_int_equal(src, 77);
	uint64_t phys = 5;
	assert_int_equal(sweep_extent_first(tmpfd, &phys), -EOPNOTSUPP);
	assert_int_equal(phys, 5);
	assert_int_equal(sweep_extents_get(tmpfd, NULL, &n, NULL), -EINVAL);
}

/* ---- the real ioctl and SEEK_DATA ---- */

static void test_real_file(void **state)
{
	(void)state;
	sweep__extent_set_ioctl(NULL);
	char buf[4096];
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 16; i++)
		assert_int_equal(write(tmpfd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_int_equal(fsync(tmpfd), 0);
	struct sweep_extent *ext;
	size_t n;
	enum sweep_extent_source src;
	int r = sweep_extents_get(tmpfd, &ext, &n, &src);
	if (r == -EOPNOTSUPP) {
		skip(); /* /tmp on a filesystem with neither (tmpfs) */
		return;
	}
	assert_int_equal(r, 0);
	assert_true(n >= 1);
	uint64_t covered = 0;
	for (size_t i = 0; i < n; i++)
		covered += ext[i].length;
	assert_true(covered >= 16 * 4096);
	uint64_t phys;
	assert_int_equal(sweep_extent_first(tmpfd, &phys), 0);
	assert_int_equal(phys, ext[0].physical);
	free(ext);
}

static void test_data_map(void **state)
{
	(void)state;
	sweep__extent_set_ioctl(NULL);
	char buf[4096];
	memset(buf, 'y', sizeof(buf));
	/* data at [0,4K) and [1M,1M+4K), a hole between, size 2M */
	assert_int_equal(pwrite(tmpfd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(pwrite(tmpfd, buf, sizeof(buf), 1 << 20), (ssize_t)sizeof(buf));
	assert_int_equal(ftruncate(tmpfd, 2 << 20), 0);
	struct sweep_extent *map;
	size_t n;
	assert_int_equal(sweep_data_map(tmpfd, 2 << 20, &map, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(map[0].logical, 0);
	assert_true(map[0].length >= 4096 && map[0].length < (1 << 20));
	assert_int_equal(map[1].logical, 1 << 20);
	assert_true(map[1].length >= 4096 && map[1].logical + map[1].length <= (2 << 20));
	assert_int_equal(map[0].physical, SWEEP_NO_PHYS);
	assert_true(map[1].flags & SWEEP_EXTENT_LAST);
	free(map);
	/* A size limit cuts the map. */
	assert_int_equal(sweep_data_map(tmpfd, 100, &map, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(map[0].length, 100);
	free(map);
	/* All hole. */
	assert_int_equal(ftruncate(tmpfd, 0), 0);
	assert_int_equal(ftruncate(tmpfd, 1 << 20), 0);
	assert_int_equal(sweep_data_map(tmpfd, 1 << 20, &map, &n), 0);
	assert_int_equal(n, 0);
	free(map);
	assert_int_equal(sweep_data_map(-1, 10, &map, &n), -EBADF);
}

/* ---- page cache residency ---- */

static int fake_cs_ret;       /* nonzero: cachestat fails with it */
static uint64_t fake_cs_pages; /* else: the pages it says are cached, whatever the range */
static int fake_cs_calls;

static int fake_cachestat(int fd, uint64_t off, uint64_t len, uint64_t *ret_pages)
{
	(void)fd, (void)off, (void)len;
	fake_cs_calls++;
	if (fake_cs_ret)
		return fake_cs_ret;
	*ret_pages = fake_cs_pages;
	return 0;
}

/* 1 when the filesystem of /tmp drops clean pages on DONTNEED (not tmpfs). */
static int drops_pages(void)
{
	return sweep__data_cached(tmpfd, 1) == 0;
}

/*
 * A file of three pages and a bit, written, synced and read: cached;
 * dropped, or partly read back: not (where the filesystem drops pages).
 */
static void check_dense(long ps)
{
	size_t size = 3 * (size_t)ps + 100;
	char *buf = malloc(size);

	assert_non_null(buf);
	memset(buf, 'z', size);
	assert_int_equal(ftruncate(tmpfd, 0), 0);
	assert_int_equal(pwrite(tmpfd, buf, size, 0), (ssize_t)size);
	assert_int_equal(fsync(tmpfd), 0);
	assert_int_equal(pread(tmpfd, buf, size, 0), (ssize_t)size);
	assert_int_equal(sweep__data_cached(tmpfd, size), 1);
	/* The whole file: a part of a large folio is not dropped. */
	assert_int_equal(posix_fadvise(tmpfd, 0, 0, POSIX_FADV_DONTNEED), 0);
	if (drops_pages()) {
		assert_int_equal(sweep__data_cached(tmpfd, size), 0);
		/* One page back (no read-ahead) is not the whole file. */
		assert_int_equal(posix_fadvise(tmpfd, 0, 0, POSIX_FADV_RANDOM), 0);
		assert_int_equal(pread(tmpfd, buf, 1, 0), 1);
		assert_int_equal(posix_fadvise(tmpfd, 0, 0, POSIX_FADV_NORMAL), 0);
		assert_int_equal(sweep__data_cached(tmpfd, size), 0);
	} else {
		printf("the filesystem of /tmp keeps dropped pages (tmpfs): only 'cached' is checked\n");
	}
	/* Read again: whole again. */
	assert_int_equal(pread(tmpfd, buf, size, 0), (ssize_t)size);
	assert_int_equal(sweep__data_cached(tmpfd, size), 1);
	free(buf);
}

/* A sparse file whose data was read and whose hole was not (as the reader reads it): cached. */
static void check_sparse(void)
{
	char buf[4096];
	const off_t size = 2 << 20;

	memset(buf, 's', sizeof(buf));
	assert_int_equal(ftruncate(tmpfd, 0), 0);
	assert_int_equal(pwrite(tmpfd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(pwrite(tmpfd, buf, sizeof(buf), 1 << 20), (ssize_t)sizeof(buf));
	assert_int_equal(ftruncate(tmpfd, size), 0);
	assert_int_equal(fsync(tmpfd), 0);
	assert_int_equal(posix_fadvise(tmpfd, 0, 0, POSIX_FADV_DONTNEED), 0);
	if (!drops_pages() || lseek(tmpfd, 0, SEEK_HOLE) >= size) {
		printf("no holes or no dropping on /tmp: the sparse case is not checked\n");
		return;
	}
	assert_int_equal(sweep__data_cached(tmpfd, (uint64_t)size), 0);
	assert_int_equal(posix_fadvise(tmpfd, 0, 0, POSIX_FADV_RANDOM), 0);
	assert_int_equal(pread(tmpfd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(sweep__data_cached(tmpfd, (uint64_t)size), 0); /* the second region is not */
	assert_int_equal(pread(tmpfd, buf, sizeof(buf), 1 << 20), (ssize_t)sizeof(buf));
	assert_int_equal(sweep__data_cached(tmpfd, (uint64_t)size), 1);
	assert_int_equal(posix_fadvise(tmpfd, 0, 0, POSIX_FADV_NORMAL), 0);
}

static void test_data_cached(void **state)
{
	long ps = sysconf(_SC_PAGESIZE);

	(void)state;
	/* The kernel's answer (cachestat, or mincore before 6.5) on a file we own. */
	check_dense(ps);
	check_sparse();
	/* The same through mincore, as on a kernel without cachestat. */
	sweep__extent_set_cachestat(fake_cachestat);
	fake_cs_ret = -ENOSYS;
	check_dense(ps);
	check_sparse();
	/* Refused (another user's file on 6.5+): unknown, never 'cached'. */
	fake_cs_ret = -EPERM;
	assert_int_equal(sweep__data_cached(tmpfd, 100), -EPERM);
	/* Pages counted against the size, rounded up to a page (the file is dense now). */
	char page[4096] = { 0 };
	assert_int_equal(ftruncate(tmpfd, 0), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pwrite(tmpfd, page, sizeof(page), (off_t)i * ps), (ssize_t)sizeof(page));
	assert_int_equal(fsync(tmpfd), 0);
	fake_cs_ret = 0;
	fake_cs_pages = 3;
	assert_int_equal(sweep__data_cached(tmpfd, 3 * (uint64_t)ps), 1);
	assert_int_equal(sweep__data_cached(tmpfd, 3 * (uint64_t)ps + 1), 0);
	/* Nothing to be cached: cached, without asking. */
	fake_cs_calls = 0;
	assert_int_equal(sweep__data_cached(tmpfd, 0), 1);
	assert_int_equal(fake_cs_calls, 0);
	sweep__extent_set_cachestat(NULL);
}

int main(void)
{
	skip_unless_backend_usable();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_paged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_pages_past_delalloc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_nodata, setup, teardown),
		cmocka_unit_test_setup_teardown(test_broken_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_progress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fibmap_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fibmap_all_hole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_neither, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_data_map, setup, teardown),
		cmocka_unit_test_setup_teardown(test_data_cached, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
