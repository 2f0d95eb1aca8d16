/* SPDX-License-Identifier: MIT */
/*
 * reader: delivery strictly in plan order on both backends, even when
 * completions are handled in a shuffled order; the statuses of files that
 * shrank, grew, changed or vanished; skip; stop; long paths; sparse files.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "reader_impl.h"

/* A struct stat as the plan takes it (one at a time: the tests are sequential). */
static const struct sweep_stat *S(const struct stat *st)
{
	static struct sweep_stat s;
	sweep_stat_from_stat(&s, st);
	return &s;
}

static char dir[64];
static int dfd = -1;

/* The content of file i at offset k: depends on both, so a misplaced buffer shows. */
static unsigned char byte_at(uint64_t i, uint64_t k)
{
	return (unsigned char)(((k * 2654435761u) ^ (i * 40503u + (k >> 12))) >> 7);
}

static void write_file(const char *name, uint64_t i, uint64_t size)
{
	unsigned char buf[65536];
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	for (uint64_t off = 0; off < size;) {
		size_t n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		for (size_t k = 0; k < n; k++)
			buf[k] = byte_at(i, off + k);
		assert_int_equal(write(fd, buf, n), (ssize_t)n);
		off += n;
	}
	close(fd);
}

static int setup_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/sweep-reader-test.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dfd < 0 ? -1 : 0;
}

static int teardown_dir(void **state)
{
	char cmd[128];

	(void)state;
	close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Plan the named files (cookie = content seed) in the order given, with their current stat. */
static struct sweep_plan *plan_files(char names[][32], const uint64_t *seeds, size_t n)
{
	struct sweep_plan_opts o = { .size = sizeof(o), .order = SWEEP_ORDER_NONE };
	struct sweep_plan *p = NULL;

	assert_int_equal(sweep_plan_new(&o, &p), 0);
	for (size_t i = 0; i < n; i++) {
		char path[256];
		struct stat st;
		snprintf(path, sizeof(path), "%.63s/%.31s", dir, names[i]);
		if (fstatat(dfd, names[i], &st, 0) < 0) {
			memset(&st, 0, sizeof(st));
			st.st_mode = S_IFREG | 0644;
		}
		assert_int_equal(sweep_plan_add_located(p, path, S(&st), SWEEP_NO_PHYS, seeds[i]), 0);
	}
	sweep_plan_sort(p);
	return p;
}

/* What the callbacks saw. Failures are recorded, not asserted, inside callbacks. */
struct seen {
	const struct sweep_plan *p;
	size_t next;          /* plan index expected next */
	bool in_file;
	uint64_t off;         /* next data offset expected */
	int statuses[4096];
	uint64_t delivered[4096];
	bool began[4096];
	char error[256];
	/* knobs */
	int (*on_begin)(const struct sweep_file *f, struct seen *s);
	int (*on_data)(const struct sweep_file *f, uint64_t off, size_t len, struct seen *s);
	bool check_content;
	unsigned skip_every;
};

static void record(struct seen *s, const char *msg, size_t at)
{
	if (!s->error[0])
		snprintf(s->error, sizeof(s->error), "%s at plan index %zu", msg, at);
}

static int cb_begin(const struct sweep_file *f, void *ctx)
{
	struct seen *s = ctx;

	if (s->in_file)
		record(s, "begin inside another file", s->next);
	if (f->entry != sweep_plan_entry(s->p, s->next))
		record(s, "begin out of plan order", s->next);
	if (f->fd < 0)
		record(s, "begin without a descriptor", s->next);
	s->in_file = true;
	s->began[s->next] = true;
	s->off = 0;
	if (s->skip_every && s->next % s->skip_every == 0)
		return SWEEP_READ_SKIP;
	return s->on_begin ? s->on_begin(f, s) : 0;
}

static int cb_data(const struct sweep_file *f, uint64_t off, const void *buf, size_t len, void *ctx)
{
	struct seen *s = ctx;
	const unsigned char *b = buf;

	if (!s->in_file || f->entry != sweep_plan_entry(s->p, s->next))
		record(s, "data outside its file", s->next);
	if (s->skip_every && s->next % s->skip_every == 0)
		record(s, "data for a skipped file", s->next);
	if (f->data_map) {
		if (off < s->off)
			record(s, "sparse data offsets not ascending", s->next);
	} else if (off != s->off) {
		record(s, "data offsets not contiguous and ascending", s->next);
	}
	if (len == 0)
		record(s, "empty data callback", s->next);
	if (s->check_content)
		for (size_t k = 0; k < len; k++)
			if (b[k] != byte_at(f->entry->cookie, off + k)) {
				record(s, "wrong bytes", s->next);
				break;
			}
	s->off = off + len;
	s->delivered[s->next] += len;
	return s->on_data ? s->on_data(f, off, len, s) : 0;
}

static int cb_end(const struct sweep_file *f, int status, void *ctx)
{
	struct seen *s = ctx;

	if (f->entry != sweep_plan_entry(s->p, s->next))
		record(s, "end out of plan order", s->next);
	if (status < 0 && s->began[s->next])
		record(s, "failed file had begin called", s->next);
	if (status < 0 && f->fd != -1)
		record(s, "failed file has a descriptor", s->next);
	s->statuses[s->next] = status;
	s->in_file = false;
	s->next++;
	return 0;
}

static const struct sweep_read_ops ops = {
	.size = sizeof(ops), .begin = cb_begin, .data = cb_data, .end = cb_end,
};

static bool uring_ok(void)
{
	return sweep_backend_resolve(SWEEP_BACKEND_URING) == SWEEP_BACKEND_URING;
}

static struct sweep_reader *new_reader(enum sweep_backend b, unsigned depth, size_t bufsz, size_t maxbuf,
				       unsigned flags, unsigned shuffle)
{
	struct sweep_reader_opts o = { .size = sizeof(o), .backend = b, .queue_depth = depth,
				       .buffer_size = bufsz, .max_buffered = maxbuf, .flags = flags };
	struct sweep_reader *r = NULL;

	assert_int_equal(sweep_reader_new(&o, &r), 0);
	assert_int_equal(sweep_reader_backend(r), b);
	if (shuffle)
		sweep__reader_set_shuffle(r, shuffle);
	return r;
}

/* Run the plan through the reader; the run must succeed and the callbacks must have seen nothing wrong. */
static void run_ok(struct sweep_reader *r, const struct sweep_plan *p, struct seen *s)
{
	s->p = p;
	assert_int_equal(sweep_reader_run(r, p, &ops, s), 0);
	if (s->error[0])
		fail_msg("%s", s->error);
}

/* A case on the fallback, then on io_uring where the kernel allows it. */
static void both_backends(void (*fn)(enum sweep_backend))
{
	fn(SWEEP_BACKEND_SYSCALL);
	if (uring_ok())
		fn(SWEEP_BACKEND_URING);
}

/* The reader's default max_buffered for files in the scratch directory (by its device class). */
static size_t default_ring(void)
{
	struct sweep_fsinfo fi = { .size = sizeof(fi) };

	if (sweep_fsinfo_path(dir, &fi) == 0 && fi.device_class == SWEEP_DEVICE_HDD)
		return 16u << 20;
	return 64u << 20;
}

#define NFILES 400

/* Many files of mixed sizes, planned in a scrambled order, read with deep queues and small buffers. */
static void ordered_delivery(enum sweep_backend b, unsigned depth, size_t bufsz, size_t maxbuf, unsigned flags)
{
	static char names[NFILES][32];
	static uint64_t seeds[NFILES], sizes[NFILES];
	static const uint64_t size_menu[] = { 0, 1, 100, 4095, 4096, 4097, 20000, 65536, 300001, 1500000 };
	static bool made;
	struct sweep_read_stats st = { .size = sizeof(st) };
	struct seen *s = calloc(1, sizeof(*s));
	uint64_t total = 0;

	assert_non_null(s);
	for (unsigned i = 0; i < NFILES; i++) {
		unsigned k = (i * 7919u) % NFILES; /* planned order differs from creation order */
		snprintf(names[i], sizeof(names[i]), "mixed-%03u", k);
		seeds[i] = k;
		sizes[i] = size_menu[(k * 31u) % 10];
		if (!made)
			write_file(names[i], seeds[i], sizes[i]);
		total += sizes[i];
	}
	made = true;
	struct sweep_plan *p = plan_files(names, seeds, NFILES);
	struct sweep_reader *r = new_reader(b, depth, bufsz, maxbuf, flags, 0x5eed);

	s->check_content = true;
	run_ok(r, p, s);
	assert_int_equal(s->next, NFILES);
	for (unsigned i = 0; i < NFILES; i++) {
		assert_int_equal(s->statuses[i], 0);
		assert_int_equal(s->delivered[i], sizes[i]);
	}
	sweep_reader_stats(r, &st);
	assert_int_equal(st.files, NFILES);
	assert_int_equal(st.bytes, total);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.changed, 0);
	assert_true(st.requests >= NFILES / 2);
	/* read-ahead never held more than the bound (by default 16 MiB on a rotational disk, else 64 MiB) */
	size_t peak = sweep__reader_peak_buffered(r);
	assert_true(peak > 0);
	assert_true(peak <= (maxbuf ? maxbuf : default_ring()));
	sweep_reader_free(r);
	sweep_plan_free(p);
	free(s);
}

