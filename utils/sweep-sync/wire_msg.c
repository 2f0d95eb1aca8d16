/* SPDX-License-Identifier: MIT */
/*
 * The sender's messages, decoded and checked (see wire_msg.h). A W_FLIST
 * entry is:
 *   u8 WE_ENTRY, u32 root, str rel, wire_stat, str link ("" but for a
 *   symlink), u32 n, n x (str name, u32 len, len bytes of value)
 *   u8 WE_SKIP, u32 root, str rel, u8 is_dir
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wire_msg.h"

#define NAME_MAX_BYTES 255

bool wm_name_ok(const char *s, size_t n)
{
	size_t start = 0;

	if (n == 1 && s[0] == '.')
		return true;
	if (n == 0 || memchr(s, 0, n))
		return false;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '/')
			continue;
		size_t len = i - start;
		const char *c = s + start;

		/* no empty component (a leading '/': absolute; "//"; a trailing '/'), no "." or ".." */
		if (len == 0 || len > NAME_MAX_BYTES || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		start = i + 1;
	}
	return true;
}

bool wm_name_below(const char *rel, const char *rel0)
{
	size_t l = strlen(rel0);

	if (!strcmp(rel0, "."))
		return true;
	return !strncmp(rel, rel0, l) && (rel[l] == 0 || rel[l] == '/');
}

bool wm_type_ok(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR: case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		return (mode & ~(uint32_t)(S_IFMT | 07777)) == 0;
	default:
		return false;
	}
}

bool wm_errno_ok(int32_t err)
{
	return err < 0 && err >= -4095;
}

void wm_roots_free(struct wroots *r)
{
	for (uint32_t i = 0; r->v && i < r->n; i++) {
		free(r->v[i].src);
		free(r->v[i].rel0);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

int wm_roots(const unsigned char *p, size_t len, struct wroots *out)
{
	struct wcur c = { .p = p, .len = len };
	bool oom = false;

	memset(out, 0, sizeof(*out));
	out->nsrc = wc_u32(&c);
	out->flags = wc_u32(&c);
	out->missing = wc_u32(&c);
	uint32_t n = wc_u32(&c);
	/* each root takes at least 12 bytes: a count larger than the payload is a lie, not an allocation */
	if (c.bad || n > (len - c.off) / 12 || (out->flags & ~(uint32_t)(WR_RELATIVE | WR_FILES_FROM)))
		return -EPROTO;
	out->v = calloc(n ? n : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct wroot *r = &out->v[i];

		r->src = wc_strdup(&c, &oom);
		r->rel0 = wc_strdup(&c, &oom);
		r->flags = wc_u32(&c);
		out->n = i + 1;
		if (oom) {
			wm_roots_free(out);
			return -ENOMEM;
		}
		/* without -R (or --files-from) an operand's top entry is one name below DEST, or DEST itself */
		if (c.bad || !r->src || !r->rel0 || !wm_name_ok(r->rel0, strlen(r->rel0)) ||
		    (r->flags & ~(uint32_t)(WRR_FOLLOW | WRR_IMPLIED | WRR_LONE)) ||
		    (!(out->flags & (WR_RELATIVE | WR_FILES_FROM)) && strchr(r->rel0, '/'))) {
			wm_roots_free(out);
			return -EPROTO;
		}
	}
	if (!wc_done(&c)) {
		wm_roots_free(out);
		return -EPROTO;
	}
	return 0;
}

void wm_entry_free(struct wentry *e)
{
	free(e->rel);
	free(e->link);
	free(e->xa);
	memset(e, 0, sizeof(*e));
}

/* n attributes at c, into one allocation. */
static int take_xattrs(struct wcur *c, uint32_t n, struct xattr_set **ret)
{
	size_t start = c->off, bytes = 0;

	*ret = NULL;
	/* each takes 8 bytes at least */
	if (n > (c->len - c->off) / 8)
		return -EPROTO;
	if (!n)
		return 0;
	/* first pass: sizes and checks */
	for (uint32_t i = 0; i < n; i++) {
		size_t nl, vl;
		const char *name = wc_str(c, &nl);

		vl = wc_u32(c);
		if (!name || !wc_bytes(c, vl) || nl == 0 || nl > NAME_MAX_BYTES)
			return -EPROTO;
		bytes += nl + 1 + vl + 1;
	}
	struct xattr_set *x = malloc(sizeof(*x) + n * sizeof(x->v[0]) + bytes);
	if (!x)
		return -ENOMEM;
	char *q = (char *)&x->v[n];
	c->off = start;
	for (uint32_t i = 0; i < n; i++) {
		size_t nl;
		const char *name = wc_str(c, &nl);
		size_t vl = wc_u32(c);
		const void *val = wc_bytes(c, vl);

		memcpy(q, name, nl);
		q[nl] = 0;
		x->v[i].name = q;
		q += nl + 1;
		memcpy(q, val, vl);
		q[vl] = 0;
		x->v[i].value = q;
		x->v[i].len = vl;
		q += vl + 1;
	}
	x->n = n;
	*ret = x;
	return 0;
}

int wm_entry(struct wcur *c, struct wentry *e)
{
	bool oom = false;
	int r;

	memset(e, 0, sizeof(*e));
	if (c->off == c->len)
		return 0;
	e->kind = wc_u8(c);
	e->root = wc_u32(c);
	e->rel = wc_strdup(c, &oom);
	if (oom)
		return -ENOMEM;
	if (c->bad || !e->rel || !wm_name_ok(e->rel, strlen(e->rel)))
		goto bad;
	if (e->kind == WE_SKIP) {
		uint8_t d = wc_u8(c);

		if (c->bad || d > 1)
			goto bad;
		e->is_dir = d;
		return 1;
	}
	if (e->kind != WE_ENTRY)
		goto bad;
	wc_stat(c, &e->st);
	size_t ll;
	const char *link = wc_str(c, &ll);
	if (c->bad || !link || !wm_type_ok(e->st.mode) || e->st.nlink == 0)
		goto bad;
	if (S_ISLNK(e->st.mode)) {
		/* a symlink's target is its contents: any bytes but NUL, not empty */
		if (!ll || !(e->link = strndup(link, ll))) {
			if (ll)
				return wm_entry_free(e), -ENOMEM;
			goto bad;
		}
	} else if (ll) {
		goto bad;
	}
	/* "." (DEST itself) can only be a directory */
	if (!strcmp(e->rel, ".") && !S_ISDIR(e->st.mode))
		goto bad;
	uint32_t nx = wc_u32(c);
	if (c->bad)
		goto bad;
	r = take_xattrs(c, nx, &e->xa);
	if (r == -ENOMEM) {
		wm_entry_free(e);
		return r;
	}
	if (r < 0)
		goto bad;
	return 1;
bad:
	wm_entry_free(e);
	return -EPROTO;
}
