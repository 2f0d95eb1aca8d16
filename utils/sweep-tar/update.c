/* SPDX-License-Identifier: MIT */
/*
 * An existing archive changed in place: -r (append), -u (update), -A
 * (concatenate) and --delete, as GNU tar does them (src/update.c,
 * src/delete.c), on uncompressed archives only (GNU tar's "Cannot update
 * compressed archives").
 *
 * libarchive reads the archive and says where each member starts
 * (archive_read_header_position: its first header block, pax or GNU
 * long-name headers included) and where the last one ends (the position
 * of the end-of-archive blocks). The bytes themselves go through our read
 * callback, so --delete copies the members it keeps block for block, as
 * GNU tar does, without decoding or re-encoding anything.
 *
 * -r and -u then write the new members from the end of the last member
 * on, over the old end-of-archive blocks, and pad the archive with zeros
 * to a whole record counted from its start (GNU tar rewrites the record
 * the old end fell in). --delete moves the members after a deleted one
 * down over it and truncates the file; with -f - it is a filter from
 * stdin to stdout. An archive that libarchive cannot read to its end is
 * left as it was: --delete on a file reads it all once before it moves a
 * byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"

#define READ_BLOCK (64 * 1024)

/* -u: the newest mtime of the members of each name. */
struct upd_name {
	struct upd_name *next;
	struct timespec mtime;
	char name[];
};

struct tar_update {
	struct upd_name **bucket;
	size_t nbuckets, count;
};

static size_t str_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29));
}

/* A member name as -u compares it: without trailing slashes ("dir/" is "dir"). */
static size_t name_len(const char *name)
{
	size_t n = strlen(name);

	while (n > 1 && name[n - 1] == '/')
		n--;
	return n;
}

static struct upd_name *upd_find(const struct tar_update *u, const char *name, size_t n)
{
	if (!u || !u->nbuckets)
		return NULL;
	for (struct upd_name *p = u->bucket[str_hash(name, n) & (u->nbuckets - 1)]; p; p = p->next)
		if (strlen(p->name) == n && memcmp(p->name, name, n) == 0)
			return p;
	return NULL;
}

static int upd_grow(struct tar_update *u)
{
	size_t n = u->nbuckets ? u->nbuckets * 2 : 1024;
	struct upd_name **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < u->nbuckets; i++)
		while (u->bucket[i]) {
			struct upd_name *p = u->bucket[i];
			size_t h = str_hash(p->name, strlen(p->name)) & (n - 1);
			u->bucket[i] = p->next;
			p->next = b[h];
			b[h] = p;
		}
	free(u->bucket);
	u->bucket = b;
	u->nbuckets = n;
	return 0;
}

static int upd_add(struct tar_update *u, const char *name, struct timespec mtime)
{
	size_t n = name_len(name);
	struct upd_name *p = upd_find(u, name, n);

	if (p) {
		if (mtime.tv_sec > p->mtime.tv_sec || (mtime.tv_sec == p->mtime.tv_sec && mtime.tv_nsec > p->mtime.tv_nsec))
			p->mtime = mtime;
		return 0;
	}
	if (u->count >= u->nbuckets && upd_grow(u) < 0)
		return -ENOMEM;
	if (!(p = malloc(sizeof(*p) + n + 1)))
		return -ENOMEM;
	memcpy(p->name, name, n);
	p->name[n] = '\0';
	p->mtime = mtime;
	size_t h = str_hash(p->name, n) & (u->nbuckets - 1);
	p->next = u->bucket[h];
	u->bucket[h] = p;
	u->count++;
	return 0;
}

void tar_update_free(struct tar *t)
{
	struct tar_update *u = t->update;

	if (!u)
		return;
	for (size_t i = 0; i < u->nbuckets; i++)
		while (u->bucket[i]) {
			struct upd_name *p = u->bucket[i];
			u->bucket[i] = p->next;
			free(p);
		}
	free(u->bucket);
	free(u);
	t->update = NULL;
}

enum tar_update_verdict tar_update_check(struct tar *t, const char *name, const struct sweep_stat *st)
{
	struct upd_name *p = upd_find(t->update, name, name_len(name));

	if (!p)
		return TAR_UPD_ADD;
	/* A directory in the archive: not stored again, its entries are looked at one by one. */
	if (S_ISDIR(st->mode))
		return TAR_UPD_SKIP;
	if (st->mtime_sec < p->mtime.tv_sec || (st->mtime_sec == p->mtime.tv_sec && st->mtime_nsec <= p->mtime.tv_nsec))
		return TAR_UPD_SKIP;
	return TAR_UPD_ADD;
}

