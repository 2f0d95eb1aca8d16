/* SPDX-License-Identifier: MIT */
/*
 * copy: the writer thread, a transport between the read stage and the
 * write stage. The caller's thread opens and reads the sources in the
 * planned order; each file whose data it reads is handed to the writer
 * thread of its destination's filesystem (a job), which runs the write stage on it (copy_write.c: create
 * the copy, write the data, set the metadata, put the copy in place) while
 * the reader goes on with the next files. Finished jobs come back to the
 * caller's thread, in the order they were read, for the settle stage.
 *
 * Why: on a fast device copying to a fast destination, sweep-cp was
 * CPU-bound on one thread: half of its system time is the destination's
 * (pwrite, the temporary's open and link, rename, close, ftruncate, the
 * metadata calls). xcp, copying on several threads, took 0.81x its wall
 * time on the aged Linux ext4 image. One thread per destination, not a
 * pool: the copies are still created, written and named in exactly the
 * order the sources are read, so the destination's layout (on a disk) and
 * the reports (in read order, on the caller's thread) are what they were
 * without it.
 *
 * The thread calls nobody back except on_step's WRITTEN step (from the
 * write stage). Clones and kernel copies stay on the caller's thread: they
 * are one call. A job holds no descriptor while it waits: the source's
 * xattrs and ACLs are captured when the reader ends the file (its stat
 * comes with it), so a low open-file limit is shared by the reader's
 * window and the two copies being made, not by every file waiting.
 *
 * One writer thread per destination device (a lane): a copy whose
 * destination spans two filesystems (a mount point inside DEST, sources
 * copied onto two disks) writes to both at once instead of through one
 * thread. Each lane makes its copies in the order they were read, so each
 * destination's layout is what one thread made; finished copies are
 * settled in the order they were read across all lanes (the job's seq),
 * so reports, hard links (made when their first copy settles: after it
 * exists), directory metadata and deletions (after every copy settled)
 * keep their order. At most THREAD_MAX_LANES lanes, or SWEEP_COPY_THREADS;
 * a device beyond them shares the first lane.
 *
 * Bounded: at most THREAD_BYTES of data and THREAD_MAX_JOBS files wait for
 * each lane; the reader waits when either is reached.
 *
 * Few hand-offs: a file is handed over once, when it ends (or, a large one,
 * once THREAD_WAKE_BYTES of it wait), under one lock; an idle thread is
 * woken only once THREAD_WAKE_JOBS files or THREAD_WAKE_BYTES wait for it,
 * or when the reader itself must wait for it; finished copies are settled
 * THREAD_WAKE_JOBS at a time. cp -a of small files made about 3.5 futex
 * calls a file with a hand-off at each step.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_internal.h"

#define THREAD_BYTES (32u << 20)
#define THREAD_MAX_JOBS 256
/* A file's data is handed over when it ends, or once this much of it waits (large files stream). */
#define THREAD_WAKE_BYTES (256u << 10)
/* An idle thread is woken for this many files waiting; finished ones are settled as many at a time. */
#define THREAD_WAKE_JOBS 16
/* Writer threads at most (one per destination device); SWEEP_COPY_THREADS=N lowers it. */
#define THREAD_MAX_LANES 8
/* A lane no copy has gone to yet. */
#define LANE_DEV_NONE UINT64_MAX

struct chunk {
	struct chunk *next;
	uint64_t off;
	size_t len;
	char data[];
};

struct lane;

struct tjob {
	struct tjob *next;
	struct lane *lane; /* the writer thread making it */
	uint64_t seq;      /* its place in read order, across lanes */
	struct fcopy f; /* the thread's from begin until done, then the settle stage's */
	bool dense;
	bool handed;    /* in the thread's list; before, only the caller's thread touches it */
	size_t held;    /* data held before it was handed over */
	/* under the lock once handed over */
	struct chunk *head, *tail;
	bool ended, done;
	enum sweep_copy_op main_op; /* a failure the caller's thread saw (the thread takes it at the end) */
	int main_err;
};

