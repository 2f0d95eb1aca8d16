/* SPDX-License-Identifier: MIT */
/*
 * --pax-option=KEYWORD[,KEYWORD...] as GNU tar takes it (src/xheader.c),
 * for what sweep-tar writes, the pax headers of libarchive:
 *
 *   delete=PATTERN    the keywords PATTERN matches are left out: atime and
 *                     ctime are never written; mtime loses its fraction
 *                     (the ustar field holds the seconds); SCHILY.xattr.*
 *                     drops those attributes, SCHILY.acl.* the ACLs,
 *                     GNU.sparse.* stores sparse files whole. A pattern
 *                     matching a keyword a member needs (path, linkpath,
 *                     size, uid, gid, uname, gname, hdrcharset) is refused.
 *   exthdr.name=NAME  the name of each extended header block, expanding %d
 *                     (the member's directory), %f (its last component),
 *                     %p (the process id) and %%: the header is renamed in
 *                     the tar stream on its way out (a stream sweep-tar
 *                     compresses itself is refused: libarchive compresses
 *                     before it reaches us).
 *   globexthdr.name=NAME  libarchive writes no global header: nothing to
 *                     name, nothing ignored.
 *
 * KEYWORD=VALUE and KEYWORD:=VALUE (keywords added to the headers),
 * invalid=, linkdata and times= cannot be honoured through libarchive:
 * refused, never taken and ignored.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"

static char *unhonoured; /* the first keyword that cannot be honoured (refused after GNU tar's own checks) */
static const char **deleted;
static size_t ndeleted;
static char *exthdr_name;
static bool drop_mtime_ns, drop_acls, drop_sparse;

/* Keywords a member may need: leaving them out would lose it. */
static const char *const needed[] = { "path", "linkpath", "size", "uid", "gid", "uname", "gname", "hdrcharset" };

static void later(const char *what)
{
	if (!unhonoured && !(unhonoured = strdup(what)))
		cli_die(TAR_FATAL, "out of memory");
}

void tar_pax_check(void)
{
	if (!unhonoured)
		return;
	fflush(stdout);
	fprintf(stderr, "%s: --pax-option %s: sweep-tar cannot honour it (its pax headers are libarchive's)\n",
		cli_prog(), unhonoured);
	fprintf(stderr, "Try '%s --help' or '%s --usage' for more information.\n", cli_prog(), cli_prog());
	exit(TAR_FATAL);
}

static void add_delete(const char *pattern)
{
	const char **n = realloc((void *)deleted, (ndeleted + 1) * sizeof(*n));
	char *copy = strdup(pattern);

	if (!n || !copy)
		cli_die(TAR_FATAL, "out of memory");
	deleted = n;
	deleted[ndeleted++] = copy;
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (fnmatch(pattern, needed[i], 0) == 0) {
			char what[256];
			snprintf(what, sizeof(what), "delete=%s (it matches '%s', which a member may need)", pattern, needed[i]);
			later(what);
		}
	if (fnmatch(pattern, "mtime", 0) == 0)
		drop_mtime_ns = true;
	if (fnmatch(pattern, "SCHILY.acl.access", 0) == 0 || fnmatch(pattern, "SCHILY.acl.default", 0) == 0)
		drop_acls = true;
	if (fnmatch(pattern, "GNU.sparse.major", 0) == 0 || fnmatch(pattern, "GNU.sparse.name", 0) == 0 ||
	    fnmatch(pattern, "GNU.sparse.realsize", 0) == 0)
		drop_sparse = true;
}

void tar_pax_option(const char *arg)
{
	char *copy = strdup(arg), *save = NULL;

	if (!copy)
		cli_die(TAR_FATAL, "out of memory");
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ' || *tok == '\t')
			tok++;
		char *eq = strchr(tok, '=');
		if (!eq) {
			later(tok); /* linkdata, and anything else without a value */
			continue;
		}
		size_t klen = (size_t)(eq - tok);
		const char *value = eq + 1;
		if (klen == 6 && strncmp(tok, "delete", 6) == 0) {
			add_delete(value);
		} else if (klen == 11 && strncmp(tok, "exthdr.name", 11) == 0) {
			free(exthdr_name);
			if (!(exthdr_name = strdup(value)))
				cli_die(TAR_FATAL, "out of memory");
		} else if (klen == 15 && strncmp(tok, "globexthdr.name", 15) == 0) {
			/* No global headers are written: nothing to name. */
		} else {
			later(tok);
		}
	}
	free(copy);
}

