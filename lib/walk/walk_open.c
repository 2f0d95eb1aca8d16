/* SPDX-License-Identifier: MIT */
/*
 * The walk's directories: nodes that remember how to reach a directory
 * without holding it open, its path rebuilt on demand, and reopening -- from
 * a cached open parent, by path, or by a chain of openat() calls when the
 * path is longer than PATH_MAX -- checked to be the directory that was listed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "walk_impl.h"

/* ---- directory nodes ---- */

struct dnode *sweep__walk_dnode_new(struct dnode *parent, const char *name, size_t name_len)
{
	struct dnode *d = calloc(1, sizeof(*d) + name_len + 1);
	if (!d)
		return NULL;
	memcpy(d->name, name, name_len);
	d->name_len = name_len;
	d->refs = 1;
	d->kept_fd = -1;
	d->parent = parent;
	if (parent) {
		parent->refs++;
		d->root_index = parent->root_index;
		d->root_dev = parent->root_dev;
		d->depth = parent->depth + 1;
	}
	return d;
}

void sweep__walk_dnode_unref(struct dnode *d)
{
	while (d && --d->refs == 0) {
		struct dnode *p = d->parent;
		if (d->kept_fd >= 0)
			close(d->kept_fd); /* never visited (the walk stopped, or skipped it) */
		free(d);
		d = p;
	}
}

/* ---- paths ---- */

int sweep__walk_path_reserve(struct walk *w, size_t need)
{
	return sweep__grow(&w->path, &w->path_cap, need, 1, 256);
}

/* Append "/name" to the directory path of length len (no double slash after a root "dir/" or "/"). */
int sweep__walk_path_join(struct walk *w, size_t len, const char *name, size_t name_len, size_t *ret_len)
{
	bool slash = len > 0 && w->path[len - 1] != '/';
	size_t n = len + slash + name_len;
	if (sweep__walk_path_reserve(w, n + 1) < 0)
		return -ENOMEM;
	if (slash)
		w->path[len] = '/';
	memcpy(w->path + len + slash, name, name_len);
	w->path[n] = '\0';
	*ret_len = n;
	return 0;
}

/* Rebuild a directory's full path into w->path from its node chain (no recursion: trees may be very deep). */
int sweep__walk_path_of(struct walk *w, const struct dnode *d, size_t *ret_len)
{
	size_t len = 0;
	for (const struct dnode *p = d; p; p = p->parent)
		len += p->name_len + 1;
	if (sweep__walk_path_reserve(w, len + 1) < 0)
		return -ENOMEM;
	/* Fill from the end: each component preceded by '/', except after a root that ends in one. */
	size_t end = len;
	for (const struct dnode *p = d; p; p = p->parent) {
		end -= p->name_len;
		memcpy(w->path + end, p->name, p->name_len);
		if (p->parent) {
			const struct dnode *q = p->parent;
			bool root_slash = !q->parent && q->name_len > 0 && q->name[q->name_len - 1] == '/';
			if (!root_slash)
				w->path[--end] = '/';
		}
	}
	/* The string starts at end; move it to the front. */
	len -= end;
	memmove(w->path, w->path + end, len);
	w->path[len] = '\0';
	*ret_len = len;
	return 0;
}

/* ---- opening directories ---- */

int sweep__walk_open_flags(const struct dnode *d)
{
	return O_RDONLY | O_DIRECTORY | O_CLOEXEC | (d->follow ? 0 : O_NOFOLLOW);
}

/* ---- the cache of open directories ---- */

static int walk_fdcache_find(struct walk *w, const struct dnode *d)
{
	for (int i = 0; i < FD_CACHE; i++) {
		if (w->fdc[i].dir == d) {
			w->fdc[i].used = ++w->fdc_clock;
			return w->fdc[i].fd;
		}
	}
	return -1;
}

/* Give the cache a directory's fd (it takes ownership); the least recently used one goes. */
void sweep__walk_fdcache_put(struct walk *w, struct dnode *d, int fd)
{
	int v = 0;
	/* Under a low open-file limit the cache is smaller, or none (sweep_walk sets fdc_max). */
	if (w->fdc_max == 0) {
		close(fd);
		return;
	}
	for (int i = 1; i < (int)w->fdc_max; i++)
		if (w->fdc[i].used < w->fdc[v].used)
			v = i;
	if (w->fdc[v].dir) {
		close(w->fdc[v].fd);
		sweep__walk_dnode_unref(w->fdc[v].dir);
	}
	d->refs++;
	w->fdc[v].dir = d;
	w->fdc[v].fd = fd;
	w->fdc[v].used = ++w->fdc_clock;
}

void sweep__walk_fdcache_clear(struct walk *w)
{
	for (int i = 0; i < FD_CACHE; i++) {
		if (w->fdc[i].dir) {
			close(w->fdc[i].fd);
			sweep__walk_dnode_unref(w->fdc[i].dir);
		}
		w->fdc[i].dir = NULL;
	}
}