static void test_order_sync(void **state)
{
	(void)state;
	ordered_delivery(SWEEP_BACKEND_SYSCALL, 16, 8192, 256 * 1024, 0);
	ordered_delivery(SWEEP_BACKEND_SYSCALL, 0, 0, 0, 0); /* defaults */
}

static void test_order_uring(void **state)
{
	(void)state;
	if (!uring_ok())
		skip();
	ordered_delivery(SWEEP_BACKEND_URING, 64, 8192, 256 * 1024, 0);
	ordered_delivery(SWEEP_BACKEND_URING, 128, 4096, 1 << 20, SWEEP_READ_NOATIME);
	ordered_delivery(SWEEP_BACKEND_URING, 32, 65536, 4 << 20, SWEEP_READ_REGISTERED);
	ordered_delivery(SWEEP_BACKEND_URING, 0, 0, 0, 0); /* defaults */
	/* a ring smaller than one buffer still makes progress */
	ordered_delivery(SWEEP_BACKEND_URING, 8, 65536, 4096, 0);
}

/* Three files around the one under test, so the statuses are per file and the run goes on. */
static void status_case(enum sweep_backend b, void (*before)(void), int (*on_begin)(const struct sweep_file *, struct seen *),
			int (*on_data)(const struct sweep_file *, uint64_t, size_t, struct seen *),
			int want_status, uint64_t want_bytes, bool want_begin)
{
	char names[3][32] = { "before", "victim", "after" };
	const uint64_t seeds[3] = { 1, 2, 3 };
	struct seen *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	write_file("before", 1, 10000);
	write_file("victim", 2, 64 * 1024);
	write_file("after", 3, 5000);
	struct sweep_plan *p = plan_files(names, seeds, 3);
	if (before)
		before();
	/* One 4 KiB buffer at a time, so each read is submitted after the previous one was delivered. */
	struct sweep_reader *r = new_reader(b, 1, 4096, 4096, 0, 0);
	s->on_begin = on_begin;
	s->on_data = on_data;
	run_ok(r, p, s);
	assert_int_equal(s->next, 3);
	assert_int_equal(s->statuses[0], 0);
	assert_int_equal(s->statuses[1], want_status);
	assert_int_equal(s->statuses[2], 0);
	assert_int_equal(s->delivered[0], 10000);
	assert_int_equal(s->delivered[1], want_bytes);
	assert_int_equal(s->delivered[2], 5000);
	assert_int_equal(s->began[1], want_begin);
	sweep_reader_free(r);
	sweep_plan_free(p);
	free(s);
}

