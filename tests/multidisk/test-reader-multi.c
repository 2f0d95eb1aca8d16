/* SPDX-License-Identifier: MIT */
/*
 * Every disk at once, without root: files on two filesystems on different
 * devices (a tmpfs, /dev/shm, and the one /tmp is on) make a plan of two
 * groups, and SWEEP_READ_BY_DEVICE reads them with two readers side by
 * side. What must hold whatever the timing: each file whole (begin, its
 * data in ascending offsets, end), never two callbacks at once, each
 * group's files in plan order, every byte right, each file ended once;
 * skip, a vanished file, and a callback's stop still behave as the reader
 * promises. Without the flag (or with SWEEP_BY_DEVICE=off) the same plan
 * is read in plan order. Skips (77) where /dev/shm is not a filesystem of
 * its own.
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

#define PER_DIR 40

static char dirs[2][64];
static int dfds[2] = { -1, -1 };

static unsigned char byte_at(uint64_t i, uint64_t k)
{
	return (unsigned char)(((k * 2654435761u) ^ (i * 40503u + (k >> 12))) >> 7);
}

/* File j of directory d: its seed (the cookie) and size, a spread from empty to a few MiB. */
static uint64_t seed_of(int d, int j)
{
	return (uint64_t)d * 1000 + (uint64_t)j + 1;
}

static uint64_t size_of(int j)
{
	static const uint64_t sizes[] = { 0, 1, 4095, 4096, 70000, 300000, 1 << 20, (5 << 20) / 2 };
	return sizes[j % 8];
}

static void write_file(int dfd, const char *name, uint64_t seed, uint64_t size)
{
	static unsigned char buf[65536];
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	for (uint64_t off = 0; off < size;) {
		size_t n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		for (size_t k = 0; k < n; k++)
			buf[k] = byte_at(seed, off + k);
		assert_int_equal(write(fd, buf, n), (ssize_t)n);
		off += n;
	}
	close(fd);
}

static int setup(void **state)
{
	struct stat a, b;
	(void)state;
	if (stat("/dev/shm", &a) < 0 || stat("/tmp", &b) < 0 || a.st_dev == b.st_dev) {
		fprintf(stderr, "skip: /dev/shm is not a filesystem apart from /tmp's\n");
		exit(77);
	}
	snprintf(dirs[0], sizeof(dirs[0]), "/dev/shm/sweep-multi.XXXXXX");
	snprintf(dirs[1], sizeof(dirs[1]), "/tmp/sweep-multi.XXXXXX");
	for (int d = 0; d < 2; d++) {
		if (!mkdtemp(dirs[d]))
			return -1;
		dfds[d] = open(dirs[d], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfds[d] < 0)
			return -1;
		for (int j = 0; j < PER_DIR; j++) {
			char name[32];
			snprintf(name, sizeof(name), "f%02d", j);
			write_file(dfds[d], name, seed_of(d, j), size_of(j));
		}
		fsync(dfds[d]);
	}
	sync(); /* located (FIEMAP) on the disk class, not delayed */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int d = 0; d < 2; d++) {
		char cmd[256];
		if (dfds[d] >= 0)
			close(dfds[d]);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dirs[d]);
		if (dirs[d][0] && system(cmd) != 0)
			return -1;
	}
	return 0;
}

/* Every file of both directories, beneath their roots, in the caller's order (order: the plan's). */
static struct sweep_plan *plan_both(enum sweep_order order)
{
	struct sweep_plan_opts o = { .size = sizeof(o), .order = order };
	struct sweep_plan *p = NULL;
	assert_int_equal(sweep_plan_new(&o, &p), 0);
	/* Interleaved as they are added: the groups come from the devices, not from the order of adding. */
	for (int j = 0; j < PER_DIR; j++) {
		for (int d = 0; d < 2; d++) {
			char name[32], path[256];
			struct stat st;
			struct sweep_stat s;
			snprintf(name, sizeof(name), "f%02d", j);
			snprintf(path, sizeof(path), "%s/%s", dirs[d], name);
			assert_int_equal(fstatat(dfds[d], name, &st, 0), 0);
			sweep_stat_from_stat(&s, &st);
			int r = sweep_plan_add_beneath(p, dfds[d], name, path, &s, seed_of(d, j));
			assert_true(r == 0 || r == 1);
		}
	}
	assert_int_equal(sweep_plan_sort(p), 0);
	return p;
}

/* What the callbacks saw. */
struct seen {
	const struct sweep_plan *p;
	int inside;           /* callbacks running now: never more than one */
	int max_inside;
	const struct sweep_plan_entry *cur; /* begun, not ended */
	uint64_t next_off;
	size_t nended;
	size_t ended[2 * PER_DIR]; /* plan positions of the entries ended, in order */
	bool bad_bytes, bad_flow;
	/* behaviours */
	uint64_t skip_seed;   /* begin returns SWEEP_READ_SKIP for it */
	size_t stop_after;    /* end returns -ECANCELED after this many ends (0: never) */
	size_t after_stop;    /* callbacks made after the stop was returned */
	bool stopped;
	int status_of_gone;   /* end's status for the vanished file */
	uint64_t gone_seed;
};

