/* SPDX-License-Identifier: MIT */
/*
 * A batch's order across devices, and its groups (DESIGN §3c): each file
 * goes to the spindle its first byte lies on (lib/device/devmap.c), the
 * spindles that share a disk make a group, and the batch is sorted by
 * group, then within it by spindle and offset there (or by device and
 * inode, or as added, per the device's order). Each group is a contiguous
 * run of the order, which a reader can read on its own while the other
 * groups' readers read theirs (lib/read/reader_multi.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "plan_group.h"

struct dev_map {
	uint64_t dev;
	struct sweep__devmap *map; /* NULL: could not be made (then the device's files are one group of its own) */
};

struct sweep__grouping {
	struct sweep__spindles *s;
	struct dev_map *maps;
	size_t nmaps, capmaps;
	struct sweep__plan_group *groups;
	size_t ngroups, capgroups;
};

struct sweep__grouping *sweep__grouping_new(void)
{
	struct sweep__grouping *g = calloc(1, sizeof(*g));
	if (g && !(g->s = sweep__spindles_new())) {
		free(g);
		return NULL;
	}
	return g;
}

struct sweep__grouping *sweep__grouping_free(struct sweep__grouping *g)
{
	if (g) {
		for (size_t i = 0; i < g->nmaps; i++)
			sweep__devmap_free(g->maps[i].map);
		free(g->maps);
		free(g->groups);
		sweep__spindles_free(g->s);
		free(g);
	}
	return NULL;
}

const struct sweep__devmap *sweep__grouping_map(struct sweep__grouping *g, uint64_t dev, int fd, bool *ret_known)
{
	for (size_t i = 0; i < g->nmaps; i++) {
		if (g->maps[i].dev == dev) {
			*ret_known = true;
			return g->maps[i].map;
		}
	}
	*ret_known = false;
	if (fd < 0 || sweep__grow(&g->maps, &g->capmaps, g->nmaps + 1, sizeof(*g->maps), 4) < 0)
		return NULL;
	struct dev_map *m = &g->maps[g->nmaps++];
	m->dev = dev;
	m->map = NULL;
	if (sweep__devmap_new(g->s, fd, dev, &m->map) < 0)
		m->map = NULL;
	*ret_known = true;
	return m->map;
}

const struct sweep__spindles *sweep__grouping_spindles(const struct sweep__grouping *g)
{
	return g->s;
}

/* One stable radix pass of recs by field f of the keys, skipped when the field is the same for all. */
static int by_field(struct sweep__key_rec *recs, const struct sweep__sort_key *keys, size_t n, size_t f)
{
	const uint64_t *first = (const uint64_t *)((const char *)&keys[0] + f);
	bool same = true;
	for (size_t i = 0; i < n; i++) {
		uint64_t v = *(const uint64_t *)((const char *)&keys[recs[i].idx] + f);
		recs[i].key = v;
		same &= v == *first;
	}
	return same ? 0 : sweep__key_sort(recs, n);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_keys(const void *va, const void *vb, void *vk)
{
	const struct sweep__sort_key *k = vk;
	const struct sweep__sort_key *a = &k[*(const uint32_t *)va], *b = &k[*(const uint32_t *)vb];
	int c = cmp_u64(a->k0, b->k0);
	if (!c)
		c = cmp_u64(a->k1, b->k1);
	if (!c)
		c = cmp_u64(a->k2, b->k2);
	if (!c)
		c = cmp_u64(a->k3, b->k3);
	return c ? c : cmp_u64(a->idx, b->idx);
}

int sweep__grouping_sort(struct sweep__grouping *g, struct sweep__sort_key *keys, size_t n, uint32_t *order)
{
	size_t ns = sweep__spindles_count(g->s);
	uint32_t *group = malloc((ns ? ns : 1) * sizeof(*group));
	unsigned char *used = calloc(ns ? ns : 1, 1);
	int r = 0;

	g->ngroups = 0;
	if (!group || !used) {
		r = -ENOMEM;
		goto out;
	}
	/* Groups among the spindles this batch reads only. */
	for (size_t i = 0; i < n; i++)
		if (keys[i].spindle < ns)
			used[keys[i].spindle] = 1;
	if ((r = sweep__spindles_groups(g->s, used, group)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (keys[i].spindle < ns)
			keys[i].k0 = group[keys[i].spindle]; /* else the caller's: a device without a map */

	if (sweep__key_sort_pays(n)) {
		struct sweep__key_rec *recs = malloc(n * sizeof(*recs));
		if (!recs) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			recs[i].idx = (uint32_t)i;
		/* Least significant first; each pass stable, so the earlier ones break its ties. */
		r = by_field(recs, keys, n, offsetof(struct sweep__sort_key, k3));
		if (r == 0)
			r = by_field(recs, keys, n, offsetof(struct sweep__sort_key, k2));
		if (r == 0)
			r = by_field(recs, keys, n, offsetof(struct sweep__sort_key, k1));
		if (r == 0)
			r = by_field(recs, keys, n, offsetof(struct sweep__sort_key, k0));
		for (size_t i = 0; r == 0 && i < n; i++)
			order[i] = keys[recs[i].idx].idx;
		free(recs);
		if (r < 0)
			goto out;
	} else {
		uint32_t *pos = malloc((n ? n : 1) * sizeof(*pos));
		if (!pos) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			pos[i] = (uint32_t)i;
		qsort_r(pos, n, sizeof(*pos), cmp_keys, keys);
		for (size_t i = 0; i < n; i++)
			order[i] = keys[pos[i]].idx;
		free(pos);
	}
	/* The runs of one group: sorted by k0 first, each is contiguous. */
	for (size_t i = 0; i < n;) {
		uint64_t k0 = keys[order[i]].k0; /* keys[] is indexed by entry: keys[e].idx == e */
		size_t j = i;
		unsigned members = 1;
		while (j < n && keys[order[j]].k0 == k0) {
			unsigned m = sweep__spindle_members(g->s, keys[order[j]].spindle);
			if (keys[order[j]].spindle < ns && m > members)
				members = m;
			j++;
		}
		if (sweep__grow(&g->groups, &g->capgroups, g->ngroups + 1, sizeof(*g->groups), 4) < 0) {
			r = -ENOMEM;
			g->ngroups = 0;
			goto out;
		}
		g->groups[g->ngroups++] = (struct sweep__plan_group){
			.first = i, .end = j, .spindle = k0 < ns ? (uint32_t)k0 : UINT32_MAX, .members = members,
		};
		i = j;
	}
out:
	free(group);
	free(used);
	return r;
}

size_t sweep__grouping_groups(const struct sweep__grouping *g, const struct sweep__plan_group **ret)
{
	*ret = g ? g->groups : NULL;
	return g ? g->ngroups : 0;
}

void sweep__grouping_clear(struct sweep__grouping *g)
{
	if (g)
		g->ngroups = 0;
}
