/* SPDX-License-Identifier: MIT */
/*
 * copy: a writer thread. The reader's thread opens and reads the sources
 * in the planned order; each file it reads is handed to one writer thread
 * (a job), which creates the copy, writes the data, sets the metadata and
 * puts the copy in place (the same functions as on the caller's thread,
 * copy_data.c), while the reader goes on with the next files.
 *
 * Why: on a fast device copying to a fast destination, sweep-cp was
 * CPU-bound on one thread: half of its system time is the destination's
 * (pwrite, the temporary's open and link, rename, close, ftruncate, the
 * metadata calls). xcp, copying on several threads, took 0.81x its wall
 * time on the aged Linux ext4 image. One thread, not several: the copies
 * are still created, written and named in exactly the order the sources
 * are read, so the destination's layout (on a disk) and the reports (in
 * read order, on the caller's thread) are what they were without it.
 *
 * What the thread does not do: call the caller back (on_error, on_done,
 * on_bytes and hard links settle on the caller's thread when it collects
 * the finished jobs, in order), except on_step's WRITTEN step, which is the
 * point between writing a copy and naming it and so can only be the
 * thread's; on_step calls are serialised. Clones and kernel copies
 * (same filesystem) stay on the caller's thread: they are one call.
 *
 * Bounded: at most COPY_ASYNC_BYTES of data and a bounded number of files
 * (each holds a duplicate of its source descriptor, for the metadata) wait
 * for the thread; the reader waits when either is reached.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_internal.h"

#define COPY_ASYNC_BYTES (32u << 20)
#define COPY_ASYNC_MAX_JOBS 256
/* A file's data is handed over when it ends, or once this much of it waits (large files stream). */
#define COPY_ASYNC_WAKE_BYTES (256u << 10)

struct chunk {
	struct chunk *next;
	uint64_t off;
	size_t len;
	char data[];
};

struct deferred {
	enum sweep_copy_meta op;
	int err;
};

struct ajob {
	struct ajob *next;
	struct qitem *q;
	struct qactive act; /* the thread's, until done */
	bool dense;
	/* under the lock */
	struct chunk *head, *tail;
	bool ended, done;
	int srcfd;          /* the source, for its metadata (a duplicate, closed by the thread) */
	struct sweep_stat st; /* as read */
	int status;         /* the reader's status for the file */
	enum sweep_copy_op main_op; /* a failure the caller's thread saw (the thread takes it at the end) */
	int main_err;
	/* the thread's, read by the caller's thread once done */
	struct deferred *def;
	size_t ndef, capdef;
	int step_rc;
	char *show; /* sweep__dst_show() for on_step */
	size_t showcap;
};

struct copy_async {
	struct sweep_copy *c;
	pthread_t thread;
	pthread_mutex_t mu, step_mu;
	pthread_cond_t work, room;
	struct ajob *first, *last; /* every job not yet reaped, in read order */
	struct ajob *todo;         /* the first job the thread has not finished */
	size_t bytes;              /* data waiting for the thread */
	unsigned jobs, max_jobs;   /* jobs not yet reaped */
	bool idle, waiting, quit, stop;
	uint64_t written, told; /* data the thread wrote; what on_bytes has been told of */
	struct writer *writer; /* the thread's own (pwrite) */
	uint64_t requests;     /* its write requests, updated as jobs finish */
};

/* ---- the thread ---- */

static void write_failed(uint64_t tag, int err, void *ctx)
{
	(void)ctx;
	sweep__copy_item_fail(&((struct ajob *)(uintptr_t)tag)->act, SWEEP_COPY_OP_WRITE, err);
}

void sweep__copy_async_meta_failed(enum sweep_copy_meta op, int err, void *job)
{
	struct ajob *j = job;

	if (sweep__grow(&j->def, &j->capdef, j->ndef + 1, sizeof(*j->def), 4) == 0)
		j->def[j->ndef++] = (struct deferred){ .op = op, .err = err };
}

