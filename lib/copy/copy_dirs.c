/* SPDX-License-Identifier: MIT */
/*
 * copy: directory metadata, deferred to the end. A directory is made
 * owner-only (we write into it meanwhile) and gets its mode, owner, times,
 * xattrs and ACLs once everything in it is done, deepest first, so that
 * nothing copied into it afterwards moves its times. The source's xattrs
 * and ACLs are captured when the directory is met: it may not be reachable
 * by then.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_internal.h"

/* May the directory's attributes be read by name (no descriptor of its own), as the walk met it? */
static bool by_name_ok(int dfd, const char *name, bool follow)
{
	struct stat st;

	/* By name nothing is followed: a followed source only where no symlink stands there. */
	return !follow || (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode));
}

/* The source directory's xattrs and ACLs, read now (on the caller's thread). */
static int capture(struct sweep_copy *c, const struct src_ref *s, struct meta_blob **ret)
{
	const char *name;
	int dfd, fd, rc;
	bool follow = (s->flags & SWEEP_COPY_SRC_FOLLOWED) != 0;

	*ret = NULL;
	if (!(c->o.preserve & (SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL)))
		return 0;
	if (s->flags & SWEEP_COPY_SRC_SUPPLIED)
		return sweep__meta_blob_from(s->xattrs, s->nxattrs, c->o.preserve, true, ret);
	/* The walk's descriptor of its directory as it is (not a copy of it): one descriptor fewer under a low limit. */
	bool own = s->dirfd < 0;
	dfd = own ? sweep__src_dir(s, &name) : s->dirfd;
	if (!own)
		name = s->name;
	if (dfd < 0)
		return dfd;
	int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
	fd = openat(dfd, name, flags);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && sweep__fds_give_back(c))
		fd = openat(dfd, name, flags);
	rc = fd < 0 ? -errno : 0;
	if (fd >= 0) {
		struct meta_ref r = { .fd = fd };
		rc = sweep__meta_capture(&r, c->o.preserve, true, ret);
		close(fd);
	} else if (rc == -EACCES || ((rc == -EMFILE || rc == -ENFILE) && by_name_ok(dfd, name, follow))) {
		/* Not readable to us, or no descriptor left under a low limit: by name, as it stands. */
		struct meta_ref r = { .fd = -1, .dirfd = dfd, .name = name };
		rc = sweep__meta_capture(&r, c->o.preserve, true, ret);
	}
	if (own)
		close(dfd);
	return rc;
}

int sweep__dirs_add(struct sweep_copy *c, const struct src_ref *s, const char *dst, bool created, int *capture_err)
{
	size_t ls = strlen(s->path) + 1, ld = strlen(dst) + 1;

	if (sweep__grow(&c->dirs, &c->capdirs, c->ndirs + 1, sizeof(*c->dirs), 16) < 0)
		return -ENOMEM;
	struct dirmeta *d = &c->dirs[c->ndirs];
	memset(d, 0, sizeof(*d));
	if (!(d->src = malloc(ls + ld)))
		return -ENOMEM;
	memcpy(d->src, s->path, ls);
	d->dst = d->src + ls;
	memcpy(d->dst, dst, ld);
	d->st = *s->st;
	d->created = created;
	c->ndirs++;
	if (created)
		sweep__fresh_add(c, c->ndirs - 1);
	*capture_err = capture(c, s, &d->blob);
	return 0;
}

static void apply(struct sweep_copy *c, const struct dirmeta *d)
{
	const char *name;
	bool root = !strcmp(d->dst, ".");
	int dfd = sweep__dest_dir(c, d->dst, &name), fd = -1;

	if (dfd >= 0) {
		if (root)
			name = ".";
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == EACCES) /* not readable to us: its metadata still changes by name */
			fd = -2;
	}
	if (dfd < 0 || fd == -1) {
		sweep__report(c, SWEEP_COPY_OP_META, dfd < 0 ? dfd : -errno, d->src, sweep__dst_show(c, d->dst), 0);
	} else {
		struct meta_ref ms = { .fd = -1, .blob = d->blob };
		struct meta_ref md = { .fd = fd >= 0 ? fd : -1, .dirfd = dfd, .name = name };
		unsigned what = c->o.preserve;
		if (!d->blob) /* the source's could not be read when it was met (reported then) */
			what &= ~(unsigned)(SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL);
		if (!(what & SWEEP_PRESERVE_MODE) && d->created) {
			mode_t m = sweep__dest_new_mode(c, d->st.mode);
			int rc = fd >= 0 ? (fchmod(fd, m) < 0 ? -errno : 0) : sweep__chmod_nofollow(dfd, name, m);
			if (rc < 0)
				sweep__report(c, SWEEP_COPY_OP_META, rc, d->src, sweep__dst_show(c, d->dst), 0);
		}
		sweep__report_apply_meta(c, &ms, &md, &d->st, what, d->src, sweep__dst_show(c, d->dst), 0);
	}
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
}

void sweep__dirs_apply(struct sweep_copy *c)
{
	if (c->ndirs)
		sweep__report_step(c, SWEEP_COPY_STEP_FINISH, NULL, NULL, 0);
	/* Deepest (last made) first: a directory's times are set after everything in it changed. */
	for (size_t i = c->ndirs; i-- > 0 && !sweep__copy_stopped(c);)
		apply(c, &c->dirs[i]);
	sweep__dirs_free(c);
}

void sweep__dirs_free(struct sweep_copy *c)
{
	for (size_t i = 0; i < c->ndirs; i++) {
		free(c->dirs[i].src);
		c->dirs[i].blob = sweep__meta_blob_free(c->dirs[i].blob);
	}
	c->ndirs = 0;
}
