/* SPDX-License-Identifier: MIT */
/*
 * copy: the hard-link table. An inode met under several names is keyed by
 * the source's (dev, ino); the first name's copy is the one the others
 * become links to. While that copy is queued, later names wait here as
 * followers; the settle stage links them once it is in place.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "copy_internal.h"

static size_t link_hash(uint64_t dev, uint64_t ino, size_t cap)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^ (ino * 0xc2b2ae3d27d4eb4full);
	return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static struct lnode **link_slot(struct lnode **tab, size_t cap, uint64_t dev, uint64_t ino)
{
	size_t i = link_hash(dev, ino, cap);

	while (tab[i] && (tab[i]->dev != dev || tab[i]->ino != ino))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

struct lnode *sweep__links_find(const struct sweep_copy *c, const struct sweep_stat *st)
{
	return c->caplinks ? *link_slot(c->links, c->caplinks, st->dev, st->ino) : NULL;
}

struct lnode *sweep__links_add(struct sweep_copy *c, const struct sweep_stat *st, const char *dst)
{
	if (c->nlinks * 2 >= c->caplinks) {
		size_t ncap = c->caplinks ? c->caplinks * 2 : 64, ocap = c->caplinks;
		struct lnode **old = c->links, **nl = calloc(ncap, sizeof(*nl));
		if (!nl)
			return NULL;
		for (size_t i = 0; i < ocap; i++)
			if (old[i])
				*link_slot(nl, ncap, old[i]->dev, old[i]->ino) = old[i];
		free(old);
		c->links = nl;
		c->caplinks = ncap;
	}
	struct lnode *n = calloc(1, sizeof(*n));
	if (!n || !(n->dst = strdup(dst))) {
		free(n);
		return NULL;
	}
	n->dev = st->dev;
	n->ino = st->ino;
	*link_slot(c->links, c->caplinks, n->dev, n->ino) = n;
	c->nlinks++;
	return n;
}

int sweep__links_follow(struct lnode *n, const char *src, const char *dst, const struct sweep_stat *st,
			uint64_t cookie)
{
	size_t ls = strlen(src) + 1, ld = strlen(dst) + 1;

	if (sweep__grow(&n->fol, &n->capfol, n->nfol + 1, sizeof(*n->fol), 4) < 0)
		return -ENOMEM;
	struct follower *f = &n->fol[n->nfol];
	if (!(f->src = malloc(ls + ld)))
		return -ENOMEM;
	memcpy(f->src, src, ls);
	f->dst = f->src + ls;
	memcpy(f->dst, dst, ld);
	f->st = *st;
	f->cookie = cookie;
	n->nfol++;
	return 0;
}

int sweep__links_name(struct lnode *n, const char *dst)
{
	char *d = strdup(dst);

	if (!d)
		return -ENOMEM;
	free(n->dst);
	n->dst = d;
	return 0;
}

void sweep__links_free(struct sweep_copy *c)
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
