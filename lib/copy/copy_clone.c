/* SPDX-License-Identifier: MIT */
/*
 * copy: clones (FICLONE) and kernel copies (copy_file_range) of files copied
 * onto their own filesystem, the read stage's, made on a small pool of
 * threads (the clone pool).
 *
 * Why: a clone is one call, but around it the write stage makes its copy
 * (an O_TMPFILE, its owner, mode, times, xattrs, its name: about 17 calls a
 * file), and all of it ran one file after another on the caller's thread.
 * sweep-cp -a of the aged 58k-file linux-lite tree onto its own xfs took
 * 1.77 s against fcp's 1.22 s and xcp's 1.24 s, which clone on several
 * threads. The data is never read (the reader delivers none of a file it
 * clones), so the order in which the copies are made does not shape the
 * destination's layout: any thread may make any of them.
 *
 * What stays in order: a file is handed over when the reader ends it (its
 * status known), with a duplicate of the reader's descriptor (it closes its
 * own); finished copies are settled on the caller's thread in the order
 * they were read (reports, hard links, the writer thread's copies: the
 * read stage settles one pool before it hands anything to the other).
 *
 * Bounded: CLONE_JOBS_PER_THREAD files a thread wait or run, each holding
 * its duplicate, its copy and, while it is named, a directory; under a low
 * open-file limit fewer, and none (every copy here, as before) when too few
 * descriptors are left. A duplicate refused for want of one: that file is
 * made on the caller's thread, with the reader's own descriptor.
 *
 * The pool lives for one batch: its threads' cached destination
 * directories never outlive a change of destination or a retry.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_internal.h"

/* Threads at most; one per CPU below that, or SWEEP_CLONE_THREADS=N (0: no pool). */
#define CLONE_MAX_THREADS 8
#define CLONE_JOBS_PER_THREAD 16
/* Descriptors left to the reader's window and the rest of the run. */
#define CLONE_FD_RESERVE 64u
/* A copy whose clone and kernel copy were both refused is read with buffers of this size. */
#define CLONE_READ_BUFFER (1u << 20)

struct cjob {
	struct fcopy f;
	int srcfd; /* the duplicate this job closes */
	uint64_t dir; /* its destination directory's name, hashed: dir_key() */
	bool taken, done;
};

struct clone_pool;

struct clone_worker {
	struct clone_pool *p;
	pthread_t thread;
	struct dest_cache dc;
	struct writer *w; /* its writes, where a copy has to be read after all */
	uint64_t dir;     /* dir_key() of the job it runs, 0: none */
};

struct clone_pool {
	struct sweep_copy *c;
	pthread_mutex_t mu;
	pthread_cond_t work, room;
	struct cjob *ring;
	unsigned depth;
	uint64_t head, take, tail; /* the oldest job not settled, the oldest not taken, the next free slot */
	bool quit, stop, waiting;
	unsigned nth, idle; /* threads, and those waiting for work */
	unsigned done;      /* finished jobs not settled yet */
	struct clone_worker wk[CLONE_MAX_THREADS];
};

/* ---- clones and kernel copies, on any thread ---- */

static bool cfr_unsupported(int err)
{
	return err == EXDEV || err == EINVAL || err == EOPNOTSUPP || err == ENOSYS || err == EBADF || err == ETXTBSY;
}

