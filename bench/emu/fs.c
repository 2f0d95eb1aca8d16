/* SPDX-License-Identifier: MIT */
/*
 * The FUSE side: a root directory holding one file, EMU_FILE_NAME, the
 * size of the image. Reads and writes go to the model (clock.c) and to the
 * backing image at once; the answer waits for both. A flush (fsync, what a
 * loop device sends for a cache flush) is the model's FLUSH CACHE: done when
 * the drive's write-back cache has put every write before it on the media.
 * Discards and zeroing (fallocate) reach the image with no modelled cost:
 * the model has no such command.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "emu.h"

#define ROOT_INO FUSE_ROOT_ID
#define FILE_INO 2
#define ATTR_TIMEOUT 3600.0
#define MAX_REQUEST (1u << 20) /* one block request of up to 1 MiB is one FUSE request, not eight */
#define MAX_BACKGROUND 256     /* the loop device keeps up to 128 in flight: FUSE's default 12 would cap the queue */

static struct emu *E(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void fill_attr(const struct emu *e, fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == ROOT_INO) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | (e->read_only ? 0400 : 0600);
		st->st_nlink = 1;
		st->st_size = (off_t)e->size;
		st->st_blocks = (blkcnt_t)((e->size + 511) / 512);
		st->st_blksize = 4096;
	}
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->max_write = MAX_REQUEST;
	conn->max_background = MAX_BACKGROUND;
	conn->congestion_threshold = MAX_BACKGROUND * 3 / 4;
	/* the loop device's reads are asynchronous direct I/O: keep them so */
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (parent != ROOT_INO || strcmp(name, EMU_FILE_NAME) != 0) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	struct fuse_entry_param ep = { .ino = FILE_INO, .attr_timeout = ATTR_TIMEOUT, .entry_timeout = ATTR_TIMEOUT };
	fill_attr(E(req), FILE_INO, &ep.attr);
	fuse_reply_entry(req, &ep);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	if (ino != ROOT_INO && ino != FILE_INO) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	struct stat st;
	fill_attr(E(req), ino, &st);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != FILE_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY && E(req)->read_only) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if (fi->flags & O_TRUNC) {
		fuse_reply_err(req, EPERM); /* the disk's size is the image's */
		return;
	}
	/* no page cache of ours: every read the loop device makes is a request to the disk */
	fi->direct_io = 1;
	fi->keep_cache = 0;
	fuse_reply_open(req, fi);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	if (ino != ROOT_INO) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	static const struct {
		const char *name;
		fuse_ino_t ino;
		mode_t mode;
	} ents[] = { { ".", ROOT_INO, S_IFDIR }, { "..", ROOT_INO, S_IFDIR }, { EMU_FILE_NAME, FILE_INO, S_IFREG } };
	char buf[512];
	size_t used = 0;
	for (off_t i = off; i < (off_t)(sizeof(ents) / sizeof(ents[0])); i++) {
		struct stat st = { .st_ino = ents[i].ino, .st_mode = ents[i].mode };
		size_t n = fuse_add_direntry(req, buf + used, sizeof(buf) - used, ents[i].name, &st, i + 1);
		if (used + n > size || used + n > sizeof(buf))
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
}

/* A read or write of [off, off+size) clipped to the disk; NULL (and answered) when nothing is left to do. */
static struct emu_req *request(fuse_req_t req, fuse_ino_t ino, enum emu_op op, size_t size, off_t off)
{
	struct emu *e = E(req);
	if (ino != FILE_INO || off < 0) {
		fuse_reply_err(req, ino != FILE_INO ? EISDIR : EINVAL);
		return NULL;
	}
	if ((uint64_t)off >= e->size || size == 0) {
		if (op == EMU_READ)
			fuse_reply_buf(req, NULL, 0);
		else if (size == 0)
			fuse_reply_write(req, 0);
		else
			fuse_reply_err(req, ENOSPC); /* a disk does not grow */
		return NULL;
	}
	if (size > e->size - (uint64_t)off)
		size = (size_t)(e->size - (uint64_t)off);
	struct emu_req *r = calloc(1, sizeof(*r));
	if (r && op == EMU_READ && !(r->buf = malloc(size))) {
		free(r);
		r = NULL;
	}
	if (!r) {
		fuse_reply_err(req, ENOMEM);
		return NULL;
	}
	r->req = req;
	r->op = op;
	r->offset = (uint64_t)off;
	r->len = size;
	r->parts = 2;
	int err = emu_submit(e, r);
	if (err) {
		free(r->buf);
		free(r);
		fuse_reply_err(req, -err);
		return NULL;
	}
	return r;
}

static ssize_t io_full(int fd, char *buf, const char *wbuf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = buf ? pread(fd, buf + done, len - done, (off_t)(off + done))
				: pwrite(fd, wbuf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			if (!buf)
				return -EIO;
			memset(buf + done, 0, len - done); /* the image shorter than it was: zeros, as a hole */
			break;
		}
		done += (size_t)n;
	}
	return (ssize_t)len;
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	struct emu_req *r = request(req, ino, EMU_READ, size, off);
	if (!r)
		return;
	struct emu *e = E(req);
	r->done = io_full(e->fd, r->buf, NULL, r->len, r->offset);
	emu_part_done(e, r, false);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)fi;
	if (E(req)->read_only) {
		fuse_reply_err(req, EROFS);
		return;
	}
	struct emu_req *r = request(req, ino, EMU_WRITE, size, off);
	if (!r)
		return;
	struct emu *e = E(req);
	r->done = io_full(e->fd, NULL, buf, r->len, r->offset);
	emu_part_done(e, r, false);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino, (void)datasync, (void)fi;
	struct emu_req *r = calloc(1, sizeof(*r));
	if (!r) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	r->req = req;
	r->op = EMU_FLUSH;
	r->parts = 1;
	int err = emu_submit(E(req), r);
	if (err) {
		free(r);
		fuse_reply_err(req, -err);
	}
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	(void)fi;
	struct emu *e = E(req);
	if (ino != FILE_INO || e->read_only) {
		fuse_reply_err(req, ino != FILE_INO ? EISDIR : EROFS);
		return;
	}
	/* only what leaves the size alone: the disk does not grow */
	if ((mode & ~(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE)) ||
	    !(mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) || off < 0 || len < 0 ||
	    (uint64_t)off + (uint64_t)len > e->size) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	int err = fallocate(e->fd, mode | FALLOC_FL_KEEP_SIZE, off, len) < 0 ? errno : 0;
	fuse_reply_err(req, err);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	struct statvfs sv = { .f_bsize = 4096, .f_frsize = 4096, .f_files = 1, .f_namemax = 255 };
	fuse_reply_statfs(req, &sv);
}

const struct fuse_lowlevel_ops emu_fs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.open = op_open,
	.readdir = op_readdir,
	.read = op_read,
	.write = op_write,
	.fsync = op_fsync,
	.fallocate = op_fallocate,
	.statfs = op_statfs,
};