static void vanish(void)
{
	assert_int_equal(unlinkat(dfd, "victim", 0), 0);
}

static void truncate_victim_to(off_t size)
{
	int fd = openat(dfd, "victim", O_WRONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

/* Between planning and reading: the reader delivers what is there and says it shrank. */
static void shrink_before(void)
{
	truncate_victim_to(1000);
}

/* Between the plan and the open only its metadata changes (the ctime moves, as when another name is unlinked). */
static void chmod_before(void)
{
	struct stat a, b;

	assert_int_equal(fstatat(dfd, "victim", &a, 0), 0);
	do {
		assert_int_equal(fchmodat(dfd, "victim", 0600, 0), 0);
		assert_int_equal(fchmodat(dfd, "victim", 0644, 0), 0);
		assert_int_equal(fstatat(dfd, "victim", &b, 0), 0);
	} while (a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec);
}

/* While it is read: the first 4 KiB were delivered, the file now ends at 8 KiB. */
static int truncate_victim(const struct sweep_file *f, uint64_t off, size_t len, struct seen *s)
{
	(void)s;
	(void)len;
	if (strstr(f->entry->path, "victim") && off == 0)
		truncate_victim_to(8192);
	return 0;
}

static int grow_victim(const struct sweep_file *f, struct seen *s)
{
	(void)s;
	if (strstr(f->entry->path, "victim")) {
		int fd = openat(dfd, "victim", O_WRONLY | O_APPEND | O_CLOEXEC);
		assert_int_equal(write(fd, "more", 4), 4);
		close(fd);
	}
	return 0;
}

static int touch_victim(const struct sweep_file *f, struct seen *s)
{
	(void)s;
	if (strstr(f->entry->path, "victim")) {
		/* Change the inode (ctime) without changing its size; repeat until the clock shows it. */
		struct stat now;
		do {
			assert_int_equal(fchmod(f->fd, 0600), 0);
			assert_int_equal(fchmod(f->fd, 0644), 0);
			assert_int_equal(fstat(f->fd, &now), 0);
		} while (now.st_ctim.tv_sec == f->st.ctime_sec && now.st_ctim.tv_nsec == f->st.ctime_nsec);
	}
	return 0;
}

/*
 * After its open was asked for and before the reader's fstat (an io_uring
 * open is taken only when reaped): rewritten in place at its size, so that
 * nothing after the fstat differs. 20 ms first: some change times come from
 * a clock that moves once a tick.
 */
static void rewrite_at_open(const struct sweep_plan_entry *e)
{
	if (!strstr(e->path, "victim"))
		return;
	struct timespec pause = { .tv_nsec = 20 * 1000 * 1000 };
	nanosleep(&pause, NULL);
	int fd = openat(dfd, "victim", O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "torn", 4, 100), 4);
	close(fd);
}

static void rewrite_at_open_on(void)
{
	sweep__reader_test_opened = rewrite_at_open;
}

static void statuses(enum sweep_backend b)
{
	status_case(b, NULL, NULL, NULL, 0, 64 * 1024, true);
	status_case(b, vanish, NULL, NULL, -ENOENT, 0, false);
	status_case(b, NULL, NULL, truncate_victim, SWEEP_READ_SHRANK, 8192, true);
	status_case(b, NULL, grow_victim, NULL, SWEEP_READ_GREW, 64 * 1024, true);
	status_case(b, NULL, touch_victim, NULL, SWEEP_READ_CHANGED, 64 * 1024, true);
	status_case(b, shrink_before, NULL, NULL, SWEEP_READ_SHRANK, 1000, true);
	/* st and data both come from the open: nothing to report */
	status_case(b, chmod_before, NULL, NULL, 0, 64 * 1024, true);
	/* changed between the open and its fstat: the fstat says nothing, the change time does */
	status_case(b, rewrite_at_open_on, NULL, NULL, SWEEP_READ_CHANGED, 64 * 1024, true);
	sweep__reader_test_opened = NULL;
}

static void test_status_sync(void **state)
{
	(void)state;
	statuses(SWEEP_BACKEND_SYSCALL);
}

static void test_status_uring(void **state)
{
	(void)state;
	if (!uring_ok())
		skip();
	statuses(SWEEP_BACKEND_URING);
}

/* begin() returning SWEEP_READ_SKIP: no data for that file, end() still comes, in order. */
static void skip_case(enum sweep_backend b)
{
	char names[20][32];
	uint64_t seeds[20];
	struct seen *s = calloc(1, sizeof(*s));

	for (unsigned i = 0; i < 20; i++) {
		snprintf(names[i], sizeof(names[i]), "skip-%02u", i);
		seeds[i] = 100 + i;
		write_file(names[i], seeds[i], 3000 + 7000 * i);
	}
	struct sweep_plan *p = plan_files(names, seeds, 20);
	struct sweep_reader *r = new_reader(b, 16, 4096, 64 * 1024, 0, 7);
	s->skip_every = 3;
	s->check_content = true;
	run_ok(r, p, s);
	assert_int_equal(s->next, 20);
	for (unsigned i = 0; i < 20; i++) {
		assert_int_equal(s->statuses[i], 0);
		assert_int_equal(s->delivered[i], i % 3 == 0 ? 0 : 3000 + 7000 * i);
	}
	sweep_reader_free(r);
	sweep_plan_free(p);
	free(s);
}

static void test_skip(void **state)
{
	(void)state;
	both_backends(skip_case);
}

/* A callback that fails stops the run with its value; nothing leaks (ASan checks). */
static int stop_at_third(const struct sweep_file *f, uint64_t off, size_t len, struct seen *s)
{
	(void)f;
	(void)off;
	(void)len;
	return s->next == 2 ? -ECANCELED : 0;
}

static void stop_case(enum sweep_backend b)
{
	char names[30][32];
	uint64_t seeds[30];
	struct seen *s = calloc(1, sizeof(*s));

	for (unsigned i = 0; i < 30; i++) {
		snprintf(names[i], sizeof(names[i]), "stop-%02u", i);
		seeds[i] = 200 + i;
		write_file(names[i], seeds[i], 50000);
	}
	struct sweep_plan *p = plan_files(names, seeds, 30);
	struct sweep_reader *r = new_reader(b, 32, 4096, 1 << 20, 0, 0);
	s->p = p;
	s->on_data = stop_at_third;
	assert_int_equal(sweep_reader_run(r, p, &ops, s), -ECANCELED);
	assert_int_equal(s->next, 2);
	/* the reader is still usable afterwards */
	memset(s, 0, sizeof(*s));
	s->check_content = true;
	run_ok(r, p, s);
	assert_int_equal(s->next, 30);
	sweep_reader_free(r);
	sweep_plan_free(p);
	free(s);
}

static void test_stop(void **state)
{
	(void)state;
	both_backends(stop_case);
}

/* A path longer than PATH_MAX is opened one directory at a time. */
static void long_path_case(enum sweep_backend b)
{
	char comp[201];
	char *path = malloc(PATH_MAX * 2);
	int cur = dup(dfd);
	struct sweep_plan_opts po = { .size = sizeof(po), .order = SWEEP_ORDER_NONE };
	struct sweep_plan *p = NULL;
	struct stat st;
	struct seen *s = calloc(1, sizeof(*s));

	memset(comp, 'd', 200);
	comp[200] = 0;
	strcpy(path, dir);
	for (int i = 0; i < 25; i++) { /* 25 * 201 bytes: well past PATH_MAX */
		if (mkdirat(cur, comp, 0755) < 0)
			assert_int_equal(errno, EEXIST);
		int n = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(n >= 0);
		close(cur);
		cur = n;
		strcat(path, "/");
		strcat(path, comp);
	}
	strcat(path, "/deep");
	assert_true(strlen(path) > PATH_MAX);
	int saved = dfd;
	dfd = cur;
	write_file("deep", 77, 123457);
	dfd = saved;
	assert_int_equal(fstatat(cur, "deep", &st, 0), 0);
	assert_int_equal(sweep_plan_new(&po, &p), 0);
	assert_int_equal(sweep_plan_add_located(p, path, S(&st), SWEEP_NO_PHYS, 77), 0);
	struct sweep_reader *r = new_reader(b, 4, 65536, 0, 0, 0);
	s->check_content = true;
	run_ok(r, p, s);
	assert_int_equal(s->statuses[0], 0);
	assert_int_equal(s->delivered[0], 123457);
	sweep_reader_free(r);
	sweep_plan_free(p);
	close(cur);
	free(path);
	free(s);
}

static void test_long_path(void **state)
{
	(void)state;
	both_backends(long_path_case);
}

/* SWEEP_READ_SPARSE: only the data regions are delivered, at their offsets. */
static void sparse_case(enum sweep_backend b)
{
	char names[1][32] = { "sparse" };
	const uint64_t seeds[1] = { 5 };
	unsigned char buf[8192];
	struct seen *s = calloc(1, sizeof(*s));
	int fd = openat(dfd, "sparse", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	for (size_t k = 0; k < sizeof(buf); k++)
		buf[k] = byte_at(5, k);
	assert_int_equal(pwrite(fd, buf, 8192, 0), 8192);
	for (size_t k = 0; k < sizeof(buf); k++)
		buf[k] = byte_at(5, (4 << 20) + k);
	assert_int_equal(pwrite(fd, buf, 8192, 4 << 20), 8192);
	assert_int_equal(ftruncate(fd, 8 << 20), 0);
	fsync(fd);
	close(fd);
	struct sweep_plan *p = plan_files(names, seeds, 1);
	struct sweep_reader *r = new_reader(b, 8, 65536, 0, SWEEP_READ_SPARSE, 0);
	s->check_content = true;
	run_ok(r, p, s);
	assert_int_equal(s->statuses[0], 0);
	/* Where the filesystem reports holes, far less than 8 MiB comes through; never more. */
	fd = openat(dfd, "sparse", O_RDONLY | O_CLOEXEC);
	off_t hole = lseek(fd, 0, SEEK_HOLE);
	close(fd);
	if (hole == 8192 || (hole > 0 && hole < (4 << 20)))
		assert_true(s->delivered[0] < (8u << 20));
	else
		assert_int_equal(s->delivered[0], 8u << 20);
	sweep_reader_free(r);
	sweep_plan_free(p);
	free(s);
}

static void test_sparse(void **state)
{
	(void)state;
	both_backends(sparse_case);
}

static void test_args(void **state)
{
	(void)state;
	struct sweep_reader_opts bad = { .size = 3 };
	struct sweep_reader *r = NULL;
	struct sweep_plan *p = NULL;
	struct sweep_read_ops noops = { .size = sizeof(noops) };

	assert_int_equal(sweep_reader_new(&bad, &r), -EINVAL);
	assert_null(r);
	assert_int_equal(sweep_reader_new(NULL, &r), 0);
	assert_int_equal(sweep_plan_new(NULL, &p), 0);
	assert_int_equal(sweep_reader_run(r, p, &noops, NULL), -EINVAL); /* data() is required */
	assert_int_equal(sweep_reader_run(r, p, &ops, NULL), 0);         /* empty plan: nothing to do */
	assert_null(sweep_reader_free(r));
	assert_null(sweep_reader_free(NULL));
	sweep_plan_free(p);
}

/* ---- physical-order prefetch (HDD class, io_uring) ---- */

#define PF_FILES 3
#define PF_CHUNK (16u << 10)
#define PF_ROUNDS 24

struct pf_seen {
	size_t n;
	struct {
		uint64_t cookie, phys, off, len;
	} v[4096];
};

static void pf_record(void *ctx, const struct sweep_file *f, uint64_t phys, uint64_t off, uint64_t len)
{
	struct pf_seen *l = ctx;

	if (l->n < 4096)
		l->v[l->n++] = (typeof(l->v[0])){ f->entry->cookie, phys, off, len };
}

/* Files written a chunk each in turn, with a sync after every chunk: their extents interleave on disk. */
static bool make_interleaved(char names[][32], uint64_t *seeds)
{
	unsigned char buf[PF_CHUNK];
	int fd[PF_FILES];
	bool fragmented = true;

	for (unsigned i = 0; i < PF_FILES; i++) {
		snprintf(names[i], 32, "interleaved-%u", i);
		seeds[i] = 100 + i;
		fd[i] = openat(dfd, names[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		assert_true(fd[i] >= 0);
	}
	for (unsigned k = 0; k < PF_ROUNDS; k++)
		for (unsigned i = 0; i < PF_FILES; i++) {
			for (size_t b = 0; b < PF_CHUNK; b++)
				buf[b] = byte_at(seeds[i], (uint64_t)k * PF_CHUNK + b);
			assert_int_equal(write(fd[i], buf, PF_CHUNK), (ssize_t)PF_CHUNK);
			assert_int_equal(fsync(fd[i]), 0);
		}
	for (unsigned i = 0; i < PF_FILES; i++) {
		struct sweep_extent *x = NULL;
		size_t n = 0;
		enum sweep_extent_source src;
		if (sweep_extents_get(fd[i], &x, &n, &src) < 0 || n < 4)
			fragmented = false;
		free(x);
		close(fd[i]);
	}
	return fragmented;
}

/* The physical byte FIEMAP gives for offset off of file name (SWEEP_NO_PHYS: none). */
static uint64_t phys_at(const char *name, uint64_t off)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	struct sweep_extent *x = NULL;
	size_t n = 0;
	enum sweep_extent_source src;
	uint64_t phys = SWEEP_NO_PHYS;

	assert_true(fd >= 0);
	if (sweep_extents_get(fd, &x, &n, &src) == 0)
		for (size_t k = 0; k < n; k++)
			if (off >= x[k].logical && off < x[k].logical + x[k].length && !(x[k].flags & SWEEP_EXTENT_NOLOC))
				phys = x[k].physical + (off - x[k].logical);
	free(x);
	close(fd);
	return phys;
}

/*
 * Read the interleaved files, planned last-written first (so that plan order
 * is not disk order), with a prefetch log; group: bytes per group (0: the
 * default).
 */
static void pf_run(char names[][32], const uint64_t *seeds, uint64_t group, struct pf_seen *log)
{
	struct seen *s = calloc(1, sizeof(*s));
	char rnames[PF_FILES][32];
	uint64_t rseeds[PF_FILES];

	for (unsigned i = 0; i < PF_FILES; i++) {
		memcpy(rnames[i], names[PF_FILES - 1 - i], 32);
		rseeds[i] = seeds[PF_FILES - 1 - i];
	}
	struct sweep_plan *p = plan_files(rnames, rseeds, PF_FILES);
	struct sweep_reader *r = new_reader(SWEEP_BACKEND_URING, 0, 0, 0, 0, 0x5eed);

	assert_non_null(s);
	memset(log, 0, sizeof(*log));
	sweep__reader_set_prefetch_log(r, pf_record, log, group);
	s->check_content = true;
	run_ok(r, p, s);
	for (unsigned i = 0; i < PF_FILES; i++) {
		assert_int_equal(s->statuses[i], 0);
		assert_int_equal(s->delivered[i], (uint64_t)PF_CHUNK * PF_ROUNDS);
	}
	sweep_reader_free(r);
	sweep_plan_free(p);
	free(s);
}

/* Every byte of every file asked for exactly once, each piece at the place FIEMAP gives. */
static void pf_check_cover(char names[][32], const uint64_t *seeds, const struct pf_seen *log)
{
	for (unsigned i = 0; i < PF_FILES; i++) {
		uint64_t covered = 0, want = (uint64_t)PF_CHUNK * PF_ROUNDS;
		for (size_t k = 0; k < log->n; k++) {
			if (log->v[k].cookie != seeds[i])
				continue;
			covered += log->v[k].len;
			if (log->v[k].phys != phys_at(names[i], log->v[k].off))
				fail_msg("%s: piece at %llu asked for at %llu, FIEMAP says %llu", names[i],
					 (unsigned long long)log->v[k].off, (unsigned long long)log->v[k].phys,
					 (unsigned long long)phys_at(names[i], log->v[k].off));
			for (size_t m = 0; m < k; m++)
				if (log->v[m].cookie == seeds[i] && log->v[m].off < log->v[k].off + log->v[k].len &&
				    log->v[k].off < log->v[m].off + log->v[m].len)
					fail_msg("%s: bytes at %llu asked for twice", names[i], (unsigned long long)log->v[k].off);
		}
		assert_int_equal(covered, want);
	}
}

static void test_prefetch(void **state)
{
	static char names[PF_FILES][32];
	static uint64_t seeds[PF_FILES];
	struct pf_seen *log = calloc(1, sizeof(*log));

	(void)state;
	assert_non_null(log);
	if (!uring_ok() || !make_interleaved(names, seeds)) {
		free(log);
		skip(); /* no io_uring, or a filesystem that did not interleave (or has no FIEMAP) */
	}
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_HDD), 0);

	/* One group (the files fit): the whole run asked for in ascending physical order. */
	pf_run(names, seeds, 0, log);
	assert_true(log->n > PF_FILES * 4);
	for (size_t k = 1; k < log->n; k++)
		if (log->v[k].phys < log->v[k - 1].phys)
			fail_msg("prefetch %zu at %llu after %llu: not in physical order", k,
				 (unsigned long long)log->v[k].phys, (unsigned long long)log->v[k - 1].phys);
	pf_check_cover(names, seeds, log);
	/* and not simply in plan order (which the files were not written in): a piece of a file planned later came first */
	bool reordered = false;
	for (size_t k = 1; k < log->n; k++)
		if (log->v[k].cookie > log->v[k - 1].cookie) /* planned last-written first: plan order is descending seeds */
			reordered = true;
	assert_true(reordered);

	/* Groups of 40 KiB, smaller than a file: a group ends inside a file and the next goes on from there. */
	pf_run(names, seeds, 40u << 10, log);
	pf_check_cover(names, seeds, log);

	/* SWEEP_PREFETCH=off, and the SSD class: none. */
	setenv("SWEEP_PREFETCH", "off", 1);
	pf_run(names, seeds, 0, log);
	unsetenv("SWEEP_PREFETCH");
	assert_int_equal(log->n, 0);
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_SSD), 0);
	pf_run(names, seeds, 0, log);
	assert_int_equal(log->n, 0);
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_AUTO), 0);
	free(log);
}