int sweep__copy_async_on_step(struct sweep_copy *c, enum sweep_copy_step step, const char *src, const char *dst,
		       uint64_t cookie)
{
	if (!c->o.on_step)
		return 0;
	if (c->async)
		pthread_mutex_lock(&c->async->step_mu);
	int rc = c->o.on_step(step, src, dst, cookie, c->o.ctx);
	if (c->async)
		pthread_mutex_unlock(&c->async->step_mu);
	return rc;
}

static bool run_stopped(struct copy_async *a)
{
	pthread_mutex_lock(&a->mu);
	bool stop = a->stop;
	pthread_mutex_unlock(&a->mu);
	return stop || (a->c->o.cancel && *a->c->o.cancel);
}

int sweep__copy_async_step(struct sweep_copy *c, struct ajob *j, enum sweep_copy_step step)
{
	/* sweep__dst_show()'s buffer is the caller's thread's: the job has its own. */
	const char *show = sweep__dst_show_in(c, j->q->dst, &j->show, &j->showcap);
	int rc = sweep__copy_async_on_step(c, step, j->q->src, show, j->q->cookie);
	if (rc < 0) {
		j->step_rc = rc;
		return rc;
	}
	return run_stopped(c->async) ? -ECANCELED : 0;
}

/* Make j's copy: create, write what comes, finish once it ended. Called without the lock. */
static void run_job(struct copy_async *a, struct ajob *j)
{
	struct sweep_copy *c = a->c;
	struct qactive *it = &j->act;

	int rc = sweep__copy_file_create(c, it);
	if (rc < 0) {
		sweep__copy_item_fail(it, SWEEP_COPY_OP_CREATE, rc);
	} else {
		struct stat tst;
		it->punch = sweep__copy_punch_size(c, j->dense, fstat(it->tmpfd, &tst) == 0 ? &tst : NULL);
	}
	pthread_mutex_lock(&a->mu);
	for (;;) {
		struct chunk *ch = j->head;
		if (!ch && j->ended) {
			if (j->main_err)
				sweep__copy_item_fail(it, j->main_op, j->main_err);
			break;
		}
		if (!ch) {
			a->idle = true;
			pthread_cond_wait(&a->work, &a->mu);
			a->idle = false;
			continue;
		}
		j->head = ch->next;
		if (!j->head)
			j->tail = NULL;
		pthread_mutex_unlock(&a->mu);
		if (!it->err && it->tmpfd >= 0) {
			rc = sweep__copy_file_write(a->writer, it, ch->data, ch->len, ch->off, (uint64_t)(uintptr_t)j);
			if (rc < 0)
				sweep__copy_item_fail(it, SWEEP_COPY_OP_WRITE, rc);
			else
				it->bytes += ch->len;
		}
		size_t len = ch->len;
		free(ch);
		pthread_mutex_lock(&a->mu);
		if (!it->err)
			a->written += len;
		a->bytes -= len;
		if (a->waiting)
			pthread_cond_signal(&a->room);
	}
	bool stop = a->stop;
	pthread_mutex_unlock(&a->mu);
	rc = sweep__writer_drain(a->writer);
	if (rc < 0)
		sweep__copy_item_fail(it, SWEEP_COPY_OP_WRITE, rc);
	if (!it->err && it->tmpfd >= 0 && !stop && !(c->o.cancel && *c->o.cancel))
		sweep__copy_file_finish(c, it, j->srcfd, &j->st);
	sweep__copy_drop_temp(it);
	if (j->srcfd >= 0)
		close(j->srcfd);
	j->srcfd = -1;
}

