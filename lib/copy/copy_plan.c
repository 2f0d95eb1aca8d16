/* SPDX-License-Identifier: MIT */
/*
 * copy, stage 1 of 4 (plan): one source entry of any type. The checks cp
 * makes against what stands at the destination (the same file, a directory
 * in the way, no-clobber, update, hard links), then: directories, symlinks,
 * special files and links to a copy already made are made at once
 * (copy_make.c); a regular file is queued into the batch, which reads it
 * in disk order (copy_read.c) when it is full or flushed. Every destination
 * operation is relative to a directory descriptor opened beneath the
 * destination root (sweep__dest_dir).
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

/* src_ref.flags, internal: a FIFO or device named without -r, its data read as a stream (cp /dev/null f). */
#define SRC_STREAM 0x100u

static bool ends_with_slash(const char *p)
{
	size_t n = strlen(p);
	return n > 0 && p[n - 1] == '/';
}

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

enum same { SAME_OK, SAME_FAIL, SAME_NOTHING };

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * cp's same_file_ok(): may the source be copied onto dst_st (what stands at
 * the destination: its lstat, or what a symlink there names where cp writes
 * through it)? SAME_FAIL: "are the same file" (cp -P d/sl d/f with d/sl -> f
 * would make f a link to itself); SAME_NOTHING: it is so already (cp -l onto
 * the file itself). The stats it needs beyond those two are taken only when
 * they may be one file.
 */
static enum same same_file(const struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name,
			   const struct stat *dst_st)
{
	unsigned fl = c->o.flags;
	bool hard = fl & SWEEP_COPY_HARD_LINK, symbolic = fl & SWEEP_COPY_SYMBOLIC_LINK;
	bool backups = c->o.backup != SWEEP_COPY_BACKUP_NONE, unlink_first = fl & SWEEP_COPY_REMOVE_DEST;
	bool never = !(fl & (SWEEP_COPY_DEREF_ALL | SWEEP_COPY_DEREF_ROOTS));
	bool same = dst_st->st_dev == s->st->dev && dst_st->st_ino == s->st->ino;
	struct stat sl = { .st_mode = s->st->mode, .st_dev = s->st->dev, .st_ino = s->st->ino,
			   .st_nlink = s->st->nlink }, dl = *dst_st, t1, t2;
	const char *sname;
	bool same_link;
	int sdir;

	if (same && hard)
		return SAME_NOTHING;
	if (never) {
		same_link = same;
		/* Two symlinks: fine unless one directory entry (or two names of one link, as cp keeps them). */
		if (S_ISLNK(sl.st_mode) && S_ISLNK(dl.st_mode)) {
			bool sn = same_entry(s, dirfd, name);
			if (!sn && (backups || !same_link))
				return SAME_OK;
			return sn ? SAME_FAIL : SAME_NOTHING;
		}
	} else {
		if (!same)
			return SAME_OK;
		sdir = sweep__src_dir(s, &sname);
		bool ok = sdir >= 0 && fstatat(sdir, sname, &sl, AT_SYMLINK_NOFOLLOW) == 0 &&
			  fstatat(dirfd, name, &dl, AT_SYMLINK_NOFOLLOW) == 0;
		if (sdir >= 0)
			close(sdir);
		if (!ok)
			return SAME_OK;
		same_link = same_inode(&sl, &dl);
		if (S_ISLNK(sl.st_mode) && S_ISLNK(dl.st_mode) && unlink_first)
			return SAME_OK;
	}
	if (backups) {
		/* The backup keeps a copy: fine, unless the backup would move the source itself away. */
		if (!same_link)
			return !never && S_ISLNK(sl.st_mode) && !S_ISLNK(dl.st_mode) ? SAME_FAIL : SAME_OK;
		return same_entry(s, dirfd, name) ? SAME_FAIL : SAME_OK;
	}
	if (unlink_first) {
		if (S_ISLNK(dl.st_mode))
			return SAME_OK;
		if (same_link && dl.st_nlink > 1 && !same_entry(s, dirfd, name))
			return SAME_OK;
	}
	if (!S_ISLNK(sl.st_mode) && !S_ISLNK(dl.st_mode)) {
		if (!same_inode(&sl, &dl))
			return SAME_OK;
		if (hard)
			return SAME_NOTHING;
	}
	if (symbolic && S_ISLNK(dl.st_mode))
		return SAME_OK;
	if (never) {
		/* What the links name: a symlink copied onto the file it names destroys it. */
		if (S_ISLNK(sl.st_mode)) {
			sdir = sweep__src_dir(s, &sname);
			bool ok = sdir >= 0 && fstatat(sdir, sname, &t1, 0) == 0;
			if (sdir >= 0)
				close(sdir);
			if (!ok)
				return SAME_OK;
		} else {
			t1 = sl;
		}
		if (S_ISLNK(dl.st_mode) ? fstatat(dirfd, name, &t2, 0) < 0 : (t2 = dl, false))
			return SAME_OK;
		if (!same_inode(&t1, &t2))
			return SAME_OK;
		if (hard)
			return S_ISLNK(dl.st_mode) ? SAME_OK : SAME_NOTHING;
	}
	return SAME_FAIL;
}

