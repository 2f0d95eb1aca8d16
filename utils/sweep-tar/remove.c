/* SPDX-License-Identifier: MIT */
/*
 * --remove-files: what went into the archive is removed from the disk,
 * as GNU tar does (src/unlink.c): each file, symlink, device and FIFO
 * whose member was written, each directory whose member was written once
 * it is empty, deepest first; a directory that is not empty then is GNU
 * tar's "Cannot rmdir" error.
 *
 * Not as soon as the member is written, as GNU tar does (after the record
 * holding it went to the archive's descriptor), but once the whole archive
 * is written, closed and flushed to its device (fdatasync on a regular
 * file): if the archive cannot be completed, nothing is removed, and a
 * crash does not leave files removed whose data is not on the disk.
 *
 * Each name is removed below the PATH operand it was walked from, opened
 * again as the user named it, its directories opened without following a
 * symlink (sweep_open_beneath), and only if it is still the file that was
 * archived (same device and inode): a name swapped meanwhile is kept, with
 * a warning.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"

struct removal {
	char *path;      /* as walked: the root's path, then the names below it */
	uint64_t dev, ino;
	bool dir;
};

struct tar_removals {
	struct removal *v;
	size_t n, cap;
};

int tar_remove_later(struct tar *t, const char *path, const struct sweep_stat *st, bool dir)
{
	struct tar_removals *r = t->removals;

	if (!r && !(r = t->removals = calloc(1, sizeof(*r))))
		return -ENOMEM;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		struct removal *nv = realloc(r->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		r->v = nv;
		r->cap = cap;
	}
	if (!(r->v[r->n].path = strdup(path)))
		return -ENOMEM;
	r->v[r->n].dev = st->dev;
	r->v[r->n].ino = st->ino;
	r->v[r->n].dir = dir;
	r->n++;
	return 0;
}

/* The operand path was walked from: the longest root path it starts with, or NULL. */
static const struct tar_root *root_of(const struct tar_opts *o, const char *path)
{
	const struct tar_root *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; i < o->nroots; i++) {
		size_t len = strlen(o->roots[i].path);
		if (len >= best_len && strncmp(path, o->roots[i].path, len) == 0 && (path[len] == '/' || !path[len])) {
			best = &o->roots[i];
			best_len = len;
		}
	}
	return best;
}

/* The directory holding path, opened as described above; *name is its last component. A descriptor or -errno. */
static int open_parent(const struct tar_opts *o, char *path, const char **name)
{
	const struct tar_root *root = root_of(o, path);
	char *slash = strrchr(path, '/');
	size_t rlen;
	int rfd, fd;

	if (root && strlen(path) == strlen(root->path) && root->dir && slash && strcmp(slash, "/.") == 0) {
		/*
		 * "-C DIR ." archived DIR's contents: DIR itself goes, from
		 * the directory it is in, as GNU tar removes it (tar_dirname).
		 */
		char *copy = strdup(root->dir), *dir;
		if (!copy)
			return -ENOMEM;
		dir = dirname(copy);
		fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		fd = fd < 0 ? -errno : fd;
		free(copy);
		slash = strrchr(root->dir, '/');
		*name = slash && slash[1] ? slash + 1 : root->dir;
		return fd;
	}
	if (!root || strlen(path) == strlen(root->path) || !slash) {
		/* The operand itself: in its directory, as the user named it. */
		char *copy = strdup(path), *dir;
		if (!copy)
			return -ENOMEM;
		dir = dirname(copy);
		fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		fd = fd < 0 ? -errno : fd;
		free(copy);
		*name = slash && slash[1] ? slash + 1 : path;
		return fd;
	}
	rlen = strlen(root->path);
	rfd = open(root->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	*name = slash + 1;
	if (slash == path + rlen)
		return rfd;
	*slash = '\0';
	fd = sweep_open_beneath(rfd, path + rlen + 1, O_PATH | O_DIRECTORY, 0);
	*slash = '/';
	close(rfd);
	return fd == -EXDEV ? -ELOOP : fd;
}

static void remove_one(struct tar *t, struct removal *m)
{
	const char *name = NULL, *shown = tar_display(t, m->path);
	struct stat st;
	int dirfd = open_parent(t->o, m->path, &name);

	if (dirfd == -ENOENT)
		return; /* gone already: nothing to worry about (GNU tar) */
	if (dirfd < 0) {
		tar_error(t, m->path, "Cannot %s: %s", m->dir ? "rmdir" : "unlink", strerror(-dirfd));
		return;
	}
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno != ENOENT)
			tar_error(t, m->path, "Cannot %s: %s", m->dir ? "rmdir" : "unlink", strerror(errno));
	} else if ((uint64_t)st.st_dev != m->dev || (uint64_t)st.st_ino != m->ino) {
		tar_warn(t, m->path, "file changed as we read it; not removed");
	} else if (unlinkat(dirfd, name, m->dir ? AT_REMOVEDIR : 0) != 0 && errno != ENOENT) {
		int err = errno == EEXIST ? ENOTEMPTY : errno;
		progress_clear(t->progress);
		fflush(stdout);
		fprintf(stderr, "%s: %s: Cannot %s: %s\n", cli_prog(), shown, m->dir ? "rmdir" : "unlink", strerror(err));
		if (t->status < TAR_FATAL)
			t->status = TAR_FATAL;
	}
	close(dirfd);
}

/* Deepest first: a directory's entries before it. */
static int deeper(const void *a, const void *b)
{
	const struct removal *x = a, *y = b;
	size_t dx = 0, dy = 0;

	for (const char *p = x->path; *p; p++)
		dx += *p == '/';
	for (const char *p = y->path; *p; p++)
		dy += *p == '/';
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->dir - y->dir; /* files before directories at one depth */
}

void tar_remove_files(struct tar *t)
{
	struct tar_removals *r = t->removals;

	if (!r)
		return;
	qsort(r->v, r->n, sizeof(*r->v), deeper);
	for (size_t i = 0; i < r->n; i++)
		remove_one(t, &r->v[i]);
}

void tar_removals_free(struct tar *t)
{
	struct tar_removals *r = t->removals;

	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].path);
	free(r->v);
	free(r);
	t->removals = NULL;
}