bool tar_pax_deleted(const char *keyword)
{
	for (size_t i = 0; i < ndeleted; i++)
		if (fnmatch(deleted[i], keyword, 0) == 0)
			return true;
	return false;
}

void tar_pax_entry(struct archive_entry *e)
{
	if (!ndeleted)
		return;
	if (drop_mtime_ns && archive_entry_mtime_is_set(e))
		archive_entry_set_mtime(e, archive_entry_mtime(e), 0);
	if (drop_acls)
		archive_entry_acl_clear(e);
	if (drop_sparse)
		archive_entry_sparse_clear(e);
}

bool tar_pax_renames(void)
{
	return exthdr_name != NULL;
}

void tar_pax_free(void)
{
	for (size_t i = 0; i < ndeleted; i++)
		free((void *)deleted[i]);
	free((void *)deleted);
	deleted = NULL;
	ndeleted = 0;
	free(exthdr_name);
	exthdr_name = NULL;
	free(unhonoured);
	unhonoured = NULL;
}

/*
 * exthdr.name: the tar stream walked block by block on its way out. An
 * extended header ('x') and its records are held until the header of the
 * member they belong to is there, which names it (or its "path" record
 * does); then the extended header's name field is rewritten, its checksum
 * made again, and all of it goes on.
 */
enum { RW_HEADER, RW_DATA, RW_XDATA, RW_MEMBER };

struct tar_pax_rw {
	int state;
	uint64_t blocks;       /* RW_DATA, RW_XDATA: blocks still to come */
	char *hold;            /* RW_XDATA, RW_MEMBER: the blocks held */
	size_t held, cap;
	uint64_t xsize;        /* the held header's records, in bytes */
	char part[512];        /* a block split between two writes */
	size_t npart;
};

struct tar_pax_rw *tar_pax_rw_new(void)
{
	return calloc(1, sizeof(struct tar_pax_rw));
}

void tar_pax_rw_free(struct tar_pax_rw *rw)
{
	if (rw)
		free(rw->hold);
	free(rw);
}

/* A ustar numeric field: octal, or base-256 (GNU). */
static uint64_t field(const char *p, size_t n)
{
	uint64_t v = 0;

	if ((unsigned char)p[0] & 0x80) {
		for (size_t i = 1; i < n; i++)
			v = (v << 8) | (unsigned char)p[i];
		return v;
	}
	for (size_t i = 0; i < n && (p[i] == ' ' || p[i] == '\0'); i++)
		p++, n--;
	for (size_t i = 0; i < n && p[i] >= '0' && p[i] <= '7'; i++)
		v = v * 8 + (uint64_t)(p[i] - '0');
	return v;
}

static void checksum(char *h)
{
	unsigned sum = 0;

	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
	h[155] = ' ';
}

static int hold(struct tar_pax_rw *rw, const char *b)
{
	if (rw->held + 512 > rw->cap) {
		size_t cap = rw->cap ? rw->cap * 2 : 8192;
		char *n = realloc(rw->hold, cap);
		if (!n)
			return -ENOMEM;
		rw->hold = n;
		rw->cap = cap;
	}
	memcpy(rw->hold + rw->held, b, 512);
	rw->held += 512;
	return 0;
}

/* The value of keyword in pax records (len bytes), malloc'ed, or NULL. */
static char *record(const char *rec, size_t len, const char *keyword)
{
	size_t k = strlen(keyword);

	for (size_t off = 0; off < len;) {
		char *end;
		unsigned long n = strtoul(rec + off, &end, 10);
		if (n == 0 || off + n > len || *end != ' ')
			break;
		const char *kw = end + 1, *eq = memchr(kw, '=', rec + off + n - kw);
		if (eq && (size_t)(eq - kw) == k && memcmp(kw, keyword, k) == 0)
			return strndup(eq + 1, (size_t)(rec + off + n - 1 - (eq + 1)));
		off += n;
	}
	return NULL;
}

