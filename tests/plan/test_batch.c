/*
 * batch: files added beyond the bound are read in several batches by
 * themselves, each sorted before it is read, every file delivered once;
 * on_batch can skip a read (SWEEP_BATCH_NO_READ) or stop everything; the
 * stats count batches, files and plan memory.
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

static char dir[64];
static int dfd = -1;
#define NFILES 50

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/sweep-batch-test.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < NFILES; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f%02d", i);
		int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, name, strlen(name)) != (ssize_t)strlen(name))
			return -1;
		close(fd);
	}
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

struct seen {
	int delivered[NFILES];
	int batches, sorted_ok, ends;
	int stop_at_batch; /* on_batch returns -ECANCELED at this batch (1-based), 0: never */
	bool no_read;
};

static int b_data(const struct sweep_file *f, uint64_t off, const void *buf, size_t len, void *ctx)
{
	struct seen *s = ctx;
	(void)off, (void)buf, (void)len;
	s->delivered[f->entry->cookie]++;
	return 0;
}

static int b_batch(const struct sweep_plan *p, void *ctx)
{
	struct seen *s = ctx;
	s->batches++;
	/* sorted before it is read: order NONE keeps the order added, so cookies ascend */
	bool ok = true;
	for (size_t i = 1; i < sweep_plan_count(p); i++)
		ok = ok && sweep_plan_entry(p, i - 1)->cookie < sweep_plan_entry(p, i)->cookie;
	s->sorted_ok += ok;
	if (s->stop_at_batch && s->batches == s->stop_at_batch)
		return -ECANCELED;
	return s->no_read ? SWEEP_BATCH_NO_READ : 0;
}

static int b_end(const struct sweep_plan *p, int status, void *ctx)
{
	struct seen *s = ctx;
	(void)p, (void)status;
	s->ends++;
	return 0;
}

static const struct sweep_read_ops ops = { .size = sizeof(ops), .data = b_data };

static int run(struct seen *s, size_t max_files, struct sweep_batch_stats *st)
{
	struct sweep_batch_opts bo = { .size = sizeof(bo), .order = SWEEP_ORDER_NONE, .max_files = max_files,
				       .ops = &ops, .on_batch = b_batch, .on_batch_end = b_end, .ctx = s };
	struct sweep_batch *b = NULL;
	int rc = 0;

	assert_int_equal(sweep_batch_new(&bo, &b), 0);
	for (int i = 0; i < NFILES && rc == 0; i++) {
		char rel[32], path[128];
		struct stat st0;
		struct sweep_stat sst;
		snprintf(rel, sizeof(rel), "f%02d", i);
		snprintf(path, sizeof(path), "%s/%s", dir, rel);
		assert_int_equal(fstatat(dfd, rel, &st0, 0), 0);
		sweep_stat_from_stat(&sst, &st0);
		rc = i % 2 ? sweep_batch_add_beneath(b, dfd, rel, path, &sst, (uint64_t)i)
			   : sweep_batch_add_path(b, path, &sst, 0, (uint64_t)i);
	}
	if (rc == 0)
		rc = sweep_batch_flush(b);
	st->size = sizeof(*st);
	assert_int_equal(sweep_batch_stats(b, st), 0);
	sweep_batch_free(b);
	return rc;
}

static void test_batches(void **state)
{
	(void)state;
	struct seen s = { 0 };
	struct sweep_batch_stats st;
	assert_int_equal(run(&s, 8, &st), 0);
	assert_int_equal(s.batches, (NFILES + 7) / 8);
	assert_int_equal(s.sorted_ok, s.batches);
	assert_int_equal(s.ends, s.batches);
	for (int i = 0; i < NFILES; i++)
		assert_int_equal(s.delivered[i], 1);
	assert_int_equal(st.batches, (uint64_t)s.batches);
	assert_int_equal(st.files, NFILES);
	assert_int_equal(st.read.files, NFILES);
	assert_true(st.plan_memory_peak > 0 && st.plan_memory_sum >= st.plan_memory_peak);
}

static void test_no_read(void **state)
{
	(void)state;
	struct seen s = { .no_read = true };
	struct sweep_batch_stats st;
	assert_int_equal(run(&s, 16, &st), 0);
	assert_int_equal(s.batches, 4);
	for (int i = 0; i < NFILES; i++)
		assert_int_equal(s.delivered[i], 0);
	assert_int_equal(st.read.files, 0);
}

static void test_stop(void **state)
{
	(void)state;
	struct seen s = { .stop_at_batch = 2 };
	struct sweep_batch_stats st;
	assert_int_equal(run(&s, 10, &st), -ECANCELED);
	assert_int_equal(s.batches, 2); /* nothing after the stop */
	int got = 0;
	for (int i = 0; i < NFILES; i++)
		got += s.delivered[i];
	assert_int_equal(got, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batches),
		cmocka_unit_test(test_no_read),
		cmocka_unit_test(test_stop),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
