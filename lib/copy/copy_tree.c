/* SPDX-License-Identifier: MIT */
/*
 * copy: a whole tree, as cp copies one operand. The source is walked in
 * C-SCAN order; every entry goes through sweep__plan_entry_ref() with the walk's
 * descriptors (its directory now, its root for the reader later), so no
 * source path is ever looked up again from the top.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_internal.h"

struct tree {
	struct sweep_copy *c;
	const char *src, *dst;
	size_t src_len, dst_len;
	char *buf;
	size_t cap;
};

/* The destination name of a walked entry: dst + its path below the source root. */
static const char *tree_dst(struct tree *t, const struct sweep_entry *en)
{
	if (en->depth == 0)
		return t->dst;
	const char *rel = en->path + t->src_len;
	while (*rel == '/')
		rel++;
	size_t rl = strlen(rel);
	bool slash = t->dst_len > 0 && t->dst[t->dst_len - 1] != '/';
	if (sweep__grow(&t->buf, &t->cap, t->dst_len + slash + rl + 1, 1, 256) < 0)
		return NULL;
	memcpy(t->buf, t->dst, t->dst_len);
	if (slash)
		t->buf[t->dst_len] = '/';
	memcpy(t->buf + t->dst_len + slash, rel, rl + 1);
	return t->buf;
}

static int tree_entry(const struct sweep_entry *en, void *ctx)
{
	struct tree *t = ctx;
	struct sweep_copy *c = t->c;

	if (sweep__copy_stopped(c))
		return c->stop;
	if (en->stat_err)
		return 0; /* on_error has told */
	/* Following every symlink, one left is dangling: cp cannot stat what it names. */
	if ((c->o.flags & SWEEP_COPY_DEREF_ALL) && S_ISLNK(en->st.mode)) {
		sweep__report(c, SWEEP_COPY_OP_STAT, -ENOENT, en->path, NULL, 0);
		return 0;
	}
	const char *dst = tree_dst(t, en);
	if (!dst) {
		sweep__report(c, SWEEP_COPY_OP_CREATE, -ENOMEM, en->path, NULL, 0);
		return SWEEP_WALK_SKIP;
	}
	struct src_ref s = {
		.dirfd = en->depth ? en->dirfd : -1,
		.name = en->at_name,
		.root_fd = en->root_fd >= 0 ? en->root_fd : AT_FDCWD,
		.rel = en->root_fd >= 0 ? en->rel : en->path,
		.path = en->path,
		.st = &en->st,
		.flags = (en->flags & SWEEP_ENTRY_FOLLOWED) ? SWEEP_COPY_SRC_FOLLOWED : 0,
		.walked = en,
	};
	int rc = sweep__plan_entry_ref(c, &s, dst, 0, en->depth == 0);
	if (sweep__copy_stopped(c))
		return c->stop;
	return rc < 0 && S_ISDIR(en->st.mode) ? SWEEP_WALK_SKIP : 0;
}

