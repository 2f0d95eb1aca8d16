/* SPDX-License-Identifier: MIT */
/*
 * Directories read ahead of the walk on worker threads: the SSD class's
 * full queue for metadata (DESIGN §3b). Where positioning costs nothing,
 * what limits a cold walk is that it waits for one directory block and one
 * inode at a time; where everything is cached, that it runs on one CPU. So
 * the walk opens the next directories of its queue (a window of them) and
 * hands them to threads, each of which reads one whole with getdents64,
 * sorts it and stats its first entries; the walk then hands the entries out
 * itself, directory by directory, in the order it took them from the queue.
 *
 * What stays on the walk's thread: the queue, the directory nodes and their
 * reference counts, opening (checked against the listed identity, as
 * always), the callbacks, errors, the metadata engine. The threads touch
 * only their job's frame and descriptor, and read the walk's settings. So
 * callers see what they saw before, in an order that depends on the
 * window's size, not on timing.
 *
 * Only while the tree is cold: the walk loads the directories itself, in
 * turn, as long as what it did since the last one read nothing from the
 * disk (its thread's block input count, sweep__disk_reads: no clock). Where
 * everything is cached the threads only cost: a wake-up and a hand-back for
 * each directory (warm /usr/share, sweep-tar in the SSD class: 14k context
 * switches against 2-4k without the threads, 5-8% more CPU). The first
 * directory that reads the disk gives the rest of the walk to the threads,
 * which start then: a warm walk never starts them. SWEEP_WALK_THREADS (the
 * threads asked for by name) starts and uses them from the start.
 *
 * Not on a disk: there, concurrent directory reads would pull the head
 * between them; the HDD class keeps one C-SCAN pass with the metadata
 * engine's sweeps. Measured (doc/design.md, walk): forced into the HDD
 * class on a 1M-file xfs tree, the threads saved 22% of the wall time on a
 * fast disk and cost 4.5x the seeks and 7% more modeled HDD time.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "internal.h"
#include "walk_impl.h"

/* Entries a thread stats of each directory; the walk stats the rest as before, a batch at a time. */
#define AHEAD_STAT 1024u

/* Directories loaded by the threads, over the process (tests check the threads ran). */
static uint64_t loaded;

uint64_t sweep__walk_ahead_loaded(void)
{
	return __atomic_load_n(&loaded, __ATOMIC_RELAXED);
}

struct job {
	struct frame f; /* f.dir and f.fd while queued; the listing's memory stays with the slot */
	bool done;
	bool own; /* its device has no walk threads, or the tree is warm (alone): the walk loads it itself when it takes it */
	bool warm; /* own because the tree looked warm when it was submitted: its load is metered */
};

struct walk_ahead {
	const struct walk *w;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct job *jobs;        /* ring of window slots */
	size_t window;
	size_t head, n;          /* oldest slot; slots in use */
	size_t next, unclaimed;  /* next job for a thread, counted from the first (its slot: next % window); jobs no thread took yet */
	size_t first;            /* the oldest job in use, counted the same way (its slot is head) */
	bool quit;
	struct walk_scratch *scr; /* one per thread */
	unsigned nscr, scr_taken; /* scratches made; taken by threads as they start */
	pthread_t *tid;
	unsigned started;
	unsigned want;  /* threads to start */
	bool alone;     /* the tree looks warm: the walk loads every directory itself */
	bool stay;      /* alone for good: no thread could start */
	int64_t reads;  /* the walk thread's disk reads when last asked; INT64_MIN before the first submit */
};