/* ---- the prefetch of small files: through the thread's ring, with a frontier that moves within the group ---- */

#define PFS_FILES 600

struct pfs_log {
	struct seen *s;      /* the run: s->next is the reader's progress (read here on the thread) */
	size_t n, want;      /* pieces asked for, and how many the run has in all */
	bool delivered_early; /* the reader had delivered a file when the last piece was asked for */
	struct {
		uint64_t cookie, phys, off, len;
	} v[PFS_FILES];
};

/* The thread's log: at the group's last piece, wait (up to 10 s) for the reader to have delivered a file. */
static void pfs_record(void *ctx, const struct sweep_file *f, uint64_t phys, uint64_t off, uint64_t len)
{
	struct pfs_log *l = ctx;

	if (l->n < PFS_FILES)
		l->v[l->n] = (typeof(l->v[0])){ f->entry->cookie, phys, off, len };
	if (++l->n != l->want)
		return;
	for (int ms = 0; ms < 10000 && !l->delivered_early; ms++) {
		l->delivered_early = __atomic_load_n(&l->s->next, __ATOMIC_ACQUIRE) > 0;
		if (!l->delivered_early)
			usleep(1000);
	}
}

static void test_prefetch_small(void **state)
{
	static char names[PFS_FILES][32];
	struct sweep_plan_opts po = { .size = sizeof(po), .order = SWEEP_ORDER_PHYSICAL };
	struct sweep_plan *p = NULL;
	struct pfs_log *l = calloc(1, sizeof(*l));
	struct seen *s = calloc(1, sizeof(*s));
	size_t located = 0;

	(void)state;
	assert_non_null(l);
	assert_non_null(s);
	if (!uring_ok()) {
		free(l);
		free(s);
		skip();
	}
	/* One block or less each: no FIEMAP in the thread, one read each, at the place the plan has. */
	for (unsigned i = 0; i < PFS_FILES; i++) {
		snprintf(names[i], 32, "small-%03u", i);
		write_file(names[i], 1000 + i, 1 + (i * 397u) % 4096);
	}
	assert_int_equal(fsync(dfd), 0);
	sync();
	/* The plan keeps the profile each device had when its first file was added: the HDD class's, with its prefetch. */
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_HDD), 0);
	assert_int_equal(sweep_plan_new(&po, &p), 0);
	for (unsigned i = 0; i < PFS_FILES; i++) {
		char path[256];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%.31s", dir, names[i]);
		assert_int_equal(fstatat(dfd, names[i], &st, 0), 0);
		assert_true(sweep_plan_add(p, dfd, names[i], path, S(&st), 1000 + i) >= 0);
	}
	assert_int_equal(sweep_plan_sort(p), 0);
	for (size_t i = 0; i < sweep_plan_count(p); i++)
		located += sweep_plan_entry(p, i)->phys != SWEEP_NO_PHYS;
	if (located < PFS_FILES / 2) {
		/* no FIEMAP here (tmpfs): no physical order to check */
		assert_int_equal(sweep_device_force(SWEEP_DEVICE_AUTO), 0);
		sweep_plan_free(p);
		free(l);
		free(s);
		skip();
	}
	struct sweep_reader *r = new_reader(SWEEP_BACKEND_URING, 0, 0, 0, 0, 0);
	l->s = s;
	l->want = PFS_FILES;
	sweep__reader_set_prefetch_log(r, pfs_record, l, 0);
	s->check_content = true;
	run_ok(r, p, s);
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_AUTO), 0);

	/* Every file asked for once, whole, where the plan located it, in ascending physical order. */
	assert_int_equal(l->n, PFS_FILES);
	for (size_t k = 0; k < PFS_FILES; k++) {
		const struct sweep_plan_entry *e = NULL;
		for (size_t i = 0; i < sweep_plan_count(p) && !e; i++)
			if (sweep_plan_entry(p, i)->cookie == l->v[k].cookie)
				e = sweep_plan_entry(p, i);
		assert_non_null(e);
		assert_int_equal(l->v[k].off, 0);
		assert_int_equal(l->v[k].len, e->size);
		assert_int_equal(l->v[k].phys, e->phys);
		for (size_t m = 0; m < k; m++)
			if (l->v[m].cookie == l->v[k].cookie)
				fail_msg("file %llu asked for twice", (unsigned long long)l->v[k].cookie);
		if (k > 0 && l->v[k].phys < l->v[k - 1].phys)
			fail_msg("piece %zu at %llu after %llu: not in physical order", k,
				 (unsigned long long)l->v[k].phys, (unsigned long long)l->v[k - 1].phys);
	}
	/*
	 * All of them fit one group; the reader delivered the first files
	 * while the thread was still asking for that group's last one.
	 */
	assert_true(l->delivered_early);
	for (unsigned i = 0; i < PFS_FILES; i++) {
		assert_int_equal(s->statuses[i], 0);
		assert_int_equal(unlinkat(dfd, names[i], 0), 0);
	}
	sweep_reader_free(r);
	sweep_plan_free(p);
	free(l);
	free(s);
}