static int tree_error(const struct sweep_walk_error *we, void *ctx)
{
	struct tree *t = ctx;
	enum sweep_copy_op op = we->op == SWEEP_WALK_OP_OPENDIR || we->op == SWEEP_WALK_OP_READDIR
					? SWEEP_COPY_OP_OPENDIR
					: SWEEP_COPY_OP_STAT;

	sweep__report(t->c, op, we->err, we->path, NULL, 0);
	return sweep__copy_stopped(t->c);
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Is dst (or the directory it would be made in) the source directory itself or below it? */
static bool inside(struct sweep_copy *c, const struct stat *sst, const char *dst)
{
	const char *name;
	struct stat st;
	int fd = sweep__dest_dir(c, dst, &name);
	bool found = false;

	if (fd < 0)
		return false;
	if (fstatat(fd, name, &st, 0) == 0 && same_inode(&st, sst)) {
		close(fd);
		return true;
	}
	/* Up from its directory through "..", to "/" (where ".." is itself). */
	for (int depth = 0; fd >= 0 && depth < 4096 && !found; depth++) {
		struct stat up_st;
		int up = -1;
		if (fstat(fd, &st) < 0)
			break;
		found = same_inode(&st, sst);
		if (!found && (up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0 && fstat(up, &up_st) == 0 &&
		    same_inode(&up_st, &st)) {
			close(up);
			up = -1;
		}
		close(fd);
		fd = up;
	}
	if (fd >= 0)
		close(fd);
	return found;
}

/* dst without trailing slashes, as made() keeps it (a new string, or NULL). */
static char *made_key(const char *dst)
{
	size_t n = strlen(dst);
	while (n > 1 && dst[n - 1] == '/')
		n--;
	return strndup(dst, n);
}

static bool made_before(const struct sweep_copy *c, const char *key)
{
	for (size_t i = 0; i < c->nmade; i++)
		if (!strcmp(c->made[i], key))
			return true;
	return false;
}

static void made_add(struct sweep_copy *c, char *key)
{
	if (key && !made_before(c, key) && sweep__grow(&c->made, &c->capmade, c->nmade + 1, sizeof(*c->made), 8) == 0)
		c->made[c->nmade++] = key;
	else
		free(key);
}

/*
 * An earlier call of this run made dst (cp a/x b/x dir): cp neither
 * overwrites what it has just made nor writes through a symlink it has just
 * made, which would reach outside the destination (cp -dR a/1 b/1 c, a/1 a
 * symlink to ../t). Directories merge. The queue is written first, so dst is
 * looked at as the earlier call left it; for a directory too, so that the
 * files merged into it meet the earlier call's copies as cp's do (cp -R a/d
 * b/d dst: b's d/x replaces a's, or with -n is left alone; read in one
 * batch, in disk order, b's copy could be named first). 0 or the reported
 * error.
 */
static int just_made(struct sweep_copy *c, const char *src, const struct stat *sst, const char *dst)
{
	struct stat dst_st;
	const char *name;
	int rc = sweep_copy_flush(c);

	if (rc < 0 || S_ISDIR(sst->st_mode))
		return rc < 0 ? rc : 0;
	int dfd = sweep__dest_dir(c, dst, &name);
	if (dfd < 0)
		return 0; /* the entry reports it */
	bool exists = fstatat(dfd, name, &dst_st, AT_SYMLINK_NOFOLLOW) == 0;
	close(dfd);
	if (!exists || S_ISDIR(dst_st.st_mode))
		return 0;
	/* (with backups the earlier copy is kept: cp checks only what a numbered one would not keep apart) */
	if (S_ISLNK(dst_st.st_mode) && S_ISREG(sst->st_mode) && c->o.backup == SWEEP_COPY_BACKUP_NONE &&
	    !(c->o.flags & (SWEEP_COPY_REMOVE_DEST | SWEEP_COPY_HARD_LINK | SWEEP_COPY_SYMBOLIC_LINK)))
		return sweep__report(c, SWEEP_COPY_OP_NEW_SYMLINK, 0, src, sweep__dst_show(c, dst), 0);
	if (c->o.backup == SWEEP_COPY_BACKUP_NUMBERED)
		return 0;
	return sweep__report(c, SWEEP_COPY_OP_NEW_OVERWRITE, 0, src, sweep__dst_show(c, dst), 0);
}

SWEEP_EXPORT int sweep_copy_tree(struct sweep_copy *c, const char *src, const char *dst)
{
	unsigned fl;
	struct stat st;
	int rc;

	if (!c || !src || !dst || !*dst)
		return -EINVAL;
	if (c->dest_fd < 0)
		return -EBADF;
	if (sweep__copy_stopped(c))
		return c->stop;
	fl = c->o.flags;
	rc = (fl & (SWEEP_COPY_DEREF_ALL | SWEEP_COPY_DEREF_ROOTS)) ? stat(src, &st) : lstat(src, &st);
	if (rc < 0) {
		int err = -errno;
		/* -L on a dangling symlink: cp says it cannot stat it. */
		return sweep__report(c, SWEEP_COPY_OP_STAT, err, src, NULL, 0);
	}
	if (S_ISDIR(st.st_mode) && !(fl & SWEEP_COPY_RECURSIVE))
		return sweep__report(c, SWEEP_COPY_OP_OMIT_DIR, 0, src, NULL, 0);
	char *key = made_key(dst);
	if (!key)
		return sweep__report(c, SWEEP_COPY_OP_CREATE, -ENOMEM, src, sweep__dst_show(c, dst), 0);
	if (made_before(c, key)) {
		free(key);
		key = NULL;
		if ((rc = just_made(c, src, &st, dst)) < 0)
			return rc;
	}
	made_add(c, key);
	if (!(fl & SWEEP_COPY_RECURSIVE) && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		struct sweep_stat sst;
		sweep_stat_from_stat(&sst, &st);
		return sweep__plan_stream(c, src, &sst, dst); /* cp /dev/null f, cp <(cmd) f */
	}
	if (S_ISDIR(st.st_mode) && inside(c, &st, dst))
		return sweep__report(c, SWEEP_COPY_OP_INTO_SELF, 0, src, sweep__dst_show(c, dst), 0);

	struct tree t = { .c = c, .src = src, .dst = dst, .src_len = strlen(src), .dst_len = strlen(dst) };
	struct sweep_walk_opts wo = {
		.size = sizeof(wo),
		.flags = (fl & SWEEP_COPY_DEREF_ALL ? SWEEP_WALK_FOLLOW : 0) |
			 (fl & SWEEP_COPY_DEREF_ROOTS ? SWEEP_WALK_FOLLOW_ROOTS : 0) |
			 (fl & SWEEP_COPY_ONE_FS ? SWEEP_WALK_XDEV : 0),
		.order = c->o.order,
		.backend = c->o.backend,
		.on_entry = tree_entry,
		.on_error = tree_error,
		.ctx = &t,
	};
	const char *roots[1] = { src };
	sweep__fresh_begin(c);
	rc = sweep_walk(roots, 1, &wo);
	sweep__fresh_end(c);
	free(t.buf);
	if (sweep__copy_stopped(c))
		return c->stop;
	return rc < 0 ? sweep__report(c, SWEEP_COPY_OP_OPENDIR, rc, src, NULL, 0) : 0;
}
