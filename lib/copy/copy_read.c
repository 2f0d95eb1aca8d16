/* SPDX-License-Identifier: MIT */
/*
 * copy, stage 2 of 4 (read): the reader's callbacks for a batch of queued
 * files. Each file the reader opens (begin) is handed to the write stage
 * with its data as it arrives (data) and completed when it ends (end), so
 * the copies are made in the order the sources are read. The write stage
 * runs on the writer thread (copy_thread.c) where one is running and the
 * file's data is to be read, else here; a clone (FICLONE) or a kernel copy
 * (copy_file_range) onto the source's own filesystem is made on the clone
 * pool (copy_clone.c) once the reader ends the file, or here at begin
 * where there is no pool, and the reader then delivers nothing of the
 * file. Every finished copy goes to the settle stage.
 *
 * Two more ways in: a stream (a FIFO or device named without -r) is read
 * here with plain reads to its end; and a file whose open or copy ran out
 * of descriptors (EMFILE, ENFILE: every other file of the batch held one)
 * is read again the same way once the batch is done and they are closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_internal.h"

#define STREAM_BUFFER (1u << 20)
/*
 * Copies made on this thread are named a few at a time, after one lookup
 * of each of their directories (copy_write.c): an openat2 and a close a
 * file cost about 6% of warm cp -a's CPU. The files of a directory need
 * not come one after another in the order they are read (a disk's order):
 * so many wait, each holding its descriptor, whatever their directories;
 * fewer under a low open-file limit (a sixteenth of it: the reader's
 * window and the clone pool size theirs by it too), none under 32.
 */
#define NAMES_MAX 16

/* The copy made on this thread, for the reader's callback on queue entry idx. */
static struct fcopy *cur_for(struct sweep_copy *c, size_t idx)
{
	/* begin() is not called for a file that could not be opened: end() starts it then. */
	if (c->cur.q != &c->q[idx]) {
		sweep__write_start(&c->cur, &c->q[idx]);
		c->cur.how = SWEEP_COPY_HOW_DATA;
		c->cur.dc = &c->dcache;
	}
	c->wcur = &c->cur;
	return &c->cur;
}

/* The source has no holes to keep: read whole (no map), empty, or its data one extent from 0 to its end. */
static bool source_dense(const struct sweep_copy *c, const struct sweep_file *f)
{
	if (c->o.sparse == SWEEP_COPY_SPARSE_NEVER || f->st.size == 0)
		return true;
	return f->data_map_len == 1 && f->data_map[0].logical == 0 && f->data_map[0].length == f->st.size;
}

/*
 * copy_file_range over the data regions, then on past the planned size to
 * the file's end (one call more: it may have grown). 1 when the kernel
 * cannot do it for this pair and nothing was copied (the reader reads
 * instead), 0 when done or failed (recorded).
 */
static int range_copy(struct sweep_copy *c, struct fcopy *fc, const struct sweep_file *f)
{
	struct sweep_extent whole = { .logical = 0, .length = f->st.size };
	/* Read sparse, the map lists every byte of data: none at all (a file of holes) is an empty map. */
	bool mapped = c->o.sparse != SWEEP_COPY_SPARSE_NEVER;
	int rc = sweep__clone_range(fc, f->fd, mapped ? f->data_map : &whole,
				    mapped ? f->data_map_len : (f->st.size ? 1 : 0), f->st.size);

	sweep__report_bytes(c, fc->bytes);
	return rc;
}

/*
 * A clone, or a kernel copy on one filesystem, instead of reading: true when
 * done (or failed: recorded), false when the reader is to deliver the data.
 */