/* cp's source_is_dst_backup(): the source is the very file dst's simple backup would replace. */
static bool source_is_backup(const struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name)
{
	const char *suffix = c->o.backup_suffix && *c->o.backup_suffix && !strchr(c->o.backup_suffix, '/')
				     ? c->o.backup_suffix : "~";
	const char *sbase = strrchr(s->path, '/') ? strrchr(s->path, '/') + 1 : s->path;
	size_t nl = strlen(name), sl = strlen(suffix);
	struct stat st;
	char *bk;

	if (c->o.backup == SWEEP_COPY_BACKUP_NUMBERED || strlen(sbase) != nl + sl || strncmp(sbase, name, nl) ||
	    strcmp(sbase + nl, suffix) || asprintf(&bk, "%s%s", name, suffix) < 0)
		return false;
	bool same = fstatat(dirfd, bk, &st, 0) == 0 && (uint64_t)st.st_dev == s->st->dev &&
		    (uint64_t)st.st_ino == s->st->ino;
	free(bk);
	return same;
}

static bool older_or_same(const struct sweep_stat *s, const struct stat *d)
{
	return s->mtime_sec < (int64_t)d->st_mtim.tv_sec ||
	       (s->mtime_sec == (int64_t)d->st_mtim.tv_sec && s->mtime_nsec <= (uint32_t)d->st_mtim.tv_nsec);
}

static bool is_stream_dst(const struct stat *st)
{
	return S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode);
}

/* What a regular file's copy is to be (the queue's item, or a stream's). 0 or -ENOMEM. */
static int item_make(struct sweep_copy *c, const struct src_ref *s, const char *dst, const char *place,
		     const struct stat *dst_st, bool into, struct lnode *ln, uint64_t cookie, struct qitem *it)
{
	size_t ls = strlen(s->path) + 1, ld = strlen(dst) + 1;

	memset(it, 0, sizeof(*it));
	if (!(it->src = malloc(ls + ld)) || (place && !(it->place = strdup(place)))) {
		free(it->src);
		return -ENOMEM;
	}
	memcpy(it->src, s->path, ls);
	it->dst = it->src + ls;
	memcpy(it->dst, dst, ld);
	it->cookie = cookie;
	it->ln = ln;
	it->existed = dst_st != NULL;
	it->into = into;
	it->dst_dev = c->plan_dst_dev;
	/* cp without -p keeps the mode of a file it overwrites, else the source's mode less the umask. */
	it->mode_given = s->flags & SWEEP_COPY_SRC_MODE;
	it->given_mode = (uint32_t)(s->st->mode & 07777);
	it->owner_given = s->flags & SWEEP_COPY_SRC_OWNER;
	it->given_uid = s->st->uid;
	it->given_gid = s->st->gid;
	it->keep_mode = dst_st && S_ISREG(dst_st->st_mode);
	it->mode = it->keep_mode ? (uint32_t)(dst_st->st_mode & 07777)
				 : (uint32_t)sweep__dest_new_mode(c, S_IFREG | (s->st->mode & 07777));
	return 0;
}

