/*
 * The copy engine (sweep_copy_*) called directly, as a program linking
 * libsweep would: contents and types, metadata, hard links, no-clobber,
 * atomic replacement, a symlink planted in the destination, a source file
 * replaced between planning and reading, cancellation, and the callbacks
 * that report each of these.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <sweep.h>
#include "../common/backend.h"

struct log {
	unsigned done[SWEEP_COPY_HOW_SKIPPED + 1];
	unsigned errors;
	struct sweep_copy_error last; /* strings not kept */
	int last_err_op, last_err;
	/* on_plan: replace this source file (a different inode at the same name) once it is queued */
	const char *swap_path;
	uint64_t swap_after, queued; /* ... when this many files are queued (all of them: each was stat'ed) */
	/* on_step: set *cancel_flag at the first OPENED step */
	volatile sig_atomic_t *cancel_flag;
	unsigned opened;
	/* on_step: at the WRITTEN step of dst/s/sub/b (made, not named yet), its directory is swapped (enum swap) */
	int dir_swap;
	bool swapped;
	bool swap_planned; /* ... at the first entry of it made by the plan stage (on_done of a symlink, a directory) instead */
	bool swap_second;  /* ... at the WRITTEN step of the second file of dst/s/sub instead (first: its name) */
	char first[64], second[64];
	bool first_named;  /* the first was in dst/s/sub already when the second was written */
};

enum swap { SWAP_NONE, SWAP_MOVED_SYMLINK, SWAP_REMOVED_SYMLINK, SWAP_REMOVED_DIR, SWAP_ANCESTOR_SYMLINK };

static char base[] = "/tmp/sweep-test-copy.XXXXXX";

static void sh(const char *fmt, ...);

/* dst/s/sub swapped while the copy of sub/b waits to be named (called on the writer thread, if any). */
static void swap_dir(struct log *l)
{
	char d[PATH_MAX], t[PATH_MAX];

	snprintf(d, sizeof(d), "%s/dst/s/sub", base);
	snprintf(t, sizeof(t), "%s/outside", base);
	if (l->dir_swap == SWAP_ANCESTOR_SYMLINK) {
		/* an ancestor, dst/s, moved out of the destination and a symlink to it put in its place */
		snprintf(d, sizeof(d), "%s/dst/s", base);
		snprintf(t, sizeof(t), "%s/moved-s", base);
		sh("mv %s %s", d, t);
		assert_int_equal(symlink(t, d), 0);
		l->swapped = true;
		return;
	}
	if (l->dir_swap == SWAP_MOVED_SYMLINK)
		sh("mv %s %s.moved", d, d);
	else
		sh("rm -rf %s", d);
	if (l->dir_swap == SWAP_REMOVED_DIR)
		sh("mkdir %s", d);
	else
		assert_int_equal(symlink(t, d), 0);
	l->swapped = true;
}

static int on_error(const struct sweep_copy_error *e, void *ctx)
{
	struct log *l = ctx;

	l->errors++;
	l->last_err_op = (int)e->op;
	l->last_err = e->err;
	return 0;
}

static int on_done(const struct sweep_copy_done *d, void *ctx)
{
	struct log *l = ctx;

	if (d->how <= SWEEP_COPY_HOW_SKIPPED)
		l->done[d->how]++;
	if (l->swap_planned && !l->swapped && (d->how == SWEEP_COPY_HOW_SYMLINK || d->how == SWEEP_COPY_HOW_DIR) &&
	    strstr(d->dst, "/dst/s/sub/"))
		swap_dir(l);
	return 0;
}

static void on_plan(uint64_t files, uint64_t bytes, void *ctx)
{
	struct log *l = ctx;
	char tmp[PATH_MAX];
	int fd;

	(void)bytes;
	l->queued += files; /* called once per file queued, with that file's counts */
	if (!l->swap_path || l->queued < l->swap_after)
		return;
	snprintf(tmp, sizeof(tmp), "%s.new", l->swap_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "evil\n", 5), 5);
	close(fd);
	assert_int_equal(rename(tmp, l->swap_path), 0);
	l->swap_path = NULL;
}

