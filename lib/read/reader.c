/* SPDX-License-Identifier: MIT */
/*
 * reader: the delivery core.
 *
 * Requests go out in plan order: opens for a window of files ahead of the
 * one being delivered, then reads, file after file in ascending offsets,
 * bounded by the queue depth and by the bytes the buffer ring can hold.
 * Completions come back in any order; the caller still sees each file
 * whole and in plan order. Because buffers are handed out in submission
 * order and given back in delivery order, which is the same order, the
 * buffers form a FIFO ring: no allocator, no fragmentation, and the request
 * at the head of the FIFO always has its buffer, so the run cannot stall.
 *
 * On a disk (HDD class, io_uring), a thread of the reader's first asks for
 * the data of the files ahead with WILLNEED in physical order, extent by
 * extent across a large group of files (reader_prefetch.c): a fragmented
 * file, or files whose extents interleave on an aged filesystem, would
 * otherwise send the head back and forth at every extent while the reads go
 * file by file. The reads wait for the thread, then find the page cache
 * filled (or filling) in delivery order.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reader_impl.h"
#include "reader_prefetch.h"

#define DEFAULT_BUFFER (1u << 20)
#define RING_ALIGN 64u
#define SYNC_WINDOW 8u       /* files opened (and read ahead with WILLNEED) ahead of the one delivered */
#define MAX_WINDOW 256u
#define STARVED_FDS 4u /* fewer free than this: no ring for the run (setup) */
#define REAP_BATCH 64u
#define WARM_RING (1u << 20) /* the ring for a batch found in the page cache (setup) */

#define READ_FLAGS \
	(SWEEP_READ_SPARSE | SWEEP_READ_NOATIME | SWEEP_READ_REGISTERED | SWEEP_READ_TO_EOF | SWEEP_READ_BY_DEVICE)

SWEEP_EXPORT int sweep_reader_new(const struct sweep_reader_opts *opts, struct sweep_reader **ret)
{
	struct sweep_reader_opts o;
	struct sweep_reader *r;
	int rc;

	if (!ret)
		return -EINVAL;
	rc = sweep__opts_copy(&o, sizeof(o), opts, offsetof(struct sweep_reader_opts, backend) + sizeof(o.backend));
	if (rc < 0)
		return rc;
	if ((unsigned)o.backend > SWEEP_BACKEND_SYSCALL || sweep__flags_check(o.flags, READ_FLAGS) < 0)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->opts = o;
	r->backend = sweep_backend_resolve(r->opts.backend);
#if HAVE_LIBURING
	r->be = r->backend == SWEEP_BACKEND_URING ? &sweep__rd_uring : &sweep__rd_sync;
#else
	r->backend = SWEEP_BACKEND_SYSCALL;
	r->be = &sweep__rd_sync;
#endif
	*ret = r;
	return 0;
}

SWEEP_EXPORT struct sweep_reader *sweep_reader_free(struct sweep_reader *r)
{
	free(r);
	return NULL;
}

SWEEP_EXPORT enum sweep_backend sweep_reader_backend(const struct sweep_reader *r)
{
	return r ? r->backend : SWEEP_BACKEND_AUTO;
}

SWEEP_EXPORT int sweep_reader_stats(const struct sweep_reader *r, struct sweep_read_stats *ret)
{
	struct sweep_read_stats s;
	int rc = r ? sweep__out_begin(&s, sizeof(s), ret, sizeof(size_t)) : -EINVAL;

	if (rc < 0)
		return rc;
	s = r->stats;
	sweep__out_put(ret, &s, sizeof(s));
	return 0;
}

void sweep__reader_set_shuffle(struct sweep_reader *r, unsigned seed)
{
	r->shuffle_seed = seed;
}

void sweep__reader_set_prefetch_log(struct sweep_reader *r,
				    void (*fn)(void *ctx, const struct sweep_file *f, uint64_t phys, uint64_t off,
					       uint64_t len),
				    void *ctx, uint64_t group_bytes)
{
	r->pf_log = fn;
	r->pf_log_ctx = ctx;
	r->pf_group = group_bytes;
}

size_t sweep__reader_peak_buffered(const struct sweep_reader *r)
{
	return r->peak_held;
}

void sweep__reader_copy_hooks(struct sweep_reader *to, const struct sweep_reader *from)
{
	to->shuffle_seed = from->shuffle_seed;
	to->pf_log = from->pf_log;
	to->pf_log_ctx = from->pf_log_ctx;
	to->pf_group = from->pf_group;
}

void sweep__reader_add_stats(struct sweep_reader *to, const struct sweep_reader *from)
{
	to->stats.files += from->stats.files;
	to->stats.bytes += from->stats.bytes;
	to->stats.failed += from->stats.failed;
	to->stats.changed += from->stats.changed;
	to->stats.requests += from->stats.requests;
	if (from->peak_held > to->peak_held)
		to->peak_held = from->peak_held;
}

/* ---- the buffer ring: allocated in submission order, freed in delivery order ---- */