/* The mixed files of test_order_uring with the disk's prefetch on, and off (SSD class), on purpose. */
static void test_order_uring_classes(void **state)
{
	(void)state;
	if (!uring_ok())
		skip();
	for (int c = SWEEP_DEVICE_HDD; c <= SWEEP_DEVICE_SSD; c++) {
		assert_int_equal(sweep_device_force((enum sweep_device_class)c), 0);
		ordered_delivery(SWEEP_BACKEND_URING, 64, 8192, 256 * 1024, 0);
		ordered_delivery(SWEEP_BACKEND_URING, 0, 0, 0, 0);
		ordered_delivery(SWEEP_BACKEND_URING, 8, 65536, 4096, 0);
	}
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_AUTO), 0);
}

/*
 * Out of descriptors (issue 27, defect 6): an open refused with EMFILE
 * waits for the files before it instead of failing. Scripted through the
 * test hook: the head of the window (its later files are then closed and
 * opened again), a file inside it, a file refused twice; and one refused
 * every time, which fails alone once nothing else of the reader's is open.
 */
static unsigned open_tries[NFILES];
static size_t always_fails = SIZE_MAX;

static int scripted_emfile(size_t index, int res)
{
	unsigned t = ++open_tries[index];

	if (index == always_fails || (index == 0 && t == 1) || (index == 7 && t <= 2) || (index == 50 && t == 1))
		return -EMFILE;
	return res;
}