static bool kernel_copy(struct sweep_copy *c, struct fcopy *fc, const struct sweep_file *f)
{
	struct stat tst;

	if (c->o.reflink == SWEEP_COPY_REFLINK_NEVER)
		return false;
	/*
	 * Onto another filesystem whose clones from this one were refused
	 * (as planned: the directory's device, the writer thread's rule),
	 * neither a clone nor a kernel copy is tried: no fstat of the copy
	 * either (a call a file, warm copies made on this thread).
	 */
	if (c->o.reflink == SWEEP_COPY_REFLINK_AUTO && !fc->q->place && fc->q->dst_dev != f->st.dev &&
	    copy_noclone_err(c, f->st.dev, fc->q->dst_dev) != 0)
		return false;
	bool have_tst = fstat(fc->tmpfd, &tst) == 0;
	int no_err = have_tst ? copy_noclone_err(c, f->st.dev, (uint64_t)tst.st_dev) : 0;
	bool known_no = no_err != 0;
	int err = known_no ? no_err : sweep__clone_file(fc, f->fd, f->st.size);
	if (err == 0) {
		sweep__clone_sized(fc); /* what was cloned: the source as it was then */
		sweep__report_bytes(c, fc->bytes);
		return true;
	}
	if (c->o.reflink == SWEEP_COPY_REFLINK_ALWAYS) {
		sweep__write_fail(fc, SWEEP_COPY_OP_CLONE, -err);
		return true;
	}
	if (!known_no && have_tst && (err == EXDEV || err == EOPNOTSUPP || err == ENOTTY)) {
		/* remembered in place of the oldest pair once the table is full */
		c->noclone[c->noclone_next] = (struct noclone){ .src = f->st.dev, .dst = (uint64_t)tst.st_dev, .err = err };
		c->noclone_next = (c->noclone_next + 1) % COPY_NOCLONE_PAIRS;
		if (c->nnoclone < COPY_NOCLONE_PAIRS)
			c->nnoclone++;
		if (tst.st_dev == f->st.dev)
			__atomic_store_n(&c->noclone_self, (uint64_t)tst.st_dev + 1, __ATOMIC_RELAXED);
	}
	/* Same filesystem and nothing to punch: let the kernel copy. */
	return !fc->punch && have_tst && (uint64_t)tst.st_dev == f->st.dev && range_copy(c, fc, f) == 0;
}

void sweep__read_names_flush(struct sweep_copy *c)
{
	size_t n = c->nnames;

	if (!n)
		return;
	c->nnames = 0;
	sweep__write_name_group(c, c->names, n);
	for (size_t i = 0; i < n; i++) {
		sweep__write_close(&c->names[i]);
		sweep__settle_file(c, &c->names[i]);
		sweep__write_free(&c->names[i]);
	}
}

/* fc, finished but for its name: kept to be named with the next copies waiting (false: not kept). */
static bool names_keep(struct sweep_copy *c, struct fcopy *fc)
{
	if (!c->names_max) { /* once: 1, none kept */
		unsigned n = sweep__nofile_share(16, NAMES_MAX);
		c->names_max = n < 2 || !(c->names = malloc(n * sizeof(*c->names))) ? 1 : n;
	}
	if (c->names_max < 2)
		return false;
	c->names[c->nnames++] = *fc;
	sweep__write_start(&c->cur, NULL); /* the copy is the list's now */
	return true;
}

static int rd_begin(const struct sweep_file *f, void *ctx)
{
	struct sweep_copy *c = ctx;
	const struct qitem *q = &c->q[f->entry->cookie];
	bool dense = source_dense(c, f);

	if (sweep__report_step(c, SWEEP_COPY_STEP_OPENED, q->src, sweep__dst_show(c, q->dst), q->cookie) < 0)
		return c->stop;
	if (sweep__clone_takes(c, q, f)) {
		/* Made on the clone pool once the reader ends it (copy_clone.c): the thread's copies settle first. */
		sweep__read_names_flush(c);
		sweep__thread_reap(c, true);
		c->clone_pending = f->entry->cookie + 1;
		return SWEEP_READ_SKIP;
	}
	/* Anywhere else: the pool's copies, read before, settle first. */
	sweep__clone_reap(c, true);
	if (c->thread && sweep__thread_takes(c, q, f)) {
		sweep__read_names_flush(c); /* settled before the thread's copy */
		c->job = sweep__thread_begin(c, q, f->st.size, dense);
		if (c->job)
			return 0;
	}
	/* Copied here: what the thread has yet to finish is settled first, in the order it was read. */
	sweep__thread_reap(c, true);
	struct fcopy *fc = cur_for(c, f->entry->cookie);
	fc->size = f->st.size;
	if (sweep__write_open(c, fc, dense) < 0)
		return SWEEP_READ_SKIP;
	/*
	 * No fallocate: it allocates (unwritten extents) at once, file by file,
	 * and the conversions cost extra journal writes. Measured on an aged
	 * ext4 copy of 17k files: 3,400 write requests and 830 seeks on the
	 * destination with it, 500-630 and 130 without (cp -a: 700 and 325).
	 * Delayed allocation already lays out files written in one stream.
	 */
	if (!q->into && kernel_copy(c, fc, f))
		return SWEEP_READ_SKIP;
	return 0;
}

