/* SPDX-License-Identifier: MIT */
/*
 * SWEEP_PLAN_CACHE_CHECK on real files: a batch whose data is in the page
 * cache is not located (only a sample of it is opened), is sorted by inode
 * and is still read whole and exactly; the same batch evicted from the
 * cache is planned as without the flag (the same order and locations, every
 * file located once) and read exactly. With SWEEP_PLAN_LOCATE the caller
 * wants locations, so a cached batch is located and sorted by them anyway.
 * A batch whose data is cached is read through a small ring (WARM_RING),
 * a cold one through its device profile's, in the HDD class and in the
 * SSD class (where the plan locates nothing and only samples the cache).
 *
 * Needs a filesystem that gives locations (FIEMAP) and drops clean pages on
 * POSIX_FADV_DONTNEED, and a kernel that tells what is cached: the files are
 * made under TMPDIR (else /tmp), and the test skips (77) where that fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "read.h"

#define NFILES 200
#define SAMPLE_MAX 16 /* plan.c's CACHE_SAMPLE: the most files a cached batch may open */
#define WARM_RING (1u << 20) /* reader.c's: the ring of a batch found in the page cache */
#define BUFFER (1u << 20)    /* reader.c's DEFAULT_BUFFER: the ring is at most queue depth times it */

static char dir[256];
static int dfd = -1;
static uint64_t sizes[NFILES];

static unsigned char pattern(unsigned file, uint64_t off)
{
	return (unsigned char)(file * 31u + off * 7u + (off >> 9));
}

static void name_of(unsigned i, char *buf, size_t len)
{
	snprintf(buf, len, "f%03u", i);
}