static size_t position(const struct sweep_plan *p, const struct sweep_plan_entry *e)
{
	for (size_t i = 0; i < sweep_plan_count(p); i++)
		if (sweep_plan_entry(p, i) == e)
			return i;
	fail_msg("entry not in the plan");
	return 0;
}

static void enter(struct seen *s)
{
	int n = __atomic_add_fetch(&s->inside, 1, __ATOMIC_SEQ_CST);
	if (n > s->max_inside)
		s->max_inside = n;
	if (s->stopped)
		s->after_stop++;
}

static void leave(struct seen *s)
{
	__atomic_sub_fetch(&s->inside, 1, __ATOMIC_SEQ_CST);
}

static int on_begin(const struct sweep_file *f, void *ctx)
{
	struct seen *s = ctx;
	enter(s);
	if (s->cur)
		s->bad_flow = true; /* a file begun inside another */
	s->cur = f->entry;
	s->next_off = 0;
	usleep(50); /* a chance for the other reader to get in, were the baton not held */
	int r = f->entry->cookie == s->skip_seed ? SWEEP_READ_SKIP : 0;
	leave(s);
	return r;
}

static int on_data(const struct sweep_file *f, uint64_t off, const void *buf, size_t len, void *ctx)
{
	struct seen *s = ctx;
	const unsigned char *b = buf;
	enter(s);
	if (s->cur != f->entry || off != s->next_off || f->entry->cookie == s->skip_seed)
		s->bad_flow = true;
	for (size_t k = 0; k < len; k++)
		if (b[k] != byte_at(f->entry->cookie, off + k)) {
			s->bad_bytes = true;
			break;
		}
	s->next_off = off + len;
	leave(s);
	return 0;
}

static int on_end(const struct sweep_file *f, int status, void *ctx)
{
	struct seen *s = ctx;
	enter(s);
	if (s->cur && s->cur != f->entry)
		s->bad_flow = true;
	if (f->entry->cookie == s->gone_seed)
		s->status_of_gone = status;
	else if (status != 0)
		s->bad_flow = true;
	if (s->cur && f->entry->cookie != s->skip_seed && s->next_off != f->st.size)
		s->bad_flow = true; /* not whole */
	s->cur = NULL;
	s->ended[s->nended++] = position(s->p, f->entry);
	int r = 0;
	if (s->stop_after && s->nended == s->stop_after) {
		s->stopped = true;
		r = -ECANCELED;
	}
	leave(s);
	return r;
}

static const struct sweep_read_ops ops = {
	.size = sizeof(ops),
	.begin = on_begin,
	.data = on_data,
	.end = on_end,
};

static struct sweep_reader *reader(unsigned flags)
{
	struct sweep_reader_opts o = { .size = sizeof(o), .flags = flags };
	struct sweep_reader *r = NULL;
	assert_int_equal(sweep_reader_new(&o, &r), 0);
	return r;
}

/* The group of plan position i. */
static size_t group_at(const struct sweep__plan_group *g, size_t ng, size_t i)
{
	for (size_t k = 0; k < ng; k++)
		if (i >= g[k].first && i < g[k].end)
			return k;
	fail_msg("position %zu in no group", i);
	return 0;
}

static void test_groups(void **state)
{
	(void)state;
	struct sweep_plan *p = plan_both(SWEEP_ORDER_AUTO);
	const struct sweep__plan_group *g;
	size_t ng = sweep__plan_groups(p, &g);
	assert_int_equal(ng, 2);
	assert_int_equal(g[0].first, 0);
	assert_int_equal(g[0].end, g[1].first);
	assert_int_equal(g[1].end, sweep_plan_count(p));
	/* Each group is one directory's files: one device each. */
	for (size_t k = 0; k < ng; k++) {
		assert_int_equal(g[k].end - g[k].first, PER_DIR);
		uint64_t dev = sweep_plan_entry(p, g[k].first)->dev;
		for (size_t i = g[k].first; i < g[k].end; i++)
			assert_int_equal(sweep_plan_entry(p, i)->dev, dev);
		assert_string_not_equal(sweep__plan_group_name(p, &g[k]), "");
	}
	sweep_plan_free(p);

	/* The caller's name order keeps one sequence: no groups. */
	p = plan_both(SWEEP_ORDER_NAME);
	assert_int_equal(sweep__plan_groups(p, &g), 1);
	assert_int_equal(g[0].end, 2 * PER_DIR);
	sweep_plan_free(p);
}