static int on_step(enum sweep_copy_step step, const char *src, const char *dst, uint64_t cookie, void *ctx)
{
	struct log *l = ctx;
	size_t n = dst ? strlen(dst) : 0;

	(void)src;
	(void)cookie;
	if (step == SWEEP_COPY_STEP_WRITTEN && l->dir_swap && !l->swap_planned && !l->swap_second && !l->swapped &&
	    n >= 6 && !strcmp(dst + n - 6, "/sub/b"))
		swap_dir(l);
	const char *in_sub = dst ? strstr(dst, "/dst/s/sub/") : NULL;
	if (step == SWEEP_COPY_STEP_WRITTEN && l->swap_second && !l->swapped && in_sub) {
		char p[PATH_MAX];
		struct stat st;
		if (!l->first[0]) {
			snprintf(l->first, sizeof(l->first), "%s", in_sub + strlen("/dst/s/sub/"));
		} else {
			snprintf(l->second, sizeof(l->second), "%s", in_sub + strlen("/dst/s/sub/"));
			snprintf(p, sizeof(p), "%s/dst/s/sub/%s", base, l->first);
			l->first_named = lstat(p, &st) == 0;
			swap_dir(l);
		}
	}
	if (step == SWEEP_COPY_STEP_OPENED) {
		l->opened++;
		if (l->cancel_flag)
			*l->cancel_flag = 1;
	}
	return 0;
}