static int write_file(unsigned i)
{
	char name[16];
	unsigned char buf[4096];
	int fd, ok = 1;

	name_of(i, name, sizeof(name));
	fd = openat(dfd, name, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (uint64_t off = 0; off < sizes[i] && ok;) {
		size_t n = sizes[i] - off < sizeof(buf) ? (size_t)(sizes[i] - off) : sizeof(buf);
		for (size_t j = 0; j < n; j++)
			buf[j] = pattern(i, off + j);
		ok = write(fd, buf, n) == (ssize_t)n;
		off += n;
	}
	/* Each file gets its blocks now, in this (shuffled) order: locations then differ from inode order. */
	ok = ok && fsync(fd) == 0;
	close(fd);
	return ok ? 0 : -1;
}

/* Every file's pages in (1) or out (0) of the page cache; -1 when the filesystem does not do it. */
static int set_cached(int in)
{
	for (unsigned i = 0; i < NFILES; i++) {
		char name[16], buf[65536];
		int fd, r;

		name_of(i, name, sizeof(name));
		fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		if (in)
			while (read(fd, buf, sizeof(buf)) > 0)
				;
		else
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		r = sweep__data_cached(fd, sizes[i]);
		close(fd);
		if (r != in && sizes[i] > 0) /* an empty file is always cached */
			return -1;
	}
	return 0;
}

static void skip_test(const char *why)
{
	printf("SKIP: %s\n", why);
	exit(77);
}

static void cleanup(void)
{
	char cmd[320];

	if (dfd >= 0)
		close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (dir[0] && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static void make_tree(void)
{
	const char *tmp = getenv("TMPDIR");
	unsigned order[NFILES];
	uint64_t phys;
	int fd;

	snprintf(dir, sizeof(dir), "%s/sweep-plan-cache.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		skip_test("no temporary directory");
	atexit(cleanup);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		skip_test("cannot open the temporary directory");
	/* Inodes first, in name order; then the data in a shuffled order. */
	for (unsigned i = 0; i < NFILES; i++) {
		char name[16];
		name_of(i, name, sizeof(name));
		sizes[i] = i % 10 == 0 ? 0 : 1 + (uint64_t)i * 7919 % 40000;
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			skip_test("cannot create files");
		close(fd);
		order[i] = i;
	}
	srand(7);
	for (unsigned i = NFILES - 1; i > 0; i--) {
		unsigned j = (unsigned)rand() % (i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (unsigned i = 0; i < NFILES; i++)
		if (write_file(order[i]) < 0)
			skip_test("cannot write files");
	fd = openat(dfd, "f001", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || sweep_extent_first(fd, &phys) < 0)
		skip_test("the filesystem gives no locations");
	close(fd);
	if (set_cached(0) < 0)
		skip_test("cannot drop files from the page cache, or cannot tell");
	if (set_cached(1) < 0)
		skip_test("cannot tell that files are in the page cache");
}

/* One batch: its order, locations and whether it was found cached; what the read delivered. */
struct run {
	uint64_t order[NFILES], phys[NFILES], ino[NFILES];
	size_t n;
	bool cached, warm, no_read;
	size_t profile_ring; /* the ring the device's profile gives a cold batch */
	size_t ring;         /* the ring the reader set up */
	uint64_t got[NFILES]; /* bytes delivered, each checked against the pattern */
	int ends[NFILES], bad_status, bad_bytes;
	uint64_t located; /* files the plan opened to locate them */
	uint64_t prefetched; /* pieces the reader's physical-order prefetch asked for */
};

static int r_batch(const struct sweep_plan *p, void *ctx)
{
	struct run *r = ctx;

	r->n = sweep_plan_count(p);
	for (size_t i = 0; i < r->n && i < NFILES; i++) {
		const struct sweep_plan_entry *e = sweep_plan_entry(p, i);
		r->order[i] = e->cookie;
		r->phys[i] = e->phys;
		r->ino[i] = e->ino;
	}
	r->cached = sweep__plan_cached(p);
	r->warm = sweep__plan_warm(p);
	const struct sweep_profile *prof = sweep__plan_profile(p, sweep_plan_entry(p, 0)->dev);
	assert_non_null(prof);
	/* The reader's setup, cold: a ring for the queue depth (one read at a time on plain reads), within the profile's. */
	bool plain = sweep_backend_resolve(SWEEP_BACKEND_AUTO) != SWEEP_BACKEND_URING;
	r->profile_ring = plain ? BUFFER : (size_t)prof->queue_depth * BUFFER;
	if (r->profile_ring > prof->ring_bytes)
		r->profile_ring = prof->ring_bytes;
	return r->no_read ? SWEEP_BATCH_NO_READ : 0;
}

static int r_data(const struct sweep_file *f, uint64_t off, const void *buf, size_t len, void *ctx)
{
	struct run *r = ctx;
	unsigned i = (unsigned)f->entry->cookie;
	const unsigned char *b = buf;

	if (off != r->got[i])
		r->bad_bytes++;
	for (size_t j = 0; j < len; j++)
		if (b[j] != pattern(i, off + j)) {
			r->bad_bytes++;
			break;
		}
	r->got[i] = off + len;
	return 0;
}

static int r_end(const struct sweep_file *f, int status, void *ctx)
{
	struct run *r = ctx;

	r->ends[f->entry->cookie]++;
	if (status != 0)
		r->bad_status++;
	return 0;
}

static const struct sweep_read_ops ops = { .size = sizeof(ops), .data = r_data, .end = r_end };

static void run_batch_in(enum sweep_order order, unsigned plan_flags, struct run *r)
{
	/* io_uring where it works: the reader's prefetch in physical order runs only there (HDD class). */
	struct sweep_batch_opts bo = { .size = sizeof(bo), .order = order, .plan_flags = plan_flags,
				       .backend = sweep_backend_resolve(SWEEP_BACKEND_AUTO), .ops = &ops,
				       .on_batch = r_batch, .ctx = r };
	uint64_t pf = sweep__reader_prefetch_pieces();
	struct sweep__plan_stats before, after;
	struct sweep_batch *b = NULL;

	sweep__plan_totals(&before);
	assert_int_equal(sweep_batch_new(&bo, &b), 0);
	for (unsigned i = 0; i < NFILES; i++) {
		char name[16], path[300];
		struct stat raw;
		struct sweep_stat st;

		name_of(i, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		assert_int_equal(fstatat(dfd, name, &raw, AT_SYMLINK_NOFOLLOW), 0);
		sweep_stat_from_stat(&st, &raw);
		/* Reached beneath a root: the batch locates it when it sorts. */
		assert_int_equal(sweep_batch_add_beneath(b, dfd, name, path, &st, i), 0);
	}
	assert_int_equal(sweep_batch_flush(b), 0);
	sweep_batch_free(b);
	sweep__plan_totals(&after);
	r->located = after.located - before.located;
	r->prefetched = sweep__reader_prefetch_pieces() - pf;
	r->ring = sweep__reader_last_ring();
	assert_int_equal(r->n, NFILES);
}

struct walked {
	struct sweep_batch *b;
	int bad;
};

static int w_entry(const struct sweep_entry *e, void *ctx)
{
	struct walked *w = ctx;
	const char *base = strrchr(e->path, '/');

	if (e->stat_err || !S_ISREG(e->st.mode))
		return 0;
	/* The file's number from its name: the cookie the checks use. */
	if (sweep_batch_add_entry(w->b, e, strtoull(base ? base + 2 : e->path + 1, NULL, 10)) < 0)
		w->bad++;
	return 0;
}

/* The batch as sweep-tar makes it on the SSD class: from a walk that leaves regular files unstated. */
static void run_walked(struct run *r)
{
	struct sweep_batch_opts bo = { .size = sizeof(bo), .order = SWEEP_ORDER_AUTO, .plan_flags = SWEEP_PLAN_CACHE_CHECK,
				       .backend = sweep_backend_resolve(SWEEP_BACKEND_AUTO), .ops = &ops,
				       .on_batch = r_batch, .ctx = r };
	struct walked w = { 0 };
	struct sweep_walk_opts wo = { .size = sizeof(wo), .order = SWEEP_ORDER_AUTO, .flags = SWEEP_WALK_NO_STAT_FILES,
				      .on_entry = w_entry, .ctx = &w };
	const char *roots[] = { dir };

	assert_int_equal(sweep_batch_new(&bo, &w.b), 0);
	assert_int_equal(sweep_walk(roots, 1, &wo), 0);
	assert_int_equal(w.bad, 0);
	assert_int_equal(sweep_batch_flush(w.b), 0);
	sweep_batch_free(w.b);
	r->ring = sweep__reader_last_ring();
	assert_int_equal(r->n, NFILES);
}

static void run_batch(unsigned plan_flags, struct run *r)
{
	run_batch_in(SWEEP_ORDER_PHYSICAL, plan_flags, r);
}

/* The ring the reader set up: the small one for a warm batch, else the profile's. */
static void expect_ring(const struct run *r, bool warm)
{
	size_t want = r->profile_ring;

	if (warm && want > WARM_RING)
		want = WARM_RING;
	assert_int_equal(r->warm, warm);
	assert_int_equal(r->ring, want);
}

/* Every file read once, whole, byte for byte. */
static void expect_read_exactly(const struct run *r)
{
	for (unsigned i = 0; i < NFILES; i++) {
		assert_int_equal(r->ends[i], 1);
		assert_int_equal(r->got[i], sizes[i]);
	}
	assert_int_equal(r->bad_status, 0);
	assert_int_equal(r->bad_bytes, 0);
}

static void test_cached_batch(void **state)
{
	struct run *r = calloc(1, sizeof(*r));

	(void)state;
	assert_int_equal(set_cached(1), 0);
	run_batch(SWEEP_PLAN_CACHE_CHECK, r);
	assert_true(r->cached);
	/* Only the sample was opened, and no entry keeps a location. */
	assert_true(r->located >= 1 && r->located <= SAMPLE_MAX);
	for (size_t i = 0; i < NFILES; i++) {
		assert_int_equal(r->phys[i], SWEEP_NO_PHYS);
		if (i > 0)
			assert_true(r->ino[i - 1] < r->ino[i]);
	}
	/* Nothing for the disk to fetch: the reader's prefetch left it alone. */
	assert_int_equal(r->prefetched, 0);
	expect_ring(r, true);
	expect_read_exactly(r);
	free(r);
}

static void test_cold_batch_as_without_the_flag(void **state)
{
	struct run *want = calloc(1, sizeof(*want)), *r = calloc(1, sizeof(*r));
	size_t located = 0;

	(void)state;
	assert_int_equal(set_cached(0), 0);
	want->no_read = true;
	run_batch(0, want);
	assert_false(want->cached);
	assert_int_equal(want->located, NFILES);
	/* Locating reads no data; make sure of it before the flagged run. */
	assert_int_equal(set_cached(0), 0);
	run_batch(SWEEP_PLAN_CACHE_CHECK, r);
	assert_false(r->cached);
	/* Each file located once: the sampled ones are not located again. */
	assert_int_equal(r->located, NFILES);
	for (size_t i = 0; i < NFILES; i++) {
		assert_int_equal(r->order[i], want->order[i]);
		assert_int_equal(r->phys[i], want->phys[i]);
		if (r->phys[i] != SWEEP_NO_PHYS) {
			located++;
			if (i > 0)
				assert_true(r->phys[i - 1] <= r->phys[i]);
		}
	}
	/* Every file with data has a location after fsync; the shuffled writes put them out of inode order. */
	assert_int_equal(located, NFILES - NFILES / 10);
	bool by_inode = true;
	for (size_t i = 1; i < NFILES; i++)
		by_inode = by_inode && r->ino[i - 1] < r->ino[i];
	assert_false(by_inode);
	/* A cold batch on a disk: its data asked for in physical order first (io_uring only). */
	if (sweep_backend_resolve(SWEEP_BACKEND_AUTO) == SWEEP_BACKEND_URING)
		assert_true(r->prefetched > 0);
	expect_ring(r, false);
	expect_read_exactly(r);
	free(want);
	free(r);
}

static void test_locate_wins(void **state)
{
	struct run *r = calloc(1, sizeof(*r));

	(void)state;
	assert_int_equal(set_cached(1), 0);
	run_batch(SWEEP_PLAN_CACHE_CHECK | SWEEP_PLAN_LOCATE, r);
	assert_false(r->cached);
	assert_int_equal(r->located, NFILES);
	for (size_t i = 1; i < NFILES; i++)
		assert_true(r->phys[i - 1] <= r->phys[i]);
	expect_read_exactly(r);
	free(r);
}

/*
 * The SSD class: nothing is located (the plan keeps the order added), so
 * the plan only samples whether the data is cached; that sizes the ring
 * and nothing else.
 */
static void test_ssd_ring(void **state)
{
	struct run *warm = calloc(1, sizeof(*warm)), *cold = calloc(1, sizeof(*cold));
	struct sweep__plan_stats before, after;

	(void)state;
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_SSD), 0);
	assert_int_equal(set_cached(1), 0);
	sweep__plan_totals(&before);
	run_batch_in(SWEEP_ORDER_AUTO, SWEEP_PLAN_CACHE_CHECK, warm);
	sweep__plan_totals(&after);
	assert_int_equal(after.located, before.located);
	assert_false(warm->cached);
	expect_ring(warm, true);
	expect_read_exactly(warm);
	/* The profile's ring is bigger than the warm one where io_uring runs: the test tells them apart there. */
	if (sweep_backend_resolve(SWEEP_BACKEND_AUTO) == SWEEP_BACKEND_URING)
		assert_true(warm->profile_ring > WARM_RING);

	assert_int_equal(set_cached(0), 0);
	run_batch_in(SWEEP_ORDER_AUTO, SWEEP_PLAN_CACHE_CHECK, cold);
	assert_false(cold->cached);
	expect_ring(cold, false);
	expect_read_exactly(cold);
	/* Either way, in the order added. */
	for (size_t i = 0; i < NFILES; i++) {
		assert_int_equal(warm->order[i], i);
		assert_int_equal(cold->order[i], i);
	}
	/* Unstated files (sweep-tar's walk on the SSD class): the sample finds their sizes itself. */
	memset(warm, 0, sizeof(*warm));
	memset(cold, 0, sizeof(*cold));
	assert_int_equal(set_cached(1), 0);
	run_walked(warm);
	expect_ring(warm, true);
	assert_int_equal(set_cached(0), 0);
	run_walked(cold);
	expect_ring(cold, false);
	/* Without the flag, warm data is not looked at: the profile's ring. */
	memset(warm, 0, sizeof(*warm));
	assert_int_equal(set_cached(1), 0);
	run_batch_in(SWEEP_ORDER_AUTO, 0, warm);
	expect_ring(warm, false);
	expect_read_exactly(warm);
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_HDD), 0);
	free(warm);
	free(cold);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cached_batch),
		cmocka_unit_test(test_cold_batch_as_without_the_flag),
		cmocka_unit_test(test_locate_wins),
		cmocka_unit_test(test_ssd_ring),
	};

	/* The disk class: the reader's prefetch in physical order, which a cached batch must not run. */
	if (sweep_device_force(SWEEP_DEVICE_HDD) < 0)
		return 1;
	make_tree();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
