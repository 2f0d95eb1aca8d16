/*
 * The reader after a swap: between planning and reading, a third party
 * replaces a planned file or a directory on its path -- by a symlink to a
 * secret outside the tree, another directory, another file, a FIFO or a
 * directory. The reader must deliver no byte of anything but the planned
 * file: the swapped entry ends with -ESTALE, begin() is never called, and
 * the files around it are read whole. On both backends, with openat2 and
 * with the component-by-component fallback, for files planned beneath a
 * root, by walk entry, and by path. Also sweep_open_beneath() itself.
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
#include <sys/stat.h>
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

static char top[64];
static int topfd = -1;

static void put(const char *name, const char *content)
{
	int fd = openat(topfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

static void sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

/* top/tree/{before,sub/victim,after}, and a secret outside the tree with a 'victim' beside it. */
static void make_tree(void)
{
	sh("rm -rf '%s'/tree '%s'/outside '%s'/moved && mkdir -p '%s'/tree/sub '%s'/outside", top, top, top, top, top);
	put("tree/before", "before-data");
	put("tree/sub/victim", "victim-data");
	put("tree/after", "after-data");
	put("outside/secret", "SECRET");
	put("outside/victim", "SECRET");
}

static int setup(void **state)
{
	(void)state;
	snprintf(top, sizeof(top), "/tmp/sweep-swap-test.XXXXXX");
	if (!mkdtemp(top))
		return -1;
	topfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return topfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	sweep__open_beneath_force_components(0);
	close(topfd);
	sh("rm -rf '%s'", top);
	return 0;
}

struct seen {
	size_t n;
	int status[8];
	bool began[8];
	char data[8][64];
};

static int cb_begin(const struct sweep_file *f, void *ctx)
{
	struct seen *s = ctx;
	(void)f;
	s->began[s->n] = true;
	return 0;
}

static int cb_data(const struct sweep_file *f, uint64_t off, const void *buf, size_t len, void *ctx)
{
	struct seen *s = ctx;
	(void)f;
	if (off + len < sizeof(s->data[0]))
		memcpy(s->data[s->n] + off, buf, len);
	return 0;
}

static int cb_end(const struct sweep_file *f, int status, void *ctx)
{
	struct seen *s = ctx;
	(void)f;
	s->status[s->n++] = status;
	return 0;
}

static const struct sweep_read_ops ops = { .size = sizeof(ops), .begin = cb_begin, .data = cb_data, .end = cb_end };

enum how { BENEATH, BY_WALK, BY_PATH };

struct walk_ctx {
	struct sweep_plan *p;
};

static int on_entry(const struct sweep_entry *e, void *ctx)
{
	struct walk_ctx *w = ctx;
	if (S_ISREG(e->st.mode))
		assert_true(sweep_plan_add_entry(w->p, e, 0) >= 0);
	return 0;
}

/* Plan before, sub/victim, after (in that order) the way `how` says. */
static struct sweep_plan *plan_three(enum how how, int rootfd)
{
	struct sweep_plan_opts o = { .size = sizeof(o), .order = how == BY_WALK ? SWEEP_ORDER_NAME : SWEEP_ORDER_NONE };
	struct sweep_plan *p = NULL;
	static const char *rel[] = { "before", "sub/victim", "after" };

