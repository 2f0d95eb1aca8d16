/* SPDX-License-Identifier: MIT */
/*
 * Directory entries wait for the end of the archive (see tar.h for why).
 * They wait on disk, not in memory: each is written as it is met into an
 * unlinked temporary pax stream, which libarchive reads back at the end,
 * with every name, time, xattr and ACL as it was. Memory stays at a few
 * words per directory however large the tree.
 *
 * They come out in reverse walk order, so every directory follows all of
 * its subdirectories: an extractor then never has to create a directory
 * inside one whose mode and times it has already set (GNU tar sets them
 * as soon as a member outside the directory follows; a read-only one
 * could not even be filled by a non-root user).
 *
 * A directory that GNU tar fills through a placeholder is written once
 * more, early, right before that member (dir_spool_pin; tar.h says why).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"

#define SPOOL_BUF (64 * 1024)

struct spooled {
	uint64_t id;        /* the walk's id of the directory */
	uint64_t off : 63;  /* where its entry starts in the spool */
	uint64_t pinned : 1; /* written early by dir_spool_pin() already */
};

struct dir_spool {
	int fd;
	int err;           /* the first write error (errno) */
	/*
	 * Our own write buffer, with libarchive's blocking off: an entry is
	 * read back in the middle of the walk (dir_spool_pin), so every byte
	 * written so far must be reachable in the file then.
	 */
	char *buf;
	size_t len;
	uint64_t end;      /* bytes in the file */
	struct archive *w;
	struct spooled *dir; /* in walk order */
	size_t count, cap;
	bool by_id;        /* ids came in ascending order: dir[] can be searched by id */
};

static int tmp_fd(void)
{
	const char *dir = getenv("TMPDIR");
	char *tmpl;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	/* No O_TMPFILE on this filesystem: a named file, unlinked at once. */
	if (asprintf(&tmpl, "%s/sweep-tar.XXXXXX", dir) < 0)
		return -1;
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd >= 0)
		unlink(tmpl);
	free(tmpl);
	return fd;
}

/* Where the directory entries wait: a temporary file, else (no writable $TMPDIR) memory. */
static int spool_fd(void)
{
	int fd = tmp_fd();

	if (fd < 0)
		fd = memfd_create("sweep-tar-dirs", MFD_CLOEXEC);
	return fd;
}

/* Into the file at s->end: reads elsewhere in it (copy_one) move the fd's position. */
static int spool_out(struct dir_spool *s, const char *p, size_t n)
{
	while (s->err == 0 && n > 0) {
		ssize_t k = pwrite(s->fd, p, n, (off_t)s->end);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			s->err = errno;
			break;
		}
		p += k;
		n -= (size_t)k;
		s->end += (uint64_t)k;
	}
	return s->err ? -s->err : 0;
}

static int spool_sync(struct dir_spool *s)
{
	int r = spool_out(s, s->buf, s->len);

	s->len = 0;
	return r;
}

static la_ssize_t spool_write(struct archive *a, void *ctx, const void *buf, size_t len)
{
	struct dir_spool *s = ctx;

	(void)a;
	if (s->len + len > SPOOL_BUF && spool_sync(s) < 0)
		return (la_ssize_t)len; /* the error is in s->err: the caller checks it */
	if (len >= SPOOL_BUF)
		spool_out(s, buf, len);
	else {
		memcpy(s->buf + s->len, buf, len);
		s->len += len;
	}
	return (la_ssize_t)len;
}

struct dir_spool *dir_spool_new(struct tar *t)
{
	struct dir_spool *s = calloc(1, sizeof(*s));

	(void)t;
	if (!s || !(s->buf = malloc(SPOOL_BUF))) {
		cli_msg("out of memory");
		free(s);
		return NULL;
	}
	s->by_id = true;
	s->fd = spool_fd();
	if (s->fd < 0) {
		cli_error(-errno, "cannot create a temporary file for directory entries");
		free(s->buf);
		free(s);
		return NULL;
	}
	s->w = archive_write_new();
	if (!s->w || archive_write_set_format_pax(s->w) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(s->w, 0) != ARCHIVE_OK ||
	    archive_write_open2(s->w, s, NULL, spool_write, NULL, NULL) != ARCHIVE_OK) {
		cli_msg("cannot set up the directory spool: %s",
			s->w ? archive_error_string(s->w) : "out of memory");
		return dir_spool_free(s);
	}
	return s;
}

struct dir_spool *dir_spool_free(struct dir_spool *s)
{
	if (!s)
		return NULL;
	if (s->w)
		archive_write_free(s->w);
	if (s->fd >= 0)
		close(s->fd);
	free(s->dir);
	free(s->buf);
	free(s);
	return NULL;
}

static int spool_failed(struct tar *t, struct archive *a)
{
	int err = t->dirs->err ? t->dirs->err : archive_errno(a);

	progress_clear(t->progress);
	cli_msg("temporary file for directory entries: %s",
		t->dirs->err ? strerror(err) : archive_error_string(a));
	cli_msg("Error is not recoverable: exiting now");
	t->failed = true;
	t->status = TAR_FATAL;
	return err > 0 ? -err : -EIO;
}