/*
 * The archive as libarchive reads it: through this callback, from fd,
 * block by block. Bytes read are also handed to keep() when set (--delete
 * copies from them); a seekable file is skipped over by lseek when not.
 */
struct rsrc {
	int fd;
	bool seekable;
	off_t pos;             /* offset of the next byte read */
	char *buf;
	int err;               /* read error (errno) */
	void (*keep)(struct archive *a, void *ctx, const char *p, size_t n);
	void *keep_ctx;
};

static la_ssize_t rsrc_read(struct archive *a, void *ctx, const void **buf)
{
	struct rsrc *s = ctx;
	ssize_t n;

	do
		n = s->seekable ? pread(s->fd, s->buf, READ_BLOCK, s->pos) : read(s->fd, s->buf, READ_BLOCK);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		s->err = errno;
		archive_set_error(a, errno, "Read error at byte %lld: %s", (long long)s->pos, strerror(errno));
		return -1;
	}
	if (s->keep)
		s->keep(a, s->keep_ctx, s->buf, (size_t)n);
	s->pos += n;
	*buf = s->buf;
	return n;
}

static la_int64_t rsrc_skip(struct archive *a, void *ctx, la_int64_t n)
{
	struct rsrc *s = ctx;
	struct stat st;

	(void)a;
	/* Never past the end: libarchive must still see a truncated archive as truncated. */
	if (fstat(s->fd, &st) != 0 || st.st_size <= s->pos)
		return 0;
	if (n > st.st_size - s->pos)
		n = st.st_size - s->pos;
	s->pos += n;
	return n;
}

/* A reader of fd from offset 0 (a file: pread, and skips by seeking unless keep is set). */
static struct archive *rsrc_open(struct rsrc *s, int fd, bool keep)
{
	struct archive *a = archive_read_new();
	struct stat st;

	s->fd = fd;
	s->pos = 0;
	s->err = 0;
	s->seekable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (!a || !(s->buf = malloc(READ_BLOCK))) {
		archive_read_free(a);
		cli_msg("out of memory");
		return NULL;
	}
	archive_read_support_format_tar(a);
	archive_read_support_format_empty(a);
	archive_read_set_read_callback(a, rsrc_read);
	if (s->seekable && !keep)
		archive_read_set_skip_callback(a, rsrc_skip);
	archive_read_set_callback_data(a, s);
	if (archive_read_open1(a) != ARCHIVE_OK) {
		const char *why = archive_error_string(a);
		if (s->err)
			cli_msg("%s", why);
		else
			cli_msg("This does not look like a tar archive");
		archive_read_free(a);
		free(s->buf);
		s->buf = NULL;
		return NULL;
	}
	return a;
}

static void rsrc_close(struct rsrc *s, struct archive *a)
{
	archive_read_free(a);
	free(s->buf);
	s->buf = NULL;
}

/*
 * GNU tar looks at the first block: a valid tar header, or an archive it
 * cannot update when it carries a compressor's magic. 0, or -1 after its
 * message.
 */
static int refuse_compressed(int fd)
{
	static const struct {
		const char *magic;
		size_t len;
	} magics[] = {
		{ "\037\213", 2 }, { "\037\235", 2 }, { "BZh", 3 }, { "\3757zXZ\0", 6 }, { "LZIP", 4 },
		{ "\211LZO", 4 }, { "\050\265\057\375", 4 }, { "\135\0\0", 3 },
	};
	char buf[8];
	ssize_t n = pread(fd, buf, sizeof(buf), 0);

	for (size_t i = 0; n > 0 && i < sizeof(magics) / sizeof(magics[0]); i++)
		if ((size_t)n >= magics[i].len && memcmp(buf, magics[i].magic, magics[i].len) == 0) {
			cli_msg("Cannot update compressed archives");
			cli_msg("Error is not recoverable: exiting now");
			return -1;
		}
	return 0;
}

/*
 * Read the whole archive on fd; on each member call fn (may be NULL).
 * *end: where the members end (the end-of-archive blocks, or the end of
 * the file). 0, or -1 after a message (the archive cannot be read to its
 * end: nothing is to be written to it).
 */
