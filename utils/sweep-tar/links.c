/* SPDX-License-Identifier: MIT */
/*
 * Hard links, as GNU tar stores them: the first name of an inode that goes
 * into the archive holds the data, every later name is a link member to
 * it; if the data holder could not be archived, the next name holds the
 * data instead. Symlinks, devices and FIFOs are decided as the walk meets
 * them (they are written at once); regular files when the reader reaches
 * them, in archive order, from the fstat of the file it opened (the walk
 * does not stat them where the plan is physical). A record is dropped
 * once all st_nlink names were met (GNU tar does the same), which keeps
 * the table as small as the set of partly seen inodes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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

static struct link_rec *links_find(struct links *l, uint64_t dev, uint64_t ino)
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

static struct link_rec *links_add(struct links *l, uint64_t dev, uint64_t ino, uint64_t nlink)
{
	struct link_rec *r = calloc(1, sizeof(*r));
	size_t h;

	if (!r)
		return NULL;
	if (l->count >= l->nbuckets)
		grow(l);
	r->dev = dev;
	r->ino = ino;
	/* A file of one name met again (-h, operands that overlap) stays known to the end. */
	r->unseen = nlink > 1 ? nlink - 1 : nlink == 1 ? UINT64_MAX : 0;
	r->state = LINK_PENDING;
	h = hash(dev, ino) & (l->nbuckets - 1);
	r->next = l->bucket[h];
	l->bucket[h] = r;
	l->count++;
	return r;
}

static void links_maybe_forget(struct links *l, struct link_rec *r)
{
	struct link_rec **pp;

	if (r->unseen > 0 || r->state == LINK_PENDING)
		return;
	for (pp = &l->bucket[hash(r->dev, r->ino) & (l->nbuckets - 1)]; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			l->count--;
			rec_free(r);
			return;
		}
}

void tar_links_missing(struct tar *t)
{
	struct links *l = t->links;

	if (!l)
		return;
	for (size_t i = 0; i < l->nbuckets; i++)
		for (struct link_rec *r = l->bucket[i]; r; r = r->next)
			if (r->unseen > 0 && r->unseen != UINT64_MAX && r->state == LINK_WRITTEN && r->target) {
				progress_clear(t->progress);
				cli_msg("Missing links to %s.", cli_quote(r->target));
			}
}

int tar_link_member(struct tar *t, const char *name, const struct sweep_stat *st, uint64_t dir_id,
		    struct link_rec **ret_rec)
{
	struct link_rec *rec;
	int r;

	*ret_rec = NULL;
	/* --hard-dereference: every name is archived with its data. */
	if ((st->nlink < 2 && !t->o->track_single_links) || t->o->hard_dereference)
		return 0;
	rec = links_find(t->links, st->dev, st->ino);
	if (!rec) {
		/* Out of memory: archived as a file of one name (later names hold their data too). */
		*ret_rec = links_add(t->links, st->dev, st->ino, st->nlink);
		return 0;
	}
	if (rec->unseen > 0 && rec->unseen != UINT64_MAX)
		rec->unseen--;
	if (rec->state != LINK_WRITTEN) {
		/* The name before could not be archived: this one holds the data. */
		rec->state = LINK_PENDING;
		*ret_rec = rec;
		return 0;
	}
	/* A link to a placeholder is one too (tar.h). */
	if (rec->placeholder && (r = dir_spool_pin(t, dir_id)) < 0)
		return r;
	r = tar_write_link(t, name, rec, st);
	links_maybe_forget(t->links, rec);
	return r < 0 ? r : 1;
}

int tar_link_done(struct tar *t, struct link_rec *rec, bool ok, const char *path, size_t strip)
{
	int r = 0;

	rec->state = ok ? LINK_WRITTEN : LINK_FAILED;
	if (ok) {
		free(rec->target);
		rec->target = strdup(tar_stored_name(t, path, strip, TAR_XFORM_LINK));
		rec->target_prefix = tar_name_prefix(t, path, strip);
		if (!rec->target) {
			rec->state = LINK_FAILED; /* the next name holds its data again */
			r = -ENOMEM;
		}
	}
	links_maybe_forget(t->links, rec);
	return r;
}