static void *thread_main(void *arg)
{
	struct copy_async *a = arg;

	pthread_setname_np(pthread_self(), "sweep-writer"); /* as top -H and perf show it */

	pthread_mutex_lock(&a->mu);
	for (;;) {
		struct ajob *j = a->todo;
		/* A job is taken once it has data or ended: a file still being opened has nothing to do. */
		if (!j || (!j->head && !j->ended)) {
			if (a->quit && !j)
				break;
			a->idle = true;
			pthread_cond_wait(&a->work, &a->mu);
			a->idle = false;
			continue;
		}
		pthread_mutex_unlock(&a->mu);
		run_job(a, j);
		struct writer_stats ws;
		sweep__writer_stats(a->writer, &ws);
		pthread_mutex_lock(&a->mu);
		a->requests = ws.requests;
		j->done = true;
		a->todo = j->next;
		if (a->waiting)
			pthread_cond_signal(&a->room);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* ---- the caller's thread ---- */

static void reap(struct sweep_copy *c, const struct ajob *until, bool wait);

/* SWEEP_COPY_THREADS=0 keeps every copy on the caller's thread (measuring, or a reason to). */
static bool wanted(const struct sweep_copy *c)
{
	const char *env = getenv("SWEEP_COPY_THREADS");
#if SWEEP_TEST_HOOKS
	/* Test builds only: SWEEP_TEST_COPY=thread|serial (meson -Dtest_copy) overrides the choice. */
	const char *t = getenv("SWEEP_TEST_COPY");
	if (t && !strcmp(t, "serial"))
		return false;
	if (t && !strcmp(t, "thread"))
		return true;
#endif
	if (env && *env)
		return strtoul(env, NULL, 10) > 0;
	if (c->o.writes == SWEEP_COPY_WRITES_URING) /* the caller chose io_uring writes, on this thread */
		return false;
	return sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

int sweep__copy_async_new(struct sweep_copy *c, struct copy_async **ret)
{
	*ret = NULL;
	if (!wanted(c))
		return 0;
#if SWEEP_TEST_HOOKS
	const char *t = getenv("SWEEP_TEST_COPY");
	c->test_thread_all = t && !strcmp(t, "thread");
#endif
	struct copy_async *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->c = c;
	/* Each waiting job holds a descriptor: a quarter of what the process may still open. */
	a->max_jobs = sweep__nofile_share(4, COPY_ASYNC_MAX_JOBS);
	if (a->max_jobs < 4)
		a->max_jobs = 4;
	struct writer_opts wo = { .size = sizeof(wo), .backend = SWEEP_BACKEND_SYSCALL, .on_fail = write_failed };
	int rc = sweep__writer_new(&wo, &a->writer);
	if (rc < 0) {
		free(a);
		return rc;
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_mutex_init(&a->step_mu, NULL);
	pthread_cond_init(&a->work, NULL);
	pthread_cond_init(&a->room, NULL);
	/* Signals stay the caller's: the thread starts with all of them blocked. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&a->thread, NULL, thread_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc < 0) {
		sweep__writer_free(a->writer);
		free(a);
		return 0; /* no thread: copies are made here, as without one */
	}
	*ret = a;
	return 0;
}

void sweep__copy_async_free(struct copy_async *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->quit = true;
	pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	sweep__writer_free(a->writer);
	pthread_mutex_destroy(&a->mu);
	pthread_mutex_destroy(&a->step_mu);
	pthread_cond_destroy(&a->work);
	pthread_cond_destroy(&a->room);
	free(a);
}

uint64_t sweep__copy_async_write_requests(const struct copy_async *a)
{
	if (!a)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&a->mu);
	uint64_t n = a->requests;
	pthread_mutex_unlock((pthread_mutex_t *)&a->mu);
	return n;
}

bool sweep__copy_async_takes(const struct sweep_copy *c, const struct qitem *q, const struct sweep_file *f)
{
	if (q->place) /* write-through to a file a symlink names: its directory by path, here */
		return false;
#if SWEEP_TEST_HOOKS
	/* Test builds only: every file the thread's, as if no clone or kernel copy could be made. */
	if (c->test_thread_all)
		return c->o.reflink != SWEEP_COPY_REFLINK_ALWAYS;
#endif
	if (c->o.reflink == SWEEP_COPY_REFLINK_NEVER)
		return true;
	/* AUTO: only once a clone between these two filesystems was refused, and across filesystems. */
	return c->o.reflink == SWEEP_COPY_REFLINK_AUTO && f->st.dev != c->dest_dev && c->noclone &&
	       c->noclone_src == f->st.dev && c->noclone_dst == c->dest_dev;
}

/* What the thread wrote since on_bytes was last told (lock held): the caller's thread tells it, unlocked. */
static uint64_t take_written(struct copy_async *a)
{
	uint64_t n = a->written - a->told;

	a->told = a->written;
	return n;
}

static void tell_bytes(struct sweep_copy *c, uint64_t n)
{
	if (n && c->o.on_bytes)
		c->o.on_bytes(n, c->o.ctx);
}

/* The caller's thread saw j fail (lock held): the thread takes it over when the file ends. */
static void main_fail(struct ajob *j, enum sweep_copy_op op, int err)
{
	if (!j->main_err) {
		j->main_op = op;
		j->main_err = err;
	}
}

/* Wait (lock held) until the thread made room or finished something; tell it there is work. */
static void wait_room(struct copy_async *a)
{
	if (a->idle)
		pthread_cond_signal(&a->work);
	a->waiting = true;
	pthread_cond_wait(&a->room, &a->mu);
	a->waiting = false;
}

struct ajob *sweep__copy_async_begin(struct sweep_copy *c, struct qitem *q, uint64_t size, bool dense)
{
	struct copy_async *a = c->async;

	struct ajob *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->q = q;
	j->dense = dense;
	j->srcfd = -1;
	sweep__copy_active_start(&j->act, q);
	j->act.job = j;
	j->act.size = size;
	j->act.how = SWEEP_COPY_HOW_DATA;
	pthread_mutex_lock(&a->mu);
	while (a->jobs >= a->max_jobs) {
		if (a->first->done) { /* reported now: the job goes */
			pthread_mutex_unlock(&a->mu);
			reap(c, NULL, false);
			pthread_mutex_lock(&a->mu);
		} else {
			wait_room(a);
		}
	}
	a->jobs++;
	a->stop = sweep__copy_stopped(c) != 0;
	if (a->last)
		a->last->next = j;
	else
		a->first = j;
	a->last = j;
	if (!a->todo)
		a->todo = j;
	pthread_mutex_unlock(&a->mu);
	return j;
}

void sweep__copy_async_data(struct sweep_copy *c, struct ajob *j, const void *buf, size_t len, uint64_t off)
{
	struct copy_async *a = c->async;
	struct chunk *ch = len ? malloc(sizeof(*ch) + len) : NULL;

	if (!len)
		return;
	pthread_mutex_lock(&a->mu);
	if (!ch) {
		main_fail(j, SWEEP_COPY_OP_WRITE, -ENOMEM);
		pthread_mutex_unlock(&a->mu);
		return;
	}
	while (a->bytes > 0 && a->bytes + len > COPY_ASYNC_BYTES)
		wait_room(a);
	pthread_mutex_unlock(&a->mu);
	memcpy(ch->data, buf, len);
	ch->off = off;
	ch->len = len;
	ch->next = NULL;
	pthread_mutex_lock(&a->mu);
	if (j->tail)
		j->tail->next = ch;
	else
		j->head = ch;
	j->tail = ch;
	a->bytes += len;
	if (a->idle && a->bytes >= COPY_ASYNC_WAKE_BYTES)
		pthread_cond_signal(&a->work);
	uint64_t told = take_written(a);
	pthread_mutex_unlock(&a->mu);
	tell_bytes(c, told);
}

void sweep__copy_async_end(struct sweep_copy *c, struct ajob *j, const struct sweep_file *f, int status)
{
	struct copy_async *a = c->async;
	struct stat now;
	uint64_t size = j->act.size;
	int srcfd = -1, dup_err = 0;

	/* The source shrank while it was read: the copy holds what was there. */
	if (status == SWEEP_READ_SHRANK && fstat(f->fd, &now) == 0 && (uint64_t)now.st_size < size)
		size = (uint64_t)now.st_size;
	if (status >= 0) {
		srcfd = fcntl(f->fd, F_DUPFD_CLOEXEC, 3);
		if (srcfd < 0 && errno == EMFILE) {
			/* out of descriptors: the jobs before this one hold some (this one is not ended: not it) */
			reap(c, j, true);
			srcfd = fcntl(f->fd, F_DUPFD_CLOEXEC, 3);
		}
		dup_err = srcfd < 0 ? -errno : 0;
	}
	pthread_mutex_lock(&a->mu);
	if (status < 0)
		main_fail(j, f->fd < 0 ? SWEEP_COPY_OP_OPEN_SRC : SWEEP_COPY_OP_READ, status);
	else if (dup_err)
		main_fail(j, SWEEP_COPY_OP_READ, dup_err);
	j->act.size = size;
	j->srcfd = srcfd;
	j->st = f->st;
	j->status = status;
	j->ended = true;
	a->stop = sweep__copy_stopped(c) != 0;
	if (a->idle)
		pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->mu);
}

static void job_free(struct ajob *j)
{
	for (struct chunk *ch = j->head, *next; ch; ch = next) {
		next = ch->next;
		free(ch);
	}
	free(j->def);
	free(j->show);
	free(j);
}

/* A finished job, on the caller's thread: its reports, in the order of the sync path. */
static void settle(struct sweep_copy *c, struct ajob *j)
{
	const struct qitem *q = j->q;

	c->stats.bytes += j->act.bytes;
	for (size_t i = 0; i < j->ndef; i++)
		sweep__copy_report_meta(c, j->def[i].op, j->def[i].err, q->src, sweep__dst_show(c, q->dst), q->cookie);
	if (j->step_rc < 0 && !c->stop)
		c->stop = j->step_rc;
	sweep__copy_file_settle(c, q, &j->act, j->status, &j->st);
}

/* Report the finished jobs before until (NULL: all), in order; with wait, wait for each. */
static void reap(struct sweep_copy *c, const struct ajob *until, bool wait)
{
	struct copy_async *a = c->async;

	pthread_mutex_lock(&a->mu);
	a->stop = sweep__copy_stopped(c) != 0;
	for (;;) {
		struct ajob *j = a->first;
		if (j == until || (!j->done && !wait))
			break;
		if (!j->done) {
			wait_room(a);
			continue;
		}
		a->first = j->next;
		if (!a->first)
			a->last = NULL;
		a->jobs--;
		uint64_t told = take_written(a);
		pthread_mutex_unlock(&a->mu);
		tell_bytes(c, told);
		settle(c, j);
		job_free(j);
		pthread_mutex_lock(&a->mu);
		a->stop = sweep__copy_stopped(c) != 0;
	}
	uint64_t told = take_written(a);
	pthread_mutex_unlock(&a->mu);
	tell_bytes(c, told);
}

void sweep__copy_async_reap(struct sweep_copy *c, bool all)
{
	struct copy_async *a = c->async;

	if (!a)
		return;
	if (all && c->ajob) {
		/* a file the reader began and will not end (the run stopped): the thread lets it go */
		pthread_mutex_lock(&a->mu);
		main_fail(c->ajob, SWEEP_COPY_OP_READ, -ECANCELED);
		c->ajob->ended = true;
		if (a->idle)
			pthread_cond_signal(&a->work);
		pthread_mutex_unlock(&a->mu);
		c->ajob = NULL;
	}
	reap(c, NULL, all);
}