/* copy_file_range from in to out at off until it returns 0 or left is done: -errno, or what it copied. */
static int64_t cfr_run(int in, int out, uint64_t off, uint64_t left, bool to_eof)
{
	loff_t i = (loff_t)off, o = (loff_t)off;
	int64_t done = 0;

	while (left > 0) {
		size_t chunk = left > (1u << 30) ? (1u << 30) : (size_t)left;
		ssize_t n = copy_file_range(in, &i, out, &o, chunk, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break; /* the end of the source */
		done += n;
		if (!to_eof)
			left -= (uint64_t)n;
	}
	return done;
}

int sweep__clone_range(struct fcopy *fc, int srcfd, const struct sweep_extent *map, size_t nmap, uint64_t size)
{
	uint64_t end = size;

	for (size_t i = 0; i <= nmap; i++) {
		bool tail = i == nmap; /* past the planned size, to the end */
		uint64_t off = tail ? end : map[i].logical;
		int64_t n = cfr_run(srcfd, fc->tmpfd, off, tail ? UINT64_MAX : map[i].length, tail);
		if (n < 0) {
			int err = (int)-n;
			if (cfr_unsupported(err) && fc->bytes == 0)
				return 1;
			bool wr = err == ENOSPC || err == EDQUOT || err == EFBIG;
			sweep__write_fail(fc, wr ? SWEEP_COPY_OP_WRITE : SWEEP_COPY_OP_READ, -err);
			return 0;
		}
		fc->bytes += (uint64_t)n;
		if (tail && n > 0)
			end += (uint64_t)n;
		else if (!tail && (uint64_t)n < map[i].length) { /* the source shrank */
			end = map[i].logical + (uint64_t)n;
			break;
		}
	}
	fc->size = end;
	fc->how = SWEEP_COPY_HOW_RANGE;
	return 0;
}

int sweep__clone_file(struct fcopy *fc, int srcfd, uint64_t size)
{
	if (ioctl(fc->tmpfd, FICLONE, srcfd) < 0)
		return errno;
	fc->how = SWEEP_COPY_HOW_CLONE;
	fc->bytes = fc->size = size;
	return 0;
}

void sweep__clone_sized(struct fcopy *fc)
{
	struct stat tst;

	if (fc->how == SWEEP_COPY_HOW_CLONE && fstat(fc->tmpfd, &tst) == 0)
		fc->bytes = fc->size = (uint64_t)tst.st_size;
}

int sweep__clone_status(const struct fcopy *fc, int srcfd, int status)
{
	struct stat now;

	if (status == 0 && fstat(srcfd, &now) == 0 &&
	    ((uint64_t)now.st_size != fc->st.size || now.st_ctim.tv_sec != fc->st.ctime_sec ||
	     (uint32_t)now.st_ctim.tv_nsec != fc->st.ctime_nsec))
		return SWEEP_READ_CHANGED;
	return status;
}

/* Both refused: the source read from its start to its end through w (tagged with fc). */
static void read_whole(struct writer *w, struct fcopy *fc, int srcfd)
{
	char *buf = malloc(CLONE_READ_BUFFER);
	uint64_t off = 0;

	fc->how = SWEEP_COPY_HOW_DATA;
	if (!buf) {
		sweep__write_fail(fc, SWEEP_COPY_OP_READ, -ENOMEM);
		return;
	}
	while (!fc->err) {
		ssize_t n = pread(srcfd, buf, CLONE_READ_BUFFER, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			sweep__write_fail(fc, SWEEP_COPY_OP_READ, -errno);
		if (n <= 0)
			break;
		if (sweep__write_data(w, fc, buf, (size_t)n, off, (uint64_t)(uintptr_t)fc) < 0)
			break;
		off += (uint64_t)n;
	}
	free(buf);
	int rc = sweep__writer_drain(w);
	if (rc < 0)
		sweep__write_fail(fc, SWEEP_COPY_OP_WRITE, rc);
	fc->size = off;
}

/*
 * The whole copy of a dense source open as srcfd (fc->st its stat as read)
 * onto its own filesystem: made, cloned or copied by the kernel (or, both
 * refused, read through w), its metadata set and named. What went wrong is
 * in fc. On the pool's threads, or on the caller's (dc and w its own).
 */
static void make_copy(struct sweep_copy *c, struct fcopy *fc, int srcfd, struct writer *w, bool stop)
{
	uint64_t self = fc->st.dev;

	fc->size = fc->st.size;
	if (sweep__write_open(c, fc, true) == 0) {
		/* Refused on this filesystem before (ext4): straight to the kernel copy, unless a clone is a must. */
		bool refused = __atomic_load_n(&c->noclone_self, __ATOMIC_RELAXED) == self + 1 &&
			       c->o.reflink != SWEEP_COPY_REFLINK_ALWAYS;
		int err = refused ? EOPNOTSUPP : sweep__clone_file(fc, srcfd, fc->st.size);
		if (err && !refused && (err == EXDEV || err == EOPNOTSUPP || err == ENOTTY) &&
		    (uint64_t)fc->dir_st.st_dev == self)
			__atomic_store_n(&c->noclone_self, self + 1, __ATOMIC_RELAXED);
		if (err && c->o.reflink == SWEEP_COPY_REFLINK_ALWAYS) {
			sweep__write_fail(fc, SWEEP_COPY_OP_CLONE, -err);
		} else if (err) {
			struct sweep_extent whole = { .logical = 0, .length = fc->st.size };
			if (fc->punch || sweep__clone_range(fc, srcfd, &whole, fc->st.size ? 1 : 0, fc->st.size) == 1)
				read_whole(w, fc, srcfd);
		}
		fc->status = sweep__clone_status(fc, srcfd, fc->status);
		/*
		 * A source that kept its size and ctime from its open until after
		 * the clone was cloned as it was planned: its size is the copy's
		 * (one fstat a file fewer). Changed, what was cloned is.
		 */
		if (fc->status != 0)
			sweep__clone_sized(fc);
		if (!fc->err && !stop && !(c->o.cancel && *c->o.cancel))
			sweep__write_finish(c, fc, srcfd);
	}
	sweep__write_close(fc);
}

/* ---- the pool's threads ---- */

static void write_failed(uint64_t tag, int err, void *ctx)
{
	(void)ctx;
	sweep__write_fail((struct fcopy *)(uintptr_t)tag, SWEEP_COPY_OP_WRITE, err);
}

/*
 * The job a thread runs next: the oldest not taken whose directory no other
 * thread is making copies in, else the oldest not taken. Why: xfs makes a
 * file's inode in its directory's allocation group, and the AGI buffer of
 * that group is locked for each inode made and for each O_TMPFILE named
 * (its unlinked list); two threads on one directory took turns at that
 * lock (perf of a cold copy: 14% of the samples were those sleeps and
 * wake-ups). Directories made one after another lie in different groups
 * (xfs rotates new directories over them). Only the jobs waiting are
 * looked at, often one directory's: some of those sleeps remain (8% on an
 * idle machine). Any order is fine here, as copies are settled in read
 * order (see above), and one directory's files, so any two of one name,
 * are still begun in read order.
 */
static struct cjob *pick(struct clone_pool *p, struct clone_worker *self)
{
	struct cjob *first = NULL;

	for (uint64_t i = p->take; i < p->tail; i++) {
		struct cjob *j = &p->ring[i % p->depth];
		bool busy = false;
		if (j->taken)
			continue;
		if (!first)
			first = j;
		/* Kernel copies (a filesystem that refused to clone, ext4) stay in read order, as before: no gain measured. */
		if (__atomic_load_n(&p->c->noclone_self, __ATOMIC_RELAXED) == j->f.st.dev + 1)
			break;
		for (unsigned k = 0; k < p->nth && !busy; k++)
			busy = &p->wk[k] != self && p->wk[k].dir == j->dir;
		if (!busy) {
			first = j;
			break;
		}
	}
	first->taken = true;
	self->dir = first->dir;
	while (p->take < p->tail && p->ring[p->take % p->depth].taken)
		p->take++;
	return first;
}

static void *worker_main(void *arg)
{
	struct clone_worker *wk = arg;
	struct clone_pool *p = wk->p;

	pthread_setname_np(pthread_self(), "sweep-clone");
	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (p->take == p->tail) {
			if (p->quit)
				break;
			p->idle++;
			pthread_cond_wait(&p->work, &p->mu);
			p->idle--;
			continue;
		}
		struct cjob *j = pick(p, wk);
		bool stop = p->stop;
		pthread_mutex_unlock(&p->mu);
		j->f.dc = &wk->dc;
		make_copy(p->c, &j->f, j->srcfd, wk->w, stop);
		close(j->srcfd);
		j->srcfd = -1;
		pthread_mutex_lock(&p->mu);
		wk->dir = 0;
		j->done = true;
		p->done++;
		/* The caller waiting (a full ring, or every copy) is woken for half the ring at a time, or the last. */
		if (p->waiting && (p->done >= p->depth / 2 || p->take == p->tail))
			pthread_cond_signal(&p->room);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* ---- the caller's thread ---- */

/* How many threads and jobs the pool may have (0 threads: no pool). */
static unsigned pool_size(unsigned *depth)
{
	const char *env = getenv("SWEEP_CLONE_THREADS");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = cpus > 1 ? (unsigned)cpus : 0;
	struct rlimit rl;

	if (env && *env)
		n = (unsigned)strtoul(env, NULL, 10);
	if (n > CLONE_MAX_THREADS)
		n = CLONE_MAX_THREADS;
	*depth = n * CLONE_JOBS_PER_THREAD;
	/* A job holds up to three descriptors (its duplicate, its copy, a directory while it is named). */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		rlim_t spare = rl.rlim_cur > CLONE_FD_RESERVE ? (rl.rlim_cur - CLONE_FD_RESERVE) / 3 : 0;
		if (spare < *depth)
			*depth = (unsigned)spare;
	}
	if (*depth < 2 || *depth < n)
		return 0;
	return n;
}

static void pool_free(struct clone_pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->quit = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->nth; i++) {
		pthread_join(p->wk[i].thread, NULL);
		sweep__dest_cache_free(&p->wk[i].dc);
		sweep__writer_free(p->wk[i].w);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->room);
	free(p->ring);
	free(p);
}

/* The pool, started: NULL where there is to be none (no CPU to spare, too few descriptors, no memory). */
static struct clone_pool *pool_new(struct sweep_copy *c)
{
	unsigned depth, n = pool_size(&depth);
	struct clone_pool *p = n ? calloc(1, sizeof(*p)) : NULL;

	if (!p)
		return NULL;
	p->c = c;
	p->depth = depth;
	p->ring = calloc(depth, sizeof(*p->ring));
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->room, NULL);
	for (unsigned i = 0; p->ring && i < n; i++) {
		struct clone_worker *wk = &p->wk[i];
		struct writer_opts wo = { .size = sizeof(wo), .backend = SWEEP_BACKEND_SYSCALL, .on_fail = write_failed };
		wk->p = p;
		wk->dc.fd = -1;
		if (sweep__writer_new(&wo, &wk->w) < 0)
			break;
		if (sweep__thread_start(&wk->thread, worker_main, wk) < 0) {
			sweep__writer_free(wk->w);
			break;
		}
		p->nth++;
	}
	if (p->nth == 0) {
		pool_free(p);
		return NULL;
	}
	return p;
}