struct run {
	struct sweep_reader *r;
	const struct sweep_plan *p;
	const struct sweep_read_ops *ops;
	void *ctx;
	const struct sweep__read_part *part; /* the plan positions [first, n) this run reads, and how */
	size_t first;
	size_t n;
	struct rd_slot *slots;
	size_t next_open, cursor, head;
	struct rd_req *fifo_head, *fifo_tail; /* reads in submission order */
	struct rd_req *free_reqs;
	unsigned reads_inflight, opens_inflight;
	size_t nalloc; /* buffers handed out and not yet given back */
	unsigned rand_state;
	bool prefetch;       /* physical-order prefetch on (HDD class, io_uring) */
	struct sweep__pf *pf; /* its thread (NULL: could not start; the reads go alone) */
	bool pf_blocked;     /* submit_reads stopped at what the thread has asked for */
	char *tail;          /* SWEEP_READ_TO_EOF: a buffer for reads past the planned data (read_tail) */
	/*
	 * Out of descriptors (EMFILE/ENFILE on an open): at most open_cap files
	 * of the window at once from then on; a file whose open was refused is
	 * deferred and opened again when its turn comes. head_alone: the file
	 * at the head is opened before any other (see back_off). The cap grows
	 * back by one each time as many files as it allows were done without
	 * a refusal (cap_credit), as descriptors held elsewhere may come back.
	 */
	unsigned open_cap, cap_credit;
	uint64_t ended; /* files ended so far (when a descriptor last came back) */
	size_t ndeferred;
	bool head_alone, need_reset;
};

static char *ring_alloc(struct run *u, size_t len, size_t *ret_end)
{
	struct sweep_reader *r = u->r;
	size_t at;

	len = (len + RING_ALIGN - 1) & ~(size_t)(RING_ALIGN - 1);
	if (u->nalloc == 0)
		r->ring_head = r->ring_tail = 0;
	if (u->nalloc > 0 && r->ring_tail == r->ring_head)
		return NULL; /* full */
	if (r->ring_tail >= r->ring_head) {
		if (r->ring_tail + len <= r->ring_size)
			at = r->ring_tail;
		else if (len <= r->ring_head)
			at = 0; /* wrap; the tail end stays unused until the head passes it */
		else
			return NULL;
	} else {
		if (r->ring_tail + len > r->ring_head)
			return NULL;
		at = r->ring_tail;
	}
	r->ring_tail = at + len;
	*ret_end = r->ring_tail;
	u->nalloc++;
	r->held += len;
	if (r->held > r->peak_held)
		r->peak_held = r->held;
	return r->ring + at;
}

static void ring_free(struct run *u, const struct rd_req *q)
{
	u->r->ring_head = q->ring_end;
	u->r->held -= (q->len + RING_ALIGN - 1) & ~(size_t)(RING_ALIGN - 1);
	u->nalloc--;
}

/* Undo the last ring_alloc() when its request could not be queued. */
static void ring_unalloc(struct run *u, size_t len)
{
	u->r->held -= (len + RING_ALIGN - 1) & ~(size_t)(RING_ALIGN - 1);
	u->nalloc--;
}

static struct rd_req *req_get(struct run *u)
{
	struct rd_req *q = u->free_reqs;

	if (q)
		u->free_reqs = q->next;
	else
		q = malloc(sizeof(*q));
	if (q)
		memset(q, 0, sizeof(*q));
	return q;
}

static void req_put(struct run *u, struct rd_req *q)
{
	q->next = u->free_reqs;
	u->free_reqs = q;
}

static struct rd_slot *slot_of(struct run *u, size_t index)
{
	return &u->slots[index % u->r->window];
}

static int open_flags(const struct rd_slot *s)
{
	/* O_NONBLOCK so that a file replaced by a FIFO cannot hang the run (fstat then says it is not regular). */
	return O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (s->noatime ? O_NOATIME : 0);
}

/*
 * O_NONBLOCK off a regular file, once one of its reads ended in EAGAIN.
 * Until then it stays: on a regular file it changes nothing for pread, nor
 * for io_uring on a filesystem that reads without blocking where it can
 * (FMODE_NOWAIT: ext4, xfs, btrfs; io_uring then retries the read in the
 * background as for any file; on 6.18 a FUSE file read whole too). Where
 * a filesystem cannot, io_uring ends the read in EAGAIN instead, once,
 * and the read is asked again without it. An F_SETFL a file was one call in every 15 of
 * sweep-cp -a's, warm. The status flags F_SETFL sets are known from
 * open_flags() (O_NOATIME only when the open kept it): no F_GETFL first,
 * unless that fails (a descriptor opened otherwise).
 */
static void clear_nonblock(struct rd_slot *s)
{
	s->nonblock = false;
	if (fcntl(s->f.fd, F_SETFL, s->noatime ? O_NOATIME : 0) != 0) {
		int fl = fcntl(s->f.fd, F_GETFL);
		if (fl >= 0 && (fl & O_NONBLOCK))
			(void)fcntl(s->f.fd, F_SETFL, fl & ~O_NONBLOCK);
	}
}

static int submit_open(struct run *u, size_t index)
{
	struct rd_slot *s = slot_of(u, index);
	int rc;

	memset(s, 0, sizeof(*s));
	s->index = index;
	s->state = SLOT_OPENING;
	s->f.entry = sweep_plan_entry(u->p, index);
	s->f.fd = -1;
	s->noatime = !!(u->r->opts.flags & SWEEP_READ_NOATIME);
	clock_gettime(CLOCK_REALTIME, &s->open_at);
	s->open_req.kind = RD_OPEN;
	s->open_req.slot = s;
	rc = u->r->be->submit_open(u->r, &s->open_req, open_flags(s));
	if (rc < 0)
		return rc;
	u->opens_inflight++;
	return 0;
}

