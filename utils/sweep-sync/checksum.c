/* SPDX-License-Identifier: MIT */
/*
 * -c: the files whose sizes match on both sides must be compared by
 * content. Rather than reading each pair side by side (two seeks per file),
 * every candidate of both sides goes into one plan per filesystem, and each
 * plan is read in one physical sweep; the digests are compared afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <sweep.h>

#include "cli.h"
#include "progress.h"
#include "sync.h"

struct devbatch {
	uint64_t dev;
	struct sweep_batch *batch;
};

struct ck {
	struct sync_ctx *c;
	struct devbatch *batches;
	size_t nbatches;
	struct digest cur;
};

static int ck_begin(const struct sweep_file *f, void *ctx)
{
	struct ck *k = ctx;

	(void)f;
	digest_init(&k->cur);
	return 0;
}

static int ck_data(const struct sweep_file *f, uint64_t off, const void *buf, size_t len, void *ctx)
{
	struct ck *k = ctx;

	(void)f;
	(void)off;
	digest_update(&k->cur, buf, len);
	progress_add(k->c->prog, 0, len);
	return 0;
}

void checksum_source_failed(struct sync_ctx *c, size_t i, const char *path, int status)
{
	if (status == -ENOENT) {
		sync_vanished(c, path);
	} else if (status == -ESTALE) {
		cli_msg("%s: replaced since the scan; not transferred", cli_quote(path));
		c->errors++;
	} else {
		sync_error(c, path, status);
		c->io_error = true;
	}
	c->list.v[i].flags |= N_FAILED;
}

static int ck_end(const struct sweep_file *f, int status, void *ctx)
{
	struct ck *k = ctx;
	struct sync_ctx *c = k->c;
	uint64_t cookie = f->entry->cookie;
	struct sync_node *n = &c->list.v[cookie >> 1];
	bool src = !(cookie & 1);

	if (status < 0) {
		/* no digest of the destination: the file counts as different and is sent */
		if (src)
			checksum_source_failed(c, (size_t)(cookie >> 1), f->entry->path, status);
		return 0;
	}
	if (f->fd < 0 || !f->entry)
		return 0;
	digest_final(&k->cur, src ? c->digests[cookie >> 1].s : c->digests[cookie >> 1].d);
	n->flags |= src ? N_DIGEST_S : N_DIGEST_D;
	return 0;
}

static const struct sweep_read_ops ck_ops = {
	.size = sizeof(ck_ops),
	.begin = ck_begin,
	.data = ck_data,
	.end = ck_end,
};

/* One batch per filesystem: each is read in a sweep of its own device. */
static struct sweep_batch *batch_for(struct ck *k, uint64_t dev)
{
	struct sweep_batch_opts bo = {
		.size = sizeof(bo),
		.order = SWEEP_ORDER_AUTO,
		.plan_flags = SWEEP_PLAN_CACHE_CHECK, /* a cached batch is not located */
		.read_flags = SWEEP_READ_NOATIME | SWEEP_READ_BY_DEVICE, /* every disk at once: the order is the pass's own */
		.ops = &ck_ops,
		.ctx = k,
	};
	struct devbatch *v;

	for (size_t i = 0; i < k->nbatches; i++)
		if (k->batches[i].dev == dev)
			return k->batches[i].batch;
	v = realloc(k->batches, (k->nbatches + 1) * sizeof(*v));
	if (!v)
		return NULL;
	k->batches = v;
	v[k->nbatches].dev = dev;
	if (sweep_batch_new(&bo, &v[k->nbatches].batch) < 0)
		return NULL;
	return v[k->nbatches++].batch;
}

/* Plan the file rel below root (never through a symlink; the reader checks it is the file scanned). */
static int add(struct ck *k, int root, const char *rel, const char *path, const struct fst *fs, uint64_t cookie)
{
	struct sweep_batch *b = batch_for(k, fs->st_dev);
	struct sweep_stat st;

	if (!b)
		return -ENOMEM;
	if (root == AT_FDCWD)
		return sweep_batch_add_path(b, path, fst_sweep(fs, &st), 1, cookie); /* a followed symlink (-L) */
	if (root < 0)
		return -EBADF;
	return sweep_batch_add_beneath(b, root, rel, path, fst_sweep(fs, &st), cookie);
}

int checksum_run(struct sync_ctx *c)
{
	struct ck k = { .c = c };
	char *sb = NULL, *db = NULL;
	int r;

	c->digests = calloc(c->list.n ? c->list.n : 1, sizeof(*c->digests));
	if (!c->digests)
		return -ENOMEM;
	r = 0;
	for (size_t i = 0; i < c->list.n && r >= 0; i++) {
		struct sync_node *n = &c->list.v[i];
		const char *sp, *dp;

		if ((n->flags & (N_SRC | N_DST)) != (N_SRC | N_DST) || !S_ISREG(n->s.st.st_mode) ||
		    !S_ISREG(n->d.st.st_mode) || n->s.st.st_size != n->d.st.st_size)
			continue;
		if (n->s.st.st_size == 0) {
			/* nothing to read: two empty files have the same contents */
			memset(&c->digests[i], 0, sizeof(c->digests[i]));
			n->flags |= N_DIGEST_S | N_DIGEST_D;
			continue;
		}
		progress_plan(c->prog, 0, 2 * (uint64_t)n->s.st.st_size);
		sp = node_src_path(c, n, &sb);
		dp = node_dst_path(c, n, &db);
		if (!sp || !dp) {
			r = -ENOMEM;
			break;
		}
		/* a remote source is digested by the sender, in its own sweep, while this side reads its own */
		if (c->role == ROLE_RECEIVER)
			r = remote_csum_want(c, i);
		else
			r = add(&k, (n->flags & N_SFOLLOW) ? AT_FDCWD : c->src_fd[n->root], node_src_rel(c, n), sp, &n->s.st,
				(uint64_t)i << 1);
		if (r >= 0)
			r = add(&k, c->dest_fd, node_dst_rel(c, n), dp, &n->d.st, ((uint64_t)i << 1) | 1);
		if (r == -ENOENT || r == -EACCES || r == -EPERM || r == -EBADF)
			r = 0; /* the reader reports the file itself (or its operand was reported) */
	}
	if (r >= 0 && c->role == ROLE_RECEIVER)
		r = remote_csum_send(c);
	for (size_t i = 0; i < k.nbatches; i++) {
		if (r >= 0)
			r = sweep_batch_flush(k.batches[i].batch);
		sweep_batch_free(k.batches[i].batch);
	}
	if (r >= 0 && c->role == ROLE_RECEIVER)
		r = remote_csum_collect(c);
	free(k.batches);
	free(sb);
	free(db);
	return r;
}
