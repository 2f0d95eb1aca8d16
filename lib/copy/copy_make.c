/* SPDX-License-Identifier: MIT */
/*
 * copy: what is made at once, without data to read. Directories (made
 * now, their metadata at the end: copy_dirs.c), symlinks and special files
 * (made under a temporary name in their directory, given their metadata,
 * then renamed into place), and hard links to a copy already in place.
 * Each is reported, done or failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_internal.h"

static bool same_dir(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Make something under a fresh temporary name in dirfd; make() returns 0, -EEXIST (retry) or -errno. */
static int with_temp(int dirfd, int (*make)(int dirfd, const char *tmp, const void *arg), const void *arg,
		     char tmp[32])
{
	for (int tries = 0; tries < 100; tries++) {
		sweep__dest_tmp_name(tmp);
		int rc = make(dirfd, tmp, arg);
		if (rc != -EEXIST)
			return rc;
	}
	return -EEXIST;
}

static int make_symlink(int dirfd, const char *tmp, const void *arg)
{
	return symlinkat(arg, dirfd, tmp) < 0 ? -errno : 0;
}

static int make_special(int dirfd, const char *tmp, const void *arg)
{
	const struct sweep_stat *st = arg;
	return mknodat(dirfd, tmp, (mode_t)((st->mode & S_IFMT) | 0600), (dev_t)st->rdev) < 0 ? -errno : 0;
}

/* --fake-super: a placeholder file instead (holding a symlink's target); its stat xattr is written with the metadata */
static int make_fake_link(int dirfd, const char *tmp, const void *arg)
{
	return sweep__fake_make(dirfd, tmp, arg);
}

static int make_fake_special(int dirfd, const char *tmp, const void *arg)
{
	(void)arg;
	return sweep__fake_make(dirfd, tmp, NULL);
}

/* The finished temporary tmp (in dirfd) onto name, after the backup of what stands there; reported. */
static int put_temp(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *tmp, const char *name,
		    const char *dst, bool existed, enum sweep_copy_how how, enum sweep_copy_op op, uint64_t cookie)
{
	char *bk = NULL;
	int rc = existed ? sweep__dest_backup(c, dirfd, name, &bk) : 0;

	if (rc < 0) {
		unlinkat(dirfd, tmp, 0); /* ours: made by this run a moment ago */
		return sweep__report(c, SWEEP_COPY_OP_BACKUP, rc, s->path, sweep__dst_show(c, dst), cookie);
	}
	rc = sweep__dest_put(c, dirfd, tmp, name);
	if (rc < 0) {
		unlinkat(dirfd, tmp, 0);
		free(bk);
		return sweep__report(c, op, rc, s->path, sweep__dst_show(c, dst), cookie);
	}
	char *shown = sweep__dest_backup_show(c, dst, bk);
	sweep__report_done_backup(c, s->path, sweep__dst_show(c, dst), s->st, how, 0, cookie, existed, shown);
	free(shown);
	free(bk);
	return 0;
}

/* The source's metadata applied to the temporary tmp in dirfd, then tmp renamed onto name, reported. */
static int settle_temp(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *tmp, const char *name,
		       const char *dst, bool existed, enum sweep_copy_how how, enum sweep_copy_op op,
		       uint64_t cookie)
{
	const char *sname;
	bool attrs = c->o.preserve & (SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL);
	bool supplied = s->flags & SWEEP_COPY_SRC_SUPPLIED;
	int closeme = -1;
	int sdir = attrs && !supplied ? sweep__src_dir_at(s, &sname, &closeme) : -1;
	struct meta_blob *blob = NULL;
	int brc = attrs && supplied ? sweep__meta_blob_from(s->xattrs, s->nxattrs, c->o.preserve, false, &blob) : 0;
	struct meta_ref ms = { .fd = -1, .dirfd = sdir, .name = sdir >= 0 ? sname : NULL, .blob = blob };
	struct meta_ref md = { .fd = -1, .dirfd = dirfd, .name = tmp };
	unsigned what = c->o.preserve;

	if (sdir < 0 && !blob)
		what &= ~(unsigned)(SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL);
	if (brc < 0)
		sweep__report_meta(c, SWEEP_COPY_META_XATTR, brc, s->path, sweep__dst_show(c, dst), cookie);
	sweep__report_apply_meta(c, &ms, &md, s->st, what, s->path, sweep__dst_show(c, dst), cookie);
	sweep__meta_blob_free(blob);
	if (closeme >= 0)
		close(closeme);
	return put_temp(c, s, dirfd, tmp, name, dst, existed, how, op, cookie);
}

