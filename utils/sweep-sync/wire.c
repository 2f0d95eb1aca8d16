/* SPDX-License-Identifier: MIT */
/*
 * The wire's format (see wire.h): payload builders and readers, frames and
 * the hello. Pure: no I/O (wire_conn.c has the connection), so that the
 * fuzz target (tests/remote/fuzz_wire.c) runs exactly this code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if HAVE_ZSTD
#include <zstd.h>
#endif

#include "wire.h"

/* ---- payloads ---- */

void wb_reset(struct wbuf *b)
{
	b->len = 0;
	b->fail = false;
}

void wb_free(struct wbuf *b)
{
	free(b->p);
	*b = (struct wbuf){ 0 };
}

void wb_bytes(struct wbuf *b, const void *p, size_t n)
{
	if (b->fail)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n)
			cap *= 2;
		unsigned char *q = realloc(b->p, cap);
		if (!q) {
			b->fail = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

void wb_u8(struct wbuf *b, uint8_t v)
{
	wb_bytes(b, &v, 1);
}

void wb_u32(struct wbuf *b, uint32_t v)
{
	unsigned char x[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24) };

	wb_bytes(b, x, 4);
}

void wb_u64(struct wbuf *b, uint64_t v)
{
	wb_u32(b, (uint32_t)v);
	wb_u32(b, (uint32_t)(v >> 32));
}

void wb_str(struct wbuf *b, const char *s, size_t n)
{
	if (n > UINT32_MAX) {
		b->fail = true;
		return;
	}
	wb_u32(b, (uint32_t)n);
	wb_bytes(b, s, n);
}

const void *wc_bytes(struct wcur *c, size_t n)
{
	if (c->bad || n > c->len - c->off) {
		c->bad = true;
		return NULL;
	}
	const void *p = c->p + c->off;
	c->off += n;
	return p;
}

uint8_t wc_u8(struct wcur *c)
{
	const unsigned char *p = wc_bytes(c, 1);

	return p ? p[0] : 0;
}

uint32_t wc_u32(struct wcur *c)
{
	const unsigned char *p = wc_bytes(c, 4);

	return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24 : 0;
}

uint64_t wc_u64(struct wcur *c)
{
	uint64_t lo = wc_u32(c);

	return lo | (uint64_t)wc_u32(c) << 32;
}

const char *wc_str(struct wcur *c, size_t *n)
{
	size_t len = wc_u32(c);
	const char *s = wc_bytes(c, len);

	if (s && memchr(s, 0, len)) {
		c->bad = true;
		s = NULL;
	}
	*n = s ? len : 0;
	return s;
}

char *wc_strdup(struct wcur *c, bool *oom)
{
	size_t n;
	const char *s = wc_str(c, &n);
	char *r;

	if (!s)
		return NULL;
	r = strndup(s, n);
	if (!r)
		*oom = true;
	return r;
}

void wb_stat(struct wbuf *b, const struct wire_stat *st)
{
	wb_u32(b, st->mode);
	wb_u32(b, st->uid);
	wb_u32(b, st->gid);
	wb_u32(b, st->nlink);
	wb_u64(b, st->size);
	wb_u64(b, st->blocks);
	wb_u64(b, st->rdev);
	wb_u64(b, st->dev);
	wb_u64(b, st->ino);
	wb_u64(b, (uint64_t)st->mtime_sec);
	wb_u32(b, st->mtime_nsec);
	wb_u64(b, (uint64_t)st->atime_sec);
	wb_u32(b, st->atime_nsec);
	wb_u64(b, (uint64_t)st->ctime_sec);
	wb_u32(b, st->ctime_nsec);
}

void wc_stat(struct wcur *c, struct wire_stat *st)
{
	st->mode = wc_u32(c);
	st->uid = wc_u32(c);
	st->gid = wc_u32(c);
	st->nlink = wc_u32(c);
	st->size = wc_u64(c);
	st->blocks = wc_u64(c);
	st->rdev = wc_u64(c);
	st->dev = wc_u64(c);
	st->ino = wc_u64(c);
	st->mtime_sec = (int64_t)wc_u64(c);
	st->mtime_nsec = wc_u32(c);
	st->atime_sec = (int64_t)wc_u64(c);
	st->atime_nsec = wc_u32(c);
	st->ctime_sec = (int64_t)wc_u64(c);
	st->ctime_nsec = wc_u32(c);
	/* a time's nanoseconds past a second would be refused by the kernel later: refused here */
	if (st->mtime_nsec >= 1000000000u || st->atime_nsec >= 1000000000u || st->ctime_nsec >= 1000000000u)
		c->bad = true;
}