static int submit_read(struct run *u, struct rd_req *q)
{
	int rc = u->r->be->submit_read(u->r, q);

	if (rc < 0)
		return rc;
	u->reads_inflight++;
	u->r->stats.requests++;
	return 0;
}

/* Queue reads in plan order while the depth and the ring allow. */
static int submit_reads(struct run *u)
{
	struct sweep_reader *r = u->r;

	while (u->reads_inflight < r->depth && u->cursor < u->next_open) {
		struct rd_slot *s = slot_of(u, u->cursor);
		const struct sweep_extent *reg;
		uint64_t end, len;
		struct rd_req *q;
		size_t ring_end;
		char *buf;
		int rc;

		if (s->state == SLOT_OPENING || s->state == SLOT_DEFERRED)
			break; /* reads go out in plan order: none for a later file before this one's */
		if (s->state == SLOT_OPEN && s->after_begin && !s->begun)
			break; /* its begin may need none of them (a clone): asked at the head */
		if (s->state != SLOT_OPEN || s->sub_done || s->map_i >= s->nmap) {
			s->sub_done = true;
			u->cursor++;
			continue;
		}
		reg = &s->map[s->map_i];
		end = reg->logical + reg->length;
		uint64_t reg_end = end;
		if (s->sub_off < reg->logical)
			s->sub_off = reg->logical;
		if (s->sub_off >= end) {
			s->map_i++;
			continue;
		}
		if (u->pf) {
			/* Not past what was prefetched: the device gets these bytes in physical order first. */
			uint64_t upto;
			if (!sweep__pf_allows(u->pf, s->index, s->sub_off, &upto, false)) {
				u->pf_blocked = true;
				break;
			}
			if (end > upto)
				end = upto;
		}
		len = end - s->sub_off;
		if (len > r->buffer_size)
			len = r->buffer_size;
		/* Read to the end: the last planned read asks for a byte more, so a short one there finds the end. */
		bool probe = (r->opts.flags & SWEEP_READ_TO_EOF) && s->map_i + 1 == s->nmap &&
			     s->sub_off + len == reg_end && len < r->buffer_size;
		uint64_t want = len + probe;
		buf = ring_alloc(u, want, &ring_end);
		if (!buf)
			break; /* wait for delivery to give buffers back */
		q = req_get(u);
		if (!q) {
			ring_unalloc(u, want);
			return -ENOMEM;
		}
		q->kind = RD_READ;
		q->slot = s;
		q->buf = buf;
		q->off = s->sub_off;
		q->len = (uint32_t)want;
		q->probe = probe;
		q->ring_end = ring_end;
		rc = submit_read(u, q);
		if (rc < 0) {
			ring_unalloc(u, want);
			req_put(u, q);
			return rc;
		}
		if (u->fifo_tail)
			u->fifo_tail->next = q;
		else
			u->fifo_head = q;
		u->fifo_tail = q;
		s->reads_queued++;
		s->sub_off += len;
	}
	return 0;
}

/*
 * An open that failed because something on the way is no longer what was
 * planned: a symlink (ELOOP: RESOLVE_NO_SYMLINKS, O_NOFOLLOW), a file where
 * a directory was (ENOTDIR), or an escape from the root (EXDEV).
 */
static int open_status(int res)
{
	return res == -ELOOP || res == -ENOTDIR || res == -EXDEV ? -ESTALE : res;
}

void (*sweep__reader_test_opened)(const struct sweep_plan_entry *e);
int (*sweep__reader_test_open_res)(size_t index, int res);
int (*sweep__reader_test_read_res)(int fd, int res);

/* a is later than b. */
static bool ts_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

