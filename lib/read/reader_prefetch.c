/* SPDX-License-Identifier: MIT */
/*
 * The disk's physical-order prefetch: a thread that goes ahead of the reader
 * through the plan, a group of files at a time. For each group it opens the
 * files (beneath their root, as the reader does, and only regular files that
 * are still the planned inode), maps their extents with FIEMAP, and asks for
 * every extent of the group with POSIX_FADV_WILLNEED in ascending physical
 * order. The reader then reads the group in plan order from the page cache,
 * which is the reorder buffer; it never reads past what the thread has asked
 * for (sweep__pf_allows), so no read of its own sends the head elsewhere.
 *
 * Why a thread, and why groups this large. On an aged filesystem the
 * extents of the files of one directory interleave with those of files
 * planned much later (appenders that ran concurrently wrote them into the
 * same holes). A group catches only the interleaving within itself; every
 * other group's data is a gap the head passes over, and each group sweeps
 * the same regions again. hdd7200 model of every tree extent of the
 * fragmented 115k-file images, sorted within groups of plan order
 * (bench/results/2026-11-25-frag-reader): ext4 35.0 s in groups of 16 MiB,
 * 31.1 s in 256 MiB, 28.3 s in 1 GiB, 25.6 s in one group; xfs 76.5, 37.1,
 * 25.8, 23.1 s; reading each file whole in plan order, 78.6 and 112.7 s. The
 * reader's window of open files (as it was before this thread) cannot hold
 * groups of that size; the thread keeps no file open past its group, and
 * the page cache keeps the data. WILLNEED blocks once the device's queue is
 * full, so the thread runs at the device's pace while the reader delivers
 * the previous group from the cache: the head never waits for the caller.
 *
 * Memory: a group is at most group_max bytes (by default an eighth of the
 * memory available, at most PF_GROUP_MAX), and the thread starts a group
 * only when the reader has begun to deliver the one before, so at most two
 * groups wait in the page cache. Groups start small (PF_GROUP_FIRST) and
 * grow fourfold, so the first bytes come soon.
 *
 * WILLNEED reads at most the file's read-ahead window (or the device's
 * largest request) per call, so the pieces are asked for PF_CHUNK at a time.
 * A failed open, FIEMAP or allocation only costs order, never data: the
 * reader checks identity and reads whatever it finds.
 *
 * Small pieces (PF_SMALL at most: most files of a source tree, every file of
 * a maildir) are not asked for with WILLNEED but read through the thread's
 * own io_uring into a scratch buffer that nobody looks at, PF_BATCH reads a
 * submission. Each WILLNEED is a system call of its own and sends its
 * request alone, so neighbouring small files stay one request each; reads
 * submitted together go out under one block plug, where the block layer
 * merges neighbours into one request. Fresh 1M-file ext4 tree (one 4 KiB
 * block a file), sweep-tar in the HDD class: 997,219 read requests with
 * WILLNEED, 34,021 through the ring. The page cache still
 * holds what the reader then reads; the copy into the scratch buffer is the
 * price (a few KiB a file).
 *
 * The frontier moves within a group too: as soon as every piece of the
 * group's first files has been asked for, the reader may read them (every
 * PF_PUBLISH files). With tiny files a group holds hundreds of thousands
 * of them, and a frontier that moved only at its end left the reader idle
 * while the device worked, and the device idle while the reader delivered.
 * A group holds at most as many files as the largest group's bytes make
 * blocks: each file takes at least a block of the page cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read.h"
#include "reader_prefetch.h"

#if HAVE_LIBURING
#include <liburing.h>
#endif

#define PF_GROUP_FIRST (64ull << 20)
#define PF_GROUP_MAX (2ull << 30)
#define PF_GROUP_MIN (64ull << 20) /* the default group_max is never smaller */
#define PF_CHUNK (128u << 10)      /* the smallest usual read-ahead window: WILLNEED reads no more per call */
#define PF_FDS 4096u               /* files a group keeps open from FIEMAP to WILLNEED (see fd_budget) */
#define PF_SMALL (64u << 10)       /* pieces up to this are read through the thread's ring, not WILLNEED */
#define PF_RING 256u               /* such reads in flight at most */
#define PF_BATCH 32u               /* and submitted together (one plug), at most */
#define PF_PUBLISH 64u             /* files wholly asked for between two moves of the frontier */
#define PF_ONE_BLOCK 4096u         /* a file planned this small has one extent, where the plan has it */
#define PF_GROUP_FILES (1u << 18)  /* files a group holds at most (its arrays take 40 bytes a file) */
#define PF_PIECE_MAX (1u << 30)    /* a longer extent is asked for as several pieces */

