/* SPDX-License-Identifier: MIT */
/*
 * copy: the engine's life cycle (see include/sweep/copy.h for what the
 * engine guarantees, and copy_internal.h for its stages): options, the
 * destination root, the batch whose reads drive the read stage, the writer
 * thread, and the end of a run (flush, then directory metadata).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_internal.h"

#define KNOWN_FLAGS                                                                                   \
	(SWEEP_COPY_RECURSIVE | SWEEP_COPY_DEREF_ALL | SWEEP_COPY_DEREF_ROOTS | SWEEP_COPY_LINKS |         \
	 SWEEP_COPY_NO_CLOBBER | SWEEP_COPY_UPDATE | SWEEP_COPY_FSYNC | SWEEP_COPY_NO_SAME_FILE_CHECK |    \
	 SWEEP_COPY_WRITE_THROUGH | SWEEP_COPY_ONE_FS | SWEEP_COPY_REMOVE_DEST | SWEEP_COPY_DEFAULT_MODES |      \
	 SWEEP_COPY_FORCE | SWEEP_COPY_WRITE_DANGLING | SWEEP_COPY_HARD_LINK | SWEEP_COPY_SYMBOLIC_LINK |       \
	 SWEEP_COPY_ATTRS_ONLY | SWEEP_COPY_CONTENTS)

SWEEP_EXPORT int sweep_copy_set_dest(struct sweep_copy *c, int dirfd, const char *path, const char *show)
{
	struct stat st;
	char *s;
	int fd;

	if (!c || !path || (dirfd < 0 && dirfd != AT_FDCWD))
		return -EINVAL;
	/* The caller named it: symlinks in its own path are followed, once; nothing below it ever is. */
	fd = openat(dirfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(fd);
		return -ENOTDIR;
	}
	s = strdup(show ? show : path);
	if (!s) {
		close(fd);
		return -ENOMEM;
	}
	/* The copies still waiting go where they were meant to, first. */
	sweep__read_names_flush(c);
	sweep__thread_reap(c, true);
	sweep__thread_dest_changed(c->thread);
	sweep__dest_cache_drop(&c->dcache);
	if (c->dest_fd >= 0)
		close(c->dest_fd);
	free(c->show);
	c->dest_fd = fd;
	c->dest_dev = st.st_dev;
	c->show = s;
	return 0;
}

/* An io_uring write failed: the copy it belongs to fails (its writes are drained before it ends). */
static void write_failed(uint64_t tag, int err, void *ctx)
{
	struct sweep_copy *c = ctx;

	(void)tag;
	if (c->wcur)
		sweep__write_fail(c->wcur, SWEEP_COPY_OP_WRITE, err);
}

SWEEP_EXPORT int sweep_copy_new(const struct sweep_copy_opts *opts, struct sweep_copy **ret)
{
	struct sweep_copy *c;
	int rc;

	if (!ret)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->dest_fd = -1;
	c->dcache.fd = -1;
	rc = sweep__opts_copy(&c->o, sizeof(c->o), opts, offsetof(struct sweep_copy_opts, flags) + sizeof(unsigned));
	if (rc == 0)
		rc = sweep__flags_check(c->o.flags, KNOWN_FLAGS);
	if (rc == 0)
		rc = sweep__flags_check(c->o.preserve, KNOWN_PRESERVE);
	if (rc == 0 && ((unsigned)c->o.reflink > SWEEP_COPY_REFLINK_NEVER || (unsigned)c->o.sparse > SWEEP_COPY_SPARSE_NEVER ||
			(unsigned)c->o.writes > SWEEP_COPY_WRITES_PWRITE || (unsigned)c->o.order > SWEEP_ORDER_NONE ||
			(unsigned)c->o.backend > SWEEP_BACKEND_SYSCALL || (unsigned)c->o.backup > SWEEP_COPY_BACKUP_EXISTING))
		rc = -EINVAL;
	if (rc < 0) {
		free(c);
		return rc;
	}
	pthread_mutex_init(&c->step_mu, NULL);
	c->umask = umask(0);
	umask(c->umask);
	c->euid = geteuid();
	c->egid = getegid();
	c->show = strdup("");
#if SWEEP_TEST_HOOKS
	/* Test builds only: make named temporaries, as on a filesystem without O_TMPFILE. */
	if (getenv("SWEEP_TEST_NO_TMPFILE"))
		c->no_tmpfile = true;
#endif

	struct sweep_batch_opts bo = {
		.size = sizeof(bo),
		.order = c->o.order,
		.max_files = c->o.batch_files ? c->o.batch_files : SIZE_MAX,
		.max_bytes = copy_batch_bytes(c),
		/* A batch already in the page cache is not opened for FIEMAP: its order does not matter. */
		.plan_flags = SWEEP_PLAN_CACHE_CHECK,
		.backend = c->o.backend,
		.queue_depth = c->o.queue_depth,
		/*
		 * As cp, a file is read to its end: its size is only a hint (/proc, /sys, a file that grew).
		 * Sources on several disks: every disk at once (DESIGN §3c).
		 */
		.read_flags = (c->o.sparse == SWEEP_COPY_SPARSE_NEVER ? 0 : SWEEP_READ_SPARSE) | SWEEP_READ_NOATIME |
			      SWEEP_READ_TO_EOF | SWEEP_READ_BY_DEVICE,
		.ops = &sweep__read_ops,
		.on_batch = sweep__read_on_batch,
		.on_batch_end = sweep__read_on_batch_end,
		.ctx = c,
		.on_sort = sweep__read_on_sort,
	};
	/* AUTO: pwrite, the measured better choice (see SWEEP_COPY_WRITES_AUTO). */
	struct writer_opts wo = {
		.size = sizeof(wo),
		.backend = c->o.writes == SWEEP_COPY_WRITES_URING ? c->o.backend : SWEEP_BACKEND_SYSCALL,
		.on_fail = write_failed,
		.ctx = c,
	};
	rc = c->show ? 0 : -ENOMEM;
	if (rc == 0)
		rc = sweep_batch_new(&bo, &c->batch);
	if (rc == 0)
		rc = sweep__writer_new(&wo, &c->writer);
	if (rc == 0)
		rc = sweep__thread_new(c, &c->thread);
	if (rc < 0) {
		sweep_copy_free(c);
		return rc;
	}
	*ret = c;
	return 0;
}