static void opened(struct run *u, struct rd_slot *s, int fd)
{
	const struct sweep_plan_entry *e = s->f.entry;
	struct stat raw;
	struct timespec now;

	s->f.fd = fd;
	if (sweep__reader_test_opened)
		sweep__reader_test_opened(e);
	if (fstat(fd, &raw) < 0) {
		s->err = -errno;
		goto fail;
	}
	sweep_stat_from_stat(&s->f.st, &raw);
	/*
	 * The identity check, before a single byte is read: what stands at the
	 * path now must be the regular file that was planned (same device and
	 * inode). Anything else -- a file swapped in since, a FIFO, a
	 * directory -- is reported as -ESTALE and nothing of it is delivered.
	 */
	if (!sweep__plan_entry_is(e, &s->f.st)) {
		s->err = -ESTALE;
		goto fail;
	}
	/*
	 * The file changed after its open was asked for and before this fstat,
	 * which st and the end of the read are compared with. An io_uring open
	 * is taken here when it is reaped, which may be well after it was made:
	 * meanwhile the file may have been renamed away and rewritten in place,
	 * and a state caught between two of those writes would then pass every
	 * later check (seen: a copy holding a new header and two thirds of its
	 * body). So it is reported as changed. Only a change time up to now: a
	 * file stamped ahead of the clock (one that was set back) did not change
	 * during the run. The kernel stamps some changes from a clock that lags
	 * by up to a tick, so a change right after the open may go unseen here;
	 * the comparison at the end still sees every change after this fstat.
	 */
	if (clock_gettime(CLOCK_REALTIME, &now) == 0)
		s->moved_open = ts_after(&raw.st_ctim, &s->open_at) && !ts_after(&raw.st_ctim, &now);
	s->nonblock = true; /* regular: O_NONBLOCK goes if a read meets it (clear_nonblock) */
	/*
	 * A file whose blocks cover its size is taken to have no holes, as GNU
	 * cp and tar take it (cp's infer_scantype, tar's ST_IS_SPARSE): no
	 * SEEK_DATA/SEEK_HOLE, two calls a file fewer for small files.
	 */
	if ((u->r->opts.flags & SWEEP_READ_SPARSE) && s->f.st.blocks * 512 < s->f.st.size) {
		int rc = sweep_data_map(fd, s->f.st.size, &s->map, &s->nmap);
		if (rc < 0) {
			s->err = rc;
			goto fail;
		}
		s->f.data_map = s->map;
		s->f.data_map_len = s->nmap;
	} else if (s->f.st.size > 0) {
		s->whole.logical = 0;
		s->whole.physical = SWEEP_NO_PHYS;
		s->whole.length = s->f.st.size;
		s->whole.flags = SWEEP_EXTENT_LAST;
		s->map = &s->whole;
		s->nmap = 1;
		if (u->r->opts.flags & SWEEP_READ_SPARSE) { /* all data, one region */
			s->f.data_map = s->map;
			s->f.data_map_len = s->nmap;
		}
	}
	s->after_begin = u->ops->read_after_begin && u->ops->read_after_begin(&s->f, u->ctx);
	s->state = SLOT_OPEN;
	if (u->r->be->opened)
		u->r->be->opened(u->r, s);
	return;
fail:
	close(fd);
	s->f.fd = -1;
	s->state = SLOT_FAILED;
}

/* Files of the window that hold (or are about to hold) a descriptor, s aside. */
static unsigned live_besides(struct run *u, const struct rd_slot *s)
{
	unsigned n = 0;

	for (size_t i = u->head; i < u->next_open; i++) {
		const struct rd_slot *o = slot_of(u, i);
		if (o != s && (o->state == SLOT_OPENING || o->state == SLOT_OPEN))
			n++;
	}
	return n;
}

/*
 * The open of s was refused for want of descriptors. Where files of this
 * window hold some, s waits for them: a file after the head is deferred
 * until the head reaches it; the head itself cannot wait for files after
 * it (they are delivered after it), so those are closed and opened again
 * (back_off). The window is capped at what did fit. Where the window holds
 * none, the descriptors are someone else's: the open fails (false).
 */
static bool out_of_fds(struct run *u, struct rd_slot *s)
{
	unsigned live = live_besides(u, s);

	if (live == 0)
		return false;
	s->state = SLOT_DEFERRED;
	s->deferred_at = u->ended;
	u->ndeferred++;
	if (s->index == u->head) {
		u->need_reset = true;
		live /= 2; /* they did not leave room for one more */
	}
	if (u->open_cap > live)
		u->open_cap = live ? live : 1;
	u->cap_credit = 0;
	return true;
}

static int handle(struct run *u, struct rd_req *q)
{
	struct rd_slot *s = q->slot;
	int res = q->res;

	if (q->kind == RD_OPEN) {
		u->opens_inflight--;
		if (res == -EPERM && s->noatime) {
			/* O_NOATIME needs ownership or CAP_FOWNER: open again without it. */
			s->noatime = false;
			if (u->r->be->submit_open(u->r, q, open_flags(s)) == 0) {
				u->opens_inflight++;
				return 0;
			}
		}
		if (res == -ENAMETOOLONG) /* one component at a time */
			res = sweep__plan_open_entry(u->p, s->f.entry, open_flags(s));
		if (sweep__reader_test_open_res) {
			int t = sweep__reader_test_open_res(s->index, res);
			if (t != res && res >= 0)
				close(res);
			res = t;
		}
		if ((res == -EMFILE || res == -ENFILE) && u->pf && live_besides(u, s) == 0) {
			/*
			 * The window holds none, so the prefetch thread's files
			 * may be what fills the table (it opens files of its
			 * group as it maps and asks for them). Order is worth
			 * less than the file: the thread goes, and the open is
			 * tried once more; refused again, it fails (below).
			 */
			sweep__pf_stop(u->pf);
			u->pf = NULL;
			return submit_open(u, s->index);
		}
		if ((res == -EMFILE || res == -ENFILE) && out_of_fds(u, s))
			return 0;
		if (s->index == u->head)
			u->head_alone = false;
		if (res >= 0) {
			opened(u, s, res);
		} else {
			s->err = open_status(res);
			s->state = SLOT_FAILED;
		}
		return 0;
	}
	u->reads_inflight--;
	if (sweep__reader_test_read_res)
		res = sweep__reader_test_read_res(s->f.fd, res);
	if (q->probe && res >= 0 && q->got + (uint32_t)res + 1 == q->len) {
		/* All that was planned, and not the byte past it: the file ends where planned (no read more). */
		q->got += (uint32_t)res;
		s->sub_done = true;
		q->complete = true;
		return 0;
	}
	if (res == -EAGAIN && s->nonblock)
		clear_nonblock(s);
	if (res == -EINTR || res == -EAGAIN || (res > 0 && q->got + (uint32_t)res < q->len)) {
		if (res > 0)
			q->got += (uint32_t)res;
		/* Short or interrupted: ask for the rest into the same buffer. */
		return submit_read(u, q);
	}
	if (res < 0) {
		q->err = res;
		s->sub_done = true;
	} else {
		q->got += (uint32_t)res;
		if (q->got < q->len)
			s->sub_done = true; /* EOF early: the file shrank, read no further */
	}
	q->complete = true;
	return 0;
}

