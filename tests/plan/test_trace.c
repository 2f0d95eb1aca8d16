/* SPDX-License-Identifier: MIT */
/* trace: the "sweep-trace 1" text of a plan, line by line. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "plan.h"

/* A struct stat as the plan takes it (one at a time: the tests are sequential). */
static const struct sweep_stat *S(const struct stat *st)
{
	static struct sweep_stat s;
	sweep_stat_from_stat(&s, st);
	return &s;
}

static char *slurp(int fd)
{
	static char buf[1 << 16];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	assert_true(n >= 0);
	buf[n] = 0;
	return buf;
}

static void add(struct sweep_plan *p, uint64_t ino, uint64_t size, uint64_t phys)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_ino = (ino_t)ino;
	st.st_size = (off_t)size;
	st.st_mode = S_IFREG | 0644;
	assert_int_equal(sweep_plan_add_located(p, "x", S(&st), phys, 0), 0);
}

static void test_first_block_trace(void **state)
{
	(void)state;
	struct sweep_plan_opts o = { .size = sizeof(o), .order = SWEEP_ORDER_PHYSICAL };
	struct sweep_plan *p = NULL;
	int fd = memfd_create("trace", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(sweep_plan_new(&o, &p), 0);
	add(p, 12, 5000, 1 << 20);
	add(p, 11, 70, SWEEP_NO_PHYS);
	add(p, 10, 4096, 4096);
	add(p, 13, 0, SWEEP_NO_PHYS);
	sweep_plan_sort(p);
	assert_int_equal(sweep_trace_write(p, fd, SWEEP_TRACE_HEADER), 2);
	assert_string_equal(slurp(fd),
			    "# sweep-trace 1\n"
			    "# op offset_bytes length_bytes ino\n"
			    "R 4096 4096 10\n"
			    "R 1048576 5000 12\n"
			    "# nophys 70 11\n"
			    "# nophys 0 13\n");
	/* Appending without the header: a second batch continues the same trace. */
	assert_int_equal(lseek(fd, 0, SEEK_END) > 0, 1);
	sweep_plan_clear(p);
	add(p, 20, 1, 8192);
	assert_int_equal(sweep_trace_write(p, fd, 0), 1);
	assert_non_null(strstr(slurp(fd), "# nophys 0 13\nR 8192 1 20\n"));
	sweep_plan_free(p);
	close(fd);
}

/* With SWEEP_PLAN_EXTENTS, one line per located extent, in file order. */
static void test_extent_trace(void **state)
{
	(void)state;
	char path[] = "/tmp/sweep-trace-test.XXXXXX";
	struct sweep_plan_opts o = { .size = sizeof(o), .order = SWEEP_ORDER_PHYSICAL, .flags = SWEEP_PLAN_EXTENTS };
	struct sweep_plan *p = NULL;
	struct sweep_extent *ext = NULL;
	enum sweep_extent_source src;
	size_t n = 0;
	char want[4096] = "", line[128];
	int lines = 0;
	struct stat st;
	char buf[4096];
	int fd = mkstemp(path), out = memfd_create("trace", MFD_CLOEXEC);

	assert_true(fd >= 0 && out >= 0);
	memset(buf, 'y', sizeof(buf));
	/* Three separate pieces with holes between them: several extents where the filesystem allows. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(pwrite(fd, buf, sizeof(buf), (off_t)i * (1 << 20)), (ssize_t)sizeof(buf));
	fsync(fd);
	assert_int_equal(fstat(fd, &st), 0);
	if (sweep_extents_get(fd, &ext, &n, &src) < 0) {
		close(fd);
		unlink(path);
		skip(); /* no FIEMAP or FIBMAP here */
	}
	for (size_t i = 0; i < n; i++) {
		if ((ext[i].flags & SWEEP_EXTENT_NOLOC) || ext[i].physical == SWEEP_NO_PHYS)
			continue;
		snprintf(line, sizeof(line), "R %llu %llu %llu\n", (unsigned long long)ext[i].physical,
			 (unsigned long long)ext[i].length, (unsigned long long)st.st_ino);
		strcat(want, line);
		lines++;
	}
	assert_int_equal(sweep_plan_new(&o, &p), 0);
	const char *slash = strrchr(path, '/');
	int dfd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(sweep_plan_add(p, dfd, slash + 1, path, S(&st), 0), 0);
	sweep_plan_sort(p);
	assert_int_equal(sweep_trace_write(p, out, 0), lines);
	if (lines == 0)
		snprintf(want, sizeof(want), "# nophys %llu %llu\n", (unsigned long long)st.st_size,
			 (unsigned long long)st.st_ino);
	assert_string_equal(slurp(out), want);
	free(ext);
	sweep_plan_free(p);
	close(dfd);
	close(out);
	close(fd);
	unlink(path);
}

static void test_errors(void **state)
{
	(void)state;
	struct sweep_plan *p = NULL;

	assert_int_equal(sweep_plan_new(NULL, &p), 0);
	add(p, 1, 1, 0);
	assert_int_equal(sweep_trace_write(NULL, 1, 0), -EINVAL);
	assert_int_equal(sweep_trace_write(p, -1, 0), -EINVAL);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	close(fds[1]);
	assert_int_equal(sweep_trace_write(p, fds[0], 0), -EBADF); /* read end: write fails */
	close(fds[0]);
	sweep_plan_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_block_trace),
		cmocka_unit_test(test_extent_trace),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