static int rd_data(const struct sweep_file *f, uint64_t off, const void *buf, size_t len, void *ctx)
{
	struct sweep_copy *c = ctx;

	if (sweep__copy_stopped(c))
		return c->stop;
	if (c->job) { /* on_bytes as the thread writes */
		sweep__thread_data(c, c->job, buf, len, off);
		return sweep__copy_stopped(c);
	}
	struct fcopy *fc = cur_for(c, f->entry->cookie);
	if (!fc->err && fc->tmpfd >= 0 && sweep__write_data(c->writer, fc, buf, len, off, f->entry->cookie) == 0)
		sweep__report_bytes(c, len);
	return 0;
}

/* Kernel copies skip the reader's own checks: did the source change meanwhile? */
static int kernel_copy_status(const struct fcopy *fc, const struct sweep_file *f, int status)
{
	if (fc->how == SWEEP_COPY_HOW_CLONE || fc->how == SWEEP_COPY_HOW_RANGE)
		return sweep__clone_status(fc, f->fd, status);
	return status;
}

static int rd_end(const struct sweep_file *f, int status, void *ctx)
{
	struct sweep_copy *c = ctx;

	if (c->clone_pending == f->entry->cookie + 1) {
		c->clone_pending = 0;
		if (status >= 0) {
			sweep__clone_submit(c, &c->q[f->entry->cookie], f, status);
			return sweep__copy_stopped(c) ? c->stop : 0;
		}
	}
	if (c->job) {
		sweep__thread_end(c, c->job, f, status, f->length);
		c->job = NULL;
		sweep__thread_reap(c, false);
		return sweep__copy_stopped(c) ? c->stop : 0;
	}
	sweep__thread_reap(c, true);
	sweep__clone_reap(c, true);
	struct fcopy *fc = cur_for(c, f->entry->cookie);

	/* The data is written (or failed) before the file is sized, completed and named. */
	int wrc = sweep__writer_drain(c->writer);
	if (wrc < 0)
		sweep__write_fail(fc, SWEEP_COPY_OP_WRITE, wrc);
	if (status < 0)
		sweep__write_fail(fc, f->fd < 0 ? SWEEP_COPY_OP_OPEN_SRC : SWEEP_COPY_OP_READ, status);
	fc->st = f->st;
	status = kernel_copy_status(fc, f, status);
	if (fc->how == SWEEP_COPY_HOW_DATA)
		fc->size = f->length; /* read to its end: what it held, whatever its size said */
	fc->status = status;
	c->wcur = NULL;
	if (c->names && c->nnames == c->names_max)
		sweep__read_names_flush(c);
	if (!fc->err && fc->tmpfd >= 0 && !sweep__copy_stopped(c) && sweep__write_finish_unnamed(c, fc, f->fd)) {
		if (names_keep(c, fc))
			return sweep__copy_stopped(c) ? c->stop : 0;
		sweep__write_name_group(c, fc, 1);
	}
	sweep__read_names_flush(c); /* (a copy not kept: those before it settle first) */
	sweep__write_close(fc);
	sweep__settle_file(c, fc);
	sweep__write_free(fc);
	return sweep__copy_stopped(c) ? c->stop : 0;
}

/*
 * A file copied onto its own filesystem is cloned where the filesystem can
 * (xfs, btrfs): none of its data is read then, so none is read ahead of
 * rd_begin (measured: sweep-cp -a on one xfs filesystem read all 1.2 GB of
 * a tree it then cloned, where cp -a read 36 MB of metadata). Once a clone
 * onto this filesystem was refused (ext4), its files are read ahead again:
 * the kernel copy (range_copy) then finds their data in the page cache.
 */
