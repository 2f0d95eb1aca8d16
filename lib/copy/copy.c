/* SPDX-License-Identifier: MIT */
/*
 * copy: the engine's life cycle, its reporting, and the destination root
 * (see include/sweep/copy.h for what the engine guarantees, and
 * copy_internal.h for how the pieces fit).
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
	 SWEEP_COPY_WRITE_THROUGH | SWEEP_COPY_ONE_FS | SWEEP_COPY_REMOVE_DEST | SWEEP_COPY_DEFAULT_MODES)
#define KNOWN_PRESERVE (SWEEP_PRESERVE_ALL | SWEEP_PRESERVE_STRICT)

/* ---- the run stops once a callback failed or the caller's cancel flag went up ---- */

int sweep__copy_stopped(struct sweep_copy *c)
{
	if (!c->stop && c->o.cancel && *c->o.cancel)
		c->stop = -ECANCELED;
	return c->stop;
}

/* ---- reporting ---- */

int sweep__copy_report(struct sweep_copy *c, enum sweep_copy_op op, int err, const char *src, const char *dst,
		uint64_t cookie)
{
	struct sweep_copy_error ce = { .op = op, .err = err, .src = src, .dst = dst, .cookie = cookie };

	if (op != SWEEP_COPY_OP_CHANGED)
		c->stats.errors++;
	if (c->o.on_error) {
		int rc = c->o.on_error(&ce, c->o.ctx);
		if (rc < 0 && !c->stop)
			c->stop = rc;
	}
	return err ? err : -EINVAL;
}

void sweep__copy_done(struct sweep_copy *c, const char *src, const char *dst, const struct sweep_stat *st,
	       enum sweep_copy_how how, uint64_t bytes, uint64_t cookie, bool existed)
{
	struct sweep_copy_done d = { .src = src, .dst = dst, .st = st, .how = how, .bytes = bytes, .cookie = cookie,
				     .existed = existed };

	switch (how) {
	case SWEEP_COPY_HOW_DATA:
	case SWEEP_COPY_HOW_CLONE:
	case SWEEP_COPY_HOW_RANGE:
		c->stats.files++;
		break;
	case SWEEP_COPY_HOW_DIR:
		c->stats.dirs++;
		break;
	case SWEEP_COPY_HOW_SKIPPED:
		c->stats.skipped++;
		break;
	default:
		c->stats.others++;
	}
	if (how == SWEEP_COPY_HOW_CLONE)
		c->stats.cloned++;
	if (how == SWEEP_COPY_HOW_RANGE)
		c->stats.ranged++;
	if (c->o.on_done) {
		int rc = c->o.on_done(&d, c->o.ctx);
		if (rc < 0 && !c->stop)
			c->stop = rc;
	}
}

int sweep__copy_step(struct sweep_copy *c, enum sweep_copy_step step, const char *src, const char *dst, uint64_t cookie)
{
	if (c->o.on_step) {
		int rc = sweep__copy_async_on_step(c, step, src, dst, cookie);
		if (rc < 0 && !c->stop)
			c->stop = rc;
	}
	return sweep__copy_stopped(c);
}

struct meta_ctx {
	struct sweep_copy *c;
	const char *src, *dst;
	uint64_t cookie;
};

void sweep__copy_report_meta(struct sweep_copy *c, enum sweep_copy_meta op, int err, const char *src, const char *dst,
		      uint64_t cookie)
{
	struct sweep_copy_error ce = { .op = SWEEP_COPY_OP_META, .meta = op, .err = err, .src = src, .dst = dst,
				       .cookie = cookie };

	c->stats.errors++;
	if (c->o.on_error) {
		int rc = c->o.on_error(&ce, c->o.ctx);
		if (rc < 0 && !c->stop)
			c->stop = rc;
	}
}

static void meta_failed(enum sweep_copy_meta op, int err, void *ctx)
{
	struct meta_ctx *m = ctx;

	sweep__copy_report_meta(m->c, op, err, m->src, m->dst, m->cookie);
}

void sweep__copy_apply_meta(struct sweep_copy *c, const struct meta_ref *src, const struct meta_ref *dst,
		     const struct sweep_stat *st, unsigned what, const char *src_name, const char *dst_name,
		     uint64_t cookie)
{
	struct meta_ctx m = { .c = c, .src = src_name, .dst = dst_name, .cookie = cookie };

	if (what)
		sweep__meta_copy(src, dst, st, what, meta_failed, &m);
}

/* ---- the destination ---- */

