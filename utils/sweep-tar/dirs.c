/* SPDX-License-Identifier: MIT */
/*
 * Directory entries wait for the end of the archive (see tar.h for why).
 * They wait on disk, not in memory: each is written as it is met into an
 * unlinked temporary pax stream, which libarchive reads back at the end,
 * with every name, time, xattr and ACL as it was. Memory stays flat
 * however many directories the tree has.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"

struct dir_spool {
	int fd;
	struct archive *w;
	uint64_t count;
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

struct dir_spool *dir_spool_new(struct tar *t)
{
	struct dir_spool *s = calloc(1, sizeof(*s));

	(void)t;
	if (!s)
		return NULL;
	s->fd = tmp_fd();
	if (s->fd < 0) {
		cli_error(-errno, "cannot create a temporary file for directory entries");
		free(s);
		return NULL;
	}
	s->w = archive_write_new();
	if (!s->w || archive_write_set_format_pax(s->w) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(s->w, 1) != ARCHIVE_OK ||
	    archive_write_open_fd(s->w, s->fd) != ARCHIVE_OK) {
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
	free(s);
	return NULL;
}

static int spool_failed(struct tar *t, struct archive *a)
{
	int err = archive_errno(a);

	progress_clear(t->progress);
	cli_msg("temporary file for directory entries: %s", archive_error_string(a));
	cli_msg("Error is not recoverable: exiting now");
	t->failed = true;
	t->status = TAR_FATAL;
	return err > 0 ? -err : -EIO;
}

int dir_spool_add(struct tar *t)
{
	struct dir_spool *s = t->dirs;

	if (archive_write_header(s->w, t->entry) < ARCHIVE_WARN)
		return spool_failed(t, s->w);
	s->count++;
	return 0;
}

int dir_spool_flush(struct tar *t)
{
	struct dir_spool *s = t->dirs;
	struct archive *rd;
	struct archive_entry *e;
	int r, err = 0;

	if (archive_write_close(s->w) != ARCHIVE_OK)
		return spool_failed(t, s->w);
	if (s->count == 0)
		return 0;
	if (lseek(s->fd, 0, SEEK_SET) != 0) {
		cli_error(-errno, "temporary file for directory entries");
		t->failed = true;
		t->status = TAR_FATAL;
		return -EIO;
	}
	rd = archive_read_new();
	if (!rd)
		return -ENOMEM;
	archive_read_support_format_tar(rd);
	if (archive_read_open_fd(rd, s->fd, 64 * 1024) != ARCHIVE_OK) {
		err = spool_failed(t, rd);
		archive_read_free(rd);
		return err;
	}
	while ((r = archive_read_next_header(rd, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		err = tar_out_header(t, e);
		if (err < 0)
			break;
		err = 0;
	}
	if (r == ARCHIVE_FATAL || r == ARCHIVE_FAILED)
		err = spool_failed(t, rd);
	archive_read_free(rd);
	return err;
}