/* One writer thread and its jobs: the copies to one destination device. */
struct lane {
	struct copy_thread *pool;
	uint64_t dev; /* the destination device its copies go to (LANE_DEV_NONE: none yet) */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work, room;
	struct tjob *first, *last; /* every job not yet reaped, in read order */
	struct tjob *todo;         /* the first job the thread has not finished */
	size_t bytes;              /* data waiting for the thread */
	unsigned jobs;             /* jobs not yet reaped */
	unsigned queued;           /* jobs handed over the thread has not taken yet */
	unsigned done;             /* finished jobs not yet reaped (read without the lock: atomic) */
	bool idle, waiting, quit, stop;
	bool waiting_bytes;        /* the reader waits for room for data, not for finished copies */
	uint64_t written, told; /* data the thread wrote; what on_bytes has been told of */
	struct writer *writer; /* the thread's own (pwrite) */
	struct dest_cache dc;  /* the thread's cached destination directory */
	uint64_t requests;     /* its write requests, updated as jobs finish */
};

struct copy_thread {
	struct sweep_copy *c;
	struct lane *lanes[THREAD_MAX_LANES];
	unsigned nlanes, max_lanes;
	bool asked; /* SWEEP_COPY_THREADS=N asked for them: warm batches are theirs too */
	uint64_t seq;  /* jobs begun */
	unsigned done; /* finished jobs not yet reaped, in every lane (atomic) */
};

/* ---- the thread ---- */

static void write_failed(uint64_t tag, int err, void *ctx)
{
	(void)ctx;
	sweep__write_fail(&((struct tjob *)(uintptr_t)tag)->f, SWEEP_COPY_OP_WRITE, err);
}

/* Run the write stage on j: create, write what comes, finish once it ended. Called without the lock. */
static void run_job(struct lane *t, struct tjob *j)
{
	struct sweep_copy *c = t->pool->c;
	struct fcopy *f = &j->f;

	f->dc = &t->dc;
	sweep__write_open(c, f, j->dense);
	pthread_mutex_lock(&t->mu);
	for (;;) {
		/* Every chunk that waits, taken at once: a small file's data is one lock away. */
		struct chunk *list = j->head;
		if (!list && j->ended) {
			if (j->main_err)
				sweep__write_fail(f, j->main_op, j->main_err);
			break;
		}
		if (!list) {
			t->idle = true;
			pthread_cond_wait(&t->work, &t->mu);
			t->idle = false;
			continue;
		}
		j->head = j->tail = NULL;
		pthread_mutex_unlock(&t->mu);
		size_t len = 0, ok = 0;
		for (struct chunk *ch = list, *next; ch; ch = next) {
			next = ch->next;
			if (!f->err && f->tmpfd >= 0 &&
			    sweep__write_data(t->writer, f, ch->data, ch->len, ch->off, (uint64_t)(uintptr_t)j) == 0)
				ok += ch->len;
			len += ch->len;
			free(ch);
		}
		pthread_mutex_lock(&t->mu);
		t->written += ok;
		t->bytes -= len;
		if (t->waiting && t->waiting_bytes)
			pthread_cond_signal(&t->room);
	}
	bool stop = t->stop;
	pthread_mutex_unlock(&t->mu);
	int rc = sweep__writer_drain(t->writer);
	if (rc < 0)
		sweep__write_fail(f, SWEEP_COPY_OP_WRITE, rc);
	if (!f->err && f->tmpfd >= 0 && !stop && !(c->o.cancel && *c->o.cancel))
		sweep__write_finish(c, f, -1);
	sweep__write_close(f);
}

