/* SPDX-License-Identifier: MIT */
/*
 * copy: the destination root and the names below it. Every directory is
 * looked up afresh beneath the root descriptor without following a symlink
 * (see copy_internal.h); entries are put in place by rename from a
 * temporary name made in the same directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_internal.h"

void sweep__dest_tmp_name(char *buf)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned long counter;
	unsigned char rnd[8];
	size_t pl = strlen(COPY_TMP_PREFIX);

	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
		unsigned long v = (unsigned long)getpid() * 2654435761u + __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 40503u;
		for (size_t i = 0; i < sizeof(rnd); i++, v /= 62)
			rnd[i] = (unsigned char)(v % 62);
	}
	memcpy(buf, COPY_TMP_PREFIX, pl);
	for (size_t i = 0; i < sizeof(rnd); i++)
		buf[pl + i] = abc[rnd[i] % 62];
	buf[pl + sizeof(rnd)] = '\0';
}

const char *sweep__dst_show_in(const struct sweep_copy *c, const char *dst, char **buf, size_t *cap)
{
	size_t pl = strlen(c->show), dl = strlen(dst);
	bool slash = pl > 0 && c->show[pl - 1] != '/' && dl > 0;

	if (sweep__grow(buf, cap, pl + slash + dl + 1, 1, 256) < 0)
		return dst;
	memcpy(*buf, c->show, pl);
	if (slash)
		(*buf)[pl] = '/';
	memcpy(*buf + pl + slash, dst, dl + 1);
	return *buf;
}

const char *sweep__dst_show(struct sweep_copy *c, const char *dst)
{
	return sweep__dst_show_in(c, dst, &c->showbuf, &c->showcap);
}

/* The length of dst's directory part ("a/b" of "a/b/c", "" of "c"), and its last component. */
static size_t dir_part(const char *dst, const char **ret_name)
{
	size_t end = strlen(dst);

	while (end > 1 && dst[end - 1] == '/')
		end--;
	for (size_t i = end; i-- > 0;)
		if (dst[i] == '/') {
			*ret_name = dst + i + 1;
			return i;
		}
	*ret_name = dst;
	return 0;
}