static void nofile_case(enum sweep_backend b, size_t fail_always)
{
	static char names[NFILES][32];
	static uint64_t seeds[NFILES];
	struct seen *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	for (unsigned i = 0; i < NFILES; i++) {
		snprintf(names[i], sizeof(names[i]), "nofile-%03u", i);
		seeds[i] = i;
		write_file(names[i], i, (i % 5) * 3000);
	}
	struct sweep_plan *p = plan_files(names, seeds, NFILES);
	struct sweep_reader *r = new_reader(b, 32, 4096, 64 * 1024, 0, 0x5eed);

	memset(open_tries, 0, sizeof(open_tries));
	always_fails = fail_always;
	sweep__reader_test_open_res = scripted_emfile;
	s->check_content = true;
	run_ok(r, p, s);
	sweep__reader_test_open_res = NULL;
	assert_int_equal(s->next, NFILES);
	for (unsigned i = 0; i < NFILES; i++) {
		if (s->statuses[i] != (i == fail_always ? -EMFILE : 0))
			fail_msg("file %u: status %d (tries %u)", i, s->statuses[i], open_tries[i]);
		assert_int_equal(s->delivered[i], i == fail_always ? 0 : (i % 5) * 3000);
	}
	/* each refused file was opened again (the head's neighbours too, after the back-off) */
	assert_true(open_tries[0] == 2 && open_tries[7] == 3 && open_tries[50] == 2);
	assert_true(open_tries[1] >= 1 && open_tries[1] <= 2);
	sweep_reader_free(r);
	sweep_plan_free(p);
	free(s);
}