bool sweep__clone_takes(const struct sweep_copy *c, const struct qitem *q, const struct sweep_file *f)
{
	if (!c->thread || c->clone_off) /* copies stay on the caller's thread (SWEEP_COPY_THREADS=0, one CPU) */
		return false;
	if (c->o.reflink == SWEEP_COPY_REFLINK_NEVER || q->into || q->place || f->st.dev != q->dst_dev ||
	    sweep__thread_takes(c, q, f))
		return false;
	/* dense: no holes to keep, so the kernel copy (clone refused) goes over the whole file */
	if (f->st.size > 0 && !(c->o.sparse == SWEEP_COPY_SPARSE_NEVER ||
				(f->data_map_len == 1 && f->data_map[0].logical == 0 &&
				 f->data_map[0].length == f->st.size)))
		return false;
	return true;
}

/* (p->mu held) Idle threads set to work on what waits, and the caller asleep until a thread says jobs are done. */
static void wait_done(struct clone_pool *p)
{
	if (p->idle)
		pthread_cond_broadcast(&p->work);
	p->waiting = true;
	pthread_cond_wait(&p->room, &p->mu);
	p->waiting = false;
}

/* Settle the finished jobs at the head, in read order; with all, wait for every one. */
void sweep__clone_reap(struct sweep_copy *c, bool all)
{
	struct clone_pool *p = c->clone;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = sweep__copy_stopped(c) != 0;
	while (p->head != p->tail) {
		struct cjob *j = &p->ring[p->head % p->depth];
		if (!j->done) {
			if (!all)
				break;
			wait_done(p);
			continue;
		}
		pthread_mutex_unlock(&p->mu);
		sweep__report_bytes(c, j->f.bytes);
		sweep__settle_file(c, &j->f);
		sweep__write_free(&j->f);
		pthread_mutex_lock(&p->mu);
		p->head++;
		p->done--;
	}
	pthread_mutex_unlock(&p->mu);
}

