/*
 * A program built the way a user builds one: against an installed copy of
 * libsweep, found through pkg-config, nothing from the source tree. It
 * walks a tree, plans and reads it in batches, copies it, and orders its
 * paths, and checks each result; plus the version macros.
 * Usage: consumer TREE COPY-PARENT
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sweep.h>

#if !SWEEP_CHECK_VERSION(0, 1, 0)
#error "the installed headers are older than 0.1.0"
#endif
#if SWEEP_CHECK_VERSION(SWEEP_VERSION_MAJOR + 1, 0, 0)
#error "SWEEP_CHECK_VERSION accepts a later major version"
#endif

struct job {
	struct sweep_batch *batch;
	unsigned long files, bytes;
	char **paths;
	size_t npaths;
};

static int fail(const char *what, int err)
{
	fprintf(stderr, "consumer: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static int on_data(const struct sweep_file *f, uint64_t off, const void *buf, size_t len, void *ctx)
{
	struct job *j = ctx;
	(void)f, (void)off, (void)buf;
	j->bytes += len;
	return 0;
}

static int on_end(const struct sweep_file *f, int status, void *ctx)
{
	struct job *j = ctx;
	(void)f;
	if (status != 0)
		fail("a file did not read cleanly", status);
	j->files++;
	return 0;
}

static int on_entry(const struct sweep_entry *e, void *ctx)
{
	struct job *j = ctx;
	if (!S_ISREG(e->st.mode))
		return 0;
	j->paths = realloc(j->paths, (j->npaths + 1) * sizeof(*j->paths));
	j->paths[j->npaths++] = strdup(e->path);
	return sweep_batch_add_entry(j->batch, e, 0);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	if (strcmp(sweep_version(), SWEEP_VERSION_STRING))
		fail("the library is not the version of its headers", EINVAL);

	/* walk + plan + read */
	static const struct sweep_read_ops ops = { .size = sizeof(ops), .data = on_data, .end = on_end };
	struct job j = { 0 };
	struct sweep_batch_opts bo = { .size = sizeof(bo), .max_files = 7, .ops = &ops, .ctx = &j };
	int rc = sweep_batch_new(&bo, &j.batch);
	if (rc < 0)
		fail("sweep_batch_new", rc);
	struct sweep_walk_opts wo = { .size = sizeof(wo), .on_entry = on_entry, .ctx = &j };
	const char *roots[1] = { argv[1] };
	rc = sweep_walk(roots, 1, &wo);
	if (rc != 0)
		fail("sweep_walk", rc);
	rc = sweep_batch_flush(j.batch);
	if (rc < 0)
		fail("sweep_batch_flush", rc);
	struct sweep_batch_stats bs = { .size = sizeof(bs) };
	sweep_batch_stats(j.batch, &bs);
	sweep_batch_free(j.batch);
	if (j.files != j.npaths || bs.batches < 2)
		fail("not every file was read in batches", EIO);

	/* order */
	size_t *perm = calloc(j.npaths, sizeof(*perm));
	struct sweep_order_opts oo = { .size = sizeof(oo) };
	rc = sweep_order_paths((const char *const *)j.paths, j.npaths, &oo, perm);
	if (rc != 0)
		fail("sweep_order_paths", rc < 0 ? rc : EIO);
	unsigned char *seen = calloc(j.npaths, 1);
	for (size_t i = 0; i < j.npaths; i++)
		seen[perm[i]]++;
	for (size_t i = 0; i < j.npaths; i++)
		if (seen[i] != 1)
			fail("sweep_order_paths is not a permutation", EINVAL);

	/* copy */
	struct sweep_copy_opts co = { .size = sizeof(co), .flags = SWEEP_COPY_RECURSIVE, .preserve = SWEEP_PRESERVE_ALL };
	struct sweep_copy *c = NULL;
	rc = sweep_copy_new(&co, &c);
	if (rc < 0)
		fail("sweep_copy_new", rc);
	rc = sweep_copy_set_dest(c, AT_FDCWD, argv[2], NULL);
	if (rc < 0)
		fail("sweep_copy_set_dest", rc);
	rc = sweep_copy_tree(c, argv[1], "copy");
	if (rc < 0)
		fail("sweep_copy_tree", rc);
	rc = sweep_copy_finish(c);
	if (rc != 0)
		fail("sweep_copy_finish", rc < 0 ? rc : EIO);
	struct sweep_copy_stats cs = { .size = sizeof(cs) };
	sweep_copy_stats(c, &cs);
	sweep_copy_free(c);
	if (cs.files != j.files)
		fail("the copy has another number of files", EIO);
	printf("files=%lu bytes=%lu batches=%llu copied=%llu version=%s\n", j.files, j.bytes,
	       (unsigned long long)bs.batches, (unsigned long long)cs.files, sweep_version());
	for (size_t i = 0; i < j.npaths; i++)
		free(j.paths[i]);
	free(j.paths);
	free(perm);
	free(seen);
	return 0;
}
