/* SPDX-License-Identifier: MIT */
/*
 * The connection (see wire.h): the hello, frames written under a lock
 * (compressed when agreed), and a reader thread.
 *
 * Why a reader thread: both sides write while the other may be writing
 * too (the sender streams data while the receiver sends requests and
 * its output lines), and a pipe or an ssh channel holds only so much. The
 * reader thread always drains the stream: text is printed at once, other
 * frames are queued. Only data frames (what the sender streams) are
 * bounded: the receiver's reader stops taking them when WIRE_QUEUE_DATA
 * bytes wait, which holds the sender back, while requests and the rest
 * are never held, so the sender's reader is never stopped and the
 * receiver can always write. No side waits on a peer that waits on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#if HAVE_ZSTD
#include <zstd.h>
#endif

#include "cli.h"
#include "wire.h"

#define WIRE_QUEUE_DATA (32u << 20)
#define READ_CHUNK (256u << 10)

struct wire {
	int in, out;
	int stop[2];     /* the reader thread leaves when stop[0] becomes readable */
	volatile sig_atomic_t *cancel;
	uint32_t peer_caps;
	/* the reader thread's and the queue, under mu */
	pthread_t reader;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct wire_frame *head, *tail;
	size_t qdata;    /* bytes of data frames waiting */
	int err;         /* why the stream ended: -EPIPE (closed), -EPROTO, -errno */
	bool said;       /* the error was reported */
	bool quit;       /* wire_free: the reader thread leaves */
	uint64_t in_bytes;
	void *dctx;
	/* writes, under wmu */
	pthread_mutex_t wmu;
	void *cctx;
	int level;
	unsigned char *zbuf, *cin; /* compressed; a payload in two pieces put together */
	size_t zcap;
	uint64_t out_bytes;
};

static bool is_data(uint8_t type)
{
	return type == W_FILE_BEGIN || type == W_DATA || type == W_FILE_END || type == W_FILE_FAIL;
}

void wire_print_text(int type, const unsigned char *p, size_t n)
{
	FILE *f = type == W_OUT ? stdout : stderr;
	char buf[4096];
	size_t k = 0;

	/* A peer's text may name any file: no escape sequence of its reaches the terminal. */
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = p[i];

		if ((ch < ' ' && ch != '\t' && ch != '\n' && ch != '\r') || ch == 0x7f)
			ch = '?';
		buf[k++] = (char)ch;
		if (k == sizeof(buf)) {
			fwrite(buf, 1, k, f);
			k = 0;
		}
	}
	fwrite(buf, 1, k, f);
	fflush(f);
}

int wire_new(int in, int out, volatile sig_atomic_t *cancel, struct wire **ret)
{
	struct wire *w = calloc(1, sizeof(*w));

	*ret = NULL;
	if (!w)
		return -ENOMEM;
	w->in = in;
	w->out = out;
	w->cancel = cancel;
	if (pipe2(w->stop, O_CLOEXEC) < 0) {
		free(w);
		return -errno;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	pthread_mutex_init(&w->wmu, NULL);
#if HAVE_ZSTD
	w->dctx = ZSTD_createDCtx();
	if (!w->dctx) {
		wire_free(w);
		return -ENOMEM;
	}
#endif
	*ret = w;
	return 0;
}

struct wire *wire_free(struct wire *w)
{
	if (!w)
		return NULL;
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		w->quit = true;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		(void)!write(w->stop[1], "x", 1);
		pthread_join(w->reader, NULL);
	}
	for (struct wire_frame *f = w->head, *next; f; f = next) {
		next = f->next;
		free(f);
	}
	if (w->in >= 0)
		close(w->in);
	if (w->out >= 0 && w->out != w->in)
		close(w->out);
	close(w->stop[0]);
	close(w->stop[1]);
#if HAVE_ZSTD
	ZSTD_freeDCtx(w->dctx);
	ZSTD_freeCCtx(w->cctx);
#endif
	free(w->zbuf);
	free(w->cin);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->wmu);
	free(w);
	return NULL;
}

uint32_t wire_peer_caps(const struct wire *w)
{
	return w->peer_caps;
}

