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
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "metascan.h"

#if HAVE_XFS_XFS_H
#include <xfs/xfs.h>

/* Records per call: 4096 x 192 bytes is 768 KiB of buffer, about 16 inode clusters a call. */
#define BULK_MAX 4096u

/* What a stat needs of a bulkstat record, in about half its 192 bytes. */
struct xrec {
	uint64_t ino, size, blocks;
	int64_t atime, mtime, ctime;
	uint32_t atime_ns, mtime_ns, ctime_ns;
	uint32_t nlink, uid, gid, rdev;
	uint16_t mode;
};

static struct xrec xrec_of(const struct xfs_bulkstat *b)
{
	return (struct xrec){
		.ino = b->bs_ino, .size = b->bs_size,
		/* bs_blocks counts filesystem blocks; st_blocks 512-byte ones */
		.blocks = b->bs_blocks * (b->bs_blksize / 512),
		.atime = b->bs_atime, .mtime = b->bs_mtime, .ctime = b->bs_ctime,
		.atime_ns = b->bs_atime_nsec, .mtime_ns = b->bs_mtime_nsec, .ctime_ns = b->bs_ctime_nsec,
		.nlink = b->bs_nlink, .uid = b->bs_uid, .gid = b->bs_gid, .rdev = b->bs_rdev, .mode = b->bs_mode,
	};
}

static void xrec_to_stat(const struct xrec *x, dev_t dev, blksize_t blksize, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = dev;
	st->st_ino = x->ino;
	st->st_mode = x->mode;
	st->st_nlink = x->nlink;
	st->st_uid = x->uid;
	st->st_gid = x->gid;
	/* bs_rdev is sysv-encoded: 14 bits of major above 18 bits of minor */
	st->st_rdev = makedev(x->rdev >> 18, x->rdev & 0x3FFFF);
	st->st_size = (off_t)x->size;
	st->st_blksize = blksize;
	st->st_blocks = (blkcnt_t)x->blocks;
	st->st_atim.tv_sec = x->atime;
	st->st_atim.tv_nsec = x->atime_ns;
	st->st_mtim.tv_sec = x->mtime;
	st->st_mtim.tv_nsec = x->mtime_ns;
	st->st_ctim.tv_sec = x->ctime;
	st->st_ctim.tv_nsec = x->ctime_ns;
}

