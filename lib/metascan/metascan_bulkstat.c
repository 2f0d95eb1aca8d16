/* SPDX-License-Identifier: MIT */
/*
 * The xfs ioctls the walk uses. bulkstat (XFS_IOC_BULKSTAT, the v5 call of Linux 5.3): authoritative
 * stat of many inodes per call, in inode order. xfs reads the inode btree
 * and whole inode clusters for it, so a tree's inodes arrive in a few large
 * reads instead of one path lookup, VFS inode and stat per file. It needs
 * CAP_SYS_ADMIN; without it the caller falls back to statx.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

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

/*
 * An xfs file handle as xfs_fs_encode_fh makes one for a 64-bit inode
 * number (fs/xfs/xfs_export.h: struct xfs_fid64, handle type
 * FILEID_INO32_GEN | XFS_FILEID_TYPE_64FLAG); xfs_fs_fh_to_dentry takes it
 * for any inode number.
 */
#define XFS_FH_INO64_GEN 0x81
struct xfs_fh64 {
	uint64_t ino;
	uint32_t gen;
} __attribute__((packed));

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * Opened by this many threads at once: an open by handle is not
 * asynchronous. To connect a directory's dentry to the tree, the kernel
 * looks up its parent and reads the parent's entries for its name
 * (exportfs reconnect_path), a few milliseconds on a disk, before the open
 * starts the directory's own block. One thread, opening in block order,
 * kept the emulated drive at depth 1 (4.4 s for 1,433 directories, the
 * same as the walk); DIRS_THREADS of them keep that many reads queued for
 * the drive to order (at most; the caller says how many). Each thread has
 * at most one read in flight and spends part of its time between reads,
 * so 16 of them left an NCQ drive's 32 slots half used: 64 kept 26-56
 * reads queued on the aged netfs xfs image, and sweep-du took 0.82-0.9x
 * the time of 16 threads on the emulated disk (medians of 5-8 cold runs,
 * bench/results/2026-11-27-du).
 */
#define DIRS_THREADS 64

struct sweep__dirs_ahead {
	int fd; /* our own: the caller's may close before the threads are done */
	struct xfs_fh64 *fids;
	size_t n;
	atomic_size_t next;
	atomic_int opened, err;
	atomic_bool stop;
	int nthreads;
	pthread_t tid[DIRS_THREADS];
};

static void *dirs_ahead_run(void *arg)
{
	struct sweep__dirs_ahead *a = arg;
	union {
		struct file_handle h;
		char buf[sizeof(struct file_handle) + sizeof(struct xfs_fh64)];
	} u;
	char dents[16384] __attribute__((aligned(8)));

	for (size_t i; !atomic_load(&a->stop) && (i = atomic_fetch_add(&a->next, 1)) < a->n;) {
		u.h.handle_bytes = sizeof(a->fids[i]);
		u.h.handle_type = XFS_FH_INO64_GEN;
		memcpy(u.h.f_handle, &a->fids[i], sizeof(a->fids[i]));
		int d = open_by_handle_at(a->fd, &u.h, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (d >= 0) {
			/*
			 * The rest of its blocks too: the open reads only the first,
			 * and a directory of several blocks (its leaf lies far from
			 * its data) was left for the walk to read a block at a time,
			 * at depth 1 across the allocation groups (the aged netfs
			 * xfs image: 0.1 s of sweep-du's 0.45 s after the last of
			 * these opens). The walk lists each of them whole anyway.
			 */
			while (!atomic_load(&a->stop) && syscall(SYS_getdents64, d, dents, sizeof(dents)) > 0)
				;
			close(d);
			atomic_fetch_add(&a->opened, 1);
		} else if (errno == EPERM || errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS) {
			atomic_store(&a->err, -errno); /* no capability, or no such handles here: none will open */
			atomic_store(&a->stop, true);
		}
		/* else gone since (ESTALE), or no descriptor to spare: the walk reads it when it comes */
	}
	return NULL;
}

int sweep__xfs_dirs_read_ahead_start(int fd, const uint64_t *inos, size_t n, unsigned threads,
				     struct sweep__dirs_ahead **ret)
{
	struct sweep__dirs_ahead *a = calloc(1, sizeof(*a));
	uint64_t *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	struct sweep__bstat *bs = malloc((n ? n : 1) * sizeof(*bs));
	int r = -ENOMEM;

	*ret = NULL;
	if (!a || !sorted || !bs || !(a->fids = malloc((n ? n : 1) * sizeof(*a->fids))))
		goto fail;
	a->fd = -1;
	/* The generations a handle needs, by inode (bulkstat wants them ascending). */
	memcpy(sorted, inos, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u64);
	r = sweep__xfs_bulkstat(fd, sorted, n, bs);
	if (r < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const uint64_t *at = bsearch(&inos[i], sorted, n, sizeof(*sorted), cmp_u64);
		const struct sweep__bstat *b = &bs[at - sorted];
		if (!b->err && S_ISDIR(b->st.st_mode)) /* else gone since, or another inode under that number */
			a->fids[a->n++] = (struct xfs_fh64){ .ino = inos[i], .gen = b->gen };
	}
	int want = threads < DIRS_THREADS ? (int)threads : DIRS_THREADS;
	if (want == 0 || a->n == 0) {
		r = 0;
		goto fail; /* nothing to start */
	}
	a->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (a->fd < 0) {
		r = -errno;
		goto fail;
	}
	/* The caller's signals stay with the caller's threads. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (a->nthreads < want && (size_t)a->nthreads < a->n &&
	       pthread_create(&a->tid[a->nthreads], NULL, dirs_ahead_run, a) == 0)
		a->nthreads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(sorted);
	free(bs);
	*ret = a;
	return a->nthreads;
fail:
	free(sorted);
	free(bs);
	if (a)
		free(a->fids);
	free(a);
	return r;
}

int sweep__xfs_dirs_read_ahead_end(struct sweep__dirs_ahead *a, bool stop)
{
	int r;

	if (!a)
		return 0;
	if (stop)
		atomic_store(&a->stop, true);
	for (int t = 0; t < a->nthreads; t++)
		pthread_join(a->tid[t], NULL);
	r = atomic_load(&a->opened) ? atomic_load(&a->opened) : atomic_load(&a->err);
	if (a->fd >= 0)
		close(a->fd);
	free(a->fids);
	free(a);
	return r;
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

int sweep__xfs_dirs_read_ahead_start(int fd, const uint64_t *inos, size_t n, unsigned threads,
				     struct sweep__dirs_ahead **ret)
{
	(void)threads;
	(void)fd;
	(void)inos;
	(void)n;
	*ret = NULL;
	return -EOPNOTSUPP;
}

int sweep__xfs_dirs_read_ahead_end(struct sweep__dirs_ahead *a, bool stop)
{
	(void)a;
	(void)stop;
	return 0;
}

#endif