static void put(const char *rel, const char *data, mode_t mode)
{
	char p[PATH_MAX];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static char *slurp(const char *rel)
{
	static char buf[4096];
	char p[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static int lst(const char *rel, struct stat *st)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	return lstat(p, st);
}

static void sh(const char *fmt, ...)
{
	char cmd[2 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

/* A fresh src/ (files, a subdirectory, a symlink, a FIFO, two names of one file) and an empty dst/. */
static int setup(void **state)
{
	char p[PATH_MAX];

	(void)state;
	strcpy(base, "/tmp/sweep-test-copy.XXXXXX");
	assert_non_null(mkdtemp(base));
	sh("mkdir -p %s/src/sub %s/dst", base, base);
	put("src/a", "alpha\n", 0640);
	put("src/sub/b", "bravo bravo\n", 0600);
	put("src/empty", "", 0644);
	snprintf(p, sizeof(p), "%s/src/link", base);
	assert_int_equal(symlink("sub/b", p), 0);
	snprintf(p, sizeof(p), "%s/src/fifo", base);
	assert_int_equal(mkfifo(p, 0620), 0);
	sh("ln %s/src/a %s/src/sub/a2", base, base);
	sh("touch -h -d '2001-02-03 04:05:06.123456789' %s/src/a %s/src/sub/b %s/src/link", base, base, base);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", base);
	return 0;
}

/* An engine copying into dst/, with the test's callbacks; batch_bytes as sweep_copy_opts has it. */
static struct sweep_copy *engine_batched(struct log *l, unsigned flags, unsigned preserve,
					 volatile sig_atomic_t *cancel, size_t batch_bytes)
{
	struct sweep_copy_opts o = {
		.size = sizeof(o),
		.flags = flags,
		.preserve = preserve,
		.batch_bytes = batch_bytes,
		.on_error = on_error,
		.on_done = on_done,
		.on_plan = on_plan,
		.on_step = on_step,
		.ctx = l,
		.cancel = cancel,
	};
	struct sweep_copy *c = NULL;
	char dst[PATH_MAX];

	assert_int_equal(sweep_copy_new(&o, &c), 0);
	snprintf(dst, sizeof(dst), "%s/dst", base);
	assert_int_equal(sweep_copy_set_dest(c, AT_FDCWD, dst, NULL), 0);
	return c;
}

static struct sweep_copy *engine(struct log *l, unsigned flags, unsigned preserve, volatile sig_atomic_t *cancel)
{
	return engine_batched(l, flags, preserve, cancel, 0);
}

static int copy_tree(struct log *l, unsigned flags, unsigned preserve, const char *to)
{
	char src[PATH_MAX];
	struct sweep_copy *c = engine(l, flags, preserve, NULL);
	int rc;

	snprintf(src, sizeof(src), "%s/src", base);
	rc = sweep_copy_tree(c, src, to);
	if (rc >= 0)
		rc = sweep_copy_finish(c);
	sweep_copy_free(c);
	return rc;
}

static void test_tree_types_and_contents(void **state)
{
	struct log l = { 0 };
	struct stat st;

	(void)state;
	assert_int_equal(copy_tree(&l, SWEEP_COPY_RECURSIVE, 0, "t"), 0);
	assert_int_equal(l.errors, 0);
	assert_string_equal(slurp("dst/t/a"), "alpha\n");
	assert_string_equal(slurp("dst/t/sub/b"), "bravo bravo\n");
	assert_string_equal(slurp("dst/t/sub/a2"), "alpha\n");
	assert_string_equal(slurp("dst/t/empty"), "");
	assert_int_equal(lst("dst/t/link", &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lst("dst/t/fifo", &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	/* every entry reported once: 4 regular files, 2 directories, 1 symlink, 1 FIFO */
	unsigned files = l.done[SWEEP_COPY_HOW_DATA] + l.done[SWEEP_COPY_HOW_CLONE] + l.done[SWEEP_COPY_HOW_RANGE];
	assert_int_equal(files, 4);
	assert_int_equal(l.done[SWEEP_COPY_HOW_DIR], 2);
	assert_int_equal(l.done[SWEEP_COPY_HOW_SYMLINK], 1);
	assert_int_equal(l.done[SWEEP_COPY_HOW_SPECIAL], 1);
	/* without SWEEP_COPY_LINKS two names of one file are two copies */
	struct stat s1, s2;
	assert_int_equal(lst("dst/t/a", &s1), 0);
	assert_int_equal(lst("dst/t/sub/a2", &s2), 0);
	assert_int_not_equal(s1.st_ino, s2.st_ino);
}

/* Copy src/ to dst/NAME with a batch bound of batch_bytes (0: the default); the engine's stats. */
static void copy_batched(struct log *l, size_t batch_bytes, const char *name, struct sweep_copy_stats *st)
{
	struct sweep_copy *c = engine_batched(l, SWEEP_COPY_RECURSIVE, 0, NULL, batch_bytes);
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/src", base);
	assert_int_equal(sweep_copy_tree(c, p, name), 0);
	assert_int_equal(sweep_copy_finish(c), 0);
	st->size = sizeof(*st);
	assert_int_equal(sweep_copy_stats(c, st), 0);
	sweep_copy_free(c);
}

/*
 * A batch is bounded by memory, not by a count of files: 5,000 files go in
 * one sweep by default (4,096 used to be the bound), and a small batch_bytes
 * splits them (the queue's own memory ends a batch too), every file copied.
 */
static void test_batches_by_memory(void **state)
{
	struct sweep_copy_stats st;
	struct log l = { 0 };

	(void)state;
	sh("cd %s/src && mkdir many && for i in $(seq 5000); do echo \"file $i\" > many/f$i; done", base);
	copy_batched(&l, 0, "one", &st);
	assert_int_equal(l.errors, 0);
	assert_int_equal(st.files, 5004);
	assert_int_equal(st.batches, 1);
	struct log l2 = { 0 };
	copy_batched(&l2, 64 << 10, "split", &st);
	assert_int_equal(l2.errors, 0);
	assert_int_equal(st.files, 5004);
	assert_true(st.batches >= 4);
	assert_string_equal(slurp("dst/split/many/f1"), "file 1\n");
	assert_string_equal(slurp("dst/split/many/f4999"), "file 4999\n");
	assert_string_equal(slurp("dst/one/many/f5000"), "file 5000\n");
}

static void test_preserve_and_links(void **state)
{
	struct log l = { 0 };
	struct stat s, d, d2;

	(void)state;
	assert_int_equal(copy_tree(&l, SWEEP_COPY_RECURSIVE | SWEEP_COPY_LINKS,
				   SWEEP_PRESERVE_MODE | SWEEP_PRESERVE_TIMES, "p"), 0);
	assert_int_equal(l.errors, 0);
	assert_int_equal(lst("src/sub/b", &s), 0);
	assert_int_equal(lst("dst/p/sub/b", &d), 0);
	assert_int_equal(d.st_mode, s.st_mode);
	assert_int_equal(d.st_mtim.tv_sec, s.st_mtim.tv_sec);
	assert_int_equal(d.st_mtim.tv_nsec, s.st_mtim.tv_nsec);
	assert_int_equal(lst("src/link", &s), 0);
	assert_int_equal(lst("dst/p/link", &d), 0);
	assert_int_equal(d.st_mtim.tv_sec, s.st_mtim.tv_sec);
	assert_int_equal(lst("dst/p/a", &d), 0);
	assert_int_equal(lst("dst/p/sub/a2", &d2), 0);
	assert_int_equal(d.st_ino, d2.st_ino); /* hard links kept */
	assert_int_equal(l.done[SWEEP_COPY_HOW_LINK], 1);
}

/*
 * Owners with -a where the new file's own would do or would not: a chown is
 * skipped only where the directory it is made in makes it ours (not in a
 * set-gid directory of another group, nor one owned by someone else).
 * Root only (files given away, a group of another).
 */
static void test_owner_kept(void **state)
{
	static const char *const dirs[] = { "plain", "setgid", "theirs" };
	struct stat s, d;

	(void)state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	sh("chown 65534:65534 %s/src/sub/b && chgrp 65534 %s/src/empty", base, base);
	sh("mkdir -p %s/dst/plain %s/dst/setgid %s/dst/theirs", base, base, base);
	sh("chgrp 65534 %s/dst/setgid && chmod 2777 %s/dst/setgid", base, base);
	sh("chown 65534:65534 %s/dst/theirs && chmod 777 %s/dst/theirs", base, base);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		struct log l = { 0 };
		/* into the directory itself: its files are made in it */
		assert_int_equal(copy_tree(&l, SWEEP_COPY_RECURSIVE, SWEEP_PRESERVE_ALL, dirs[i]), 0);
		assert_int_equal(l.errors, 0);
		static const char *const files[] = { "a", "empty", "sub/b" };
		for (size_t k = 0; k < sizeof(files) / sizeof(*files); k++) {
			char sp[64], dp[64];
			snprintf(sp, sizeof(sp), "src/%s", files[k]);
			snprintf(dp, sizeof(dp), "dst/%s/%s", dirs[i], files[k]);
			assert_int_equal(lst(sp, &s), 0);
			assert_int_equal(lst(dp, &d), 0);
			assert_int_equal(d.st_uid, s.st_uid);
			assert_int_equal(d.st_gid, s.st_gid);
			assert_int_equal(d.st_mode, s.st_mode);
		}
	}
}

/* An existing file is replaced by a new inode (never rewritten in place); nothing temporary stays behind. */
static void test_replace_atomic_and_no_clobber(void **state)
{
	struct log l = { 0 };
	struct stat before, after;
	struct dirent *de;
	DIR *dir;
	char p[PATH_MAX];

	(void)state;
	sh("mkdir -p %s/dst/r && cp %s/src/a %s/dst/r/a && echo old >%s/dst/r/empty", base, base, base, base);
	assert_int_equal(lst("dst/r/empty", &before), 0);
	assert_int_equal(copy_tree(&l, SWEEP_COPY_RECURSIVE, 0, "r"), 0);
	assert_int_equal(lst("dst/r/empty", &after), 0);
	assert_int_not_equal(before.st_ino, after.st_ino);
	assert_int_equal(after.st_size, 0);
	snprintf(p, sizeof(p), "%s/dst/r", base);
	dir = opendir(p);
	assert_non_null(dir);
	while ((de = readdir(dir)))
		assert_null(strstr(de->d_name, ".sweep-tmp"));
	closedir(dir);

	/* no-clobber: an existing destination is left alone and reported as skipped */
	struct log n = { 0 };
	put("dst/r/a", "mine\n", 0644);
	assert_int_equal(copy_tree(&n, SWEEP_COPY_RECURSIVE | SWEEP_COPY_NO_CLOBBER, 0, "r"), 0);
	assert_string_equal(slurp("dst/r/a"), "mine\n");
	assert_true(n.done[SWEEP_COPY_HOW_SKIPPED] >= 1);
}

/* A symlink planted where a directory of the copy goes: refused, nothing written through it. */
static void test_planted_symlink(void **state)
{
	struct log l = { 0 };
	char p[PATH_MAX], t[PATH_MAX];

	(void)state;
	sh("mkdir -p %s/outside %s/dst/s", base, base);
	snprintf(p, sizeof(p), "%s/dst/s/sub", base);
	snprintf(t, sizeof(t), "%s/outside", base);
	assert_int_equal(symlink(t, p), 0);
	(void)copy_tree(&l, SWEEP_COPY_RECURSIVE, 0, "s");
	assert_true(l.errors >= 1);
	assert_null(slurp("outside/b"));
	assert_null(slurp("outside/a2"));
	assert_string_equal(slurp("dst/s/a"), "alpha\n"); /* the rest is copied */
}

/* Whether dir holds nothing (or is missing). */
static bool empty_dir(const char *rel)
{
	char p[PATH_MAX];
	DIR *d;
	struct dirent *e;
	bool empty = true;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (!(d = opendir(p)))
		return true;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

/*
 * A destination directory swapped after its descriptor was cached: a copy
 * is named only through a fresh lookup beneath the destination that follows
 * no symlink, so a symlink put at its path or at an ancestor's never
 * redirects one, and a directory moved away gets no name again. Removed, a
 * symlink in its place: the copy is refused. Removed, a new directory in
 * its place: named there.
 */
static void test_dest_dir_swapped(void **state)
{
	static const int how[] = { SWAP_MOVED_SYMLINK, SWAP_REMOVED_SYMLINK, SWAP_REMOVED_DIR, SWAP_ANCESTOR_SYMLINK };
	struct stat st;

	(void)state;
	put("src/sub/c", "charlie\n", 0644);
	put("src/sub/d", "delta\n", 0644);
	for (size_t i = 0; i < sizeof(how) / sizeof(*how); i++) {
		struct log l = { .dir_swap = how[i] };
		sh("rm -rf %s/dst/s %s/outside %s/moved-s && mkdir %s/outside", base, base, base, base);
		(void)copy_tree(&l, SWEEP_COPY_RECURSIVE, SWEEP_PRESERVE_ALL, "s");
		assert_true(l.swapped);
		assert_true(empty_dir("outside")); /* nothing written through the symlink */
		if (how[i] == SWAP_ANCESTOR_SYMLINK) {
			/*
			 * dst/s moved out of the destination while b waited to be
			 * named, dst/s a symlink to it now: b is refused (its path
			 * goes through a symlink; a lookup that followed it would
			 * find the very directory b was made in), and nothing else
			 * is named through the symlink: each file is there only
			 * where it was named before the move, else refused.
			 */
			static const char *const later[] = { "moved-s/a", "moved-s/empty", "moved-s/sub/a2",
							     "moved-s/sub/c", "moved-s/sub/d" };
			unsigned missing = 0;
			assert_int_equal(lst("moved-s/sub/b", &st), -1);
			for (size_t k = 0; k < sizeof(later) / sizeof(*later); k++)
				missing += lst(later[k], &st) != 0;
			assert_true(l.errors >= 1 + missing);
			assert_int_equal(lst("dst/s", &st), 0);
			assert_true(S_ISLNK(st.st_mode));
			continue;
		}
		const char *a = slurp("dst/s/a");
		assert_true(a && !strcmp(a, "alpha\n"));
		if (how[i] == SWAP_MOVED_SYMLINK) {
			/*
			 * b waited to be named when its directory was moved away: a
			 * directory moved away never gets a name again, so b is
			 * refused as replaced. c and d are in the moved directory only
			 * where they were named before the move (the physical order
			 * may read them first), else refused too.
			 */
			assert_null(slurp("dst/s/sub.moved/b"));
			unsigned missing = !slurp("dst/s/sub.moved/c") + !slurp("dst/s/sub.moved/d");
			assert_true(l.errors >= 1 + missing);
			assert_int_equal(lst("dst/s/sub", &st), 0);
			assert_true(S_ISLNK(st.st_mode));
		} else if (how[i] == SWAP_REMOVED_SYMLINK) {
			assert_true(l.errors >= 1); /* b at least: its directory is gone */
			assert_int_equal(lst("dst/s/sub", &st), 0);
			assert_true(S_ISLNK(st.st_mode));
		} else {
			/*
			 * b, unnamed (O_TMPFILE), is named in the directory that
			 * stands there now, as a copy begun after the swap would be,
			 * whichever descriptor it was made through; a named
			 * temporary (a filesystem without O_TMPFILE) is refused as
			 * replaced.
			 */
			const char *b = slurp("dst/s/sub/b");
			int tfd = getenv("SWEEP_TEST_NO_TMPFILE") ? -1 : open(base, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
			if (tfd >= 0) {
				close(tfd);
				assert_non_null(b);
			}
			if (b) {
				assert_string_equal(b, "bravo bravo\n");
				assert_int_equal(lst("dst/s/sub/b", &st), 0);
				assert_int_equal(st.st_mode & 07777, 0600);
			} else {
				assert_true(l.errors >= 1);
			}
		}
	}
}

/*
 * The same while the tree is planned: dst/s/sub moved away and a symlink
 * put there once a first symlink or directory was made in it. That entry
 * moved with it; what is made afterwards (symlinks, directories, in walk
 * order) is refused, never named in the moved directory; the files are in
 * it only where they were named before the move, else refused; nothing
 * goes through the symlink.
 */
static void test_dest_dir_swapped_while_planned(void **state)
{
	static const char *const names[] = { "b", "c", "sl1", "sl2", "dd1", "dd2" };
	struct log l = { .dir_swap = SWAP_MOVED_SYMLINK, .swap_planned = true };
	char p[PATH_MAX], m[64];
	struct stat st;
	unsigned missing = 0;

	(void)state;
	put("src/sub/c", "charlie\n", 0644);
	for (int i = 1; i <= 2; i++) {
		snprintf(p, sizeof(p), "%s/src/sub/sl%d", base, i);
		assert_int_equal(symlink("b", p), 0);
		sh("mkdir %s/src/sub/dd%d", base, i);
	}
	sh("mkdir %s/outside", base);
	(void)copy_tree(&l, SWEEP_COPY_RECURSIVE, SWEEP_PRESERVE_ALL, "s");
	assert_true(l.swapped);
	assert_true(empty_dir("outside"));
	assert_int_equal(lst("dst/s/sub", &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		snprintf(m, sizeof(m), "dst/s/sub.moved/%s", names[i]);
		missing += lst(m, &st) != 0;
	}
	assert_true(missing < sizeof(names) / sizeof(*names)); /* the entry made before the swap at least */
	assert_true(l.errors >= missing);
	unsigned made = 0; /* of sl1, sl2, dd1, dd2: only the one made before the swap */
	for (size_t i = 2; i < sizeof(names) / sizeof(*names); i++) {
		snprintf(m, sizeof(m), "dst/s/sub.moved/%s", names[i]);
		made += lst(m, &st) == 0;
	}
	assert_int_equal(made, 1);
}

/*
 * dst/s/sub moved away (a symlink to outside in its place) when the second
 * file of sub is written, the first complete then. Made on the caller's
 * thread (SWEEP_TEST_COPY=serial), the first is not named yet: copies wait
 * to be named a few at a time, through one lookup of their directory made
 * when they are named (copy_read.c). Neither may be named in the moved
 * directory (a lookup made before the move, or the descriptor the copies
 * were made in, would put them there) nor through the symlink.
 */
static void test_dest_dir_moved_between_namings(void **state)
{
	static const char *const names[] = { "b", "c", "d", "e" };
	const char *was = getenv("SWEEP_TEST_COPY");
	char *saved = was ? strdup(was) : NULL;
	struct log l = { .dir_swap = SWAP_MOVED_SYMLINK, .swap_second = true };
	char m[128];
	struct stat st;
	unsigned missing = 0;

	(void)state;
	put("src/sub/c", "charlie\n", 0644);
	put("src/sub/d", "delta\n", 0644);
	put("src/sub/e", "echo\n", 0644);
	sh("mkdir %s/outside", base);
	setenv("SWEEP_TEST_COPY", "serial", 1);
	(void)copy_tree(&l, SWEEP_COPY_RECURSIVE, SWEEP_PRESERVE_ALL, "s");
	if (saved)
		setenv("SWEEP_TEST_COPY", saved, 1);
	else
		unsetenv("SWEEP_TEST_COPY");
	free(saved);
	assert_true(l.swapped);
	assert_false(l.first_named); /* it waited for its name: the case this test is for */
	assert_true(empty_dir("outside"));
	assert_int_equal(lst("dst/s/sub", &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	snprintf(m, sizeof(m), "dst/s/sub.moved/%s", l.first);
	assert_int_equal(lst(m, &st), -1);
	snprintf(m, sizeof(m), "dst/s/sub.moved/%s", l.second);
	assert_int_equal(lst(m, &st), -1);
	snprintf(m, sizeof(m), "dst/s/%s", l.first); /* nor in another directory (one cached) */
	assert_int_equal(lst(m, &st), -1);
	snprintf(m, sizeof(m), "dst/s/%s", l.second);
	assert_int_equal(lst(m, &st), -1);
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		snprintf(m, sizeof(m), "dst/s/sub.moved/%s", names[i]);
		missing += lst(m, &st) != 0;
	}
	assert_true(missing >= 2);
	assert_true(l.errors >= missing);
	assert_string_equal(slurp("dst/s/a"), "alpha\n"); /* the rest is copied */
}

/* A source file replaced (another inode at its name) after it was planned: not copied, -ESTALE reported. */
static void test_source_replaced(void **state)
{
	struct log l = { 0 };
	char p[PATH_MAX];

	(void)state;
	sh("rm %s/src/sub/a2", base);
	snprintf(p, sizeof(p), "%s/src/a", base);
	l.swap_path = p;
	l.swap_after = 3; /* a, sub/b, empty: all planned, none read yet */
	(void)copy_tree(&l, SWEEP_COPY_RECURSIVE, 0, "x");
	assert_null(l.swap_path); /* the swap happened */
	assert_int_equal(l.errors, 1);
	assert_int_equal(l.last_err_op, SWEEP_COPY_OP_OPEN_SRC);
	assert_int_equal(l.last_err, -ESTALE);
	assert_null(slurp("dst/x/a")); /* neither the planned file nor the new one */
	assert_string_equal(slurp("dst/x/sub/b"), "bravo bravo\n");
}

/* Cancelled at the first opened file: -ECANCELED, no final name holds a partial copy. */
static void test_cancel(void **state)
{
	volatile sig_atomic_t cancel = 0;
	struct log l = { .cancel_flag = &cancel };
	char src[PATH_MAX];
	struct sweep_copy *c = engine(&l, SWEEP_COPY_RECURSIVE, 0, &cancel);
	int rc;

	(void)state;
	snprintf(src, sizeof(src), "%s/src", base);
	rc = sweep_copy_tree(c, src, "c");
	if (rc >= 0)
		rc = sweep_copy_finish(c);
	sweep_copy_free(c);
	assert_int_equal(rc, -ECANCELED);
	assert_int_equal(l.opened, 1);
	const char *names[] = { "dst/c/a", "dst/c/sub/b", "dst/c/sub/a2" };
	for (size_t i = 0; i < 3; i++) {
		char *s = slurp(names[i]);
		/* each either absent or whole */
		if (s)
			assert_true(!strcmp(s, "alpha\n") || !strcmp(s, "bravo bravo\n"));
	}
}

/*
 * Supplied sources (another machine's, as sweep-sync's receiver has them):
 * described, never read; a regular file's data fed in pieces (a gap is a
 * hole), its metadata from the stat given at the end; a source that fails
 * leaves the old file; a planted symlink is never written through.
 */
static void test_supplied(void **state)
{
	struct log l = { 0 };
	struct sweep_copy *c = engine(&l, 0, SWEEP_PRESERVE_MODE | SWEEP_PRESERVE_TIMES, NULL);
	struct sweep_stat st = { .mode = S_IFREG | 0640, .nlink = 1, .size = 12, .mtime_sec = 1000000000, .mtime_nsec = 5,
				 .atime_sec = 1000000000, .blocks = 8 };
	struct sweep_copy_src src = { .size = sizeof(src), .root_fd = -1, .path = "far:f", .st = &st,
				      .flags = SWEEP_COPY_SRC_SUPPLIED };
	struct sweep_copy_feed *f = NULL;
	struct stat got;
	char p[PATH_MAX], t[PATH_MAX];

	(void)state;
	/* a regular file cannot be queued: it is fed */
	assert_int_equal(sweep_copy_entry(c, &src, "f", 1), -EINVAL);
	assert_int_equal(sweep_copy_feed_begin(c, &src, "f", 1, &f), 0);
	assert_non_null(f);
	assert_int_equal(sweep_copy_feed_data(f, 0, "hello ", 6), 0);
	assert_int_equal(sweep_copy_feed_data(f, 8, "wide", 4), 0);
	assert_null(slurp("dst/f")); /* nothing under the name until it is complete */
	assert_int_equal(sweep_copy_feed_end(f, 0, 12, NULL), 0);
	assert_int_equal(lst("dst/f", &got), 0);
	assert_int_equal(got.st_size, 12);
	assert_int_equal(got.st_mode & 07777, 0640);
	assert_int_equal(got.st_mtim.tv_sec, 1000000000);
	assert_int_equal(got.st_mtim.tv_nsec, 5);
	assert_int_equal(memcmp(slurp("dst/f"), "hello \0\0wide", 12), 0);
	assert_int_equal(l.done[SWEEP_COPY_HOW_DATA], 1);

	/* the source failed at its end: the old file stays, the error is the source's */
	put("dst/g", "old\n", 0644);
	assert_int_equal(sweep_copy_feed_begin(c, &src, "g", 2, &f), 0);
	assert_int_equal(sweep_copy_feed_data(f, 0, "new", 3), 0);
	assert_int_equal(sweep_copy_feed_end(f, -ENOENT, 3, NULL), -ENOENT);
	assert_string_equal(slurp("dst/g"), "old\n");
	assert_int_equal(l.last_err_op, SWEEP_COPY_OP_READ);
	assert_int_equal(l.last_err, -ENOENT);

	/* a symlink where a directory is expected: refused at the beginning, nothing written outside */
	sh("mkdir -p %s/outside", base);
	snprintf(p, sizeof(p), "%s/dst/s", base);
	snprintf(t, sizeof(t), "%s/outside", base);
	assert_int_equal(symlink(t, p), 0);
	unsigned errors = l.errors;
	assert_true(sweep_copy_feed_begin(c, &src, "s/x", 3, &f) < 0);
	assert_null(f);
	assert_int_equal(l.errors, errors + 1);
	assert_null(slurp("outside/x"));

	/* a supplied symlink needs its target; a directory is made with the stat given */
	struct sweep_stat lst_ = { .mode = S_IFLNK | 0777, .nlink = 1, .size = 3 };
	struct sweep_copy_src ls = src;
	ls.st = &lst_;
	assert_int_equal(sweep_copy_entry(c, &ls, "l", 4), -EINVAL);
	ls.link = "../x";
	assert_int_equal(sweep_copy_entry(c, &ls, "l", 4), 0);
	assert_int_equal(readlink(strcat(strcpy(p, base), "/dst/l"), t, sizeof(t)), 4);
	struct sweep_stat dst_ = { .mode = S_IFDIR | 0751, .nlink = 2, .mtime_sec = 2000000000 };
	struct sweep_copy_src ds = src;
	ds.st = &dst_;
	assert_int_equal(sweep_copy_entry(c, &ds, "d", 5), 0);
	ds.st = NULL;
	assert_int_equal(sweep_copy_entry(c, &ds, "d2", 6), -EINVAL);
	assert_true(sweep_copy_finish(c) >= 0);
	assert_int_equal(lst("dst/d", &got), 0);
	assert_int_equal(got.st_mode & 07777, 0751);
	assert_int_equal(got.st_mtim.tv_sec, 2000000000);
	assert_int_equal(sweep_copy_feed_end(NULL, 0, 0, NULL), 0);
	sweep_copy_free(c);
}

static void test_null_and_bad_args(void **state)
{
	struct sweep_copy *c = NULL;
	struct sweep_copy_opts o = { .size = sizeof(o), .flags = 0x80000000u };

	(void)state;
	assert_null(sweep_copy_free(NULL));
	assert_int_equal(sweep_copy_new(&o, &c), -EINVAL);
	assert_null(c);
	o.flags = 0;
	assert_int_equal(sweep_copy_new(&o, &c), 0);
	assert_int_equal(sweep_copy_set_dest(c, AT_FDCWD, "/dev/null", NULL), -ENOTDIR);
	assert_null(sweep_copy_free(c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tree_types_and_contents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batches_by_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preserve_and_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_owner_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_atomic_and_no_clobber, setup, teardown),
		cmocka_unit_test_setup_teardown(test_planted_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dest_dir_swapped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dest_dir_swapped_while_planned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dest_dir_moved_between_namings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_supplied, setup, teardown),
		cmocka_unit_test(test_null_and_bad_args),
	};

	skip_unless_backend_usable();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