static void release(struct rd_slot *s)
{
	if (s->f.fd >= 0)
		close(s->f.fd);
	if (s->map != &s->whole)
		free(s->map);
	s->map = NULL;
	s->f.fd = -1;
	s->state = SLOT_EMPTY;
}

static bool same_ctime(const struct sweep_stat *a, int64_t sec, uint32_t nsec)
{
	return a->ctime_sec == sec && a->ctime_nsec == nsec;
}

/*
 * SWEEP_READ_TO_EOF: the planned data was all there and no read found the
 * end yet (the file is empty, ends in a hole, grew, or its last read filled
 * its buffer): read on from the end of the data, or of st.size, until a read
 * finds nothing, delivering what it finds. Plain reads: most files never
 * get here, and those that do are at their end.
 */
static int read_tail(struct run *u, struct rd_slot *s)
{
	uint64_t off = s->data_end > s->f.st.size ? s->data_end : s->f.st.size;

	if (!u->tail && !(u->tail = malloc(u->r->buffer_size))) {
		s->err = -ENOMEM;
		return 0;
	}
	for (;;) {
		ssize_t n = pread(s->f.fd, u->tail, u->r->buffer_size, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && s->nonblock) {
			clear_nonblock(s);
			continue;
		}
		if (n < 0) {
			s->err = -errno;
			return 0;
		}
		if (n == 0)
			break;
		int rc = u->ops->data(&s->f, off, u->tail, (size_t)n, u->ctx);
		u->r->stats.bytes += (uint64_t)n;
		s->delivered += (uint64_t)n;
		off += (uint64_t)n;
		s->data_end = off;
		if (rc < 0)
			return rc;
	}
	s->eof = true;
	s->eof_at = off;
	return 0;
}

/* What end() hears about a file that was opened and read; s->f.length is set too. */
static int final_status(const struct run *u, struct rd_slot *s)
{
	const struct sweep_plan_entry *e = s->f.entry;
	const struct sweep_stat *st = &s->f.st;
	bool to_eof = u->r->opts.flags & SWEEP_READ_TO_EOF;
	struct stat raw;
	struct sweep_stat now;

	s->f.length = s->eof ? s->eof_at : st->size;
	if (s->err)
		return s->err;
	if (!s->skip) {
		if (s->eof && !to_eof)
			return SWEEP_READ_SHRANK;
		if (fstat(s->f.fd, &raw) == 0) {
			sweep_stat_from_stat(&now, &raw);
			/* shrunk below where reading found the end: what is left is what it holds */
			if (now.size < st->size && now.size < s->f.length)
				s->f.length = now.size;
			if (now.size > st->size)
				return SWEEP_READ_GREW;
			if (now.size < st->size)
				return SWEEP_READ_SHRANK;
			if (!same_ctime(&now, st->ctime_sec, st->ctime_nsec))
				return SWEEP_READ_CHANGED;
		}
	}
	if (s->moved_open)
		return SWEEP_READ_CHANGED;
	/* Planned without a stat: nothing from then to compare with. */
	if (e->flags & SWEEP__PLAN_UNSTATED)
		return 0;
	/*
	 * Between planning and opening (another file never gets here: opened()
	 * refused it), only the size: the caller gets st and the data from the
	 * file as it is at the open, so a change of its metadata before then
	 * (a chmod, another name linked or unlinked: the ctime moves) leaves
	 * nothing inconsistent, and tar, which stats right before it reads,
	 * would not see it either.
	 */
	if (st->size < e->size)
		return SWEEP_READ_SHRANK;
	if (st->size > e->size)
		return SWEEP_READ_GREW;
	return 0;
}

static int end_file(struct run *u, struct rd_slot *s, int status)
{
	struct sweep_read_stats *st = &u->r->stats;
	int rc;

	st->files++;
	if (status < 0)
		st->failed++;
	else if (status > 0)
		st->changed++;
	rc = u->ops->end ? u->ops->end(&s->f, status, u->ctx) : 0;
	release(s);
	u->head++;
	u->ended++;
	if (u->open_cap < u->r->window && ++u->cap_credit >= u->open_cap) {
		u->open_cap++;
		u->cap_credit = 0;
	}
	if (u->cursor < u->head)
		u->cursor = u->head; /* a failed or skipped file can end before the cursor reached it */
	return rc < 0 ? rc : 0;
}

