/* SPDX-License-Identifier: MIT */
/*
 * Hard links. The first name of an inode met by the walk holds the data;
 * it is written when the reader reaches it, which in physical order can be
 * long after the walk met the other names. So a name met before then
 * waits on the record, and is written as a link right after the data
 * holder; a name met afterwards is written as a link at once. A record is
 * dropped once all st_nlink names were met (GNU tar does the same), which
 * keeps the table as small as the set of partly seen inodes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tar.h"

struct links {
	struct link_rec **bucket;
	size_t nbuckets, count;
};

static size_t hash(uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino ^ (dev * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
	return (size_t)(h ^ (h >> 32));
}

struct links *links_new(void)
{
	struct links *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->nbuckets = 256;
	l->bucket = calloc(l->nbuckets, sizeof(*l->bucket));
	if (!l->bucket) {
		free(l);
		return NULL;
	}
	return l;
}

static void rec_free(struct link_rec *r)
{
	while (r->pending) {
		struct link_name *n = r->pending;
		r->pending = n->next;
		free(n);
	}
	free(r->target);
	free(r);
}

struct links *links_free(struct links *l)
{
	if (!l)
		return NULL;
	for (size_t i = 0; i < l->nbuckets; i++)
		while (l->bucket[i]) {
			struct link_rec *r = l->bucket[i];
			l->bucket[i] = r->next;
			rec_free(r);
		}
	free(l->bucket);
	free(l);
	return NULL;
}

struct link_rec *links_find(struct links *l, uint64_t dev, uint64_t ino)
{
	for (struct link_rec *r = l->bucket[hash(dev, ino) & (l->nbuckets - 1)]; r; r = r->next)
		if (r->dev == dev && r->ino == ino)
			return r;
	return NULL;
}

static void grow(struct links *l)
{
	size_t n = l->nbuckets * 2;
	struct link_rec **b = calloc(n, sizeof(*b));

	if (!b)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < l->nbuckets; i++)
		while (l->bucket[i]) {
			struct link_rec *r = l->bucket[i];
			l->bucket[i] = r->next;
			r->next = b[hash(r->dev, r->ino) & (n - 1)];
			b[hash(r->dev, r->ino) & (n - 1)] = r;
		}
	free(l->bucket);
	l->bucket = b;
	l->nbuckets = n;
}

struct link_rec *links_add(struct links *l, uint64_t dev, uint64_t ino, uint64_t nlink)
{
	struct link_rec *r = calloc(1, sizeof(*r));
	size_t h;

	if (!r)
		return NULL;
	if (l->count >= l->nbuckets)
		grow(l);
	r->dev = dev;
	r->ino = ino;
	r->unseen = nlink > 0 ? nlink - 1 : 0;
	r->state = LINK_PENDING;
	r->pending_tail = &r->pending;
	h = hash(dev, ino) & (l->nbuckets - 1);
	r->next = l->bucket[h];
	l->bucket[h] = r;
	l->count++;
	return r;
}

int links_push_pending(struct link_rec *r, const char *path, size_t strip, int root, size_t rel)
{
	size_t len = strlen(path);
	struct link_name *n = malloc(sizeof(*n) + len + 1);

	if (!n)
		return -ENOMEM;
	n->next = NULL;
	n->strip = strip;
	n->root = root;
	n->rel = rel;
	memcpy(n->path, path, len + 1);
	*r->pending_tail = n;
	r->pending_tail = &n->next;
	return 0;
}

void links_maybe_forget(struct links *l, struct link_rec *r)
{
	struct link_rec **pp;

	if (r->unseen > 0 || r->pending || r->state == LINK_PENDING)
		return;
	for (pp = &l->bucket[hash(r->dev, r->ino) & (l->nbuckets - 1)]; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			l->count--;
			rec_free(r);
			return;
		}
}

int links_written(struct tar *t, struct link_rec *r, const char *path, size_t strip, const struct sweep_stat *st)
{
	r->state = LINK_WRITTEN;
	free(r->target);
	r->target = strdup(tar_member_name(t, path, strip));
	r->target_prefix = tar_name_prefix(t, path, strip);
	if (!r->target)
		return -ENOMEM;
	while (r->pending) {
		struct link_name *n = r->pending;
		int err;

		r->pending = n->next;
		if (!r->pending)
			r->pending_tail = &r->pending;
		err = tar_write_link(t, tar_member_name(t, n->path, n->strip), r, st);
		free(n);
		if (err < 0)
			return err;
	}
	return 0;
}