	assert_int_equal(sweep_plan_new(&o, &p), 0);
	if (how == BY_WALK) {
		char root[128];
		struct walk_ctx w = { p };
		struct sweep_walk_opts wo = { .size = sizeof(wo), .order = SWEEP_ORDER_NAME, .on_entry = on_entry, .ctx = &w };
		const char *roots[1] = { root };
		snprintf(root, sizeof(root), "%s/tree", top);
		assert_int_equal(sweep_walk(roots, 1, &wo), 0);
		assert_int_equal(sweep_plan_count(p), 3);
		for (size_t i = 0; i < 3; i++)
			assert_int_not_equal(sweep_plan_entry(p, i)->root, SWEEP_PLAN_NO_ROOT);
	} else {
		for (int i = 0; i < 3; i++) {
			char path[256], at[64];
			struct stat st;
			snprintf(path, sizeof(path), "%s/tree/%s", top, rel[i]);
			snprintf(at, sizeof(at), "tree/%s", rel[i]);
			assert_int_equal(fstatat(topfd, at, &st, AT_SYMLINK_NOFOLLOW), 0);
			if (how == BENEATH)
				assert_int_equal(sweep_plan_add_beneath(p, rootfd, rel[i], path, S(&st), i), 0);
			else
				assert_int_equal(sweep_plan_add_located(p, path, S(&st), SWEEP_NO_PHYS, i), 0);
		}
	}
	sweep_plan_sort(p);
	/* name order puts "after" first; bring the expectations to before, sub/victim, after either way */
	return p;
}

/* Index of the entry whose path ends in name. */
static size_t index_of(const struct sweep_plan *p, const char *name)
{
	for (size_t i = 0; i < sweep_plan_count(p); i++) {
		const char *path = sweep_plan_entry(p, i)->path;
		size_t pl = strlen(path), nl = strlen(name);
		if (pl >= nl && !strcmp(path + pl - nl, name))
			return i;
	}
	fail_msg("%s not planned", name);
	return 0;
}

/* What the disk's prefetch thread asked for (HDD class): pieces of the victim, and of anything at all. */
static unsigned pf_victim, pf_any;

static void pf_record(void *ctx, const struct sweep_file *f, uint64_t phys, uint64_t off, uint64_t len)
{
	const char *path = f->entry->path;
	size_t pl = strlen(path);
	(void)ctx;
	(void)phys;
	(void)off;
	(void)len;
	pf_any++;
	if (pl >= 10 && !strcmp(path + pl - 10, "sub/victim"))
		pf_victim++;
}