/*
 * Open d: relative to its parent when the parent is still open, else by
 * path, else (path longer than PATH_MAX) by chaining openat() down from the
 * nearest ancestor that can be opened. The caller owns the result.
 */
static int walk_dnode_open_chain(struct walk *w, const struct dnode *d)
{
	int pfd = d->parent ? walk_fdcache_find(w, d->parent) : -1;
	if (pfd >= 0) {
		int fd = openat(pfd, d->name, sweep__walk_open_flags(d));
		return fd < 0 ? -errno : fd;
	}
	if (!d->parent) {
		int fd = open(d->name, sweep__walk_open_flags(d));
		return fd < 0 ? -errno : fd;
	}
	size_t len;
	int r = sweep__walk_path_of(w, d, &len);
	if (r < 0)
		return r;
	if (len < PATH_MAX) {
		int fd = open(w->path, sweep__walk_open_flags(d));
		if (fd >= 0 || errno != ENAMETOOLONG)
			return fd >= 0 ? fd : -errno;
	}
	pfd = walk_dnode_open_chain(w, d->parent);
	if (pfd < 0)
		return pfd;
	int fd = openat(pfd, d->name, sweep__walk_open_flags(d));
	r = fd < 0 ? -errno : fd;
	close(pfd);
	return r;
}

bool sweep__walk_same_dir(int fd, const struct dnode *d)
{
	struct stat st;
	return fstat(fd, &st) == 0 && (uint64_t)st.st_dev == d->dev && (uint64_t)st.st_ino == d->ino;
}

/*
 * Reopen a directory and check that it is still the one that was listed;
 * the descriptor kept from its C-SCAN key, when there is one (it was
 * opened the same way, without following a symlink, and is checked the
 * same way).
 */
int sweep__walk_dnode_open_ahead(struct walk *w, struct dnode *d)
{
	if (d->kept_fd >= 0)
		return 0; /* opened once already (its FIEMAP key) */
	int fd = walk_dnode_open_chain(w, d);
	if (fd < 0)
		return fd;
	/* Kept for its visit where there is room, as for a FIEMAP key (checked then, as every reopen is). */
	if (w->kept_fds < w->kept_max) {
		d->kept_fd = fd;
		w->kept_fds++;
	} else {
		close(fd);
	}
	return 0;
}

int sweep__walk_dnode_reopen(struct walk *w, struct dnode *d)
{
	int fd = d->kept_fd;
	if (fd >= 0) {
		d->kept_fd = -1;
		w->kept_fds--;
	} else {
		fd = walk_dnode_open_chain(w, d);
		/*
		 * Out of descriptors (a low open-file limit, or the caller's
		 * files): the cached directories let go, and one try more, by
		 * path where the parent was cached. Slower, never a lost
		 * directory for want of a descriptor the walk held itself.
		 */
		if (fd == -EMFILE || fd == -ENFILE) {
			sweep__walk_fdcache_clear(w);
			fd = walk_dnode_open_chain(w, d);
		}
	}
	if (fd < 0)
		return fd;
	if (!sweep__walk_same_dir(fd, d)) {
		/* Replaced since it was listed: it is no longer the directory we saw. */
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* ---- roots, for sweep_entry.root_fd ---- */

int sweep__walk_root_fd(struct walk *w, struct dnode *d)
{
	if (w->flags & SWEEP_WALK_FOLLOW)
		return -1;
	struct dnode *r = d;
	while (r->parent)
		r = r->parent;
	int v = 0;
	for (int i = 0; i < ROOT_CACHE; i++) {
		if (w->rootc[i].root == r) {
			w->rootc[i].used = ++w->fdc_clock;
			return w->rootc[i].fd;
		}
		if (w->rootc[i].used < w->rootc[v].used)
			v = i;
	}
	/* As the caller named it: a root given as a symlink is followed only when the walk followed it. */
	int fd = open(r->name, O_PATH | O_DIRECTORY | O_CLOEXEC | (r->follow ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return -1;
	if (!sweep__walk_same_dir(fd, r)) {
		close(fd);
		return -1;
	}
	if (w->rootc[v].root) {
		close(w->rootc[v].fd);
		sweep__walk_dnode_unref(w->rootc[v].root);
	}
	r->refs++;
	w->rootc[v].root = r;
	w->rootc[v].fd = fd;
	w->rootc[v].used = ++w->fdc_clock;
	return fd;
}

void sweep__walk_rootcache_clear(struct walk *w)
{
	for (int i = 0; i < ROOT_CACHE; i++) {
		if (w->rootc[i].root) {
			close(w->rootc[i].fd);
			sweep__walk_dnode_unref(w->rootc[i].root);
		}
		w->rootc[i].root = NULL;
	}
}