void wire_counts(const struct wire *w, uint64_t *in, uint64_t *out)
{
	pthread_mutex_lock((pthread_mutex_t *)&w->mu);
	*in = w->in_bytes;
	pthread_mutex_unlock((pthread_mutex_t *)&w->mu);
	pthread_mutex_lock((pthread_mutex_t *)&w->wmu);
	*out = w->out_bytes;
	pthread_mutex_unlock((pthread_mutex_t *)&w->wmu);
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		ssize_t k = write(fd, s, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EPIPE ? -EPIPE : -errno;
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Read exactly n bytes (the hello, before the reader thread runs): the count read, or -errno. */
static ssize_t read_full(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, (char *)p + got, n - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

int wire_hello(struct wire *w, const char *peer)
{
	unsigned char hello[WIRE_HELLO_LEN], theirs[WIRE_HELLO_LEN];
	uint32_t caps = 0;
	char why[256];
	int r;

#if HAVE_ZSTD
	caps |= WIRE_CAP_ZSTD;
#endif
	memcpy(hello, WIRE_MAGIC, 8);
	for (int i = 0; i < 4; i++) {
		hello[8 + i] = (unsigned char)(WIRE_VERSION >> (8 * i));
		hello[12 + i] = (unsigned char)(caps >> (8 * i));
	}
	r = write_all(w->out, hello, sizeof(hello));
	ssize_t n = read_full(w->in, theirs, sizeof(theirs));
	if (n == 0 || (n < 0 && r < 0)) {
		cli_msg("connection unexpectedly closed (0 bytes received so far) [%s]", peer);
		return -EPIPE;
	}
	if (n < 0) {
		cli_error((int)n, "reading from the remote side [%s]", peer);
		return (int)n;
	}
	w->in_bytes += (uint64_t)n;
	if (wire_check_hello(theirs, (size_t)n, &w->peer_caps, why, sizeof(why)) < 0) {
		cli_msg("%s", why);
		return -EPROTO;
	}
	if (r < 0) {
		cli_error(r, "writing to the remote side [%s]", peer);
		return r;
	}
	w->out_bytes += sizeof(hello);
	return 0;
}

int wire_compress(struct wire *w, int level)
{
#if HAVE_ZSTD
	pthread_mutex_lock(&w->wmu);
	if (!w->cctx)
		w->cctx = ZSTD_createCCtx();
	w->level = level;
	size_t bound = ZSTD_compressBound(WIRE_MAX_PAYLOAD);
	if (w->cctx && w->zcap < bound) {
		unsigned char *z = realloc(w->zbuf, bound);

		if (z) {
			w->zbuf = z;
			w->zcap = bound;
		}
	}
	if (!w->cin)
		w->cin = malloc(WIRE_MAX_PAYLOAD);
	int r = w->cctx && w->cin && w->zcap >= bound ? 0 : -ENOMEM;
	pthread_mutex_unlock(&w->wmu);
	return r;
#else
	(void)w;
	(void)level;
	return -EOPNOTSUPP;
#endif
}

/* writev until done: 0 or -errno. */
static int writev_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t k = writev(fd, iov, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EPIPE ? -EPIPE : -errno;
		while (n > 0 && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

int wire_send2(struct wire *w, int type, const void *a, size_t an, const void *b, size_t bn)
{
	unsigned char hdr[WIRE_HDR_LEN];
	struct iovec iov[3] = { { hdr, sizeof(hdr) }, { (void *)a, an }, { (void *)b, bn } };
	size_t plen = an + bn;
	int r;

	if (plen > WIRE_MAX_PAYLOAD)
		return -EMSGSIZE;
	pthread_mutex_lock(&w->wmu);
#if HAVE_ZSTD
	/* Worth it past a few dozen bytes, and only when it shrinks (data often does not). */
	if (w->cctx && plen > 64) {
		const void *in = a;

		if (bn) {
			memcpy(w->cin, a, an);
			memcpy(w->cin + an, b, bn);
			in = w->cin;
		}
		size_t z = ZSTD_compressCCtx(w->cctx, w->zbuf, w->zcap, in, plen, w->level);

		if (!ZSTD_isError(z) && z < plen) {
			iov[1] = (struct iovec){ w->zbuf, z };
			iov[2].iov_len = 0;
			plen = z;
			type |= W_COMPRESSED;
		}
	}
#endif
	hdr[0] = (unsigned char)type;
	for (int i = 0; i < 4; i++)
		hdr[1 + i] = (unsigned char)(plen >> (8 * i));
	r = writev_all(w->out, iov, 3);
	if (r == 0)
		w->out_bytes += sizeof(hdr) + plen;
	pthread_mutex_unlock(&w->wmu);
	return r;
}

int wire_send(struct wire *w, int type, const void *p, size_t len)
{
	return wire_send2(w, type, p, len, NULL, 0);
}

int wire_send_buf(struct wire *w, int type, struct wbuf *b)
{
	return b->fail ? -ENOMEM : wire_send(w, type, b->p, b->len);
}

/* The reader thread ends the stream (lock held). */
static void stream_end(struct wire *w, int err)
{
	if (!w->err)
		w->err = err;
	pthread_cond_broadcast(&w->cv);
}

static void *reader_main(void *arg)
{
	struct wire *w = arg;
	unsigned char *buf = malloc(WIRE_MAX_PAYLOAD * 2 + 2 * READ_CHUNK);
	size_t have = 0, cap = WIRE_MAX_PAYLOAD * 2 + 2 * READ_CHUNK;
	const char *why = NULL;
	int err = 0;

	if (!buf)
		err = -ENOMEM;
	while (!err) {
		struct pollfd pf[2] = { { .fd = w->in, .events = POLLIN }, { .fd = w->stop[0], .events = POLLIN } };

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (pf[1].revents)
			break;
		ssize_t n = read(w->in, buf + have, cap - have);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EPIPE;
			break;
		}
		have += (size_t)n;
		pthread_mutex_lock(&w->mu);
		w->in_bytes += (uint64_t)n;
		pthread_mutex_unlock(&w->mu);
		size_t off = 0;
		for (;;) {
			struct wire_frame *f;
			size_t used;
			int r = wire_take_frame(w->dctx, buf + off, have - off, &used, &f, &why);

			if (r < 0) {
				err = r;
				break;
			}
			if (r == 0)
				break;
			off += used;
			if (f->type == W_OUT || f->type == W_ERR) {
				wire_print_text(f->type, f->data, f->len);
				free(f);
				continue;
			}
			pthread_mutex_lock(&w->mu);
			/* data waits for room (the sender is held back); nothing else ever does */
			while (is_data(f->type) && w->qdata >= WIRE_QUEUE_DATA && !w->quit)
				pthread_cond_wait(&w->cv, &w->mu);
			if (w->quit) {
				pthread_mutex_unlock(&w->mu);
				free(f);
				goto out;
			}
			if (is_data(f->type))
				w->qdata += f->len;
			if (w->tail)
				w->tail->next = f;
			else
				w->head = f;
			w->tail = f;
			pthread_cond_broadcast(&w->cv);
			pthread_mutex_unlock(&w->mu);
		}
		/* what is left of a frame goes to the front (a frame fits: the buffer holds two) */
		memmove(buf, buf + off, have - off);
		have -= off;
	}
out:
	free(buf);
	pthread_mutex_lock(&w->mu);
	if (err == -EPROTO && why && !w->said) {
		cli_msg("protocol error: %s", why);
		w->said = true;
	}
	stream_end(w, err ? err : -EPIPE);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int wire_start(struct wire *w)
{
	int r = cli_thread_start(&w->reader, reader_main, w);
	if (r == 0)
		w->started = true;
	return r;
}

int wire_recv(struct wire *w, struct wire_frame **ret)
{
	int r = 0;

	*ret = NULL;
	pthread_mutex_lock(&w->mu);
	while (!w->head && !w->err) {
		if (w->cancel && *w->cancel) {
			r = -ECANCELED;
			break;
		}
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w->cv, &w->mu, &ts);
	}
	if (!r && w->head) {
		struct wire_frame *f = w->head;

		w->head = f->next;
		if (!w->head)
			w->tail = NULL;
		if (is_data(f->type))
			w->qdata -= f->len;
		f->next = NULL;
		*ret = f;
		pthread_cond_broadcast(&w->cv);
	} else if (!r) {
		r = w->err;
	}
	pthread_mutex_unlock(&w->mu);
	return r;
}
