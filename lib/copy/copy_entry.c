/* SPDX-License-Identifier: MIT */
/*
 * copy: one entry of any type. The checks cp makes (same file, a directory
 * in the way, no-clobber, update), then directories (made now, metadata at
 * the end), symlinks and special files (made now under a temporary name,
 * then renamed into place), hard links, and regular files (queued; see
 * copy_data.c). Every destination operation is relative to a directory
 * descriptor opened beneath the destination root (sweep__dest_dir).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_internal.h"

/* ---- helpers ---- */

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	return sweep__grow(v, cap, need, size, 16);
}

/* src and dst in one allocation; *ret_dst points into it. */
static char *dup_pair(const char *src, const char *dst, char **ret_dst)
{
	size_t ls = strlen(src) + 1, ld = strlen(dst) + 1;
	char *p = malloc(ls + ld);

	if (!p)
		return NULL;
	memcpy(p, src, ls);
	memcpy(p + ls, dst, ld);
	*ret_dst = p + ls;
	return p;
}

static bool ends_with_slash(const char *p)
{
	size_t n = strlen(p);
	return n > 0 && p[n - 1] == '/';
}

/* Make something under a fresh temporary name in dirfd; make() returns 0, -EEXIST (retry) or -errno. */
static int with_temp(int dirfd, int (*make)(int dirfd, const char *tmp, const void *arg), const void *arg,
		     char tmp[32])
{
	for (int tries = 0; tries < 100; tries++) {
		sweep__copy_tmp_name(tmp);
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

/* The source's metadata applied to the temporary tmp in dirfd, then tmp renamed onto name, reported. */
static int settle_temp(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *tmp, const char *name,
		       const char *dst, bool existed, enum sweep_copy_how how, enum sweep_copy_op op,
		       uint64_t cookie)
{
	const char *sname;
	int sdir = c->o.preserve & (SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL) ? sweep__src_dir(s, &sname) : -1;
	struct meta_ref ms = { .fd = -1, .dirfd = sdir, .name = sdir >= 0 ? sname : NULL };
	struct meta_ref md = { .fd = -1, .dirfd = dirfd, .name = tmp };
	unsigned what = c->o.preserve;

	if (sdir < 0)
		what &= ~(unsigned)(SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL);
	sweep__copy_apply_meta(c, &ms, &md, s->st, what, s->path, sweep__dst_show(c, dst), cookie);
	if (sdir >= 0)
		close(sdir);
	int rc = sweep__copy_put_in_place(c, dirfd, tmp, name);
	if (rc < 0) {
		unlinkat(dirfd, tmp, 0); /* ours: made by this run a moment ago */
		return sweep__copy_report(c, op, rc, s->path, sweep__dst_show(c, dst), cookie);
	}
	sweep__copy_done(c, s->path, sweep__dst_show(c, dst), s->st, how, 0, cookie, existed);
	return 0;
}

/* ---- hard links ---- */

static size_t link_hash(uint64_t dev, uint64_t ino, size_t cap)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^ (ino * 0xc2b2ae3d27d4eb4full);
	return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static struct lnode **link_slot(struct sweep_copy *c, uint64_t dev, uint64_t ino)
{
	size_t i = link_hash(dev, ino, c->caplinks);

	while (c->links[i] && (c->links[i]->dev != dev || c->links[i]->ino != ino))
		i = (i + 1) & (c->caplinks - 1);
	return &c->links[i];
}

static struct lnode *link_find(struct sweep_copy *c, const struct sweep_stat *st)
{
	return c->caplinks ? *link_slot(c, st->dev, st->ino) : NULL;
}

static struct lnode *link_add(struct sweep_copy *c, const struct sweep_stat *st, const char *dst)
{
	if (c->nlinks * 2 >= c->caplinks) {
		size_t ncap = c->caplinks ? c->caplinks * 2 : 64, ocap = c->caplinks;
		struct lnode **old = c->links, **nl = calloc(ncap, sizeof(*nl));
		if (!nl)
			return NULL;
		c->links = nl;
		c->caplinks = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i])
				*link_slot(c, old[i]->dev, old[i]->ino) = old[i];
		free(old);
	}
	struct lnode *n = calloc(1, sizeof(*n));
	if (!n || !(n->dst = strdup(dst))) {
		free(n);
		return NULL;
	}
	n->dev = st->dev;
	n->ino = st->ino;
	*link_slot(c, n->dev, n->ino) = n;
	c->nlinks++;
	return n;
}