static void *worker(void *arg)
{
	struct walk_ahead *a = arg;
	pthread_mutex_lock(&a->mu);
	struct walk_scratch *s = &a->scr[a->scr_taken++];
	for (;;) {
		while (!a->unclaimed && !a->quit)
			pthread_cond_wait(&a->work, &a->mu);
		if (a->quit)
			break; /* the walk stopped: what no thread took is dropped unread */
		/* The walk's own jobs are passed over: one the threads may take lies ahead (unclaimed). */
		struct job *j;
		do {
			j = &a->jobs[a->next % a->window];
			a->next++;
		} while (j->own);
		a->unclaimed--;
		pthread_mutex_unlock(&a->mu);
		j->f.fill_err = sweep__walk_frame_fill(a->w, &j->f, s, AHEAD_STAT);
		__atomic_fetch_add(&loaded, 1, __ATOMIC_RELAXED);
		pthread_mutex_lock(&a->mu);
		j->done = true;
		pthread_cond_broadcast(&a->done);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

static void drop(struct frame *f)
{
	if (f->fd >= 0)
		close(f->fd);
	sweep__walk_dnode_unref(f->dir);
	f->fd = -1;
	f->dir = NULL;
}

static void ahead_free(struct walk_ahead *a)
{
	pthread_mutex_lock(&a->mu);
	a->quit = true;
	pthread_cond_broadcast(&a->work);
	pthread_mutex_unlock(&a->mu);
	for (unsigned i = 0; i < a->started; i++)
		pthread_join(a->tid[i], NULL);
	for (size_t i = 0; a->jobs && i < a->window; i++) {
		drop(&a->jobs[i].f);
		sweep__walk_frame_free(&a->jobs[i].f);
	}
	for (unsigned i = 0; i < a->nscr; i++)
		sweep__walk_scratch_fini(&a->scr[i]);
	pthread_cond_destroy(&a->done);
	pthread_cond_destroy(&a->work);
	pthread_mutex_destroy(&a->mu);
	free(a->jobs);
	free(a->scr);
	free(a->tid);
	free(a);
}

/* The threads not yet started, each with its scratch; how many run. */
static unsigned start_threads(struct walk_ahead *a)
{
	/*
	 * Plain fstatat in the threads: they are the concurrency. io_uring would
	 * hand each statx to a kernel worker of its own (measured: cold sweep-du
	 * on the aged xfs image 1.22-1.36 s with io_uring in the threads, 1.08-1.16
	 * s without).
	 */
	while (a->nscr < a->want &&
	       sweep__walk_scratch_init(&a->scr[a->nscr], a->w, SWEEP_BACKEND_SYSCALL, AHEAD_STAT) == 0)
		a->nscr++;
	while (a->started < a->nscr && sweep__thread_start(&a->tid[a->started], worker, a) == 0)
		a->started++;
	return a->started;
}

/* The tree turned out cold: the next directories go to the threads, once they run; none could start, the walk's for good. */
static void go_threads(struct walk_ahead *a)
{
	if (start_threads(a) > 0)
		a->alone = false;
	else
		a->stay = true;
}

void sweep__walk_ahead_new(struct walk *w)
{
	w->ahead = NULL;
	if (!w->cscan)
		return; /* depth-first: the next directory is known only once this one is handed out */
	/* The roots' device profile (SWEEP_WALK_THREADS there too); a directory on a device without them is the walk's own. */
	unsigned n = w->prof.walk_threads;
	if (n < 2)
		return;
	/* Each slot holds a directory open: a quarter of the descriptors still free (a low limit). */
	size_t window = 2 * (size_t)n + 8, fds = sweep__nofile_free(4, (unsigned)window);
	/* Not two slots' worth (ulimit -n 8 to about 15): a directory read ahead holds one the caller's copies need. */
	if (fds < 2)
		return;
	struct walk_ahead *a = calloc(1, sizeof(*a));
	if (!a)
		return;
	a->w = w;
	a->window = window > fds ? fds : window;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->work, NULL);
	pthread_cond_init(&a->done, NULL);
	a->jobs = calloc(a->window, sizeof(*a->jobs));
	a->scr = calloc(n, sizeof(*a->scr));
	a->tid = calloc(n, sizeof(*a->tid));
	if (!a->jobs || !a->scr || !a->tid) {
		ahead_free(a);
		return; /* the walk goes on alone: only slower */
	}
	for (size_t i = 0; i < a->window; i++)
		a->jobs[i].f.fd = -1;
	a->want = n;
	a->alone = !(w->prof.env & SWEEP_PROFILE_ENV_WALK_THREADS);
	a->reads = INT64_MIN;
	/*
	 * Asked for by name: the threads from the start. Otherwise they start
	 * with the first load that reads the disk: a warm walk never pays
	 * for them (8 thread starts and their scratches were 5% of warm
	 * sweep-du's CPU in the SSD class).
	 */
	if (!a->alone && start_threads(a) < 2) {
		ahead_free(a); /* one thread is no better than the walk alone */
		return;
	}
	w->ahead = a;
}

void sweep__walk_ahead_free(struct walk *w)
{
	if (w->ahead)
		ahead_free(w->ahead);
	w->ahead = NULL;
}

bool sweep__walk_ahead_room(const struct walk_ahead *a)
{
	return a->n < a->window;
}

int sweep__walk_ahead_submit(struct walk_ahead *a, struct dnode *d, int fd, bool hint_files)
{
	if (a->n == a->window)
		return -ENOMEM;
	pthread_mutex_lock(&a->mu);
	struct job *j = &a->jobs[(a->head + a->n) % a->window];
	j->f.dir = d;
	j->f.fd = fd;
	j->f.hint_files = hint_files;
	j->f.read_err = j->f.fill_err = 0;
	j->done = false;
	/* On the walk's thread: where it stands before its first load (no count: the threads, as before). */
	if (a->alone && !a->stay && a->reads == INT64_MIN && (a->reads = sweep__disk_reads_sampled()) < 0)
		go_threads(a);
	/* A tree may span devices: one whose profile has no walk threads (a disk) is read in turn, by the walk. */
	j->own = d->fs && d->fs->profile.walk_threads == 0;
	j->warm = !j->own && a->alone;
	j->own = j->own || j->warm;
	a->n++;
	if (!j->own) {
		a->unclaimed++;
		pthread_cond_signal(&a->work);
	}
	pthread_mutex_unlock(&a->mu);
	return 0;
}

struct frame *sweep__walk_ahead_take(struct walk_ahead *a, struct walk_scratch *own)
{
	if (!a->n)
		return NULL;
	struct job *j = &a->jobs[a->head];
	if (j->own) {
		/* As the walk alone reads a directory: whole and sorted; its entries stat'ed as they are handed out. */
		if (!j->done)
			j->f.fill_err = sweep__walk_frame_fill(a->w, &j->f, own, 0);
		j->done = true;
		if (j->warm && a->alone && !a->stay) {
			/* Anything read from the disk since the last load (this one, the stats and reads in between): cold. */
			int64_t now = sweep__disk_reads_sampled();
			bool cold = now < 0 || now != a->reads;
			a->reads = now;
			if (cold)
				go_threads(a);
		}
		return &j->f;
	}
	pthread_mutex_lock(&a->mu);
	while (!j->done)
		pthread_cond_wait(&a->done, &a->mu);
	pthread_mutex_unlock(&a->mu);
	return &j->f;
}

void sweep__walk_ahead_put(struct walk_ahead *a)
{
	drop(&a->jobs[a->head].f);
	pthread_mutex_lock(&a->mu);
	a->head = (a->head + 1) % a->window;
	/* The walk's own job no thread passed over yet: the next one for a thread is after it. */
	if (a->next < ++a->first)
		a->next = a->first;
	a->n--;
	pthread_mutex_unlock(&a->mu);
}