int dir_spool_add(struct tar *t, uint64_t id)
{
	struct dir_spool *s = t->dirs;
	struct spooled *d;

	if (s->count == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct spooled *nd = realloc(s->dir, cap * sizeof(*nd));
		if (!nd) {
			cli_msg("out of memory");
			t->failed = true;
			t->status = TAR_FATAL;
			return -ENOMEM;
		}
		s->dir = nd;
		s->cap = cap;
	}
	d = &s->dir[s->count];
	d->id = id;
	/* Bytes handed to the (only, uncompressed) filter so far: where this header starts. */
	d->off = (uint64_t)archive_filter_bytes(s->w, 0);
	d->pinned = 0;
	/* No tar_fix_times() here: libarchive reads its own pre-1970 times back as it wrote them. */
	if (archive_write_header(s->w, t->entry) < ARCHIVE_WARN || s->err)
		return spool_failed(t, s->w);
	if (s->count > 0 && id <= s->dir[s->count - 1].id)
		s->by_id = false;
	s->count++;
	return 0;
}

/*
 * Reading ACLs back from text gives an entry whose user has no name the
 * id as its name ("user:1234:rwx"), which would be written back as
 * "user:1234:rwx:1234", a name "1234" that bsdtar cannot resolve. Drop
 * such names again.
 */
static void unname_numeric_acl(struct archive_entry *e)
{
	struct acl_ent {
		int type, perm, tag, id;
		char *name;
	} *v;
	int n = archive_entry_acl_reset(e, ARCHIVE_ENTRY_ACL_TYPE_POSIX1E), k = 0;
	int type, perm, tag, id;
	const char *name;
	char num[24];

	if (n <= 0 || !(v = calloc((size_t)n, sizeof(*v))))
		return;
	while (k < n && archive_entry_acl_next(e, ARCHIVE_ENTRY_ACL_TYPE_POSIX1E, &type, &perm, &tag, &id,
					       &name) == ARCHIVE_OK) {
		snprintf(num, sizeof(num), "%d", id);
		v[k] = (struct acl_ent){ type, perm, tag, id,
					 name && strcmp(name, num) != 0 ? strdup(name) : NULL };
		k++;
	}
	archive_entry_acl_clear(e);
	for (int i = 0; i < k; i++) {
		archive_entry_acl_add_entry(e, v[i].type, v[i].perm, v[i].tag, v[i].id, v[i].name);
		free(v[i].name);
	}
	free(v);
}

/* The one entry at off. 0, or <0 after a message. */
static int copy_one(struct tar *t, uint64_t off)
{
	struct archive *rd = archive_read_new();
	struct archive_entry *e;
	int r, err = 0;

	if (!rd)
		return -ENOMEM;
	if (spool_sync(t->dirs) < 0) {
		archive_read_free(rd);
		return spool_failed(t, t->dirs->w);
	}
	if (lseek(t->dirs->fd, (off_t)off, SEEK_SET) < 0) {
		archive_read_free(rd);
		cli_error(-errno, "temporary file for directory entries");
		t->failed = true;
		t->status = TAR_FATAL;
		return -EIO;
	}
	archive_read_support_format_tar(rd);
	if (archive_read_open_fd(rd, t->dirs->fd, 8192) != ARCHIVE_OK)
		err = spool_failed(t, rd);
	else if ((r = archive_read_next_header(rd, &e)) != ARCHIVE_OK && r != ARCHIVE_WARN)
		err = spool_failed(t, rd);
	else {
		unname_numeric_acl(e);
		err = tar_out_header(t, e);
		if (err > 0)
			err = 0;
	}
	archive_read_free(rd);
	return err;
}

/* The spooled directory with this id, or NULL (not archived: excluded, unreadable, or not a member). */
static struct spooled *find_dir(struct dir_spool *s, uint64_t id)
{
	size_t lo = 0, hi = s->count;

	if (!s->by_id) {
		for (size_t i = 0; i < s->count; i++)
			if (s->dir[i].id == id)
				return &s->dir[i];
		return NULL;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->dir[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->count && s->dir[lo].id == id ? &s->dir[lo] : NULL;
}

int dir_spool_pin(struct tar *t, uint64_t id)
{
	struct spooled *d = id ? find_dir(t->dirs, id) : NULL;
	int r;

	if (!d || d->pinned)
		return 0;
	r = copy_one(t, d->off);
	if (r == 0)
		d->pinned = 1;
	return r;
}

int dir_spool_flush(struct tar *t)
{
	struct dir_spool *s = t->dirs;
	int err = 0;

	if (archive_write_close(s->w) != ARCHIVE_OK || s->err)
		return spool_failed(t, s->w);
	for (size_t i = s->count; i-- > 0 && err == 0;)
		err = copy_one(t, s->dir[i].off);
	return err;
}
