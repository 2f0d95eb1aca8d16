/* SPDX-License-Identifier: MIT */
/*
 * The xfs ioctls the walk uses. bulkstat (XFS_IOC_BULKSTAT, the v5 call of Linux 5.3): authoritative
 * stat of many inodes per call, in inode order. xfs reads the inode btree
 * and whole inode clusters for it, so a tree's inodes arrive in a few large
 * reads instead of one path lookup, VFS inode and stat per file. It needs
 * CAP_SYS_ADMIN; without it the caller falls back to statx.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "metascan.h"

#if HAVE_XFS_XFS_H
#include <xfs/xfs.h>

/* Records per call: 4096 x 192 bytes is 768 KiB of buffer, about 16 inode clusters a call. */
#define BULK_MAX 4096u
/* With a listener for directories (sweep__xfs_bulkstat_sweep): about four 64-inode chunks a call. */
#define BULK_DIRS 256u

static void to_stat(const struct xfs_bulkstat *b, dev_t dev, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = dev;
	st->st_ino = b->bs_ino;
	st->st_mode = b->bs_mode;
	st->st_nlink = b->bs_nlink;
	st->st_uid = b->bs_uid;
	st->st_gid = b->bs_gid;
	/* bs_rdev is sysv-encoded: 14 bits of major above 18 bits of minor */
	st->st_rdev = makedev(b->bs_rdev >> 18, b->bs_rdev & 0x3FFFF);
	st->st_size = (off_t)b->bs_size;
	/* stat's I/O size on xfs is the page size unless a larger one was asked for; blocks are 512 bytes */
	st->st_blksize = b->bs_blksize;
	st->st_blocks = (blkcnt_t)(b->bs_blocks * (b->bs_blksize / 512));
	st->st_atim.tv_sec = b->bs_atime;
	st->st_atim.tv_nsec = b->bs_atime_nsec;
	st->st_mtim.tv_sec = b->bs_mtime;
	st->st_mtim.tv_nsec = b->bs_mtime_nsec;
	st->st_ctim.tv_sec = b->bs_ctime;
	st->st_ctim.tv_nsec = b->bs_ctime_nsec;
}

int sweep__xfs_bulkstat(int fd, const uint64_t *inos, size_t n, struct sweep__bstat *out)
{
	struct stat fst;
	if (fd < 0 || (n && (!inos || !out)))
		return -EINVAL;
	for (size_t i = 1; i < n; i++)
		if (inos[i] < inos[i - 1])
			return -EINVAL;
	if (fstat(fd, &fst) < 0)
		return -errno;
	size_t cap = n < BULK_MAX ? (n ? n : 1) : BULK_MAX;
	struct xfs_bulkstat_req *req = calloc(1, sizeof(*req) + cap * sizeof(struct xfs_bulkstat));
	if (!req)
		return -ENOMEM;
	int found = 0, r = 0;
	size_t i = 0;
	while (i < n) {
		/* from the next wanted inode; as many records as inodes are still wanted */
		memset(&req->hdr, 0, sizeof(req->hdr));
		req->hdr.ino = inos[i];
		req->hdr.icount = (uint32_t)(n - i < cap ? n - i : cap);
		if (ioctl(fd, XFS_IOC_BULKSTAT, req) < 0) {
			r = -errno;
			if (r == -EINVAL || r == -ENOTTY)
				r = -EOPNOTSUPP; /* not xfs, or a kernel before the v5 call */
			break;
		}
		uint32_t got = req->hdr.ocount;
		if (got > req->hdr.icount)
			got = req->hdr.icount;
		if (got == 0)
			break; /* no allocated inode at or after inos[i] */
		for (uint32_t k = 0; k < got && i < n; k++) {
			const struct xfs_bulkstat *b = &req->bulkstat[k];
			for (; i < n && inos[i] < b->bs_ino; i++)
				out[i].err = -ENOENT;
			for (; i < n && inos[i] == b->bs_ino; i++) {
				to_stat(b, fst.st_dev, &out[i].st);
				out[i].gen = b->bs_gen;
				out[i].err = 0;
				found++;
			}
		}
		/* a reply that ends before inos[i] moves on from inos[i] next time; one that ends at it moved i */
		if (i < n && req->bulkstat[got - 1].bs_ino < inos[i] && got < req->hdr.icount)
			break; /* the filesystem has no more inodes */
	}
	for (; i < n && r == 0; i++)
		out[i].err = -ENOENT;
	free(req);
	return r < 0 ? r : found;
}

long sweep__xfs_bulkstat_sweep(int fd, sweep__dirs_fn on_dirs, void *ctx)
{
	struct xfs_bulkstat_req *req = calloc(1, sizeof(*req) + BULK_MAX * sizeof(struct xfs_bulkstat));
	uint64_t *dirs = on_dirs ? malloc(BULK_MAX * sizeof(*dirs)) : NULL;
	if (!req || (on_dirs && !dirs)) {
		free(req);
		free(dirs);
		return -ENOMEM;
	}
	long seen = 0;
	int r = 0;
	uint64_t next = 0;
	for (;;) {
		memset(&req->hdr, 0, sizeof(req->hdr));
		req->hdr.ino = next;
		/*
		 * Listening for directories: fewer inodes a call, so that the raw
		 * reads come while the drive still caches the clusters (a drive's
		 * cache keeps a few dozen recent segments, one per cluster here).
		 */
		req->hdr.icount = on_dirs ? BULK_DIRS : BULK_MAX;
		if (ioctl(fd, XFS_IOC_BULKSTAT, req) < 0) {
			r = -errno;
			if (r == -EINVAL || r == -ENOTTY)
				r = -EOPNOTSUPP;
			break;
		}
		seen += req->hdr.ocount;
		/* This call's directories that have blocks (not short-form), while their clusters were just read. */
		size_t nd = 0;
		for (uint32_t k = 0; dirs && k < req->hdr.ocount && k < BULK_MAX; k++)
			if (S_ISDIR(req->bulkstat[k].bs_mode) && req->bulkstat[k].bs_extents > 0)
				dirs[nd++] = req->bulkstat[k].bs_ino;
		if (nd)
			on_dirs(ctx, dirs, nd);
		/* The call leaves in ino where the next one starts; no progress or a short reply is the end. */
		if (req->hdr.ocount == 0 || req->hdr.ino <= next)
			break;
		next = req->hdr.ino;
	}
	free(req);
	free(dirs);
	return r < 0 && seen == 0 ? r : seen;
}

#else

long sweep__xfs_bulkstat_sweep(int fd, sweep__dirs_fn on_dirs, void *ctx)
{
	(void)fd;
	(void)on_dirs;
	(void)ctx;
	return -EOPNOTSUPP;
}

int sweep__xfs_bulkstat(int fd, const uint64_t *inos, size_t n, struct sweep__bstat *out)
{
	(void)fd;
	(void)inos;
	(void)n;
	(void)out;
	return -EOPNOTSUPP; /* built without <xfs/xfs.h> (xfslibs-dev) */
}

#endif