static void run_case(enum sweep_backend b, enum how how, const char *swap, int want)
{
	struct seen s = { 0 };
	struct sweep_reader_opts ro = { .size = sizeof(ro), .backend = b, .queue_depth = 4 };
	struct sweep_reader *r = NULL;
	char treepath[128];

	make_tree();
	snprintf(treepath, sizeof(treepath), "%s/tree", top);
	int rootfd = open(treepath, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(rootfd >= 0);
	struct sweep_plan *p = plan_three(how, rootfd);
	close(rootfd); /* the plan keeps its own */
	if (swap)
		sh("cd '%s' && %s", top, swap);
	assert_int_equal(sweep_reader_new(&ro, &r), 0);
	pf_victim = pf_any = 0;
	sweep__reader_set_prefetch_log(r, pf_record, NULL, 0);
	assert_int_equal(sweep_reader_run(r, p, &ops, &s), 0);
	assert_int_equal(s.n, 3);
	/* The prefetch thread opens as the reader does: a swapped victim is not asked for either. */
	if (want != 0)
		assert_int_equal(pf_victim, 0);
	size_t v = index_of(p, "sub/victim"), bi = index_of(p, "before"), ai = index_of(p, "after");
	assert_int_equal(s.status[bi], 0);
	assert_string_equal(s.data[bi], "before-data");
	assert_int_equal(s.status[ai], 0);
	assert_string_equal(s.data[ai], "after-data");
	assert_int_equal(s.status[v], want);
	if (want == 0) {
		assert_string_equal(s.data[v], "victim-data");
	} else {
		assert_false(s.began[v]);
		assert_string_equal(s.data[v], "");
	}
	for (size_t i = 0; i < 3; i++)
		assert_null(strstr(s.data[i], "SECRET"));
	sweep_reader_free(r);
	sweep_plan_free(p);
}

static const struct {
	const char *what;
	const char *swap;
} swaps[] = {
	{ "file -> symlink to a secret", "rm tree/sub/victim && ln -s ../../outside/secret tree/sub/victim" },
	{ "dir -> symlink to a dir outside", "mv tree/sub moved && ln -s ../outside tree/sub" },
	{ "dir -> another directory", "mv tree/sub moved && mkdir tree/sub && echo SECRET > tree/sub/victim" },
	{ "file -> another file", "echo SECRET > tree/sub/new && mv tree/sub/new tree/sub/victim" },
	{ "file -> FIFO", "rm tree/sub/victim && mkfifo tree/sub/victim" },
	{ "file -> directory", "rm tree/sub/victim && mkdir tree/sub/victim" },
	{ "dir -> file", "mv tree/sub moved && echo SECRET > tree/sub" },
};

static void all_swaps(enum sweep_backend b, enum how how)
{
	run_case(b, how, NULL, 0);
	for (size_t i = 0; i < sizeof(swaps) / sizeof(swaps[0]); i++) {
		/* By path, a directory on the way is followed as the path says: only the identity check guards. */
		print_message("  %s / %s / %s\n", sweep_backend_name(b), how == BENEATH ? "beneath" : how == BY_WALK ? "walk" : "path",
			      swaps[i].what);
		run_case(b, how, swaps[i].swap, -ESTALE);
	}
	run_case(b, how, "rm tree/sub/victim", -ENOENT);
}

static bool uring_ok(void)
{
	return sweep_backend_resolve(SWEEP_BACKEND_URING) == SWEEP_BACKEND_URING;
}

static void every_way(enum sweep_backend b)
{
	all_swaps(b, BENEATH);
	all_swaps(b, BY_WALK);
	all_swaps(b, BY_PATH);
}

static void test_syscall_openat2(void **state)
{
	(void)state;
	if (!sweep__openat2_usable())
		skip();
	every_way(SWEEP_BACKEND_SYSCALL);
}

static void test_syscall_components(void **state)
{
	(void)state;
	sweep__open_beneath_force_components(1);
	every_way(SWEEP_BACKEND_SYSCALL);
	sweep__open_beneath_force_components(0);
}

static void test_uring_openat2(void **state)
{
	(void)state;
	if (!uring_ok() || !sweep__uring_has_openat2() || !sweep__openat2_usable())
		skip();
	every_way(SWEEP_BACKEND_URING);
}

static void test_uring_components(void **state)
{
	(void)state;
	if (!uring_ok())
		skip();
	sweep__open_beneath_force_components(1);
	every_way(SWEEP_BACKEND_URING);
	sweep__open_beneath_force_components(0);
}

/* The same with the disk's physical-order prefetch thread on (HDD class), which opens every file too. */
static void test_uring_hdd_prefetch(void **state)
{
	(void)state;
	if (!uring_ok())
		skip();
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_HDD), 0);
	uint64_t before = sweep__reader_prefetch_pieces();
	every_way(SWEEP_BACKEND_URING);
	sweep__open_beneath_force_components(1);
	all_swaps(SWEEP_BACKEND_URING, BENEATH);
	sweep__open_beneath_force_components(0);
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_AUTO), 0);
	assert_true(sweep__reader_prefetch_pieces() > before); /* it did run */
}