static char *read_link(const struct src_ref *s, int *err)
{
	const char *name;
	int closeme;
	int dfd = sweep__src_dir_at(s, &name, &closeme);
	size_t cap = s->st->size > 0 ? (size_t)s->st->size + 1 : PATH_MAX;
	char *target = NULL;

	*err = dfd;
	if (dfd < 0)
		return NULL;
	for (int tries = 0; tries < 4; tries++, cap *= 2) {
		char *t = realloc(target, cap);
		if (!t) {
			*err = -ENOMEM;
			break;
		}
		target = t;
		ssize_t n = readlinkat(dfd, name, target, cap);
		if (n < 0) {
			*err = -errno;
			break;
		}
		if ((size_t)n < cap) {
			target[n] = '\0';
			if (closeme >= 0)
				close(closeme);
			return target;
		}
	}
	if (*err >= 0)
		*err = -ENAMETOOLONG;
	free(target);
	if (closeme >= 0)
		close(closeme);
	return NULL;
}

int sweep__make_symlink(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name, const char *dst,
			bool existed, uint64_t cookie)
{
	char tmp[32], *owned = NULL;
	const char *target = s->link;
	int rc;

	if (!target) {
		owned = read_link(s, &rc);
		if (!owned)
			return sweep__report(c, SWEEP_COPY_OP_READLINK, rc, s->path, sweep__dst_show(c, dst), cookie);
		target = owned;
	}
	rc = with_temp(dirfd, (c->o.preserve & SWEEP_PRESERVE_FAKE_SUPER) ? make_fake_link : make_symlink, target, tmp);
	free(owned);
	if (rc < 0)
		return sweep__report(c, SWEEP_COPY_OP_SYMLINK, rc, s->path, sweep__dst_show(c, dst), cookie);
	return settle_temp(c, s, dirfd, tmp, name, dst, existed, SWEEP_COPY_HOW_SYMLINK, SWEEP_COPY_OP_SYMLINK, cookie);
}

int sweep__make_special(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name, const char *dst,
			bool existed, uint64_t cookie)
{
	char tmp[32];
	bool fake = c->o.preserve & SWEEP_PRESERVE_FAKE_SUPER;
	int rc = with_temp(dirfd, fake ? make_fake_special : make_special, s->st, tmp);

	if (rc < 0)
		return sweep__report(c, SWEEP_COPY_OP_SPECIAL, rc, s->path, sweep__dst_show(c, dst), cookie);
	if (!(c->o.preserve & SWEEP_PRESERVE_MODE) &&
	    (rc = sweep__chmod_nofollow(dirfd, tmp, sweep__dest_new_mode(c, s->st->mode))) < 0)
		sweep__report(c, SWEEP_COPY_OP_META, rc, s->path, sweep__dst_show(c, dst), cookie);
	return settle_temp(c, s, dirfd, tmp, name, dst, existed, SWEEP_COPY_HOW_SPECIAL, SWEEP_COPY_OP_SPECIAL, cookie);
}

int sweep__make_dir(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name, const char *dst,
		    const struct stat *dst_st, uint64_t cookie)
{
	bool created = false;

	if (dst_st && !S_ISDIR(dst_st->st_mode))
		return sweep__report(c, SWEEP_COPY_OP_OVERWRITE_NONDIR, 0, s->path, sweep__dst_show(c, dst), cookie);
	if (!dst_st) {
		/* Owner-only until sweep_copy_finish(): we must be able to write into it meanwhile. */
		if (mkdirat(dirfd, name, 0700) < 0)
			return sweep__report(c, SWEEP_COPY_OP_MKDIR, -errno, s->path, sweep__dst_show(c, dst), cookie);
		created = true;
	}
	int cerr = 0, rc = sweep__dirs_add(c, s, dst, created, &cerr);
	if (rc < 0)
		return sweep__report(c, SWEEP_COPY_OP_MKDIR, rc, s->path, sweep__dst_show(c, dst), cookie);
	if (cerr < 0)
		sweep__report(c, SWEEP_COPY_OP_META, cerr, s->path, sweep__dst_show(c, dst), cookie);
	sweep__report_done(c, s->path, sweep__dst_show(c, dst), s->st, SWEEP_COPY_HOW_DIR, 0, cookie, !created);
	return 0;
}