void sweep__plan_item_free(struct qitem *it)
{
	free(it->src);
	free(it->place);
}

/* The source of queue item idx into the batch (which reads it here when full). */
static int batch_add(struct sweep_copy *c, const struct src_ref *s, size_t idx)
{
	if (s->walked)
		return sweep_batch_add_entry(c->batch, s->walked, idx);
	if (s->root_fd == AT_FDCWD)
		return sweep_batch_add_path(c->batch, s->rel, s->st, (s->flags & SWEEP_COPY_SRC_FOLLOWED) != 0, idx);
	return sweep_batch_add_beneath(c->batch, s->root_fd, s->rel, s->path, s->st, idx);
}

/* A regular file into the queue; the batch reads it when full (here, inside the add) or at a flush. */
static int enqueue(struct sweep_copy *c, const struct src_ref *s, const char *dst, const char *place,
		   const struct stat *dst_st, bool into, struct lnode *ln, uint64_t cookie)
{
	int rc;

	if (sweep__grow(&c->q, &c->capq, c->nq + 1, sizeof(*c->q), 64) < 0 ||
	    item_make(c, s, dst, place, dst_st, into, ln, cookie, &c->q[c->nq]) < 0)
		return sweep__report(c, SWEEP_COPY_OP_OPEN_SRC, -ENOMEM, s->path, sweep__dst_show(c, dst), cookie);
	struct qitem *it = &c->q[c->nq];
	size_t bytes = sizeof(*it) + strlen(s->path) + strlen(dst) + 2 + (place ? strlen(place) + 1 : 0);

	/* Counted first: a full batch is read inside the add, and its callbacks find the item by index. */
	size_t idx = c->nq++;
	c->qbytes += bytes;
	if (c->o.on_plan)
		c->o.on_plan(1, s->st->size, c->o.ctx);
	rc = batch_add(c, s, idx);
	/* The plan takes a descriptor of a new root: out of them, the cached directory goes, and one try more. */
	if ((rc == -EMFILE || rc == -ENFILE) && c->nq == idx + 1 && !c->stop && sweep__fds_give_back(c))
		rc = batch_add(c, s, idx);
	if (rc < 0 && c->nq == idx + 1 && !c->stop) {
		/* not added (the batch did not run): the item goes */
		c->nq--;
		c->qbytes -= bytes;
		sweep__plan_item_free(it);
		return sweep__report(c, SWEEP_COPY_OP_OPEN_SRC, rc, s->path, sweep__dst_show(c, dst), cookie);
	}
	if (rc < 0 && !c->stop)
		c->stop = rc;
	/* The queue is bounded like the plan: a batch also ends when the queue holds its share of memory. */
	if (rc >= 0 && c->nq > 0 && c->qbytes >= copy_batch_bytes(c) && !sweep__copy_stopped(c)) {
		rc = sweep_batch_flush(c->batch);
		if (rc < 0 && !c->stop)
			c->stop = rc;
	}
	return sweep__copy_stopped(c);
}

/* The source opened for reading, beneath its root (or as named), without following a final symlink unless it was. */
static int open_source(const struct src_ref *s)
{
	const char *sname;
	int sdir = sweep__src_dir(s, &sname);

	if (sdir < 0)
		return sdir;
	int fd = openat(sdir, sname,
			O_RDONLY | O_NOCTTY | O_CLOEXEC | ((s->flags & SWEEP_COPY_SRC_FOLLOWED) ? 0 : O_NOFOLLOW));
	int rc = fd < 0 ? -errno : fd;
	close(sdir);
	return rc;
}

/*
 * Read now, as it comes, without a plan: a FIFO or device named without -r
 * (a stream has no place on a disk), or with --copy-contents; and a regular
 * file whose attributes only are copied (data false: an empty copy).
 */