/* GNU tar's xheader_format_name for the member name. malloc'ed. */
static char *format_name(const char *name)
{
	const char *slash;
	char *dir, *out;
	size_t len = strlen(name);
	struct {
		char *p;
		size_t len, cap;
	} b = { 0 };

	while (len > 1 && name[len - 1] == '/')
		len--;
	slash = memrchr(name, '/', len);
	dir = slash ? strndup(name, (size_t)(slash - name)) : strdup(".");
	const char *base = slash ? slash + 1 : name;
	size_t blen = len - (size_t)(base - name);
	if (!dir)
		return NULL;
	FILE *f = open_memstream(&b.p, &b.len);
	if (!f) {
		free(dir);
		return NULL;
	}
	for (const char *p = exthdr_name; *p; p++) {
		if (*p != '%' || !p[1]) {
			fputc(*p, f);
			continue;
		}
		switch (*++p) {
		case '%': fputc('%', f); break;
		case 'd': fputs(dir, f); break;
		case 'f': fwrite(base, 1, blen, f); break;
		case 'p': fprintf(f, "%ld", (long)getpid()); break;
		default: fputc('%', f); fputc(*p, f); break;
		}
	}
	fclose(f);
	free(dir);
	out = b.p;
	return out;
}

static int rename_held(struct tar_pax_rw *rw, const char *member)
{
	/* The member's name: a "path" record, a sparse file's real name, or its ustar header's. */
	char *path = record(rw->hold + 512, (size_t)rw->xsize, "path"), *name;

	if (!path)
		path = record(rw->hold + 512, (size_t)rw->xsize, "GNU.sparse.name");
	char ustar[256 + 2];
	if (!path) {
		const char *prefix = member + 345;
		size_t pl = strnlen(prefix, 155), nl = strnlen(member, 100);
		snprintf(ustar, sizeof(ustar), "%.*s%s%.*s", (int)pl, prefix, pl ? "/" : "", (int)nl, member);
	}
	name = format_name(path ? path : ustar);
	free(path);
	if (!name)
		return -ENOMEM;
	memset(rw->hold, 0, 100);
	memcpy(rw->hold, name, strnlen(name, 100));
	free(name);
	checksum(rw->hold);
	return 0;
}

static int block(struct tar_pax_rw *rw, const char *b, int (*out)(void *ctx, const void *p, size_t n), void *ctx)
{
	int r;

	switch (rw->state) {
	case RW_DATA:
		if (--rw->blocks == 0)
			rw->state = RW_HEADER;
		return out(ctx, b, 512);
	case RW_XDATA:
		if ((r = hold(rw, b)) < 0)
			return r;
		if (--rw->blocks == 0)
			rw->state = RW_MEMBER;
		return 0;
	case RW_MEMBER: {
		/* The member's own header: it names the extended header held. */
		char *size = record(rw->hold + 512, (size_t)rw->xsize, "size");
		uint64_t n = size ? strtoull(size, NULL, 10) : field(b + 124, 12);
		free(size);
		if ((r = rename_held(rw, b)) < 0 || (r = out(ctx, rw->hold, rw->held)) < 0)
			return r;
		rw->held = 0;
		rw->blocks = (n + 511) / 512;
		rw->state = rw->blocks ? RW_DATA : RW_HEADER;
		return out(ctx, b, 512);
	}
	}
	/* RW_HEADER */
	uint64_t n = field(b + 124, 12);
	if (b[156] == 'x') {
		rw->held = 0;
		rw->xsize = n;
		if ((r = hold(rw, b)) < 0)
			return r;
		rw->blocks = (n + 511) / 512;
		rw->state = rw->blocks ? RW_XDATA : RW_MEMBER;
		return 0;
	}
	/* Anything else passes: end blocks, members without an extended header. */
	rw->blocks = b[0] || b[156] ? (n + 511) / 512 : 0;
	if (b[156] == '5' || b[156] == '1' || b[156] == '2' || b[156] == '3' || b[156] == '4' || b[156] == '6')
		rw->blocks = 0; /* no data, whatever the size field says */
	rw->state = rw->blocks ? RW_DATA : RW_HEADER;
	return out(ctx, b, 512);
}

int tar_pax_rw_write(struct tar_pax_rw *rw, const char *p, size_t n, int (*out)(void *ctx, const void *p, size_t n),
		     void *ctx)
{
	int r;

	while (n > 0) {
		if (rw->npart || n < 512) {
			size_t k = 512 - rw->npart < n ? 512 - rw->npart : n;
			memcpy(rw->part + rw->npart, p, k);
			rw->npart += k;
			p += k;
			n -= k;
			if (rw->npart < 512)
				return 0;
			rw->npart = 0;
			if ((r = block(rw, rw->part, out, ctx)) < 0)
				return r;
			continue;
		}
		if ((r = block(rw, p, out, ctx)) < 0)
			return r;
		p += 512;
		n -= 512;
	}
	return 0;
}