void sweep__copy_links_free(struct sweep_copy *c)
{
	for (size_t i = 0; i < c->caplinks; i++) {
		struct lnode *n = c->links[i];
		if (!n)
			continue;
		for (size_t j = 0; j < n->nfol; j++)
			free(n->fol[j].src);
		free(n->fol);
		free(n->dst);
		free(n);
	}
	free(c->links);
	c->links = NULL;
	c->caplinks = c->nlinks = 0;
}

int sweep__link_replace(struct sweep_copy *c, const char *target, const char *dst)
{
	const char *tname, *dname;
	char tmp[32];
	int rc;
	int tdir = sweep__dest_dir(c, target, &tname);

	if (tdir < 0)
		return tdir;
	int ddir = sweep__dest_dir(c, dst, &dname);
	if (ddir < 0) {
		close(tdir);
		return ddir;
	}
	if (c->o.flags & SWEEP_COPY_NO_CLOBBER) {
		rc = linkat(tdir, tname, ddir, dname, 0) < 0 ? -errno : 0;
	} else {
		rc = -EEXIST;
		for (int tries = 0; tries < 100 && rc == -EEXIST; tries++) {
			sweep__copy_tmp_name(tmp);
			rc = linkat(tdir, tname, ddir, tmp, 0) < 0 ? -errno : 0;
		}
		if (rc == 0) {
			rc = renameat(ddir, tmp, ddir, dname) < 0 ? -errno : 0;
			/* rename() of two names of one inode does nothing: the temporary stays, and goes */
			unlinkat(ddir, tmp, 0);
		}
	}
	close(tdir);
	close(ddir);
	return rc;
}

static int hard_link(struct sweep_copy *c, const char *target, const char *src, const char *dst,
		     const struct sweep_stat *st, uint64_t cookie)
{
	struct stat dst_st;
	const char *name;
	int dfd = sweep__dest_dir(c, dst, &name);
	bool existed = dfd >= 0 && fstatat(dfd, name, &dst_st, AT_SYMLINK_NOFOLLOW) == 0;

	if (dfd >= 0)
		close(dfd);
	int rc = sweep__link_replace(c, target, dst);
	if (rc < 0)
		return sweep__copy_report(c, SWEEP_COPY_OP_LINK, rc, sweep__dst_show(c, target), sweep__dst_show(c, dst), cookie);
	sweep__copy_done(c, src, sweep__dst_show(c, dst), st, SWEEP_COPY_HOW_LINK, 0, cookie, existed);
	return 0;
}

void sweep__link_settle(struct sweep_copy *c, struct lnode *n, bool ok, enum sweep_copy_op op, int err)
{
	n->state = ok ? LN_DONE : LN_FAILED;
	for (size_t i = 0; i < n->nfol; i++) {
		struct follower *f = &n->fol[i];
		if (ok)
			hard_link(c, n->dst, f->src, f->dst, &f->st, f->cookie);
		else
			sweep__copy_report(c, op, err, f->src, sweep__dst_show(c, f->dst), f->cookie);
		free(f->src);
	}
	free(n->fol);
	n->fol = NULL;
	n->nfol = n->capfol = 0;
}

static int link_follow(struct sweep_copy *c, struct lnode *n, const char *src, const char *dst,
		       const struct sweep_stat *st, uint64_t cookie)
{
	if (grow((void **)&n->fol, &n->capfol, n->nfol + 1, sizeof(*n->fol)) < 0)
		return sweep__copy_report(c, SWEEP_COPY_OP_LINK, -ENOMEM, src, sweep__dst_show(c, dst), cookie);
	struct follower *f = &n->fol[n->nfol];
	if (!(f->src = dup_pair(src, dst, &f->dst)))
		return sweep__copy_report(c, SWEEP_COPY_OP_LINK, -ENOMEM, src, sweep__dst_show(c, dst), cookie);
	f->st = *st;
	f->cookie = cookie;
	n->nfol++;
	return 0;
}

/* ---- symlinks and special files: made at once ---- */