static void test_side_by_side(void **state)
{
	(void)state;
	struct sweep_plan *p = plan_both(SWEEP_ORDER_AUTO);
	struct sweep_reader *r = reader(SWEEP_READ_BY_DEVICE);
	struct seen s = { .p = p, .skip_seed = seed_of(1, 6), .gone_seed = UINT64_MAX };
	uint64_t lanes = sweep__reader_lanes_run();

	unsetenv("SWEEP_BY_DEVICE");
	assert_int_equal(sweep_reader_run(r, p, &ops, &s), 0);
	assert_int_equal(s.max_inside, 1);
	assert_false(s.bad_flow);
	assert_false(s.bad_bytes);
	assert_int_equal(s.nended, 2 * PER_DIR);
	assert_int_equal(sweep__reader_lanes_run() - lanes, 2);
	/* Each position once; within a group, in plan order. */
	const struct sweep__plan_group *g;
	size_t ng = sweep__plan_groups(p, &g);
	unsigned char once[2 * PER_DIR] = { 0 };
	size_t last[2] = { 0, 0 };
	bool any[2] = { false, false };
	for (size_t i = 0; i < s.nended; i++) {
		size_t at = s.ended[i], k = group_at(g, ng, at);
		assert_int_equal(once[at]++, 0);
		if (any[k])
			assert_true(at > last[k]);
		last[k] = at;
		any[k] = true;
	}
	struct sweep_read_stats st = { .size = sizeof(st) };
	assert_int_equal(sweep_reader_stats(r, &st), 0);
	assert_int_equal(st.files, 2 * PER_DIR);
	assert_int_equal(st.devices, 2);
	uint64_t bytes = 0;
	for (int j = 0; j < PER_DIR; j++)
		bytes += 2 * size_of(j);
	assert_int_equal(st.bytes, bytes - size_of(6)); /* the skipped file's bytes were not read */
	sweep_reader_free(r);

	/* Without the flag, or with SWEEP_BY_DEVICE=off: plan order exactly, one reader. */
	for (int k = 0; k < 2; k++) {
		struct seen t = { .p = p, .skip_seed = UINT64_MAX, .gone_seed = UINT64_MAX };
		if (k)
			setenv("SWEEP_BY_DEVICE", "off", 1);
		r = reader(k ? SWEEP_READ_BY_DEVICE : 0);
		lanes = sweep__reader_lanes_run();
		assert_int_equal(sweep_reader_run(r, p, &ops, &t), 0);
		assert_int_equal(sweep__reader_lanes_run(), lanes);
		assert_int_equal(t.nended, 2 * PER_DIR);
		for (size_t i = 0; i < t.nended; i++)
			assert_int_equal(t.ended[i], i);
		assert_false(t.bad_flow);
		assert_false(t.bad_bytes);
		sweep_reader_free(r);
	}
	unsetenv("SWEEP_BY_DEVICE");
	sweep_plan_free(p);
}

static void test_stop_and_vanished(void **state)
{
	(void)state;
	struct sweep_plan *p = plan_both(SWEEP_ORDER_AUTO);
	char path[256];

	/* A file of the second directory vanishes after planning: its end says so, the rest are read. */
	snprintf(path, sizeof(path), "%s/f%02d", dirs[0], 9);
	struct sweep_reader *r = reader(SWEEP_READ_BY_DEVICE);
	struct seen s = { .p = p, .skip_seed = UINT64_MAX, .gone_seed = seed_of(0, 9) };
	assert_int_equal(unlink(path), 0);
	assert_int_equal(sweep_reader_run(r, p, &ops, &s), 0);
	assert_int_equal(s.status_of_gone, -ENOENT);
	assert_int_equal(s.nended, 2 * PER_DIR);
	assert_false(s.bad_flow);
	assert_false(s.bad_bytes);
	write_file(dfds[0], "f09", seed_of(0, 9), size_of(9));
	sweep_reader_free(r);
	sweep_plan_free(p);

	/* end() stops the run: its value comes back, and no callback is made after it. */
	p = plan_both(SWEEP_ORDER_AUTO);
	for (size_t after = 1; after <= 2 * PER_DIR; after += 13) {
		struct seen t = { .p = p, .skip_seed = UINT64_MAX, .gone_seed = UINT64_MAX, .stop_after = after };
		r = reader(SWEEP_READ_BY_DEVICE);
		assert_int_equal(sweep_reader_run(r, p, &ops, &t), -ECANCELED);
		assert_int_equal(t.nended, after);
		assert_int_equal(t.after_stop, 0);
		assert_int_equal(t.max_inside, 1);
		sweep_reader_free(r);
	}
	sweep_plan_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_side_by_side),
		cmocka_unit_test(test_stop_and_vanished),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