mode_t sweep__copy_new_mode(const struct sweep_copy *c, uint32_t src_mode)
{
	if (c->o.flags & SWEEP_COPY_DEFAULT_MODES)
		return (mode_t)((S_ISDIR(src_mode) || S_ISSOCK(src_mode) ? 0777 : 0666) & ~c->umask);
	/* cp keeps a new directory's set-gid and sticky bits even without -p. */
	return (mode_t)(src_mode & (S_ISDIR(src_mode) ? 07777u : 0777u) & ~c->umask);
}

const char *sweep__dst_show_in(const struct sweep_copy *c, const char *dst, char **buf, size_t *cap)
{
	size_t pl = strlen(c->show), dl = strlen(dst);
	bool slash = pl > 0 && c->show[pl - 1] != '/' && dl > 0;

	if (sweep__grow(buf, cap, pl + slash + dl + 1, 1, 256) < 0)
		return dst;
	memcpy(*buf, c->show, pl);
	if (slash)
		(*buf)[pl] = '/';
	memcpy(*buf + pl + slash, dst, dl + 1);
	return *buf;
}

const char *sweep__dst_show(struct sweep_copy *c, const char *dst)
{
	return sweep__dst_show_in(c, dst, &c->showbuf, &c->showcap);
}

int sweep__dest_dir(struct sweep_copy *c, const char *dst, const char **ret_name)
{
	size_t end = strlen(dst);
	const char *slash = NULL;
	int fd;

	if (c->dest_fd < 0)
		return -EBADF;
	/* The last component, trailing slashes kept on it ("d/" stays a name that must be a directory). */
	while (end > 1 && dst[end - 1] == '/')
		end--;
	for (size_t i = end; i-- > 0;)
		if (dst[i] == '/') {
			slash = dst + i;
			break;
		}
	if (!slash) {
		*ret_name = dst;
		fd = fcntl(c->dest_fd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	*ret_name = slash + 1;
	size_t n = (size_t)(slash - dst);
	char *dir = strndup(dst, n);
	if (!dir)
		return -ENOMEM;
	fd = sweep__open_beneath(c->dest_fd, n ? dir : ".", O_PATH | O_DIRECTORY, 0);
	free(dir);
	return fd;
}

int sweep__src_dir(const struct src_ref *s, const char **ret_name)
{
	if (s->dirfd >= 0) {
		*ret_name = s->name;
		int fd = fcntl(s->dirfd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	const char *rel = s->rel;
	const char *slash = strrchr(rel, '/');
	if (!slash) {
		*ret_name = rel;
		int fd = s->root_fd == AT_FDCWD ? open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)
						: fcntl(s->root_fd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	*ret_name = slash + 1;
	char *dir = strndup(rel, (size_t)(slash - rel));
	if (!dir)
		return -ENOMEM;
	int fd;
	if (s->root_fd == AT_FDCWD) {
		/* A path the caller gave: its directories are followed as named. */
		fd = open(slash == rel ? "/" : dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		fd = fd < 0 ? -errno : fd;
	} else {
		fd = sweep__open_beneath(s->root_fd, slash == rel ? "." : dir, O_PATH | O_DIRECTORY, 0);
	}
	free(dir);
	return fd;
}

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
	/* The writer thread's copies still waiting go where they were meant to, first. */
	sweep__copy_async_reap(c, true);
	if (c->dest_fd >= 0)
		close(c->dest_fd);
	free(c->show);
	c->dest_fd = fd;
	c->dest_dev = st.st_dev;
	c->show = s;
	return 0;
}

/* ---- life cycle ---- */

/* An io_uring write failed: the file it belongs to fails (reported at its end). */
static void write_failed(uint64_t tag, int err, void *ctx)
{
	struct sweep_copy *c = ctx;

	if (tag < c->nq)
		sweep__copy_write_failed(c, tag, err);
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
	rc = sweep__opts_copy(&c->o, sizeof(c->o), opts, offsetof(struct sweep_copy_opts, flags) + sizeof(unsigned));
	if (rc == 0)
		rc = sweep__flags_check(c->o.flags, KNOWN_FLAGS);
	if (rc == 0)
		rc = sweep__flags_check(c->o.preserve, KNOWN_PRESERVE);
	if (rc == 0 && ((unsigned)c->o.reflink > SWEEP_COPY_REFLINK_NEVER || (unsigned)c->o.sparse > SWEEP_COPY_SPARSE_NEVER ||
			(unsigned)c->o.writes > SWEEP_COPY_WRITES_PWRITE || (unsigned)c->o.order > SWEEP_ORDER_NONE ||
			(unsigned)c->o.backend > SWEEP_BACKEND_SYSCALL))
		rc = -EINVAL;
	if (rc < 0) {
		free(c);
		return rc;
	}
	c->umask = umask(0);
	umask(c->umask);
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
		.read_flags = (c->o.sparse == SWEEP_COPY_SPARSE_NEVER ? 0 : SWEEP_READ_SPARSE) | SWEEP_READ_NOATIME,
		.ops = &sweep__copy_read_ops,
		.on_batch = sweep__copy_on_batch,
		.on_batch_end = sweep__copy_on_batch_end,
		.ctx = c,
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
		rc = sweep__copy_async_new(c, &c->async);
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
	sweep__copy_async_reap(c, true); /* the thread's copies finish (or go) before the queue they name goes */
	sweep__copy_async_free(c->async);
	c->async = NULL;
	sweep__writer_drain(c->writer); /* before the copies it may still write into are closed */
	sweep__copy_queue_free(c);
	for (size_t i = 0; i < c->ndirs; i++) {
		free(c->dirs[i].src);
		sweep__meta_blob_free(c->dirs[i].blob);
	}
	free(c->dirs);
	for (size_t i = 0; i < c->nmade; i++)
		free(c->made[i]);
	free(c->made);
	sweep__copy_links_free(c);
	sweep__writer_free(c->writer);
	sweep_batch_free(c->batch);
	if (c->dest_fd >= 0)
		close(c->dest_fd);
	free(c->show);
	free(c->showbuf);
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
	s.write_requests = ws.requests + sweep__copy_async_write_requests(c->async);
	s.writes_uring = sweep__writer_backend(c->writer) == SWEEP_BACKEND_URING;
	s.tmpfile = !__atomic_load_n(&c->no_tmpfile, __ATOMIC_RELAXED);
	struct sweep_batch_stats bs = { .size = sizeof(bs) };
	if (sweep_batch_stats(c->batch, &bs) == 0)
		s.batches = bs.batches;
	sweep__out_put(ret, &s, sizeof(s));
	return 0;
}

/* Directory metadata, deepest (last made) first: a directory's times are set after everything in it changed. */
SWEEP_EXPORT int sweep_copy_finish(struct sweep_copy *c)
{
	if (!c)
		return -EINVAL;
	sweep_copy_flush(c);
	if (c->ndirs)
		sweep__copy_step(c, SWEEP_COPY_STEP_FINISH, NULL, NULL, 0);
	for (size_t i = c->ndirs; i-- > 0 && !sweep__copy_stopped(c);) {
		struct dirmeta *d = &c->dirs[i];
		const char *name;
		int dfd = sweep__dest_dir(c, d->dst, &name);
		int fd = -1;
		if (dfd >= 0) {
			fd = openat(dfd, !strcmp(d->dst, ".") ? "." : name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0 && errno == EACCES) /* not readable to us: its metadata still changes by name */
				fd = -2;
		}
		if (dfd < 0 || fd == -1) {
			sweep__copy_report(c, SWEEP_COPY_OP_META, dfd < 0 ? dfd : -errno, d->src, sweep__dst_show(c, d->dst), 0);
		} else {
			struct meta_ref ms = { .fd = -1, .blob = d->blob };
			struct meta_ref md = { .fd = fd, .dirfd = dfd, .name = !strcmp(d->dst, ".") ? "." : name };
			unsigned what = c->o.preserve;
			if (!d->blob) /* the source's could not be read when it was met (reported then) */
				what &= ~(unsigned)(SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL);
			/* cp keeps a new directory's set-gid and sticky bits even without -p. */
			if (!(what & SWEEP_PRESERVE_MODE) && d->created) {
				mode_t m = sweep__copy_new_mode(c, d->st.mode);
				if ((fd >= 0 ? fchmod(fd, m) : fchmodat(dfd, md.name, m, AT_SYMLINK_NOFOLLOW)) < 0)
					sweep__copy_report(c, SWEEP_COPY_OP_META, -errno, d->src, sweep__dst_show(c, d->dst), 0);
			}
			if (fd < 0)
				md.fd = -1;
			sweep__copy_apply_meta(c, &ms, &md, &d->st, what, d->src, sweep__dst_show(c, d->dst), 0);
		}
		if (fd >= 0)
			close(fd);
		if (dfd >= 0)
			close(dfd);
	}
	for (size_t i = 0; i < c->ndirs; i++) {
		free(c->dirs[i].src);
		c->dirs[i].blob = sweep__meta_blob_free(c->dirs[i].blob);
	}
	c->ndirs = 0;
	if (sweep__copy_stopped(c))
		return c->stop;
	return c->stats.errors > INT_MAX ? INT_MAX : (int)c->stats.errors;
}