static int scan(int fd, const char *shown, int (*fn)(void *ctx, struct archive_entry *e), void *ctx, off_t *end)
{
	struct rsrc s = { 0 };
	struct archive *a = rsrc_open(&s, fd, false);
	struct archive_entry *e;
	int r, ret = 0;

	if (!a)
		return -1;
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		if (fn && fn(ctx, e) < 0) {
			ret = -1;
			break;
		}
		if (archive_read_data_skip(a) != ARCHIVE_OK) {
			r = ARCHIVE_FATAL;
			break;
		}
	}
	if (ret == 0 && r != ARCHIVE_EOF) {
		const char *why = archive_error_string(a);
		cli_msg("%s: %s", tar_printable(shown), why && *why ? why : "Unexpected EOF in archive");
		cli_msg("Error is not recoverable: exiting now");
		ret = -1;
	}
	if (ret == 0)
		*end = (off_t)archive_read_header_position(a);
	rsrc_close(&s, a);
	return ret;
}

static int learn_mtime(void *ctx, struct archive_entry *e)
{
	struct tar *t = ctx;
	const char *name = archive_entry_pathname(e);
	struct timespec ts = { archive_entry_mtime(e), archive_entry_mtime_nsec(e) };

	if (!name)
		return 0;
	if (upd_add(t->update, name, ts) < 0) {
		cli_msg("out of memory");
		return -1;
	}
	return 0;
}