struct pf_piece {
	uint64_t phys, off;
	uint32_t len;  /* at most PF_PIECE_MAX */
	uint32_t file; /* index into the group's files */
};

struct pf_file {
	size_t index;        /* in the plan */
	int fd;              /* -1: closed after FIEMAP (over the budget), opened again to ask */
	unsigned left : 31;  /* its pieces not asked for yet */
	unsigned random : 1; /* read as POSIX_FADV_RANDOM (see pieces_only) */
};

struct sweep__pf {
	struct sweep__pf_opts o;
	uint64_t group_max;
	unsigned fd_budget;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* under mu */
	size_t front;      /* files before it asked for wholly */
	uint64_t front_off; /* and of file front, the bytes below this */
	size_t head;       /* the reader has delivered files before this */
	bool stop;
	/* the thread's own */
	struct pf_piece *pieces;
	size_t npieces, cap_pieces;
	struct pf_file *files;
	size_t nfiles, cap_files;
	size_t done, published; /* files[0, done) wholly asked for; the frontier was last moved to done == published */
#if HAVE_LIBURING
	struct io_uring ring;   /* small pieces are read through it (ring_*) */
	bool have_ring;         /* set up (to be torn down) */
	bool use_ring;          /* and working; false: WILLNEED for every piece */
	unsigned queued, inflight;
	int to_close[PF_BATCH + 1]; /* files of queued reads, closed once those are submitted */
	unsigned nclose;
	char *scratch;          /* PF_SMALL bytes every such read lands in, never read */
#endif
};

static uint64_t prefetch_pieces;

uint64_t sweep__reader_prefetch_pieces(void)
{
	return __atomic_load_n(&prefetch_pieces, __ATOMIC_RELAXED);
}

/* An eighth of MemAvailable, within [PF_GROUP_MIN, PF_GROUP_MAX]; the minimum where it cannot be read. */
static uint64_t default_group_max(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[128];
	unsigned long long kib = 0;

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
				break;
		fclose(f);
	}
	uint64_t g = (uint64_t)kib * 1024 / 8;
	return g < PF_GROUP_MIN ? PF_GROUP_MIN : g > PF_GROUP_MAX ? PF_GROUP_MAX : g;
}

/* Open plan file index as the reader would: beneath its root, no FIFO wait, and only the planned regular file. */
static int open_planned(struct sweep__pf *pf, size_t index, struct sweep_stat *st)
{
	const struct sweep_plan_entry *e = sweep_plan_entry(pf->o.plan, index);
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	int fd = -EPERM;

	if (pf->o.noatime)
		fd = sweep__plan_open_entry(pf->o.plan, e, flags | O_NOATIME);
	if (fd == -EPERM)
		fd = sweep__plan_open_entry(pf->o.plan, e, flags);
	if (fd < 0)
		return fd;
	struct stat raw;
	if (fstat(fd, &raw) < 0) {
		close(fd);
		return -ESTALE;
	}
	sweep_stat_from_stat(st, &raw);
	if (!sweep__plan_entry_is(e, st)) {
		close(fd);
		return -ESTALE;
	}
	/*
	 * O_NONBLOCK stays: ext4, xfs and btrfs read through io_uring
	 * regardless (they support NOWAIT and async buffered reads); where a
	 * filesystem does not, the ring's read ends in EAGAIN, and the reader
	 * reads the file without the prefetch.
	 */
	return fd;
}

/*
 * A file asked for in several pieces, or only in part: a read of one piece
 * through the ring must not read ahead into the others (the read-ahead
 * window of a small read at the start of a file is four times its size),
 * which lie elsewhere on the disk and come in their own turn. WILLNEED
 * reads exactly what it is given; a read of a file marked random does too.
 * The mark is on this open file only, not on the reader's.
 */
static void pieces_only(int fd)
{
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
}