/* ---- frames ---- */

int wire_take_frame(void *dctx, const unsigned char *buf, size_t len, size_t *used, struct wire_frame **ret,
		    const char **why)
{
	uint8_t type;
	uint32_t plen;
	struct wire_frame *f;

	*ret = NULL;
	*used = 0;
	if (len < WIRE_HDR_LEN)
		return 0;
	type = buf[0];
	plen = (uint32_t)buf[1] | (uint32_t)buf[2] << 8 | (uint32_t)buf[3] << 16 | (uint32_t)buf[4] << 24;
	if ((type & ~W_COMPRESSED) == 0 || (type & ~W_COMPRESSED) >= W_TYPE_MAX) {
		*why = "unknown message type";
		return -EPROTO;
	}
	/* a compressed payload is never larger than the bound of what it holds */
	if (plen > WIRE_MAX_PAYLOAD + ((type & W_COMPRESSED) ? WIRE_MAX_PAYLOAD / 64 + 1024 : 0)) {
		*why = "message too long";
		return -EPROTO;
	}
	if (len - WIRE_HDR_LEN < plen)
		return 0;
	if (type & W_COMPRESSED) {
#if HAVE_ZSTD
		if (!dctx) {
			*why = "a compressed message, and no compression was agreed";
			return -EPROTO;
		}
		f = malloc(sizeof(*f) + WIRE_MAX_PAYLOAD);
		if (!f)
			return -ENOMEM;
		size_t n = ZSTD_decompressDCtx(dctx, f->data, WIRE_MAX_PAYLOAD, buf + WIRE_HDR_LEN, plen);
		if (ZSTD_isError(n)) {
			free(f);
			*why = "a compressed message that does not decompress";
			return -EPROTO;
		}
		struct wire_frame *s = realloc(f, sizeof(*f) + n);
		f = s ? s : f;
		f->len = (uint32_t)n;
#else
		(void)dctx;
		*why = "a compressed message, and this sweep-sync was built without zstd";
		return -EPROTO;
#endif
	} else {
		f = malloc(sizeof(*f) + plen);
		if (!f)
			return -ENOMEM;
		memcpy(f->data, buf + WIRE_HDR_LEN, plen);
		f->len = plen;
	}
	f->type = type & ~W_COMPRESSED;
	f->next = NULL;
	*used = WIRE_HDR_LEN + plen;
	*ret = f;
	return 1;
}

int wire_check_hello(const unsigned char *hello, size_t len, uint32_t *caps, char *why, size_t whylen)
{
	size_t ml = strlen(WIRE_MAGIC);

	if (len < WIRE_HELLO_LEN || memcmp(hello, WIRE_MAGIC, ml)) {
		/* a shell's banner or another program: show what came, printable */
		char seen[40];
		size_t k = 0;

		for (size_t i = 0; i < len && k + 1 < sizeof(seen); i++)
			seen[k++] = hello[i] >= ' ' && hello[i] < 0x7f ? (char)hello[i] : hello[i] == '\n' ? ' ' : '?';
		seen[k] = 0;
		snprintf(why, whylen,
			 "the remote side did not answer as sweep-sync --server does (it sent \"%s\"); is its shell clean, and "
			 "is sweep-sync installed there (--rsync-path)?", seen);
		return -EPROTO;
	}
	uint32_t v = (uint32_t)hello[8] | (uint32_t)hello[9] << 8 | (uint32_t)hello[10] << 16 | (uint32_t)hello[11] << 24;
	if (v != WIRE_VERSION) {
		snprintf(why, whylen, "protocol version mismatch: this sweep-sync speaks version %u, the remote one %u",
			 WIRE_VERSION, v);
		return -EPROTO;
	}
	*caps = (uint32_t)hello[12] | (uint32_t)hello[13] << 8 | (uint32_t)hello[14] << 16 | (uint32_t)hello[15] << 24;
	return 0;
}