int sweep__dest_dir(const struct sweep_copy *c, const char *dst, const char **ret_name)
{
	size_t n;
	int fd;

	if (c->dest_fd < 0)
		return -EBADF;
	/* The last component, trailing slashes kept on it ("d/" stays a name that must be a directory). */
	n = dir_part(dst, ret_name);
	if (*ret_name == dst) {
		fd = fcntl(c->dest_fd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	char *dir = strndup(dst, n);
	if (!dir)
		return -ENOMEM;
	fd = sweep__open_beneath(c->dest_fd, n ? dir : ".", O_PATH | O_DIRECTORY, 0);
	free(dir);
	return fd;
}

bool sweep__fds_give_back(struct sweep_copy *c)
{
	bool had = c->dcache.fd >= 0;

	sweep__dest_cache_drop(&c->dcache);
	return had;
}

int sweep__dest_dir_mine(struct sweep_copy *c, const char *dst, const char **ret_name)
{
	int fd = sweep__dest_dir(c, dst, ret_name);

	if ((fd == -EMFILE || fd == -ENFILE) && sweep__fds_give_back(c))
		fd = sweep__dest_dir(c, dst, ret_name);
	return fd;
}

int sweep__dest_cache_dir(const struct sweep_copy *c, struct dest_cache *dc, const char *dst, const char **ret_name)
{
	size_t n = dir_part(dst, ret_name);
	bool slash = *ret_name != dst;
	struct stat st;

	dc->hit = dc->fd >= 0 && dc->slash == slash && dc->len == n && !memcmp(dc->dir, dst, n);
	if (dc->hit)
		return dc->fd;
	const char *name;
	int fd = sweep__dest_dir(c, dst, &name);
	if (fd == -EMFILE || fd == -ENFILE) {
		/* Out of descriptors (a low open-file limit): the one cached goes first, then one try more. */
		sweep__dest_cache_drop(dc);
		fd = sweep__dest_dir(c, dst, &name);
	}
	if (fd < 0)
		return fd;
	int err = fstat(fd, &st) < 0 ? -errno : sweep__grow(&dc->dir, &dc->cap, n + 1, 1, 64);
	if (err < 0) {
		close(fd);
		return err;
	}
	sweep__dest_cache_drop(dc);
	memcpy(dc->dir, dst, n);
	dc->dir[n] = '\0';
	dc->len = n;
	dc->slash = slash;
	dc->fd = fd;
	dc->st = st;
	dc->gen++;
	return fd;
}

void sweep__dest_cache_drop(struct dest_cache *dc)
{
	if (dc->fd >= 0)
		close(dc->fd);
	dc->fd = -1;
}

void sweep__dest_cache_free(struct dest_cache *dc)
{
	sweep__dest_cache_drop(dc);
	free(dc->dir);
	dc->dir = NULL;
	dc->cap = 0;
}

int sweep__dest_item_dir(const struct sweep_copy *c, const struct qitem *q, const char **ret_name)
{
	if (!q->place)
		return sweep__dest_dir(c, q->dst, ret_name);
	/* A destination the caller named is a symlink to this file: its directory as the path says. */
	const char *slash = strrchr(q->place, '/');
	char *dir = strndup(q->place, (size_t)(slash - q->place));
	int fd = dir ? open(slash == q->place ? "/" : dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	int err = dir ? -errno : -ENOMEM;
	free(dir);
	*ret_name = slash + 1;
	return fd >= 0 ? fd : err;
}

int sweep__src_dir(const struct src_ref *s, const char **ret_name)
{
	if (s->dirfd >= 0) {
		*ret_name = s->name;
		int fd = fcntl(s->dirfd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	const char *rel = s->rel;
	/* The last component; trailing slashes stay on it ("d/" names the directory d). */
	size_t end = strlen(rel);
	while (end > 1 && rel[end - 1] == '/')
		end--;
	const char *slash = NULL;
	for (size_t i = end; i-- > 0;)
		if (rel[i] == '/') {
			slash = rel + i;
			break;
		}
	if (!slash) {
		*ret_name = rel;
		int fd = s->root_fd == AT_FDCWD ? open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)
						: fcntl(s->root_fd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	*ret_name = slash + 1;
	char *dir = strndup(rel, (size_t)(slash - rel));
	if (!dir)
		return -ENOMEM;
	int fd;
	if (s->root_fd == AT_FDCWD) {
		/* A path the caller gave: its directories are followed as named. */
		fd = open(slash == rel ? "/" : dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		fd = fd < 0 ? -errno : fd;
	} else {
		fd = sweep__open_beneath(s->root_fd, slash == rel ? "." : dir, O_PATH | O_DIRECTORY, 0);
	}
	free(dir);
	return fd;
}

int sweep__src_dir_at(const struct src_ref *s, const char **ret_name, int *closeme)
{
	*closeme = -1;
	if (s->dirfd >= 0) {
		*ret_name = s->name;
		return s->dirfd;
	}
	int fd = sweep__src_dir(s, ret_name);
	if (fd >= 0)
		*closeme = fd;
	return fd;
}

/* ---- backups ---- */

/* The highest N of NAME.~N~ in the directory (0: none), -errno where it cannot be read. */
static long highest_numbered(int dirfd, const char *name)
{
	size_t nl = strlen(name);
	long best = 0;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		return -err;
	}
	for (struct dirent *de; (de = readdir(d));) {
		const char *p = de->d_name;
		if (strncmp(p, name, nl) || p[nl] != '.' || p[nl + 1] != '~' || p[nl + 2] < '1' || p[nl + 2] > '9')
			continue;
		char *end;
		long n = strtol(p + nl + 2, &end, 10);
		if (end[0] == '~' && !end[1] && n > best && n < LONG_MAX)
			best = n;
	}
	closedir(d);
	return best;
}

/* The backup name, and whether it is a numbered one (never replaces another). */
static int backup_name(int dirfd, const char *name, enum sweep_copy_backup kind, const char *suffix, char **ret,
		       bool *numbered)
{
	long n = 0;

	if (!suffix || !*suffix || strchr(suffix, '/'))
		suffix = "~"; /* as cp: a suffix with a slash would leave the directory */
	if (kind != SWEEP_COPY_BACKUP_SIMPLE && (n = highest_numbered(dirfd, name)) < 0)
		return (int)n;
	*numbered = kind == SWEEP_COPY_BACKUP_NUMBERED || (kind == SWEEP_COPY_BACKUP_EXISTING && n > 0);
	if (*numbered)
		return asprintf(ret, "%s.~%ld~", name, n + 1) < 0 ? -ENOMEM : 0;
	return asprintf(ret, "%s%s", name, suffix) < 0 ? -ENOMEM : 0;
}

SWEEP_EXPORT int sweep_copy_backup_name(int dirfd, const char *name, enum sweep_copy_backup kind,
					const char *suffix, char **ret)
{
	bool numbered;

	if (!name || !*name || strchr(name, '/') || !ret || kind == SWEEP_COPY_BACKUP_NONE ||
	    (unsigned)kind > SWEEP_COPY_BACKUP_EXISTING || (dirfd < 0 && dirfd != AT_FDCWD))
		return -EINVAL;
	return backup_name(dirfd, name, kind, suffix, ret, &numbered);
}

int sweep__dest_backup(const struct sweep_copy *c, int dirfd, const char *name, char **ret_backup)
{
	struct stat st;
	char tmp[32], *bk = NULL;
	bool numbered;
	int rc;

	*ret_backup = NULL;
	if (c->o.backup == SWEEP_COPY_BACKUP_NONE)
		return 0;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return 0; /* never backed up: a directory is not replaced */
	for (int tries = 0; tries < 100; tries++) {
		rc = backup_name(dirfd, name, c->o.backup, c->o.backup_suffix, &bk, &numbered);
		if (rc < 0)
			return rc;
		if (numbered) {
			rc = linkat(dirfd, name, dirfd, bk, 0) < 0 ? -errno : 0;
		} else {
			/* onto the old backup in one step: a temporary link renamed over it */
			rc = -EEXIST;
			for (int t = 0; t < 100 && rc == -EEXIST; t++) {
				sweep__dest_tmp_name(tmp);
				rc = linkat(dirfd, name, dirfd, tmp, 0) < 0 ? -errno : 0;
			}
			if (rc == 0 && renameat(dirfd, tmp, dirfd, bk) < 0) {
				rc = -errno;
				unlinkat(dirfd, tmp, 0);
			}
		}
		if (rc == 0) {
			*ret_backup = bk;
			return 0;
		}
		free(bk);
		bk = NULL;
		if (rc != -EEXIST || !numbered)
			return rc;
		/* another numbered backup appeared meanwhile: count again */
	}
	return -EEXIST;
}

char *sweep__dest_backup_show(const struct sweep_copy *c, const char *dst, const char *bk)
{
	const char *slash = strrchr(dst, '/');
	char *rel = NULL, *buf = NULL, *out;
	size_t cap = 0;

	if (!bk || asprintf(&rel, "%.*s%s", slash ? (int)(slash - dst + 1) : 0, dst, bk) < 0)
		return NULL;
	out = strdup(sweep__dst_show_in(c, rel, &buf, &cap));
	free(buf);
	free(rel);
	return out;
}

int sweep__dest_put(const struct sweep_copy *c, int dirfd, const char *tmp, const char *name)
{
	if (!(c->o.flags & SWEEP_COPY_NO_CLOBBER))
		return renameat(dirfd, tmp, dirfd, name) < 0 ? -errno : 0;
	if (renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* No RENAME_NOREPLACE on this filesystem: link() also refuses an existing name. */
	if (linkat(dirfd, tmp, dirfd, name, 0) < 0)
		return -errno;
	unlinkat(dirfd, tmp, 0);
	return 0;
}

int sweep__dest_link(const struct sweep_copy *c, const char *target, const char *dst)
{
	const char *tname, *dname;
	char tmp[32];
	int rc;
	int tdir = sweep__dest_dir(c, target, &tname);

	if (tdir < 0)
		return tdir;
	/* Two names in one directory (the usual hard link): one descriptor, not two, under a low limit. */
	size_t tn = dir_part(target, &tname), dn = dir_part(dst, &dname);
	bool one = tn == dn && (tname == target) == (dname == dst) && !memcmp(target, dst, tn);
	int ddir = one ? tdir : sweep__dest_dir(c, dst, &dname);
	if (ddir < 0) {
		close(tdir);
		return ddir;
	}
	if (c->o.flags & SWEEP_COPY_NO_CLOBBER) {
		rc = linkat(tdir, tname, ddir, dname, 0) < 0 ? -errno : 0;
	} else {
		rc = -EEXIST;
		for (int tries = 0; tries < 100 && rc == -EEXIST; tries++) {
			sweep__dest_tmp_name(tmp);
			rc = linkat(tdir, tname, ddir, tmp, 0) < 0 ? -errno : 0;
		}
		if (rc == 0) {
			rc = renameat(ddir, tmp, ddir, dname) < 0 ? -errno : 0;
			/* rename() of two names of one inode does nothing: the temporary stays, and goes */
			unlinkat(ddir, tmp, 0);
		}
	}
	close(tdir);
	if (!one)
		close(ddir);
	return rc;
}

mode_t sweep__dest_new_mode(const struct sweep_copy *c, uint32_t src_mode)
{
	if (c->o.flags & SWEEP_COPY_DEFAULT_MODES)
		return (mode_t)((S_ISDIR(src_mode) || S_ISSOCK(src_mode) ? 0777 : 0666) & ~c->umask);
	/* cp keeps a new directory's set-gid and sticky bits even without -p. */
	return (mode_t)(src_mode & (S_ISDIR(src_mode) ? 07777u : 0777u) & ~c->umask);
}