/* The file made here, on the caller's thread, with the reader's descriptor: after the pool's, in order. */
static void make_here(struct sweep_copy *c, const struct qitem *q, const struct sweep_file *f, int status)
{
	struct fcopy fc;

	sweep__clone_reap(c, true);
	sweep__write_start(&fc, q);
	fc.dc = &c->dcache;
	fc.st = f->st;
	fc.status = status;
	c->wcur = &fc;
	make_copy(c, &fc, f->fd, c->writer, sweep__copy_stopped(c) != 0);
	c->wcur = NULL;
	sweep__report_bytes(c, fc.bytes);
	sweep__settle_file(c, &fc);
	sweep__write_free(&fc);
}

/* dst's directory part, hashed (never 0, a thread's "no job"). */
static uint64_t dir_key(const char *dst)
{
	const char *slash = strrchr(dst, '/');

	return sweep__name_hash(dst, slash ? (size_t)(slash - dst) : 0) | 1;
}

void sweep__clone_submit(struct sweep_copy *c, const struct qitem *q, const struct sweep_file *f, int status)
{
	if (!c->clone && !c->clone_off) {
		c->clone = pool_new(c);
		c->clone_off = !c->clone;
	}
	struct clone_pool *p = c->clone;
	int fd = p ? fcntl(f->fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd < 0) { /* no pool, or no descriptor to spare for it now */
		make_here(c, q, f, status);
		return;
	}
	sweep__clone_reap(c, false);
	pthread_mutex_lock(&p->mu);
	while (p->tail - p->head >= p->depth) { /* full: the oldest settled once it is done */
		if (p->ring[p->head % p->depth].done) {
			pthread_mutex_unlock(&p->mu);
			sweep__clone_reap(c, false);
			pthread_mutex_lock(&p->mu);
			continue;
		}
		wait_done(p);
	}
	struct cjob *j = &p->ring[p->tail % p->depth];
	sweep__write_start(&j->f, q);
	j->f.st = f->st;
	j->f.status = status;
	j->srcfd = fd;
	j->dir = dir_key(q->dst);
	j->taken = j->done = false;
	p->tail++;
	p->stop = sweep__copy_stopped(c) != 0;
	/* Idle threads are woken for a quarter of the ring at a time: a wake-up a file cost 5% of the CPU. */
	bool wake = p->idle > 0 && p->tail - p->take >= p->depth / 4;
	pthread_mutex_unlock(&p->mu);
	if (wake)
		pthread_cond_signal(&p->work);
}

void sweep__clone_free(struct sweep_copy *c)
{
	if (!c->clone)
		return;
	sweep__clone_reap(c, true);
	pool_free(c->clone);
	c->clone = NULL;
	c->clone_off = false;
}