static void *thread_main(void *arg)
{
	struct lane *t = arg;

	pthread_setname_np(pthread_self(), "sweep-writer"); /* as top -H and perf show it */

	pthread_mutex_lock(&t->mu);
	for (;;) {
		struct tjob *j = t->todo;
		/* A job is taken once it has data or ended: a file still being opened has nothing to do. */
		if (!j || (!j->head && !j->ended)) {
			if (t->quit && !j)
				break;
			t->idle = true;
			pthread_cond_wait(&t->work, &t->mu);
			t->idle = false;
			continue;
		}
		t->queued--;
		pthread_mutex_unlock(&t->mu);
		run_job(t, j);
		struct writer_stats ws;
		sweep__writer_stats(t->writer, &ws);
		pthread_mutex_lock(&t->mu);
		t->requests = ws.requests;
		j->done = true;
		__atomic_add_fetch(&t->done, 1, __ATOMIC_RELEASE);
		__atomic_add_fetch(&t->pool->done, 1, __ATOMIC_RELEASE);
		t->todo = j->next;
		/* A reader waiting for finished copies is woken for a few at a time, or the last. */
		if (t->waiting && (t->waiting_bytes || t->done >= THREAD_WAKE_JOBS || !t->todo))
			pthread_cond_signal(&t->room);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

/* ---- the caller's thread ---- */

static void reap(struct sweep_copy *c, uint64_t last, bool wait);

/*
 * How many writer threads: SWEEP_COPY_THREADS=0 keeps every copy on the
 * caller's thread, =1 makes every copy on one thread (measuring, or a
 * reason to), =N at most N, one per destination device, warm batches
 * included (*asked).
 */
static unsigned wanted(const struct sweep_copy *c, bool *asked)
{
	const char *env = getenv("SWEEP_COPY_THREADS");
#if SWEEP_TEST_HOOKS
	/* Test builds only: SWEEP_TEST_COPY=thread|serial (meson -Dtest_copy) overrides the choice. */
	const char *t = getenv("SWEEP_TEST_COPY");
	if (t && !strcmp(t, "serial"))
		return 0;
	if (t && !strcmp(t, "thread") && !(env && *env))
		return THREAD_MAX_LANES;
#endif
	if (env && *env) {
		unsigned long n = strtoul(env, NULL, 10);
		*asked = true;
		return n < THREAD_MAX_LANES ? (unsigned)n : THREAD_MAX_LANES;
	}
	if (c->o.writes == SWEEP_COPY_WRITES_URING) /* the caller chose io_uring writes, on this thread */
		return 0;
	return sysconf(_SC_NPROCESSORS_ONLN) > 1 ? THREAD_MAX_LANES : 0;
}

/* A lane's thread started: 0, -ENOMEM, or the error pthread_create gave. */
static int lane_new(struct copy_thread *p, uint64_t dev, struct lane **ret)
{
	struct lane *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->pool = p;
	t->dev = dev;
	t->dc.fd = -1;
	struct writer_opts wo = { .size = sizeof(wo), .backend = SWEEP_BACKEND_SYSCALL, .on_fail = write_failed };
	int rc = sweep__writer_new(&wo, &t->writer);
	if (rc < 0) {
		free(t);
		return rc;
	}
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->work, NULL);
	pthread_cond_init(&t->room, NULL);
	rc = sweep__thread_start(&t->thread, thread_main, t);
	if (rc < 0) {
		sweep__writer_free(t->writer);
		pthread_mutex_destroy(&t->mu);
		pthread_cond_destroy(&t->work);
		pthread_cond_destroy(&t->room);
		free(t);
		return rc;
	}
	*ret = t;
	return 0;
}

/* Waits for the lane's thread (every job reaped). */
static void lane_free(struct lane *t)
{
	pthread_mutex_lock(&t->mu);
	t->quit = true;
	pthread_cond_signal(&t->work);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thread, NULL);
	sweep__dest_cache_free(&t->dc);
	sweep__writer_free(t->writer);
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->work);
	pthread_cond_destroy(&t->room);
	free(t);
}

int sweep__thread_new(struct sweep_copy *c, struct copy_thread **ret)
{
	*ret = NULL;
	bool asked = false;
	unsigned n = wanted(c, &asked);
	if (!n)
		return 0;
#if SWEEP_TEST_HOOKS
	const char *env = getenv("SWEEP_TEST_COPY");
	c->test_thread_all = env && !strcmp(env, "thread");
#endif
	struct copy_thread *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->c = c;
	p->max_lanes = n;
	p->asked = asked;
	int rc = lane_new(p, LANE_DEV_NONE, &p->lanes[0]);
	if (rc < 0) {
		free(p);
		return rc == -ENOMEM ? rc : 0; /* no thread: copies are made here, as without one */
	}
	p->nlanes = 1;
	*ret = p;
	return 0;
}