/* A file more than PATH_MAX below the root is still reached beneath it (component walk). */
static void long_beneath(enum sweep_backend b)
{
	char comp[201], rel[PATH_MAX * 2], path[PATH_MAX * 3];
	size_t len = 0;
	int fd = dup(topfd);

	memset(comp, 'd', 200);
	comp[200] = '\0';
	sh("rm -rf '%s'/deep", top);
	assert_int_equal(mkdirat(topfd, "deep", 0755), 0);
	int dfd = openat(topfd, "deep", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(fd);
	fd = dup(dfd);
	rel[0] = '\0';
	while (len < PATH_MAX + 100) {
		assert_int_equal(mkdirat(fd, comp, 0755), 0);
		int nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = nfd;
		len += (size_t)snprintf(rel + len, sizeof(rel) - len, "%s/", comp);
	}
	int f = openat(fd, "file", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_int_equal(write(f, "deep-data", 9), 9);
	struct stat st;
	assert_int_equal(fstat(f, &st), 0);
	close(f);
	close(fd);
	strcat(rel, "file");
	snprintf(path, sizeof(path), "%s/deep/%s", top, rel);

	struct sweep_plan_opts o = { .size = sizeof(o), .order = SWEEP_ORDER_NONE };
	struct sweep_plan *p = NULL;
	assert_int_equal(sweep_plan_new(&o, &p), 0);
	assert_int_equal(sweep_plan_add_beneath(p, dfd, rel, path, S(&st), 0), 0);
	close(dfd);
	struct seen s = { 0 };
	struct sweep_reader_opts ro = { .size = sizeof(ro), .backend = b };
	struct sweep_reader *r = NULL;
	assert_int_equal(sweep_reader_new(&ro, &r), 0);
	assert_int_equal(sweep_reader_run(r, p, &ops, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.status[0], 0);
	assert_string_equal(s.data[0], "deep-data");
	sweep_reader_free(r);
	sweep_plan_free(p);
}

static void test_long_beneath(void **state)
{
	(void)state;
	long_beneath(SWEEP_BACKEND_SYSCALL);
	if (uring_ok())
		long_beneath(SWEEP_BACKEND_URING);
}

/* sweep_open_beneath: what it opens and what it refuses, with openat2 and without. */
static void open_beneath_cases(void)
{
	make_tree();
	int root = openat(topfd, "tree", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	sh("cd '%s' && ln -s ../outside tree/link && ln -s sub/victim tree/flink", top);
	int fd = sweep_open_beneath(root, "sub/victim", O_RDONLY, 0);
	assert_true(fd >= 0);
	close(fd);
	fd = sweep_open_beneath(root, "./sub//victim", O_RDONLY, 0);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sweep_open_beneath(root, "link/secret", O_RDONLY, 0), -ELOOP);
	assert_int_equal(sweep_open_beneath(root, "flink", O_RDONLY, 0), -ELOOP);
	assert_int_equal(sweep_open_beneath(root, "../outside/secret", O_RDONLY, 0), -EXDEV);
	assert_int_equal(sweep_open_beneath(root, "sub/../../outside/secret", O_RDONLY, 0), -EXDEV);
	assert_int_equal(sweep_open_beneath(root, "/etc/passwd", O_RDONLY, 0), -EINVAL);
	assert_int_equal(sweep_open_beneath(root, "nothere", O_RDONLY, 0), -ENOENT);
	assert_int_equal(sweep_open_beneath(root, "before/x", O_RDONLY, 0), -ENOTDIR);
	/* creating beneath: the new file is where it should be, never through a link */
	fd = sweep_open_beneath(root, "sub/new", O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(faccessat(topfd, "tree/sub/new", F_OK, 0), 0);
	assert_int_equal(sweep_open_beneath(root, "link/new", O_WRONLY | O_CREAT, 0600), -ELOOP);
	assert_int_equal(faccessat(topfd, "outside/new", F_OK, 0), -1);
	close(root);
}

static void test_open_beneath(void **state)
{
	(void)state;
	if (sweep__openat2_usable())
		open_beneath_cases();
	sweep__open_beneath_force_components(1);
	open_beneath_cases();
	sweep__open_beneath_force_components(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_beneath),
		cmocka_unit_test(test_syscall_openat2),
		cmocka_unit_test(test_syscall_components),
		cmocka_unit_test(test_uring_openat2),
		cmocka_unit_test(test_uring_components),
		cmocka_unit_test(test_uring_hdd_prefetch),
		cmocka_unit_test(test_long_beneath),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