static int add_piece(struct sweep__pf *pf, uint64_t phys, uint64_t off, uint64_t len)
{
	while (len > 0) {
		uint32_t n = len < PF_PIECE_MAX ? (uint32_t)len : PF_PIECE_MAX;
		if (sweep__grow(&pf->pieces, &pf->cap_pieces, pf->npieces + 1, sizeof(*pf->pieces), 1024) < 0)
			return -ENOMEM;
		pf->pieces[pf->npieces++] = (struct pf_piece){ .phys = phys, .off = off, .len = n,
							       .file = (uint32_t)(pf->nfiles - 1) };
		pf->files[pf->nfiles - 1].left++;
		if (phys != UINT64_MAX)
			phys += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* The pieces of [lo, hi) of the group's last file (open as fd): one per located extent, the rest where it was planned. */
static int map_file(struct sweep__pf *pf, int fd, uint64_t planned, uint64_t blksize, uint64_t lo, uint64_t hi)
{
	struct sweep_extent *x = NULL;
	size_t n = 0;
	enum sweep_extent_source src;
	int rc = 0;

	/* A file of one block has one extent: the plan's location is it. */
	if (hi <= blksize || sweep_extents_get(fd, &x, &n, &src) < 0 || n == 0) {
		free(x);
		return add_piece(pf, planned, lo, hi - lo);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		uint64_t a = x[i].logical > lo ? x[i].logical : lo;
		uint64_t b = x[i].logical + x[i].length < hi ? x[i].logical + x[i].length : hi;
		if (a >= b)
			continue;
		/* Unlocated (inline, delayed, unwritten) or reflinked: asked for where the file starts. */
		if ((x[i].flags & SWEEP_EXTENT_NOLOC) || x[i].physical == SWEEP_NO_PHYS)
			rc = add_piece(pf, planned, a, b - a);
		else
			rc = add_piece(pf, x[i].physical + (a - x[i].logical), a, b - a);
	}
	free(x);
	return rc;
}

/*
 * Collect the next group from (*idx, *off): open and map files until the
 * group holds group bytes, or as many files as the largest group's bytes
 * make blocks (each file takes at least one of the page cache;
 * PF_GROUP_FILES at most); a group may end inside a file, and the next one
 * goes on from there. Files are not charged a block each against the
 * bytes, nor the files bounded by the current group's: on the fragmenting
 * recipe's ext4 image, where 40% of the files are one block, either made
 * the groups smaller and cost 77-84 more seeks (HDD model 28.1 -> 28.2-28.6 s).
 */
static int collect(struct sweep__pf *pf, size_t *idx, uint64_t *off, uint64_t group)
{
	uint64_t bytes = 0;

	pf->npieces = pf->nfiles = pf->done = pf->published = 0;
	/* Each file takes at least a block of the page cache: never more than the largest group's bytes. */
	size_t max_files = pf->group_max / PF_ONE_BLOCK < PF_GROUP_FILES ? (size_t)(pf->group_max / PF_ONE_BLOCK)
									   : PF_GROUP_FILES;

	while (*idx < pf->o.n && bytes < group && pf->nfiles < max_files &&
	       !__atomic_load_n(&pf->stop, __ATOMIC_RELAXED)) {
		const struct sweep_plan_entry *e = sweep_plan_entry(pf->o.plan, *idx);
		struct sweep_stat st;

		if (*off == 0 && pf->o.after_begin && pf->o.after_begin(&(struct sweep_file){ .entry = e, .fd = -1 }, pf->o.ctx)) {
			(*idx)++; /* its begin may need none of it (a clone) */
			continue;
		}
		if (*off == 0 && e->size <= PF_ONE_BLOCK) {
			/*
			 * One block at most: one extent, where the plan has it, so
			 * there is nothing to map; opened once, when asked for
			 * (issue). Changed since, it is still asked for as planned;
			 * the reader reads whatever it finds.
			 */
			if (e->size > 0) {
				if (sweep__grow(&pf->files, &pf->cap_files, pf->nfiles + 1, sizeof(*pf->files), 256) < 0)
					return -ENOMEM;
				pf->files[pf->nfiles++] = (struct pf_file){ .index = *idx, .fd = -1 };
				int rc = add_piece(pf, e->phys != SWEEP_NO_PHYS ? e->phys : UINT64_MAX, 0, e->size);
				if (rc < 0)
					return rc;
				bytes += e->size;
			}
			(*idx)++;
			continue;
		}
		int fd = open_planned(pf, *idx, &st);

		if (fd < 0 || st.size <= *off) { /* gone, changed, or nothing (more) to read: the reader will see */
			if (fd >= 0)
				close(fd);
			(*idx)++;
			*off = 0;
			continue;
		}
		uint64_t blksize = st.blksize ? st.blksize : 4096;
		uint64_t take = st.size - *off;
		if (take > group - bytes)
			take = group - bytes;
		if (sweep__grow(&pf->files, &pf->cap_files, pf->nfiles + 1, sizeof(*pf->files), 256) < 0) {
			close(fd);
			return -ENOMEM;
		}
		pf->files[pf->nfiles++] = (struct pf_file){ .index = *idx, .fd = fd };
		uint64_t planned = e->phys != SWEEP_NO_PHYS ? e->phys : UINT64_MAX;
		size_t before = pf->npieces;
		int rc = map_file(pf, fd, planned, blksize, *off, *off + take);
		if (pf->npieces - before > 1 || *off > 0 || *off + take < st.size) {
			pf->files[pf->nfiles - 1].random = 1;
			pieces_only(fd);
		}
		if (pf->nfiles > pf->fd_budget) {
			close(fd);
			pf->files[pf->nfiles - 1].fd = -1;
		}
		if (rc < 0)
			return rc;
		bytes += take;
		*off += take;
		if (*off >= st.size) {
			(*idx)++;
			*off = 0;
		}
	}
	return 0;
}

static int cmp_piece(const void *a, const void *b)
{
	const struct pf_piece *x = a, *y = b;

	if (x->phys != y->phys)
		return x->phys < y->phys ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* ---- small pieces through the thread's ring ---- */

#if HAVE_LIBURING
static void ring_start(struct sweep__pf *pf)
{
	pf->scratch = malloc(PF_SMALL);
	if (pf->scratch && io_uring_queue_init(PF_RING, &pf->ring, 0) == 0) {
		pf->have_ring = pf->use_ring = true;
		return;
	}
	free(pf->scratch); /* WILLNEED for every piece */
	pf->scratch = NULL;
}

/* Count the completions there are (wait: at least one); their data is of no interest. */
static void ring_reap(struct sweep__pf *pf, bool wait)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	if (wait && pf->inflight > 0)
		(void)io_uring_wait_cqe(&pf->ring, &cqe); /* failed: nothing counted, the caller sees no progress */
	io_uring_for_each_cqe(&pf->ring, head, cqe)
		n++;
	io_uring_cq_advance(&pf->ring, n);
	pf->inflight -= n;
}

/* Send what is queued, under one plug. */
static void ring_submit(struct sweep__pf *pf)
{
	if (!pf->use_ring || pf->queued == 0)
		return;
	int rc = io_uring_submit(&pf->ring);
	if (rc < 0 || (unsigned)rc < pf->queued) {
		/*
		 * Not all taken: what is left names descriptors that are about
		 * to be closed (and their numbers reused). No later submission
		 * may send it, so the ring is used no more: WILLNEED from here
		 * on, and the rest is dropped with the ring.
		 */
		pf->inflight += rc > 0 ? (unsigned)rc : 0;
		pf->queued = 0;
		pf->use_ring = false;
	} else {
		pf->inflight += pf->queued;
		pf->queued = 0;
	}
	while (pf->nclose > 0)
		close(pf->to_close[--pf->nclose]);
	ring_reap(pf, false);
}

/* Close fd once the reads queued for it are submitted (now, when none are). */
static void close_after_submit(struct sweep__pf *pf, int fd)
{
	if (pf->queued == 0) {
		close(fd);
		return;
	}
	/* Under a low open-file limit the thread holds no more than its budget waiting here either. */
	if (pf->nclose == PF_BATCH + 1 || pf->nclose >= pf->fd_budget)
		ring_submit(pf);
	pf->to_close[pf->nclose++] = fd;
}

/*
 * Queue a read of [off, off + len) of fd; false when it cannot be (the
 * caller asks with WILLNEED). The file may be closed once the read is
 * submitted: io_uring holds its own reference from then on.
 */
static bool ring_read(struct sweep__pf *pf, int fd, uint64_t off, uint64_t len)
{
	struct io_uring_sqe *sqe;

	if (!pf->use_ring || len > PF_SMALL)
		return false;
	while (pf->inflight + pf->queued >= PF_RING) {
		unsigned before = pf->inflight + pf->queued;
		ring_submit(pf);
		ring_reap(pf, true); /* at the device's pace, as WILLNEED on a full queue */
		if (pf->inflight >= before) {
			pf->use_ring = false; /* nothing comes back: WILLNEED from here on */
			return false;
		}
	}
	sqe = io_uring_get_sqe(&pf->ring);
	if (!sqe)
		return false;
	io_uring_prep_read(sqe, fd, pf->scratch, (unsigned)len, off);
	io_uring_sqe_set_data64(sqe, 0);
	if (++pf->queued >= PF_BATCH)
		ring_submit(pf);
	return true;
}

/* Every read back (before the scratch buffer and the ring go away). */
static void ring_stop(struct sweep__pf *pf)
{
	if (!pf->have_ring)
		return;
	ring_submit(pf);
	while (pf->inflight > 0) {
		unsigned before = pf->inflight;
		ring_reap(pf, true);
		if (pf->inflight == before)
			break;
	}
	io_uring_queue_exit(&pf->ring);
	if (pf->inflight == 0)
		free(pf->scratch);
	/* else left allocated on purpose: a read the ring lost track of may still land in it */
	pf->scratch = NULL;
	pf->have_ring = pf->use_ring = false;
}
#else
static void ring_start(struct sweep__pf *pf) { (void)pf; }
static void ring_submit(struct sweep__pf *pf) { (void)pf; }
static void close_after_submit(struct sweep__pf *pf, int fd)
{
	(void)pf;
	close(fd);
}
static bool ring_read(struct sweep__pf *pf, int fd, uint64_t off, uint64_t len)
{
	(void)pf, (void)fd, (void)off, (void)len;
	return false;
}
static void ring_stop(struct sweep__pf *pf) { (void)pf; }
#endif

/* ---- the frontier ---- */

static void publish(struct sweep__pf *pf, size_t front, uint64_t front_off)
{
	pthread_mutex_lock(&pf->mu);
	pf->front = front;
	pf->front_off = front_off;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
}

/*
 * File x of the group has had one more piece asked for. Once the group's
 * first files are wholly asked for (and submitted), the reader may read
 * them: the frontier moves to the first file that is not, every PF_PUBLISH
 * files. It never moves to the group's end here (thread_main does, with
 * the offset a group may end at inside a file).
 */
static void piece_done(struct sweep__pf *pf, size_t x)
{
	if (--pf->files[x].left > 0)
		return;
	while (pf->done < pf->nfiles && pf->files[pf->done].left == 0)
		pf->done++;
	if (pf->done < pf->nfiles && pf->done - pf->published >= PF_PUBLISH) {
		ring_submit(pf);
		publish(pf, pf->files[pf->done].index, 0);
		pf->published = pf->done;
	}
}

static void log_piece(struct sweep__pf *pf, const struct pf_file *f, int fd, uint64_t phys, uint64_t off, uint64_t len)
{
	struct sweep_file sf = { .entry = sweep_plan_entry(pf->o.plan, f->index), .fd = fd };
	struct stat raw;

	if (fstat(fd, &raw) == 0)
		sweep_stat_from_stat(&sf.st, &raw);
	pf->o.log(pf->o.log_ctx, &sf, phys == UINT64_MAX ? SWEEP_NO_PHYS : phys, off, len);
}

/*
 * Ask for the group's pieces in physical order; files closed after FIEMAP
 * are opened again one at a time. What is queued for the ring is submitted
 * before a WILLNEED and before a file is closed, so the device gets the
 * requests in that order and the ring has its own reference to every file.
 */
static void issue(struct sweep__pf *pf)
{
	size_t cached = SIZE_MAX; /* the file reopened last, held in cfd */
	int cfd = -1;

	if (pf->npieces > 1)
		qsort(pf->pieces, pf->npieces, sizeof(*pf->pieces), cmp_piece);
	for (size_t k = 0; k < pf->npieces; k++) {
		const struct pf_piece *x = &pf->pieces[k];
		struct pf_file *f = &pf->files[x->file];
		int fd = f->fd;

		if (__atomic_load_n(&pf->stop, __ATOMIC_RELAXED))
			break;
		if (fd < 0) {
			if (cached != x->file) {
				struct sweep_stat st;
				if (cfd >= 0)
					close_after_submit(pf, cfd);
				cfd = open_planned(pf, f->index, &st);
				if (cfd >= 0 && f->random)
					pieces_only(cfd);
				cached = x->file;
			}
			if ((fd = cfd) < 0) {
				piece_done(pf, x->file); /* not there any more: the reader will see */
				continue;
			}
		}
		if (ring_read(pf, fd, x->off, x->len)) {
			__atomic_fetch_add(&prefetch_pieces, 1, __ATOMIC_RELAXED);
			if (pf->o.log)
				log_piece(pf, f, fd, x->phys, x->off, x->len);
		} else {
			ring_submit(pf);
			for (uint64_t at = 0; at < x->len; at += PF_CHUNK) {
				uint64_t len = x->len - at < PF_CHUNK ? x->len - at : PF_CHUNK;
				(void)posix_fadvise(fd, (off_t)(x->off + at), (off_t)len, POSIX_FADV_WILLNEED);
				__atomic_fetch_add(&prefetch_pieces, 1, __ATOMIC_RELAXED);
				if (pf->o.log)
					log_piece(pf, f, fd, x->phys == UINT64_MAX ? x->phys : x->phys + at, x->off + at, len);
			}
		}
		piece_done(pf, x->file);
	}
	ring_submit(pf);
	if (cfd >= 0)
		close(cfd);
	for (size_t i = 0; i < pf->nfiles; i++)
		if (pf->files[i].fd >= 0)
			close(pf->files[i].fd);
	pf->nfiles = pf->npieces = 0;
}

static void *thread_main(void *arg)
{
	struct sweep__pf *pf = arg;
	size_t idx = pf->o.first, prev_start = pf->o.first;
	uint64_t off = 0, group = pf->group_max < PF_GROUP_FIRST ? pf->group_max : PF_GROUP_FIRST;

	ring_start(pf);
	while (idx < pf->o.n) {
		size_t start = idx;
		/* At most two groups ahead of the reader: this one, and the one it is delivering. */
		pthread_mutex_lock(&pf->mu);
		while (!pf->stop && pf->head < prev_start)
			pthread_cond_wait(&pf->cv, &pf->mu);
		bool stop = pf->stop;
		pthread_mutex_unlock(&pf->mu);
		if (stop)
			break;
		int rc = collect(pf, &idx, &off, group);
		issue(pf); /* after a failure too: what was collected is worth asking for; then the reader goes alone */
		if (rc < 0)
			break;
		publish(pf, idx, off);
		prev_start = start;
		group = group > pf->group_max / 4 ? pf->group_max : group * 4;
	}
	publish(pf, pf->o.n, 0); /* finished (or failed): the reader reads the rest as it comes */
	ring_stop(pf);
	return NULL;
}

int sweep__pf_start(const struct sweep__pf_opts *o, struct sweep__pf **ret)
{
	struct sweep__pf *pf = calloc(1, sizeof(*pf));
	int rc;

	if (!pf)
		return -ENOMEM;
	pf->o = *o;
	/* Readers on several disks at once share the memory a group may take. */
	pf->group_max = o->group_max ? o->group_max : default_group_max() / (o->share > 1 ? o->share : 1);
	if (!o->group_max && pf->group_max < PF_GROUP_MIN)
		pf->group_max = PF_GROUP_MIN;
	pf->head = pf->front = o->first;
	pf->fd_budget = sweep__nofile_free(8, PF_FDS); /* the reader's window and the caller need the rest */
	pthread_mutex_init(&pf->mu, NULL);
	pthread_cond_init(&pf->cv, NULL);
	rc = sweep__thread_start(&pf->thread, thread_main, pf);
	if (rc < 0) {
		pthread_cond_destroy(&pf->cv);
		pthread_mutex_destroy(&pf->mu);
		free(pf);
		return rc;
	}
	*ret = pf;
	return 0;
}

bool sweep__pf_allows(struct sweep__pf *pf, size_t index, uint64_t off, uint64_t *ret_end, bool wait)
{
	bool ok;

	pthread_mutex_lock(&pf->mu);
	for (;;) {
		ok = index < pf->front || (index == pf->front && off < pf->front_off);
		if (ok || !wait)
			break;
		pthread_cond_wait(&pf->cv, &pf->mu);
	}
	*ret_end = index < pf->front ? UINT64_MAX : pf->front_off;
	pthread_mutex_unlock(&pf->mu);
	return ok;
}

void sweep__pf_delivered(struct sweep__pf *pf, size_t head)
{
	pthread_mutex_lock(&pf->mu);
	if (head > pf->head) {
		pf->head = head;
		pthread_cond_broadcast(&pf->cv);
	}
	pthread_mutex_unlock(&pf->mu);
}

void sweep__pf_stop(struct sweep__pf *pf)
{
	if (!pf)
		return;
	pthread_mutex_lock(&pf->mu);
	__atomic_store_n(&pf->stop, true, __ATOMIC_RELAXED); /* issue() looks without the lock */
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	pthread_join(pf->thread, NULL);
	free(pf->pieces);
	free(pf->files);
	pthread_cond_destroy(&pf->cv);
	pthread_mutex_destroy(&pf->mu);
	free(pf);
}