void sweep__thread_free(struct copy_thread *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->nlanes; i++)
		lane_free(p->lanes[i]);
	free(p);
}

/* The lane for copies into dev: its own, a new one, or (none can be started, or too many) the first. */
static struct lane *lane_for(struct copy_thread *p, uint64_t dev)
{
	for (unsigned i = 0; i < p->nlanes; i++)
		if (p->lanes[i]->dev == dev)
			return p->lanes[i];
	if (p->lanes[0]->dev == LANE_DEV_NONE) { /* only the caller's thread reads dev */
		p->lanes[0]->dev = dev;
		return p->lanes[0];
	}
	if (p->nlanes < p->max_lanes && lane_new(p, dev, &p->lanes[p->nlanes]) == 0)
		return p->lanes[p->nlanes++];
	return p->lanes[0];
}

void sweep__thread_dest_changed(struct copy_thread *p)
{
	for (unsigned i = 0; p && i < p->nlanes; i++) {
		struct lane *t = p->lanes[i];
		pthread_mutex_lock(&t->mu); /* the thread touches its cache only while it runs a job: none runs now */
		sweep__dest_cache_drop(&t->dc);
		pthread_mutex_unlock(&t->mu);
	}
}

uint64_t sweep__thread_write_requests(const struct copy_thread *p)
{
	uint64_t n = 0;

	for (unsigned i = 0; p && i < p->nlanes; i++) {
		struct lane *t = p->lanes[i];
		pthread_mutex_lock(&t->mu);
		n += t->requests;
		pthread_mutex_unlock(&t->mu);
	}
	return n;
}

unsigned sweep__thread_writers(const struct copy_thread *p)
{
	unsigned n = 0;

	for (unsigned i = 0; p && i < p->nlanes; i++)
		n += p->lanes[i]->dev != LANE_DEV_NONE;
	return n;
}

bool sweep__thread_takes(const struct sweep_copy *c, const struct qitem *q, const struct sweep_file *f)
{
	if (q->place || q->into) /* write-through to a file a symlink names, or into a FIFO or device: here */
		return false;
#if SWEEP_TEST_HOOKS
	/* Test builds only: every file the thread's, as if no clone or kernel copy could be made. */
	if (c->test_thread_all)
		return c->o.reflink != SWEEP_COPY_REFLINK_ALWAYS;
#endif
	/*
	 * A batch the plan found in the page cache is copied on the reader's
	 * thread: its data never waits for the disk, so the thread only adds
	 * the hand-off, and every byte read on one CPU was written from the
	 * other's cache. Warm /usr/share into /dev/shm: 1.17-1.28x cp -a's CPU
	 * through the thread, 1.03-1.05x without it, and no more wall time.
	 * Not where each copy waits for its disk (--fsync), nor where
	 * SWEEP_COPY_THREADS asked for the threads.
	 */
	if (c->batch_warm && !(c->o.flags & SWEEP_COPY_FSYNC) && !c->thread->asked)
		return false;
	if (c->o.reflink == SWEEP_COPY_REFLINK_NEVER)
		return true;
	/* AUTO: only once a clone between these two filesystems was refused, and across filesystems. */
	return c->o.reflink == SWEEP_COPY_REFLINK_AUTO && f->st.dev != q->dst_dev &&
	       copy_noclone_err(c, f->st.dev, q->dst_dev) != 0;
}

/* What the thread wrote since on_bytes was last told (lock held): the caller's thread tells it, unlocked. */
static uint64_t take_written(struct lane *t)
{
	uint64_t n = t->written - t->told;

	t->told = t->written;
	return n;
}

/* The caller's thread saw j fail (lock held): the thread takes it over when the file ends. */
static void main_fail(struct tjob *j, enum sweep_copy_op op, int err)
{
	if (!j->main_err) {
		j->main_op = op;
		j->main_err = err;
	}
}