static void test_nofile(void **state)
{
	(void)state;
	nofile_case(SWEEP_BACKEND_SYSCALL, SIZE_MAX);
	nofile_case(SWEEP_BACKEND_SYSCALL, 13);
	if (uring_ok()) {
		nofile_case(SWEEP_BACKEND_URING, SIZE_MAX);
		nofile_case(SWEEP_BACKEND_URING, 13);
	}
	/* A real limit a dozen above what is open: the window fits it, nothing fails. */
	struct rlimit old, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	int probe = dup(0);
	assert_true(probe >= 0);
	close(probe);
	low = old;
	low.rlim_cur = (rlim_t)probe + 12;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	ordered_delivery(SWEEP_BACKEND_SYSCALL, 64, 8192, 256 * 1024, 0);
	if (uring_ok())
		ordered_delivery(SWEEP_BACKEND_URING, 128, 8192, 256 * 1024, 0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

/*
 * The window holds no descriptor, yet an open is refused (the CI flake of
 * cp-nofile at ulimit -n 32): in the disk class the prefetch thread's files
 * may be what fills the table, so the thread is stopped and the open tried
 * again, and the file is read. Without a thread (the SSD class) the
 * descriptors are someone else's and the open fails, once. One file, so the
 * window is that file alone.
 */
static void test_nofile_prefetch(void **state)
{
	static char names[1][32] = { "nofile-alone" };
	static const uint64_t seeds[1] = { 0 };

	(void)state;
	if (!uring_ok())
		skip();
	write_file(names[0], 0, 200000);
	for (int c = SWEEP_DEVICE_HDD; c <= SWEEP_DEVICE_SSD; c++) {
		struct seen *s = calloc(1, sizeof(*s));
		assert_non_null(s);
		assert_int_equal(sweep_device_force((enum sweep_device_class)c), 0);
		struct sweep_plan *p = plan_files(names, seeds, 1);
		struct sweep_reader *r = new_reader(SWEEP_BACKEND_URING, 32, 4096, 64 * 1024, 0, 0);
		memset(open_tries, 0, sizeof(open_tries));
		always_fails = SIZE_MAX;
		sweep__reader_test_open_res = scripted_emfile; /* index 0: refused the first time */
		s->check_content = true;
		run_ok(r, p, s);
		sweep__reader_test_open_res = NULL;
		if (c == SWEEP_DEVICE_HDD) {
			assert_int_equal(s->statuses[0], 0);
			assert_int_equal(s->delivered[0], 200000);
			assert_int_equal(open_tries[0], 2);
		} else {
			assert_int_equal(s->statuses[0], -EMFILE);
			assert_int_equal(open_tries[0], 1);
		}
		sweep_reader_free(r);
		sweep_plan_free(p);
		free(s);
	}
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_AUTO), 0);
	assert_int_equal(unlinkat(dfd, names[0], 0), 0);
}