/* Hand over everything that is ready at the head of the plan. *progress says whether anything moved. */
static int deliver(struct run *u, bool *progress)
{
	while (u->head < u->n) {
		struct rd_slot *s = slot_of(u, u->head);
		int rc;

		if (u->head >= u->next_open || s->state == SLOT_OPENING || s->state == SLOT_DEFERRED)
			return 0; /* not opened yet (the window moves on in the main loop) */
		if (s->state == SLOT_FAILED) {
			*progress = true;
			rc = end_file(u, s, s->err ? s->err : -EIO);
			if (rc < 0)
				return rc;
			continue;
		}
		if (!s->begun) {
			s->begun = true;
			*progress = true;
			rc = u->ops->begin ? u->ops->begin(&s->f, u->ctx) : 0;
			if (rc < 0)
				return rc;
			if (rc == SWEEP_READ_SKIP)
				s->skip = s->sub_done = true;
		}
		while (u->fifo_head && u->fifo_head->slot == s) {
			struct rd_req *q = u->fifo_head;

			if (!q->complete)
				return 0;
			if (!s->skip && !s->eof && !s->err) {
				if (q->err) {
					s->err = q->err;
				} else {
					if (q->got > 0) {
						rc = u->ops->data(&s->f, q->off, q->buf, q->got, u->ctx);
						u->r->stats.bytes += q->got;
						s->delivered += q->got;
						s->data_end = q->off + q->got;
						if (rc < 0)
							return rc;
					}
					if (q->got < q->len) {
						s->eof = true;
						s->eof_at = q->off + q->got;
					}
				}
			}
			u->fifo_head = q->next;
			if (!u->fifo_head)
				u->fifo_tail = NULL;
			ring_free(u, q);
			req_put(u, q);
			s->reads_queued--;
			*progress = true;
		}
		if (!s->sub_done || s->reads_queued)
			return 0; /* more of this file still to be submitted */
		*progress = true;
		if ((u->r->opts.flags & SWEEP_READ_TO_EOF) && !s->skip && !s->err && !s->eof && (rc = read_tail(u, s)) < 0)
			return rc;
		rc = end_file(u, s, final_status(u, s));
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void shuffle(struct run *u, struct rd_req **v, int n)
{
	for (int i = n - 1; i > 0; i--) {
		u->rand_state = u->rand_state * 1103515245u + 12345u;
		int j = (int)((u->rand_state >> 8) % (unsigned)(i + 1));
		struct rd_req *t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

/* Stop early: wait for what is in flight (the kernel may still write into the ring), close what opened. */
static void drain(struct run *u)
{
	struct rd_req *batch[REAP_BATCH];

	while (u->reads_inflight + u->opens_inflight > 0) {
		int got = u->r->be->reap(u->r, batch, REAP_BATCH, true);
		if (got <= 0)
			break;
		for (int i = 0; i < got; i++) {
			if (batch[i]->kind == RD_OPEN) {
				u->opens_inflight--;
				if (batch[i]->res >= 0)
					close(batch[i]->res);
			} else {
				u->reads_inflight--;
			}
		}
	}
	for (size_t i = u->head; i < u->next_open; i++)
		release(slot_of(u, i));
}

/*
 * The head's open was refused for want of descriptors while files after it
 * held some (out_of_fds). Nothing of those was delivered (the head comes
 * first), so they are let go: every request in flight is waited for, the
 * files after the head are closed and their reads forgotten, and the head is
 * opened again alone before the others, which are opened again in turn.
 */
static int back_off(struct run *u)
{
	struct rd_req *batch[REAP_BATCH];

	u->need_reset = false;
	while (u->reads_inflight + u->opens_inflight > 0) {
		int got = u->r->be->reap(u->r, batch, REAP_BATCH, true);
		if (got < 0)
			return got;
		for (int i = 0; i < got; i++) {
			struct rd_req *q = batch[i];
			if (q->kind == RD_READ) {
				u->reads_inflight--;
				continue;
			}
			u->opens_inflight--;
			if (q->res >= 0)
				close(q->res);
			q->slot->state = SLOT_DEFERRED;
			q->slot->deferred_at = u->ended;
			u->ndeferred++;
		}
	}
	for (size_t i = u->head + 1; i < u->next_open; i++) {
		struct rd_slot *o = slot_of(u, i);
		if (o->state == SLOT_OPEN) {
			release(o);
			o->state = SLOT_DEFERRED;
			o->deferred_at = u->ended;
			u->ndeferred++;
		}
		o->reads_queued = 0;
	}
	while (u->fifo_head) {
		struct rd_req *q = u->fifo_head;
		u->fifo_head = q->next;
		req_put(u, q);
	}
	u->fifo_tail = NULL;
	u->nalloc = 0;
	u->r->held = 0;
	u->cursor = u->head;
	u->head_alone = true;
	return 0;
}

/*
 * Open deferred files again, in plan order within the cap: the head at
 * once, any other once a file has ended since it was refused (a descriptor
 * came back; before that it would only be refused again).
 */
static int reopen_deferred(struct run *u)
{
	size_t end = u->head + u->open_cap;

	if (end > u->next_open)
		end = u->next_open;
	for (size_t i = u->head; i < end && u->ndeferred; i++) {
		struct rd_slot *s = slot_of(u, i);
		if (s->state != SLOT_DEFERRED)
			continue;
		if (i != u->head && (u->head_alone || s->deferred_at == u->ended))
			break; /* plan order: none after it either */
		int rc = submit_open(u, i);
		if (rc < 0)
			return rc;
		u->ndeferred--;
	}
	return 0;
}

/* The ring size of the last run set up, in any reader of the process (for tests). */
static size_t last_ring;

size_t sweep__reader_last_ring(void)
{
	return __atomic_load_n(&last_ring, __ATOMIC_RELAXED);
}

static int setup(struct run *u)
{
	struct sweep_reader *r = u->r;
	struct sweep_profile prof;
	const struct sweep_profile *pp = sweep__plan_profile(u->p, sweep_plan_entry(u->p, u->first)->dev);
	unsigned members = u->part->members > 1 ? u->part->members : 1;
	unsigned share = u->part->share > 1 ? u->part->share : 1;
	int rc;

	/*
	 * The profile of the first file's device (the plan keeps each
	 * device's): its queue depth and ring, and whether data is asked for
	 * ahead in physical order. With the synchronous backend, one pread at
	 * a time: its read-ahead is WILLNEED on the next files, a few ahead.
	 */
	if (pp)
		prof = *pp;
	else
		sweep__profile_unknown(&prof);
	/*
	 * Hardly a descriptor free (GNU tar's suite runs at ulimit -n 10, the
	 * walk and the caller holding the rest): a ring and the prefetch
	 * thread would take the ones the files need. Plain reads for this run.
	 */
	bool sync = r->backend == SWEEP_BACKEND_SYSCALL;
	if (!sync && sweep__nofile_free(1, STARVED_FDS) < STARVED_FDS) {
		sync = true;
		r->be = &sweep__rd_sync;
	}
	/*
	 * A striped or mirrored set answers with all its disks at once: as
	 * many requests in flight as each of them takes, and the ring to hold
	 * them (DESIGN §3c).
	 */
	unsigned depth = sync ? 1 : prof.queue_depth * members;
	size_t ring_max = prof.ring_bytes * members;
	/*
	 * A batch the plan found in the page cache (SWEEP_PLAN_CACHE_CHECK)
	 * has nothing to ask the disk for: warm /usr/share, sweep-tar's CPU
	 * 1.01x -> 0.95x GNU tar's without the fadvise and FIEMAP of every
	 * file.
	 */
	u->prefetch = prof.prefetch && !sync && !sweep__plan_cached(u->p);
	/*
	 * A batch whose data is in the page cache (sweep__plan_warm) is read
	 * through a small ring: each read is then written on by the caller
	 * while it is still in the CPU's caches, instead of after up to the
	 * whole ring (16-64 MiB) read ahead of it, out of the caches by then.
	 * Warm /usr/share, sweep-tar to a pipe, CPU against GNU tar's: 1.01x
	 * -> 0.98x (HDD class), 1.14x -> 0.98x (SSD class); the kernel's copy
	 * into the pipe was most of the difference
	 * (bench/results/2026-11-27-warm). Cold, the profile's ring.
	 */
	if (sweep__plan_warm(u->p) && ring_max > WARM_RING)
		ring_max = WARM_RING;
	r->depth = r->opts.queue_depth ? r->opts.queue_depth : depth;
	r->buffer_size = r->opts.buffer_size ? r->opts.buffer_size : DEFAULT_BUFFER;
	if (r->buffer_size > UINT32_MAX / 2)
		r->buffer_size = UINT32_MAX / 2;
	r->ring_size = r->opts.max_buffered;
	if (!r->ring_size) {
		r->ring_size = (size_t)r->depth * r->buffer_size;
		if (r->ring_size > ring_max)
			r->ring_size = ring_max;
	}
	if (r->ring_size < RING_ALIGN)
		r->ring_size = RING_ALIGN;
	r->ring_size &= ~(size_t)(RING_ALIGN - 1);
	if (r->buffer_size > r->ring_size)
		r->buffer_size = r->ring_size;
	if (sync)
		r->window = SYNC_WINDOW;
	else
		r->window = r->depth * 2 < 16 ? 16 : r->depth * 2 > MAX_WINDOW ? MAX_WINDOW : r->depth * 2;
	/*
	 * Each file of the window holds a descriptor: a third of those still
	 * free, so that the caller (the copy engine's writer) and the walk
	 * around it fit under a low limit too (out_of_fds backs off where they
	 * do not).
	 */
	/* Readers of several disks at once share that third. */
	unsigned fds = sweep__nofile_free(3 * share, MAX_WINDOW);
	if (r->window > fds)
		r->window = fds < 2 ? 2 : fds;
	if (r->window > u->n - u->first)
		r->window = (unsigned)(u->n - u->first);
	u->open_cap = r->window;
	__atomic_store_n(&last_ring, r->ring_size, __ATOMIC_RELAXED);
	if (posix_memalign((void **)&r->ring, 4096, r->ring_size))
		return -ENOMEM;
	u->slots = calloc(r->window, sizeof(*u->slots));
	if (!u->slots)
		return -ENOMEM;
	u->rand_state = r->shuffle_seed;
	r->held = 0;
	if (u->prefetch) {
		struct sweep__pf_opts po = { .plan = u->p, .first = u->first, .n = u->n, .share = share,
					      .group_max = r->pf_group,
					      .noatime = !!(r->opts.flags & SWEEP_READ_NOATIME),
					      .log = r->pf_log, .log_ctx = r->pf_log_ctx,
					      .after_begin = u->ops->read_after_begin, .ctx = u->ctx };
		if (sweep__pf_start(&po, &u->pf) < 0)
			u->pf = NULL; /* no thread: plan order, only slower */
	}
	rc = r->be->start(r);
	if (rc < 0 && r->be != &sweep__rd_sync) {
		/* No ring for this run (out of descriptors or locked memory): plain reads, as without io_uring. */
		r->be = &sweep__rd_sync;
		rc = r->be->start(r);
	}
	return rc;
}

static void teardown(struct run *u)
{
	struct sweep_reader *r = u->r;

	sweep__pf_stop(u->pf);
	u->pf = NULL;
	if (r->ring && r->be_state)
		r->be->stop(r);
	while (u->free_reqs) {
		struct rd_req *q = u->free_reqs;
		u->free_reqs = q->next;
		free(q);
	}
	while (u->fifo_head) {
		struct rd_req *q = u->fifo_head;
		u->fifo_head = q->next;
		free(q);
	}
	free(u->slots);
	free(u->tail);
	free(r->ring);
	r->ring = NULL;
#if HAVE_LIBURING
	/* A run that fell back to plain reads (setup) leaves the next one its own try. */
	r->be = r->backend == SWEEP_BACKEND_URING ? &sweep__rd_uring : &sweep__rd_sync;
#endif
}

/*
 * About to wait for the device: tell the caller of a part when that falls
 * between two files (the head not begun), where it may let another
 * disk's reader deliver meanwhile (reader_multi.c).
 */
static void idle(struct run *u)
{
	if (u->part->idle && u->head < u->n && !(u->head < u->next_open && slot_of(u, u->head)->begun))
		u->part->idle(u->part->idle_arg);
}

static int run_loop(struct run *u)
{
	struct sweep_reader *r = u->r;
	struct rd_req *batch[REAP_BATCH];

	for (;;) {
		bool progress = false;
		int rc, got;

		if (u->need_reset && (rc = back_off(u)) < 0)
			return rc;
		if ((rc = reopen_deferred(u)) < 0)
			return rc;
		while (!u->head_alone && u->next_open < u->n && u->next_open < u->head + u->open_cap) {
			rc = submit_open(u, u->next_open);
			if (rc < 0)
				return rc;
			u->next_open++;
		}
		u->pf_blocked = false;
		rc = submit_reads(u);
		if (rc < 0)
			return rc;
		rc = r->be->flush(r);
		if (rc < 0)
			return rc;
		rc = deliver(u, &progress);
		if (rc < 0)
			return rc;
		if (u->pf)
			sweep__pf_delivered(u->pf, u->head);
		if (u->head == u->n)
			return 0;
		if (progress)
			continue; /* delivery freed room: submit more before waiting */
		idle(u);
		if (u->reads_inflight + u->opens_inflight == 0) {
			uint64_t upto;
			if (!u->pf_blocked)
				return -EIO; /* nothing can complete: an internal accounting error */
			/* All delivered that may be: wait for the thread to ask for more. */
			struct rd_slot *s = slot_of(u, u->cursor);
			(void)sweep__pf_allows(u->pf, u->cursor, s->sub_off, &upto, true);
			continue;
		}
		got = r->be->reap(r, batch, REAP_BATCH, true);
		if (got < 0)
			return got;
		if (r->shuffle_seed)
			shuffle(u, batch, got);
		for (int i = 0; i < got; i++) {
			rc = handle(u, batch[i]);
			if (rc < 0)
				return rc;
		}
	}
}

int sweep__reader_run_part(struct sweep_reader *r, const struct sweep_plan *p, const struct sweep__read_part *part,
			   const struct sweep_read_ops *ops, void *ctx)
{
	struct run u;
	int rc;

	memset(&u, 0, sizeof(u));
	u.r = r;
	u.p = p;
	r->plan = p;
	u.ops = ops;
	u.ctx = ctx;
	u.part = part;
	u.n = part->end < sweep_plan_count(p) ? part->end : sweep_plan_count(p);
	u.first = part->first;
	if (u.first >= u.n)
		return 0;
	u.head = u.next_open = u.cursor = u.first;
	rc = setup(&u);
	if (rc == 0) {
		rc = run_loop(&u);
		if (rc < 0)
			drain(&u);
	}
	teardown(&u);
	return rc;
}

SWEEP_EXPORT int sweep_reader_run(struct sweep_reader *r, const struct sweep_plan *p,
				  const struct sweep_read_ops *ops, void *ctx)
{
	struct sweep_read_ops o;

	if (!r || !p || sweep__opts_copy(&o, sizeof(o), ops, offsetof(struct sweep_read_ops, data) + sizeof(o.data)) < 0 ||
	    !ops || !o.data)
		return -EINVAL;
	const struct sweep__plan_group *g;
	size_t ng = sweep__plan_groups(p, &g);
	if (ng == 0)
		return 0;
	/* Independent disks at once, each file still whole (reader_multi.c). */
	if (ng > 1 && (r->opts.flags & SWEEP_READ_BY_DEVICE) && !sweep__by_device_env_off())
		return sweep__reader_run_groups(r, p, g, ng, &o, ctx);
	/* One after another, in plan order: as deep a queue as the widest set needs. */
	struct sweep__read_part whole = { .first = 0, .end = sweep_plan_count(p), .members = 1 };
	if (r->stats.devices < 1)
		r->stats.devices = 1;
	for (size_t i = 0; i < ng; i++)
		if (g[i].members > whole.members)
			whole.members = g[i].members;
	return sweep__reader_run_part(r, p, &whole, &o, ctx);
}