static int make_link(struct sweep_copy *c, const char *target, const char *src, const char *dst,
		     const struct sweep_stat *st, uint64_t cookie, bool may_defer)
{
	struct stat dst_st, tst;
	const char *name, *tname;
	char *bk = NULL;
	/* Not deferred (the plan, or the batch is done): nothing borrowed from the cache is held, it may go. */
	int dfd = may_defer ? sweep__dest_dir(c, dst, &name) : sweep__dest_dir_mine(c, dst, &name), rc = 0;
	bool existed = dfd >= 0 && fstatat(dfd, name, &dst_st, AT_SYMLINK_NOFOLLOW) == 0;

	/* Kept where it is not the copy's inode already (a name left alone by -u, linked again). */
	if (existed && c->o.backup != SWEEP_COPY_BACKUP_NONE) {
		int tdir = sweep__dest_dir(c, target, &tname);
		bool same = tdir >= 0 && fstatat(tdir, tname, &tst, AT_SYMLINK_NOFOLLOW) == 0 &&
			    tst.st_dev == dst_st.st_dev && tst.st_ino == dst_st.st_ino;
		if (tdir >= 0)
			close(tdir);
		if (!same)
			rc = sweep__dest_backup(c, dfd, name, &bk);
	}
	if (dfd >= 0)
		close(dfd);
	if (rc < 0)
		return sweep__report(c, SWEEP_COPY_OP_BACKUP, rc, src, sweep__dst_show(c, dst), cookie);
	rc = sweep__dest_link(c, target, dst);
	if ((rc == -EMFILE || rc == -ENFILE) && !may_defer && sweep__fds_give_back(c))
		rc = sweep__dest_link(c, target, dst); /* (two directories at once) */
	if ((rc == -EMFILE || rc == -ENFILE) && may_defer && !bk)
		return rc; /* nothing changed yet: the caller tries again when descriptors are back */
	if (rc < 0) {
		char *shown = strdup(sweep__dst_show(c, target)); /* the next call reuses the buffer */
		sweep__report(c, SWEEP_COPY_OP_LINK, rc, shown ? shown : target, sweep__dst_show(c, dst), cookie);
		free(shown);
		free(bk);
		return rc;
	}
	char *shown = sweep__dest_backup_show(c, dst, bk);
	sweep__report_done_backup(c, src, sweep__dst_show(c, dst), st, SWEEP_COPY_HOW_LINK, 0, cookie, existed, shown);
	free(shown);
	free(bk);
	return 0;
}

int sweep__make_link(struct sweep_copy *c, const char *target, const char *src, const char *dst,
		     const struct sweep_stat *st, uint64_t cookie)
{
	return make_link(c, target, src, dst, st, cookie, false);
}

int sweep__make_link_or_defer(struct sweep_copy *c, const char *target, const char *src, const char *dst,
			      const struct sweep_stat *st, uint64_t cookie)
{
	return make_link(c, target, src, dst, st, cookie, true);
}

/*
 * dst made a hard link to the source itself (cp -l), or a symlink to the
 * source's path (cp -s): at once where nothing stands there, else under a
 * temporary name put in place, where the caller may replace what stands
 * there (replace) or it is kept as a backup; else it is an error, as cp's.
 */
int sweep__make_to_source(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name,
			  const char *dst, bool exists, bool replace, bool symbolic, uint64_t cookie)
{
	enum sweep_copy_op op = symbolic ? SWEEP_COPY_OP_LINK_SYMBOLIC : SWEEP_COPY_OP_LINK;
	const char *sname = NULL;
	char tmp[32];
	int sdir = -1, closeme = -1, rc;

	if (symbolic && s->path[0] != '/') {
		/* A relative target only names the source from the current directory. */
		struct stat here, there;
		if (stat(".", &here) == 0 && fstat(dirfd, &there) == 0 && !same_dir(&here, &there))
			return sweep__report(c, SWEEP_COPY_OP_LINK_RELATIVE, 0, s->path, sweep__dst_show(c, dst), cookie);
	}
	if (!symbolic && (sdir = sweep__src_dir_at(s, &sname, &closeme)) < 0)
		return sweep__report(c, op, sdir, s->path, sweep__dst_show(c, dst), cookie);
	int follow = (s->flags & SWEEP_COPY_SRC_FOLLOWED) ? AT_SYMLINK_FOLLOW : 0;
	const char *at = exists ? tmp : name;
	if (exists && !replace && c->o.backup == SWEEP_COPY_BACKUP_NONE) {
		rc = -EEXIST;
	} else {
		rc = -EEXIST;
		for (int tries = 0; tries < 100 && rc == -EEXIST; tries++) {
			if (exists)
				sweep__dest_tmp_name(tmp);
			rc = (symbolic ? symlinkat(s->path, dirfd, at) : linkat(sdir, sname, dirfd, at, follow)) < 0 ? -errno : 0;
			if (!exists)
				break;
		}
	}
	if (closeme >= 0)
		close(closeme);
	if (rc < 0)
		return sweep__report(c, op, rc, s->path, sweep__dst_show(c, dst), cookie);
	if (!exists) {
		sweep__report_done(c, s->path, sweep__dst_show(c, dst), s->st,
				   symbolic ? SWEEP_COPY_HOW_SYMLINK : SWEEP_COPY_HOW_LINK, 0, cookie, false);
		return 0;
	}
	return put_temp(c, s, dirfd, tmp, name, dst, true, symbolic ? SWEEP_COPY_HOW_SYMLINK : SWEEP_COPY_HOW_LINK, op,
			cookie);
}