/* SWEEP_BACKEND=syscall in the environment turns AUTO into the fallback. */
/* A filesystem that cannot read without blocking: a read of a descriptor still O_NONBLOCK ends in EAGAIN. */
static unsigned eagains;

static int nowait_refused(int fd, int res)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0 && (fl & O_NONBLOCK)) {
		eagains++;
		return -EAGAIN;
	}
	return res;
}

static unsigned nonblock_seen;

static int count_nonblock(const struct sweep_file *f, uint64_t off, size_t len, struct seen *s)
{
	(void)off;
	(void)len;
	(void)s;
	nonblock_seen += (fcntl(f->fd, F_GETFL) & O_NONBLOCK) != 0;
	return 0;
}

/*
 * O_NONBLOCK (no hang on a FIFO swapped in) stays on a regular file, where
 * a read does not mind it; a read that ends in EAGAIN with it clears it,
 * once a file, and is asked again: the data is whole.
 */
static void nonblock_case(enum sweep_backend b)
{
	static char names[40][32];
	static uint64_t seeds[40];
	unsigned with_data = 0;

	for (unsigned i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "nonblock-%02u", i);
		seeds[i] = i;
		write_file(names[i], i, (i % 4) * 70000);
		with_data += i % 4 != 0;
	}
	struct sweep_plan *p = plan_files(names, seeds, 40);
	for (int refuse = 0; refuse < 2; refuse++) {
		struct seen *s = calloc(1, sizeof(*s));
		assert_non_null(s);
		struct sweep_reader *r = new_reader(b, 8, 16384, 256 * 1024, 0, 0);
		eagains = nonblock_seen = 0;
		sweep__reader_test_read_res = refuse ? nowait_refused : NULL;
		s->check_content = true;
		s->on_data = count_nonblock;
		run_ok(r, p, s);
		sweep__reader_test_read_res = NULL;
		assert_int_equal(s->next, 40);
		for (unsigned i = 0; i < 40; i++) {
			assert_int_equal(s->statuses[i], 0);
			assert_int_equal(s->delivered[i], (i % 4) * 70000);
		}
		if (refuse) {
			assert_int_equal(eagains, with_data); /* one a file: the flag went at the first */
			assert_int_equal(nonblock_seen, 0);
		} else {
			assert_true(nonblock_seen > 0); /* no call to clear it where no read minded it */
		}
		sweep_reader_free(r);
		free(s);
	}
	sweep_plan_free(p);
}

static void test_nonblock(void **state)
{
	(void)state;
	both_backends(nonblock_case);
}

static void test_env_backend(void **state)
{
	(void)state;
	struct sweep_reader_opts o = { .size = sizeof(o), .backend = SWEEP_BACKEND_AUTO };
	struct sweep_reader *r = NULL;

	setenv("SWEEP_BACKEND", "syscall", 1);
	assert_int_equal(sweep_reader_new(&o, &r), 0);
	assert_int_equal(sweep_reader_backend(r), SWEEP_BACKEND_SYSCALL);
	sweep_reader_free(r);
	unsetenv("SWEEP_BACKEND");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_sync),
		cmocka_unit_test(test_order_uring),
		cmocka_unit_test(test_status_sync),
		cmocka_unit_test(test_status_uring),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_long_path),
		cmocka_unit_test(test_sparse),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_env_backend),
		cmocka_unit_test(test_prefetch),
		cmocka_unit_test(test_prefetch_small),
		cmocka_unit_test(test_order_uring_classes),
		cmocka_unit_test(test_nofile),
		cmocka_unit_test(test_nofile_prefetch),
		cmocka_unit_test(test_nonblock),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
