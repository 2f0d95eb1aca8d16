/* SPDX-License-Identifier: MIT */
/*
 * copy: the destination operations a sync-like caller needs besides
 * copying (remove, hard link, lstat, chmod, metadata only), with the
 * engine's rule: below the destination root, never through a symlink.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_internal.h"

static int rm_at(int dirfd, const char *name, bool is_dir);

/* Remove everything in the open directory fd (which this takes over). */
static int rm_dir_contents(int fd)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int e = rm_at(dirfd(d), de->d_name, de->d_type == DT_DIR);
		if (e < 0 && !r)
			r = e;
	}
	closedir(d);
	return r;
}

static int rm_at(int dirfd, const char *name, bool is_dir)
{
	if (!is_dir && unlinkat(dirfd, name, 0) == 0)
		return 0;
	if (!is_dir && errno != EISDIR)
		return -errno;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = rm_dir_contents(fd);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && !r)
		r = -errno;
	return r;
}

SWEEP_EXPORT int sweep_copy_remove(struct sweep_copy *c, const char *dst, unsigned flags)
{
	const char *name;
	struct stat st;
	int dfd, r;

	if (!c || !dst || !*dst || sweep__flags_check(flags, SWEEP_COPY_REMOVE_TREE) < 0)
		return -EINVAL;
	if (!strcmp(dst, "."))
		return -EBUSY; /* the destination root itself stays */
	dfd = sweep__dest_dir(c, dst, &name);
	if (dfd < 0)
		return dfd;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	else if (!S_ISDIR(st.st_mode))
		r = unlinkat(dfd, name, 0) < 0 ? -errno : 0;
	else if (flags & SWEEP_COPY_REMOVE_TREE)
		r = rm_at(dfd, name, true);
	else
		r = unlinkat(dfd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
	close(dfd);
	return r;
}

SWEEP_EXPORT int sweep_copy_link(struct sweep_copy *c, const char *target, const char *dst)
{
	if (!c || !target || !dst || !*target || !*dst)
		return -EINVAL;
	return sweep__dest_link(c, target, dst);
}

SWEEP_EXPORT int sweep_copy_stat(struct sweep_copy *c, const char *dst, struct sweep_stat *ret)
{
	const char *name;
	struct stat st;
	int dfd, r;

	if (!c || !dst || !*dst || !ret)
		return -EINVAL;
	dfd = sweep__dest_dir(c, dst, &name);
	if (dfd < 0)
		return dfd;
	r = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	close(dfd);
	if (r == 0)
		sweep_stat_from_stat(ret, &st);
	return r;
}

SWEEP_EXPORT int sweep_copy_chmod(struct sweep_copy *c, const char *dst, unsigned mode)
{
	const char *name;
	struct stat st;
	int dfd, r;

	if (!c || !dst || !*dst)
		return -EINVAL;
	dfd = sweep__dest_dir(c, dst, &name);
	if (dfd < 0)
		return dfd;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	else if (S_ISLNK(st.st_mode))
		r = -ELOOP;
	else
		r = sweep__chmod_nofollow(dfd, name, (mode_t)(mode & 07777));
	close(dfd);
	return r;
}

/* An object's own descriptor when it has one worth opening (files, directories), else -1: use dirfd/name. */
static int open_self(int dirfd, const char *name, mode_t mode, bool follow)
{
	if (!S_ISREG(mode) && !S_ISDIR(mode))
		return -1;
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	return fd < 0 ? -1 : fd;
}

/* Apply to dst (in ddir) the metadata of the source ms, whose stat is st; the count of failed steps. */
static int attrs_apply(struct sweep_copy *c, const struct meta_ref *ms, int ddir, const char *dname, const char *dst,
		       const struct sweep_stat *st, const char *path, unsigned preserve, unsigned flags, uint64_t cookie)
{
	struct stat dst_st;

	if (fstatat(ddir, dname, &dst_st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	int dfd = open_self(ddir, dname, dst_st.st_mode, false);
	struct meta_ref md = { .fd = dfd, .dirfd = ddir, .name = dname };
	if (flags & SWEEP_COPY_ATTRS_EXACT)
		sweep__meta_prune(ms, &md, preserve & SWEEP_PRESERVE_XATTR, (preserve & SWEEP_PRESERVE_ACL) && !S_ISLNK(st->mode),
				  preserve & SWEEP_PRESERVE_FAKE_SUPER, &c->o);
	uint64_t before = c->stats.errors;
	sweep__report_apply_meta(c, ms, &md, st, preserve, path, sweep__dst_show(c, dst), cookie);
	if (dfd >= 0)
		close(dfd);
	return (int)(c->stats.errors - before);
}

SWEEP_EXPORT int sweep_copy_attrs(struct sweep_copy *c, const struct sweep_copy_src *src, const char *dst,
				  unsigned preserve, unsigned flags, uint64_t cookie)
{
	struct sweep_copy_src in;
	struct stat sst;
	struct sweep_stat st;
	const char *sname, *dname;
	int rc;

	if (!c || !dst || !*dst || sweep__flags_check(flags, SWEEP_COPY_ATTRS_EXACT) < 0 ||
	    sweep__flags_check(preserve, KNOWN_PRESERVE) < 0)
		return -EINVAL;
	rc = sweep__opts_copy(&in, sizeof(in), src, offsetof(struct sweep_copy_src, flags) + sizeof(unsigned));
	if (rc < 0 || !src)
		return rc < 0 ? rc : -EINVAL;
	if (in.flags & SWEEP_COPY_SRC_SUPPLIED) {
		/* Described, not read: its attributes are those given. */
		struct meta_blob *blob = NULL;
		if (!in.path || !in.st || (in.nxattrs && !in.xattrs))
			return -EINVAL;
		rc = sweep__meta_blob_from(in.xattrs, in.nxattrs, preserve, S_ISDIR(in.st->mode), &blob);
		int ddir = rc < 0 ? rc : sweep__dest_dir(c, dst, &dname);
		if (ddir < 0) {
			sweep__meta_blob_free(blob);
			return ddir;
		}
		struct meta_ref ms = { .fd = -1, .blob = blob };
		unsigned what = blob ? preserve : preserve & ~(unsigned)(SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL);
		rc = attrs_apply(c, &ms, ddir, dname, dst, in.st, in.path, what, flags, cookie);
		sweep__meta_blob_free(blob);
		close(ddir);
		return rc < 0 || !sweep__copy_stopped(c) ? rc : c->stop;
	}
	if (!in.rel || !in.path || (in.root_fd < 0 && in.root_fd != AT_FDCWD))
		return -EINVAL;
	bool follow = in.flags & SWEEP_COPY_SRC_FOLLOWED;
	struct src_ref s = { .dirfd = -1, .root_fd = in.root_fd, .rel = in.rel, .path = in.path };
	int sdir = sweep__src_dir(&s, &sname);
	if (sdir < 0)
		return sdir;
	if (fstatat(sdir, sname, &sst, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0) {
		rc = -errno;
		close(sdir);
		return rc;
	}
	if (in.st)
		st = *in.st;
	else
		sweep_stat_from_stat(&st, &sst);
	int ddir = sweep__dest_dir(c, dst, &dname);
	if (ddir < 0) {
		close(sdir);
		return ddir;
	}
	int sfd = open_self(sdir, sname, sst.st_mode, follow);
	struct meta_ref ms = { .fd = sfd, .dirfd = sdir, .name = sname };
	rc = attrs_apply(c, &ms, ddir, dname, dst, &st, in.path, preserve, flags, cookie);
	if (sfd >= 0)
		close(sfd);
	close(sdir);
	close(ddir);
	return rc < 0 || !sweep__copy_stopped(c) ? rc : c->stop;
}
