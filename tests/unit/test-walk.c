/* SPDX-License-Identifier: MIT */
/*
 * sweep_walk through its API: argument checks, the return value (errors
 * counted, callbacks stopping the walk), roots first in C-SCAN order, the
 * C-SCAN service order of directories on a made-up tree, SKIP, NO_STAT,
 * NO_STAT_FILES, HINT_FILES without hints.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "walk_impl.h"
#include "../common/backend.h"

static char root[64];

struct rec {
	int n, errors, stop_at, error_ret, skip_dirs;
	char paths[256][128];
	uint64_t ino[256], dir_id[256], id[256];
	int depth[256];
	unsigned mode[256];
};

static int on_entry(const struct sweep_entry *e, void *ctx)
{
	struct rec *r = ctx;
	assert_true(r->n < 256);
	snprintf(r->paths[r->n], sizeof(r->paths[0]), "%s", e->path + (e->depth ? strlen(root) + 1 : 0));
	r->ino[r->n] = e->st.ino;
	r->mode[r->n] = e->st.mode;
	r->dir_id[r->n] = e->dir_id;
	r->id[r->n] = e->id;
	r->depth[r->n] = e->depth;
	r->n++;
	if (r->stop_at && r->n == r->stop_at)
		return -EINTR;
	if (r->skip_dirs && e->depth > 0 && S_ISDIR(e->st.mode))
		return SWEEP_WALK_SKIP;
	return 0;
}

static int on_error(const struct sweep_walk_error *err, void *ctx)
{
	struct rec *r = ctx;
	(void)err;
	r->errors++;
	return r->error_ret;
}

static int setup(void **state)
{
	(void)state;
	strcpy(root, "/tmp/sweep-test-walk.XXXXXX");
	assert_non_null(mkdtemp(root));
	char p[200];
	static const char *dirs[] = { "a", "b", "c", "a/x", "a/y", "b/z", "c/w", "c/w/deep" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		assert_int_equal(mkdir(p, 0755), 0);
		snprintf(p, sizeof(p), "%s/%s/file", root, dirs[i]);
		close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static struct sweep_walk_opts opts(struct rec *r, enum sweep_order order)
{
	struct sweep_walk_opts o = { .size = sizeof(o), .order = order, .on_entry = on_entry, .on_error = on_error, .ctx = r };
	return o;
}

static void test_args(void **state)
{
	(void)state;
	struct rec r = { 0 };
	struct sweep_walk_opts o = opts(&r, SWEEP_ORDER_INODE);
	const char *roots[] = { root };
	assert_int_equal(sweep_walk(roots, 1, NULL), -EINVAL);
	assert_int_equal(sweep_walk(NULL, 1, &o), -EINVAL);
	o.size = 8;
	assert_int_equal(sweep_walk(roots, 1, &o), -EINVAL);
	o.size = sizeof(o);
	assert_int_equal(sweep_walk(NULL, 0, &o), 0);
	assert_int_equal(r.n, 0);
}

/* C-SCAN: the root, then each directory's entries in inode order, directories served by ascending inode. */
static void test_cscan_order(void **state)
{
	(void)state;
	struct rec r = { 0 };
	struct sweep_walk_opts o = opts(&r, SWEEP_ORDER_INODE);
	const char *roots[] = { root };
	assert_int_equal(sweep_walk(roots, 1, &o), 0);
	assert_int_equal(r.n, 1 + 8 + 8); /* root, 8 directories, 8 files */
	assert_int_equal(r.depth[0], 0);
	assert_int_equal(r.id[0], 1);
	/* Every directory here has a file, so each is served exactly once, as a run of entries. */
	uint64_t served[16];
	int first_entry[16], nserved = 0;
	for (int i = 1; i < r.n; i++) {
		if (i == 1 || r.dir_id[i] != r.dir_id[i - 1]) {
			assert_true(nserved < 16);
			for (int k = 0; k < nserved; k++)
				assert_int_not_equal(served[k], r.dir_id[i]); /* served once */
			first_entry[nserved] = i;
			served[nserved++] = r.dir_id[i];
		} else {
			assert_true(r.ino[i] > r.ino[i - 1]); /* within a directory: ascending inode */
		}
		int seen = 0; /* every parent was handed out before its children */
		for (int k = 0; k < i; k++)
			seen |= r.id[k] == r.dir_id[i];
		assert_true(seen);
	}
	assert_int_equal(nserved, 9);
	/*
	 * The elevator: each directory served is the lowest inode at or above the
	 * previous one among those handed out and not served yet; only when there
	 * is none does it wrap to the lowest of all.
	 */
	for (int k = 1; k < nserved; k++) {
		uint64_t head = 0, want = UINT64_MAX, lowest = UINT64_MAX, got = 0;
		for (int i = 0; i < r.n; i++) {
			if (r.id[i] == served[k - 1])
				head = r.ino[i];
			if (r.id[i] == served[k])
				got = r.ino[i];
		}
		for (int i = 0; i < first_entry[k]; i++) {
			if (!r.id[i])
				continue;
			int done = 0;
			for (int j = 0; j < k; j++)
				done |= served[j] == r.id[i];
			if (done)
				continue;
			if (r.ino[i] >= head && r.ino[i] < want)
				want = r.ino[i];
			if (r.ino[i] < lowest)
				lowest = r.ino[i];
		}
		assert_int_equal(got, want != UINT64_MAX ? want : lowest);
	}
}

