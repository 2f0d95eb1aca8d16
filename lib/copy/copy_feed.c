/* SPDX-License-Identifier: MIT */
/*
 * copy: regular files whose data the caller supplies (a source on another
 * machine, sent by a program: sweep-sync's receiving side). The plan stage
 * checks the entry against its destination and makes its item as for a
 * queued file; instead of the reader, the caller hands the data over, and
 * the write and settle stages run as they do for a stream (copy_read.c):
 * on the caller's thread, after whatever the writer thread still holds, so
 * the destination is made in the order the caller supplies the files.
 * Nothing here reads a source: its metadata and attributes are those given.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "copy_internal.h"

struct sweep_copy_feed {
	struct sweep_copy *c;
	struct qitem q;
	struct fcopy f;
	int blob_err; /* the attributes could not be kept (no memory): a metadata failure at the end */
};

SWEEP_EXPORT int sweep_copy_feed_begin(struct sweep_copy *c, const struct sweep_copy_src *src, const char *dst,
				       uint64_t cookie, struct sweep_copy_feed **ret)
{
	struct sweep_copy_src in;
	struct sweep_stat sst;
	struct src_ref s;
	int rc;

	if (ret)
		*ret = NULL;
	if (!c || !dst || !*dst || !ret)
		return -EINVAL;
	rc = sweep__plan_src(c, src, cookie, &in, &sst, &s);
	if (rc < 0)
		return rc;
	if (!(s.flags & SWEEP_COPY_SRC_SUPPLIED) || !S_ISREG(s.st->mode))
		return -EINVAL;
	struct sweep_copy_feed *f = calloc(1, sizeof(*f));
	if (!f)
		return sweep__report(c, SWEEP_COPY_OP_CREATE, -ENOMEM, s.path, sweep__dst_show(c, dst), cookie);
	s.feed = &f->q;
	rc = sweep__plan_entry_ref(c, &s, dst, cookie, false);
	if (rc < 0 || !f->q.src) { /* failed (reported), or left alone: nothing to feed */
		free(f);
		return rc;
	}
	f->c = c;
	/* In order: what the writer thread holds is settled first, as for a stream. */
	sweep__read_names_flush(c);
	sweep__thread_reap(c, true);
	sweep__write_start(&f->f, &f->q);
	f->f.how = SWEEP_COPY_HOW_DATA;
	f->f.st = *s.st;
	f->blob_err = sweep__meta_blob_from(s.xattrs, s.nxattrs, c->o.preserve, false, &f->f.blob);
	/* A source with fewer blocks than bytes had holes: zero blocks become holes in the copy (sparse auto). */
	bool dense = s.st->blocks * 512 >= s.st->size;
	c->wcur = &f->f;
	if (sweep__report_step(c, SWEEP_COPY_STEP_OPENED, f->q.src, sweep__dst_show(c, f->q.dst), cookie) == 0)
		sweep__write_open(c, &f->f, dense);
	else
		sweep__write_fail(&f->f, SWEEP_COPY_OP_WRITE, c->stop);
	c->wcur = NULL;
	*ret = f;
	return 0;
}

SWEEP_EXPORT int sweep_copy_feed_data(struct sweep_copy_feed *f, uint64_t off, const void *buf, size_t len)
{
	if (!f || (!buf && len))
		return -EINVAL;
	struct sweep_copy *c = f->c;
	if (!f->f.err && sweep__copy_stopped(c))
		sweep__write_fail(&f->f, SWEEP_COPY_OP_WRITE, c->stop);
	if (f->f.err || f->f.tmpfd < 0)
		return f->f.err ? f->f.err : -EBADF;
	c->wcur = &f->f;
	if (len && sweep__write_data(c->writer, &f->f, buf, len, off, f->q.cookie) == 0)
		sweep__report_bytes(c, len);
	c->wcur = NULL;
	return f->f.err;
}

SWEEP_EXPORT int sweep_copy_feed_end(struct sweep_copy_feed *f, int status, uint64_t size, const struct sweep_stat *st)
{
	if (!f)
		return 0;
	struct sweep_copy *c = f->c;
	struct fcopy *fc = &f->f;

	c->wcur = fc;
	int wrc = sweep__writer_drain(c->writer);
	if (wrc < 0)
		sweep__write_fail(fc, SWEEP_COPY_OP_WRITE, wrc);
	if (status < 0)
		sweep__write_fail(fc, SWEEP_COPY_OP_READ, status);
	if (f->blob_err < 0 && sweep__grow(&fc->mfail, &fc->capmfail, fc->nmfail + 1, sizeof(*fc->mfail), 4) == 0)
		fc->mfail[fc->nmfail++] = (struct meta_fail){ .op = SWEEP_COPY_META_XATTR, .err = f->blob_err };
	if (st)
		fc->st = *st;
	fc->size = size;
	fc->status = status > 0 ? status : 0;
	if (!fc->err && fc->tmpfd >= 0 && !sweep__copy_stopped(c))
		sweep__write_finish(c, fc, -1);
	else if (!fc->err && sweep__copy_stopped(c))
		sweep__write_fail(fc, SWEEP_COPY_OP_WRITE, c->stop);
	sweep__write_close(fc);
	c->wcur = NULL;
	int rc = fc->err;
	sweep__settle_file(c, fc);
	sweep__write_free(fc);
	sweep__plan_item_free(&f->q);
	free(f);
	if (sweep__copy_stopped(c))
		return c->stop;
	return rc;
}