static void to_stat(const struct xfs_bulkstat *b, dev_t dev, struct stat *st)
{
	struct xrec x = xrec_of(b);
	/* stat's I/O size on xfs is the page size unless a larger one was asked for */
	xrec_to_stat(&x, dev, b->bs_blksize, st);
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

/*
 * The sweep: every inode chunk in use, in inode order (disk order: an
 * inode number is its allocation group, then its block), cut into batches
 * of about BATCH_INODES inodes in use, which SWEEP_THREADS threads take in
 * turn, so that the reads in flight are always the next ones of one
 * ascending pass. A bulkstat call reads ahead the clusters of the chunks
 * it is asked for (xfs_iwalk_ichunk_ra, about icount / 51 chunks at once),
 * then waits for each. A thread per allocation group instead kept about 6
 * reads in flight on the emulated hdd7200-2018 drive, spread over the 4
 * groups of the aged linux-lite xfs image, and the head went back and forth
 * between them: 1.7 s for the clusters, 0.62 s this way at 12-22 in flight
 * (bench/results/2026-11-27-du-xfs).
 */
#define SWEEP_THREADS 4u
#define BATCH_INODES 512u

struct sweep_batch {
	uint64_t ino, end; /* the chunks from ino up to end (not included) */
	uint32_t count;    /* inodes in use there when counted */
};

struct sweep_run {
	int fd;
	sweep__dirs_fn on_dirs;
	void *ctx;
	struct sweep_batch *b;
	size_t nb;
	atomic_size_t next;
	atomic_long seen;
	atomic_int err;
	atomic_bool cold; /* the filesystem's inodes are being read from the disk: directories are told */
	pthread_mutex_t mu; /* one on_dirs at a time */
};

static void *sweep_run(void *arg)
{
	struct sweep_run *p = arg;
	struct xfs_bulkstat_req *req = calloc(1, sizeof(*req) + BULK_MAX * sizeof(struct xfs_bulkstat));
	uint64_t *dirs = p->on_dirs ? malloc(BULK_MAX * sizeof(*dirs)) : NULL;
	uint32_t *gens = p->on_dirs ? malloc(BULK_MAX * sizeof(*gens)) : NULL;
	/*
	 * Directories are told only where the sweep reads the disk: a warm
	 * filesystem has nothing to order. Cold once the chunk list read it,
	 * or any thread's call did: a thread's own call may read nothing
	 * because another thread's (or the kernel's read-ahead) brought its
	 * clusters in, and its directories are the cold sweep's all the same.
	 */
	int64_t before = sweep__disk_reads();
	bool cold = atomic_load(&p->cold);
	size_t i;

	if (!req || (p->on_dirs && (!dirs || !gens))) {
		atomic_store(&p->err, -ENOMEM);
		goto out;
	}
	while ((i = atomic_fetch_add(&p->next, 1)) < p->nb) {
		const struct sweep_batch *b = &p->b[i];
		uint64_t ino = b->ino;
		uint32_t want = b->count;
		while (want > 0 && ino < b->end) {
			memset(&req->hdr, 0, sizeof(req->hdr));
			req->hdr.ino = ino;
			req->hdr.icount = want < BULK_MAX ? want : BULK_MAX;
			if (ioctl(p->fd, XFS_IOC_BULKSTAT, req) < 0) {
				atomic_store(&p->err, errno == EINVAL || errno == ENOTTY ? -EOPNOTSUPP : -errno);
				goto out;
			}
			uint32_t got = req->hdr.ocount < req->hdr.icount ? req->hdr.ocount : req->hdr.icount;
			if (got == 0)
				break; /* no inode in use from ino on */
			/* Only this batch's: chunks allocated since may have carried the call into the next batch. */
			uint32_t mine = 0;
			while (mine < got && req->bulkstat[mine].bs_ino < b->end)
				mine++;
			atomic_fetch_add(&p->seen, mine);
			if (!cold && (atomic_load(&p->cold) || before < 0 || sweep__disk_reads() != before)) {
				cold = true;
				atomic_store(&p->cold, true);
			}
			/* This call's directories that have blocks (not short-form): their clusters were just read. */
			size_t nd = 0;
			for (uint32_t k = 0; cold && dirs && k < mine; k++)
				if (S_ISDIR(req->bulkstat[k].bs_mode) && req->bulkstat[k].bs_extents > 0) {
					dirs[nd] = req->bulkstat[k].bs_ino;
					gens[nd++] = req->bulkstat[k].bs_gen;
				}
			if (nd) {
				pthread_mutex_lock(&p->mu);
				p->on_dirs(p->ctx, dirs, gens, nd);
				pthread_mutex_unlock(&p->mu);
			}
			if (mine < got)
				break;
			want = want > got ? want - got : 0;
			ino = req->bulkstat[got - 1].bs_ino + 1;
		}
	}
out:
	free(req);
	free(dirs);
	free(gens);
	return NULL;
}

static int batch_push(struct sweep_batch **v, size_t *n, size_t *cap, const struct sweep_batch *b)
{
	if (sweep__grow(v, cap, *n + 1, sizeof(**v), 64) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = *b;
	return 0;
}

/*
 * The chunks in use (XFS_IOC_INUMBERS: the inode btrees alone, a few
 * blocks a group), cut into batches in inode order: 0 or -errno.
 */
static int sweep_batches(int fd, struct sweep_batch **ret, size_t *ret_n)
{
	enum { NREC = 1024 };
	struct xfs_inumbers_req *req = calloc(1, XFS_INUMBERS_REQ_SIZE(NREC));
	struct sweep_batch *v = NULL, cur = { 0 };
	size_t n = 0, cap = 0;
	int r = 0;

	if (!req)
		return -ENOMEM;
	for (uint64_t next = 0; r == 0;) {
		memset(&req->hdr, 0, sizeof(req->hdr));
		req->hdr.ino = next;
		req->hdr.icount = NREC;
		if (ioctl(fd, XFS_IOC_INUMBERS, req) < 0) {
			r = errno == EINVAL || errno == ENOTTY ? -EOPNOTSUPP : -errno;
			break;
		}
		uint32_t got = req->hdr.ocount < NREC ? req->hdr.ocount : NREC;
		if (got == 0)
			break;
		for (uint32_t k = 0; k < got && r == 0; k++) {
			const struct xfs_inumbers *x = &req->inumbers[k];
			if (x->xi_alloccount == 0 || x->xi_startino < cur.end)
				continue;
			if (cur.count >= BATCH_INODES) {
				cur.end = x->xi_startino;
				r = batch_push(&v, &n, &cap, &cur);
				cur = (struct sweep_batch){ 0 };
			}
			if (!cur.count)
				cur.ino = x->xi_startino;
			cur.count += x->xi_alloccount;
			cur.end = x->xi_startino + 64; /* XFS_INODES_PER_CHUNK */
		}
		next = req->inumbers[got - 1].xi_startino + 64;
	}
	if (r == 0 && cur.count) {
		cur.end = UINT64_MAX; /* and whatever was allocated after it since */
		r = batch_push(&v, &n, &cap, &cur);
	}
	free(req);
	if (r < 0) {
		free(v);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

long sweep__xfs_bulkstat_sweep(int fd, sweep__dirs_fn on_dirs, void *ctx)
{
	struct sweep_run p = { .fd = fd, .on_dirs = on_dirs, .ctx = ctx };
	pthread_t tid[SWEEP_THREADS];
	unsigned n = 0;
	int64_t before = sweep__disk_reads();
	int r = sweep_batches(fd, &p.b, &p.nb);

	if (r < 0)
		return r;
	/* The inode btrees came from the disk: the inodes will too. */
	atomic_init(&p.cold, before < 0 || sweep__disk_reads() != before);
	unsigned want = p.nb < SWEEP_THREADS ? (unsigned)p.nb : SWEEP_THREADS;
	pthread_mutex_init(&p.mu, NULL);
	while (n < want && sweep__thread_start(&tid[n], sweep_run, &p) == 0)
		n++;
	if (n == 0)
		sweep_run(&p); /* no thread to spare: this one does it all */
	for (unsigned i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&p.mu);
	free(p.b);
	long seen = atomic_load(&p.seen);
	int err = atomic_load(&p.err);
	return err < 0 && seen == 0 ? err : seen;
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
	pthread_mutex_t mu;
	pthread_cond_t more; /* fids grew, or the end came */
	struct xfs_fh64 *fids;
	size_t n, cap, next;
	bool ending; /* no more will come: a thread with nothing left goes */
	atomic_int opened, err;
	atomic_bool stop;
	int want, nthreads;
	pthread_t tid[DIRS_THREADS];
};

/* The next directory to open into *fid, waiting for one: false once there are none and none will come. */
static bool dirs_ahead_next(struct sweep__dirs_ahead *a, struct xfs_fh64 *fid)
{
	bool got = false;
	pthread_mutex_lock(&a->mu);
	while (!atomic_load(&a->stop) && a->next == a->n && !a->ending)
		pthread_cond_wait(&a->more, &a->mu);
	if (!atomic_load(&a->stop) && a->next < a->n) {
		*fid = a->fids[a->next++];
		got = true;
	}
	pthread_mutex_unlock(&a->mu);
	return got;
}

static void *dirs_ahead_run(void *arg)
{
	struct sweep__dirs_ahead *a = arg;
	union {
		struct file_handle h;
		char buf[sizeof(struct file_handle) + sizeof(struct xfs_fh64)];
	} u;
	char dents[16384] __attribute__((aligned(8)));
	struct xfs_fh64 fid;

	while (dirs_ahead_next(a, &fid)) {
		u.h.handle_bytes = sizeof(fid);
		u.h.handle_type = XFS_FH_INO64_GEN;
		memcpy(u.h.f_handle, &fid, sizeof(fid));
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
			pthread_mutex_lock(&a->mu);
			atomic_store(&a->stop, true);
			pthread_cond_broadcast(&a->more);
			pthread_mutex_unlock(&a->mu);
		}
		/* else gone since (ESTALE), not a directory now (ENOTDIR), or no descriptor to spare: the walk reads it */
	}
	return NULL;
}

int sweep__xfs_dirs_read_ahead_start(int fd, unsigned threads, struct sweep__dirs_ahead **ret)
{
	struct sweep__dirs_ahead *a;

	*ret = NULL;
	if (threads == 0)
		return 0;
	if (!(a = calloc(1, sizeof(*a))))
		return -ENOMEM;
	a->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (a->fd < 0) {
		int r = -errno;
		free(a);
		return r;
	}
	a->want = threads < DIRS_THREADS ? (int)threads : DIRS_THREADS;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->more, NULL);
	*ret = a;
	return 0;
}

int sweep__xfs_dirs_read_ahead_add(struct sweep__dirs_ahead *a, const uint64_t *inos, const uint32_t *gens, size_t n)
{
	int r = 0;

	if (!a || n == 0)
		return 0;
	pthread_mutex_lock(&a->mu);
	if (atomic_load(&a->stop)) {
		r = atomic_load(&a->err) ? atomic_load(&a->err) : -ECANCELED;
	} else if (sweep__grow(&a->fids, &a->cap, a->n + n, sizeof(*a->fids), 256) < 0) {
		r = -ENOMEM;
	} else {
		for (size_t i = 0; i < n; i++)
			a->fids[a->n++] = (struct xfs_fh64){ .ino = inos[i], .gen = gens[i] };
		pthread_cond_broadcast(&a->more);
	}
	/* The threads, with the first directories. */
	if (r == 0 && a->nthreads == 0) {
		while (a->nthreads < a->want && sweep__thread_start(&a->tid[a->nthreads], dirs_ahead_run, a) == 0)
			a->nthreads++;
		if (a->nthreads == 0)
			r = -EAGAIN;
	}
	pthread_mutex_unlock(&a->mu);
	return r;
}

int sweep__xfs_dirs_read_ahead_end(struct sweep__dirs_ahead *a, bool stop)
{
	int r;

	if (!a)
		return 0;
	pthread_mutex_lock(&a->mu);
	a->ending = true;
	if (stop)
		atomic_store(&a->stop, true);
	pthread_cond_broadcast(&a->more);
	pthread_mutex_unlock(&a->mu);
	for (int t = 0; t < a->nthreads; t++)
		pthread_join(a->tid[t], NULL);
	r = atomic_load(&a->opened) ? atomic_load(&a->opened) : atomic_load(&a->err);
	close(a->fd);
	pthread_cond_destroy(&a->more);
	pthread_mutex_destroy(&a->mu);
	free(a->fids);
	free(a);
	return r;
}

/* ---- a stat table of the whole filesystem (sweep__xfs_stats_start) ---- */

struct xag {
	struct xrec *v;
	size_t n, cap;
	int state; /* 0: not done yet, 1: done, -1: failed (the table cannot say) */
};

struct sweep__xfs_stats {
	int fd; /* our own */
	dev_t dev;
	blksize_t blksize;
	unsigned shift; /* an inode number's allocation group: ino >> shift */
	uint32_t agcount;
	struct xag *ags;
	uint64_t max_inodes;
	atomic_uint_fast64_t kept;
	atomic_uint next_ag;
	atomic_bool stop;
	pthread_mutex_t mu;
	pthread_cond_t done;
	unsigned nthreads;
	pthread_t tid[16];
};

static unsigned log2_ceil(uint64_t x)
{
	unsigned l = 0;
	while ((1ull << l) < x)
		l++;
	return l;
}

/* One allocation group into a->v, in inode order (bulkstat's): 0 or -errno. */
static int stats_one_ag(struct sweep__xfs_stats *t, uint32_t agno, struct xag *a, struct xfs_bulkstat_req *req)
{
	memset(&req->hdr, 0, sizeof(req->hdr));
	req->hdr.flags = XFS_BULK_IREQ_AGNO;
	req->hdr.agno = agno;
	for (;;) {
		if (atomic_load(&t->stop))
			return -EINTR;
		req->hdr.icount = BULK_MAX;
		if (ioctl(t->fd, XFS_IOC_BULKSTAT, req) < 0)
			return -errno;
		uint32_t got = req->hdr.ocount;
		if (got == 0)
			return 0; /* the group's last inode was given */
		if (got > BULK_MAX)
			return -EIO;
		if (atomic_fetch_add(&t->kept, got) + got > t->max_inodes)
			return -E2BIG; /* grew past what was counted at the start: give up on memory */
		if (sweep__grow(&a->v, &a->cap, a->n + got, sizeof(*a->v), 1024) < 0)
			return -ENOMEM;
		for (uint32_t k = 0; k < got; k++) {
			const struct xfs_bulkstat *b = &req->bulkstat[k];
			if (a->n && b->bs_ino <= a->v[a->n - 1].ino)
				return -EIO; /* not ascending: the lookup could not find it */
			if (b->bs_xflags & FS_XFLAG_REALTIME)
				continue; /* its stat says the realtime extent size: left to stat */
			/*
			 * A data fork in the inode (short-form directory, fast symlink) or a
			 * device: bulkstat says 0 blocks, stat counts the attribute fork's
			 * (tests/scan/populate.py's sym-fast-xattr: 4 KiB). Left to stat.
			 */
			if (b->bs_blocks == 0 && b->bs_aextents > 0)
				continue;
			a->v[a->n++] = xrec_of(b);
		}
	}
}

static void *stats_run(void *arg)
{
	struct sweep__xfs_stats *t = arg;
	struct xfs_bulkstat_req *req = calloc(1, sizeof(*req) + BULK_MAX * sizeof(struct xfs_bulkstat));
	unsigned agno;

	while ((agno = atomic_fetch_add(&t->next_ag, 1)) < t->agcount) {
		struct xag *a = &t->ags[agno];
		int r = req ? stats_one_ag(t, agno, a, req) : -ENOMEM;
		pthread_mutex_lock(&t->mu);
		a->state = r == 0 ? 1 : -1;
		if (r < 0) {
			free(a->v);
			a->v = NULL;
			a->n = 0;
		}
		pthread_cond_broadcast(&t->done);
		pthread_mutex_unlock(&t->mu);
	}
	free(req);
	return NULL;
}

int sweep__xfs_stats_start(int fd, unsigned threads, uint64_t max_inodes, struct sweep__xfs_stats **ret)
{
	struct xfs_fsop_geom geo;
	struct statfs sfs;
	struct stat st;

	*ret = NULL;
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0)
		return -errno;
	if (ioctl(fd, XFS_IOC_FSGEOMETRY, &geo) < 0)
		return errno == ENOTTY || errno == EINVAL ? -EOPNOTSUPP : -errno;
	if (sfs.f_files - sfs.f_ffree > max_inodes)
		return -E2BIG;
	if (!geo.agcount || !geo.agblocks || !geo.inodesize || geo.blocksize < geo.inodesize)
		return -EOPNOTSUPP;
	struct sweep__xfs_stats *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->dev = st.st_dev;
	t->blksize = st.st_blksize;
	/* xfs's XFS_INO_TO_AGNO: the group's block bits (sb_agblklog), then the inode-in-block bits (sb_inopblog) */
	t->shift = log2_ceil(geo.agblocks) + log2_ceil(geo.blocksize / geo.inodesize);
	t->agcount = geo.agcount;
	t->max_inodes = max_inodes;
	t->ags = calloc(geo.agcount, sizeof(*t->ags));
	t->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->done, NULL);
	if (!t->ags || t->fd < 0) {
		int r = t->fd < 0 ? -errno : -ENOMEM;
		sweep__xfs_stats_free(t);
		return r;
	}
	/* Whether bulkstat answers here at all (the capability), before any thread starts. */
	struct {
		struct xfs_bulk_ireq hdr;
		struct xfs_bulkstat one;
	} probe = { .hdr = { .icount = 1 } };
	if (ioctl(t->fd, XFS_IOC_BULKSTAT, &probe) < 0) {
		int r = errno == EINVAL || errno == ENOTTY ? -EOPNOTSUPP : -errno;
		sweep__xfs_stats_free(t);
		return r;
	}
	unsigned want = threads < 1 ? 1 : threads > 16 ? 16 : threads;
	if (want > t->agcount)
		want = t->agcount;
	while (t->nthreads < want && sweep__thread_start(&t->tid[t->nthreads], stats_run, t) == 0)
		t->nthreads++;
	if (!t->nthreads) {
		sweep__xfs_stats_free(t);
		return -EAGAIN;
	}
	*ret = t;
	return 0;
}

