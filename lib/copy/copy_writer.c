/* SPDX-License-Identifier: MIT */
/*
 * writer: destination writes through io_uring or pwrite (see writer.h).
 */
#include "copy_writer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#if HAVE_LIBURING
#include <liburing.h>
#endif

#define DEFAULT_DEPTH 8

struct slot {
	char *buf;
	size_t cap, len;
	uint64_t off, tag;
	int fd;
};

struct writer {
	struct writer_opts o;
	enum sweep_backend backend;
	struct writer_stats stats;
	unsigned depth;
	struct slot *slots;
	unsigned *free_slots; /* stack of idle slot indexes */
	unsigned nfree;
	unsigned unsubmitted; /* SQEs prepared but not yet submitted */
	int dead;             /* the ring failed: -errno, every later write is synchronous */
#if HAVE_LIBURING
	struct io_uring ring;
#endif
};

int sweep__writer_pwrite_full(int fd, const char *buf, size_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENOSPC;
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int sync_write(struct writer *w, int fd, const void *buf, size_t len, uint64_t off)
{
	w->stats.requests++;
	w->stats.bytes += len;
	return sweep__writer_pwrite_full(fd, buf, len, off);
}

#if HAVE_LIBURING
/* One completion: a short write is finished with pwrite, a failure reported. */
static void complete(struct writer *w, const struct io_uring_cqe *cqe)
{
	unsigned i = (unsigned)io_uring_cqe_get_data64(cqe);
	struct slot *s = &w->slots[i];
	int rc = 0;

	if (cqe->res < 0 && cqe->res != -EAGAIN && cqe->res != -EINTR)
		rc = cqe->res;
	else if (cqe->res < 0 || (size_t)cqe->res < s->len) {
		size_t done = cqe->res < 0 ? 0 : (size_t)cqe->res;
		if (done == 0 && cqe->res == 0)
			rc = -ENOSPC;
		else
			rc = sync_write(w, s->fd, s->buf + done, s->len - done, s->off + done);
	}
	if (rc < 0 && w->o.on_fail)
		w->o.on_fail(s->tag, rc, w->o.ctx);
	w->free_slots[w->nfree++] = i;
}

/* Submit what is prepared; wait for at least `want` completions, reap all that are ready. */
static int reap(struct writer *w, unsigned want)
{
	struct io_uring_cqe *cqe;
	int rc = w->unsubmitted || want ? io_uring_submit_and_wait(&w->ring, want) : 0;
	if (rc < 0 && rc != -EINTR)
		return rc;
	if (rc >= 0)
		w->unsubmitted = 0;
	while (io_uring_peek_cqe(&w->ring, &cqe) == 0) {
		complete(w, cqe);
		io_uring_cqe_seen(&w->ring, cqe);
	}
	return 0;
}
#endif

int sweep__writer_new(const struct writer_opts *opts, struct writer **ret)
{
	if (!opts || opts->size < sizeof(size_t) + sizeof(enum sweep_backend) || !ret)
		return -EINVAL;
	struct writer *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	memcpy(&w->o, opts, opts->size < sizeof(w->o) ? opts->size : sizeof(w->o));
	w->depth = w->o.depth ? w->o.depth : DEFAULT_DEPTH;
	w->backend = sweep_backend_resolve(w->o.backend);
#if HAVE_LIBURING
	if (w->backend == SWEEP_BACKEND_URING) {
		w->slots = calloc(w->depth, sizeof(*w->slots));
		w->free_slots = calloc(w->depth, sizeof(*w->free_slots));
		if (!w->slots || !w->free_slots) {
			free(w->slots);
			free(w->free_slots);
			free(w);
			return -ENOMEM;
		}
		/* Refused (seccomp, io_uring_disabled, old kernel): write with pwrite. */
		if (io_uring_queue_init(w->depth, &w->ring, 0) < 0)
			w->backend = SWEEP_BACKEND_SYSCALL;
		for (unsigned i = 0; i < w->depth; i++)
			w->free_slots[w->nfree++] = w->depth - 1 - i;
	}
#else
	w->backend = SWEEP_BACKEND_SYSCALL;
#endif
	*ret = w;
	return 0;
}

struct writer *sweep__writer_free(struct writer *w)
{
	if (!w)
		return NULL;
#if HAVE_LIBURING
	if (w->backend == SWEEP_BACKEND_URING) {
		sweep__writer_drain(w);
		io_uring_queue_exit(&w->ring);
	}
#endif
	for (unsigned i = 0; w->slots && i < w->depth; i++)
		free(w->slots[i].buf);
	free(w->slots);
	free(w->free_slots);
	free(w);
	return NULL;
}

enum sweep_backend sweep__writer_backend(const struct writer *w)
{
	return w ? w->backend : SWEEP_BACKEND_SYSCALL;
}

int sweep__writer_write(struct writer *w, int fd, const void *buf, size_t len, uint64_t off, uint64_t tag)
{
	if (len == 0)
		return 0;
#if HAVE_LIBURING
	if (w->backend == SWEEP_BACKEND_URING && !w->dead) {
		while (w->nfree == 0) {
			int rc = reap(w, 1);
			if (rc < 0) {
				w->dead = rc;
				break;
			}
		}
		if (w->nfree > 0) {
			unsigned i = w->free_slots[--w->nfree];
			struct slot *s = &w->slots[i];
			if (s->cap < len) {
				char *nb = realloc(s->buf, len);
				if (!nb) {
					w->free_slots[w->nfree++] = i;
					return sync_write(w, fd, buf, len, off);
				}
				s->buf = nb;
				s->cap = len;
			}
			memcpy(s->buf, buf, len);
			s->len = len;
			s->off = off;
			s->tag = tag;
			s->fd = fd;
			/* The ring has depth entries and at most depth slots are busy: always room. */
			struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
			io_uring_prep_write(sqe, fd, s->buf, (unsigned)len, off);
			io_uring_sqe_set_data64(sqe, i);
			w->unsubmitted++;
			w->stats.requests++;
			w->stats.bytes += len;
			/* Submit now so the device works while the reader fetches the next piece. */
			int rc = reap(w, 0);
			if (rc < 0)
				w->dead = rc;
			return 0;
		}
	}
#endif
	return sync_write(w, fd, buf, len, off);
}

int sweep__writer_drain(struct writer *w)
{
#if HAVE_LIBURING
	while (w && w->backend == SWEEP_BACKEND_URING && w->nfree < w->depth) {
		int rc = reap(w, w->depth - w->nfree);
		if (rc < 0) {
			w->dead = rc;
			return rc;
		}
	}
#else
	(void)w;
#endif
	return 0;
}

void sweep__writer_stats(const struct writer *w, struct writer_stats *ret)
{
	if (w && ret)
		*ret = w->stats;
}