int tar_update_open(struct tar *t)
{
	const char *file = t->o->archive;
	off_t end = 0;
	int fd;

	fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		cli_msg("%s: Cannot open: %s", tar_printable(file), strerror(errno));
		cli_msg("Error is not recoverable: exiting now");
		return -1;
	}
	if (refuse_compressed(fd) < 0) {
		close(fd);
		return -1;
	}
	if (t->o->mode == TAR_UPDATE && !(t->update = calloc(1, sizeof(*t->update)))) {
		cli_msg("out of memory");
		close(fd);
		return -1;
	}
	if (scan(fd, file, t->o->mode == TAR_UPDATE ? learn_mtime : NULL, t, &end) < 0 ||
	    lseek(fd, end, SEEK_SET) != end) {
		if (errno && end)
			cli_msg("%s: Cannot seek: %s", tar_printable(file), strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int tar_update_pad(struct tar *t)
{
	off_t pos = lseek(t->out_fd, 0, SEEK_CUR);
	uint64_t rs = tar_record_size(t->o);
	int r;

	if (pos < 0)
		return -errno;
	r = tar_write_zeros(t->out_fd, ((uint64_t)pos + rs - 1) / rs * rs - (uint64_t)pos);
	return r;
}

/*
 * -A: the members of each operand archive after those of the archive, up
 * to its own end-of-archive blocks (GNU tar copies each file whole, its
 * end blocks too, which hides what follows from a reader that does not
 * pass -i).
 */
int tar_concat(struct tar *t)
{
	const struct tar_opts *o = t->o;
	const char *file = o->archive;
	char *buf = malloc(READ_BLOCK);
	off_t end = 0;
	int fd, ret = 0;

	if (!buf) {
		cli_msg("out of memory");
		return -1;
	}
	fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		cli_msg("%s: Cannot open: %s", tar_printable(file), strerror(errno));
		cli_msg("Error is not recoverable: exiting now");
		free(buf);
		return -1;
	}
	if (refuse_compressed(fd) < 0 || scan(fd, file, NULL, NULL, &end) < 0) {
		close(fd);
		free(buf);
		return -1;
	}
	for (size_t i = 0; i < o->nroots && ret == 0; i++) {
		const char *path = o->roots[i].path;
		struct stat st, ast;
		off_t len = 0;
		int in = open(path, O_RDONLY | O_CLOEXEC);

		if (in < 0) {
			tar_error(t, path, "Cannot open: %s", strerror(errno));
			continue;
		}
		if (fstat(in, &st) == 0 && fstat(fd, &ast) == 0 && st.st_dev == ast.st_dev && st.st_ino == ast.st_ino) {
			tar_error(t, path, "Cannot concatenate an archive to itself");
			close(in);
			continue;
		}
		if (refuse_compressed(in) < 0) {
			close(in);
			ret = -1;
			break;
		}
		if (scan(in, path, NULL, NULL, &len) < 0) {
			close(in);
			ret = -1;
			break;
		}
		for (off_t done = 0; done < len && ret == 0;) {
			size_t want = len - done < READ_BLOCK ? (size_t)(len - done) : READ_BLOCK;
			ssize_t n = pread(in, buf, want, done);
			if (n <= 0) {
				cli_msg("%s: Read error at byte %lld: %s", tar_printable(path), (long long)done,
					n < 0 ? strerror(errno) : "Unexpected EOF");
				ret = -1;
				break;
			}
			for (ssize_t w = 0; w < n;) {
				ssize_t k = pwrite(fd, buf + w, (size_t)(n - w), end + done + w);
				if (k < 0 && errno == EINTR)
					continue;
				if (k <= 0) {
					cli_msg("%s: Cannot write: %s", tar_printable(file), k < 0 ? strerror(errno) : "short write");
					ret = -1;
					break;
				}
				w += k;
			}
			done += n;
		}
		close(in);
		end += len;
	}
	if (ret == 0) {
		/* The end-of-archive blocks and a whole last record. */
		uint64_t rs = tar_record_size(o);
		if (lseek(fd, end, SEEK_SET) != end || tar_write_zeros(fd, ((uint64_t)end + 1024 + rs - 1) / rs * rs - (uint64_t)end) < 0) {
			cli_msg("%s: Cannot write: %s", tar_printable(file), strerror(errno));
			ret = -1;
		}
	}
	if (ret < 0)
		cli_msg("Error is not recoverable: exiting now");
	if (close(fd) != 0 && ret == 0) {
		cli_msg("%s: Cannot close: %s", tar_printable(file), strerror(errno));
		ret = -1;
	}
	free(buf);
	return ret;
}

/*
 * --delete: the bytes read so far from raw_base on are kept in raw until
 * it is known whose they are: those of a member that stays are written
 * out (at w, below where they were read, or to stdout), those of a deleted
 * one dropped.
 */
struct del {
	struct tar *t;
	struct rsrc in;
	bool dry;          /* the first pass over a file: read it all, move nothing */
	int out;           /* where kept bytes go: the archive itself (in place) or stdout */
	bool in_place;
	off_t w;           /* where the next kept byte goes */
	bool moved;        /* a member was deleted: from now on kept bytes move down */
	char *raw;
	size_t rawlen, rawcap;
	off_t raw_base;    /* offset of raw[0] */
	bool keep;         /* fate of the bytes from raw_base to the next member */
	bool pending;      /* raw starts a member whose fate is not decided yet */
	int err;           /* write error (errno) */
};

static void del_emit(struct del *d, const char *p, size_t n)
{
	if (d->dry || d->err || n == 0)
		return;
	if (d->in_place && !d->moved) {
		d->w += (off_t)n; /* nothing deleted before: the bytes are where they belong */
		return;
	}
	while (n > 0) {
		ssize_t k = d->in_place ? pwrite(d->out, p, n, d->w) : write(d->out, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			d->err = k < 0 ? errno : EIO;
			return;
		}
		p += k;
		n -= (size_t)k;
		d->w += k;
	}
}

/* The bytes before offset upto are decided (kept or not): out of raw. */
static void del_flush(struct del *d, off_t upto)
{
	size_t n;

	if (upto <= d->raw_base)
		return;
	n = (size_t)(upto - d->raw_base);
	if (n > d->rawlen)
		n = d->rawlen;
	if (n == 0)
		return; /* the first pass keeps no bytes */
	if (d->keep)
		del_emit(d, d->raw, n);
	memmove(d->raw, d->raw + n, d->rawlen - n);
	d->rawlen -= n;
	d->raw_base += (off_t)n;
}

/* The read callback's tap: what libarchive has used up since belongs to the member it is in. */
static void del_keep(struct archive *a, void *ctx, const char *p, size_t n)
{
	struct del *d = ctx;
	off_t hp = (off_t)archive_read_header_position(a);

	if (hp > d->raw_base && !d->pending) {
		/* A new member's headers are being read: what comes before is the last one's. */
		del_flush(d, hp);
		d->pending = true;
	} else if (!d->pending) {
		del_flush(d, (off_t)archive_filter_bytes(a, 0));
	}
	if (d->rawlen + n > d->rawcap) {
		size_t cap = d->rawcap ? d->rawcap : READ_BLOCK;
		while (cap < d->rawlen + n)
			cap *= 2;
		char *nr = realloc(d->raw, cap);
		if (!nr) {
			d->err = ENOMEM;
			return;
		}
		d->raw = nr;
		d->rawcap = cap;
	}
	memcpy(d->raw + d->rawlen, p, n);
	d->rawlen += n;
}

/* One pass over the archive. 0, or -1 after a message. */
static int del_pass(struct del *d, unsigned *found)
{
	const struct tar_opts *o = d->t->o;
	struct archive *a;
	struct archive_entry *e;
	int r, ret = 0;

	d->raw_base = 0;
	d->rawlen = 0;
	d->keep = true;
	d->pending = false;
	d->w = 0;
	d->moved = false;
	/* The first pass over a file only reads the headers (and seeks over the data). */
	d->in.keep = d->dry ? NULL : del_keep;
	d->in.keep_ctx = d;
	if (!(a = rsrc_open(&d->in, d->in.fd, !d->dry)))
		return -1;
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		off_t start = (off_t)archive_read_header_position(a);
		const char *name = archive_entry_pathname(e);
		bool del = false;

		if (!d->pending)
			del_flush(d, start);
		d->pending = false;
		if (name && tar_select(o, name, found) >= 0)
			del = true;
		d->keep = !del;
		if (del)
			d->moved = true;
		if (archive_read_data_skip(a) != ARCHIVE_OK) {
			r = ARCHIVE_FATAL;
			break;
		}
		if (d->err)
			break;
	}
	if (d->err) {
		cli_msg("%s: Cannot write: %s", tar_printable(o->archive ? o->archive : "-"), strerror(d->err));
		ret = -1;
	} else if (r != ARCHIVE_EOF) {
		const char *why = archive_error_string(a);
		cli_msg("%s", why && *why ? why : "Unexpected EOF in archive");
		ret = -1;
	} else {
		off_t end = (off_t)archive_read_header_position(a);
		if (!d->pending)
			del_flush(d, end);
		d->raw_base = end;
	}
	rsrc_close(&d->in, a);
	return ret;
}