static bool rd_read_after_begin(const struct sweep_file *f, void *ctx)
{
	const struct sweep_copy *c = ctx;
	const struct qitem *q = &c->q[f->entry->cookie];

	uint64_t dev = f->entry->dev; /* as planned: the reader opens only that file */

	return c->o.reflink != SWEEP_COPY_REFLINK_NEVER && !q->into && !q->place && dev == q->dst_dev &&
	       __atomic_load_n(&c->noclone_self, __ATOMIC_RELAXED) != dev + 1 &&
	       !(c->thread && sweep__thread_takes(c, q, f));
}

const struct sweep_read_ops sweep__read_ops = {
	.size = sizeof(struct sweep_read_ops),
	.begin = rd_begin,
	.data = rd_data,
	.end = rd_end,
	.read_after_begin = rd_read_after_begin,
};

int sweep__read_on_sort(const struct sweep_plan *p, void *ctx)
{
	return sweep__report_step(ctx, SWEEP_COPY_STEP_SORT, NULL, NULL, sweep_plan_count(p));
}

int sweep__read_on_batch(const struct sweep_plan *p, void *ctx)
{
	struct sweep_copy *c = ctx;

	c->batch_warm = sweep__plan_warm(p);
	return sweep__report_step(c, SWEEP_COPY_STEP_FLUSH, NULL, NULL, 0);
}

/* The source's status after a stream was read from fd to its end (st: fstat at the open). */
static int stream_status(int fd, const struct stat *st)
{
	struct stat now;

	if (!S_ISREG(st->st_mode) || fstat(fd, &now) < 0)
		return 0;
	if (now.st_size != st->st_size)
		return now.st_size > st->st_size ? SWEEP_READ_GREW : SWEEP_READ_SHRANK;
	if (now.st_ctim.tv_sec != st->st_ctim.tv_sec || now.st_ctim.tv_nsec != st->st_ctim.tv_nsec)
		return SWEEP_READ_CHANGED;
	return 0;
}

/* Read fd to its end into fc's copy. */
static void stream_copy(struct sweep_copy *c, struct fcopy *fc, int fd)
{
	char *buf = malloc(STREAM_BUFFER);
	uint64_t off = 0;

	if (!buf) {
		sweep__write_fail(fc, SWEEP_COPY_OP_READ, -ENOMEM);
		return;
	}
	for (;;) {
		ssize_t n = read(fd, buf, STREAM_BUFFER);
		if (n < 0 && errno == EINTR && !sweep__copy_stopped(c))
			continue;
		if (n < 0) {
			sweep__write_fail(fc, SWEEP_COPY_OP_READ, sweep__copy_stopped(c) ? c->stop : -errno);
			break;
		}
		if (n == 0)
			break;
		if (sweep__write_data(c->writer, fc, buf, (size_t)n, off, 0) < 0)
			break;
		sweep__report_bytes(c, (uint64_t)n);
		off += (uint64_t)n;
	}
	free(buf);
	int wrc = sweep__writer_drain(c->writer);
	if (wrc < 0)
		sweep__write_fail(fc, SWEEP_COPY_OP_WRITE, wrc);
	fc->size = off;
}

int sweep__read_stream(struct sweep_copy *c, const struct qitem *q, int fd, bool data)
{
	struct fcopy fc;
	struct stat st;

	/* In read order: the threads' copies are settled first. */
	sweep__read_names_flush(c);
	sweep__thread_reap(c, true);
	sweep__clone_reap(c, true);
	sweep__write_start(&fc, q);
	fc.how = SWEEP_COPY_HOW_DATA;
	c->wcur = &fc;
	if (fstat(fd, &st) < 0) {
		sweep__write_fail(&fc, SWEEP_COPY_OP_READ, -errno);
	} else {
		sweep_stat_from_stat(&fc.st, &st);
		/* A regular file with fewer blocks than bytes has holes: its zero blocks are left as holes. */
		bool dense = !S_ISREG(st.st_mode) || (uint64_t)st.st_blocks * 512 >= (uint64_t)st.st_size;
		if (sweep__report_step(c, SWEEP_COPY_STEP_OPENED, q->src, sweep__dst_show(c, q->dst), q->cookie) == 0 &&
		    sweep__write_open(c, &fc, dense) == 0 && data)
			stream_copy(c, &fc, fd);
		fc.status = stream_status(fd, &st);
		if (!fc.err && !sweep__copy_stopped(c))
			sweep__write_finish(c, &fc, fd);
	}
	sweep__write_close(&fc);
	c->wcur = NULL;
	int rc = fc.err;
	sweep__settle_file(c, &fc);
	sweep__write_free(&fc);
	return rc;
}