static char *read_link(const struct src_ref *s, int *err)
{
	const char *name;
	int dfd = sweep__src_dir(s, &name);
	size_t cap = s->st->size > 0 ? (size_t)s->st->size + 1 : PATH_MAX;
	char *target = NULL;

	*err = dfd;
	if (dfd < 0)
		return NULL;
	for (int tries = 0; tries < 4; tries++, cap *= 2) {
		target = realloc(target, cap);
		if (!target) {
			*err = -ENOMEM;
			break;
		}
		ssize_t n = readlinkat(dfd, name, target, cap);
		if (n < 0) {
			*err = -errno;
			break;
		}
		if ((size_t)n < cap) {
			target[n] = '\0';
			close(dfd);
			return target;
		}
	}
	if (*err >= 0)
		*err = -ENAMETOOLONG;
	free(target);
	close(dfd);
	return NULL;
}

static int copy_symlink(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name,
			const char *dst, bool existed, uint64_t cookie)
{
	char tmp[32], *owned = NULL;
	const char *target = s->link;
	int rc;

	if (!target) {
		owned = read_link(s, &rc);
		if (!owned)
			return sweep__copy_report(c, SWEEP_COPY_OP_READLINK, rc, s->path, sweep__dst_show(c, dst), cookie);
		target = owned;
	}
	rc = with_temp(dirfd, make_symlink, target, tmp);
	free(owned);
	if (rc < 0)
		return sweep__copy_report(c, SWEEP_COPY_OP_SYMLINK, rc, s->path, sweep__dst_show(c, dst), cookie);
	return settle_temp(c, s, dirfd, tmp, name, dst, existed, SWEEP_COPY_HOW_SYMLINK, SWEEP_COPY_OP_SYMLINK, cookie);
}

static int copy_special(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name,
			const char *dst, bool existed, uint64_t cookie)
{
	char tmp[32];
	int rc = with_temp(dirfd, make_special, s->st, tmp);

	if (rc < 0)
		return sweep__copy_report(c, SWEEP_COPY_OP_SPECIAL, rc, s->path, sweep__dst_show(c, dst), cookie);
	if (!(c->o.preserve & SWEEP_PRESERVE_MODE) &&
	    fchmodat(dirfd, tmp, sweep__copy_new_mode(c, s->st->mode), AT_SYMLINK_NOFOLLOW) < 0)
		sweep__copy_report(c, SWEEP_COPY_OP_META, -errno, s->path, sweep__dst_show(c, dst), cookie);
	return settle_temp(c, s, dirfd, tmp, name, dst, existed, SWEEP_COPY_HOW_SPECIAL, SWEEP_COPY_OP_SPECIAL, cookie);
}

/* ---- directories ---- */

/* The source directory's xattrs and ACLs, read now (it may not be reachable when its metadata is applied). */
static int capture_dir(struct sweep_copy *c, const struct src_ref *s, struct meta_blob **ret)
{
	const char *name;
	int dfd, fd, rc;
	bool follow = (s->flags & SWEEP_COPY_SRC_FOLLOWED) != 0;

	*ret = NULL;
	if (!(c->o.preserve & (SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL)))
		return 0;
	dfd = sweep__src_dir(s, &name);
	if (dfd < 0)
		return dfd;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	rc = fd < 0 ? -errno : 0;
	if (fd >= 0) {
		struct meta_ref r = { .fd = fd };
		rc = sweep__meta_capture(&r, c->o.preserve, true, ret);
		close(fd);
	} else if (rc == -EACCES) {
		struct meta_ref r = { .fd = -1, .dirfd = dfd, .name = name };
		rc = sweep__meta_capture(&r, c->o.preserve, true, ret);
	}
	close(dfd);
	return rc;
}