static int copy_now(struct sweep_copy *c, const struct src_ref *s, const char *dst, const char *place,
		    const struct stat *dst_st, bool into, bool data, uint64_t cookie)
{
	struct qitem q;
	int rc = item_make(c, s, dst, place, dst_st, into, NULL, cookie, &q);

	if (rc < 0)
		return sweep__report(c, SWEEP_COPY_OP_OPEN_SRC, rc, s->path, sweep__dst_show(c, dst), cookie);
	int fd = open_source(s);
	if (fd < 0)
		rc = sweep__report(c, SWEEP_COPY_OP_OPEN_SRC, fd, s->path, sweep__dst_show(c, dst), cookie);
	else
		rc = sweep__read_stream(c, &q, fd, data);
	if (fd >= 0)
		close(fd);
	sweep__plan_item_free(&q);
	return rc;
}

/* cp --attributes-only onto an existing file: its data stays, it gets the source's metadata. */
static int attrs_onto(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name, const char *dst,
		      const char *place, uint64_t cookie)
{
	int sfd = open_source(s);
	int dfd = place ? open(place, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
			: openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	int rc = sfd < 0 ? sfd : dfd < 0 ? -errno : 0;

	if (rc < 0) {
		sweep__report(c, sfd < 0 ? SWEEP_COPY_OP_OPEN_SRC : SWEEP_COPY_OP_CREATE, rc, s->path,
			      sweep__dst_show(c, dst), cookie);
	} else {
		struct meta_ref ms = { .fd = sfd }, md = { .fd = dfd };
		sweep__report_apply_meta(c, &ms, &md, s->st, c->o.preserve, s->path, sweep__dst_show(c, dst), cookie);
		sweep__report_done(c, s->path, sweep__dst_show(c, dst), s->st, SWEEP_COPY_HOW_DATA, 0, cookie, true);
	}
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/*
 * A later name of an inode whose first copy is made (linked now) or queued
 * (linked once it is in place): true with *rc, false where n has no copy.
 */
static bool later_name(struct sweep_copy *c, struct lnode *n, const struct src_ref *s, const char *dst,
		       uint64_t cookie, int *rc)
{
	if (!n || (n->state != LN_DONE && n->state != LN_PENDING))
		return false;
	if (n->state == LN_DONE)
		*rc = sweep__make_link(c, n->dst, s->path, dst, s->st, cookie);
	else if (sweep__links_follow(n, s->path, dst, s->st, cookie) < 0)
		*rc = sweep__report(c, SWEEP_COPY_OP_LINK, -ENOMEM, s->path, sweep__dst_show(c, dst), cookie);
	else
		*rc = 0;
	return true;
}

/* Left alone (cp -u, not newer), but still a name of its inode: a later name links to it, an earlier copy replaces it. */
static int update_skip(struct sweep_copy *c, const struct src_ref *s, const char *dst, struct lnode *ln, bool track,
		       uint64_t cookie)
{
	int rc;

	if (later_name(c, ln, s, dst, cookie, &rc))
		return rc;
	if (track && !ln)
		ln = sweep__links_add(c, s->st, dst);
	else if (ln && sweep__links_name(ln, dst) < 0)
		ln = NULL;
	if (ln)
		ln->state = LN_DONE;
	sweep__report_done(c, s->path, sweep__dst_show(c, dst), s->st, SWEEP_COPY_HOW_SKIPPED, 0, cookie, true);
	return 0;
}

/*
 * sweep__plan_entry_ref's checks and dispatch, in cp's order: the same
 * file; then, for a non-directory onto an existing entry, -u, -n and -i,
 * the directory conflicts, and a backup that would replace the source;
 * then what is made. dst_st is what stands at dst (or at place), NULL for
 * nothing.
 */
static int entry_checked(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name,
			 const char *dst, const char *place, const struct stat *dst_st, uint64_t cookie, bool top)
{
	const struct sweep_stat *st = s->st;
	unsigned fl = c->o.flags;
	mode_t mode = (mode_t)st->mode;
	/* A supplied source is on no filesystem of ours: it cannot be its own destination. */
	bool check = !(fl & SWEEP_COPY_NO_SAME_FILE_CHECK) && !(s->flags & SWEEP_COPY_SRC_SUPPLIED);
	bool stream = (s->flags & SRC_STREAM) ||
		      ((fl & SWEEP_COPY_CONTENTS) && (S_ISFIFO(mode) || S_ISCHR(mode) || S_ISBLK(mode)));
	bool as_link = (fl & (SWEEP_COPY_HARD_LINK | SWEEP_COPY_SYMBOLIC_LINK)) && !S_ISDIR(mode);
	bool replace = (fl & (SWEEP_COPY_FORCE | SWEEP_COPY_REMOVE_DEST)) != 0;
	int rc;

	if (dst_st && check) {
		enum same same = same_file(c, s, dirfd, name, dst_st);
		if (same == SAME_FAIL)
			return sweep__report(c, S_ISDIR(mode) ? SWEEP_COPY_OP_INTO_SELF : SWEEP_COPY_OP_SAME_FILE, 0,
					     s->path, sweep__dst_show(c, dst), cookie);
		if (same == SAME_NOTHING) {
			sweep__report_done(c, s->path, sweep__dst_show(c, dst), st, SWEEP_COPY_HOW_SKIPPED, 0, cookie, true);
			return 0;
		}
	}

	/*
	 * Hard links are kept for inodes with several names, and, as cp does,
	 * for any inode reached through a symlink that may name it twice: every
	 * file with -L, the operands with -H (or cp's default without -r).
	 */
	bool track = (fl & SWEEP_COPY_LINKS) && !place && !stream && !as_link && !S_ISDIR(mode) &&
		     (st->nlink > 1 || (fl & SWEEP_COPY_DEREF_ALL) || (top && (fl & SWEEP_COPY_DEREF_ROOTS)));
	struct lnode *ln = track ? sweep__links_find(c, st) : NULL;
	if (dst_st && !S_ISDIR(mode)) {
		if ((fl & SWEEP_COPY_UPDATE) && older_or_same(st, dst_st))
			return update_skip(c, s, dst, ln, track, cookie);
		if (fl & SWEEP_COPY_NO_CLOBBER) {
			sweep__report_done(c, s->path, sweep__dst_show(c, dst), st, SWEEP_COPY_HOW_SKIPPED, 0, cookie, true);
			return 0;
		}
		if (c->o.on_exists) {
			struct sweep_stat ds;
			sweep_stat_from_stat(&ds, dst_st);
			rc = c->o.on_exists(s->path, sweep__dst_show(c, dst), &ds, c->o.ctx);
			if (rc < 0 && !c->stop)
				c->stop = rc;
			if (rc <= 0) {
				if (rc == 0)
					sweep__report_done(c, s->path, sweep__dst_show(c, dst), st, SWEEP_COPY_HOW_SKIPPED, 0,
							   cookie, true);
				return rc < 0 ? rc : 0;
			}
			replace = true; /* the caller said so (cp -i with -l or -s replaces) */
		}
	}
	if (S_ISDIR(mode))
		return sweep__make_dir(c, s, dirfd, name, dst, dst_st, cookie);
	if (dst_st && S_ISDIR(dst_st->st_mode))
		return sweep__report(c, SWEEP_COPY_OP_OVERWRITE_DIR, 0, s->path, sweep__dst_show(c, dst), cookie);
	/*
	 * cp --attributes-only copies no data, so it removes no existing
	 * destination first: a symlink or special file cannot be made over one
	 * (coreutils 9's attr-existing.sh; --remove-destination or a backup
	 * still clears the name).
	 */
	if (dst_st && (fl & SWEEP_COPY_ATTRS_ONLY) && !(fl & SWEEP_COPY_REMOVE_DEST) && !S_ISREG(mode) && !stream &&
	    !as_link && c->o.backup == SWEEP_COPY_BACKUP_NONE)
		return sweep__report(c, S_ISLNK(mode) ? SWEEP_COPY_OP_SYMLINK : SWEEP_COPY_OP_SPECIAL, -EEXIST, s->path,
				     sweep__dst_show(c, dst), cookie);
	if (dst_st && c->o.backup != SWEEP_COPY_BACKUP_NONE && source_is_backup(c, s, dirfd, name))
		return sweep__report(c, SWEEP_COPY_OP_BACKUP_SOURCE, 0, s->path, sweep__dst_show(c, dst), cookie);
	if (as_link)
		return sweep__make_to_source(c, s, dirfd, name, dst, dst_st != NULL, replace,
					     (fl & SWEEP_COPY_SYMBOLIC_LINK) != 0, cookie);

	if (track) {
		if (later_name(c, ln, s, dst, cookie, &rc))
			return rc;
		/* new, or its first copy failed: this name's copy is the one the others link to */
		if (!ln ? !(ln = sweep__links_add(c, st, dst)) : sweep__links_name(ln, dst) < 0)
			return sweep__report(c, SWEEP_COPY_OP_LINK, -ENOMEM, s->path, sweep__dst_show(c, dst), cookie);
		ln->state = LN_PENDING;
	}

	/* cp writes into a FIFO or device it is given as the destination (never inside a tree: see write_through). */
	bool into = top && dst_st && is_stream_dst(dst_st) && (fl & SWEEP_COPY_WRITE_THROUGH);
	if (S_ISREG(mode) && s->feed) { /* supplied: the caller feeds it now (copy_feed.c) */
		return item_make(c, s, dst, place, dst_st, into, ln, cookie, s->feed) < 0
			       ? sweep__report(c, SWEEP_COPY_OP_CREATE, -ENOMEM, s->path, sweep__dst_show(c, dst), cookie)
			       : 0;
	} else if (S_ISREG(mode) && (fl & SWEEP_COPY_ATTRS_ONLY)) {
		rc = dst_st && (S_ISREG(dst_st->st_mode) || into)
			     ? attrs_onto(c, s, dirfd, name, dst, place, cookie)
			     : copy_now(c, s, dst, place, dst_st, into, false, cookie);
	} else if (S_ISREG(mode)) {
		return enqueue(c, s, dst, place, dst_st, into, ln, cookie);
	} else if (stream) {
		rc = copy_now(c, s, dst, place, dst_st, into, true, cookie);
	} else if (S_ISLNK(mode)) {
		rc = sweep__make_symlink(c, s, dirfd, name, dst, dst_st != NULL, cookie);
	} else {
		rc = sweep__make_special(c, s, dirfd, name, dst, dst_st != NULL, cookie);
	}
	if (ln)
		sweep__settle_links(c, ln, rc == 0, SWEEP_COPY_OP_LINK, rc);
	return rc;
}

/* The path a dangling symlink at name (in dirfd) names: made there by a POSIX cp. malloc'ed, or NULL. */
static char *dangling_target(int dirfd, const char *name)
{
	char at[64 + NAME_MAX], target[PATH_MAX], *dir, *place = NULL;
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

	if (n <= 0)
		return NULL;
	target[n] = '\0';
	if (target[0] == '/')
		return strdup(target);
	dir = realpath(sweep__meta_at_path(dirfd, ".", at, sizeof(at)), NULL);
	if (dir && asprintf(&place, "%s/%s", strcmp(dir, "/") ? dir : "", target) < 0)
		place = NULL;
	free(dir);
	return place;
}

/*
 * cp writes a file through a symlink it finds at the destination it was
 * NAMED: where does it go? A loop is replaced with SWEEP_COPY_FORCE (cp -f),
 * a dangling one names a file to make with SWEEP_COPY_WRITE_DANGLING
 * (POSIXLY_CORRECT cp). *ret_place NULL: the symlink itself is replaced.
 */
static int write_through(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name,
			 const char *dst, struct stat *dst_st, bool *exists, char **ret_place)
{
	char at[64 + NAME_MAX];
	struct stat tst;

	*ret_place = NULL;
	if (fstatat(dirfd, name, &tst, 0) < 0) {
		int err = errno;
		if (err == ELOOP && (c->o.flags & SWEEP_COPY_FORCE))
			return 0;
		if (err == ENOENT && (c->o.flags & SWEEP_COPY_WRITE_DANGLING)) {
			if (!(*ret_place = dangling_target(dirfd, name)))
				return sweep__report(c, SWEEP_COPY_OP_CREATE, -ENOENT, s->path, sweep__dst_show(c, dst), 0);
			*exists = false;
			return 0;
		}
		if (err == ENOENT)
			return sweep__report(c, SWEEP_COPY_OP_DANGLING, 0, s->path, sweep__dst_show(c, dst), 0);
		return sweep__report(c, SWEEP_COPY_OP_STAT_DEST, -err, s->path, sweep__dst_show(c, dst), 0);
	}
	/* cp replaces the symlink instead when it keeps hard links and the target has others. */
	if ((c->o.flags & SWEEP_COPY_LINKS) && tst.st_nlink > 1)
		return 0;
	*ret_place = realpath(sweep__meta_at_path(dirfd, name, at, sizeof(at)), NULL);
	if (!*ret_place)
		return sweep__report(c, SWEEP_COPY_OP_CREATE, -errno, s->path, sweep__dst_show(c, dst), 0);
	*dst_st = tst;
	return 0;
}

int sweep__plan_entry_ref(struct sweep_copy *c, const struct src_ref *s, const char *dst, uint64_t cookie, bool top)
{
	struct stat dst_st;
	const char *name;
	char *place = NULL;
	int dirfd, rc;
	unsigned fl = c->o.flags;
	bool data = S_ISREG(s->st->mode) || (s->flags & SRC_STREAM);

	if (sweep__copy_stopped(c))
		return c->stop;
	if (!S_ISDIR(s->st->mode) && ends_with_slash(dst))
		return sweep__report(c, SWEEP_COPY_OP_CREATE, -ENOTDIR, s->path, sweep__dst_show(c, dst), cookie);
	/*
	 * A regular file inside a tree, with nothing at its name: queued, and
	 * nothing is made here, so the directory cached for the files before it
	 * is enough (the write stage checks its directory again before naming
	 * the copy). Anything else is looked at, and a symlink or directory
	 * made, in a directory looked up now: made through the cached
	 * descriptor, it would land in a directory moved away since, which
	 * never gets a name again (copy_internal.h).
	 */
	dirfd = -1;
	if (!top && S_ISREG(s->st->mode) && !(s->flags & SRC_STREAM)) {
		int fd = sweep__dest_cache_dir(c, &c->dcache, dst, &name);
		if (fd >= 0)
			c->plan_dst_dev = (uint64_t)c->dcache.st.st_dev;
		/* A directory this walk made: nothing there but what the walk put there (copy_fresh.c). */
		if (fd >= 0 && sweep__fresh_dir(c, &c->dcache))
			return entry_checked(c, s, fd, name, dst, NULL, NULL, cookie, top);
		if (fd >= 0 && !c->dcache.hit)
			dirfd = fd; /* looked up just now: the cache's, never closed here */
		else if (fd >= 0 && fstatat(fd, name, &dst_st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			return entry_checked(c, s, fd, name, dst, NULL, NULL, cookie, top);
	}
	bool own = dirfd < 0;
	if (own)
		dirfd = sweep__dest_dir_mine(c, dst, &name);
	struct stat dir_st;
	/* Which writer thread makes a queued copy: the one for the filesystem of its directory. */
	if (own && dirfd >= 0 && data)
		c->plan_dst_dev = fstat(dirfd, &dir_st) == 0 ? (uint64_t)dir_st.st_dev : c->dest_dev;
	if (dirfd < 0) {
		enum sweep_copy_op op = S_ISDIR(s->st->mode) ? SWEEP_COPY_OP_MKDIR
				      : data                 ? SWEEP_COPY_OP_CREATE
				      : S_ISLNK(s->st->mode) ? SWEEP_COPY_OP_SYMLINK : SWEEP_COPY_OP_SPECIAL;
		return sweep__report(c, op, dirfd, s->path, sweep__dst_show(c, dst), cookie);
	}
	bool exists = fstatat(dirfd, name, &dst_st, AT_SYMLINK_NOFOLLOW) == 0;
	/* As cp: written through only where the symlink itself is not what is replaced (links, backups, --remove-destination). */
	if (exists && top && S_ISLNK(dst_st.st_mode) && data && (fl & SWEEP_COPY_WRITE_THROUGH) &&
	    !(fl & (SWEEP_COPY_REMOVE_DEST | SWEEP_COPY_HARD_LINK | SWEEP_COPY_SYMBOLIC_LINK)) &&
	    c->o.backup == SWEEP_COPY_BACKUP_NONE) {
		rc = write_through(c, s, dirfd, name, dst, &dst_st, &exists, &place);
		if (rc < 0) {
			close(dirfd);
			return rc;
		}
	}
	/* A queued file's batch may be read inside: a descriptor of the cache's may be closed then (not used after). */
	rc = entry_checked(c, s, dirfd, name, dst, place, exists ? &dst_st : NULL, cookie, top);
	free(place);
	if (own)
		close(dirfd);
	return rc;
}

int sweep__plan_stream(struct sweep_copy *c, const char *src, const struct sweep_stat *st, const char *dst)
{
	struct src_ref s = { .dirfd = -1, .root_fd = AT_FDCWD, .rel = src, .path = src, .st = st,
			     .flags = SWEEP_COPY_SRC_FOLLOWED | SRC_STREAM };

	return sweep__plan_entry_ref(c, &s, dst, 0, true);
}

int sweep__plan_src(struct sweep_copy *c, const struct sweep_copy_src *src, uint64_t cookie, struct sweep_copy_src *in,
		    struct sweep_stat *sst, struct src_ref *s)
{
	int rc = sweep__opts_copy(in, sizeof(*in), src, offsetof(struct sweep_copy_src, flags) + sizeof(unsigned));

	if (rc < 0 || !src)
		return rc < 0 ? rc : -EINVAL;
	if (sweep__flags_check(in->flags, SWEEP_COPY_SRC_FOLLOWED | SWEEP_COPY_SRC_SUPPLIED | SWEEP_COPY_SRC_MODE |
					  SWEEP_COPY_SRC_OWNER) < 0)
		return -EINVAL;
	bool supplied = in->flags & SWEEP_COPY_SRC_SUPPLIED;
	/* A supplied source is described, never looked at: what it is and its target must be said. */
	if (supplied ? !in->path || !in->st || (S_ISLNK(in->st->mode) && !in->link) || (in->nxattrs && !in->xattrs)
		     : !in->rel || !in->path || (in->root_fd < 0 && in->root_fd != AT_FDCWD))
		return -EINVAL;
	if (c->dest_fd < 0)
		return -EBADF;
	*s = (struct src_ref){ .dirfd = -1, .root_fd = supplied ? -1 : in->root_fd, .rel = supplied ? in->path : in->rel,
			       .path = in->path, .st = in->st, .link = in->link, .flags = in->flags,
			       .xattrs = supplied ? in->xattrs : NULL, .nxattrs = supplied ? in->nxattrs : 0 };
	if (!s->st) {
		struct stat st;
		bool follow = in->flags & SWEEP_COPY_SRC_FOLLOWED;
		int fd = in->root_fd == AT_FDCWD ? open(in->rel, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW))
						 : sweep__open_beneath(in->root_fd, in->rel, O_PATH, 0);
		if (fd < 0 && in->root_fd == AT_FDCWD)
			fd = -errno;
		if (fd < 0)
			return sweep__report(c, SWEEP_COPY_OP_STAT, fd, in->path, NULL, cookie);
		rc = fstat(fd, &st) < 0 ? -errno : 0;
		close(fd);
		if (rc < 0)
			return sweep__report(c, SWEEP_COPY_OP_STAT, rc, in->path, NULL, cookie);
		sweep_stat_from_stat(sst, &st);
		s->st = sst;
	}
	return 0;
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
	rc = sweep__plan_src(c, src, cookie, &in, &sst, &s);
	if (rc < 0)
		return rc;
	/* A supplied regular file's data comes through sweep_copy_feed_begin(), not the reader. */
	if ((s.flags & SWEEP_COPY_SRC_SUPPLIED) && S_ISREG(s.st->mode))
		return -EINVAL;
	return sweep__plan_entry_ref(c, &s, dst, cookie, false);
}