/*
 * The files that ran out of descriptors, read again one at a time now that
 * the batch's are closed, in plan order, each checked to be the planned file.
 */
static void retry(struct sweep_copy *c, const struct sweep_plan *p)
{
	bool *want = calloc(c->nq, sizeof(*want));
	size_t n = sweep_plan_count(p);

	for (size_t i = 0; i < c->nretry; i++)
		if (want)
			want[c->retry[i]] = true;
		else
			c->q[c->retry[i]].retried = true; /* no memory to sort them: reported as they failed */
	c->nretry = 0;
	/* They ran out once: the cached destination directories go too (no copy runs now), so each has what fits. */
	sweep__dest_cache_drop(&c->dcache);
	sweep__thread_dest_changed(c->thread);
	for (size_t i = 0; want && i < n && !sweep__copy_stopped(c); i++) {
		const struct sweep_plan_entry *e = sweep_plan_entry(p, i);
		if (e->cookie >= c->nq || !want[e->cookie])
			continue;
		struct qitem *q = &c->q[e->cookie];
		struct sweep_stat st;
		struct stat raw;
		q->retried = true;
		c->retry_entry = e; /* out of descriptors again: carried to the next flush (copy_carry.c) */
		int fd = sweep__plan_open_entry(p, e, O_RDONLY | O_NOCTTY | O_NONBLOCK);
		int err = fd < 0 ? fd : fstat(fd, &raw) < 0 ? -errno : 0;
		if (err == 0) {
			sweep_stat_from_stat(&st, &raw);
			if (!sweep__plan_entry_is(e, &st))
				err = -ESTALE;
			else
				(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		}
		if (err == 0) {
			sweep__read_stream(c, q, fd, true);
		} else {
			struct fcopy fc;
			sweep__write_start(&fc, q);
			sweep__write_fail(&fc, SWEEP_COPY_OP_OPEN_SRC, err == -ELOOP || err == -ENOTDIR ? -ESTALE : err);
			sweep__settle_file(c, &fc);
			sweep__write_free(&fc);
		}
		c->retry_entry = NULL;
		if (fd >= 0)
			close(fd);
	}
	free(want);
}

void sweep__read_queue_drop(struct sweep_copy *c)
{
	for (size_t i = 0; i < c->nq; i++) {
		struct qitem *it = &c->q[i];
		if (it->ln && it->ln->state == LN_PENDING)
			sweep__settle_links(c, it->ln, false, SWEEP_COPY_OP_READ, -ECANCELED);
		free(it->src);
		free(it->place);
	}
	c->nq = 0;
	c->qbytes = 0;
}

int sweep__read_on_batch_end(const struct sweep_plan *p, int status, void *ctx)
{
	struct sweep_copy *c = ctx;

	if (status < 0 && !c->stop)
		c->stop = status; /* the reader could not go on at all */
	c->batch_warm = false;
	sweep__read_names_flush(c);
	sweep__thread_reap(c, true); /* every copy settled: those out of descriptors listed */
	sweep__clone_free(c);         /* (its threads' cached directories go with it) */
	c->clone_pending = 0;
	if (c->cur.q) { /* a file begun and never ended (the run stopped) */
		sweep__write_free(&c->cur);
		c->wcur = NULL;
	}
	if (c->nretry)
		retry(c, p);
	sweep__settle_late_links(c); /* the batch's descriptors are closed now */
	sweep__read_queue_drop(c);
	return 0;
}