/* Wait (lock held) until the thread made room or finished something; tell it there is work. */
static void wait_room(struct lane *t, bool bytes)
{
	if (t->idle)
		pthread_cond_signal(&t->work);
	t->waiting = true;
	t->waiting_bytes = bytes;
	pthread_cond_wait(&t->room, &t->mu);
	t->waiting = false;
}

/* Wake the thread (lock held) if it is idle and enough waits for it: true to signal once the lock is let go. */
static bool wake_due(const struct lane *t)
{
	return t->idle && (t->queued >= THREAD_WAKE_JOBS || t->bytes >= THREAD_WAKE_BYTES);
}

/* Hand j over (lock held): wait for room for it, then put it last, in read order. */
static void hand_over(struct sweep_copy *c, struct tjob *j)
{
	struct lane *t = j->lane;

	while (t->jobs >= THREAD_MAX_JOBS || (t->bytes > 0 && t->bytes + j->held > THREAD_BYTES)) {
		if (t->jobs >= THREAD_MAX_JOBS) {
			/*
			 * Settled in read order up to this lane's oldest job: it may
			 * wait for other lanes, whose jobs all ended (only j, not
			 * in a lane yet, is still being read), so they finish.
			 */
			uint64_t last = t->first->seq;
			pthread_mutex_unlock(&t->mu);
			reap(c, last, true);
			pthread_mutex_lock(&t->mu);
		} else {
			wait_room(t, true);
		}
	}
	t->jobs++;
	t->queued++;
	t->bytes += j->held;
	j->held = 0;
	j->handed = true;
	t->stop = sweep__copy_stopped(c) != 0;
	if (t->last)
		t->last->next = j;
	else
		t->first = j;
	t->last = j;
	if (!t->todo)
		t->todo = j;
}

struct tjob *sweep__thread_begin(struct sweep_copy *c, const struct qitem *q, uint64_t size, bool dense)
{
	struct tjob *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->lane = lane_for(c->thread, q->dst_dev);
	j->seq = c->thread->seq++;
	j->dense = dense;
	sweep__write_start(&j->f, q);
	j->f.size = size;
	j->f.how = SWEEP_COPY_HOW_DATA;
	return j; /* handed over when it ends, or once THREAD_WAKE_BYTES of it wait */
}

/* Add ch at the end of j's chunks (under the lane's lock once j is handed over). */
static void append_chunk(struct tjob *j, struct chunk *ch)
{
	if (j->tail)
		j->tail->next = ch;
	else
		j->head = ch;
	j->tail = ch;
}

void sweep__thread_data(struct sweep_copy *c, struct tjob *j, const void *buf, size_t len, uint64_t off)
{
	struct lane *t = j->lane;
	struct chunk *ch = len ? malloc(sizeof(*ch) + len) : NULL;

	if (!len)
		return;
	if (ch) {
		memcpy(ch->data, buf, len);
		ch->off = off;
		ch->len = len;
		ch->next = NULL;
	}
	if (!j->handed) { /* still the caller's thread's alone: no lock */
		if (!ch) {
			main_fail(j, SWEEP_COPY_OP_WRITE, -ENOMEM);
			return;
		}
		append_chunk(j, ch);
		j->held += len;
		if (j->held < THREAD_WAKE_BYTES)
			return;
	}
	pthread_mutex_lock(&t->mu);
	if (!j->handed) {
		hand_over(c, j);
	} else if (!ch) {
		main_fail(j, SWEEP_COPY_OP_WRITE, -ENOMEM);
	} else {
		while (t->bytes > 0 && t->bytes + len > THREAD_BYTES)
			wait_room(t, true);
		append_chunk(j, ch);
		t->bytes += len;
	}
	bool wake = t->idle && t->bytes >= THREAD_WAKE_BYTES;
	uint64_t told = take_written(t);
	pthread_mutex_unlock(&t->mu);
	if (wake)
		pthread_cond_signal(&t->work);
	sweep__report_bytes(c, told);
}