SWEEP_EXPORT struct sweep_copy *sweep_copy_free(struct sweep_copy *c)
{
	if (!c)
		return NULL;
	sweep__read_names_flush(c);
	sweep__thread_reap(c, true); /* the thread's copies finish (or go) before the queue they name goes */
	sweep__clone_free(c);
	sweep__thread_free(c->thread);
	c->thread = NULL;
	sweep__writer_drain(c->writer); /* before the copies it may still write into are closed */
	if (c->cur.q)
		sweep__write_free(&c->cur);
	free(c->names);
	sweep__settle_late_links(c);
	sweep__read_queue_drop(c);
	sweep__carry_free(c);
	free(c->q);
	free(c->retry);
	free(c->late);
	sweep__dirs_free(c);
	free(c->dirs);
	for (size_t i = 0; i < c->nmade; i++)
		free(c->made[i]);
	free(c->made);
	sweep__links_free(c);
	sweep__writer_free(c->writer);
	sweep_batch_free(c->batch);
	sweep__dest_cache_free(&c->dcache);
	if (c->dest_fd >= 0)
		close(c->dest_fd);
	free(c->show);
	free(c->showbuf);
	pthread_mutex_destroy(&c->step_mu);
	free(c);
	return NULL;
}

SWEEP_EXPORT int sweep_copy_stats(const struct sweep_copy *c, struct sweep_copy_stats *ret)
{
	struct writer_stats ws;
	struct sweep_copy_stats s;
	int rc = c ? sweep__out_begin(&s, sizeof(s), ret, sizeof(size_t)) : -EINVAL;

	if (rc < 0)
		return rc;
	s = c->stats;
	sweep__writer_stats(c->writer, &ws);
	s.write_requests = ws.requests + sweep__thread_write_requests(c->thread);
	s.writes_uring = sweep__writer_backend(c->writer) == SWEEP_BACKEND_URING;
	s.tmpfile = !__atomic_load_n(&c->no_tmpfile, __ATOMIC_RELAXED);
	s.writers = sweep__thread_writers(c->thread);
	struct sweep_batch_stats bs = { .size = sizeof(bs) };
	if (sweep_batch_stats(c->batch, &bs) == 0)
		s.batches = bs.batches;
	sweep__out_put(ret, &s, sizeof(s));
	return 0;
}

SWEEP_EXPORT int sweep_copy_flush(struct sweep_copy *c)
{
	if (!c)
		return -EINVAL;
	/* Then the files out of descriptors even by themselves in an earlier batch, once more (copy_carry.c). */
	for (int carried = 0; carried < 2 && (!carried || c->ncarry > 0); carried++) {
		if (carried)
			sweep__carry_requeue(c);
		if (c->nq > 0 && !sweep__copy_stopped(c)) {
			int rc = sweep_batch_flush(c->batch);
			if (rc < 0 && !c->stop)
				c->stop = rc;
		}
		/* Whatever a stopped run left: the thread's copies settle (or go), then the queue goes. */
		sweep__read_names_flush(c);
		sweep__thread_reap(c, true);
		sweep__settle_late_links(c);
		sweep__read_queue_drop(c);
	}
	return sweep__copy_stopped(c);
}

SWEEP_EXPORT int sweep_copy_finish(struct sweep_copy *c)
{
	if (!c)
		return -EINVAL;
	sweep_copy_flush(c);
	sweep__dirs_apply(c);
	if (sweep__copy_stopped(c))
		return c->stop;
	return c->stats.errors > INT_MAX ? INT_MAX : (int)c->stats.errors;
}