static void test_errors_counted(void **state)
{
	(void)state;
	struct rec r = { 0 };
	struct sweep_walk_opts o = opts(&r, SWEEP_ORDER_NONE);
	char missing[100];
	snprintf(missing, sizeof(missing), "%s/missing", root);
	const char *roots[] = { missing, root, "/nonexistent/sweep" };
	assert_int_equal(sweep_walk(roots, 3, &o), 2);
	assert_int_equal(r.errors, 2);
	assert_int_equal(r.n, 17);
	/* on_error < 0 stops the walk with that value */
	memset(&r, 0, sizeof(r));
	r.error_ret = -ECANCELED;
	assert_int_equal(sweep_walk(roots, 3, &o), -ECANCELED);
	assert_int_equal(r.n, 0);
}

static void test_stop_and_skip(void **state)
{
	(void)state;
	const char *roots[] = { root };
	for (enum sweep_order ord = SWEEP_ORDER_PHYSICAL; ord <= SWEEP_ORDER_NONE; ord++) {
		struct rec r = { .stop_at = 5 };
		struct sweep_walk_opts o = opts(&r, ord);
		assert_int_equal(sweep_walk(roots, 1, &o), -EINTR);
		assert_int_equal(r.n, 5);
		memset(&r, 0, sizeof(r));
		r.skip_dirs = 1;
		assert_int_equal(sweep_walk(roots, 1, &o), 0);
		assert_int_equal(r.n, 1 + 3); /* root and a, b, c: none entered */
	}
}

/* Walk the tree in inode order with flags into *r: n entries. */
static void walk_flags(struct rec *r, unsigned flags, int n)
{
	struct sweep_walk_opts o = opts(r, SWEEP_ORDER_INODE);
	o.flags = flags;
	const char *roots[] = { root };
	assert_int_equal(sweep_walk(roots, 1, &o), 0);
	assert_int_equal(r->n, n);
}

/* lstat of entry i of r, which must be the inode the walk saw. */
static void lstat_entry(const struct rec *r, int i, struct stat *st)
{
	char p[200];
	snprintf(p, sizeof(p), "%s/%s", root, r->paths[i]);
	assert_int_equal(lstat(p, st), 0);
	assert_int_equal(r->ino[i], st->st_ino);
}

static void test_no_stat(void **state)
{
	(void)state;
	struct rec r = { 0 };
	walk_flags(&r, SWEEP_WALK_NO_STAT, 17);
	for (int i = 1; i < r.n; i++) {
		struct stat st;
		lstat_entry(&r, i, &st);
		assert_int_equal(r.mode[i] & S_IFMT, st.st_mode & S_IFMT);
		if (!S_ISDIR(st.st_mode))
			assert_int_equal(r.mode[i], st.st_mode & S_IFMT); /* only the type bits */
		else
			assert_int_equal(r.mode[i], st.st_mode);
	}
}

/* NO_STAT_FILES: regular files as NO_STAT leaves them, a symlink and a FIFO stat'ed whole. */
static void test_no_stat_files(void **state)
{
	(void)state;
	char p[200];
	snprintf(p, sizeof(p), "%s/a/link", root);
	assert_int_equal(symlink("file", p), 0);
	snprintf(p, sizeof(p), "%s/b/fifo", root);
	assert_int_equal(mkfifo(p, 0640), 0);
	struct rec r = { 0 };
	walk_flags(&r, SWEEP_WALK_NO_STAT_FILES, 19);
	int specials = 0;
	for (int i = 1; i < r.n; i++) {
		struct stat st;
		lstat_entry(&r, i, &st);
		if (S_ISREG(st.st_mode)) {
			assert_int_equal(r.mode[i], st.st_mode & S_IFMT); /* only the type bits */
		} else {
			assert_int_equal(r.mode[i], st.st_mode); /* stat'ed: the permission bits too */
			specials += !S_ISDIR(st.st_mode);
		}
	}
	assert_int_equal(specials, 2);
}

/*
 * HINT_FILES where the walk reads no hints (SWEEP_METASCAN=off; raw access
 * itself is tested in tests/scan/plan-hints.sh): every entry stat'ed whole,
 * on the walk's thread and on read-ahead threads alike.
 */
static void test_hint_files_without_hints(void **state)
{
	(void)state;
	const char *threads[] = { "0", "4" };
	assert_int_equal(setenv("SWEEP_METASCAN", "off", 1), 0);
	for (size_t t = 0; t < 2; t++) {
		assert_int_equal(setenv("SWEEP_WALK_THREADS", threads[t], 1), 0);
		struct rec r = { 0 };
		walk_flags(&r, SWEEP_WALK_HINT_FILES | SWEEP_WALK_PLAN_ONLY, 17);
		for (int i = 1; i < r.n; i++) {
			struct stat st;
			lstat_entry(&r, i, &st);
			assert_int_equal(r.mode[i], st.st_mode); /* the permission bits too: stat'ed */
		}
	}
	unsetenv("SWEEP_WALK_THREADS");
	unsetenv("SWEEP_METASCAN");
}

int main(void)
{
	skip_unless_backend_usable();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cscan_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_and_skip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_stat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_stat_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hint_files_without_hints, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