void sweep__thread_end(struct sweep_copy *c, struct tjob *j, const struct sweep_file *f, int status, uint64_t length)
{
	struct lane *t = j->lane;
	struct meta_blob *blob = NULL;
	int cap_err = 0;

	/* The source's xattrs and ACLs, read now: the thread holds no descriptor of it. */
	if (status >= 0 && (c->o.preserve & (SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL))) {
		struct meta_ref r = { .fd = f->fd };
		cap_err = sweep__meta_capture(&r, c->o.preserve, false, &blob);
	}
	pthread_mutex_lock(&t->mu);
	if (status < 0)
		main_fail(j, f->fd < 0 ? SWEEP_COPY_OP_OPEN_SRC : SWEEP_COPY_OP_READ, status);
	else if (cap_err < 0 && sweep__grow(&j->f.mfail, &j->f.capmfail, j->f.nmfail + 1, sizeof(*j->f.mfail), 4) == 0)
		j->f.mfail[j->f.nmfail++] = (struct meta_fail){ .op = SWEEP_COPY_META_XATTR, .err = cap_err };
	j->f.size = length;
	j->f.st = f->st;
	j->f.status = status;
	j->f.blob = blob;
	j->ended = true;
	if (!j->handed)
		hand_over(c, j);
	t->stop = sweep__copy_stopped(c) != 0;
	bool wake = wake_due(t);
	pthread_mutex_unlock(&t->mu);
	if (wake)
		pthread_cond_signal(&t->work);
}

static void job_free(struct tjob *j)
{
	for (struct chunk *ch = j->head, *next; ch; ch = next) {
		next = ch->next;
		free(ch);
	}
	sweep__write_free(&j->f);
	free(j);
}

/* The lane whose oldest job was read first (NULL: no job). Only the caller's thread changes first. */
static struct lane *oldest(const struct copy_thread *p)
{
	struct lane *o = NULL;

	for (unsigned i = 0; i < p->nlanes; i++)
		if (p->lanes[i]->first && (!o || p->lanes[i]->first->seq < o->first->seq))
			o = p->lanes[i];
	return o;
}

/* Settle the finished jobs read up to last (UINT64_MAX: all), in read order; with wait, wait for each. */
static void reap(struct sweep_copy *c, uint64_t last, bool wait)
{
	struct copy_thread *p = c->thread;

	for (;;) {
		struct lane *t = oldest(p);
		if (!t || t->first->seq > last)
			break;
		pthread_mutex_lock(&t->mu);
		t->stop = sweep__copy_stopped(c) != 0;
		struct tjob *j = t->first;
		if (!j->done) {
			if (wait)
				wait_room(t, false);
			pthread_mutex_unlock(&t->mu);
			if (!wait)
				break;
			continue;
		}
		t->first = j->next;
		if (!t->first)
			t->last = NULL;
		t->jobs--;
		__atomic_sub_fetch(&t->done, 1, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&p->done, 1, __ATOMIC_RELAXED);
		uint64_t told = take_written(t);
		pthread_mutex_unlock(&t->mu);
		sweep__report_bytes(c, told);
		sweep__settle_file(c, &j->f);
		job_free(j);
	}
	for (unsigned i = 0; i < p->nlanes; i++) {
		struct lane *t = p->lanes[i];
		pthread_mutex_lock(&t->mu);
		uint64_t told = take_written(t);
		pthread_mutex_unlock(&t->mu);
		sweep__report_bytes(c, told);
	}
}

void sweep__thread_reap(struct sweep_copy *c, bool all)
{
	struct copy_thread *p = c->thread;

	if (!p)
		return;
	if (all && c->job) {
		/* a file the reader began and will not end (the run stopped): the thread lets it go */
		struct lane *t = c->job->lane;
		pthread_mutex_lock(&t->mu);
		main_fail(c->job, SWEEP_COPY_OP_READ, -ECANCELED);
		c->job->ended = true;
		if (!c->job->handed)
			hand_over(c, c->job);
		if (t->idle)
			pthread_cond_signal(&t->work);
		pthread_mutex_unlock(&t->mu);
		c->job = NULL;
	}
	/* Without waiting, finished copies are settled a few at a time: each settling takes the lock. */
	if (!all && __atomic_load_n(&p->done, __ATOMIC_ACQUIRE) < THREAD_WAKE_JOBS)
		return;
	reap(c, UINT64_MAX, all);
}
