/* SPDX-License-Identifier: MIT */
/*
 * --fake-super, reading side: what rsync's x_lstat() does. A regular file,
 * directory or (placeholder) symlink that carries user.rsync.%stat is
 * listed with the type, mode, device numbers, owner and group recorded
 * there ("MODE MAJOR,MINOR UID:GID", rsync's get_stat_xattr() in
 * xattrs.c); a placeholder recorded as a symlink holds the target as its
 * data. The copy engine writes the records (SWEEP_PRESERVE_FAKE_SUPER).
 *
 * The record is data anyone who can write the file controls, so it is
 * parsed strictly: a record that is not exactly rsync's format, with a
 * type rsync does not know, numbers out of range or a symlink target
 * longer than PATH_MAX is "Corrupt", which stops the run with exit 11, as
 * rsync's RERR_FILEIO. Set-id bits in a record are taken (rsync does), but
 * with --fake-super they only ever reach another record, never a real mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "sync.h"

#define XSTAT "user.rsync.%stat"

/* One unsigned number in base (8 or 10) up to max, then the separator sep (0: the end). */
static bool take_num(const char **p, int base, unsigned long max, char sep, unsigned long *v)
{
	char *end;

	if (**p < '0' || **p > '9')
		return false;
	errno = 0;
	*v = strtoul(*p, &end, base);
	if (errno || *v > max || *end != sep)
		return false;
	*p = sep ? end + 1 : end;
	return true;
}

int fake_parse(const char *rec, struct fake_stat *f)
{
	const char *p = rec;
	unsigned long mode, maj, min, uid, gid;

	if (!take_num(&p, 8, 0177777, ' ', &mode) || !take_num(&p, 10, UINT32_MAX, ',', &maj) ||
	    !take_num(&p, 10, UINT32_MAX, ' ', &min) || !take_num(&p, 10, UINT32_MAX - 1, ':', &uid) ||
	    !take_num(&p, 10, UINT32_MAX - 1, 0, &gid))
		return -EINVAL;
	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR: case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		break;
	default:
		return -EINVAL;
	}
	f->mode = (uint32_t)mode;
	f->rdev = S_ISCHR(mode) || S_ISBLK(mode) ? makedev((unsigned)maj, (unsigned)min) : 0;
	f->uid = (uint32_t)uid;
	f->gid = (uint32_t)gid;
	return 0;
}

char *fake_read_target(int dirfd, const char *name)
{
	char *t = malloc(PATH_MAX + 1);
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	ssize_t n = -1;

	if (t && fd >= 0)
		n = read(fd, t, PATH_MAX + 1);
	if (fd >= 0)
		close(fd);
	if (n < 0 || n > PATH_MAX || memchr(t, 0, (size_t)n)) {
		int err = n > PATH_MAX || n >= 0 ? ENAMETOOLONG : errno;
		free(t);
		errno = err ? err : EIO;
		return NULL;
	}
	t[n] = 0;
	return t;
}

/* rsync's message, the name and the record escaped as rsync prints names */
static void corrupt(const struct sync_ctx *c, const char *shown, const char *rec)
{
	char *msg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&msg, &len);

	if (!f) {
		cli_msg("Corrupt %s xattr", XSTAT);
		return;
	}
	fprintf(f, "Corrupt %s xattr attached to \"", XSTAT);
	sync_put_name(c, f, shown);
	fputs("\": \"", f);
	sync_put_name(c, f, rec);
	putc('"', f);
	if (fclose(f) == 0)
		cli_msg("%s", msg);
	free(msg);
}

int fake_overlay(const struct sync_ctx *c, int dirfd, const char *name, const char *shown, struct sweep_stat *st)
{
	char buf[64 + NAME_MAX], rec[256];
	const char *path = name;
	struct fake_stat f;
	ssize_t len;

	if (!S_ISREG(st->mode) && !S_ISDIR(st->mode) && !S_ISLNK(st->mode))
		return 0; /* a real device or special keeps what it is */
	if (dirfd != AT_FDCWD) {
		snprintf(buf, sizeof(buf), "/proc/self/fd/%d/%s", dirfd, name);
		path = buf;
	}
	len = lgetxattr(path, XSTAT, rec, sizeof(rec) - 1);
	if (len < 0) {
		if (errno == ENODATA || errno == ENOTSUP || errno == EOPNOTSUPP || errno == ENOENT ||
		    (errno == EPERM && S_ISLNK(st->mode)))
			return 0;
		if (errno == ERANGE)
			len = sizeof(rec); /* longer than any record rsync writes: corrupt */
		else
			return -errno;
	}
	rec[len < (ssize_t)sizeof(rec) ? len : (ssize_t)sizeof(rec) - 1] = 0;
	if (len >= (ssize_t)sizeof(rec) - 1 || memchr(rec, 0, (size_t)len) || fake_parse(rec, &f) < 0) {
		corrupt(c, shown, rec);
		return -EBADMSG;
	}
	/*
	 * The record may make a placeholder file anything but a directory; a
	 * directory stays one. rsync would list a file as a directory (or the
	 * reverse) as the record says and fail later: refused here instead.
	 */
	if ((f.mode & S_IFMT) != (st->mode & S_IFMT) && (!S_ISREG(st->mode) || S_ISDIR(f.mode) || S_ISREG(f.mode))) {
		corrupt(c, shown, rec);
		return -EBADMSG;
	}
	st->mode = f.mode;
	st->rdev = f.rdev;
	st->uid = f.uid;
	st->gid = f.gid;
	if (!S_ISREG(f.mode) && !S_ISDIR(f.mode))
		st->size = 0; /* a symlink's: its target's length, once read (fake_read_target) */
	return 0;
}

int fake_overlay_at(const struct sync_ctx *c, int root, const char *rel, struct sweep_stat *st)
{
	const char *name;
	int dfd = sync_parent_beneath(root, rel, &name), r;

	if (dfd < 0)
		return dfd;
	r = fake_overlay(c, dfd, name, rel, st);
	close(dfd);
	return r;
}
