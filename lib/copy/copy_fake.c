/* SPDX-License-Identifier: MIT */
/*
 * fake: SWEEP_PRESERVE_FAKE_SUPER, rsync's --fake-super on the receiving
 * side. What only root could make is recorded instead of made, in rsync's
 * own format so that rsync reads our copies and we read its:
 *
 *  - a device, FIFO or socket becomes an empty regular file, a symlink a
 *    regular file holding its target (Linux keeps no user xattrs on
 *    symlinks), both owner-only;
 *  - the real file gets the wanted permission bits without the set-id and
 *    sticky ones, plus owner read/write (and search for a directory), and no
 *    chown: the wanted type, mode, device numbers, owner and group go into
 *    the xattr user.rsync.%stat, "MODE MAJOR,MINOR UID:GID" (mode in octal),
 *    written only when they differ from the real file's (rsync's
 *    set_stat_xattr() in xattrs.c), and removed when they no longer do;
 *  - xattrs outside the user namespace, which only root may set, are
 *    stored as user.rsync.NAME, and the source's user.rsync.NAME read back
 *    as NAME (rsync's disguised namespaces); the source's own
 *    user.rsync.%stat, %aacl and %dacl are never copied as attributes.
 */
#include "copy_meta.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"

#define RPRE "user.rsync."
#define RPRE_LEN (sizeof(RPRE) - 1)
#define XSTAT RPRE "%stat"

SWEEP_EXPORT const char *sweep_copy_fake_xattr_name(const char *name, char *buf, size_t len)
{
	const char *rest = name;

	if (!strncmp(name, "system.", 7) || !strncmp(name, RPRE "%", RPRE_LEN + 1))
		return NULL; /* ACLs travel apart; rsync's own attributes are not data */
	if (!strncmp(name, RPRE, RPRE_LEN))
		rest = name + RPRE_LEN; /* a disguised name: what the sender sends */
	if (!strncmp(rest, "user.", 5))
		return rest;
	if ((size_t)snprintf(buf, len, RPRE "%s", rest) >= len)
		return NULL;
	return buf;
}

bool sweep__fake_keep_xattr(const char *name)
{
	/* rsync_xal_set(): only user names are the receiver's to remove, and never the %stat record */
	return strncmp(name, "user.", 5) || !strcmp(name, XSTAT);
}

int sweep__fake_make(int dirfd, const char *tmp, const char *content)
{
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (content) {
		size_t len = strlen(content);
		ssize_t n = write(fd, content, len);
		if (n < 0 || (size_t)n != len)
			rc = n < 0 ? -errno : -EIO;
	}
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

int sweep__fake_stat(const struct meta_ref *dst, const struct sweep_stat *st, unsigned what)
{
	char p[64 + 256], rec[96];
	struct stat real;
	int rc = dst->fd >= 0 ? fstat(dst->fd, &real) : fstatat(dst->dirfd, dst->name, &real, AT_SYMLINK_NOFOLLOW);

	if (rc < 0)
		return -errno;
	if (S_ISLNK(real.st_mode))
		return 0; /* a real symlink (made before): Linux keeps no user xattr on one */
	unsigned fmode = (st->mode & S_IFMT) | ((what & SWEEP_PRESERVE_MODE) ? st->mode & 07777 : real.st_mode & 07777);
	unsigned mode = (real.st_mode & S_IFMT) | (fmode & 0777) | (S_ISDIR(real.st_mode) ? 0700 : 0600);
	uint64_t rdev = S_ISCHR(fmode) || S_ISBLK(fmode) ? st->rdev : 0;
	unsigned uid = (what & SWEEP_PRESERVE_OWNER) ? (unsigned)st->uid : (unsigned)real.st_uid;
	unsigned gid = (what & SWEEP_PRESERVE_OWNER) ? (unsigned)st->gid : (unsigned)real.st_gid;
	const char *path = dst->fd >= 0 ? NULL : sweep__meta_at_path(dst->dirfd, dst->name, p, sizeof(p));

	if ((real.st_mode & (S_IFMT | 07777)) != mode &&
	    (dst->fd >= 0 ? fchmod(dst->fd, mode) : fchmodat(dst->dirfd, dst->name, mode, 0)) < 0)
		return -errno;
	if (fmode == mode && rdev == 0 && uid == real.st_uid && gid == real.st_gid) {
		rc = dst->fd >= 0 ? fremovexattr(dst->fd, XSTAT) : lremovexattr(path, XSTAT);
		return rc < 0 && errno != ENODATA ? -errno : 0;
	}
	int len = snprintf(rec, sizeof(rec), "%o %u,%u %u:%u", fmode, major((dev_t)rdev), minor((dev_t)rdev), uid, gid);
	rc = dst->fd >= 0 ? fsetxattr(dst->fd, XSTAT, rec, (size_t)len, 0) : lsetxattr(path, XSTAT, rec, (size_t)len, 0);
	return rc < 0 ? -errno : 0;
}