static int copy_dir(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name, const char *dst,
		    const struct stat *dst_st, uint64_t cookie)
{
	bool created = false;

	if (dst_st && !S_ISDIR(dst_st->st_mode))
		return sweep__copy_report(c, SWEEP_COPY_OP_OVERWRITE_NONDIR, 0, s->path, sweep__dst_show(c, dst), cookie);
	if (!dst_st) {
		/* Owner-only until sweep_copy_finish(): we must be able to write into it meanwhile. */
		if (mkdirat(dirfd, name, 0700) < 0)
			return sweep__copy_report(c, SWEEP_COPY_OP_MKDIR, -errno, s->path, sweep__dst_show(c, dst), cookie);
		created = true;
	}
	if (grow((void **)&c->dirs, &c->capdirs, c->ndirs + 1, sizeof(*c->dirs)) < 0)
		return sweep__copy_report(c, SWEEP_COPY_OP_MKDIR, -ENOMEM, s->path, sweep__dst_show(c, dst), cookie);
	struct dirmeta *d = &c->dirs[c->ndirs];
	memset(d, 0, sizeof(*d));
	if (!(d->src = dup_pair(s->path, dst, &d->dst)))
		return sweep__copy_report(c, SWEEP_COPY_OP_MKDIR, -ENOMEM, s->path, sweep__dst_show(c, dst), cookie);
	d->st = *s->st;
	d->created = created;
	int rc = capture_dir(c, s, &d->blob);
	if (rc < 0)
		sweep__copy_report(c, SWEEP_COPY_OP_META, rc, s->path, sweep__dst_show(c, dst), cookie);
	c->ndirs++;
	sweep__copy_done(c, s->path, sweep__dst_show(c, dst), s->st, SWEEP_COPY_HOW_DIR, 0, cookie, !created);
	return 0;
}

/* ---- one entry ---- */