int tar_delete(struct tar *t)
{
	const struct tar_opts *o = t->o;
	bool filter = !o->archive || strcmp(o->archive, "-") == 0;
	unsigned *found = calloc(o->nroots ? o->nroots : 1, sizeof(*found));
	struct del d = { .t = t };
	uint64_t rs = tar_record_size(o);
	int fd, ret = 0;

	t->status = TAR_OK;
	if (!found) {
		cli_msg("out of memory");
		return -1;
	}
	if (filter) {
		fd = STDIN_FILENO;
		d.out = STDOUT_FILENO;
		if (isatty(STDIN_FILENO) || isatty(STDOUT_FILENO)) {
			cli_msg("Refusing to %s archive contents %s terminal (missing -f option?)",
				isatty(STDIN_FILENO) ? "read" : "write", isatty(STDIN_FILENO) ? "from" : "to");
			cli_msg("Error is not recoverable: exiting now");
			ret = -1;
			goto out;
		}
	} else {
		fd = open(o->archive, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			cli_msg("%s: Cannot open: %s", tar_printable(o->archive), strerror(errno));
			cli_msg("Error is not recoverable: exiting now");
			ret = -1;
			goto out;
		}
		if (refuse_compressed(fd) < 0) {
			close(fd);
			ret = -1;
			goto out;
		}
		d.out = fd;
		d.in_place = true;
	}
	d.in.fd = fd;
	if (!filter) {
		/* Read it all once: a damaged archive is left as it is. */
		d.dry = true;
		ret = del_pass(&d, found);
		d.dry = false;
		/* Nothing to delete: the file stays as it is, byte for byte. */
		if (ret < 0 || !d.moved)
			goto report;
		memset(found, 0, (o->nroots ? o->nroots : 1) * sizeof(*found));
	}
	if (ret == 0)
		ret = del_pass(&d, found);
	if (ret == 0 && (filter || d.moved)) {
		/* The end-of-archive blocks, and zeros to a whole record. */
		uint64_t w = (uint64_t)d.w, n = (w + 1024 + rs - 1) / rs * rs - w;
		int r = 0;
		if (d.in_place && lseek(fd, d.w, SEEK_SET) != d.w)
			r = -errno;
		if (r == 0)
			r = tar_write_zeros(d.out, n);
		if (r == 0 && d.in_place && ftruncate(fd, (off_t)(w + n)) != 0)
			r = -errno;
		if (r < 0) {
			cli_msg("%s: Cannot write: %s", tar_printable(filter ? "-" : o->archive), strerror(-r));
			ret = -1;
		}
	}
report:
	if (ret < 0)
		cli_msg("Error is not recoverable: exiting now");
	else if (filter)
		tar_drain_stdin(o);
	if (!filter && close(fd) != 0 && ret == 0) {
		cli_msg("%s: Cannot close: %s", tar_printable(o->archive), strerror(errno));
		ret = -1;
	}
	if (ret == 0)
		tar_report_unmatched(t, found);
out:
	free(d.raw);
	free(found);
	return ret;
}