int sweep__xfs_stats_get(struct sweep__xfs_stats *t, uint64_t ino, struct stat *st)
{
	if (!t || (ino >> t->shift) >= t->agcount)
		return 0;
	uint64_t agno = ino >> t->shift;
	struct xag *a = &t->ags[agno];
	int state;
	pthread_mutex_lock(&t->mu);
	while ((state = a->state) == 0)
		pthread_cond_wait(&t->done, &t->mu);
	pthread_mutex_unlock(&t->mu);
	if (state < 0)
		return 0;
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->v[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == a->n || a->v[lo].ino != ino)
		return 0;
	xrec_to_stat(&a->v[lo], t->dev, t->blksize, st);
	return 1;
}

void sweep__xfs_stats_free(struct sweep__xfs_stats *t)
{
	if (!t)
		return;
	atomic_store(&t->stop, true);
	atomic_store(&t->next_ag, t->agcount); /* no group begins after this */
	for (unsigned i = 0; i < t->nthreads; i++)
		pthread_join(t->tid[i], NULL);
	for (uint32_t i = 0; t->ags && i < t->agcount; i++)
		free(t->ags[i].v);
	free(t->ags);
	if (t->fd >= 0)
		close(t->fd);
	pthread_cond_destroy(&t->done);
	pthread_mutex_destroy(&t->mu);
	free(t);
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

int sweep__xfs_dirs_read_ahead_start(int fd, unsigned threads, struct sweep__dirs_ahead **ret)
{
	(void)threads;
	(void)fd;
	*ret = NULL;
	return -EOPNOTSUPP;
}

int sweep__xfs_dirs_read_ahead_add(struct sweep__dirs_ahead *a, const uint64_t *inos, const uint32_t *gens, size_t n)
{
	(void)a;
	(void)inos;
	(void)gens;
	(void)n;
	return -EOPNOTSUPP;
}

int sweep__xfs_dirs_read_ahead_end(struct sweep__dirs_ahead *a, bool stop)
{
	(void)a;
	(void)stop;
	return 0;
}

int sweep__xfs_stats_start(int fd, unsigned threads, uint64_t max_inodes, struct sweep__xfs_stats **ret)
{
	(void)fd;
	(void)threads;
	(void)max_inodes;
	*ret = NULL;
	return -EOPNOTSUPP;
}

int sweep__xfs_stats_get(struct sweep__xfs_stats *t, uint64_t ino, struct stat *st)
{
	(void)t;
	(void)ino;
	(void)st;
	return 0;
}

void sweep__xfs_stats_free(struct sweep__xfs_stats *t)
{
	(void)t;
}

#endif