/* Are the source and dst one directory entry (same directory, same name), not just one inode? */
static bool same_entry(const struct src_ref *s, int dirfd, const char *name)
{
	const char *sname;
	struct stat a, b;
	int sdir = sweep__src_dir(s, &sname);
	bool same = sdir >= 0 && !strcmp(sname, name) && fstat(sdir, &a) == 0 && fstat(dirfd, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino;

	if (sdir >= 0)
		close(sdir);
	return same;
}

/*
 * A symlink copied as a symlink onto the very file it names (cp -P d/sl d/f
 * with d/sl -> f) would replace the data with a link to itself: cp refuses
 * it as "the same file". Only looked at where a symlink meets an existing
 * non-symlink, so the stat through it is rare.
 */
static bool link_names_dst(const struct src_ref *s, const struct stat *dst_st)
{
	const char *sname;
	struct stat t;
	int sdir;
	bool same;

	if (!S_ISLNK(s->st->mode) || S_ISLNK(dst_st->st_mode) || (s->flags & SWEEP_COPY_SRC_FOLLOWED))
		return false;
	sdir = sweep__src_dir(s, &sname);
	if (sdir < 0)
		return false;
	same = fstatat(sdir, sname, &t, 0) == 0 && t.st_dev == dst_st->st_dev && t.st_ino == dst_st->st_ino;
	close(sdir);
	return same;
}

static bool older_or_same(const struct sweep_stat *s, const struct stat *d)
{
	return s->mtime_sec < (int64_t)d->st_mtim.tv_sec ||
	       (s->mtime_sec == (int64_t)d->st_mtim.tv_sec && s->mtime_nsec <= (uint32_t)d->st_mtim.tv_nsec);
}

/*
 * The checks and the dispatch. place is where a regular file's copy goes
 * when it is not dst (a destination symlink written through), else NULL;
 * dst_st is what stands at dst (or at place), NULL for nothing.
 */
static int entry_checked(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name,
			 const char *dst, const char *place, const struct stat *dst_st, uint64_t cookie, bool top)
{
	const struct sweep_stat *st = s->st;
	mode_t mode = (mode_t)st->mode;
	bool check = !(c->o.flags & SWEEP_COPY_NO_SAME_FILE_CHECK);

	/* cp --remove-destination replaces another hard link of the source with a copy. */
	if (dst_st && check && (uint64_t)dst_st->st_dev == st->dev && (uint64_t)dst_st->st_ino == st->ino &&
	    !((c->o.flags & SWEEP_COPY_REMOVE_DEST) && S_ISREG(mode) && !same_entry(s, dirfd, name)))
		return sweep__copy_report(c, S_ISDIR(mode) ? SWEEP_COPY_OP_INTO_SELF : SWEEP_COPY_OP_SAME_FILE, 0, s->path,
				   sweep__dst_show(c, dst), cookie);
	if (dst_st && check && link_names_dst(s, dst_st))
		return sweep__copy_report(c, SWEEP_COPY_OP_SAME_FILE, 0, s->path, sweep__dst_show(c, dst), cookie);
	if (S_ISDIR(mode))
		return copy_dir(c, s, dirfd, name, dst, dst_st, cookie);
	if (dst_st && S_ISDIR(dst_st->st_mode))
		return sweep__copy_report(c, SWEEP_COPY_OP_OVERWRITE_DIR, 0, s->path, sweep__dst_show(c, dst), cookie);

	/*
	 * Hard links are kept for inodes with several names, and, as cp does,
	 * for any inode reached through a symlink that may name it twice: every
	 * file with -L, the operands with -H (or cp's default without -r).
	 */
	bool track = (c->o.flags & SWEEP_COPY_LINKS) && !place &&
		     (st->nlink > 1 || (c->o.flags & SWEEP_COPY_DEREF_ALL) || (top && (c->o.flags & SWEEP_COPY_DEREF_ROOTS)));
	struct lnode *ln = track ? link_find(c, st) : NULL;
	if (dst_st && (c->o.flags & SWEEP_COPY_NO_CLOBBER)) {
		sweep__copy_done(c, s->path, sweep__dst_show(c, dst), st, SWEEP_COPY_HOW_SKIPPED, 0, cookie, true);
		return 0;
	}
	if (dst_st && (c->o.flags & SWEEP_COPY_UPDATE) && older_or_same(st, dst_st)) {
		/*
		 * Left alone, but still a name of its inode (cp -u): a later name
		 * links to it, and an earlier copy takes its place, so a group of
		 * hard links stays one inode in an existing tree.
		 */
		if (ln && ln->state == LN_DONE)
			return hard_link(c, ln->dst, s->path, dst, st, cookie);
		if (ln && ln->state == LN_PENDING)
			return link_follow(c, ln, s->path, dst, st, cookie);
		if (track && !ln && (ln = link_add(c, st, dst)))
			ln->state = LN_DONE;
		else if (ln && ln->state == LN_FAILED) {
			char *d = strdup(dst);
			if (d) {
				free(ln->dst);
				ln->dst = d;
				ln->state = LN_DONE;
			}
		}
		sweep__copy_done(c, s->path, sweep__dst_show(c, dst), st, SWEEP_COPY_HOW_SKIPPED, 0, cookie, true);
		return 0;
	}

	const char *link_name = place ? place : dst;
	if (track) {
		if (ln && ln->state == LN_DONE)
			return hard_link(c, ln->dst, s->path, dst, st, cookie);
		if (ln && ln->state == LN_PENDING)
			return link_follow(c, ln, s->path, dst, st, cookie);
		if (!ln && !(ln = link_add(c, st, link_name)))
			return sweep__copy_report(c, SWEEP_COPY_OP_LINK, -ENOMEM, s->path, sweep__dst_show(c, dst), cookie);
		free(ln->dst); /* a failed first copy: this name takes its place */
		if (!(ln->dst = strdup(link_name)))
			return sweep__copy_report(c, SWEEP_COPY_OP_LINK, -ENOMEM, s->path, sweep__dst_show(c, dst), cookie);
		ln->state = LN_PENDING;
	}

	int rc;
	if (S_ISREG(mode))
		return sweep__copy_enqueue(c, s, dst, place, dst_st, ln, cookie);
	if (S_ISLNK(mode))
		rc = copy_symlink(c, s, dirfd, name, dst, dst_st != NULL, cookie);
	else
		rc = copy_special(c, s, dirfd, name, dst, dst_st != NULL, cookie);
	if (ln)
		sweep__link_settle(c, ln, rc == 0, SWEEP_COPY_OP_LINK, rc);
	return rc;
}

/* cp writes a regular file through a symlink it finds at the destination it was NAMED: where does it go? */
static int write_through(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name,
			 const char *dst, struct stat *dst_st, char **ret_place)
{
	char at[64 + NAME_MAX];
	struct stat tst;

	*ret_place = NULL;
	if (fstatat(dirfd, name, &tst, 0) < 0) {
		if (errno == ENOENT)
			return sweep__copy_report(c, SWEEP_COPY_OP_DANGLING, 0, s->path, sweep__dst_show(c, dst), 0);
		return sweep__copy_report(c, SWEEP_COPY_OP_CREATE, -errno, s->path, sweep__dst_show(c, dst), 0);
	}
	/* cp replaces the symlink instead when it keeps hard links and the target has others. */
	if ((c->o.flags & SWEEP_COPY_LINKS) && tst.st_nlink > 1)
		return 0;
	*ret_place = realpath(sweep__meta_at_path(dirfd, name, at, sizeof(at)), NULL);
	if (!*ret_place)
		return sweep__copy_report(c, SWEEP_COPY_OP_CREATE, -errno, s->path, sweep__dst_show(c, dst), 0);
	*dst_st = tst;
	return 0;
}

int sweep__copy_entry_ref(struct sweep_copy *c, const struct src_ref *s, const char *dst, uint64_t cookie, bool top)
{
	struct stat dst_st;
	const char *name;
	char *place = NULL;
	int dirfd, rc;

	if (sweep__copy_stopped(c))
		return c->stop;
	if (!S_ISDIR(s->st->mode) && ends_with_slash(dst))
		return sweep__copy_report(c, SWEEP_COPY_OP_CREATE, -ENOTDIR, s->path, sweep__dst_show(c, dst), cookie);
	dirfd = sweep__dest_dir(c, dst, &name);
	if (dirfd < 0) {
		enum sweep_copy_op op = S_ISDIR(s->st->mode) ? SWEEP_COPY_OP_MKDIR
				      : S_ISREG(s->st->mode) ? SWEEP_COPY_OP_CREATE
				      : S_ISLNK(s->st->mode) ? SWEEP_COPY_OP_SYMLINK : SWEEP_COPY_OP_SPECIAL;
		return sweep__copy_report(c, op, dirfd, s->path, sweep__dst_show(c, dst), cookie);
	}
	bool exists = fstatat(dirfd, name, &dst_st, AT_SYMLINK_NOFOLLOW) == 0;
	if (exists && top && S_ISLNK(dst_st.st_mode) && S_ISREG(s->st->mode) &&
	    (c->o.flags & (SWEEP_COPY_WRITE_THROUGH | SWEEP_COPY_REMOVE_DEST)) == SWEEP_COPY_WRITE_THROUGH) {
		rc = write_through(c, s, dirfd, name, dst, &dst_st, &place);
		if (rc < 0) {
			close(dirfd);
			return rc;
		}
	}
	rc = entry_checked(c, s, dirfd, name, dst, place, exists ? &dst_st : NULL, cookie, top);
	free(place);
	close(dirfd);
	return rc;
}

SWEEP_EXPORT int sweep_copy_entry(struct sweep_copy *c, const struct sweep_copy_src *src, const char *dst,
				  uint64_t cookie)
{
	struct sweep_copy_src in;
	struct sweep_stat sst;
	struct src_ref s;
	int rc;

	if (!c || !dst || !*dst)
		return -EINVAL;
	rc = sweep__opts_copy(&in, sizeof(in), src, offsetof(struct sweep_copy_src, flags) + sizeof(unsigned));
	if (rc < 0 || !src || !in.rel || !in.path || (in.root_fd < 0 && in.root_fd != AT_FDCWD))
		return rc < 0 ? rc : -EINVAL;
	if (sweep__flags_check(in.flags, SWEEP_COPY_SRC_FOLLOWED) < 0)
		return -EINVAL;
	if (c->dest_fd < 0)
		return -EBADF;
	s = (struct src_ref){ .dirfd = -1, .root_fd = in.root_fd, .rel = in.rel, .path = in.path, .st = in.st,
			      .link = in.link, .flags = in.flags };
	if (!s.st) {
		struct stat st;
		bool follow = in.flags & SWEEP_COPY_SRC_FOLLOWED;
		int fd = in.root_fd == AT_FDCWD ? open(in.rel, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW))
						: sweep__open_beneath(in.root_fd, in.rel, O_PATH, 0);
		if (fd < 0 && in.root_fd == AT_FDCWD)
			fd = -errno;
		if (fd < 0)
			return sweep__copy_report(c, SWEEP_COPY_OP_STAT, fd, in.path, NULL, cookie);
		rc = fstat(fd, &st) < 0 ? -errno : 0;
		close(fd);
		if (rc < 0)
			return sweep__copy_report(c, SWEEP_COPY_OP_STAT, rc, in.path, NULL, cookie);
		sweep_stat_from_stat(&sst, &st);
		s.st = &sst;
	}
	if (in.root_fd == AT_FDCWD)
		s.path = in.path;
	return sweep__copy_entry_ref(c, &s, dst, cookie, false);
}
